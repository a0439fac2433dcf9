"""Runs that overlap, open runs a kept fold holds, and what a snapshot reports of them.

Named after issue "Scale": "A snapshot's mapping cost should follow the events received since the
last snapshot plus the size of the catalog" and "Peak memory must not grow with the number of
runs per job". A task whose runs last longer than its schedule's interval has runs open while
newer ones start: a kept fold holds its open runs whole (``FoldedJob.held``), slices of a long
history hold the runs going on across their ends, and each snapshot's plan is still the plan of
every stored event read at once, its report included (the reported gaps of malformed facets).
"""

from __future__ import annotations

import json
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.fold import core as fold
from airflow_blindata.mapper.fold.kept import fold_settings
from airflow_blindata.plans import store as mapping
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import open_store
from tests.builders import at, dataset, dataset_event, run_event
from tests.mapper.helpers import DATASET_FACETS, JOB_FACETS, NS, RUN_FACETS, datasets
from tests.sync.helpers import _arrived, _cut, _snapshots_equal_builds, assert_read_at_once

from .helpers import definition

QUALITY = definition(quality={"enabled": True, "metricsEnabled": True})
ASSERTS = {"dataQualityAssertions": {"assertions": [{"assertion": "not_null", "success": True}]}}
BAD_NOMINAL = {"nominalTime": {"nominalStartTime": "soon"}}
GOOD_NOMINAL = {"nominalTime": {"nominalStartTime": at(1)}}
RUNS = [f"00000000-0000-4000-8000-{number:012d}" for number in range(12)]
A, B = RUNS[10], RUNS[11]


def _event(run: str, kind: str, second: int, **more: Any) -> dict[str, Any]:
    return run_event("job", event_type=kind, run_id=run, time=at(second), **more)


def _open_run_with_a_malformed_facet_its_run_sets_again(facet: str) -> list[dict[str, Any]]:
    """Run A stays open, no longer the latest: its START holds a malformed facet (a run facet, or
    the quality facet itself) that its RUNNING sets again, both with a quality input facet."""
    good = [dataset("public.source", input_facets=ASSERTS)]
    if facet == "run facet":
        first = _event(A, "START", 1, run_facets=BAD_NOMINAL, inputs=good)
        again = _event(A, "RUNNING", 2, run_facets=GOOD_NOMINAL, inputs=good)
    else:
        bad = {"dataQualityAssertions": {"assertions": 5}}
        first = _event(A, "START", 1, inputs=[dataset("public.source", input_facets=bad)])
        again = _event(A, "RUNNING", 2, inputs=good)
    return [first, again, _event(B, "START", 3), _event(B, "COMPLETE", 4)]


@pytest.mark.parametrize("facet", ["run facet", "quality facet"])
@pytest.mark.parametrize(
    ("kept_before", "slice_events"),
    [(False, 2_000), (True, 2_000), (False, 2), (True, 2)],
    ids=["read", "added to a kept fold", "read in slices", "added in slices"],
)
def test_a_malformed_facet_of_an_open_run_is_reported_as_a_reading_at_once_reports_it(
    tmp_path: Path, facet: str, kept_before: bool, slice_events: int
) -> None:
    """A reading at once reads every event with a quality facet whole when quality is on, so it
    reports the START's malformed facet; a snapshot that holds the open run whole must not skim
    that START for being covered by its run's RUNNING."""
    batches = [_open_run_with_a_malformed_facet_its_run_sets_again(facet)]
    if kept_before:
        batches.insert(0, [_event(RUNS[0], "COMPLETE", 0)])
    with mock.patch.object(mapping, "SLICE_EVENTS", slice_events):
        _snapshots_equal_builds(batches, f"sqlite:///{tmp_path / 'e.db'}", QUALITY)


