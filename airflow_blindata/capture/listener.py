"""``BlindataListener``: the OpenLineage provider's own extraction, delivered to the event store.

It is the provider's ``OpenLineageListener`` with its adapter's client sending through
``BlindataTransport``, so Blindata captures whatever ``[openlineage] transport`` says. Two seams
are taken over, nothing is copied: ``_execute`` (a task event's emission: returns before
extraction when the listener stands down, else redirects SQL hook lineage to ours) and
``submit_callable`` (DAG events: the pool's workers run ``_capture``, with Blindata's adapter).
It stands down when the provider already sends to ``BlindataTransport``. The plugin registers
``CaptureListener`` (``lazy.py``), which builds this one on a process's first event.

Why: docs/capture.md#the-listeners-two-seams-capturelistenerpy
"""

from __future__ import annotations

import logging
from functools import cache, partial
from typing import Any

from airflow.providers.openlineage.plugins.adapter import OpenLineageAdapter
from airflow.providers.openlineage.plugins.listener import (
    OpenLineageListener,
    _emit_manual_state_change_event,
    _run_adapter_method,
)
from openlineage.client import OpenLineageClient

from .openlineage_config import openlineage_blindata_legs
from .transport import BlindataTransport, BlindataTransportConfig

__all__ = ["BlindataListener", "blindata_adapter", "get_blindata_listener"]

log = logging.getLogger(__name__)


def blindata_adapter(store_url: str | None = None) -> OpenLineageAdapter:
    """The provider's adapter with a client that sends only to ``BlindataTransport``."""
    transport = BlindataTransport(BlindataTransportConfig(store_url=store_url), source="listener")
    return OpenLineageAdapter(client=OpenLineageClient(transport=transport))


@cache
def _process_adapter(store_url: str | None) -> OpenLineageAdapter:
    return blindata_adapter(store_url)


def _capture(store_url: str | None, method_name: str, /, *args: Any, **kwargs: Any) -> None:
    """Run one adapter method (``dag_started``, ``dag_success``, ...) with Blindata's client.

    Module-level so that it pickles into the listener's process pool, like the provider's
    ``_run_adapter_method``; each pool worker keeps one adapter for its lifetime.
    """
    getattr(_process_adapter(store_url), method_name)(*args, **kwargs)


def _as_the_openlineage_listener(listener: OpenLineageListener, callable: Any) -> None:
    """Run ``callable`` with ``listener`` standing in for the provider's listener singleton.

    The provider emits the per-statement events of SQL hook lineage (``<task>.query.<n>``)
    through ``get_openlineage_listener().adapter``, not through the listener that extracted them;
    without this, our extraction would send them to the provider's transport (a duplicate in
    Marquez, or the console) instead of the store. By default this runs in the forked child, so
    the swap never touches the task's process; with ``execute_in_thread`` it lasts while the
    task runner waits for the thread.
    """
    from airflow.providers.openlineage.utils import sql_hook_lineage

    original = getattr(sql_hook_lineage, "get_openlineage_listener", None)
    if original is None:  # another provider version: nothing to redirect
        callable()
        return
    sql_hook_lineage.get_openlineage_listener = lambda: listener
    try:
        callable()
    finally:
        sql_hook_lineage.get_openlineage_listener = original


class BlindataListener(OpenLineageListener):  # type: ignore[misc]
    """The provider's listener, emitting into the Blindata event store (see module docstring)."""

    def __init__(self, store_url: str | None = None, *, decide_later: bool = False) -> None:
        super().__init__()
        self.store_url = store_url
        self.adapter = blindata_adapter(store_url)
        self._active: bool | None = None if decide_later else True

    def is_active(self) -> bool:
        """False when the provider's own configuration already sends to BlindataTransport."""
        if self._active is None:
            self._active = not openlineage_blindata_legs(resolve_connection=True)
            if not self._active:
                log.info("Blindata listener stands down: OpenLineage already sends to Blindata")
        return self._active

    def _execute(self, callable: Any, callable_name: str, use_fork: bool = False) -> None:
        if self.is_active():
            own = partial(_as_the_openlineage_listener, self, callable)
            super()._execute(own, callable_name, use_fork=use_fork)

    def submit_callable(self, callable: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.is_active():
            return None
        if callable is _run_adapter_method:
            method_name, *rest = args
        elif callable is _emit_manual_state_change_event:
            method_name, _stats_key, *rest = args
        else:  # from a newer provider: better no event than one sent to the wrong place
            log.warning("Blindata listener skips an unknown OpenLineage call: %r", callable)
            return None
        return super().submit_callable(_capture, self.store_url, method_name, *rest, **kwargs)


@cache
def get_blindata_listener(*, decide_later: bool = False) -> BlindataListener:
    """The one listener of the process (the store is ``[blindata] store_url``)."""
    return BlindataListener(decide_later=decide_later)
