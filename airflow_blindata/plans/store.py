"""The plan of the event store for a snapshot: one job at a time, and only the jobs that changed.

The store is read job by job (``EventStore.job_digests``, then each job's events): a job's events
are read, folded and dropped before the next job is read, so that memory follows the catalog,
not the length of the history; a job whose own history is long is read a slice of time at a
time (``_read_in_slices``). Each job's fold is kept in the store with the digest of the events
it came from (``mapper.fold.kept``); the next snapshot loads the fold of a job whose digest is
unchanged instead of reading its events again. So a snapshot's mapping time follows what was
received since the last one plus the size of the catalog. The uploads still refresh every
described object (seed 000, "Every run uploads again").

The SQL hash memo is kept the same way: SQL texts already hashed are not parsed again.
"""

from __future__ import annotations

import gc
import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence, Set
from contextlib import contextmanager
from dataclasses import dataclass, field

from airflow_blindata.definition import JobDefinition
from airflow_blindata.events.registry import forget_validated_facets
from airflow_blindata.mapper.build import plan_of_fold
from airflow_blindata.mapper.fold import (
    DatasetKey,
    FoldBuilder,
    FoldedJob,
    JobKey,
    RunRetainer,
    extend_folded,
    fold_jobs,
)
from airflow_blindata.mapper.fold.kept import KeptFold, dump_folded, fold_settings, load_kept
from airflow_blindata.mapper.fold.reading import RawFacets, read_job_events
from airflow_blindata.mapper.fold.slices import fold_in_slices, found_malformed
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.quality import quality_retainer
from airflow_blindata.mapper.report import Report
from airflow_blindata.mapper.systems import KnownSystem
from airflow_blindata.redaction import redact_text
from airflow_blindata.store import EventStore, StoreError
from airflow_blindata.store.base import TimeSlice

__all__ = ["KEEP_BATCH", "Touched", "collector_paused", "plan_from_store"]

log = logging.getLogger(__name__)

KEEP_BATCH = 200
"""Folds read from, and written to, the store per query."""

SLICE_EVENTS = 2000
"""A job with more events than this to read is read a slice of time at a time
(``_read_in_slices``), so that a snapshot holds a slice of its history in memory, not all of it
(about 15 KB an Airflow-shaped event while it is read)."""

_Fold = tuple[tuple[str, str], str, str]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Mapping allocates millions of objects and frees few; the cyclic garbage collector would
    traverse the growing plan again and again (a sixth of the mapping time, measured with
    ``benchmarks/scale.py``). Nothing made meanwhile holds cycles worth collecting early.

    On the way out the survivors go straight to the oldest generation (``freeze`` then
    ``unfreeze``): left young, the first collection after ``enable`` would traverse all of them
    at once, only to promote them there (another sixth). They are collected as old objects are,
    when the oldest generation is. A process that froze objects of its own (a pre-fork server)
    keeps them frozen: then nothing is moved."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


class _Keeper:
    """Writes folds to the store in batches, best effort: a fold that cannot be kept costs the
    next snapshot a read of the job's events, nothing else."""

    def __init__(self, store: EventStore, settings: str, enabled: bool, until: int) -> None:
        self.store, self.settings, self.enabled, self.until = store, settings, enabled, until
        self.pending: list[_Fold] = []
        self.failed = False

    @property
    def wanted(self) -> bool:
        return self.enabled and not self.failed

    def add(
        self,
        job: tuple[str, str],
        digest: str,
        folded: FoldedJob,
        report: Report,
        raw_facets: RawFacets | None = None,
    ) -> None:
        if not self.wanted:
            return
        text = dump_folded(folded, report, raw_facets, until=self.until)
        self.pending.append((job, digest, text))
        if len(self.pending) >= KEEP_BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.pending or self.failed:
            return
        try:
            self.store.keep_folded_jobs(self.settings, self.pending)
        except StoreError as exc:
            self.failed = True
            log.warning("Folds could not be kept (the next snapshot reads every event): %s", exc)
        self.pending = []