def _runs_open_then_ending() -> list[list[dict[str, Any]]]:
    """Five runs start and do not end; then the oldest and one more end, one FAILs and goes on,
    one starts; then more end or abort."""
    output = [dataset("public.t", output_facets=ASSERTS)]
    started = [
        _event(RUNS[n], "START", n, outputs=output, run_facets=GOOD_NOMINAL) for n in range(5)
    ]
    later = [
        _event(RUNS[0], "COMPLETE", 10, outputs=output),
        _event(RUNS[3], "FAIL", 11),
        _event(RUNS[5], "START", 12),
        _event(RUNS[2], "RUNNING", 13, outputs=output),
    ]
    last = [
        _event(RUNS[3], "RUNNING", 20),
        _event(RUNS[4], "COMPLETE", 21, outputs=output),
        _event(RUNS[1], "ABORT", 22),
        _event(RUNS[5], "COMPLETE", 23),
    ]
    return [started, later, last, []]


@pytest.mark.parametrize("held", [1, 2, 64])
@pytest.mark.parametrize("slice_events", [2, 3, 2_000])
def test_open_runs_that_end_fail_or_go_on_in_later_snapshots_plan_as_read_at_once(
    tmp_path: Path, held: int, slice_events: int
) -> None:
    """More open runs than a kept fold holds (``OPEN_RUNS_HELD``): those let go are read again
    when they end, those held are added to; in slices or not, the same plan."""
    with (
        mock.patch.object(fold, "OPEN_RUNS_HELD", held),
        mock.patch.object(mapping, "SLICE_EVENTS", slice_events),
    ):
        _snapshots_equal_builds(_runs_open_then_ending(), f"sqlite:///{tmp_path / 'e.db'}", QUALITY)


@pytest.mark.parametrize("slice_events", [2, 2_000])
def test_a_held_run_ending_at_the_time_of_the_kept_folds_last_event_plans_as_read_at_once(
    tmp_path: Path, slice_events: int
) -> None:
    """Equal times across snapshots (the fold cannot take the event: the job is read again) and
    within one."""
    batches = [
        [_event(A, "START", 1), _event(B, "START", 2)],
        [_event(A, "COMPLETE", 2, run_facets=GOOD_NOMINAL), _event(B, "COMPLETE", 3)],
        [_event(B, "OTHER", 4, run_facets=GOOD_NOMINAL), _event(A, "OTHER", 4)],
    ]
    with mock.patch.object(mapping, "SLICE_EVENTS", slice_events):
        _snapshots_equal_builds(batches, f"sqlite:///{tmp_path / 'e.db'}", QUALITY)


@pytest.mark.parametrize("after", [0, 1])
def test_retention_between_snapshots_of_held_runs_plans_as_read_at_once(
    tmp_path: Path, after: int
) -> None:
    with mock.patch.object(fold, "OPEN_RUNS_HELD", 2):
        _snapshots_equal_builds(
            _runs_open_then_ending(),
            f"sqlite:///{tmp_path / 'e.db'}",
            QUALITY,
            retention_after=after,
        )


def test_a_kept_fold_written_without_its_held_runs_is_not_used(tmp_path: Path) -> None:
    """A text of the format before held runs (no ``held``), found under the current settings:
    the job is read again, not extended from a fold that let its open runs go."""
    url = f"sqlite:///{tmp_path / 'e.db'}"
    batches = _runs_open_then_ending()
    with open_store(url) as store:
        store.append_many(json.dumps(event) for event in batches[0])
        plan_from_store(store, QUALITY)
        settings_digest = fold_settings(QUALITY)
        kept = store.folded_jobs(settings_digest, list(store.job_digests()))
        ((job, (digest, text)),) = kept.items()
        older = json.loads(text)
        del older["held"]
        store.keep_folded_jobs(settings_digest, [(job, digest, json.dumps(older))])
        store.append_many(json.dumps(event) for event in batches[1])
        planned = plan_from_store(store, QUALITY)
        assert planned.report.counters["jobsExtended"] == 0
        assert_read_at_once(planned, build([e.payload for e in store.events()], QUALITY))


def _time(second: int) -> str:
    return f"2026-11-29T10:{second // 60:02d}:{second % 60:02d}.000Z"


