"""Quality of seed 003 in Blindata: the suite, its checks, one result per check and run, records.

Idempotence rests on a **ledger** kept in the suite itself: one disabled check per job, coded
``ol-ledger:<hash of the job scope>``, whose additional properties list the runs already
published (``publishedRun``) and the runs whose records were uploaded (``recordedRun``). A run
enters the ledger only when all its results (or records) were accepted, so a partial upload is
retried on the next sync, and a run already in it is never sent again. Until then, each of its
results that was accepted is listed (``publishedResult``: the run id and a digest of the check
code), so that one result is published once per check and run: a retry sends only what is
missing, and a result whose check cannot exist yet (its dataset is not catalogued) waits for it
without holding back the others. The ledger of a job keeps only the runs the plan still sees, so
it does not grow past the store's retention; the ledger of a job the plan does not describe is
kept as it is (an empty store proves nothing; a job that comes back brings published runs).

A published run is "done" for the checks it was published for, not for good: a later event of
the run (a late ``RUNNING`` event, a second producer's, a dataset catalogued since) may assert
something new. So each published run also has one digest of the set of its checks
(``publishedChecks``: ``<run id> <16 hex digits>``, one short value per run however many checks
it has). When the plan gives a published run another set (and not just the same set but the
checks that cannot have a result now), Blindata is asked which results of the run's checks it
holds (``_Published``: one listing per check and snapshot), only the missing ones are posted,
and the new set is recorded. A listing that fails posts nothing of the run (never a result
twice) and is tried again by the next snapshot. A run of an older ledger, without a digest, is
taken as wholly published for the checks the plan gives it, as the older release took it, and
recorded with their digest: no listing of every check at the upgrade. ``publishedRun`` keeps
bare run ids, so an older release rolled back to reads the ledger as it wrote it, and keeps
the property it does not know.

Checks are upserted by code through ``import-objects``; a code that already belongs to a check of
another suite is never overwritten (looked up before the import, it is reported as a conflict
and never sent; so is a ledger code another suite holds). When the
plan no longer describes a job, its checks are disabled — never deleted, so their history stays.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any

from airflow_blindata.blindata.models import (
    AdditionalProperty,
    MetricRecord,
    ProfilingMonitor,
    QualityCheck,
    QualityImport,
    QualityImportResult,
    QualityResult,
    QualitySuite,
    Ref,
    ScoreStrategy,
)
from airflow_blindata.blindata.resources import QualityChecks
from airflow_blindata.mapper.plan import PlannedCheck, PlannedRecord, PlannedResult, QualityPlan
from airflow_blindata.mapper.quality import run_note
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.scopes import clean_scope
from airflow_blindata.mapper.systems import OWNER_PROPERTY
from airflow_blindata.sync.context import LIST_PAGE_SIZE, SyncContext
from airflow_blindata.sync.entities import CatalogIndex
from airflow_blindata.sync.fields import read_back_fields

__all__ = ["LEDGER_PREFIX", "MONITOR_NAME", "PUBLISHED_CHECKS", "sync_quality"]

LEDGER_PREFIX = "ol-ledger:"
MONITOR_NAME = "OpenLineage"
PUBLISHED_RUN = "publishedRun"
RECORDED_RUN = "recordedRun"
PUBLISHED_RESULT = "publishedResult"
"""One result of a run not yet wholly published: ``<run id> <digest of the check code>``."""
PUBLISHED_CHECKS = "publishedChecks"
"""The checks a run of ``publishedRun`` was published for: ``<run id> <digest of the set of their
codes>``, one value per run whatever its checks (``checks_digest``)."""
LEDGER_KINDS = (PUBLISHED_RUN, RECORDED_RUN, PUBLISHED_RESULT, PUBLISHED_CHECKS)
LEDGER_NONE = "-"
"""Sent for a kind whose last value goes: an upsert replaces the values of the names it sends and
keeps the others, so a name must be sent to be emptied. Never a run id; ignored when read."""
JOB_SCOPE = "openLineageJobScope"
LEDGER_DESCRIPTION = (
    "Runs of this job already published by airflow-blindata. Do not enable or delete."
)
SUCCESS_THRESHOLD = 100.0
"""A check passes at 100 %: 0 failures out of 1."""


def ledger_code(job: str) -> str:
    return LEDGER_PREFIX + hashlib.sha256(job.encode()).hexdigest()[:32]


def result_key(run_id: str, check: str) -> str:
    """A (check, run) pair in the ledger: check codes run to 255 characters, so a digest."""
    return f"{run_id} {hashlib.sha256(check.encode()).hexdigest()[:16]}"


def checks_digest(checks: Iterable[str]) -> str:
    """The set of checks a run was published for, in 16 characters: a run with another set (a
    check more, from a late event) is told apart without listing its checks in the ledger."""
    return hashlib.sha256("\n".join(sorted(set(checks))).encode()).hexdigest()[:16]


class _Ledger:
    """The runs already published, per job, as read from and written back to the suite."""

    def __init__(self, checks: Iterable[QualityCheck]) -> None:
        self.runs: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        self.moved: dict[str, str] = {}
        """Ledger checks written for a job's scope with credentials in it, by code: their runs
        are the clean scope's now (issue 42), and the check is written again without them."""
        for check in checks:
            if not check.code.startswith(LEDGER_PREFIX):
                continue
            written = next(
                (p.value for p in check.additional_properties or () if p.name == JOB_SCOPE), None
            )
            # a job whose scope held a password has moved to its clean scope: its ledger follows,
            # so that no run it published is published again there
            job = clean_scope(written) if written else written
            if job and job != written:
                self.moved[check.code] = job
            for prop in check.additional_properties or ():
                if job and prop.name in LEDGER_KINDS and prop.value not in (LEDGER_NONE, None):
                    self.runs[job][prop.name].add(prop.value)
        self.checks: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        """The ``publishedChecks`` values of each job, by run."""
        for job, kinds in self.runs.items():
            for value in kinds[PUBLISHED_CHECKS]:
                self.checks[job][value.rpartition(" ")[0]].add(value)

    def has(self, job: str, kind: str, run_id: str) -> bool:
        return run_id in self.runs[job][kind]

    def checks_of(self, owners: Iterable[str], run_id: str) -> set[str]:
        """The ``publishedChecks`` values of a published run; none when the release that
        published it did not record them."""
        return next((found for owner in owners if (found := self.checks[owner][run_id])), set())

    def rows(
        self, suite: Ref, seen: dict[str, dict[str, set[str]]], described: set[str]
    ) -> list[QualityCheck]:
        """Ledger checks holding the runs still in the plan that are published. The ledger of a
        job the plan does not describe is left as it is: an empty store proves nothing, and a
        job that comes back brings runs already published."""
        rows = []
        jobs = sorted((set(self.runs) & described) | set(seen))
        for job in jobs:
            keep = {
                kind: sorted(self.runs[job][kind] & seen.get(job, {}).get(kind, set()))
                for kind in LEDGER_KINDS
            }
            properties = [AdditionalProperty(name=JOB_SCOPE, value=job)]
            properties += [
                AdditionalProperty(name=kind, value=run)
                for kind, runs in keep.items()
                for run in runs or ([LEDGER_NONE] if self.runs[job][kind] else [])
            ]
            rows.append(
                QualityCheck(
                    code=ledger_code(job),
                    name=f"ol-ledger: {job}"[:255],
                    description=LEDGER_DESCRIPTION,
                    quality_suite=suite,
                    enabled=False,
                    manual=False,
                    additional_properties=properties,
                )
            )
        # the ledgers of moved jobs, emptied (their runs are in the clean scope's, written
        # above) and named without the password; ledger checks are never deleted, as no check
        # is. A moved job whose clean ledger is not written now keeps its old one as it is.
        rows += [
            QualityCheck(
                code=code,
                name=f"ol-ledger: {job}"[:255],
                description=LEDGER_DESCRIPTION,
                quality_suite=suite,
                enabled=False,
                manual=False,
                additional_properties=[
                    AdditionalProperty(name=JOB_SCOPE, value=job),
                    *(AdditionalProperty(name=kind, value=LEDGER_NONE) for kind in LEDGER_KINDS),
                ],
            )
            for code, job in sorted(self.moved.items())
            if job in jobs
        ]
        return rows