def _load(job: tuple[str, str], text: str, raw_facets: RawFacets | None) -> KeptFold | None:
    try:
        return load_kept(text, raw_facets)
    except (ValueError, KeyError, TypeError) as exc:  # a fold of another version, or damaged
        # the job as the catalog names it: a stored namespace may hold credentials (issue 42)
        log.info(
            "The kept fold of %s is not usable (%s): reading its events",
            JobKey(*job),
            redact_text(str(exc)),
        )
        return None


class _Texts:
    """The event texts of a chunk's jobs, taken in the order the store yields them (the order
    asked, normally: a job yielded out of turn is held until asked for)."""

    def __init__(self, stream: Iterator[tuple[tuple[str, str], list[str]]]) -> None:
        self.stream = stream
        self.held: dict[tuple[str, str], list[str]] = {}

    def of(self, job: tuple[str, str]) -> list[str]:
        if job in self.held:
            return self.held.pop(job)
        for found, texts in self.stream:
            if found == job:
                return texts
            self.held[found] = texts
        return []


def _chunks(
    digests: dict[tuple[str, str], str], size: int
) -> Iterator[list[tuple[tuple[str, str], str]]]:
    items = list(digests.items())
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class Touched:
    """What some jobs' folds mention, gathered while the store is mapped: for a light sync,
    which publishes what those jobs describe (``mapper.light.plan_of_jobs``)."""

    jobs: Set[tuple[str, str]]
    """The jobs asked for, as the store lists them (``EventStore.jobs_since``)."""
    named: set[tuple[str, str]] = field(default_factory=set)
    """The same jobs as their events name them (what their scopes are made of)."""
    datasets: set[DatasetKey] = field(default_factory=set)

    def add(self, job: tuple[str, str], folded: FoldedJob) -> None:
        if job not in self.jobs:
            return
        key = folded.job.key
        self.named.add((key.namespace, key.name))
        self.datasets.update(folded.datasets)
        self.datasets.update(item.key for item in folded.job.inputs)
        self.datasets.update(item.key for item in folded.job.outputs)


def plan_from_store(
    store: EventStore,
    definition: JobDefinition,
    known: Sequence[KnownSystem] = (),
    *,
    keep: bool = True,
    until: int | None = None,
    touched: Touched | None = None,
    used_for_jobs: Sequence[str] = (),
) -> CatalogPlan:
    """The plan of every stored event up to cursor ``until`` (the newest: ``None``), read one
    job at a time, changed jobs only; ``touched`` gathers what its jobs' folds mention;
    ``used_for_jobs`` the Systems earlier syncs put the jobs in (``SystemResolver``).

    With ``keep``, the folds of the jobs read and the SQL hash memo are written back for the next
    snapshot (``plan`` passes ``keep=False``: it only reads).
    """
    settings = fold_settings(definition)
    retain = quality_retainer(definition)
    quality = definition.quality.enabled
    if until is None:
        until = store.last_id()
    digests = store.job_digests(until=until)
    keeper = _Keeper(store, settings, keep, until)
    report = Report()
    builder = FoldBuilder(retain=retain)
    counts: Counter[str] = Counter()
    with collector_paused():
        for chunk in _chunks(digests, KEEP_BATCH):
            done = _folded_without_reading(store, chunk, settings, until, retain, quality, keeper)
            counts.update(counter for _, _, counter in done.values())
            unread = [job for job, _ in chunk if job not in done]
            texts = _Texts(store.events_by_job(unread, until=until))
            for job, digest in chunk:
                if job in done:
                    folded, job_report, _ = done.pop(job)
                    report.merge(job_report)
                    builder.add_folded(folded)
                    if touched is not None:
                        touched.add(job, folded)
                    continue
                folds, job_report, raw_facets = _read_job(
                    texts.of(job), retain, quality, keeper.wanted
                )
                if len(folds) == 1:  # a job's events fold to one job (else: not worth keeping)
                    keeper.add(job, digest, folds[0], job_report, raw_facets)
                del raw_facets
                report.merge(job_report)
                for folded in folds:
                    builder.add_folded(folded)
                    if touched is not None:
                        touched.add(job, folded)
        page: list[object] = []
        for event in store.dataset_events(until=until):
            page.append(event.payload)
            if len(page) >= KEEP_BATCH * 25:
                builder.add(read_job_events(page, report, quality=quality))
                page = []
        builder.add(read_job_events(page, report, quality=quality))
        for counter in ("jobsUnchanged", "jobsExtended", "jobsReadInSlices"):
            report.count(counter, counts[counter])
        plan = plan_of_fold(
            builder.result(),
            report,
            definition,
            known,
            sql_hashes=store.sql_hashes(),
            used_for_jobs=used_for_jobs,
        )
    forget_validated_facets()
    if keep:
        keeper.flush()
        _forget_and_keep_memo(store, settings, digests, plan)
    return plan