@st.composite
def overlapping(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Runs of one job that overlap in time, end or not, end and go on; each run's events pick
    their facets (malformed ones among them) from a pool of one or two sets, so that newer events
    of a run often cover older ones."""
    events = []
    for number in range(draw(st.integers(1, 7))):
        second = draw(st.integers(0, 30))
        count = draw(st.integers(1, 4))
        shared = draw(st.booleans())
        inputs, outputs = draw(datasets("inputFacets")), draw(datasets("outputFacets"))
        pool = []
        for _ in range(draw(st.integers(1, 2))):
            if not shared:
                inputs, outputs = draw(datasets("inputFacets")), draw(datasets("outputFacets"))
            pool.append(
                (
                    draw(st.sampled_from(RUN_FACETS)),
                    draw(st.sampled_from(JOB_FACETS)),
                    inputs,
                    outputs,
                )
            )
        for _ in range(count):
            second += draw(st.integers(0, 6))
            run_facets, job_facets, ins, outs = draw(st.sampled_from(pool))
            events.append(
                run_event(
                    "pv.aggregate",
                    namespace="halden",
                    event_type=draw(
                        st.sampled_from(["START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER"])
                    ),
                    time=_time(second),
                    run_id=f"r{number}",
                    run_facets=run_facets,
                    job_facets=job_facets,
                    inputs=[dict(item) for item in ins],
                    outputs=[dict(item) for item in outs],
                )
            )
    return events


@st.composite
def overlapping_catalogs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A few such jobs, and DatasetEvents of datasets they may share."""
    events = []
    for number in range(draw(st.integers(1, 3))):
        for event in draw(overlapping()):
            events.append({**event, "job": {**event["job"], "name": f"job{number}"}})
    for second in draw(st.lists(st.integers(0, 40), max_size=2)):
        facets = draw(st.sampled_from(DATASET_FACETS))
        name = draw(st.sampled_from(["a", "b"]))
        events.append(dataset_event(name, NS, facets=facets, time=_time(second)))
    return events


@dataclass(frozen=True)
class Arrival:
    """How events arrive and are read: shuffled by ``seed`` (or kept in time order), cut into
    ``parts`` batches, a snapshot after each; long histories read ``slice_events`` a slice, a
    kept fold holding at most ``held`` open runs."""

    seed: int
    parts: int
    in_order: bool
    slice_events: int
    held: int


@st.composite
def arrivals(draw: st.DrawFn, *, fewest_parts: int, slice_sizes: list[int]) -> Arrival:
    return Arrival(
        seed=draw(st.integers(0, 2**16)),
        parts=draw(st.integers(fewest_parts, 4)),
        in_order=draw(st.booleans()),
        slice_events=draw(st.sampled_from(slice_sizes)),
        held=draw(st.integers(1, 3)),
    )


def _snapshots_of(
    events: list[dict[str, Any]],
    job: JobDefinition,
    arrival: Arrival,
    retention_after: int | None = None,
) -> None:
    rng = random.Random(arrival.seed)
    events = _arrived(events, rng, in_order=arrival.in_order)
    with (
        mock.patch.object(mapping, "SLICE_EVENTS", arrival.slice_events),
        mock.patch.object(fold, "OPEN_RUNS_HELD", arrival.held),
        tempfile.TemporaryDirectory() as directory,
    ):
        _snapshots_equal_builds(
            [*_cut(events, arrival.parts, rng), []],
            f"sqlite:///{directory}/events.db",
            job,
            retention_after=retention_after,
        )


@given(
    events=overlapping(),
    arrival=arrivals(fewest_parts=1, slice_sizes=[1, 2, 3, 6, 2_000]),
    quality=st.sampled_from([(True, True), (True, False), (False, False)]),
)
def test_overlapping_runs_received_in_batches_plan_as_read_at_once(
    events: list[dict[str, Any]], arrival: Arrival, quality: tuple[bool, bool]
) -> None:
    """Malformed, deleted and quality facets, any quality setting, in slices or not, few runs
    held or more: each snapshot's plan and report are those of every event read at once."""
    enabled, metrics = quality
    _snapshots_of(
        events, definition(quality={"enabled": enabled, "metricsEnabled": metrics}), arrival
    )


@given(
    events=overlapping_catalogs(),
    arrival=arrivals(fewest_parts=2, slice_sizes=[1, 2, 3, 2_000]),
    retention_after=st.none() | st.integers(0, 2),
)
def test_catalogs_of_overlapping_runs_with_retention_plan_as_read_at_once(
    events: list[dict[str, Any]], arrival: Arrival, retention_after: int | None
) -> None:
    _snapshots_of(events, QUALITY, arrival, retention_after)
