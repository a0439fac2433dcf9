"""Every snapshot is the plan of the events received so far, however they came in between.

Named after issue "Scale": "keep in the store what is needed to skip re-folding jobs that
received nothing new", and design 3.3: the same stored events give the same plan. A store that
took snapshots along the way holds kept folds, extended ones and an SQL hash memo; its plan must
be the one of reading every event at once (``build``), after each batch of events. So must the
plan of event files, read one job at a time.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.plans.files import plan_files
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import open_store
from tests.builders import dataset_event, job_event, run_event
from tests.helpers import all_fixture_events
from tests.mapper.helpers import DATASET_FACETS, NS, at, datasets, histories
from tests.sync.helpers import _arrived, _cut, _snapshots_equal_builds

from .helpers import definition


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("arrival", ["in time order", "shuffled"])
def test_every_producers_events_received_in_batches_plan_as_read_at_once(
    store_url: str, seed: int, arrival: str
) -> None:
    """The fixtures of every producer (dbt, the spec's facet examples), received in four batches
    with a snapshot after each, and one more with nothing new: in time order (the usual case,
    where kept folds are extended) or in any order (late events have their job read whole)."""
    rng = random.Random(seed)
    every = [e for e in all_fixture_events() if isinstance(e, dict)]
    events = _arrived(every, rng, in_order=arrival == "in time order")
    saved = _snapshots_equal_builds([*_cut(events, 4, rng), []], store_url)  # then nothing new
    assert saved["jobsUnchanged"] > 0  # the kept folds were used, not only written


@given(
    events=histories(),
    seed=st.integers(0, 2**16),
    parts=st.integers(2, 4),
    in_order=st.booleans(),
    quality=st.sampled_from([(True, True), (True, False), (False, False)]),
)
def test_a_jobs_history_received_in_batches_plans_as_read_at_once(
    events: list[dict[str, Any]],
    seed: int,
    parts: int,
    in_order: bool,
    quality: tuple[bool, bool],
) -> None:
    """Any history of a job (runs going on across batches, ties, deleted and malformed facets),
    its events received in a few batches, with a snapshot after each; under each quality
    setting (which decides what a fold keeps of the runs it drops)."""
    enabled, metrics = quality
    job = definition(quality={"enabled": enabled, "metricsEnabled": metrics})
    rng = random.Random(seed)
    events = _arrived(events, rng, in_order=in_order)
    with tempfile.TemporaryDirectory() as directory:
        _snapshots_equal_builds(_cut(events, parts, rng), f"sqlite:///{directory}/events.db", job)


def test_a_facet_malformed_in_every_run_is_reported_as_a_full_read_reports_it(
    tmp_path: Path,
) -> None:
    """A producer that sends the same malformed run facet in every run, a snapshot after each
    run: the gap counts what reading every stored event reports (the facets of the runs still
    used: the latest), not one more each snapshot."""
    bad = {"nominalTime": {"nominalStartTime": "soon"}}
    runs = [
        run_event(
            "orders",
            event_type="COMPLETE",
            run_id=f"00000000-0000-4000-8000-{run:012d}",
            time=f"2026-01-{1 + run:02d}T10:00:00Z",
            run_facets=bad,
        )
        for run in range(5)
    ]
    url = f"sqlite:///{tmp_path / 'events.db'}"
    saved = _snapshots_equal_builds([[event] for event in runs], url)
    assert saved["jobsExtended"] == 0  # each time read whole, to report what is still used
    with open_store(url) as store:
        again = plan_from_store(store, definition())
    assert again.report.gap_count(GapCode.MALFORMED_FACET) == 1


def test_an_extended_job_still_lists_the_unknown_facets_of_a_run_newer_ones_superseded(
    tmp_path: Path,
) -> None:
    """The one way an extended job's plan differs from a full read, apart from counts: an
    unknown output facet of a run that a newer run superseded stays listed (its fold read it
    when that run was the latest); a full read skims that run and never reads it."""
    fancy = {"fancy": {"_producer": "x", "_schemaURL": "https://example.com/Fancy.json", "a": 1}}
    first = run_event(
        "orders",
        run_id="00000000-0000-4000-8000-000000000001",
        time="2026-01-01T10:00:00Z",
        outputs=[{"namespace": NS, "name": "a", "facets": {}, "outputFacets": fancy}],
    )
    second = run_event(
        "orders",
        run_id="00000000-0000-4000-8000-000000000002",
        time="2026-01-02T10:00:00Z",
        outputs=[{"namespace": NS, "name": "a", "facets": {}}],
    )
    url = f"sqlite:///{tmp_path / 'events.db'}"
    saved = _snapshots_equal_builds([[first], [second]], url)
    assert saved["jobsExtended"] == 1
    with open_store(url) as store:
        extended = plan_from_store(store, definition(), keep=False)
        full = build([event.payload for event in store.events()], definition())
    assert dict(extended.report.unknown_facets) == {"fancy": 1}
    assert dict(full.report.unknown_facets) == {}


@st.composite
def catalogs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """The histories of up to three jobs that read and write the same datasets (whose facets
    are merged across jobs: latest wins, ``_deleted`` removes), now and then a design of a job
    (a JobEvent) and DatasetEvents of those datasets, interleaved."""
    events = []
    for number in range(draw(st.integers(1, 3))):
        name = f"job{number}"
        for event in draw(histories()):
            events.append({**event, "job": {**event["job"], "name": name}})
        for second in draw(st.lists(st.integers(0, 12), max_size=2)):
            design = job_event(
                name,
                namespace="halden",
                time=at(second),
                inputs=draw(datasets("inputFacets")),
                outputs=draw(datasets("outputFacets")),
            )
            events.append(design)
    for second in draw(st.lists(st.integers(0, 12), max_size=2)):
        facets = draw(st.sampled_from(DATASET_FACETS))
        name = draw(st.sampled_from(["a", "b"]))
        events.append(dataset_event(name, NS, facets=facets, time=at(second)))
    return events


@given(
    events=catalogs(),
    seed=st.integers(0, 2**16),
    parts=st.integers(2, 4),
    in_order=st.booleans(),
    retention_after=st.none() | st.integers(0, 2),
)
def test_jobs_sharing_datasets_received_in_batches_plan_as_read_at_once(
    events: list[dict[str, Any]],
    seed: int,
    parts: int,
    in_order: bool,
    retention_after: int | None,
) -> None:
    """Several jobs' histories received in batches, a snapshot after each; now and then
    retention removes all but each job's latest description between two snapshots (the kept
    folds then hold events the store no longer has)."""
    rng = random.Random(seed)
    events = _arrived(events, rng, in_order=in_order)
    with tempfile.TemporaryDirectory() as directory:
        _snapshots_equal_builds(
            _cut(events, parts, rng),
            f"sqlite:///{directory}/events.db",
            retention_after=retention_after,
        )


@given(events=catalogs(), seed=st.integers(0, 2**16))
def test_jobs_sharing_datasets_in_event_files_plan_as_read_at_once(
    events: list[dict[str, Any]], seed: int
) -> None:
    """``plan`` of event files reads them one job at a time (``plan_files``): the events of
    several jobs, in any order, split between a JSON lines file and a JSON array."""
    rng = random.Random(seed)
    rng.shuffle(events)
    half = rng.randint(0, len(events))
    with tempfile.TemporaryDirectory() as directory:
        lines, array = Path(directory) / "events.jsonl", Path(directory) / "events.json"
        lines.write_text("".join(f"{json.dumps(e)}\n" for e in events[:half]), encoding="utf-8")
        array.write_text(json.dumps(events[half:]), encoding="utf-8")
        planned = plan_files([lines, array], definition())
    assert planned == build(events, definition())
