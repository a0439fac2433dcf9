"""Quality of seed 003: assertions and tests → checks and results, metrics → profiling records.

* a ``dataQualityAssertions`` facet of an input gives one check per dataset, assertion (its name,
  else its type) and column, linked to the dataset's entity, code
  ``ol:<dataset namespace>/<dataset name>:<assertion>[:<column>]``; the Great Expectations
  integration's ``greatExpectations_assertions`` facet is read the same way (its expectation type
  is the assertion);
* a ``test`` run facet gives one check per test name on the job entity, code
  ``ol:<job scope>:test:<name>``; skipped tests make nothing, and without job entities
  (``processLayer: false``) there is no test check;
* every completed or failed run gives one result per check (0 or 1 failure out of 1); aborted runs,
  JobEvents and DatasetEvents give none;
* completed runs give profiling records from ``dataQualityMetrics``, ``inputStatistics`` and
  ``outputStatistics``, timestamped with the facet's ``captureDate`` or the run's end.

Codes longer than 255 characters are cut and end with a hash. The ledger of published runs and
the protection of other suites' checks are the sync's: the plan lists every run it can see.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import chain
from typing import Any

from pydantic import TypeAdapter

from airflow_blindata.definition import JobDefinition
from airflow_blindata.events import (
    AirflowRunFacet,
    AssertedFacet,
    BaseFacet,
    DataQualityAssertionsDatasetFacet,
    DataQualityMetricsDatasetFacet,
    DataQualityMetricsInputDatasetFacet,
    EventType,
    GreatExpectationsAssertionsDatasetFacet,
    IcebergCommitReportOutputDatasetFacet,
    IcebergScanReportInputDatasetFacet,
    InputStatisticsInputDatasetFacet,
    MeasuredFacet,
    OutputStatisticsOutputDatasetFacet,
    ParentRunFacet,
    TestRunFacet,
    Timestamp,
    facet_of,
    finite_number,
)
from airflow_blindata.mapper.catalog import (
    dataset_name,
    entity_key,
    locate_dataset,
)
from airflow_blindata.mapper.fold import (
    DatasetKey,
    Fold,
    InputFold,
    JobFold,
    JobKey,
    OutputFold,
    RunFold,
    RunRetainer,
    layered_facet,
)
from airflow_blindata.mapper.fold.reading import ASSERTION_KEYS, METRIC_KEYS
from airflow_blindata.mapper.identity import (
    NameReading,
    cased_identifier,
    cased_name,
    namespace_identity,
    normalize_namespace,
)
from airflow_blindata.mapper.plan import (
    CatalogPlan,
    EntityKey,
    PlannedCheck,
    PlannedRecord,
    PlannedResult,
    QualityPlan,
)
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.scopes import job_scope, shorten
from airflow_blindata.mapper.systems import SystemResolver
from airflow_blindata.redaction import redact_name, redact_prose, redact_text

__all__ = ["MAX_CODE_LENGTH", "map_quality", "run_note"]

MAX_CODE_LENGTH = 255
_RESULT_STATES = frozenset({EventType.COMPLETE, EventType.FAIL})
_STATISTICS = {
    "input": ("rowsRead", "bytesRead", "filesRead", "inputExtra_"),
    "output": ("rowsWritten", "bytesWritten", "filesWritten", "outputExtra_"),
}


class _Quality:
    def __init__(
        self, fold: Fold, definition: JobDefinition, resolver: SystemResolver, plan: CatalogPlan
    ):
        self.fold = fold
        self.definition = definition
        self.resolver = resolver
        self.plan = plan
        self.quality = QualityPlan(suite_code=definition.quality_suite_code)
        self.checks: dict[str, PlannedCheck] = {}
        self.check_times: dict[str, datetime] = {}
        self.results: dict[tuple[str, str], PlannedResult] = {}
        self.records: dict[tuple[EntityKey, str, str | None, datetime], PlannedRecord] = {}
        self.dropped: set[str] = set()
        """The codes of checks on datasets dropped or renamed since (``QualityPlan.dropped``)."""
        self.checked_labels: dict[tuple[JobKey, str, str], set[str]] = {}
        self.checked_datasets: set[tuple[DatasetKey, str]] = set()
        """(dataset, label) of every assertion that made a dataset check, whichever run sent
        it: dbt-ol's singular test job names the datasets it tests as its inputs."""
        """(job, run id, assertion name) of each assertion that made a dataset check, and the
        codes of its checks."""
        self._fields: dict[EntityKey, dict[str, str | None]] | None = None
        """Entity → its fields by name (``"\\x00"`` first) and without case (``None``: two)."""

    def entity(self, key: DatasetKey) -> EntityKey | None:
        return self.place(key)[1]

    def _why_uncatalogued(self, key: DatasetKey, mapped: bool) -> str:
        """Why a dataset's assertions make no check, where the gap's own hint (crawl it, or
        allow ``entityCreation``) would not help: its namespace has no System."""
        if mapped:
            return ""
        if self.resolver.ignores(key.namespace):
            return ": its namespace is ignored (ignoredNamespaces)"
        return ": its namespace maps to no System (see UNMAPPED_NAMESPACE)"

    def place(self, key: DatasetKey) -> tuple[bool, EntityKey | None]:
        """Whether the dataset has a System, and its entity there."""
        resolver = self.resolver
        system, found, _ = locate_dataset(self.fold, key, resolver, None)
        if system is None:
            return False, None
        known = self.plan.dataset_entities.found
        if (key, system.name) in known:  # a dataset of the fold: the catalog pass found it
            return True, known[key, system.name]
        return True, entity_key(
            system.name, found or dataset_name(self.fold, key, resolver), key.namespace
        )

    def spelt(self, entity: EntityKey, column: str) -> str:
        """A column as its entity's field is spelt: a producer's ``Customer_ID`` is the schema's
        ``customer_id`` when it is the one field spelt so without case (seed 003: one check per
        column; a record on a field the entity lacks names nothing). As sent when the entity has
        no such field, or several."""
        if self._fields is None:
            self._fields = {}
            for planned in self.plan.fields:
                by_fold = self._fields.setdefault(planned.entity, {})
                folded = planned.name.casefold()
                by_fold[folded] = planned.name if folded not in by_fold else None
                by_fold["\x00" + planned.name] = planned.name
        fields = self._fields.get(entity)
        if not fields or ("\x00" + column) in fields:
            return column
        return fields.get(column.casefold()) or column

    def case(self, key: DatasetKey) -> str | None:
        """The ``identifierCase`` declared for the namespace that placed the dataset (its own,
        or its TABLE symlink's: ``catalog.place_dataset``): a check's code, its column and a
        record's field are spelt as the entity and its fields are (seed 003: one check per
        dataset, assertion and column, whatever case a producer sends them in)."""
        return self.reading(key).case

    def reading(self, key: DatasetKey) -> NameReading:
        """How the names of the namespace that placed the dataset are read (``case``)."""
        _, _, namespace = locate_dataset(self.fold, key, self.resolver, None)
        return self.resolver.reading(namespace)

    def column_case(self, key: DatasetKey) -> str | None:
        """The ``identifierCase`` of the dataset's columns: its ``case`` where the platform
        folds columns too (``identity.column_case``), as the catalog pass spells its fields."""
        _, _, namespace = locate_dataset(self.fold, key, self.resolver, None)
        return self.resolver.reading(namespace).column_case

    # -- assertions ----------------------------------------------------------------------------

    def assertions(self, job: JobFold, run: RunFold) -> None:
        self._assertions_on_outputs(job, run)
        scope = ""  # made for the first assertion: most runs send none
        for item in run.inputs:
            facet = layered_facet(DataQualityAssertionsDatasetFacet, item.facets, item.input_facets)
            expectations = layered_facet(
                GreatExpectationsAssertionsDatasetFacet, item.facets, item.input_facets
            )
            if facet is None and expectations is None:
                continue
            self._unread(job, item.key, (facet, expectations))
            asserted = list(facet.assertions) if facet is not None else []
            if expectations is not None:
                asserted += [each.as_assertion() for each in expectations.assertions]
            mapped, entity = self.place(item.key)
            reading = self.reading(item.key)
            case = reading.case
            columns = self.column_case(item.key)
            name = cased_name(item.key.name, case, quoted_folds=reading.quoted_folds)
            # the dataset as its checks' codes name it: on its store and database (two databases'
            # ``dbo.Orders``, their database in a JDBC namespace, are two checks' tables)
            where = f"{namespace_identity(item.key.namespace)}/{name}"
            if entity is None:
                if item.key in self.plan.dataset_entities.gone:  # dropped, or renamed: no check
                    self.plan.report.count("assertionsOnDroppedDatasets")
                    for assertion in asserted:  # and the checks it had go disabled
                        label = assertion.name or assertion.assertion
                        column = (
                            cased_identifier(assertion.column, columns)
                            if assertion.column
                            else None
                        )
                        self.dropped.add(_assertion_code(where, label, column))
                else:  # seed 003: "the run reports TARGET_NOT_CATALOGUED"; the example says why
                    self.plan.report.gap(
                        GapCode.TARGET_NOT_CATALOGUED,
                        f"assertions on {where}{self._why_uncatalogued(item.key, mapped)}",
                    )
                continue
            if asserted and not scope:
                scope = job_scope(job.key.namespace, job.key.name)
            for assertion in asserted:
                label = assertion.name or assertion.assertion
                column = cased_identifier(assertion.column, columns) if assertion.column else None
                on_column = f" on {column}" if column else ""
                code = _assertion_code(where, label, column)
                self.checked_labels.setdefault((job.key, run.run_id, label), set()).add(code)
                self.checked_datasets.add((item.key, label))
                self.check(
                    PlannedCheck(
                        code=code,
                        name=_code(f"{label}{on_column} ({name})"),
                        kind="assertion",
                        entity=entity,
                        description=_free_text(assertion.description),
                        warn_only=_warns(assertion.severity),
                        job=scope,
                        properties=_present(
                            ("openLineageKind", "assertion"),
                            ("openLineageDataset", where),
                            ("openLineageAssertionType", _free_text(assertion.assertion)),
                            ("openLineageColumn", _free_text(column)),
                            ("openLineageJobScope", scope),
                        ),
                    ),
                    run,
                )
                self.result(
                    code,
                    scope,
                    run,
                    not assertion.success,
                    _notes(run, assertion),
                    warn_only=_warns(assertion.severity),
                )

    def _unread(
        self, job: JobFold, key: DatasetKey, facets: tuple[AssertedFacet | None, ...]
    ) -> None:
        """Assertions that could not be read (null, one without its ``success``) make no result
        (the facet's others make theirs): each facet that held one is reported, naming them, so
        that the producer can be fixed."""
        for facet in facets:
            if facet is not None and facet.unread:
                where = f"{normalize_namespace(key.namespace)}/{key.name}"
                self.plan.report.gap(
                    GapCode.MALFORMED_FACET,
                    f"job {job.key}: {facet.KEY} of {where}: {', '.join(facet.unread)}: "
                    "no assertion, no result (the facet's other assertions make theirs)",
                )

    def _assertions_on_outputs(self, job: JobFold, run: RunFold) -> None:
        """Assertions sent on an output are not read (seed 003 reads those of an input; the
        spec makes ``dataQualityAssertions`` an input facet), but reported, not lost silently:
        the producer sent results that make no check. An output the run also read with
        assertions is left out, its assertions being read on the input."""
        read = {
            item.key
            for item in run.inputs
            if ASSERTION_KEYS.intersection((*item.facets, *item.input_facets))
        }
        for item in run.outputs:
            if item.key in read:
                continue
            # by key: among output facets the spec's input facet is not read into its model
            sent = sorted(ASSERTION_KEYS.intersection((*item.facets, *item.output_facets)))
            if sent:
                where = f"{normalize_namespace(item.key.namespace)}/{item.key.name}"
                self.plan.report.gap(
                    GapCode.MALFORMED_FACET,
                    f"job {job.key}: {', '.join(sent)} on the output {where}, an input facet: "
                    "no check (send the assertions on the dataset as an input of the run)",
                )

    # -- tests ---------------------------------------------------------------------------------

    def _checked_on_a_dataset(self, job: JobFold, run: RunFold, name: str) -> bool:
        """Whether an assertion of this test made a dataset check: one of the same name, or
        dbt's ``test.<project>.<name>`` of the assertion ``<name>``, sent by the run itself
        (dbt-ol reading dbt's structured logs) or on one of the datasets the run names as its
        inputs (dbt-ol reading ``run_results.json``: each singular test a job of its own, its
        inputs the models it tests, the assertion sent by the model's ``.test`` job)."""
        labels = _assertion_labels(name)
        if any((job.key, run.run_id, label) in self.checked_labels for label in labels):
            return True
        # another job's assertion only for dbt's shape: a test of any producer named like an
        # assertion of another job on a dataset it reads is its own check (a review)
        test = labels[-1]
        return len(labels) > 1 and any(
            (item.key, test) in self.checked_datasets for item in run.inputs
        )

    def _errored_on_a_dataset(self, job: JobFold, run: RunFold, name: str) -> None:
        """A test that errored, whose assertion of the same run made a dataset check (dbt-ol
        sends both, the assertion with the test's severity): its failure is no warning, whatever
        the severity (dbt fails the invocation on an error), which only the test's status says;
        the check too, when this run is its newest."""
        for label in _assertion_labels(name):
            for code in self.checked_labels.get((job.key, run.run_id, label), ()):
                result = self.results.get((code, run.run_id))
                if result is not None and result.failures and result.warn_only:
                    self.results[code, run.run_id] = replace(result, warn_only=False)
                check = self.checks.get(code)
                newest = self.check_times.get(code) == run.last_event_time
                if check is not None and check.warn_only and newest:
                    self.checks[code] = replace(check, warn_only=False)

    def tests(self, job: JobFold, run: RunFold) -> None:
        facet = facet_of(run.run_facets, TestRunFacet)
        if facet is None or not self.definition.process_layer:
            return
        system = self.resolver.job_system(job.key.namespace)
        # the job entity's key as the catalog pass makes it (a job's name is free text)
        entity = EntityKey(
            system=system.name, schema_=job.key.namespace, name=redact_text(job.key.name)
        )
        scope = job_scope(job.key.namespace, job.key.name)
        for test in facet.tests:
            outcome = _TEST_OUTCOMES.get(test.status.strip().lower())
            if self._checked_on_a_dataset(job, run, test.name):
                # dbt-ol sends a singular test both as an assertion on the dataset it tests
                # and in the run's test facet: one check, the dataset's
                self.plan.report.count("testsCheckedOnDatasets")
                if outcome == "error":
                    self._errored_on_a_dataset(job, run, test.name)
                continue
            if outcome is None:
                self.plan.report.gap(
                    GapCode.MALFORMED_FACET,
                    f"job {job.key}: test {test.name!r} has the status {test.status!r}, "
                    "not pass, fail or skip: no result",
                )
                continue
            if outcome == "skip":
                continue  # a skipped test makes neither a check nor a result
            # a test of severity warn warns, but an error is a failure whatever the severity
            # (dbt fails the invocation on it): never a warning
            warns = outcome == "warn" or (outcome != "error" and _warns(test.severity))
            code = shorten(f"ol:{scope}:test:{_free_text(test.name)}", MAX_CODE_LENGTH)
            self.check(
                PlannedCheck(
                    code=code,
                    name=_code(test.name),
                    kind="test",
                    entity=entity,
                    description=_free_text(test.description),
                    warn_only=warns,
                    job=scope,
                    properties=_present(
                        ("openLineageKind", "test"),
                        ("openLineageTestType", test.type),
                        ("openLineageJobScope", scope),
                    ),
                ),
                run,
            )
            self.result(
                code,
                scope,
                run,
                outcome != "pass",
                _notes(run, test),
                warn_only=warns,
            )

    # -- records -------------------------------------------------------------------------------

    def metrics(self, job: JobFold, run: RunFold) -> None:
        when = run.end_time or run.last_event_time
        # A dataset the run reads and writes (a dedupe in place) is measured twice: as read, at
        # the run's start, and as written, at its end; both at the end, one record replaced the
        # other (a record is one per monitor, metric, field and time)
        rewritten = {out.key for out in run.outputs}
        read_at = _read_at(run.start_time, when)
        read: list[_Measured] = []
        for item in run.inputs:
            facets, over = item.facets, item.input_facets
            metrics = layered_facet(
                DataQualityMetricsInputDatasetFacet, facets, over
            ) or layered_facet(DataQualityMetricsDatasetFacet, facets, over)
            stats = layered_facet(InputStatisticsInputDatasetFacet, facets, over)
            scan = layered_facet(IcebergScanReportInputDatasetFacet, facets, over)
            report: tuple[BaseFacet, dict[str, Any]] | None = None
            if scan is not None and scan.scan_metrics:
                report = (scan, scan.scan_metrics)
            measured = read_at if item.key in rewritten else when
            read += self.records_of(job, item.key, run, measured, metrics, stats, "input", report)
        written: list[_Measured] = []
        for out in run.outputs:
            facets, over = out.facets, out.output_facets
            counted = layered_facet(OutputStatisticsOutputDatasetFacet, facets, over)
            metrics = layered_facet(DataQualityMetricsDatasetFacet, facets, over)
            commit = layered_facet(IcebergCommitReportOutputDatasetFacet, facets, over)
            report = None
            if commit is not None and commit.commit_metrics:
                report = (commit, commit.commit_metrics)
            written += self.records_of(job, out.key, run, when, metrics, counted, "output", report)
        for _, record in chain(_before_written(read, written, read_at), written):
            self.records[(record.entity, record.metric, record.field, record.timestamp)] = record

    def records_of(
        self,
        job: JobFold,
        key: DatasetKey,
        run: RunFold,
        when: datetime,
        metrics: DataQualityMetricsDatasetFacet | None,
        stats: BaseFacet | None,
        direction: str,
        report: tuple[BaseFacet, dict[str, Any]] | None = None,
    ) -> list[_Measured]:
        """The records of a dataset's facets, each with the facet it comes from. ``report`` is a
        producer's report of its own beside the statistics (Spark's Iceberg scan and commit
        reports): the facet and its metrics, extra metrics of seed 003."""
        if metrics is None and stats is None and report is None:
            return []
        self._unmeasured(job, key, (metrics, stats, report[0] if report else None))
        entity = self.entity(key)
        if entity is None:
            return []
        scope = job_scope(job.key.namespace, job.key.name)
        case = self.column_case(key)
        values = _metric_values(metrics, stats, direction)
        if report is not None:
            values = chain(values, _report_values(*report, direction))
        found: list[_Measured] = []
        for metric, sent, value, facet in values:
            timestamp = _capture_date(facet) or when
            field = self.spelt(entity, cased_identifier(sent, case)) if sent else sent
            record = PlannedRecord(
                entity=entity,
                metric=metric,
                field=field,
                value=float(value),  # a count is written 3.0, not 3, as validation wrote it
                timestamp=timestamp,
                run_id=run.run_id,
                job=scope,
            )
            found.append((facet, record))
        return found

    def _unmeasured(
        self, job: JobFold, key: DatasetKey, facets: tuple[BaseFacet | None, ...]
    ) -> None:
        """Metrics sent as NaN or Infinity, or with a value they cannot have (a count below 0),
        make no record (the facet's other metrics do): each facet that held one is reported,
        naming them, so that the producer can be fixed."""
        for facet in facets:
            if not isinstance(facet, MeasuredFacet):
                continue
            where = f"{normalize_namespace(key.namespace)}/{key.name}"
            for code, paths in (
                (GapCode.NON_FINITE_METRIC, facet.non_finite),
                (GapCode.INVALID_METRIC, facet.invalid),
            ):
                if paths:
                    self.plan.report.gap(
                        code, f"job {job.key}: {facet.KEY} of {where}: {', '.join(paths)}"
                    )

    # -- collecting ----------------------------------------------------------------------------

    def check(self, check: PlannedCheck, run: RunFold) -> None:
        """A check as its newest run describes it (a severity changed from warn to error makes
        failures failures again); within one run, the first assertion of the code."""
        when = run.last_event_time
        if check.code not in self.checks or when > self.check_times[check.code]:
            self.checks[check.code] = check
            self.check_times[check.code] = when

    def result(
        self, code: str, job: str, run: RunFold, failed: bool, notes: str, *, warn_only: bool
    ) -> None:
        key = (code, run.run_id)
        held = self.results.get(key)
        if held is not None and not failed:
            return  # several assertions on one check in one run: any failure fails it
        if held is not None and held.failures and not held.warn_only and warn_only:
            return  # ... and a failure that is no warning makes it RED
        started = result_start(run.start_time or run.first_event_time, run.run_id)
        finished = run.end_time or run.last_event_time
        self.results[key] = PlannedResult(
            check=code,
            run_id=run.run_id,
            started_at=started,
            # never before its start: a run of under a second moved into its second
            finished_at=max(finished, started) if finished is not None else None,
            failures=1 if failed else 0,
            warn_only=warn_only,
            notes=notes,
            job=job,
        )


