"""Reading a job's events for a snapshot: validate the facets that contribute, skim the rest.

``read_job_events`` first reads every event of a job without its facets (``events.envelope``, or
``parse_event(..., facets=False)`` when that cannot be sure), puts them in the fold's order and
walks back from the newest. An event is read whole when something of it can still matter (a
facet key no newer event read whole decided, a quality facet, a JobEvent or DatasetEvent, a tie,
io facets named by field name, a container that is not an object, an unreadable event); every
other event is *skimmed*: it counts in the run cycle with no facets. Malformed and unknown facets
are reported for what is read whole. The result is the same fold as reading every event whole
(``tests/mapper/test_reading.py`` checks it on random histories).

The rules in full: docs/mapping-reference.md#what-is-read-whole-mapperfoldreadingpy
Why (cost): docs/performance.md#skimming-superseded-events-mapperfoldreadingpy
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from msgspec import Raw

from airflow_blindata.events import (
    BaseFacet,
    DataQualityAssertionsDatasetFacet,
    DataQualityMetricsDatasetFacet,
    DataQualityMetricsInputDatasetFacet,
    DatasetEvent,
    Event,
    GreatExpectationsAssertionsDatasetFacet,
    IcebergCommitReportOutputDatasetFacet,
    IcebergScanReportInputDatasetFacet,
    InputStatisticsInputDatasetFacet,
    JobEvent,
    OutputStatisticsOutputDatasetFacet,
    ParsedEvent,
    RunEvent,
    TestRunFacet,
    parse_event,
)
from airflow_blindata.events.envelope import (
    Container,
    Envelope,
    container_not_an_object,
    envelope_of,
    io_facets_by_field_name,
    raw_containers,
    read_envelope,
    read_whole,
)
from airflow_blindata.events.parse import decode_json, event_text_problem
from airflow_blindata.mapper.fold.core import (
    database_may_come_from_source,
    dataset_names,
    job_of,
    open_runs,
    order_key,
    runs_kept_whole,
)
from airflow_blindata.mapper.report import GapCode, Report

__all__ = [
    "ASSERTION_KEYS",
    "METRIC_KEYS",
    "QUALITY_FACET_KEYS",
    "NewerSlices",
    "RawFacets",
    "read_events",
    "read_job_events",
]

ASSERTION_KEYS = frozenset(
    {DataQualityAssertionsDatasetFacet.KEY, GreatExpectationsAssertionsDatasetFacet.KEY}
)
"""The dataset facets quality makes checks and results of (``mapper.quality``)."""
METRIC_KEYS = frozenset(
    {
        DataQualityMetricsDatasetFacet.KEY,
        DataQualityMetricsInputDatasetFacet.KEY,
        InputStatisticsInputDatasetFacet.KEY,
        OutputStatisticsOutputDatasetFacet.KEY,
        IcebergScanReportInputDatasetFacet.KEY,
        IcebergCommitReportOutputDatasetFacet.KEY,
    }
)
"""The dataset facets quality makes profiling records of (``mapper.quality``)."""
QUALITY_FACET_KEYS = ASSERTION_KEYS | METRIC_KEYS | {TestRunFacet.KEY}
"""Every facet key quality reads results and records from: read whole here, defined here so
that the fold's modules import no mapping pass."""

RawFacets = dict[int, tuple[BaseFacet, dict[str, Any] | Raw]]
"""Facets read whole, by ``id``, each with the JSON object it was read from, decoded or as its
text (``Raw``), and the facet itself, which keeps the ``id`` from being reused. A kept fold
writes that object instead of the model: a text as it is, no cost at all; a decoded object for
half the cost of writing the model; and a smaller text either way (``fold.kept``)."""


def _object(raw: Any) -> Any:
    """The decoded JSON of a raw event (text is decoded once here, not once per reading)."""
    if isinstance(raw, str | bytes | bytearray):
        try:
            value = decode_json(raw)
        except (ValueError, RecursionError):
            return raw  # parse_event says why
        # JSON but no object (``"RunEvent"``, ``5``): its text, which parse_event reports as
        # "not a JSON object: got a string" (the string alone would be read as JSON text again)
        return value if isinstance(value, dict) else raw
    return raw


