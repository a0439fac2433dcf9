"""A kept fold extended with the events received since is the fold of every event, or nothing.

Named after issue "Scale": "A snapshot's mapping cost should follow the events received since the
last snapshot plus the size of the catalog".
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.events import Event
from airflow_blindata.mapper.fold import (
    OPEN_RUNS_HELD,
    FoldBuilder,
    FoldedJob,
    JobFold,
    extend_folded,
    fold_jobs,
)
from airflow_blindata.mapper.fold.kept import dump_folded, load_kept
from airflow_blindata.mapper.fold.reading import RawFacets, read_job_events
from airflow_blindata.mapper.quality import quality_retainer
from airflow_blindata.mapper.report import Report
from tests.builders import definition, job_event
from tests.mapper.helpers import at, dataset, histories, raw_event

DEFINITION = definition()
RETAIN = quality_retainer(DEFINITION)
SCHEMA = {"schema": {"fields": [{"name": "id", "type": "int"}]}}


def _time(event: dict[str, Any]) -> str:
    return str(event["eventTime"])


def _folded(events: list[dict[str, Any]]) -> FoldedJob:
    (folded,) = fold_jobs(read_job_events(events, Report()), RETAIN)
    return folded


def _new(events: list[Any]) -> list[Event]:
    """Events received since a fold was kept, read as a snapshot reads them to add them."""
    return read_job_events(events, Report(), every_run_kept=True)


def _same(a: FoldedJob, b: FoldedJob) -> None:
    assert a.job == b.job
    assert {k: (m.mentions, m.first, m.last) for k, m in a.datasets.items()} == {
        k: (m.mentions, m.first, m.last) for k, m in b.datasets.items()
    }


@given(events=histories(), cut=st.integers(0, 20))
def test_a_fold_extended_with_later_events_is_the_fold_of_every_event(
    events: list[dict[str, Any]], cut: int
) -> None:
    """Cut a history in two at any point of time: the first part kept (through its text, as a
    snapshot keeps it), the second added. Either the fold of the whole history, or ``None``."""
    times = sorted({_time(e) for e in events})
    mark = times[min(cut, len(times) - 1)]
    old = [e for e in events if _time(e) <= mark]
    new = [e for e in events if _time(e) > mark]
    readable = read_job_events(old, Report())
    if not fold_jobs(readable, RETAIN):
        return  # nothing readable kept: a snapshot reads the job whole
    raw: RawFacets = {}
    kept = load_kept(dump_folded(_folded(old), Report()), raw).folded
    extended = extend_folded(kept, _new(new), RETAIN)
    if extended is not None:
        _same(extended, _folded(events))


def _run(number: int, start: int, *, outputs: bool = True) -> list[dict[str, Any]]:
    datasets = [{"namespace": "postgres://h:5432", "name": "d.s.t", "facets": SCHEMA}]
    return [
        raw_event("START", start, f"r{number}"),
        raw_event("COMPLETE", start + 1, f"r{number}", outputs=datasets if outputs else None),
    ]


def test_new_runs_later_than_every_folded_event_extend_the_fold() -> None:
    old = _run(1, 1) + _run(2, 3)
    new = _run(3, 5, outputs=False) + _run(4, 7)
    extended = extend_folded(_folded(old), _new(new), RETAIN)
    assert extended is not None
    _same(extended, _folded(old + new))
    # latest, and latest completed; and the outline of the run started before it (its state
    # and times: ``fold.core._latest_started``)
    assert [run.run_id for run in extended.job.runs] == ["r3", "r4"]


def test_a_run_that_goes_on_takes_its_new_events() -> None:
    """Its START was folded, its COMPLETE is new: the run is the fold's latest, kept whole."""
    old = _run(1, 1) + _run(2, 3)[:1]
    new = _run(2, 3)[1:] + _run(3, 6)
    extended = extend_folded(_folded(old), _new(new), RETAIN)
    assert extended is not None
    _same(extended, _folded(old + new))
    assert [run.run_id for run in extended.job.runs] == ["r2", "r3"]  # r2 an outline


def test_an_event_no_later_than_the_fold_is_read_whole() -> None:
    """An event that comes late (its time not after every folded one) would sort among them."""
    old = _run(1, 1) + _run(2, 5)
    assert extend_folded(_folded(old), _new(_run(3, 2)), RETAIN) is None
    tie = _run(3, 6)  # START at the time of the last folded event
    assert extend_folded(_folded(old), _new(tie), RETAIN) is None


def test_a_dropped_run_is_remembered() -> None:
    """r1 runs long: r2 overtakes it and r1 is dropped from the fold; its COMPLETE comes later."""
    old = [raw_event("START", 1, "r1"), *_run(2, 2)]
    kept = _folded(old)
    # r1's outline, its state and times: not enough to take new events
    assert [run.run_id for run in kept.job.runs] == ["r1", "r2"]
    assert not kept.job.runs[0].run_facets and kept.job.runs[0].state is not None
    new = [raw_event("COMPLETE", 9, "r1")]
    assert extend_folded(kept, _new(new), RETAIN) is None


