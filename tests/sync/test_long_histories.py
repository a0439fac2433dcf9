"""A job's long history is read a slice of time at a time, and plans as read at once.

Named after issue "Scale": "Peak memory must not grow with the number of runs per job". A job
that runs every minute, or a streaming job that reports every minute of one long run, has tens
of thousands of events; a snapshot reads such a job a slice at a time (``SLICE_EVENTS``
events), each slice added to the fold of the ones before as a snapshot adds new events to a
kept fold. Here the slices are a few events long, so that short histories exercise every cut.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.fold import slices
from airflow_blindata.mapper.fold.reading import read_job_events
from airflow_blindata.plans import store as mapping
from airflow_blindata.plans.files import event_files_groups, plan_files
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import EventStore, open_store
from airflow_blindata.store.base import time_slices
from tests.builders import dataset, parent_facet, run_event
from tests.helpers import all_fixture_events
from tests.mapper.helpers import histories
from tests.sync.helpers import (
    BASE,
    _arrived,
    _cut,
    _runs,
    _snapshots_equal_builds,
    assert_read_at_once,
)

from .helpers import definition


@given(
    events=st.lists(st.tuples(st.none() | st.integers(0, 6), st.integers(0, 4)), max_size=30),
    size=st.integers(1, 5),
)
def test_slices_hold_every_event_once_in_time_order_and_end_only_where_the_time_changes(
    events: list[tuple[int | None, int]], size: int
) -> None:
    """And where no run goes on across the cut, unless none such came within ``size`` more;
    each slice names the runs that go on across its end."""
    listing = [
        (cursor, None if second is None else BASE + timedelta(seconds=second), f"run{run}")
        for cursor, (second, run) in enumerate(events, start=1)
    ]
    cut_up = list(time_slices(reversed(listing), size))
    slices = [part.events for part in cut_up]
    at = {cursor: time for cursor, time, _ in listing}
    run_of = {cursor: run for cursor, _, run in listing}
    flat = [cursor for part in slices for cursor in part]
    assert sorted(flat) == [cursor for cursor, _, _ in listing]  # each once
    keys = [(at[c] is not None, at[c] or BASE, c) for c in flat]
    assert keys == sorted(keys)  # no time first, then in time order, then cursor order
    for cut in range(1, len(slices)):
        before, after = slices[cut - 1], slices[cut]
        assert len(before) >= size
        assert at[before[-1]] != at[after[0]]  # one time never spans two slices
        earlier = {run_of[c] for part in slices[:cut] for c in part}
        later = {run_of[c] for part in slices[cut:] for c in part}
        assert not earlier & later or len(before) >= 2 * size  # a run across: none better
        assert cut_up[cut - 1].going_on == earlier & later
    assert not cut_up or cut_up[-1].going_on == frozenset()


def test_a_long_history_is_read_in_slices_and_plans_as_read_at_once(store_url: str) -> None:
    events = _runs(20)
    with mock.patch.object(mapping, "SLICE_EVENTS", 6), open_store(store_url) as store:
        store.append_many(json.dumps(event) for event in events)
        first = plan_from_store(store, definition())
        assert first.report.counters["jobsReadInSlices"] == 1
        assert_read_at_once(first, build(events, definition()))
        # many new runs since: added to the kept fold a slice at a time
        more = _runs(10, first=20)
        store.append_many(json.dumps(event) for event in more)
        second = plan_from_store(store, definition())
        assert second.report.counters["jobsExtended"] == 1
        assert second.report.counters["jobsReadInSlices"] == 0
        assert_read_at_once(second, build(events + more, definition()))


def test_a_run_going_on_across_slices_is_held_whole_until_its_last_slice(
    store_url: str,
) -> None:
    """A long run started first and completed last, other runs in between: every slice ends
    with it going on, and the fold holds it whole until the slice that completes it (then it is
    the job's latest run, its output written), rather than reading the job at once. Its START
    alone says its parent (a DAG's task): read whole in the first slice, which alone would rank
    it below the others, that facet makes the orchestration flow."""
    events = _runs(8)
    long_run = "00000000-0000-4000-8000-999999999999"
    dag_run = "00000000-0000-4000-8000-0000000000d0"
    for event_type, minute in (("START", -1), ("COMPLETE", 30)):
        events.append(
            run_event(
                "minutely",
                event_type=event_type,
                run_id=long_run,
                time=(BASE + timedelta(minutes=minute)).isoformat(),
                outputs=[dataset("public.other")],
                run_facets=parent_facet("dag", dag_run) if event_type == "START" else None,
            )
        )
    events.append(run_event("dag", run_id=dag_run, time=(BASE + timedelta(minutes=31)).isoformat()))
    with mock.patch.object(mapping, "SLICE_EVENTS", 4), open_store(store_url) as store:
        store.append_many(json.dumps(event) for event in events)
        planned = plan_from_store(store, definition())
        assert planned.report.counters["jobsReadInSlices"] == 1
        assert_read_at_once(planned, build(events, definition()))
        assert planned.report.counters["orchestrationFlows"] == 1


def test_a_task_whose_runs_overlap_is_read_in_slices_and_plans_as_read_at_once(
    store_url: str,
) -> None:
    """Runs longer than the schedule's interval: no cut falls where no run goes on, so each
    slice ends with a run going on, held whole into the next. Before, such a job was read at
    once however long its history."""
    events = _runs(30, lasting=90, targets=3)
    readings: list[int] = []
    with _store_read_in_slices(store_url, 6, readings) as store:
        store.append_many(json.dumps(event) for event in events)
        planned = plan_from_store(store, definition())
        assert planned.report.counters["jobsReadInSlices"] == 1
        assert_read_at_once(planned, build(events, definition()))
        assert max(readings) <= 2 * 6


@pytest.mark.parametrize("slice_events", [2_000, 6], ids=["short", "in slices"])
def test_a_task_whose_runs_overlap_is_extended_across_snapshots(
    store_url: str, slice_events: int
) -> None:
    """A snapshot comes while two runs are open, the older no longer the job's latest: the kept
    fold holds its open runs whole, so the next snapshot adds their ends (and newer runs) to it
    instead of reading the job's events again."""
    events = _runs(30, lasting=90, targets=3)
    mark = (BASE + timedelta(minutes=10, seconds=30)).isoformat()
    before = [event for event in events if event["eventTime"] <= mark]
    since = [event for event in events if event["eventTime"] > mark]
    with mock.patch.object(mapping, "SLICE_EVENTS", slice_events), open_store(store_url) as store:
        store.append_many(json.dumps(event) for event in before)
        first = plan_from_store(store, definition())
        assert_read_at_once(first, build(before, definition()))
        store.append_many(json.dumps(event) for event in since)
        second = plan_from_store(store, definition())
        assert second.report.counters["jobsExtended"] == 1
        assert_read_at_once(second, build(events, definition()))


def _with_a_malformed_run_facet(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every COMPLETE with a ``nominalTime`` run facet whose time is no time: malformed."""
    for event in events:
        if event["eventType"] == "COMPLETE":
            event["run"]["facets"]["nominalTime"] = {
                "_producer": "https://example.com/producer",
                "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/NominalTimeRunFacet.json",
                "nominalStartTime": "soon",
            }
    return events


@contextmanager
def _store_read_in_slices(url: str, size: int, readings: list[int]) -> Iterator[EventStore]:
    """A store whose long histories are read ``size`` events a slice, each reading of events
    counted in ``readings`` (``_readings_counted``)."""
    with (
        mock.patch.object(mapping, "SLICE_EVENTS", size),
        _readings_counted(readings),
        open_store(url) as store,
    ):
        yield store


@contextmanager
def _readings_counted(calls: list[int]) -> Iterator[None]:
    """``read_job_events`` of ``mapper.fold.slices`` and of ``plans.store`` (where a job is read at
    once), recording how many events each reading was given."""

    def counted(items: Iterable[Any], *args: Any, **kwargs: Any) -> Any:
        given = list(items)
        calls.append(len(given))
        return read_job_events(given, *args, **kwargs)

    with (
        mock.patch.object(slices, "read_job_events", counted),
        mock.patch.object(mapping, "read_job_events", counted),
    ):
        yield


def test_a_long_history_with_malformed_facets_is_still_read_in_slices_and_reports_as_at_once(
    store_url: str,
) -> None:
    """A producer that sends a malformed facet on every run: the job is read a slice at a time
    (never at once), then its report made again newest first, and it names the malformed facets
    a reading at once names (those of the runs still used), not those of every run."""
    events = _with_a_malformed_run_facet(_runs(20))
    expected = build(events, definition())
    assert 0 < expected.report.counters["facetsMalformed"] < 20
    readings: list[int] = []
    with _store_read_in_slices(store_url, 6, readings) as store:
        store.append_many(json.dumps(event) for event in events)
        first = plan_from_store(store, definition())
        assert first.report.counters["jobsReadInSlices"] == 1
        assert_read_at_once(first, expected)
        assert max(readings) <= 2 * 6  # a slice at a time, never the 40 events at once
        # new runs since: the kept fold's report names a malformed facet that newer runs may
        # supersede, so the job is read in slices again, not extended
        more = _with_a_malformed_run_facet(_runs(10, first=20))
        store.append_many(json.dumps(event) for event in more)
        readings.clear()
        second = plan_from_store(store, definition())
        assert second.report.counters["jobsReadInSlices"] == 1
        assert_read_at_once(second, build(events + more, definition()))
        assert max(readings) <= 2 * 6


def test_a_long_history_with_malformed_facets_in_an_event_file_is_read_in_slices(
    tmp_path: Path,
) -> None:
    events = _with_a_malformed_run_facet(_runs(12))
    random.Random(5).shuffle(events)
    lines = tmp_path / "events.jsonl"
    lines.write_text("".join(f"{json.dumps(event)}\n" for event in events), encoding="utf-8")
    with mock.patch.object(mapping, "SLICE_EVENTS", 5):
        planned = plan_files([lines], definition())
    assert planned.report.counters["jobsReadInSlices"] == 1
    assert_read_at_once(planned, build(events, definition()))


def test_every_producers_events_in_small_slices_plan_as_read_at_once(store_url: str) -> None:
    rng = random.Random(7)
    every = [e for e in all_fixture_events() if isinstance(e, dict)]
    events = _arrived(every, rng, in_order=True)
    with mock.patch.object(mapping, "SLICE_EVENTS", 3):
        _snapshots_equal_builds([*_cut(events, 3, rng), []], store_url)


@given(
    events=histories(),
    seed=st.integers(0, 2**16),
    parts=st.integers(1, 3),
    in_order=st.booleans(),
    size=st.integers(1, 4),
    quality=st.sampled_from([(True, True), (True, False), (False, False)]),
)
def test_any_history_read_in_slices_plans_as_read_at_once(
    events: list[dict[str, Any]],
    seed: int,
    parts: int,
    in_order: bool,
    size: int,
    quality: tuple[bool, bool],
) -> None:
    """Runs going on across slices, ties, deleted and malformed facets, under each quality
    setting, received in batches: whether the slices can be added or the job is read at once,
    the plan is the one of every event read at once."""
    enabled, metrics = quality
    job = definition(quality={"enabled": enabled, "metricsEnabled": metrics})
    rng = random.Random(seed)
    events = _arrived(events, rng, in_order=in_order)
    with (
        mock.patch.object(mapping, "SLICE_EVENTS", size),
        tempfile.TemporaryDirectory() as directory,
    ):
        _snapshots_equal_builds(_cut(events, parts, rng), f"sqlite:///{directory}/events.db", job)


def test_a_run_the_slice_alone_ranks_below_a_going_on_run_is_still_read_whole(
    store_url: str,
) -> None:
    """Two runs end at the same time in a slice: ``going``, started in the slice before, and
    ``late``, started and ended then. By the slice alone they tie on times and ``going`` wins on
    its id; with its earlier start ``late`` is the job's latest run. Its parent facet (an
    orchestration flow) must be read, as reading every event at once reads it: the slice is read
    again with every run whole."""

    def minute(number: int) -> str:
        return (BASE + timedelta(minutes=number)).isoformat()

    earlier, going, late = (f"00000000-0000-4000-8000-00000000000{n}" for n in (1, 9, 2))
    late_facets = parent_facet("dag", "00000000-0000-4000-8000-0000000000d0")  # a DAG's task
    events = [
        run_event("job", event_type="START", run_id=earlier, time=minute(0)),
        run_event("job", event_type="COMPLETE", run_id=earlier, time=minute(0)),
        run_event("job", event_type="START", run_id=going, time=minute(1)),
        # the next slice: both runs end at minute 5
        run_event("job", event_type="COMPLETE", run_id=going, time=minute(5)),
        run_event("job", event_type="START", run_id=late, time=minute(5), run_facets=late_facets),
        run_event(
            "job", event_type="COMPLETE", run_id=late, time=minute(5), run_facets=late_facets
        ),
        run_event("dag", run_id="00000000-0000-4000-8000-0000000000d0", time=minute(6)),
    ]
    with mock.patch.object(mapping, "SLICE_EVENTS", 3), open_store(store_url) as store:
        store.append_many(json.dumps(event) for event in events)
        planned = plan_from_store(store, definition())
        assert planned.report.counters["jobsReadInSlices"] == 1
        assert_read_at_once(planned, build(events, definition()))
        assert planned.report.counters["orchestrationFlows"] == 1


def test_a_long_history_in_event_files_is_read_in_slices_and_plans_as_read_at_once(
    tmp_path: Path,
) -> None:
    """``plan`` of event files reads a job's long history a slice of time at a time too: its
    lines in a JSON lines file, out of time order, next to a short job's in a JSON array."""
    events = _runs(12)
    random.Random(3).shuffle(events)
    short = _runs(1, first=100)
    for event in short:
        event["job"]["name"] = "hourly"
    lines = tmp_path / "events.jsonl"
    lines.write_text("".join(f"{json.dumps(event)}\n" for event in events), encoding="utf-8")
    array = tmp_path / "more.json"
    array.write_text(json.dumps(short), encoding="utf-8")
    groups_seen: list[object] = []
    with mock.patch.object(mapping, "SLICE_EVENTS", 5):
        groups_seen.extend(type(group).__name__ for group in event_files_groups([lines, array]))
        planned = plan_files([lines, array], definition())
    assert groups_seen == ["list", "LongHistory"]  # "hourly", then "minutely"
    assert planned.report.counters["jobsReadInSlices"] == 1
    assert_read_at_once(planned, build(events + short, definition()))


@given(events=histories(), seed=st.integers(0, 2**16), size=st.integers(1, 4))
def test_any_history_in_an_event_file_read_in_slices_plans_as_read_at_once(
    events: list[dict[str, Any]], seed: int, size: int
) -> None:
    random.Random(seed).shuffle(events)
    with (
        mock.patch.object(mapping, "SLICE_EVENTS", size),
        tempfile.TemporaryDirectory() as directory,
    ):
        lines = Path(directory) / "events.jsonl"
        lines.write_text("".join(f"{json.dumps(e)}\n" for e in events), encoding="utf-8")
        planned = plan_files([lines], definition())
    assert_read_at_once(planned, build(events, definition()))