def _text(raw: Any) -> str | bytes | None:
    """The JSON text an event came as, for ``parse_event`` to scan instead of the decoded one."""
    if isinstance(raw, str | bytes):
        return raw
    return bytes(raw) if isinstance(raw, bytearray) else None


def _containers(event: RunEvent) -> Iterator[tuple[Container, Mapping[str, Any]]]:
    """Every facet container of a RunEvent read whole, as ``raw_containers`` names them."""
    yield ("run", "", ""), event.run.facets
    yield ("job", "", ""), event.job.facets
    for item in event.inputs:
        yield ("inputs", item.namespace, item.name), item.facets
        yield ("inputFacets", item.namespace, item.name), item.input_facets
    for output in event.outputs:
        yield ("outputs", output.namespace, output.name), output.facets
        yield ("outputFacets", output.namespace, output.name), output.output_facets


def _folded_containers(event: RunEvent) -> Iterator[tuple[Container, Mapping[str, Any]]]:
    """``_containers`` with each dataset named as the fold keys it (``fold.dataset_names``): a
    facet decided for ``prod.public.orders`` decides nothing of a ``public.orders`` sent without
    a ``dataSource``, a dataset of its own in the fold."""
    yield ("run", "", ""), event.run.facets
    yield ("job", "", ""), event.job.facets
    for item in event.inputs:
        _, name = dataset_names(item.namespace, item.name, item.facets)
        yield ("inputs", item.namespace, name), item.facets
        yield ("inputFacets", item.namespace, name), item.input_facets
    for output in event.outputs:
        _, name = dataset_names(output.namespace, output.name, output.facets)
        yield ("outputs", output.namespace, name), output.facets
        yield ("outputFacets", output.namespace, name), output.output_facets


_DATA_SOURCE = "dataSource"


def _names_its_database(container: Container, keys: AbstractSet[str]) -> bool:
    """Whether a dataset container sends a ``dataSource`` facet that may name the database of
    its name (``fold.dataset_names``): the event is read whole, since skimmed, its dataset would
    lose the facet and with it the name the fold keys it by."""
    kind, namespace, name = container
    if _DATA_SOURCE not in keys or kind not in ("inputs", "outputs"):
        return False
    return database_may_come_from_source(namespace, name)


def _carries_quality(envelope: Envelope) -> bool:
    return any(
        not QUALITY_FACET_KEYS.isdisjoint(keys)
        for (kind, _, _), _, keys in envelope.keys
        if kind != "job"
    )


_NOTHING: frozenset[str] = frozenset()

_PER_RUN = {
    kind: kind for kind in ("run", "job", "inputs", "inputFacets", "outputs", "outputFacets")
}
_PER_JOB = {"job": "job", "inputs": "dataset", "outputs": "dataset"}
"""The containers a job's fold merges across its runs: job facets, and a dataset's facets
whatever the side. Run facets and io facets are not merged beyond their run."""


