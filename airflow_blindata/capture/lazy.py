"""``CaptureListener``: what the plugin registers in every Airflow process, at no cost until an
event.

It imports nothing heavy. ``prepare()`` runs once per process, on its first task or DAG event,
before that event is extracted and its emitting child forked (the hooks are ``tryfirst``): it
builds ``BlindataListener`` and preloads its store (the default capture), or preloads the stores
of ``BlindataTransport`` (``[openlineage] transport``). The hooks then hand each event to
``BlindataListener`` when it captures, except those of the provider's own tasks and the sync DAG
(``own``), and note the provider's own tasks for the transport (``remember_own_task``). A hook
never raises: a failure is logged and that event's capture is lost; the task is not affected.

Why: docs/capture.md#set-up-on-the-first-event-capturelazypy
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from airflow.providers.common.compat.sdk import hookimpl as airflow_hookimpl
from pluggy import HookimplMarker

from airflow_blindata.redaction import redact_url

from .own import is_own_dag, is_own_task_instance, remember_own_task

if TYPE_CHECKING:
    from .listener import BlindataListener

__all__ = ["CaptureListener"]

log = logging.getLogger(__name__)

hookimpl: HookimplMarker = airflow_hookimpl  # Airflow's marker (project "airflow"), typed


class CaptureListener:
    """Stands in for ``BlindataListener`` in every process (see the module docstring).

    :param listen: capture with ``BlindataListener`` (False: the OpenLineage provider already
        sends to ``BlindataTransport``; only its stores are prepared).
    :param decide_later: whether the listener decides on its first event that it stands down
        (``[openlineage] config_conn_id``, read only in the process that emits).
    :param store_urls: the transports' stores to preload when not listening.
    """

    def __init__(
        self,
        *,
        listen: bool,
        decide_later: bool = False,
        store_urls: Sequence[str | None] = (),
    ) -> None:
        self.listen = listen
        self.decide_later = decide_later
        self.store_urls = tuple(store_urls)
        self._prepared = False
        self._listener: BlindataListener | None = None

    def __repr__(self) -> str:
        # Shown in Airflow's debug log of every listener call (pluggy's HookImpl repr).
        shown = tuple(url if url is None else redact_url(url) for url in self.store_urls)
        what = "listener" if self.listen else f"transport stores {shown!r}"
        return f"CaptureListener({what}, prepared={self._prepared})"

    def prepare(self) -> BlindataListener | None:
        """The heavy set-up, once per process; the listener to hand events to (None when the
        OpenLineage provider captures through the transport, or the set-up failed)."""
        if self._prepared:
            return self._listener
        self._prepared = True
        try:
            from .transport import preload

            if self.listen:
                from .listener import get_blindata_listener

                self._listener = get_blindata_listener(decide_later=self.decide_later)
                preload(self._listener.store_url)
            else:
                for url in self.store_urls:
                    preload(url)
        except Exception:
            log.warning("Blindata capture could not be set up; it stays off", exc_info=True)
        return self._listener

    def _hand_over(self, name: str, call: Callable[[BlindataListener], Any]) -> None:
        try:
            listener = self.prepare()
            if listener is not None:
                call(listener)
        except Exception:  # the next listeners (the OpenLineage provider's) must still run
            log.warning("Blindata capture failed in %s", name, exc_info=True)

    def _task_event(self, name: str, task_instance: Any, **arguments: Any) -> None:
        try:
            own = is_own_task_instance(task_instance)
            if own:  # the sync's own tasks: not lineage to catalogue (see ``own``)
                remember_own_task(task_instance)  # for the transport, in the forked children
        except Exception:
            log.debug("Could not tell whether a task is the provider's own", exc_info=True)
            own = False
        if own and self.listen:
            return
        self._hand_over(
            name, lambda listener: getattr(listener, name)(task_instance=task_instance, **arguments)
        )

    def _dag_event(self, name: str, dag_run: Any, msg: str) -> None:
        try:
            if self.listen and is_own_dag(getattr(dag_run, "dag", None)):
                return
        except Exception:
            log.debug("Could not tell whether a DAG is the provider's own", exc_info=True)
        self._hand_over(name, lambda listener: getattr(listener, name)(dag_run=dag_run, msg=msg))

    @hookimpl(tryfirst=True)
    def on_task_instance_running(self, previous_state: Any, task_instance: Any) -> None:
        self._task_event("on_task_instance_running", task_instance, previous_state=previous_state)

    @hookimpl(tryfirst=True)
    def on_task_instance_success(self, previous_state: Any, task_instance: Any) -> None:
        self._task_event("on_task_instance_success", task_instance, previous_state=previous_state)

    @hookimpl(tryfirst=True)
    def on_task_instance_failed(self, previous_state: Any, task_instance: Any, error: Any) -> None:
        self._task_event(
            "on_task_instance_failed", task_instance, previous_state=previous_state, error=error
        )

    @hookimpl(tryfirst=True)
    def on_task_instance_skipped(self, previous_state: Any, task_instance: Any) -> None:
        self._task_event("on_task_instance_skipped", task_instance, previous_state=previous_state)

    @hookimpl(tryfirst=True)
    def on_dag_run_running(self, dag_run: Any, msg: str) -> None:
        self._dag_event("on_dag_run_running", dag_run, msg)

    @hookimpl(tryfirst=True)
    def on_dag_run_success(self, dag_run: Any, msg: str) -> None:
        self._dag_event("on_dag_run_success", dag_run, msg)

    @hookimpl(tryfirst=True)
    def on_dag_run_failed(self, dag_run: Any, msg: str) -> None:
        self._dag_event("on_dag_run_failed", dag_run, msg)

    @hookimpl
    def before_stopping(self, component: Any) -> None:
        """Shuts the listener's process pool down, when this process built the listener."""
        if self._listener is not None:
            listener = self._listener
            self._hand_over("before_stopping", lambda _: listener.before_stopping(component))
