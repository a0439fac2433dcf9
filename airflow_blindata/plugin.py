"""The provider's Airflow plugin, registered through the ``airflow.plugins`` entry point.

Airflow loads plugins from entry points even with lazy provider discovery (provider-info
``plugins`` is then ignored), in every process: scheduler, DAG processor, API server, triggerer,
each ``airflow`` command and each task. So importing this module costs next to nothing (a few
milliseconds: ``benchmarks/imports.py``): it reads the configuration and registers a
``CaptureListener``, which does the set-up capture needs only in a process that emits events, on
its first task or DAG event, before the event is extracted and the child that emits it forked:

* when the OpenLineage provider already sends to ``BlindataTransport`` (alone or in a
  composite), the listener only preloads the transport's stores there;
* otherwise, unless ``[blindata] listener_enabled`` is False or OpenLineage is turned off
  (``[openlineage] disabled``, ``OPENLINEAGE_DISABLED``), it builds ``BlindataListener`` and
  preloads its store there, and the provider's hook-lineage reader is registered (SQL hooks
  report their lineage only when one is).

Nothing here may break Airflow: a failure is logged and capture stays off.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from airflow.plugins_manager import AirflowPlugin

log = logging.getLogger(__name__)


def _capture_setup() -> tuple[list[Any], list[Any]]:
    """The listeners and hook-lineage readers to register (both empty when not needed)."""
    try:
        from airflow_blindata.capture.lazy import CaptureListener
        from airflow_blindata.capture.openlineage_config import (
            listener_enabled,
            openlineage_blindata_legs,
            openlineage_disabled,
        )

        legs = openlineage_blindata_legs(resolve_connection=False)
        if legs:
            urls = [leg.get("store_url") for leg in legs]
            return [CaptureListener(listen=False, store_urls=urls)], []
        if not _listener_enabled(listener_enabled) or openlineage_disabled():
            return [], []
        from airflow.providers.common.compat.sdk import HookLineageReader

        return [CaptureListener(listen=True, decide_later=legs is None)], [HookLineageReader]
    except Exception:
        log.warning("Blindata capture could not be set up; it stays off", exc_info=True)
        return [], []


def _listener_enabled(read: Callable[[], bool]) -> bool:
    """``[blindata] listener_enabled``; one that is neither true nor false (``maybe``, ``ture``)
    is its default, true, said as an error: read as off, every task's lineage was lost with a
    warning at the plugin's load as the only sign (a probe of deployments)."""
    try:
        return read()
    except ValueError as exc:
        log.error("%s: Blindata capture stays on, the option's default", exc)
        return True


_LISTENERS, _READERS = _capture_setup()


def _extra_links() -> list[Any]:
    try:
        from airflow_blindata.ui.extra_link import ViewInBlindata

        return [ViewInBlindata()]
    except Exception:
        log.warning("The Blindata operator extra link could not be registered", exc_info=True)
        return []


def _external_views() -> list[dict[str, Any]]:
    try:
        from airflow_blindata.ui.app import plugin_external_views

        return plugin_external_views()
    except Exception:
        log.warning("The Blindata page could not be registered", exc_info=True)
        return []


class BlindataPlugin(AirflowPlugin):
    """Registers the capture listener (see the module docstring), and mounts in the API server
    the OpenLineage receiver for producers outside Airflow and the Blindata page of the UI
    (``airflow_blindata.ui``: a nav entry, a view on DAG runs, and the operator extra link
    "View in Blindata" on every task)."""

    name = "blindata"
    listeners = _LISTENERS
    hook_lineage_readers = _READERS

    @property
    def fastapi_apps(self) -> list[dict[str, Any]]:
        """The receiver and the page, built only where Airflow reads this (the API server)."""
        from airflow_blindata.receiver.app import plugin_fastapi_apps
        from airflow_blindata.ui.app import plugin_fastapi_apps as page_apps

        return [*plugin_fastapi_apps(), *page_apps()]

    @property
    def global_operator_extra_links(self) -> list[Any]:  # type: ignore[override]
        """ "View in Blindata" on every task: a link to its job entity (none for a task that was
        never captured); built where Airflow asks for it, not when the plugin is imported."""
        return _extra_links()

    @property
    def external_views(self) -> list[dict[str, Any]]:  # type: ignore[override]
        """The page's entries in the Airflow UI (none when ``[blindata] ui_enabled`` is off)."""
        return _external_views()