def sync_quality(ctx: SyncContext, quality: QualityPlan | None, index: CatalogIndex) -> None:
    """Suite, checks, results and records of the plan; every refusal is in the report."""
    if quality is None:
        return
    api = ctx.client.api
    suite = _suite(ctx, quality.suite_code)
    if suite is None or suite.uuid is None:
        return
    suite_ref = Ref(uuid=suite.uuid)
    existing = ctx.attempt(
        "quality check",
        quality.suite_code,
        lambda: list(api.quality_checks.list(page_size=LIST_PAGE_SIZE, suiteUuid=suite.uuid)),
    )
    if existing is None:
        return
    ledger = _Ledger(existing)
    uuids, held_back = _checks(ctx, quality, index, suite, existing)
    seen: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    colours = _Colours(ctx, quality, index, suite)
    before = {check.code for check in existing}
    _results(ctx, quality, uuids, held_back, ledger, seen, colours, before)
    colours.restore()
    if quality.records:
        _records(ctx, quality.records, index, ledger, seen)
    held = {check.code for check in existing}
    # a ledger code another suite holds (two definitions consume one job's events) is a
    # conflict, as a check's is: reported, never sent, and not a failure of this snapshot
    rows = [
        row
        # a light plan keeps another job's check for its results' colour, not that job's runs:
        # its ledger, read as described with no run, was written empty (a review)
        for row in ledger.rows(
            suite_ref, seen, set(quality.jobs) if ctx.light else _described(quality)
        )
        if row.code in held or not _of_another_suite(ctx, suite, row.code)
    ]
    if rows:
        answer = ctx.attempt(
            "quality ledger",
            quality.suite_code,
            lambda: api.quality_suites.import_objects(
                QualityImport(quality_suite=suite, quality_checks=rows)
            ),
        )
        if answer is not None:
            _ledger_discards(ctx, quality.suite_code, rows, answer)
    if not ctx.light:  # a light plan leaves out the jobs with nothing new: not gone
        _disable_removed(ctx, quality, existing)


