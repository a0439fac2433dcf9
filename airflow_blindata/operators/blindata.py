"""``BlindataSnapshotOperator`` and ``BlindataCleanupOperator``: the sync as two Airflow tasks.

Thin, like ``HttpOperator``: keyword-only arguments, ``template_fields``, the hook built lazily,
and an ``execute`` that builds the objects (definition, store, client) and calls ``sync.runner``.
The report is logged as a table, kept in the store's sync history, and returned as the XCom
(without the long ownership lists). Neither operator holds mapping or HTTP logic.

Outcomes, as an administrator scheduling the sync expects them:

* a snapshot that could not use Blindata or the store, or that Blindata could not take writes
  from (an outage: 5xx or no answer), **fails** (Airflow retries it); one with objects refused
  (4xx) succeeds with the failures in its report, or fails with ``fail_on_partial``;
* a cleanup refused by a fail-safe (removal over ``maxRemovalShare``, failed snapshot) **fails**
  without retry: somebody must look, then run it with ``force``; a cleanup with nothing to do
  yet (no snapshot, an empty one, cleanup disabled) is **skipped**.

Parsing a DAG file that uses them costs what parsing one with ``EmptyOperator`` does
(``benchmarks/imports.py``): the definition, the hook, the store and the sync are imported when
a task runs, never when the DAG processor parses the file.

Capture leaves their events out: the sync is not lineage to catalogue
(``airflow_blindata.capture.own``; docs/operators.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Through common-compat: AirflowFailException and AirflowSkipException are in
# airflow.sdk.exceptions from Airflow 3.2, in airflow.exceptions before
from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    AirflowSkipException,
    BaseOperator,
)

if TYPE_CHECKING:
    from airflow_blindata.definition import JobDefinition
    from airflow_blindata.hooks.blindata import BlindataHook
    from airflow_blindata.sync import Progress, RunReport

    DefinitionArg = JobDefinition | Mapping[str, Any] | str | os.PathLike[str]

__all__ = ["BlindataCleanupOperator", "BlindataSnapshotOperator"]

# The defaults of ``airflow_blindata.sync`` (context.DEFAULT_BATCH_SIZE,
# progress.DEFAULT_PROGRESS_INTERVAL), repeated so that parsing a DAG does not import the sync;
# tests/operators check that they agree.
DEFAULT_CONN_ID = "blindata_default"
DEFAULT_BATCH_SIZE = 500
DEFAULT_PROGRESS_INTERVAL = 5.0


class _BlindataSyncOperator(BaseOperator):
    """What both operators share: the definition, the connection, the store, the log."""

    template_fields: Sequence[str] = ("definition", "blindata_conn_id", "store_url")
    ui_color = "#d9ecff"

    def __init__(
        self,
        *,
        definition: DefinitionArg,
        blindata_conn_id: str = DEFAULT_CONN_ID,
        store_url: str | None = None,
        progress_interval: float = DEFAULT_PROGRESS_INTERVAL,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.definition = definition
        self.blindata_conn_id = blindata_conn_id
        self.store_url = store_url
        self.progress_interval = progress_interval

    @cached_property
    def hook(self) -> BlindataHook:
        """Built when the task runs, never when the DAG file is parsed."""
        from airflow_blindata.hooks.blindata import BlindataHook

        return BlindataHook(blindata_conn_id=self.blindata_conn_id)

    def job_definition(self) -> JobDefinition:
        from airflow_blindata.definition import JobDefinition

        definition = self.definition
        if isinstance(definition, str | os.PathLike):
            definition = self._definition_path(os.fspath(definition))
        return JobDefinition.coerce(definition)

    def _definition_path(self, given: str) -> str:
        """A relative path is read from the DAG file's folder, as Airflow reads template files:
        a task runs in whatever directory its worker started in, not next to its DAG file.
        (A path that exists only relative to the working directory is still read there.)"""
        path = Path(given.strip()).expanduser()
        if path.is_absolute():
            return str(path)
        fileloc = getattr(getattr(self, "dag", None), "fileloc", None) if self.has_dag() else None
        if not fileloc:
            return str(path)
        beside_dag = Path(fileloc).parent / path
        if beside_dag.exists() or not path.exists():
            return str(beside_dag)
        return str(path.resolve())

    def progress(self) -> Progress:
        from airflow_blindata.sync import Progress

        return Progress(self._log_progress, interval=self.progress_interval)

    def _warn_of_the_store(self, store: Any) -> None:
        """Say so when the store cannot hold what workers on other machines captured."""
        from airflow_blindata.store.placement import sqlite_across_machines

        problem = sqlite_across_machines(store)
        if problem:
            self.log.warning("%s", problem)

    def _log_progress(self, phase: str, done: int, total: int) -> None:
        self.log.info("Blindata %s: %d/%d", phase, done, total)

    def _log_report(self, report: RunReport) -> None:
        self.log.info("\n%s", report.render())


class BlindataSnapshotOperator(_BlindataSyncOperator):
    """Map every stored OpenLineage event and bring Blindata in line with the plan.

    :param definition: the job definition: a path to its YAML or JSON file, a dict, or a
        ``JobDefinition``. (templated)
    :param blindata_conn_id: the BLINDATA connection. (templated)
    :param store_url: the event store (``None``: the configured one). (templated)
    :param batch_size: rows per upload request.
    :param apply_retention: prune the store by the definition's ``retention`` first.
    :param fail_on_partial: fail the task when Blindata refused some objects.
    :param progress_interval: seconds between progress lines in the log.
    """

    def __init__(
        self,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        apply_retention: bool = True,
        fail_on_partial: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.batch_size = batch_size
        self.apply_retention = apply_retention
        self.fail_on_partial = fail_on_partial

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_blindata.store import open_store
        from airflow_blindata.sync.runner import run_snapshot

        definition = self.job_definition()
        with open_store(self.store_url) as store, self.hook.get_conn() as client:
            self._warn_of_the_store(store)
            report = run_snapshot(
                definition,
                client,
                store,
                progress=self.progress(),
                batch_size=self.batch_size,
                apply_retention=self.apply_retention,
            )
        self._log_report(report)
        if report.status == "failed":
            raise AirflowException(f"Blindata snapshot failed: {report.message}")
        if report.status == "partial" and self.fail_on_partial:
            raise AirflowException("Blindata refused some objects; see the report above")
        return report.to_xcom()


class BlindataCleanupOperator(_BlindataSyncOperator):
    """Remove what the job definition owns and its last snapshot no longer described.

    :param definition: the job definition, as for the snapshot. (templated)
    :param blindata_conn_id: the BLINDATA connection. (templated)
    :param store_url: the event store holding the sync history. (templated)
    :param dry_run: report what would be removed, remove nothing. (templated)
    :param force: remove even more than ``cleanup.maxRemovalShare``. (templated)
    :param progress_interval: seconds between progress lines in the log.
    """

    template_fields: Sequence[str] = (*_BlindataSyncOperator.template_fields, "dry_run", "force")

    def __init__(
        self, *, dry_run: bool | str = False, force: bool | str = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.dry_run = dry_run
        self.force = force

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_blindata.store import open_store
        from airflow_blindata.sync.runner import run_cleanup

        definition = self.job_definition()
        with open_store(self.store_url) as store, self.hook.get_conn() as client:
            report = run_cleanup(
                definition,
                client,
                store,
                dry_run=_flag(self.dry_run, "dry_run"),
                force=_flag(self.force, "force"),
                progress=self.progress(),
            )
        self._log_report(report)
        if report.status == "failed":
            raise AirflowException(f"Blindata cleanup failed: {report.message}")
        if report.status == "skipped":
            raise AirflowSkipException(report.message or "nothing to clean up")
        if report.status == "refused":
            raise AirflowFailException(f"Blindata cleanup refused: {report.message}")
        return report.to_xcom()


_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off", "", "none"})


def _flag(value: bool | str, name: str) -> bool:
    """A boolean that may arrive as rendered template text (``"{{ params.dry_run }}"``)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{name} must be true or false, got {value!r}")
