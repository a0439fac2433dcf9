"""Bad input gets a clear error or a reported gap and loses nothing; one malformed event must
never stop every sync.

Adversarial events (values of the wrong JSON type anywhere, ``_deleted`` in odd places and with
odd values, odd times, run ids and names, numbers out of range, strings no store can hold) are
stored among good ones of the same job, a snapshot after each batch: the first snapshot reads
them, the next extends the job's kept fold with a later run. No snapshot raises, each is the plan
of reading every stored event at once (``build``), and every event given is stored, a duplicate
or quarantined with its reason: none vanishes.
"""

from __future__ import annotations

import copy
import json
import tempfile
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import open_store
from tests.builders import (
    at,
    column_lineage_facet,
    dataset,
    documentation_facet,
    input_field,
    job_event,
    run_event,
    schema_facet,
    sql_facet,
)
from tests.sync.helpers import assert_read_at_once

from .helpers import definition

JOB = "orders.load"


def _run(second: int, run: int, event_type: str = "COMPLETE") -> dict[str, Any]:
    lineage = column_lineage_facet(
        {"x": [input_field("s.in", "a")], "y": [input_field("s.out", "y")]}
    )
    return run_event(
        JOB,
        event_type=event_type,
        time=at(second),
        run_id=f"00000000-0000-4000-8000-{run:012d}",
        inputs=[dataset("s.in", facets=schema_facet("a", "b"))],
        outputs=[
            dataset(
                "s.out",
                facets={**schema_facet("x", "y"), **documentation_facet("d"), **lineage},
                output_facets={"outputStatistics": {"rowCount": 3}},
            )
        ],
        job_facets=sql_facet("INSERT INTO s.out SELECT a AS x, b AS y FROM s.in"),
        run_facets={"nominalTime": {"nominalStartTime": at(second)}},
    )


ODD = st.sampled_from(
    [
        None,
        [],
        [1, "a"],
        "",
        "text",
        "\x00",
        "\ud800",
        "é/名/\u202e",
        0,
        -0.0,
        1e308,
        float("inf"),
        float("nan"),
        10**30,
        True,
        {},
        {"_deleted": True},
        {"_deleted": "yes"},
        {"_deleted": None},
        {"_deleted": True, "fields": 3},
        "2026-11-29T10:00:05+14:00",
        "9999-12-31T23:59:59Z",
        "0001-01-01T00:00:00Z",
        "not a time",
        "complete",
        "OTHER",
        "x" * 2000,
    ]
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place of a JSON value (the root excluded)."""
    found = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


@st.composite
def spoiled(draw: st.DrawFn, event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with one to three values replaced by odd ones, or odd keys added."""
    event = copy.deepcopy(event)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(event)))
        holder = event
        for step in path[:-1]:
            holder = holder[step]
        if draw(st.booleans()) or not isinstance(holder, dict):
            holder[path[-1]] = copy.deepcopy(draw(ODD))
        else:
            holder[draw(st.sampled_from(["_deleted", "facets", "Name", "input_facets"]))] = (
                copy.deepcopy(draw(ODD))
            )
    return event


@st.composite
def batches(draw: st.DrawFn) -> list[list[dict[str, Any]]]:
    """A good run, then spoiled events of the job (a later run, a JobEvent, the same run), then
    a later good run: the second and third snapshots extend, or read the job whole."""
    first = [_run(0, 1, "START"), _run(1, 1)]
    bad = [
        draw(spoiled(_run(5, 2))),
        draw(spoiled(job_event(JOB, time=at(6), outputs=[dataset("s.out")]))),
    ]
    if draw(st.booleans()):
        bad.append(draw(spoiled(_run(1, 1))))
    return [first, draw(st.permutations(bad)), [_run(9, 3, "START"), _run(10, 3)]]


def _text(event: Any) -> str:
    return json.dumps(event)  # NaN and Infinity as json.dumps writes them; "\ud800" escaped


@given(events=batches())
def test_spoiled_events_between_snapshots_plan_as_read_at_once_and_none_vanish(
    events: list[list[dict[str, Any]]],
) -> None:
    with (
        tempfile.TemporaryDirectory() as directory,
        open_store(f"sqlite:///{directory}/events.db") as store,
    ):
        for batch in events:
            counts = store.append_many([_text(event) for event in batch])
            assert counts.accepted + counts.duplicate + counts.quarantined == len(batch)
            assert all(counts.quarantine_reasons.values())  # each with its reason
            planned = plan_from_store(store, definition())
            stored = [event.payload for event in store.events()]
            assert_read_at_once(planned, build(stored, definition()))