def _ledger_discards(
    ctx: SyncContext, suite_code: str, rows: list[QualityCheck], answer: QualityImportResult
) -> None:
    """A ledger the import discarded is a failure: its runs would be published again."""
    named = 0
    for error in answer.errors:
        if 0 <= error.index < len(rows):
            named += 1
            ctx.report.fail("quality ledger", rows[error.index].code, error.message)
    if answer.row_discarded > named:
        ctx.report.fail(
            "quality ledger",
            suite_code,
            f"{answer.row_discarded - named} of {len(rows)} ledger checks discarded by the import",
        )
    counted = answer.row_created + answer.row_updated + max(answer.row_discarded, named)
    if answer.counted and counted < len(rows):
        ctx.report.count("rowsUnaccounted", len(rows) - counted)
        ctx.report.fail("quality ledger", suite_code, _unaccounted(answer, len(rows)))


def _unaccounted(answer: QualityImportResult, sent: int) -> str:
    if not answer.counted:
        return f"the import of {sent} checks gave no counts"
    counted = answer.row_created + answer.row_updated + answer.row_discarded
    return (
        f"the import accounted for {counted} of the {sent} checks sent (created "
        f"{answer.row_created}, updated {answer.row_updated}, discarded {answer.row_discarded})"
    )


def _suite(ctx: SyncContext, code: str) -> QualitySuite | None:
    """The suite with ``code``: searched, else created. What ``search`` matches is not in the
    contract: when the create fails (409: the code is taken; or its answer was lost, and it may
    have landed), every suite is read to find it."""
    api = ctx.client.api.quality_suites

    def find(**filters: Any) -> QualitySuite | None:
        return next((s for s in api.list(**filters) if s.code == code), None)

    found = ctx.attempt("quality suite", code, partial(find, search=code))
    if found is not None:
        return found
    wanted = QualitySuite(
        code=code,
        name=f"OpenLineage {ctx.definition.uuid}",
        description="Checks of OpenLineage assertions and tests, managed by airflow-blindata.",
        published=True,
    )
    return ctx.create_or_find(
        "quality suite", code, partial(api.create, wanted), lambda: find(search=code) or find()
    )


def _check_row(check: PlannedCheck, suite: QualitySuite, entity: str, owner: str) -> QualityCheck:
    """``owner`` (the definition's uuid, ``openLineageOwner``) tells a definition's checks from
    those of another definition that shares its suite code."""
    return QualityCheck(
        code=check.code,
        name=check.name,
        description=check.description,
        quality_suite=Ref(uuid=suite.uuid or ""),
        physical_entities=[Ref(uuid=entity)],
        enabled=True,
        manual=False,
        score_strategy=ScoreStrategy.PERCENTAGE,
        success_threshold=SUCCESS_THRESHOLD,
        # warn-only: any failure scores 0, which the warning threshold 0 makes YELLOW, not RED
        warning_threshold=0.0 if check.warn_only else SUCCESS_THRESHOLD,
        additional_properties=[
            *(AdditionalProperty(name=n, value=v) for n, v in check.properties),
            AdditionalProperty(name=OWNER_PROPERTY, value=owner),
        ],
    )