def test_a_facet_deleted_by_a_new_event_is_gone() -> None:
    old = _run(1, 1)
    gone = {
        "namespace": "postgres://h:5432",
        "name": "d.s.t",
        "facets": {"schema": {"_deleted": True}},
    }
    new = [raw_event("COMPLETE", 9, "r9", outputs=[gone])]
    extended = extend_folded(_folded(old), _new(new), RETAIN)
    assert extended is not None
    _same(extended, _folded(old + new))
    ((_, mentions),) = extended.datasets.items()
    assert mentions.mentions["schema"].facet is None


def test_nothing_new_readable_leaves_the_fold_as_it_was() -> None:
    kept = _folded(_run(1, 1))
    assert extend_folded(kept, _new(["not json"]), RETAIN) is kept


def test_a_new_design_of_the_job_replaces_its_declared_datasets() -> None:
    """JobEvents (design time) added: the job's declared datasets are those of the latest."""

    def design(second: int, name: str) -> dict[str, Any]:
        dataset = {"namespace": "postgres://h:5432", "name": name, "facets": SCHEMA}
        return job_event(
            "pv.aggregate",
            namespace="halden",
            time=at(second),
            outputs=[dataset],
            job_facets={"documentation": {"description": f"v{second}"}},
        )

    old = [*_run(1, 1), design(2, "d.s.a")]
    for new in ([design(5, "d.s.b")], [*_run(2, 5)]):
        extended = extend_folded(_folded(old), _new(new), RETAIN)
        assert extended is not None
        _same(extended, _folded(old + new))


def _plan_fold(folded: FoldedJob) -> JobFold:
    """The job as a plan gets it (``FoldBuilder``): held runs let go."""
    builder = FoldBuilder(retain=RETAIN)
    builder.add_folded(folded)
    (job,) = builder.result().jobs
    return job


def _kept_holding(events: list[dict[str, Any]]) -> FoldedJob:
    """A fold kept for the next snapshot, its open runs held (as ``plans.store`` keeps it),
    through its text."""
    read = read_job_events(events, Report(), hold_open=True)
    (folded,) = fold_jobs(read, RETAIN, hold_open=True)
    kept = load_kept(dump_folded(folded, Report()), {}).folded
    assert kept.held == folded.held
    return kept


@given(events=histories(), cut=st.integers(0, 20))
def test_a_fold_kept_with_its_open_runs_held_extends_to_the_fold_of_every_event(
    events: list[dict[str, Any]], cut: int
) -> None:
    """As above, the kept fold holding its open runs whole, and so the extended one: what a
    plan gets of it is the fold of every event."""
    times = sorted({_time(e) for e in events})
    mark = times[min(cut, len(times) - 1)]
    old = [e for e in events if _time(e) <= mark]
    new = [e for e in events if _time(e) > mark]
    if not fold_jobs(read_job_events(old, Report()), RETAIN):
        return
    extended = extend_folded(_kept_holding(old), _new(new), RETAIN, hold_open=True)
    if extended is not None:
        assert _plan_fold(extended) == _folded(events).job


def test_a_run_that_ends_after_a_newer_one_started_is_added_to_a_fold_that_held_it() -> None:
    """Runs that overlap (a task whose runs last longer than its schedule's interval): ``r1``
    was open but no longer the latest when the fold was kept. Held whole, it takes its
    COMPLETE; let go, as before, the job would be read whole again."""
    output = [dataset("public.target", facets=SCHEMA)]
    old = [
        raw_event("START", 1, "r1", outputs=output),
        raw_event("START", 2, "r2", outputs=output),
    ]
    new = [raw_event("COMPLETE", 3, "r1", outputs=output), raw_event("COMPLETE", 4, "r2")]
    assert extend_folded(_folded(old), _new(new), RETAIN) is None
    kept = _kept_holding(old)
    assert kept.held == {"r1", "r2"}
    extended = extend_folded(kept, _new(new), RETAIN, hold_open=True)
    assert extended is not None
    assert extended.held == frozenset()  # both ended
    assert _plan_fold(extended) == _folded(old + new).job
    assert _plan_fold(kept) == _folded(old).job  # a plan of the kept fold lets them go


def test_a_fold_holds_only_the_latest_open_runs() -> None:
    """Runs that never end (their task killed without a terminal event) are let go once
    ``OPEN_RUNS_HELD`` newer open runs came: a kept fold stays the size of the catalog."""
    events = [raw_event("START", 0, f"r{n:03d}") for n in range(OPEN_RUNS_HELD + 10)]
    for number, event in enumerate(events):
        event["eventTime"] = f"2026-10-26T06:{number // 60:02d}:{number % 60:02d}Z"
    kept = _kept_holding(events)
    assert kept.held == {f"r{n:03d}" for n in range(10, OPEN_RUNS_HELD + 10)}
