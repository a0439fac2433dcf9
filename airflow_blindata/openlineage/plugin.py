"""The provider's Airflow plugin, registered through the ``airflow.plugins`` entry point.

Airflow loads plugins from entry points even with lazy provider discovery (provider-info
``plugins`` is then ignored), so this is where the Blindata listener will be registered.
The module imports nothing heavy: every Airflow process loads it.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin


class BlindataPlugin(AirflowPlugin):
    """Registers the Blindata capture of OpenLineage events (the listener lands with capture)."""

    name = "blindata"