class _Colours:
    """The severity each check of the plan has in Blindata while results are posted.

    Blindata colours a result when it is posted, by its check's thresholds, and the checks are
    imported with the severity of their newest run. A result of a run of another severity (a
    batch of runs synced together: an error, then a warning) is posted after its check is set to
    that severity, and the check is set back to its newest run's once every result is in."""

    def __init__(
        self, ctx: SyncContext, quality: QualityPlan, index: CatalogIndex, suite: QualitySuite
    ) -> None:
        self.ctx, self.index, self.suite = ctx, index, suite
        self.planned = {check.code: check for check in quality.checks}
        self.now = {code: check.warn_only for code, check in self.planned.items()}

    def set_for(self, result: PlannedResult) -> bool:
        """Whether the check of ``result`` has its run's severity (set now if it had not)."""
        check = self.planned.get(result.check)
        if check is None or not result.failures or self.now[result.check] == result.warn_only:
            return True  # a pass is GREEN under any threshold
        if self.index.entities.get(check.entity) is None:
            return True  # no row to set it with (the check is from an earlier snapshot)
        return self._set(replace(check, warn_only=result.warn_only))

    def restore(self) -> None:
        for code, check in self.planned.items():
            if self.now[code] != check.warn_only and not self._set(check):
                self.ctx.report.fail(
                    "quality check", code, "its severity could not be set back to its newest run's"
                )

    def _set(self, check: PlannedCheck) -> bool:
        entity = self.index.entities.get(check.entity)
        if entity is None:
            return False
        row = _check_row(check, self.suite, entity, self.ctx.definition.uuid)
        body = QualityImport(quality_suite=self.suite, quality_checks=[row])
        answer = self.ctx.attempt(
            "quality check",
            check.code,
            partial(self.ctx.client.api.quality_suites.import_objects, body),
        )
        if answer is None or answer.errors or answer.row_discarded:
            return False
        self.ctx.report.count("qualityChecksRecoloured")
        self.now[check.code] = check.warn_only
        return True


def _checks(
    ctx: SyncContext,
    quality: QualityPlan,
    index: CatalogIndex,
    suite: QualitySuite,
    existing: list[QualityCheck],
) -> tuple[dict[str, str], set[str]]:
    """Upsert the checks by code: the uuids of this suite's checks, and the codes whose results
    are held back: those of another suite (conflicts) and those the import refused (a check
    that exists keeps its former thresholds, which would colour the result wrongly: a review).

    A code this suite does not hold yet is looked up first: the contract does not say that an
    import refuses a code of another suite (its code is unique in the tenant, and the import
    upserts by code), so such a check is never sent, whatever the import would do with it."""
    rows: list[QualityCheck] = []
    conflicts: set[str] = set()
    rejected: set[str] = set()  # named by the import's errors: reported once, there
    held = {check.code for check in existing}
    for check in quality.checks:
        entity = index.entities.get(check.entity)
        if entity is None:
            refused = str(check.entity) in index.refused
            note = " (its entity was refused by Blindata this run, see the failures: sent again"
            ctx.report.gap(
                GapCode.TARGET_NOT_CATALOGUED,
                f"check {check.code}" + (f"{note} next run)" if refused else ""),
            )
            continue
        if check.code not in held and _of_another_suite(ctx, suite, check.code):
            conflicts.add(check.code)
            continue
        rows.append(_check_row(check, suite, entity, ctx.definition.uuid))
    answer = None
    if rows:
        body = QualityImport(quality_suite=suite, quality_checks=rows)
        answer = ctx.attempt(
            "quality check", suite.code, partial(ctx.client.api.quality_suites.import_objects, body)
        )
        if answer is not None:
            ctx.report.count("qualityChecksCreated", answer.row_created)
            ctx.report.count("qualityChecksRefreshed", answer.row_updated)
            for error in answer.errors:
                if not 0 <= error.index < len(rows):
                    continue  # found below among the checks not listed afterwards
                code = rows[error.index].code
                rejected.add(code)
                # a row the import refused for its own reason (a value Blindata validates) is
                # a failure that quotes it, tried again next run; a conflict only when the code
                # is another suite's (a probe: a refused threshold was called a conflict)
                conflicts.add(code)
                if not _of_another_suite(ctx, suite, code):
                    reason = f"refused by the import of its suite: {error.message}"
                    ctx.report.fail("quality check", code, reason)
    listed = ctx.attempt(
        "quality check",
        suite.code,
        lambda: list(
            ctx.client.api.quality_checks.list(page_size=LIST_PAGE_SIZE, suiteUuid=suite.uuid)
        ),
    )
    uuids = {c.code: c.uuid for c in listed or existing if c.uuid}
    if answer is None or listed is None:
        return uuids, conflicts
    missing = [row.code for row in rows if row.code not in uuids and row.code not in rejected]
    named = sum(1 for error in answer.errors if 0 <= error.index < len(rows))
    counted = answer.row_created + answer.row_updated + max(answer.row_discarded, named)
    if answer.counted and counted < len(rows):
        ctx.report.count("rowsUnaccounted", len(rows) - counted)
    if answer.row_discarded:
        conflicts.update(_discarded(ctx, suite, missing))
    else:
        # a check sent and not listed afterwards was not written, whatever the counts said
        # (its results would wait for it forever): a failure, tried again by the next snapshot
        for code in missing:
            reason = f"{_unaccounted(answer, len(rows))}; not listed in its suite afterwards"
            ctx.report.fail("quality check", code, reason)
    return uuids, conflicts


