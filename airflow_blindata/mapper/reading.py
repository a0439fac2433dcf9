"""Reading a job's events for a snapshot: validate the facets that contribute, skim the rest.

Validating facets is most of the cost of reading an event, and most facets of a long history are
superseded: a job sends the same schema, SQL and lineage facets on every run, and the fold keeps
only the latest of each key (seed 004's replacement rule). So the events of a job are first read
without their facets (``parse_event(..., facets=False)``), put in the fold's order, and walked
from the newest back. An event is read whole when something of it can still matter:

* it belongs to a run the snapshot keeps whole (the job's latest and latest completed run);
* it carries a job facet key, or a dataset facet key of one of its datasets, that no newer event
  read whole has decided (set, or deleted with ``_deleted``) — a malformed facet decides nothing,
  so an older valid one still wins, exactly as in a fold of every event;
* it carries a facet quality reads (assertions, metrics, statistics, tests), when quality is on;
* it is a JobEvent or a DatasetEvent (design time, rare), or it ties with another event on the
  fold's order (the tie is broken by content);
* its job has at most two runs (both are kept whole; the first read is skipped then).

Every other event is *skimmed*: it counts in the run cycle (states, times, outputs) with no
facets, which is all the fold takes from it. Malformed and unknown facets are reported for what
is read whole, that is for everything that is used. The result is the same fold as reading every
event whole (``tests/mapper/test_reading.py`` checks it on random histories).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from airflow_blindata.events import (
    DatasetEvent,
    Event,
    JobEvent,
    ParsedEvent,
    RunEvent,
    parse_event,
)
from airflow_blindata.events.parse import decode_json
from airflow_blindata.events.text import unencodable
from airflow_blindata.mapper.fold import DatasetKey, JobKey, order_key, runs_kept_whole
from airflow_blindata.mapper.quality import QUALITY_FACET_KEYS
from airflow_blindata.mapper.report import GapCode, Report

__all__ = ["read_events", "read_job_events"]


def _object(raw: Any) -> Any:
    """The decoded JSON of a raw event (text is decoded once here, not once per reading)."""
    if isinstance(raw, str | bytes | bytearray):
        try:
            return decode_json(raw)
        except (ValueError, RecursionError):
            return raw  # parse_event says why
    return raw


def _text(raw: Any) -> str | bytes | None:
    """The JSON text an event came as, for ``parse_event`` to scan instead of the decoded one."""
    if isinstance(raw, str | bytes):
        return raw
    return bytes(raw) if isinstance(raw, bytearray) else None


def _is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """A JSON object: a dict, checked first (the abstract check costs more and is rare)."""
    return type(value) is dict or isinstance(value, Mapping)


def _facet_keys(container: Any) -> Iterable[str]:
    facets = container.get("facets") if _is_map(container) else None
    return facets.keys() if _is_map(facets) else ()


def _datasets(data: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    for side in ("inputs", "outputs"):
        items = data.get(side)
        if isinstance(items, list):
            yield from (item for item in items if _is_map(item))


def _carries_quality(data: Mapping[str, Any]) -> bool:
    if not QUALITY_FACET_KEYS.isdisjoint(_facet_keys(data.get("run"))):
        return True
    for dataset in _datasets(data):
        for container in ("facets", "inputFacets", "outputFacets"):
            facets = dataset.get(container)
            if _is_map(facets) and not QUALITY_FACET_KEYS.isdisjoint(facets.keys()):
                return True
    return False


def _envelope_is_text(event: RunEvent) -> bool:
    """Whether the strings a skimmed event brings into the fold can be stored and sent (a store
    of an earlier version may hold events that ``store.prepare`` now quarantines). One check of
    them all joined: a separator between two names cannot make or hide a bad character."""
    names = [event.job.namespace, event.job.name, event.run.run_id, event.producer]
    for dataset in (*event.inputs, *event.outputs):
        names += (dataset.namespace, dataset.name)
    return unencodable("\n".join(names)) is None


class _Decided:
    """The facet keys a newer event read whole has set or deleted, per job and per dataset."""

    def __init__(self) -> None:
        self.job: set[str] = set()
        self.datasets: dict[DatasetKey, set[str]] = {}

    def covers(self, data: Mapping[str, Any]) -> bool:
        """Whether every job and dataset facet key of ``data`` is decided already."""
        if not self.job.issuperset(_facet_keys(data.get("job"))):
            return False
        for dataset in _datasets(data):
            key = DatasetKey(str(dataset.get("namespace")), str(dataset.get("name")))
            if not self.datasets.get(key, set()).issuperset(_facet_keys(dataset)):
                return False
        return True

    def add(self, event: RunEvent) -> None:
        self.job.update(event.job.facets)
        for dataset in (*event.inputs, *event.outputs):
            key = DatasetKey(dataset.namespace, dataset.name)
            self.datasets.setdefault(key, set()).update(dataset.facets)


def _raw_job(data: dict[str, Any]) -> tuple[Any, Any] | None:
    job = data.get("job")
    return (job.get("namespace"), job.get("name")) if isinstance(job, dict) else None


def _short_histories(decoded: list[Any]) -> set[tuple[Any, Any] | None]:
    """The jobs (as the raw JSON names them) with at most two runs: a snapshot keeps both whole,
    so their events are read whole at once, without a first read of their envelopes."""
    runs: dict[tuple[Any, Any] | None, set[Any]] = {}
    for data in decoded:
        if isinstance(data, dict):
            run = data.get("run")
            run_id = run.get("runId") if isinstance(run, dict) else None
            runs.setdefault(_raw_job(data), set()).add(repr(run_id))
    return {job for job, ids in runs.items() if job is not None and len(ids) <= 2}


def read_job_events(items: Iterable[Any], report: Report, *, quality: bool = True) -> list[Event]:
    """Read events (raw or parsed) for a snapshot, validating only the facets that contribute.

    Counts as ``read_events`` does, plus ``eventsSkimmed``: events read without their facets
    because newer events supersede every facet they carry.
    """
    raws = list(items)
    decoded = [_object(item) for item in raws]
    texts = [
        _text(item) if type(data) is dict else None
        for item, data in zip(raws, decoded, strict=True)
    ]
    del raws
    results: list[ParsedEvent | Event | None] = [None] * len(decoded)
    envelopes: dict[int, RunEvent] = {}
    short = _short_histories(decoded)
    for index, data in enumerate(decoded):
        if isinstance(data, Event):
            results[index] = data
            continue
        if isinstance(data, dict) and _raw_job(data) in short:
            # every run is kept whole: nothing to skim
            results[index] = parse_event(data, text=texts[index])
            continue
        skim = parse_event(data, facets=False) if isinstance(data, dict) else None
        if skim is not None and isinstance(skim.event, RunEvent):
            envelopes[index] = skim.event
        else:  # unreadable, JobEvents and DatasetEvents: read whole, as ever
            results[index] = parse_event(data, text=texts[index])
    skimmed = _read_runs(decoded, texts, envelopes, results, quality) if envelopes else 0
    report.count("eventsSkimmed", skimmed)
    return read_events((r for r in results if r is not None), report)


def _read_runs(
    decoded: list[Any],
    texts: list[str | bytes | None],
    envelopes: dict[int, RunEvent],
    results: list[ParsedEvent | Event | None],
    quality: bool,
) -> int:
    """Fill ``results`` for the RunEvents at ``envelopes``' indexes, newest first; the number
    of events skimmed."""
    kept = runs_kept_whole(envelopes.values())
    skimmed = 0
    ties = Counter(order_key(event) for event in envelopes.values())
    decided: dict[JobKey, _Decided] = {}
    for index in sorted(envelopes, key=lambda i: order_key(envelopes[i]), reverse=True):
        event, data = envelopes[index], decoded[index]
        job = JobKey(event.job.namespace, event.job.name)
        seen = decided.setdefault(job, _Decided())
        whole = (
            (job, event.run.run_id) in kept
            or ties[order_key(event)] > 1
            or (quality and _carries_quality(data))
            or not seen.covers(data)
            or not _envelope_is_text(event)
        )
        if not whole:
            results[index] = ParsedEvent(event)
            skimmed += 1
            continue
        parsed = parse_event(data, text=texts[index])
        results[index] = parsed
        if isinstance(parsed.event, RunEvent):
            seen.add(parsed.event)
    return skimmed


def read_events(items: Iterable[Any], report: Report) -> list[Event]:
    """Read raw events (or already read ones) and record what could not be read in ``report``.

    Counters: ``eventsRead`` (readable events), ``eventsUnreadable``, ``facetsMalformed``, and
    ``runEvents`` / ``jobEvents`` / ``datasetEvents`` by kind.
    """
    events: list[Event] = []
    for item in items:
        if isinstance(item, (RunEvent, JobEvent, DatasetEvent)):
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