def _read_job(
    texts: list[str], retain: RunRetainer, quality: bool, keeping: bool
) -> tuple[list[FoldedJob], Report, RawFacets | None]:
    """A job's stored events read and folded, its open runs held whole for the next snapshot
    (``fold.FoldedJob.held``), with the report of reading them and, when ``keeping``, the facets'
    texts for the kept fold. A reading that holds open runs reads them whole: when it finds a
    malformed facet, the events are read again as a reading at once reads them, for its report,
    and nothing is held."""
    report = Report()
    raw_facets: RawFacets | None = {} if keeping else None
    events = read_job_events(texts, report, quality=quality, raw_facets=raw_facets, hold_open=True)
    if not found_malformed(report):
        return fold_jobs(events, retain, hold_open=True), report, raw_facets
    report, raw_facets = Report(), {} if keeping else None
    events = read_job_events(texts, report, quality=quality, raw_facets=raw_facets)
    return fold_jobs(events, retain), report, raw_facets


def _folded_without_reading(
    store: EventStore,
    chunk: list[tuple[tuple[str, str], str]],
    settings: str,
    until: int,
    retain: RunRetainer,
    quality: bool,
    keeper: _Keeper,
) -> dict[tuple[str, str], tuple[FoldedJob, Report, str]]:
    """The jobs of ``chunk`` folded without reading all their events at once, with their report
    and the counter they count in: a kept fold loaded as it is (``jobsUnchanged``) or with the
    events received since (``jobsExtended``), or a long history read a slice at a time
    (``jobsReadInSlices``). The others are left to a read of their events."""
    stored = store.folded_jobs(settings, (job for job, _ in chunk))
    done: dict[tuple[str, str], tuple[FoldedJob, Report, str]] = {}
    changed: list[_Changed] = []
    sliced: list[_Changed] = []
    for job, digest in chunk:
        found = stored.pop(job, None)
        if found is None:
            continue
        if found[0] == digest:
            kept = _load(job, found[1], None)
            if kept is not None:
                done[job] = (kept.folded, kept.report, "jobsUnchanged")
            continue
        received = _received(store, found[0], digest)
        if received is None:
            continue  # read whole
        long = received > SLICE_EVENTS  # then added a slice at a time, facets as models
        raw_facets: RawFacets | None = {} if keeper.wanted and not long else None
        kept = _load(job, found[1], raw_facets)
        if kept is not None and kept.until is not None and kept.until < until:
            item = _Changed(job, digest, received, kept, raw_facets)
            (sliced if long else changed).append(item)
    for item, folded, job_report in _extend(store, changed, until, retain, quality):
        done[item.job] = (folded, job_report, "jobsExtended")
        keeper.add(item.job, item.digest, folded, job_report, item.raw_facets)
    for item in sliced:
        result = _extend_in_slices(store, item, until, retain, quality)
        if result is not None:
            done[item.job] = (*result, "jobsExtended")
            keeper.add(item.job, item.digest, *result)
    for job, digest in chunk:
        count = None if job in done else store.digest_count(digest)
        if count is not None and count > SLICE_EVENTS:  # a long history read again
            result = _read_in_slices(store, job, until, retain, quality)
            if result is not None:
                done[job] = (*result, "jobsReadInSlices")
                keeper.add(job, digest, *result)
    return done