def _check_by_code(api: QualityChecks, code: str) -> QualityCheck | None:
    return next((check for check in api.list(code=code) if check.code == code), None)


def _of_another_suite(ctx: SyncContext, suite: QualitySuite, code: str) -> bool:
    """Whether ``code`` belongs to a check of another suite (then reported as a conflict). A
    look-up that fails decides nothing: the import is left to refuse or take the code."""
    found = ctx.attempt(
        "quality check", code, partial(_check_by_code, ctx.client.api.quality_checks, code)
    )
    owner = found.quality_suite.uuid if found and found.quality_suite else None
    if found is None or owner == suite.uuid:
        return False
    if code.startswith(LEDGER_PREFIX):
        # the job's ledger of published runs, which no one is to delete (a probe of what the
        # admin sees: the gap's hint invited it): another definition's suite records this job
        ctx.report.gap(
            GapCode.QUALITY_CODE_CONFLICT,
            f"{code}: the ledger of this job's published runs belongs to suite {owner}: another "
            "definition's that consumes the same job (give both one quality.suiteCode), or this "
            "one's before its quality.suiteCode changed (give it back); do not delete the ledger",
        )
        return True
    ctx.report.gap(GapCode.QUALITY_CODE_CONFLICT, f"{code}: belongs to a check of suite {owner}")
    return True


def _discarded(ctx: SyncContext, suite: QualitySuite, codes: list[str]) -> set[str]:
    """Of the checks an import discarded without saying which (the contract's answer has no
    per-row errors), the codes that belong to a check of another suite: a conflict, reported as
    such. Any other discarded check is a failure."""
    conflicts: set[str] = set()
    for code in codes:
        if _of_another_suite(ctx, suite, code):
            conflicts.add(code)
        else:
            ctx.report.fail("quality check", code, "discarded by the import of its suite")
    return conflicts


