"""From stored events, or event files, to a catalog plan: the way a snapshot and ``plan`` map.

* ``store``: the plan of the event store, read job by job, a kept fold loaded or extended where
  the job's events allow it, the SQL hash memo (``plan_from_store``: what the sync maps);
* ``files``: the plan of event files, read a job at a time like the store (``plan_files``), and
  ``plan_store`` for ``airflow-blindata plan`` (the store, read without keeping anything);
* ``eventfiles``: event files read a line at a time (also what ``ingest`` reads);
* ``render``: a plan as tables, and the table of gaps (also the run report's).

It reads the store and hands the mapper's pure pieces (``mapper.fold``, ``mapper.build``) what
they fold; it never imports the sync, which imports it. The names below are loaded on first use
(PEP 562), so that ``ingest`` reads event files without importing the mapper.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow_blindata.plans.eventfiles import read_event_file
    from airflow_blindata.plans.files import load_known_systems, plan_files, plan_store
    from airflow_blindata.plans.render import gap_table, render_tables
    from airflow_blindata.plans.store import Touched, plan_from_store

_EXPORTS = {
    "Touched": "store",
    "gap_table": "render",
    "load_known_systems": "files",
    "plan_files": "files",
    "plan_from_store": "store",
    "plan_store": "files",
    "read_event_file": "eventfiles",
    "render_tables": "render",
}

__all__ = [
    "Touched",
    "gap_table",
    "load_known_systems",
    "plan_files",
    "plan_from_store",
    "plan_store",
    "read_event_file",
    "render_tables",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