def _received(store: EventStore, kept_digest: str, digest: str) -> int | None:
    """How many events a job received since its fold was kept, when none of the folded ones
    went meanwhile (then the fold may take them); ``None`` when the digests do not say so (a
    store of another backend, or events removed by retention)."""
    folded = store.digest_count(kept_digest)
    now = store.digest_count(digest)
    if folded is None or now is None or now <= folded:
        return None
    return now - folded


@dataclass(frozen=True, slots=True)
class _Changed:
    """A job whose kept fold may take the ``received`` events that came since."""

    job: tuple[str, str]
    digest: str
    received: int
    kept: KeptFold
    raw_facets: RawFacets | None


def _extend(
    store: EventStore,
    changed: list[_Changed],
    until: int,
    retain: RunRetainer,
    quality: bool,
) -> Iterator[tuple[_Changed, FoldedJob, Report]]:
    """The changed jobs whose kept fold takes the events received since (``extend_folded``),
    with their report: those read past its cursor, when they are as many as the digests say
    came (none of the folded ones went meanwhile). Any other is left to a read of all its
    events."""
    by_mark: dict[int, list[_Changed]] = {}
    for item in changed:
        assert item.kept.until is not None
        by_mark.setdefault(item.kept.until, []).append(item)
    for mark, items in by_mark.items():
        texts = _Texts(store.events_by_job([item.job for item in items], until=until, after=mark))
        for item in items:
            new = texts.of(item.job)
            if len(new) != item.received:  # some folded events went as others came
                continue
            if found_malformed(item.kept.report):
                continue  # read whole (see found_malformed)
            job_report = Report()
            events = read_job_events(
                new, job_report, quality=quality, raw_facets=item.raw_facets, every_run_kept=True
            )
            if found_malformed(job_report):
                continue
            folded = extend_folded(item.kept.folded, events, retain, hold_open=True)
            if folded is not None:
                item.kept.report.merge(job_report)
                yield item, folded, item.kept.report


def _read_in_slices(
    store: EventStore, job: tuple[str, str], until: int, retain: RunRetainer, quality: bool
) -> tuple[FoldedJob, Report] | None:
    """A long history folded a slice of time at a time (``EventStore.job_slices``,
    ``mapper.fold.slices``), read again newest first for the report when a facet is malformed;
    ``None`` when that cannot be exact, and the job is read at once."""
    report = Report()
    slices = store.job_slices(job, until=until, size=SLICE_EVENTS)
    folded = fold_in_slices(
        slices,
        report,
        retain=retain,
        quality=quality,
        newest_first=lambda: store.job_slices(
            job, until=until, size=SLICE_EVENTS, newest_first=True
        ),
        hold_open=True,
    )
    return None if folded is None else (folded, report)


def _extend_in_slices(
    store: EventStore, item: _Changed, until: int, retain: RunRetainer, quality: bool
) -> tuple[FoldedJob, Report] | None:
    """The many events a job received since its fold was kept, added to it a slice of time at a
    time, when they are as many as the digests say came (none of the folded ones went
    meanwhile, as ``_extend`` checks); ``None`` otherwise, and the job is read at once."""
    kept = item.kept
    if found_malformed(kept.report):
        return None
    slices = _Counted(store.job_slices(item.job, until=until, after=kept.until, size=SLICE_EVENTS))
    report = Report()
    folded = fold_in_slices(
        slices, report, retain=retain, quality=quality, start=kept.folded, hold_open=True
    )
    if folded is None or slices.events != item.received:
        return None
    kept.report.merge(report)
    return folded, kept.report


class _Counted:
    """Slices of events, counting the events they held."""

    def __init__(self, slices: Iterable[TimeSlice[str]]) -> None:
        self.slices = slices
        self.events = 0

    def __iter__(self) -> Iterator[TimeSlice[str]]:
        for part in self.slices:
            self.events += len(part.events)
            yield part


def _forget_and_keep_memo(
    store: EventStore, settings: str, jobs: dict[tuple[str, str], str], plan: CatalogPlan
) -> None:
    try:
        store.forget_folded_jobs(settings, jobs)
        store.keep_sql_hashes(plan.sql_hashes.used)
    except StoreError as exc:
        log.warning("The snapshot's memo could not be kept (the next one maps more): %s", exc)