def _results(
    ctx: SyncContext,
    quality: QualityPlan,
    uuids: dict[str, str],
    conflicts: set[str],
    ledger: _Ledger,
    seen: dict[str, dict[str, set[str]]],
    colours: _Colours,
    before: set[str],
) -> None:
    """One result per check and run: a run enters the ledger once all its results are in,
    with the digest of its checks; until then the results already accepted are listed one by
    one, and never sent again. A run already published whose checks changed since (a late
    event) has the results Blindata does not hold posted (``_Published``). Each is posted while
    its check has its run's severity (``_Colours``). ``before``: the codes of the suite's checks
    before this snapshot; a check made since holds no result."""
    job_of = {check.code: check.job for check in quality.checks}
    # oldest first: the contract does not say whether a check's last result is the latest
    # started or the latest posted, and run ids (a producer's may be random) say neither
    posting = sorted(quality.results, key=lambda r: (r.started_at, r.check, r.run_id))
    runs: dict[tuple[str, str], list[PlannedResult]] = defaultdict(list)
    for result in posting:
        runs[(result.job, result.run_id)].append(result)
    # before results named their job, a run was ledgered under the job of its check
    owners = {
        run: (run[0], *(job_of.get(r.check, run[0]) for r in results))
        for run, results in runs.items()
    }
    known = _Published(ctx, ledger, uuids, conflicts, before).settle(
        {
            run: (results, owners[run])
            for run, results in runs.items()
            if any(ledger.has(owner, PUBLISHED_RUN, run[1]) for owner in owners[run])
        }
    )
    complete: dict[tuple[str, str], bool] = {}
    accepted: dict[tuple[str, str], set[str]] = defaultdict(set)
    posted: dict[tuple[str, str], set[str]] = defaultdict(set)
    for result in posting:
        job = result.job
        run = (job, result.run_id)
        complete.setdefault(run, True)
        pair = result_key(result.run_id, result.check)
        if run in known:
            held = known[run]
            if held is None or result.check in held:
                ctx.report.count("qualityResultsAlreadyPublished")
                continue
        elif ledger.has(job, PUBLISHED_RESULT, pair):
            ctx.report.count("qualityResultsAlreadyPublished")
            accepted[run].add(pair)
            continue
        if result.check in conflicts:
            # not ours to publish (the gap says why), or refused by the import (the failure
            # says why), nor accepted: the run stays out of the ledger (seed 003), so its
            # result goes out once the code is free again, or the check accepted
            complete[run] = False
            continue
        uuid = uuids.get(result.check)
        if uuid is None:
            # no check yet (its dataset is not catalogued: the gap says so): this result waits
            # for it, and the results of the run's other checks are kept as published
            complete[run] = False
            continue
        if not colours.set_for(result):
            complete[run] = False  # coloured by another run's severity: tried again next time
            continue
        body = QualityResult(
            quality_check=Ref(uuid=uuid),
            metric=result.failures,
            total_elements=result.total,
            started_at=result.started_at,
            finished_at=result.finished_at,
            notes=result.notes,
        )
        if (
            ctx.attempt(
                "quality result",
                f"{result.check} {result.run_id}",
                partial(ctx.client.api.quality_results.create, body),
            )
            is None
        ):
            complete[run] = False
        else:
            ctx.report.count("qualityResultsPublished")
            accepted[run].add(pair)
            posted[run].add(result.check)
    for (job, run_id), ok in complete.items():
        run = (job, run_id)
        entries: dict[str, set[str]]
        if run in known:
            # a published run stays so: the checks it holds are recorded, and a check it lacks
            # (its post failed, or it waits for its dataset) makes the next snapshot look again
            held = known[run]
            entries = {
                PUBLISHED_RUN: {run_id},
                PUBLISHED_CHECKS: ledger.checks_of(owners[run], run_id)
                if held is None
                else {f"{run_id} {checks_digest(held | posted[run])}"},
            }
        elif ok:
            checks = {r.check for r in runs[run]}
            entries = {
                PUBLISHED_RUN: {run_id},
                PUBLISHED_CHECKS: {f"{run_id} {checks_digest(checks)}"},
            }
        else:
            entries = {PUBLISHED_RESULT: accepted[run]}
        for kind, values in entries.items():
            seen[job][kind].update(values)
            ledger.runs[job][kind].update(values)


