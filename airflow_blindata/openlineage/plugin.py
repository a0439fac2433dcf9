"""The provider's Airflow plugin, registered through the ``airflow.plugins`` entry point.

Airflow loads plugins from entry points even with lazy provider discovery (provider-info
``plugins`` is then ignored), so this is where the Blindata capture is set up, once per process:

* When the OpenLineage provider already sends to ``BlindataTransport`` (alone or in a composite),
  nothing is registered; the transport's modules are imported here, in the parent, so that the
  child forked for every event does not pay for the imports (hundreds of milliseconds) itself.
* Otherwise, unless ``[blindata] listener_enabled`` is False, ``BlindataListener`` is registered,
  with the provider's hook-lineage reader (SQL hooks report their lineage only when one is), and
  its store is preloaded the same way.

Nothing here may break Airflow: a failure is logged and capture stays off. Heavy imports happen
only when capture is configured.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from airflow.plugins_manager import AirflowPlugin

log = logging.getLogger(__name__)


def _preload_transport(legs: list[Mapping[str, Any]]) -> None:
    """Import what ``BlindataTransport.emit`` needs and build its stores (``preload``), so
    that the child forked for every event inherits them instead of building them itself."""
    from .transport import preload

    for leg in legs:
        preload(leg.get("store_url"))


def _capture_setup() -> tuple[list[Any], list[Any]]:
    """The listeners and hook-lineage readers to register (both empty when not needed)."""
    try:
        from .settings import listener_enabled, openlineage_blindata_legs

        legs = openlineage_blindata_legs(resolve_connection=False)
        if legs:
            _preload_transport(legs)
            return [], []
        if not listener_enabled():
            return [], []
        from airflow.providers.common.compat.sdk import HookLineageReader

        from .listener import get_blindata_listener

        listener = get_blindata_listener(decide_later=legs is None)
        _preload_transport([{"store_url": listener.store_url}])
        return [listener], [HookLineageReader]
    except Exception:
        log.warning("Blindata capture could not be set up; it stays off", exc_info=True)
        return [], []


_LISTENERS, _READERS = _capture_setup()


class BlindataPlugin(AirflowPlugin):
    """Registers ``BlindataListener`` when capture needs it (see the module docstring), and mounts
    the OpenLineage receiver for producers outside Airflow in the API server."""

    name = "blindata"
    listeners = _LISTENERS
    hook_lineage_readers = _READERS

    @property
    def fastapi_apps(self) -> list[dict[str, Any]]:
        """The OpenLineage receiver, built only where Airflow reads this (the API server)."""
        from airflow_blindata.openlineage.receiver import plugin_fastapi_apps

        return plugin_fastapi_apps()
