"""Whether the store can be where every task writes: a SQLite file is on one machine only.

With an executor that runs tasks on other machines (Celery, Kubernetes, Edge, ECS, Batch...),
each worker writes its own SQLite file and the sync DAG, on one worker, reads one of them: the
events captured elsewhere never reach Blindata, silently. Nothing in the store can tell; the
configured executor can. ``sqlite_across_machines`` says so in words an administrator acts on.
"""

from __future__ import annotations

from .base import EventStore

__all__ = ["LOCAL_EXECUTORS", "configured_executors", "nothing_captured", "sqlite_across_machines"]

LOCAL_EXECUTORS = frozenset({"LocalExecutor", "SequentialExecutor", "DebugExecutor"})
"""Executors that run every task on the machine of the scheduler."""


def configured_executors() -> list[str]:
    """``[core] executor``: the class names of the executors (aliases and module paths dropped);
    empty where Airflow is not installed or the option cannot be read."""
    try:
        from airflow.configuration import conf

        raw = str(conf.get("core", "executor", fallback="") or "")
    except Exception:
        return []
    names = []
    for item in raw.split(","):
        # ``alias:module.path.Class`` and ``=team:...`` forms: the class name is what is last.
        name = item.strip().rpartition(":")[2].rpartition(".")[2].strip()
        if name:
            names.append(name)
    return names


def sqlite_across_machines(store: EventStore) -> str | None:
    """A warning when ``store`` is a SQLite file and an executor may run tasks elsewhere."""
    if getattr(store, "backend", None) != "sqlite":  # a registered store may have none
        return None
    remote = [name for name in configured_executors() if name not in LOCAL_EXECUTORS]
    if not remote:
        return None
    return (
        f"The event store is a SQLite file ({store.url}) but [core] executor is "
        f"{', '.join(remote)}, which may run tasks on other machines: each machine captures "
        "into its own file, and the sync reads only the file of the machine it runs on, so "
        "events captured elsewhere never reach Blindata. Use a PostgreSQL store shared by "
        "every Airflow component ([blindata] store_url = postgresql://...; docs/capture.md)."
    )


def nothing_captured(store: EventStore) -> str | None:
    """A warning when ``store`` never received an event: on a new deployment, true; after a
    mistyped store URL (the sync creates the store it is given), the only sign of it. The
    snapshot of such a store succeeds with nothing, and the cleanup refuses it
    (``cleanup.refuseEmptySnapshot``)."""
    if store.last_id() > 0:
        return None
    return (
        f"The event store {store.url} holds no event: nothing was captured into it yet, or "
        "capture writes to another store. The sync and the workers must name the same store "
        "([blindata] store_url, the operators' store_url; docs/capture.md)."
    )
