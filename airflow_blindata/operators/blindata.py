"""``BlindataSnapshotOperator`` and ``BlindataCleanupOperator``: the sync as two Airflow tasks.

Thin, like ``HttpOperator``: keyword-only arguments, ``template_fields``, the hook built lazily,
and an ``execute`` that builds the objects (definition, store, client) and calls ``sync.runner``;
neither holds mapping or HTTP logic. The report is logged as a table, kept in the store's sync
history and returned as the XCom (without the long ownership lists). A snapshot that could not
use Blindata or the store, or met an outage, fails (retried); objects refused (4xx) fail it only
with ``fail_on_partial``; a light sync with nothing new is skipped. A cleanup refused by a
fail-safe fails without retry; one with nothing to do yet is skipped. Heavy imports wait for
``execute``. Capture leaves their events out (``airflow_blindata.capture.own``).

Outcomes in full: docs/operators.md#outcomes-as-an-administrator-expects-them-operatorsblindatapy
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

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
    from airflow_blindata.sync import Progress, RunOrigin, RunReport

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

    template_fields: Sequence[str] = (
        "definition",
        "blindata_conn_id",
        "store_url",
        "progress_interval",
    )
    ui_color = "#d9ecff"

    def __init__(
        self,
        *,
        definition: DefinitionArg,
        blindata_conn_id: str = DEFAULT_CONN_ID,
        store_url: str | None = None,
        progress_interval: float | str = DEFAULT_PROGRESS_INTERVAL,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.definition = definition
        self.blindata_conn_id = blindata_conn_id
        self.store_url = store_url
        self.progress_interval = progress_interval
        _check_unless_templated(
            _seconds, progress_interval, "progress_interval", DEFAULT_PROGRESS_INTERVAL
        )

    def _do_render_template_fields(
        self,
        parent: Any,
        template_fields: Any,
        context: Any,
        jinja_env: Any,
        seen_oids: set[int],
    ) -> None:
        """Render, then have Airflow mask the store URL's password wherever it shows the value:
        the task's rendered fields kept it in clear (a probe of the sync DAG), but for the
        ``[blindata] store_url`` option, which Airflow masks as a sensitive setting. Here, not
        in ``render_template_fields``, which a mapped task's rendering passes by (a review).
        Not a user given without a password (``postgresql://postgres@db``): masked, every
        ``postgres`` of the task's logs was (a review)."""
        super()._do_render_template_fields(parent, template_fields, context, jinja_env, seen_oids)
        # once this task's own fields are rendered: a nested templated object's rendering comes
        # here first, the URL still a template (its ``{{ … }}`` was masked: a review)
        if parent is self and isinstance(self.store_url, str) and self.store_url:
            from airflow.sdk.log import mask_secret

            from airflow_blindata.redaction import url_secrets

            for secret in url_secrets(self.store_url, user_alone=False):
                mask_secret(secret)

    @cached_property
    def hook(self) -> BlindataHook:
        """Built when the task runs, never when the DAG file is parsed."""
        from airflow_blindata.hooks.blindata import BlindataHook

        return BlindataHook(blindata_conn_id=self.blindata_conn_id)

    def job_definition(self) -> JobDefinition:
        """The definition; without its own ``airflowBaseUrl``, Airflow's ``[api] base_url``."""
        from airflow_blindata.definition import JobDefinition
        from airflow_blindata.options import airflow_base_url

        definition = self.definition
        if isinstance(definition, str | os.PathLike):
            definition = self._definition_path(os.fspath(definition))
        return JobDefinition.coerce(definition).with_airflow_base_url(airflow_base_url())

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
        """The log's progress lines, every ``progress_interval`` seconds (``ValueError`` naming
        it when it is no positive number)."""
        from airflow_blindata.sync import Progress

        interval = _seconds(self.progress_interval, "progress_interval", DEFAULT_PROGRESS_INTERVAL)
        return Progress(self._log_progress, interval=interval)

    def _warn_of_the_store(self, store: Any) -> None:
        """Say so when the store cannot hold what workers on other machines captured, or holds
        nothing at all (a mistyped store_url is a new empty store)."""
        from airflow_blindata.store.placement import nothing_captured, sqlite_across_machines

        for problem in (sqlite_across_machines(store), nothing_captured(store)):
            if problem:
                self.log.warning("%s", problem)

    def origin(self, context: Any) -> RunOrigin:
        """This task instance, kept in the report so that the page links to its run and log."""
        from airflow_blindata.sync import RunOrigin

        ti = context.get("ti") if isinstance(context, Mapping) else None
        map_index = getattr(ti, "map_index", -1)
        return RunOrigin(
            dag_id=getattr(ti, "dag_id", None) or (self.dag_id if self.has_dag() else None),
            run_id=getattr(ti, "run_id", None),
            task_id=getattr(ti, "task_id", None) or self.task_id,
            map_index=map_index if isinstance(map_index, int) else -1,
        )

    def _log_progress(self, phase: str, done: int, total: int | None) -> None:
        if total is None:
            self.log.info("Blindata %s: %d so far", phase, done)
        else:
            self.log.info("Blindata %s: %d/%d", phase, done, total)

    def _log_report(self, report: RunReport) -> None:
        self.log.info("\n%s", report.render())


class BlindataSnapshotOperator(_BlindataSyncOperator):
    """Map every stored OpenLineage event and bring Blindata in line with the plan; with
    ``light``, publish only the jobs that received events since the last sync.

    The light mode (issue 43, ``sync.runner.run_light``) publishes what those jobs describe,
    mapped as the full snapshot maps them, and removes nothing. It is **skipped** at once when
    nothing is new (one look at the sync history and the store's cursor: Airflow's short-circuit,
    inside the task), before the definition's first full snapshot, and while a snapshot or cleanup
    of the definition holds the sync lock; a light sync and a full one never run at once.

    The numbers and true/false arguments may be rendered templates (``"{{ params.light }}"``):
    a flag is read as every flag of the provider is (``options.parse_flag``), a number must be
    positive, and an empty rendering (an unset param: ``""`` or ``"None"``) takes the default.
    A value that is none of these is refused naming the argument: when the DAG is parsed, or,
    for a template, when the task starts, before anything is read or written.

    :param definition: the job definition: a path to its YAML or JSON file, a dict, or a
        ``JobDefinition``. (templated)
    :param blindata_conn_id: the BLINDATA connection. (templated)
    :param store_url: the event store (``None``: the configured one). (templated)
    :param batch_size: rows per upload request, a positive whole number. (templated)
    :param apply_retention: prune the store by the definition's ``retention`` first. (templated)
    :param fail_on_partial: fail the task when Blindata refused some objects. (templated)
    :param progress_interval: seconds between progress lines in the log, positive. (templated)
    :param light: a light sync: only the jobs that received events since the last sync, nothing
        removed, no retention; skipped when nothing is new. (templated)
    """

    template_fields: Sequence[str] = (
        *_BlindataSyncOperator.template_fields,
        "batch_size",
        "apply_retention",
        "fail_on_partial",
        "light",
    )

    def __init__(
        self,
        *,
        batch_size: int | str = DEFAULT_BATCH_SIZE,
        apply_retention: bool | str = True,
        fail_on_partial: bool | str = False,
        light: bool | str = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.batch_size = batch_size
        self.apply_retention = apply_retention
        self.fail_on_partial = fail_on_partial
        self.light = light
        _check_unless_templated(_whole, batch_size, "batch_size", DEFAULT_BATCH_SIZE)
        _check_unless_templated(_flag, apply_retention, "apply_retention", True)
        _check_unless_templated(_flag, fail_on_partial, "fail_on_partial", False)
        _check_unless_templated(_flag, light, "light", False)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_blindata.store import open_store
        from airflow_blindata.sync.runner import (
            NO_FULL_SNAPSHOT_YET,
            has_new_events,
            light_cursor,
            run_light,
            run_snapshot,
        )

        # the arguments as rendered, read before anything is (a batch size of 0 uploaded nothing
        # and reported success; a "500" failed after the Systems were written: a probe)
        with _refused_as_failure():
            batch_size = _whole(self.batch_size, "batch_size", DEFAULT_BATCH_SIZE)
            apply_retention = _flag(self.apply_retention, "apply_retention", True)
            fail_on_partial = _flag(self.fail_on_partial, "fail_on_partial", False)
            light = _flag(self.light, "light", False)
            progress = self.progress()
        definition = self.job_definition()
        with open_store(self.store_url) as store:
            # the short-circuit: nothing new, skipped before any connection is made; before a
            # first full snapshot, said so (a probe of the sync DAG: "nothing new since the last
            # sync" with events in the store and no sync ever run)
            if light and not has_new_events(store, definition):
                if light_cursor(store, definition) is None:
                    raise AirflowSkipException(NO_FULL_SNAPSHOT_YET)
                raise AirflowSkipException("nothing new since the last sync")
            self._warn_of_the_store(store)
            with self.hook.get_conn() as client:
                if light:
                    report = run_light(
                        definition,
                        client,
                        store,
                        progress=progress,
                        batch_size=batch_size,
                        origin=self.origin(context),
                    )
                else:
                    report = run_snapshot(
                        definition,
                        client,
                        store,
                        progress=progress,
                        batch_size=batch_size,
                        apply_retention=apply_retention,
                        origin=self.origin(context),
                    )
        if report.status == "skipped":
            raise AirflowSkipException(report.message or "nothing to publish")
        self._log_report(report)
        if report.status == "failed":
            kind = "light sync" if light else "snapshot"
            raise AirflowException(f"Blindata {kind} failed: {report.message}")
        if report.status == "partial" and fail_on_partial:
            raise AirflowException("Blindata refused some objects; see the report above")
        return report.to_xcom()


class BlindataCleanupOperator(_BlindataSyncOperator):
    """Remove what the job definition owns and its last snapshot no longer described.

    :param definition: the job definition, as for the snapshot. (templated)
    :param blindata_conn_id: the BLINDATA connection. (templated)
    :param store_url: the event store holding the sync history. (templated)
    :param dry_run: report what would be removed, remove nothing. (templated)
    :param force: remove even more than ``cleanup.maxRemovalShare``. (templated)
    :param progress_interval: seconds between progress lines in the log, positive. (templated)

    Its flags and number are read as the snapshot's are (``BlindataSnapshotOperator``).
    """

    template_fields: Sequence[str] = (*_BlindataSyncOperator.template_fields, "dry_run", "force")

    def __init__(
        self, *, dry_run: bool | str = False, force: bool | str = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.dry_run = dry_run
        self.force = force
        _check_unless_templated(_flag, dry_run, "dry_run", False)
        _check_unless_templated(_flag, force, "force", False)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_blindata.store import open_store
        from airflow_blindata.sync.runner import run_cleanup

        with _refused_as_failure():
            dry_run = _flag(self.dry_run, "dry_run", False)
            force = _flag(self.force, "force", False)
            progress = self.progress()
        definition = self.job_definition()
        with open_store(self.store_url) as store, self.hook.get_conn() as client:
            report = run_cleanup(
                definition,
                client,
                store,
                dry_run=dry_run,
                force=force,
                progress=progress,
                origin=self.origin(context),
            )
        self._log_report(report)
        if report.status == "failed":
            raise AirflowException(f"Blindata cleanup failed: {report.message}")
        if report.status == "skipped":
            raise AirflowSkipException(report.message or "nothing to clean up")
        if report.status == "refused":
            if report.dry_run and report.reason in _FORCE_LIFTS:
                # a look before forcing (a probe of the sync DAG: the dry run turned the task
                # red); the report says why a cleanup would refuse, and what it would remove
                self.log.warning("A Blindata cleanup would be refused: %s", report.message)
                return report.to_xcom()
            raise AirflowFailException(f"Blindata cleanup refused: {report.message}")
        return report.to_xcom()


_FORCE_LIFTS = frozenset({"share_exceeded", "another_store"})
"""The fail-safes ``force`` lifts: a dry run they refuse is the look before forcing, and
succeeds; one the last snapshot refuses (``snapshot_failed``, ``no_server_time``) stays red (a
review)."""


T = TypeVar("T")

_TEMPLATE_MARKS = ("{{", "{%", "{#")


def _unset(value: object) -> bool:
    """An argument left to its default: ``None``, or a template of an unset param, which
    renders as ``""`` or ``"None"``."""
    return value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))


def _flag(value: object, name: str, default: bool = False) -> bool:
    """A true/false argument, a bool or rendered template text (``"{{ params.dry_run }}"``),
    read as every flag of the provider is (``options.parse_flag``: ``"False"``, ``"no"``, ``"0"``
    are false); unset, the default; anything else a ``ValueError`` naming ``name``."""
    from airflow_blindata.options import parse_flag  # stdlib only: cheap when a DAG is parsed

    return default if _unset(value) else parse_flag(value, name)


def _whole(value: object, name: str, default: int) -> int:
    """A positive whole number (``500``, ``"500"``); unset, the default; anything else (``0``
    uploaded nothing and reported success: a probe) a ``ValueError`` naming ``name``."""
    from airflow_blindata.options import parse_positive_int

    return default if _unset(value) else parse_positive_int(value, name)


def _seconds(value: object, name: str, default: float) -> float:
    """A positive number of seconds (``5``, ``"2.5"``); unset, the default; anything else a
    ``ValueError`` naming ``name``."""
    from airflow_blindata.options import parse_positive_seconds

    return default if _unset(value) else parse_positive_seconds(value, name)


def _check_unless_templated(
    read: Callable[[object, str, T], T], value: object, name: str, default: T
) -> None:
    """Read an argument when the operator is built, so that a wrong value is the DAG file's
    import error, naming it; a template (every number and flag is a templated field) is read
    once rendered, when the task starts."""
    if isinstance(value, str) and any(mark in value for mark in _TEMPLATE_MARKS):
        return
    read(value, name, default)


@contextmanager
def _refused_as_failure() -> Iterator[None]:
    """A rendered argument that is refused fails the task without retry: it renders the same
    on every try."""
    try:
        yield
    except ValueError as exc:
        raise AirflowFailException(str(exc)) from exc