class _Decided:
    """The facet keys that events read whole, all newer than the event at hand, set or deleted
    (a malformed facet is not read, so it decides nothing).

    For a job, the containers its fold merges across runs (``_PER_JOB``). For one run
    (``per_run``), every container its fold merges apart: run and job facets, and per dataset
    and side its dataset facets and its input or output facets.
    """

    def __init__(self, *, per_run: bool) -> None:
        self._merged = _PER_RUN if per_run else _PER_JOB
        self._per_job = not per_run
        self._keys: dict[Container, set[str]] = {}

    def covers(self, envelope: Envelope) -> bool:
        """Whether every facet key of the event is decided already."""
        for (kind, namespace, name), _, keys in envelope.keys:
            if _LIFECYCLE in keys and envelope.renames():
                return False  # a RENAME is kept apart from later states (``fold.core._RENAME``)
            if _names_its_database((kind, namespace, name), keys):
                return False
            merged = self._merged.get(kind)
            if merged is not None and not self._keys.get(
                (merged, namespace, name), _NOTHING
            ).issuperset(keys):
                return False
            if (
                self._per_job
                and kind == "outputs"
                and "schema" in keys
                and (_WRITTEN, namespace, name) not in self._keys
            ):
                return False  # a reader's newer schema does not decide the writer's
        return True

    def add(self, event: RunEvent) -> None:
        for (kind, namespace, name), facets in _folded_containers(event):
            merged = self._merged.get(kind)
            if merged is not None:
                self._keys.setdefault((merged, namespace, name), set()).update(facets)
                if self._per_job and kind == "outputs" and "schema" in facets:
                    self._keys[_WRITTEN, namespace, name] = _WRITTEN_KEYS


_LIFECYCLE = "lifecycleStateChange"
"""A facet whose value decides under which key the fold keeps it: a ``RENAME`` under a key of
its own, which no later state replaces, is never decided by a newer event's keys."""


_WRITTEN = "written"
"""The container of a dataset's schema as its writers send it (``fold.AS_WRITTEN``): an output's
``schema`` decides it, an input's does not (the job's fold merges inputs and outputs as one)."""
_WRITTEN_KEYS = {"schema"}


_RunKey = tuple[tuple[str, str], str]
"""A run by its job (namespace, name) and its run id."""


@dataclass
class NewerSlices:
    """What the newer slices of a job's history decided, for reading an older slice exactly as a
    reading of every event at once reads it (``fold.slices.report_in_slices``): which runs the
    job keeps whole over all its events, and the facet keys that newer events read whole set or
    deleted, per job and per run kept whole. Slices read newest first, each a slice of time
    (events tied on the fold's order are never cut apart), give every event the decision the
    reading at once gives it."""

    kept_whole: AbstractSet[_RunKey]
    by_job: dict[tuple[str, str], _Decided] = field(default_factory=dict)
    by_run: dict[_RunKey, _Decided] = field(default_factory=dict)


def read_job_events(
    items: Iterable[Any],
    report: Report,
    *,
    quality: bool = True,
    raw_facets: RawFacets | None = None,
    every_run_kept: bool = False,
    also_whole: AbstractSet[_RunKey] = frozenset(),
    kept_whole: set[_RunKey] | None = None,
    newer: NewerSlices | None = None,
    hold_open: bool = False,
) -> list[Event]:
    """Read events (raw or parsed) for a snapshot, validating only the facets that contribute.

    Counts as ``read_events`` does, plus ``eventsSkimmed``: events read without their facets
    because newer events supersede every facet they carry. With ``raw_facets``, the facets of
    the RunEvents read whole are recorded there with the JSON they were read from. With
    ``every_run_kept``, every run is read as one the fold keeps whole: for events added to a
    kept fold (``fold.extend_folded``), which ranks their runs with older events of theirs.
    ``also_whole`` names runs (job, run id) read as kept whole besides those the ranking keeps:
    for a slice of a long history, the runs the fold of the slices before keeps whole. The
    runs read as kept whole are added to ``kept_whole``, when given. With ``newer``, the
    events are a slice of a history read newest first: the runs kept whole are those it names,
    and what newer slices decided goes on deciding (and takes this slice's decisions). With
    ``hold_open``, the open runs a kept fold holds whole (``fold.open_runs``) are read as kept
    whole too.

    An event given as text is first read from its text without decoding its facets
    (``read_envelope``); when it is read whole, its facets are read from their JSON kept aside
    then (``read_whole``), the text is not decoded again. An event whose envelope cannot be read
    that way is decoded and read as a decoded event.
    """
    raws = list(items)
    results: list[ParsedEvent | Event | None] = [None] * len(raws)
    envelopes: dict[int, Envelope] = {}
    whole: set[int] = set()  # RunEvents read whole whatever newer ones decide
    for index, item in enumerate(raws):
        # an event's text first: ``isinstance`` of pydantic models is slow to say no
        if type(item) not in _RAW and isinstance(item, Event):
            results[index] = item
            continue
        text = _text(item)
        envelope = read_envelope(text) if text is not None else None
        if envelope is not None:
            envelopes[index] = envelope
            continue
        data = _object(item)
        text = text if type(data) is dict else None
        skim = parse_event(data, facets=False) if isinstance(data, dict) else None
        if (
            skim is not None
            and isinstance(skim.event, RunEvent)
            and event_text_problem(data, text=text) is None
        ):
            envelopes[index] = envelope_of(skim.event, data)
            raws[index] = data  # decoded once
            # Its keys are not all in the envelope's (io facets under the model's names), or a
            # container that is not an object files no key, and nothing newer decides its issue.
            if io_facets_by_field_name(data) or container_not_an_object(data):
                whole.add(index)
        else:  # unreadable, JobEvents and DatasetEvents: read whole, as ever
            results[index] = parse_event(data, text=text)
    skimmed = (
        _read_runs(
            raws,
            envelopes,
            whole,
            results,
            quality,
            raw_facets,
            every_run_kept,
            also_whole,
            kept_whole,
            newer,
            hold_open,
        )
        if envelopes
        else 0
    )
    report.count("eventsSkimmed", skimmed)
    return read_events((r for r in results if r is not None), report)