class _Published:
    """Which checks of the runs already published Blindata holds their result of.

    The ledger records one digest of the set of checks a run was published for: while the plan
    gives the run the same set, or the same set but the checks that cannot have a result now
    (not catalogued, or of another suite), all its results are in. Another set (a late event of
    the run asserts something new; a dataset catalogued since) or no digest (the release that
    published it did not record one: taken as wholly published, as that release took it) is
    settled by asking Blindata for the results of the run's checks, once per check and snapshot,
    so that a result is never posted twice.
    """

    def __init__(
        self,
        ctx: SyncContext,
        ledger: _Ledger,
        uuids: dict[str, str],
        conflicts: set[str],
        before: set[str],
    ) -> None:
        self.ctx, self.ledger, self.uuids, self.conflicts = ctx, ledger, uuids, conflicts
        self.before = before
        """The codes of the suite's checks before this snapshot: a check made since holds no
        result, so none is asked about, and a run of an older ledger is published for these."""

    def settle(
        self, runs: dict[tuple[str, str], tuple[list[PlannedResult], tuple[str, ...]]]
    ) -> dict[tuple[str, str], set[str] | None]:
        """For each published run, the checks whose result Blindata holds; ``None`` when that
        is not known (a listing failed, the snapshot reports it): nothing of the run is posted
        then, and the next snapshot asks again."""
        known: dict[tuple[str, str], set[str] | None] = {}
        asked: set[tuple[str, str]] = set()
        for run, (results, owners) in runs.items():
            codes = {result.check for result in results}
            recorded = {value.rpartition(" ")[2] for value in self.ledger.checks_of(owners, run[1])}
            waiting = {code for code in codes if code in self.conflicts or code not in self.uuids}
            if not recorded:
                # published by a release that recorded no digest: wholly published, as that
                # release took it. Asking Blindata would list the results of every check once
                # (thousands of requests at the upgrade), and a result it lists otherwise than
                # it was posted (its notes, its start) would be posted again. A check made by
                # this snapshot holds no result (a facet that release could not read: a review)
                known[run] = codes & self.before
            elif checks_digest(codes) in recorded:
                known[run] = codes
            elif checks_digest(codes - waiting) in recorded:
                known[run] = codes - waiting  # the others wait for their check
            else:
                asked.add(run)
        wanted: dict[str, list[PlannedResult]] = defaultdict(list)
        for run in asked:
            for result in runs[run][0]:
                uuid = self.uuids.get(result.check)
                if uuid is not None and result.check in self.before - self.conflicts:
                    wanted[uuid].append(result)  # else no check of this suite before, no result
        found: dict[tuple[str, str], set[str]] = {run: set() for run in asked}
        failed: set[tuple[str, str]] = set()
        for uuid, results in wanted.items():
            holds = self._holding(uuid, results)
            if holds is None:
                failed |= {(r.job, r.run_id) for r in results}
                continue
            for result in holds:
                found[(result.job, result.run_id)].add(result.check)
        for run, checks in found.items():
            known[run] = None if run in failed else checks  # None: asked again next snapshot
        return known

    def _holding(self, uuid: str, results: list[PlannedResult]) -> list[PlannedResult] | None:
        """Of ``results`` (of one check), those Blindata holds; ``None`` when its results could
        not be listed. Read as they come: a check may have many results."""
        notes = {run_note(r.run_id): r for r in results}
        lengths = {len(note) for note in notes}
        starts = {_millisecond(r.started_at): r for r in results}
        seconds = {_millisecond(r.started_at).replace(microsecond=0): r for r in results}
        held: dict[tuple[str, str], PlannedResult] = {}

        def listing() -> list[PlannedResult]:
            api = self.ctx.client.api.quality_results
            for posted in api.list(page_size=LIST_PAGE_SIZE, checkUuid=uuid):
                text = posted.notes or ""
                named = [notes[text[:n]] for n in lengths if text[:n] in notes]
                when = _millisecond(posted.started_at)
                # posted at a whole second: before starts were moved into their second
                # (``result_start``), at the start of the run that started in that second
                for result in (
                    *named,
                    *((starts[when],) if when in starts else ()),
                    *((seconds[when],) if not when.microsecond and when in seconds else ()),
                ):
                    held[(result.job, result.run_id)] = result
            return list(held.values())

        return self.ctx.attempt("quality result", results[0].check, listing)


def _millisecond(moment: datetime) -> datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def _records(
    ctx: SyncContext,
    records: list[PlannedRecord],
    index: CatalogIndex,
    ledger: _Ledger,
    seen: dict[str, dict[str, set[str]]],
) -> None:
    api = ctx.client.api
    monitors: dict[str, str | None] = {}
    pending: dict[tuple[str, str], list[tuple[str, MetricRecord]]] = defaultdict(list)
    held: set[tuple[str, str]] = set()
    """Runs with a record that has no entity or monitor yet: not all uploaded, not ledgered."""
    _read_measured_fields(ctx, records, index)
    for record in records:
        if ledger.has(record.job, RECORDED_RUN, record.run_id):
            ctx.report.count("profilingRecordsAlreadyUploaded")
            continue
        entity = index.entities.get(record.entity)
        if entity is not None and entity not in monitors:
            monitors[entity] = _monitor(ctx, entity, str(record.entity))
        monitor = monitors[entity] if entity is not None else None
        if monitor is None:
            held.add((record.job, record.run_id))
            continue
        key = f"{record.entity} {record.metric} {record.field or ''} {record.timestamp.isoformat()}"
        field = index.field_name(entity, record.field) if entity and record.field else None
        row = MetricRecord(
            monitor=Ref(uuid=monitor),
            metric_code=record.metric,
            physical_field_name=field or record.field,
            value=record.value,
            timestamp=record.timestamp,
        )
        pending[(record.job, record.run_id)].append((key, row))
    for (job, run_id), rows in sorted(pending.items()):
        tally = ctx.upload(api.metric_records, rows, kind="profiling record")
        ctx.report.count("profilingRecordsUploaded", tally.created + tally.updated)
        if not tally.failed and (job, run_id) not in held:
            seen[job][RECORDED_RUN].add(run_id)
            ledger.runs[job][RECORDED_RUN].add(run_id)
    for record in records:  # runs already recorded stay in the ledger while the plan sees them
        if ledger.has(record.job, RECORDED_RUN, record.run_id):
            seen[record.job][RECORDED_RUN].add(record.run_id)