def test_a_malformed_facet_in_a_new_run_of_a_kept_job_is_a_gap_at_the_next_snapshot(
    store_url: str,
) -> None:
    """The job was planned and its fold kept; its next run carries facets that are not objects,
    a schema whose ``fields`` is a string, and ``_deleted`` that is not a boolean: each is
    reported, the rest of the run is read."""
    later = _run(5, 2)
    later["job"]["facets"]["sql"] = ["not", "an", "object"]
    later["run"]["facets"]["nominalTime"] = "soon"
    later["outputs"][0]["facets"]["schema"]["fields"] = "x, y"
    later["outputs"][0]["facets"]["documentation"] = {"_deleted": "yes"}
    with open_store(store_url) as store:
        store.append_many([_text(_run(0, 1))])
        first = plan_from_store(store, definition())
        assert first.report.gap_count(GapCode.MALFORMED_FACET) == 0
        store.append_many([_text(later)])
        second = plan_from_store(store, definition())
        assert second.report.gap_count(GapCode.MALFORMED_FACET) == 4
        assert second.report.counters["eventsRead"] == 2
        stored = [event.payload for event in store.events()]
        assert_read_at_once(second, build(stored, definition()))


CONTAINERS: list[tuple[str, tuple[Any, ...], str]] = [
    ("run facets", ("run", "facets"), f"airflow/{JOB}"),
    ("job facets", ("job", "facets"), f"airflow/{JOB}"),
    ("dataset facets", ("outputs", 0, "facets"), "postgres://db:5432/s.out"),
    ("input facets", ("inputs", 0, "inputFacets"), "postgres://db:5432/s.in"),
    ("output facets", ("outputs", 0, "outputFacets"), "postgres://db:5432/s.out"),
]


@pytest.mark.parametrize("value", [[], "x", 3], ids=["list", "string", "number"])
@pytest.mark.parametrize(("container", "path", "where"), CONTAINERS, ids=[c[0] for c in CONTAINERS])
def test_a_facet_container_that_is_not_an_object_is_a_gap(
    store_url: str, container: str, path: tuple[Any, ...], where: str, value: Any
) -> None:
    """Seed 001 MALFORMED_FACET, "a `facets` container that is not an object" (facet-support):
    a run whose only facets are such a container carried no facet key, so its reading skimmed
    it and the gap was never reported, read at once or job by job."""
    expected = [f"{where}: facets: not an object ({type(value).__name__})"]
    _assert_reported_at_once_and_by_job(store_url, _with_container(path, value), expected)


@pytest.mark.parametrize(
    ("facets", "issue"),
    [
        ({"acme": 5}, "acme: not an object (int)"),
        ({"acme": [1]}, "acme: not an object (list)"),
        ({"_deleted": True}, "_deleted: not an object (bool)"),
    ],
    ids=["number", "list", "deletion marker as a container"],
)
@pytest.mark.parametrize(("container", "path", "where"), CONTAINERS, ids=[c[0] for c in CONTAINERS])
def test_a_facet_that_is_not_an_object_under_an_unknown_key_is_a_gap(
    store_url: str,
    container: str,
    path: tuple[Any, ...],
    where: str,
    facets: dict[str, Any],
    issue: str,
) -> None:
    """Seed 001 MALFORMED_FACET: a facet is an object. One under a key nobody knows filed no
    key, so the skimming reading skimmed its run and the gap was never reported (one under a
    known key, ``"schema": 5``, was)."""
    expected = [f"{where}: {issue}"]
    _assert_reported_at_once_and_by_job(store_url, _with_container(path, facets), expected)


def _with_container(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A run of ``JOB`` reading ``s.in`` and writing ``s.out``, ``value`` at ``path``."""
    event = run_event(
        JOB,
        inputs=[dataset("s.in", input_facets={})],
        outputs=[dataset("s.out", output_facets={})],
    )
    holder: Any = event
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = value
    return event


def _assert_reported_at_once_and_by_job(
    store_url: str, event: dict[str, Any], expected: list[str]
) -> None:
    assert build([_text(event)], definition()).report.gaps[GapCode.MALFORMED_FACET].examples == (
        expected
    )
    with open_store(store_url) as store:
        store.append_many([_text(event)])
        planned = plan_from_store(store, definition())
        assert planned.report.gaps[GapCode.MALFORMED_FACET].examples == expected