_RAW = frozenset({bytes, str, dict})


def _read_runs(
    raws: list[Any],
    envelopes: dict[int, Envelope],
    whole: set[int],
    results: list[ParsedEvent | Event | None],
    quality: bool,
    raw_facets: RawFacets | None,
    every_run_kept: bool,
    also_whole: AbstractSet[_RunKey],
    kept_whole: set[_RunKey] | None,
    newer: NewerSlices | None,
    hold_open: bool,
) -> int:
    """Fill ``results`` for the RunEvents at ``envelopes``' indexes, newest first; the number
    of events skimmed."""
    skimmed = 0
    order = {index: order_key(envelope.event) for index, envelope in envelopes.items()}
    tied = _tied(order.values())
    events = [envelope.event for envelope in envelopes.values()]
    by_job: dict[tuple[str, str], _Decided] = {}
    by_run: dict[_RunKey, _Decided] = {}
    kept_runs: AbstractSet[_RunKey]
    if newer is not None:
        kept_runs, by_job, by_run = newer.kept_whole, newer.by_job, newer.by_run
    else:
        kept_runs = {(job_of(e), e.run.run_id) for e in events}
        if not every_run_kept and len(kept_runs) > 1:  # a single run is kept whole: no ranking
            kept_runs = _ranked(events, kept_runs, hold_open)
            kept_runs |= also_whole
    if kept_whole is not None:
        kept_whole |= kept_runs
    for index in sorted(order, key=order.__getitem__, reverse=True):
        envelope = envelopes[index]
        event = envelope.event
        job = job_of(event)
        seen = by_job.get(job)
        if seen is None:
            seen = by_job[job] = _Decided(per_run=False)
        run = (job, event.run.run_id)
        own = by_run.get(run)
        if own is None and run in kept_runs:
            own = by_run[run] = _Decided(per_run=True)
        # What a kept run's own events decided, its job's decided too: the stricter test.
        judge = own if own is not None else seen
        needed = (
            index in whole
            or order[index] in tied
            or not judge.covers(envelope)
            or (quality and _carries_quality(envelope))
        )
        if not needed:
            results[index] = ParsedEvent(event)
            skimmed += 1
            continue
        from_text = read_whole(envelope)
        parsed: ParsedEvent
        if from_text is not None:  # from the facets' JSON the envelope was read with
            parsed, texts = from_text
            if raw_facets is not None:
                for facet, text in texts:
                    raw_facets[id(facet)] = (facet, text)
        else:
            raw = raws[index]
            data = raw if type(raw) is dict else _object(raw)
            parsed = parse_event(data, text=_text(raw))
            if raw_facets is not None and isinstance(parsed.event, RunEvent):
                _record_raw(parsed.event, data, raw_facets)
        results[index] = parsed
        if isinstance(parsed.event, RunEvent):
            seen.add(parsed.event)
            if own is not None:
                own.add(parsed.event)
    return skimmed