def _read_measured_fields(
    ctx: SyncContext, records: list[PlannedRecord], index: CatalogIndex
) -> None:
    """The stored spelling of the fields records measure, where their platform names columns
    without case: a record names its field as Blindata holds it (``CatalogIndex.field_name``)."""
    wanted = {
        (entity, record.field)
        for record in records
        if record.field
        and (entity := index.entities.get(record.entity)) is not None
        and index.column_rule(entity) is not None
    }
    if wanted:
        read_back_fields(ctx, index, wanted)


def _monitor(ctx: SyncContext, entity: str, label: str) -> str | None:
    """The entity's OpenLineage monitor, found else created. The listing's filters narrow it
    down; the name and entity are still checked, as the contract does not say how ``name``
    matches (a server that matches a part of it would hand over another monitor)."""
    api = ctx.client.api.profiling_monitors

    def ours(monitor: ProfilingMonitor) -> bool:
        held = monitor.physical_entity
        return monitor.name == MONITOR_NAME and (held is None or held.uuid == entity)

    def find() -> ProfilingMonitor | None:
        listed = api.list(page_size=LIST_PAGE_SIZE, physicalEntityUuid=entity, name=MONITOR_NAME)
        return next(filter(ours, listed), None)

    found = ctx.attempt("profiling monitor", label, find)
    if found is None:
        wanted = ProfilingMonitor(
            name=MONITOR_NAME,
            physical_entity=Ref(uuid=entity),
            description="Metrics reported in OpenLineage events.",
        )
        # created meanwhile (another sync of the table), or its answer lost: found
        found = ctx.create_or_find("profiling monitor", label, partial(api.create, wanted), find)
    return found.uuid if found else None


def _described(quality: QualityPlan) -> set[str]:
    """The scopes of the jobs the plan describes."""
    return set(quality.jobs) | {check.job for check in quality.checks}


def _disable_removed(ctx: SyncContext, quality: QualityPlan, existing: list[QualityCheck]) -> None:
    """Disable the enabled checks the plan no longer holds (history is kept): those of jobs it
    no longer describes, of datasets dropped or renamed since (``QualityPlan.dropped``), and of
    assertions a described job no longer makes (a test deleted, its runs aged out of the store).

    A job is removed when the plan no longer describes it, whether or not other jobs still have
    checks. A plan that describes no job at all is the empty snapshot that cleanup refuses
    (``cleanup.refuseEmptySnapshot``): it disables nothing either, since an empty store proves
    nothing. A check the plan still holds (another job runs the same assertion) stays enabled.
    A check stamped by another definition that shares the suite code is that definition's: this
    plan not describing its job does not remove it.
    """
    described = _described(quality)
    if not described and ctx.definition.cleanup.refuse_empty_snapshot:
        return
    planned = {check.code for check in quality.checks}
    for check in existing:
        job = next(
            (p.value for p in check.additional_properties or () if p.name == JOB_SCOPE), None
        )
        owners = {p.value for p in check.additional_properties or () if p.name == OWNER_PROPERTY}
        if (
            check.code.startswith(LEDGER_PREFIX)
            or (owners and ctx.definition.uuid not in owners)
            or check.enabled is False  # absent: not known to be disabled, so disable it
            or job is None
            or check.code in planned
        ):
            continue
        api = ctx.client.api.quality_checks
        stored = ctx.as_stored(api, check, "quality check", check.code)
        if stored is None:
            continue
        disabled = stored.model_copy(update={"enabled": False})
        if ctx.attempt("quality check", check.code, partial(api.update, disabled)) is not None:
            ctx.report.count("qualityChecksDisabled")
