"""A snapshot validates the facets that contribute and skims the rest, with the same fold.

Named after issue "Scale": "An event whose facets are superseded by a later event of the same run
or job need not have every facet validated; validate what is used, and still report malformed
facets of what is used."
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.events import JobEvent, RunEvent
from airflow_blindata.mapper.fold.core import (
    FoldBuilder,
    _fold_job,
    _itself,
    _kept_runs,
    _Order,
    fold,
    fold_jobs,
    runs_kept_whole,
    whole_run_ids,
)
from airflow_blindata.mapper.fold.reading import read_events, read_job_events
from airflow_blindata.mapper.quality import quality_retainer
from airflow_blindata.mapper.report import GapCode, Report
from tests.builders import definition
from tests.mapper.helpers import (
    BAD_DOC,
    DOC_URL,
    GOOD_DOC,
    NS,
    as_dict,
    at,
    cycle,
    histories,
    parents,
    raw_event,
    task_instance,
)

DEFINITION = definition()


def folded(events: list[Any], skim: bool) -> tuple[Any, Report]:
    report = Report()
    read = read_job_events(events, report) if skim else read_events(events, report)
    builder = FoldBuilder(retain=quality_retainer(DEFINITION))
    builder.add(read)
    return builder.result(), report


# Facets per container: repeated, changed, deleted, malformed, unknown, or sent under a key of
# their own that reading files under the spec's key (``foo`` with a known ``_schemaURL``).


@given(events=histories(), as_text=st.booleans())
def test_skimming_superseded_events_gives_the_same_fold(
    events: list[dict[str, Any]], as_text: bool
) -> None:
    """Given as decoded events, or as text (whose envelopes are read without their facets)."""
    whole, whole_report = folded(events, skim=False)
    given = [json.dumps(event) for event in events] if as_text else events
    skimmed, skim_report = folded(given, skim=True)
    assert as_dict(skimmed) == as_dict(whole)
    for name in ("eventsRead", "runEvents"):
        assert skim_report.counters.get(name) == whole_report.counters.get(name)


@given(events=histories(), skim=st.booleans())
def test_runs_left_unfolded_are_runs_the_retainer_would_drop(
    events: list[dict[str, Any]], skim: bool
) -> None:
    """Runs outside the kept ones whose events carry no facet are not folded: the same job as
    folding every run and letting the retainer judge each."""
    read = read_job_events(events, Report()) if skim else read_events(events, Report())
    retain = quality_retainer(DEFINITION)
    folded_jobs = fold_jobs(read, retain)
    if not folded_jobs:
        return
    ((job, _),) = [(item.job, item.datasets) for item in folded_jobs]
    ordered = _Order().sort([e for e in read if isinstance(e, RunEvent | JobEvent)], _itself)
    every = _fold_job(job.key, ordered)
    assert job == replace(every, runs=_kept_runs(every.runs, retain))


@given(events=histories(), skim=st.booleans())
def test_what_the_retainer_drops_never_changes_the_runs_the_lineage_comes_from(
    events: list[dict[str, Any]], skim: bool
) -> None:
    """A kept fold (its other runs reduced to what the retainer keeps) has the latest completed
    group of every run's fold: the unfinished instances that call for a stand-in are kept too,
    or the next snapshot, from the kept fold, would drop the stand-in's flows."""
    read = read_job_events(events, Report()) if skim else read_events(events, Report())
    kept = fold_jobs(read, quality_retainer(DEFINITION))
    every = fold_jobs(read)
    assert [item.job.latest_completed_group for item in kept] == [
        item.job.latest_completed_group for item in every
    ]


def out(facets: dict[str, Any] | None = None, io: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"namespace": NS, "name": "a", "facets": facets or {}, "outputFacets": io or {}}


SQL = {"sql": {"query": "SELECT 1"}}
NOMINAL = {"nominalTime": {"nominalStartTime": at(1)}}
SUBSET = {"subset": {"outputCondition": {"a": 1}}}
SCHEMA = {"schema": {"fields": [{"name": "a"}]}}