_Measured = tuple[BaseFacet, PlannedRecord]
"""A profiling record and the facet that measured it."""


def _millisecond(moment: datetime) -> datetime:
    """A time as Blindata keeps it (``models.Timestamp`` writes milliseconds): two records
    whose times differ by less are one record there."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _before_written(
    read: list[_Measured], written: list[_Measured], read_at: datetime
) -> list[_Measured]:
    """The records of what a run read, none replacing one of what it wrote. A table the run
    reads and rewrites (``INSERT OVERWRITE t SELECT … FROM t``, a dbt incremental model) with
    its metrics on both sides at one time (a producer that stamps both ``captureDate`` with the
    run's event time; or the input's with the run's end, the output's without one) had two
    records of one key, one per monitor, metric, field and time, and kept the one written last:
    the steward lost the row count before the run or the one after. Every record of a facet of
    the input that would share a key with one of the output is measured as read: at the run's
    start (``read_at``) when that is earlier than every record of the output of its entity,
    else the millisecond before the earliest of them. The records of a facet move together (a
    measure's row count and column metrics stay at one time), the output's keep their times,
    and the times depend on the run's events alone: a run sent again makes the same records."""
    if not read or not written:
        return read
    earliest: dict[EntityKey, datetime] = {}
    keys: set[tuple[EntityKey, str, str | None, datetime]] = set()
    for _, record in written:
        moment = _millisecond(record.timestamp)
        keys.add((record.entity, record.metric, record.field, moment))
        if record.entity not in earliest or moment < earliest[record.entity]:
            earliest[record.entity] = moment
    clashing = {
        (id(facet), record.entity)
        for facet, record in read
        if (record.entity, record.metric, record.field, _millisecond(record.timestamp)) in keys
    }
    if not clashing:
        return read
    moved: list[_Measured] = []
    for facet, record in read:
        if (id(facet), record.entity) in clashing:
            first = earliest[record.entity]
            when = read_at if _millisecond(read_at) < first else first - timedelta(milliseconds=1)
            record = replace(record, timestamp=when)
        moved.append((facet, record))
    return moved


def _read_at(started: datetime | None, ended: datetime) -> datetime:
    """When a run measured a dataset it also writes, as read: at its start, before its end. A
    run with no START event (Great Expectations' action and custom emitters send COMPLETE only),
    or one that started in the instant it ended, is given the millisecond before its end (the
    precision Blindata keeps), the same on every snapshot: the measure as read and the measure
    as written are two records, never one replacing the other."""
    if started is not None and started < ended:
        return started
    return ended - timedelta(milliseconds=1)


def result_start(started: datetime, run_id: str) -> datetime:
    """When a result's run started, as Blindata keys the result: ``(check, startedAt)`` is a
    result's identity in the contract, so two runs of one check that start in the same
    millisecond (two jobs on one schedule asserting the same) kept one result, the other
    overwritten (a probe of quality). A start its producer stamped in whole seconds, where
    that is likely, is moved into its second by 1 to 999 ms, the same for a run every time (from
    its run id); a start with a fraction of a second is its own."""
    if started.microsecond:
        return started
    return started + timedelta(milliseconds=1 + zlib.crc32(run_id.encode()) % 999)


_TEST_OUTCOMES: dict[str, str] = {
    "pass": "pass",
    "passed": "pass",
    "success": "pass",
    "fail": "fail",
    "failed": "fail",
    "failure": "fail",
    # dbt's statuses: a test that found issues under severity warn, a test that could not run
    "warn": "warn",
    "error": "error",
    "skip": "skip",
    "skipped": "skip",
}
"""What a test's status says: the spec names pass, fail and skip; dbt-based producers pass its
own run statuses through (``warn``: issues found under severity warn; ``error``: the test did
not run to the end, which a steward must see as a failure, not as a skip, and never as a warning:
dbt fails the invocation on it whatever the test's severity)."""


def _warns(severity: str | None) -> bool:
    """Whether a failure of this severity is a warning (YELLOW), not a failure (RED): ``warn``
    (seed 003), and common.sql's ``info``, "informational, never causes task failure" (the
    branch decision of ``SQLBranchOperator``)."""
    return (severity or "").strip().lower() in ("warn", "warning", "info")


def _assertion_labels(name: str) -> list[str]:
    """The assertion names a test of this name is sent as: its own, and for dbt's
    ``test.<project>.<name>`` the last part too."""
    kind, _, rest = name.partition(".")
    project, _, test = rest.partition(".")
    return [name, test] if kind == "test" and project and test else [name]


def _present(*pairs: tuple[str, str | None]) -> tuple[tuple[str, str], ...]:
    """The properties that have a value: an empty one is never sent."""
    return tuple((name, value) for name, value in pairs if value)


def _assertion_code(where: str, label: str, column: str | None) -> str:
    """An assertion's check code: ``ol:<dataset>:<assertion>[:<column>]``. The dataset is
    named as its entity is (``redact_name``: a key's ``token=eth`` partition is a name), the
    assertion and the column are a producer's free text, SQL perhaps (``_free_text``)."""
    text = f"ol:{redact_name(where)}:{_free_text(label)}"
    return shorten(text + (f":{_free_text(column)}" if column else ""), MAX_CODE_LENGTH)


def _code(text: str) -> str:
    """A check's code or name: a job's, a dataset's or a test's name in it is free text, and
    an assertion may be SQL (``custom_sql: CREATE USER u PASSWORD '…'``, a test named after its
    statement): read as ``_free_text`` reads it."""
    return shorten(_free_text(text) or "", MAX_CODE_LENGTH)


def _free_text(text: str | None) -> str | None:
    """A producer's text (a test's description, expected and actual values, its SQL) as it may
    reach the catalog: without the password of a URL, a ``password=…`` setting, or a secret
    literal of SQL (``redaction``)."""
    return None if text is None else redact_prose(text)


def _notes(run: RunFold, item: Any) -> str:
    """The run id, then the expected and actual values and the content, when sent."""
    parts = [run_note(run.run_id)]
    for label, attribute in (
        ("Expected", "expected"),
        ("Actual", "actual"),
        ("Content", "content"),
    ):
        value = getattr(item, attribute, None)
        if value not in (None, ""):
            parts.append(f"{label}: {_free_text(str(value))}.")
    return " ".join(parts)


def run_note(run_id: str) -> str:
    """How a result's notes begin: its run, which tells a run's result among its check's."""
    return f"OpenLineage run {run_id}."


def _number(value: Any) -> float | None:
    """A metric's value as a record's number (``finite_number``; a date as its timestamp); None
    for what is not one."""
    if isinstance(value, datetime):
        return value.timestamp()
    return finite_number(value)


def _metric_values(
    metrics: DataQualityMetricsDatasetFacet | None, stats: BaseFacet | None, direction: str
) -> Iterator[tuple[str, str | None, float, BaseFacet]]:
    if metrics is not None:
        for code, attribute in (
            ("rowCount", "row_count"),
            ("bytes", "bytes"),
            ("fileCount", "file_count"),
            ("lastUpdated", "last_updated"),
        ):
            value = _number(getattr(metrics, attribute))
            if value is not None:
                yield code, None, value, metrics
        for column, values in sorted(metrics.column_metrics.items()):
            for code, attribute in (
                ("nullCount", "null_count"),
                ("distinctCount", "distinct_count"),
                ("sum", "sum"),
                ("count", "count"),
                ("min", "min"),
                ("max", "max"),
            ):
                value = _number(getattr(values, attribute))
                if value is not None:
                    yield code, column, value, metrics
            for quantile, value in sorted((values.quantiles or {}).items()):
                number = _number(value)
                if number is not None:
                    yield f"quantile_{quantile}", column, number, metrics
    if stats is not None:
        rows, size, files, extra = _STATISTICS[direction]
        for code, attribute in ((rows, "row_count"), (size, "size"), (files, "file_count")):
            value = _number(getattr(stats, attribute, None))
            if value is not None:
                yield code, None, value, stats
        for key, value in sorted((stats.model_extra or {}).items()):
            number = _number(value)
            if number is not None and key != "captureDate":
                yield f"{extra}{key}", None, number, stats


def _report_values(
    facet: BaseFacet, metrics: dict[str, Any], direction: str
) -> Iterator[tuple[str, str | None, float, BaseFacet]]:
    """The numeric metrics of a producer's report as extra metrics (``inputExtra_<metric>``)."""
    extra = _STATISTICS[direction][3]
    for key, value in sorted(metrics.items()):
        number = _number(value)
        if number is not None:
            yield f"{extra}{key}", None, number, facet


def _capture_date(facet: BaseFacet) -> datetime | None:
    """The facet's ``captureDate``, read as an event time is (``Timestamp``: a naive time is UTC,
    Java's zone suffix ``+01:00[Europe/Paris]`` is read by its offset); ``None`` when it has
    none, or one that is no date-time (a number, a text no date-time reads)."""
    value = (facet.model_extra or {}).get("captureDate")
    if not isinstance(value, str):
        return None
    try:
        return _TIMESTAMP.validate_python(value)
    except ValueError:
        pass
    try:  # what Python reads and pydantic does not (the basic format 20261129T090000Z)
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


_TIMESTAMP: TypeAdapter[datetime] = TypeAdapter(Timestamp)


def _only(facets: dict[str, BaseFacet], keys: frozenset[str]) -> dict[str, BaseFacet]:
    return {key: facet for key, facet in facets.items() if key in keys}


def quality_retainer(definition: JobDefinition) -> RunRetainer:
    """What a snapshot keeps of a run it would otherwise drop: the facets its results and
    records come from, and nothing of a run that has none (see ``FoldBuilder``)."""
    enabled = definition.quality.enabled
    metrics = definition.quality.metrics_enabled

    def retain(run: RunFold) -> RunFold | None:
        if not enabled or run.state not in _RESULT_STATES:
            return None
        keys = ASSERTION_KEYS | (METRIC_KEYS if metrics else frozenset())
        # the test facet, and the airflow facet that says which instance of its task the run
        # is (``fold.latest_completed_group``: an earlier try is not one of its instances)
        tests = _only(run.run_facets, frozenset({TestRunFacet.KEY}))
        airflow = facet_of(run.run_facets, AirflowRunFacet)
        held = [
            *(key for item in run.inputs for key in (*item.facets, *item.input_facets)),
            *(key for item in run.outputs for key in (*item.facets, *item.output_facets)),
        ]
        if not tests and keys.isdisjoint(held):
            return None  # the usual case: a run with no quality facet, dropped at once
        inputs = [
            InputFold(
                key=item.key,
                facets=_only(item.facets, keys),
                input_facets=_only(item.input_facets, keys),
            )
            for item in run.inputs
        ]
        outputs = [
            OutputFold(
                key=item.key,
                facets=_only(item.facets, keys),
                output_facets=_only(item.output_facets, keys),
            )
            for item in run.outputs
        ]
        if not tests:  # a test run's inputs tell which datasets it tests
            inputs = [item for item in inputs if item.facets or item.input_facets]
        outputs = [item for item in outputs if item.facets or item.output_facets]
        if not (tests or inputs or outputs):
            return None
        kept = dict(tests)
        parent = facet_of(run.run_facets, ParentRunFacet)
        if airflow is not None:  # its map index only: the rest is the whole DAG's description
            if parent is not None:  # and its DAG run: which instance of its task it is
                kept[ParentRunFacet.KEY] = parent
            index = airflow.task_instance.get("map_index")
            kept[AirflowRunFacet.KEY] = airflow.model_copy(
                update={"dag": {}, "dag_run": {}, "task": {}, "task_instance": {"map_index": index}}
            )
        return replace(run, run_facets=kept, job_facets={}, inputs=inputs, outputs=outputs)

    return retain


def map_quality(
    fold: Fold, definition: JobDefinition, resolver: SystemResolver, plan: CatalogPlan
) -> None:
    """Checks, results and records; nothing when ``quality.enabled`` is false."""
    if not definition.quality.enabled:
        return
    quality = _Quality(fold, definition, resolver, plan)
    finished = [
        (job, run) for job in fold.jobs for run in job.runs if run.state in _RESULT_STATES
    ]  # aborted and unfinished runs publish nothing
    for job, run in finished:  # first every assertion: a test is told by another job's
        quality.assertions(job, run)
    for job, run in finished:
        quality.tests(job, run)
        if run.state == EventType.COMPLETE and definition.quality.metrics_enabled:
            quality.metrics(job, run)
    plan.quality = QualityPlan(
        suite_code=definition.quality_suite_code,
        jobs=sorted({job_scope(job.key.namespace, job.key.name) for job in fold.jobs}),
        checks=[quality.checks[code] for code in sorted(quality.checks)],
        results=[quality.results[key] for key in sorted(quality.results)],
        records=sorted(
            quality.records.values(),
            key=lambda r: (str(r.entity), r.metric, r.field or "", r.timestamp),
        ),
        dropped=sorted(quality.dropped - quality.checks.keys()),
    )
    report = plan.report
    report.count("qualityChecks", len(plan.quality.checks))
    report.count("qualityResults", len(plan.quality.results))
    report.count("profilingRecords", len(plan.quality.records))