def _ranked(events: list[RunEvent], runs: set[_RunKey], hold_open: bool) -> set[_RunKey]:
    """Of ``runs`` (those of ``events``), the runs kept whole (``runs_kept_whole``, and the
    open ones with ``hold_open``). Only the jobs with several runs are ranked: a job's single
    run is its latest, kept whole (a batch of many small jobs mostly has one run a job)."""
    count: Counter[tuple[str, str]] = Counter(job for job, _ in runs)
    several = {job for job, runs_of_job in count.items() if runs_of_job > 1}
    kept = {run for run in runs if run[0] not in several}
    if several:
        ranked = [event for event in events if job_of(event) in several]
        kept.update(((job.namespace, job.name), run_id) for job, run_id in runs_kept_whole(ranked))
        if hold_open:
            kept |= _open_runs_by_job(ranked)
    return kept


def _open_runs_by_job(events: list[RunEvent]) -> set[_RunKey]:
    by_job: dict[tuple[str, str], list[RunEvent]] = {}
    for event in events:
        by_job.setdefault(job_of(event), []).append(event)
    return {(job, run_id) for job, of_job in by_job.items() for run_id in open_runs(of_job)}


def _tied(keys: Collection[_OrderKey]) -> AbstractSet[_OrderKey]:
    """The keys that come more than once; a set tells first whether any does (mostly none does,
    and a ``Counter`` costs four times as much)."""
    if len(set(keys)) == len(keys):
        return _NO_KEYS
    return {key for key, count in Counter(keys).items() if count > 1}


_OrderKey = tuple[datetime, int, str, str, str]
_NO_KEYS: frozenset[_OrderKey] = frozenset()


def _record_raw(event: RunEvent, data: Mapping[str, Any], into: RawFacets) -> None:
    """Each facet of ``event`` with the object it was read from: the object under its own key
    (a facet filed under another key, see ``filed_keys``, is not recorded)."""
    for (container, _, raw), (same, facets) in zip(
        raw_containers(data), _containers(event), strict=False
    ):
        if container != same or type(raw) is not dict:
            continue
        for key, facet in facets.items():
            value = raw.get(key)
            if type(value) is dict:
                into[id(facet)] = (facet, value)


def read_events(items: Iterable[Any], report: Report) -> list[Event]:
    """Read raw events (or already read ones) and record what could not be read in ``report``.

    Counters: ``eventsRead`` (readable events), ``eventsUnreadable``, ``facetsMalformed``, and
    ``runEvents`` / ``jobEvents`` / ``datasetEvents`` by kind.
    """
    events: list[Event] = []
    for item in items:
        if type(item) is not ParsedEvent and isinstance(item, (RunEvent, JobEvent, DatasetEvent)):
            event: Event = item
        else:
            parsed = item if isinstance(item, ParsedEvent) else parse_event(item)
            if parsed.event is None:
                report.count("eventsUnreadable")
                report.gap(GapCode.UNREADABLE_EVENT, parsed.problem or "unreadable")
                continue
            event = parsed.event
            for issue in parsed.malformed_facets:
                report.count("facetsMalformed")
                report.gap(GapCode.MALFORMED_FACET, str(issue))
            for key in parsed.unknown_facets:
                report.unknown_facet(key)
        report.count("eventsRead")
        report.count(_KIND_COUNTERS[type(event)])
        events.append(event)
    return events


_KIND_COUNTERS: dict[type[Any], str] = {
    RunEvent: "runEvents",
    JobEvent: "jobEvents",
    DatasetEvent: "datasetEvents",
}