@pytest.mark.parametrize(
    ("events", "skimmed"),
    [
        # the COMPLETE sends again every key of its START: the START is skimmed
        (cycle({"job_facets": GOOD_DOC}, {"job_facets": GOOD_DOC | SQL}), 1),
        (cycle({"run_facets": NOMINAL}, {"run_facets": NOMINAL}), 1),
        (cycle({"outputs": [out(SCHEMA, SUBSET)]}, {"outputs": [out(SCHEMA, SUBSET)]}), 1),
        (cycle({"job_facets": GOOD_DOC}, {"job_facets": {"documentation": {"_deleted": True}}}), 1),
        # a key the COMPLETE lacks: the START is read whole
        (cycle({"job_facets": GOOD_DOC | SQL}, {"job_facets": GOOD_DOC}), 0),
        (cycle({"run_facets": NOMINAL}, {"job_facets": SQL}), 0),
        (cycle({"outputs": [out(io=SUBSET)]}, {"outputs": [out(SCHEMA)]}), 0),
        # a dataset's facets on another side, or another dataset, decide nothing
        (cycle({"outputs": [out(SCHEMA)]}, {"inputs": [out(SCHEMA)]}), 0),
        (cycle({"outputs": [out(SCHEMA)]}, {"outputs": [out(SCHEMA) | {"name": "b"}]}), 0),
        # a run keeps its own facets: an older run's START is not the latest run's business
        (cycle({"run_facets": NOMINAL}, {"run_facets": NOMINAL}, {"run_facets": NOMINAL}), 2),
        # an older run is skimmed when its job and dataset facets are decided (run facets are not
        # kept for it), but not a START whose run is kept with a facet only it carries
        (cycle({"run_facets": NOMINAL}, {"job_facets": SQL}, {"run_facets": NOMINAL}), 1),
        # an event with no facets has nothing to read
        (cycle({}, {}), 2),
    ],
)
def test_an_event_of_a_kept_run_is_skimmed_when_its_run_decided_every_key(
    events: list[dict[str, Any]], skimmed: int
) -> None:
    whole, _ = folded(events, skim=False)
    result, report = folded(events, skim=True)
    assert report.counters["eventsSkimmed"] == skimmed
    assert as_dict(result) == as_dict(whole)


def test_a_malformed_facet_of_the_complete_decides_nothing() -> None:
    """The START's valid documentation wins over the COMPLETE's malformed one: it is read whole
    and the malformed facet is reported, as in a fold of every event."""
    events = cycle({"job_facets": GOOD_DOC}, {"job_facets": BAD_DOC})
    result, report = folded(events, skim=True)
    assert report.counters.get("eventsSkimmed") == 0
    assert report.gap_count(GapCode.MALFORMED_FACET) == 1
    (job,) = result.jobs
    assert job.facets["documentation"].model_dump(by_alias=True)["description"] == "fine"
    assert job.latest is not None and "documentation" in job.latest.job_facets


MOVED = {"foo": {"_schemaURL": DOC_URL, "description": "moved"}}
PLAIN = {"foo": {"v": 1}}


@pytest.mark.parametrize(
    ("events", "skimmed"),
    [
        (cycle({"job_facets": MOVED}, {"job_facets": PLAIN}), 0),
        (cycle({"job_facets": PLAIN}, {"job_facets": PLAIN}, {"job_facets": MOVED}), 1),
    ],
)
def test_a_facet_filed_under_the_spec_key_is_compared_under_it(
    events: list[dict[str, Any]], skimmed: int
) -> None:
    """``foo`` with the documentation's ``_schemaURL`` is the job's documentation: an unknown
    ``foo`` of a newer event, of its run or of another, does not decide it."""
    whole, _ = folded(events, skim=False)
    result, report = folded(events, skim=True)
    assert report.counters["eventsSkimmed"] == skimmed
    assert "documentation" in result.jobs[0].facets
    assert as_dict(result) == as_dict(whole)


def test_old_runs_with_superseded_facets_are_not_validated() -> None:
    events = [
        raw_event("COMPLETE", number, f"r{number}", job_facets=GOOD_DOC) for number in range(10)
    ]
    _, report = folded(events, skim=True)
    assert report.counters["eventsSkimmed"] == 9  # only the latest run is read whole


@pytest.mark.parametrize(("state", "skimmed"), [("OVERWRITE", 9), ("RENAME", 0)])
def test_a_state_sent_on_every_write_is_skimmed_a_rename_never(state: str, skimmed: int) -> None:
    """Spark sends ``OVERWRITE`` on each ``INSERT OVERWRITE`` (``CREATE`` on each CTAS): its older
    runs are superseded like any other. A ``RENAME`` is kept apart from the states after it, so
    its event is read (a review found every lifecycle event read whole: 0 of 4,500 skimmed)."""
    facets: dict[str, Any] = {"lifecycleStateChange": {"lifecycleStateChange": state}}
    if state == "RENAME":
        facets["lifecycleStateChange"]["previousIdentifier"] = {"namespace": NS, "name": "old"}
    events = [
        json.dumps(
            raw_event(
                "COMPLETE", n, f"r{n}", outputs=[{"namespace": NS, "name": "a", "facets": facets}]
            )
        )
        for n in range(10)
    ]
    _, report = folded(events, skim=True)
    assert report.counters.get("eventsSkimmed", 0) == skimmed


def test_a_malformed_facet_of_what_is_used_is_still_reported() -> None:
    """Facet support: a malformed facet is reported; an older valid one then wins."""
    events = [
        raw_event("COMPLETE", 1, "old", job_facets=GOOD_DOC),
        raw_event("COMPLETE", 2, "mid", job_facets=GOOD_DOC),
        raw_event("COMPLETE", 3, "new", job_facets=BAD_DOC),
    ]
    result, report = folded(events, skim=True)
    assert report.gap_count(GapCode.MALFORMED_FACET) == 1
    assert report.counters["eventsSkimmed"] == 1  # "old": "mid" decided the documentation
    (job,) = result.jobs
    assert job.facets["documentation"].model_dump(by_alias=True)["description"] == "fine"


