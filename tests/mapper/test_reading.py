"""A snapshot validates the facets that contribute and skims the rest, with the same fold.

Named after issue "Scale": "An event whose facets are superseded by a later event of the same run
or job need not have every facet validated; validate what is used, and still report malformed
facets of what is used."
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_blindata.events import RunEvent
from airflow_blindata.mapper.fold import FoldBuilder, fold, runs_kept_whole
from airflow_blindata.mapper.quality import quality_retainer
from airflow_blindata.mapper.reading import read_events, read_job_events
from airflow_blindata.mapper.report import GapCode, Report
from tests.builders import definition, run_event

from .test_fold import NS, at

DEFINITION = definition()
GOOD_DOC = {"documentation": {"description": "fine"}}
BAD_DOC = {"documentation": {"description": {"not": "text"}}}


def raw_event(
    event_type: str,
    second: int,
    run_id: str,
    *,
    job_facets: dict[str, Any] | None = None,
    outputs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return run_event(
        "pv.aggregate",
        namespace="halden",
        event_type=event_type,
        time=at(second),
        run_id=run_id,
        job_facets=job_facets,
        outputs=outputs or (),
        producer="https://example.com/p",
    )


def folded(events: list[Any], skim: bool) -> tuple[Any, Report]:
    report = Report()
    read = read_job_events(events, report) if skim else read_events(events, report)
    builder = FoldBuilder(retain=quality_retainer(DEFINITION))
    builder.add(read)
    return builder.result(), report


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Runs of one job whose facets repeat, change, are deleted, or are malformed."""
    facet = st.sampled_from(
        [
            {},
            GOOD_DOC,
            BAD_DOC,
            {"documentation": {"_deleted": True}},
            {"sql": {"query": "SELECT 1"}},
            {"sql": {"query": 7}},
            {"acme": {"v": 1}},
        ]
    )
    events = []
    for number in range(draw(st.integers(1, 6))):
        run = f"r{number}"
        for event_type, second in (("START", 2 * number), ("COMPLETE", 2 * number + 1)):
            if draw(st.integers(0, 5)) == 0:
                event_type = draw(st.sampled_from(["FAIL", "RUNNING", "ABORT"]))
            outputs = [
                {"namespace": NS, "name": name, "facets": draw(facet)}
                for name in draw(st.lists(st.sampled_from(["a", "b"]), max_size=2))
            ]
            second = draw(st.sampled_from([second, 0]))  # ties are common
            events.append(
                raw_event(event_type, second, run, job_facets=draw(facet), outputs=outputs)
            )
    return events


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=histories())
def test_skimming_superseded_events_gives_the_same_fold(events: list[dict[str, Any]]) -> None:
    whole, whole_report = folded(events, skim=False)
    skimmed, skim_report = folded(events, skim=True)
    assert skimmed.model_dump() == whole.model_dump()
    for name in ("eventsRead", "runEvents"):
        assert skim_report.counters.get(name) == whole_report.counters.get(name)


def test_a_job_with_two_runs_at_most_is_read_whole_at_once() -> None:
    """Both runs are kept whole: reading their envelopes first would only cost time."""
    events = [raw_event("COMPLETE", n, f"r{n}", job_facets=GOOD_DOC) for n in range(2)]
    _, report = folded(events, skim=True)
    assert report.counters["eventsSkimmed"] == 0 and report.counters["eventsRead"] == 2


def test_old_runs_with_superseded_facets_are_not_validated() -> None:
    events = [
        raw_event("COMPLETE", number, f"r{number}", job_facets=GOOD_DOC) for number in range(10)
    ]
    _, report = folded(events, skim=True)
    assert report.counters["eventsSkimmed"] == 9  # only the latest run is read whole


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


@st.composite
def run_cycles(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Events of a few runs of two jobs, any type (OTHER and no type too), times often tied."""
    types = st.sampled_from(["START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER", None])
    events = []
    for _ in range(draw(st.integers(1, 12))):
        event = raw_event(
            "START", draw(st.integers(0, 5)), draw(st.sampled_from(["r1", "r2", "r3"]))
        )
        event["eventType"] = draw(types)
        event["job"]["name"] = draw(st.sampled_from(["one", "two"]))
        events.append(event)
    return events


@settings(max_examples=300, deadline=None)
@given(events=run_cycles())
def test_the_runs_kept_whole_are_the_latest_and_latest_completed_of_the_fold(
    events: list[dict[str, Any]],
) -> None:
    """``runs_kept_whole`` ranks runs without folding them: the same runs as the fold's."""
    read = read_events(events, Report())
    expected = {
        (job.key, run.run_id)
        for job in fold(read).jobs
        for run in (job.latest, job.latest_completed)
        if run is not None
    }
    assert runs_kept_whole(e for e in read if isinstance(e, RunEvent)) == expected