def test_malformed_facets_of_superseded_events_are_not_read() -> None:
    events = [
        raw_event("COMPLETE", 1, "old", job_facets=BAD_DOC),
        raw_event("COMPLETE", 2, "mid", job_facets=GOOD_DOC),
        raw_event("COMPLETE", 3, "new", job_facets=GOOD_DOC),
    ]
    _, report = folded(events, skim=True)
    assert report.gap_count(GapCode.MALFORMED_FACET) == 0


def test_a_skimmed_event_with_a_name_no_store_can_hold_is_unreadable() -> None:
    """Issue "One bad event": a store written by an earlier version may hold a lone surrogate;
    the fold never meets it, skimmed or not."""
    old = raw_event("COMPLETE", 1, "old", outputs=[{"namespace": NS, "name": "bad \udc80"}])
    events = [old, raw_event("COMPLETE", 2, "mid"), raw_event("COMPLETE", 3, "new")]
    result, report = folded(events, skim=True)
    assert report.gap_count(GapCode.UNREADABLE_EVENT) == 1
    (job,) = result.jobs
    assert job.written == [] and result.datasets == []


def test_a_skimmed_event_with_a_bad_string_in_a_superseded_facet_is_unreadable() -> None:
    """A full read finds the event unreadable, whatever its facets: so does a skim, and the
    START's state and time are not in the fold."""
    bad = {"documentation": {"description": "bad \udc80"}}
    events = cycle({"job_facets": bad}, {"job_facets": GOOD_DOC})
    result, report = folded(events, skim=True)
    assert report.gap_count(GapCode.UNREADABLE_EVENT) == 1
    (job,) = result.jobs
    assert job.latest is not None and job.latest.start_time is None


@st.composite
def run_cycles(draw: st.DrawFn, map_indexes: bool = False) -> list[dict[str, Any]]:
    """Events of a few runs of two jobs, any type (OTHER and no type too), times often tied;
    with ``map_indexes``, runs of Airflow task instances (``r1``, ``r4``: instance 0, ``r2``,
    ``r5``: 1)."""
    types = st.sampled_from(["START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER", None])
    names = ["r1", "r2", "r3", "r4", "r5"] if map_indexes else ["r1", "r2", "r3"]
    index = {"r1": 0, "r2": 1, "r4": 0, "r5": 1} if map_indexes else {}
    events = []
    for _ in range(draw(st.integers(1, 12))):
        run = draw(st.sampled_from(names))
        event = raw_event("START", draw(st.integers(0, 5)), run)
        event["eventType"] = draw(types)
        event["job"]["name"] = draw(st.sampled_from(["one", "two"]))
        event["run"]["facets"] = draw(parents(draw(st.sampled_from([None, "p1", "p2"])))) | (
            task_instance(index.get(run))
        )
        events.append(event)
    return events


@given(events=run_cycles())
def test_the_runs_kept_whole_are_the_latest_and_latest_completed_group_of_the_fold(
    events: list[dict[str, Any]],
) -> None:
    """``runs_kept_whole`` ranks runs without folding them: the same runs as the fold's."""
    read = read_events(events, Report())
    expected = {
        (job.key, run.run_id)
        for job in fold(read).jobs
        for run in (job.latest, *job.latest_completed_group)
        if run is not None
    }
    assert runs_kept_whole(e for e in read if isinstance(e, RunEvent)) == expected


@given(events=run_cycles(map_indexes=True))
def test_the_runs_kept_whole_hold_the_runs_the_fold_keeps_whole_for_airflow_task_instances(
    events: list[dict[str, Any]],
) -> None:
    """Of Airflow task instances too: the latest completed group with its stand-ins for the
    instances that did not complete (``whole_run_ids``); the ranking may keep more whole."""
    read = read_events(events, Report())
    expected = {
        (folded.job.key, run_id) for folded in fold_jobs(read) for run_id in whole_run_ids(folded)
    }
    assert runs_kept_whole(e for e in read if isinstance(e, RunEvent)) >= expected


@pytest.mark.parametrize("as_text", [False, True])
def test_io_facets_under_the_models_field_name_are_not_skimmed_away(as_text: bool) -> None:
    """``output_facets`` is read by the model as ``outputFacets`` is: a START sending output
    statistics that way, its COMPLETE sending none, keeps them as a full read does."""
    stats = {"outputStatistics": {"rowCount": 3}}
    start = raw_event(
        "START", 1, "r1", outputs=[{"namespace": NS, "name": "a", "output_facets": stats}]
    )
    complete = raw_event("COMPLETE", 2, "r1", outputs=[{"namespace": NS, "name": "a"}])
    whole, _ = folded([start, complete], skim=False)
    given = [json.dumps(e) for e in (start, complete)] if as_text else [start, complete]
    skimmed, _ = folded(given, skim=True)
    assert as_dict(skimmed) == as_dict(whole)
    assert "outputStatistics" in str(as_dict(whole))
