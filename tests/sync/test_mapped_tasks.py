"""The instances of a mapped task give their own lineage, whichever way the store is read.

Named after the known gap of Airflow dynamic task mapping (``.expand()``): each map index of a
task is a run of its own of the same job, and the ``parent`` run facet of each names the same
DAG run. The job's latest description is its latest completed run with the other completed runs
of that DAG run (``JobFold.latest_completed_group``): read at once, job by job from the store,
from a kept fold extended with the instances that completed since, or a slice of time at a time,
the plan is the same.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.plans import store as mapping
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import open_store
from tests.builders import dataset, facet, parent_facet, run_event
from tests.mapper.helpers import pairs
from tests.sync.helpers import assert_read_at_once

from .helpers import definition

BASE = datetime(2026, 3, 1, tzinfo=UTC)


def dag_run_id(day: int) -> str:
    return f"0190b1c2-0000-7000-8000-{day:012d}"


def task_run_id(day: int, index: int) -> str:
    return f"0190b1c2-0000-7000-9000-{day * 100 + index:012d}"


def mapped(
    day: int, instances: range, *, start: int = 0, spacing: int = 2, lasting: int = 1
) -> list[dict[str, Any]]:
    """The instances of ``etl.copy`` in the DAG run of ``day``: each a run of its own naming that
    DAG run as its parent, reading ``in_<index>`` and writing ``out_<index>``, START then
    COMPLETE (``lasting`` seconds later), one instance starting every ``spacing`` seconds."""
    events = []
    for index in instances:
        facets = {
            **parent_facet("etl", dag_run_id(day)),
            "airflow_mappedTask": facet(
                "RunFacet", mapIndex=index, operatorClass="airflow.operators.python.PythonOperator"
            ),
        }
        begin = BASE + timedelta(days=day, seconds=start + index * spacing)
        for kind, moment in (("START", begin), ("COMPLETE", begin + timedelta(seconds=lasting))):
            events.append(
                run_event(
                    "etl.copy",
                    event_type=kind,
                    run_id=task_run_id(day, index),
                    time=moment.isoformat(),
                    run_facets=facets,
                    inputs=[dataset(f"public.in_{index}")],
                    outputs=[dataset(f"public.out_{index}")],
                )
            )
    return events


def copies(indexes: range) -> set[tuple[str, str]]:
    return {(f"in_{index}", f"out_{index}") for index in indexes}


def test_every_instance_of_the_latest_dag_run_gives_its_lineage_read_at_once() -> None:
    """Not the instances of an older DAG run: the latest description is the latest DAG run's."""
    events = mapped(0, range(4)) + mapped(1, range(3))
    assert pairs(build(events, definition())) == copies(range(3))


def test_a_mapped_task_read_job_by_job_from_the_store_plans_as_read_at_once(
    store_url: str,
) -> None:
    events = mapped(0, range(4)) + mapped(1, range(3))
    with open_store(store_url) as store:
        store.append_many(json.dumps(event) for event in events)
        planned = plan_from_store(store, definition())
        assert_read_at_once(planned, build(events, definition()))
        assert pairs(planned) == copies(range(3))
        again = plan_from_store(store, definition())  # the kept fold, loaded as it is
        assert again.report.counters["jobsUnchanged"] == 1
        assert_read_at_once(again, build(events, definition()))


def test_instances_that_complete_after_the_fold_was_kept_are_added_to_its_group(
    store_url: str,
) -> None:
    """A snapshot comes after the first instances completed: the next adds the others to the
    kept fold, and their lineage to the plan; a newer DAG run's instances then replace them."""
    first, rest, next_day = mapped(0, range(2)), mapped(0, range(2, 5)), mapped(1, range(2))
    with open_store(store_url) as store:
        history: list[dict[str, Any]] = []
        for arrived, expected in ((first, range(2)), (rest, range(5)), (next_day, range(2))):
            history += arrived
            store.append_many(json.dumps(event) for event in arrived)
            planned = plan_from_store(store, definition())
            assert_read_at_once(planned, build(history, definition()))
            assert pairs(planned) == copies(expected)
            if arrived is not first:
                assert planned.report.counters["jobsExtended"] == 1


def test_instances_still_running_when_the_fold_was_kept_are_added_to_its_group(
    store_url: str,
) -> None:
    """The fold is kept while instances run (their START folded, held whole as open runs)."""
    events = mapped(0, range(4), spacing=1, lasting=10)
    mark = (BASE + timedelta(seconds=10)).isoformat()
    before = [event for event in events if event["eventTime"] <= mark]
    since = [event for event in events if event["eventTime"] > mark]
    assert before and since
    with open_store(store_url) as store:
        store.append_many(json.dumps(event) for event in before)
        assert_read_at_once(plan_from_store(store, definition()), build(before, definition()))
        store.append_many(json.dumps(event) for event in since)
        planned = plan_from_store(store, definition())
        assert planned.report.counters["jobsExtended"] == 1
        assert_read_at_once(planned, build(events, definition()))
        assert pairs(planned) == copies(range(4))


def test_dag_runs_whose_instances_interleave_plan_as_read_at_once(store_url: str) -> None:
    """Two DAG runs at once (``max_active_runs`` > 1): the latest completed instance changes
    DAG run from one snapshot to the next, back to one whose older instances the kept fold did
    not keep whole. That fold cannot take the new events; the job is read again, the same plan."""
    one = mapped(0, range(4), spacing=4)
    other = mapped(0, range(4), start=2, spacing=4)  # the same times, 2 s later, another DAG run
    for event in other:
        event["run"]["runId"] = event["run"]["runId"].replace("-9000-", "-9099-")
        event["run"]["facets"] = {
            **event["run"]["facets"],
            **parent_facet("etl", dag_run_id(99)),
        }
        for item in event["outputs"]:
            item["name"] = item["name"].replace("out_", "other_")
    events = sorted(one + other, key=lambda event: str(event["eventTime"]))
    with open_store(store_url) as store:
        history: list[dict[str, Any]] = []
        for cut in range(0, len(events), 3):
            arrived = events[cut : cut + 3]
            history += arrived
            store.append_many(json.dumps(event) for event in arrived)
            assert_read_at_once(plan_from_store(store, definition()), build(history, definition()))
    assert pairs(build(events, definition())) == {
        (f"in_{index}", f"other_{index}") for index in range(4)
    }


@pytest.mark.parametrize("size", [2, 3, 5])
def test_a_group_across_slices_of_a_long_history_plans_as_read_at_once(
    store_url: str, size: int
) -> None:
    """A long history read a slice of time at a time: the latest DAG run's instances span
    several slices."""
    events = mapped(0, range(3)) + mapped(1, range(3)) + mapped(2, range(6))
    with mock.patch.object(mapping, "SLICE_EVENTS", size), open_store(store_url) as store:
        store.append_many(json.dumps(event) for event in events)
        planned = plan_from_store(store, definition())
        assert planned.report.counters["jobsReadInSlices"] == 1
        assert_read_at_once(planned, build(events, definition()))
        assert pairs(planned) == copies(range(6))
        more = mapped(2, range(6, 9)) + mapped(3, range(2))
        for part in (more[:6], more[6:]):  # the group grows, then a newer DAG run replaces it
            events += part
            store.append_many(json.dumps(event) for event in part)
            planned = plan_from_store(store, definition())
            assert planned.report.counters["jobsExtended"] == 1
            assert_read_at_once(planned, build(events, definition()))
        assert pairs(planned) == copies(range(2))


def airflow_instances(day: int, states: dict[int, str]) -> list[dict[str, Any]]:
    """Instances of ``etl.copy`` in the DAG run of ``day`` as Airflow 3's provider sends them (the
    ``airflow`` run facet naming each one's map index), each START then its end in ``states``
    (``COMPLETE``, ``FAIL``, or ``""``: still running)."""
    events = mapped(day, range(max(states) + 1))
    kept: list[dict[str, Any]] = []
    for event in events:
        index = int(event["outputs"][0]["name"].rsplit("_", 1)[1])
        if index not in states:
            continue
        event["run"]["facets"] = {
            **parent_facet("etl", dag_run_id(day)),
            "airflow": {"taskInstance": {"map_index": index, "try_number": 1}},
        }
        if event["eventType"] == "COMPLETE":
            if not states[index]:
                continue
            event["eventType"] = states[index]
        kept.append(event)
    return kept


def later(events: list[dict[str, Any]], *, minutes: int) -> list[dict[str, Any]]:
    """``events``, each ``minutes`` later (in place)."""
    for event in events:
        moment = datetime.fromisoformat(event["eventTime"]) + timedelta(minutes=minutes)
        event["eventTime"] = moment.isoformat()
    return events


@pytest.mark.parametrize(
    "arrivals",
    [
        pytest.param(
            [
                {0: "COMPLETE", 1: "COMPLETE", 2: "COMPLETE"},
                {0: "COMPLETE", 1: "COMPLETE", 2: "FAIL"},
            ],
            id="one-instance-failed-in-the-next-dag-run",
        ),
        pytest.param(
            [
                {0: "COMPLETE", 1: "COMPLETE", 2: "COMPLETE"},
                {2: "FAIL"},
                {0: "COMPLETE", 1: "COMPLETE"},
            ],
            id="it-failed-before-any-other-instance-completed",
        ),
        pytest.param(
            [{0: "COMPLETE", 1: "COMPLETE", 2: "COMPLETE"}, {0: "COMPLETE", 1: "", 2: ""}],
            id="two-instances-still-running",
        ),
    ],
)
def test_an_instance_that_failed_keeps_its_lineage_from_snapshot_to_snapshot(
    store_url: str, arrivals: list[dict[int, str]]
) -> None:
    """A failed instance of a mapped task is described by the run it completed in an earlier
    DAG run (docs/mapping-reference.md), through kept folds extended snapshot after snapshot,
    as when every event is read at once: its flows are never dropped, so never removed."""
    with open_store(store_url) as store:
        history: list[dict[str, Any]] = []
        for day, states in enumerate(arrivals):
            # a later arrival of the same DAG run comes later in time
            arrived = later(airflow_instances(min(day, 1), states), minutes=day)
            history += arrived
            store.append_many(json.dumps(event) for event in arrived)
            planned = plan_from_store(store, definition())
            assert_read_at_once(planned, build(history, definition()))
            assert pairs(planned) == copies(range(3))
        again = plan_from_store(store, definition())  # nothing new: the kept fold
        assert again.report.counters["jobsUnchanged"] == 1
        assert pairs(again) == copies(range(3))


def instance_run(dag_run: int, index: int, state: str, second: int, output: str) -> list[Any]:
    """One instance of ``etl.copy`` in DAG run ``dag_run``: START at ``second``, its end
    (``state``) a second later, reading ``in_<index>`` and writing ``output``."""
    facets = {
        **parent_facet("etl", dag_run_id(dag_run)),
        "airflow": {"taskInstance": {"map_index": index, "try_number": 1}},
    }
    return [
        run_event(
            "etl.copy",
            event_type=kind,
            run_id=task_run_id(dag_run, index),
            time=(BASE + timedelta(seconds=second + step)).isoformat(),
            run_facets=facets,
            inputs=[dataset(f"public.in_{index}")],
            outputs=[dataset(f"public.{output}")],
        )
        for step, kind in enumerate(("START", state))
    ]


def test_a_stand_in_the_kept_fold_let_go_has_the_job_read_again(store_url: str) -> None:
    """Two DAG runs at once: the other DAG run's instance 2 ends after this one's, then this
    DAG run's instance 0 completes last, so the kept fold keeps this DAG run's instances whole
    and lets the other's go. A newer DAG run whose instance 2 fails calls for the latest
    instance 2 completed before it, the other DAG run's: the kept fold no longer has it, so the
    job is read again (``FoldedJob.dropped_indexes``), the plan the same as read at once."""
    first = [
        *instance_run(1, 2, "COMPLETE", 0, "out_2"),
        *instance_run(9, 2, "COMPLETE", 10, "other_2"),  # the other DAG run's, ended later
        *instance_run(1, 0, "COMPLETE", 20, "out_0"),  # this DAG run's instance 0, the latest
    ]
    then = [
        *instance_run(2, 0, "COMPLETE", 30, "out_0"),
        *instance_run(2, 2, "FAIL", 40, "out_2"),
    ]
    with open_store(store_url) as store:
        store.append_many(json.dumps(event) for event in first)
        assert pairs(plan_from_store(store, definition())) == {("in_2", "out_2"), ("in_0", "out_0")}
        store.append_many(json.dumps(event) for event in then)
        planned = plan_from_store(store, definition())
        assert_read_at_once(planned, build(first + then, definition()))
        assert pairs(planned) == {("in_0", "out_0"), ("in_2", "other_2")}


def dag_event(dag_run: int, kind: str, second: int) -> dict[str, Any]:
    """The DAG ``etl``'s own event of its run ``dag_run`` (the provider's DAG run START and end)."""
    return run_event(
        "etl",
        event_type=kind,
        run_id=dag_run_id(dag_run),
        time=(BASE + timedelta(seconds=second)).isoformat(),
    )


def test_an_instance_not_run_yet_in_a_dag_run_under_way_keeps_its_lineage(
    store_url: str,
) -> None:
    """A snapshot taken while a mapped task's instances wait in the queue: those that have not
    run in the DAG run yet are described by their runs of the DAG run before, as a failed one
    is, kept fold after kept fold, as when read at once (their flows were dropped, the cleanup
    removed them, and the next snapshot made them again). Once the DAG run has completed, an
    instance it did not run is no longer mapped (the list shrank): it describes nothing."""
    earlier = [
        dag_event(1, "START", 0),
        *(e for i in range(3) for e in instance_run(1, i, "COMPLETE", 1 + 2 * i, f"out_{i}")),
        dag_event(1, "COMPLETE", 9),
    ]
    arrivals = [
        (earlier, copies(range(3))),
        (
            [dag_event(2, "START", 20), *instance_run(2, 0, "COMPLETE", 21, "out_0")],
            copies(range(3)),
        ),
        (instance_run(2, 1, "COMPLETE", 23, "out_1"), copies(range(3))),
        ([dag_event(2, "COMPLETE", 30)], copies(range(2))),  # instance 2 no longer mapped
    ]
    with open_store(store_url) as store:
        history: list[dict[str, Any]] = []
        for arrived, expected in arrivals:
            history += arrived
            store.append_many(json.dumps(event) for event in arrived)
            planned = plan_from_store(store, definition())
            assert_read_at_once(planned, build(history, definition()))
            assert pairs(planned) == expected


def test_without_the_dags_own_events_an_instance_not_run_describes_nothing() -> None:
    """``dag.test()`` and ``emit_dag_events: false`` send no DAG run events: whether the DAG
    run goes on is not known, and the latest DAG run's instances are the task's lineage."""
    events = [
        *(e for i in range(3) for e in instance_run(1, i, "COMPLETE", 1 + 2 * i, f"out_{i}")),
        *instance_run(2, 0, "COMPLETE", 21, "out_0"),
    ]
    assert pairs(build(events, definition())) == copies(range(1))
    dag_runs = [dag_event(1, "START", 0), dag_event(1, "COMPLETE", 9), dag_event(2, "START", 20)]
    assert pairs(build([*dag_runs, *events], definition())) == copies(range(3))


@pytest.mark.parametrize(
    ("sentence", "dag_runs", "expected"),
    [
        (
            "a map that shrank in the DAG run before does not come back in the next one",
            [
                *(e for i in range(3) for e in instance_run(1, i, "COMPLETE", 1 + i, f"out_{i}")),
                dag_event(1, "COMPLETE", 9),
                dag_event(2, "START", 10),
                *instance_run(2, 0, "COMPLETE", 11, "out_0"),
                dag_event(2, "COMPLETE", 19),
                dag_event(3, "START", 20),
                *instance_run(3, 0, "COMPLETE", 21, "out_0"),
            ],
            copies(range(1)),
        ),
        (
            "a DAG run that failed has ended: an instance it did not run describes nothing",
            [
                *(e for i in range(3) for e in instance_run(1, i, "COMPLETE", 1 + i, f"out_{i}")),
                dag_event(1, "COMPLETE", 9),
                dag_event(2, "START", 10),
                *instance_run(2, 0, "COMPLETE", 11, "out_0"),
                dag_event(2, "FAIL", 19),
            ],
            copies(range(1)),
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "_",
)
def test_instances_of_a_dag_run_under_way_follow_the_dags_run_before(
    sentence: str, dag_runs: list[dict[str, Any]], expected: set[tuple[str, str]]
) -> None:
    starts = [dag_event(1, "START", 0)]
    assert pairs(build([*starts, *dag_runs], definition())) == expected


def ol_dag_run(dag_run: int, clear: int) -> str:
    """The OpenLineage run of a DAG run after ``clear`` clears: a new one each time."""
    return f"0190b1c2-0000-7000-8{clear:03d}-{dag_run:012d}"


def cleared(dag_run: int, clear: int, index: int, second: int) -> list[dict[str, Any]]:
    """Instance ``index`` of ``etl.copy`` in Airflow's ``run<dag_run>`` after ``clear`` clears,
    as the provider sends it: its parent the clear's OpenLineage run, its ``airflow`` facet the
    Airflow DAG run (the same across clears)."""
    facets = {
        **parent_facet("etl", ol_dag_run(dag_run, clear)),
        "airflow": {
            "taskInstance": {"map_index": index, "try_number": 1 + clear},
            "dagRun": {"run_id": f"run{dag_run}", "clear_number": clear},
        },
    }
    return [
        run_event(
            "etl.copy",
            event_type=kind,
            run_id=f"0190b1c2-0000-7000-9{clear:03d}-{dag_run * 100 + index:012d}",
            time=(BASE + timedelta(seconds=second + step)).isoformat(),
            run_facets=facets,
            inputs=[dataset(f"public.in_{index}")],
            outputs=[dataset(f"public.out_{index}")],
        )
        for step, kind in enumerate(("START", "COMPLETE"))
    ]


def cleared_dag_event(dag_run: int, clear: int, kind: str, second: int) -> dict[str, Any]:
    return run_event(
        "etl",
        event_type=kind,
        run_id=ol_dag_run(dag_run, clear),
        time=(BASE + timedelta(seconds=second)).isoformat(),
        run_facets={
            "airflowDagRun": {"dagRun": {"run_id": f"run{dag_run}", "clear_number": clear}}
        },
    )


def test_one_instance_cleared_and_run_again_leaves_the_others_their_lineage(
    store_url: str,
) -> None:
    """Found through a real scheduler: clearing one instance of a mapped task gives its DAG run a
    new OpenLineage run (the provider counts the clears), and the instance run again made a
    group of one: the others' flows were removed. A task's instances are grouped by their
    Airflow DAG run across its clears. The next DAG run, under way, then still finds the
    instances of the one before in it, cleared or not."""
    first = [
        cleared_dag_event(1, 0, "START", 0),
        *(e for i in range(3) for e in cleared(1, 0, i, 1 + 2 * i)),
        cleared_dag_event(1, 0, "COMPLETE", 9),
    ]
    again = [
        cleared_dag_event(1, 1, "START", 20),
        *cleared(1, 1, 1, 21),
        cleared_dag_event(1, 1, "COMPLETE", 25),
    ]
    next_run = [cleared_dag_event(2, 0, "START", 40), *cleared(2, 0, 0, 41)]
    with open_store(store_url) as store:
        history: list[dict[str, Any]] = []
        for arrived in (first, again, next_run):
            history += arrived
            store.append_many(json.dumps(event) for event in arrived)
            planned = plan_from_store(store, definition())
            assert_read_at_once(planned, build(history, definition()))
            assert pairs(planned) == copies(range(3))


def bare_dag_event(dag_run: int, clear: int, kind: str, second: int) -> dict[str, Any]:
    """``cleared_dag_event`` without the ``airflowDagRun`` facet (the task events still say)."""
    event = cleared_dag_event(dag_run, clear, kind, second)
    event["run"]["facets"] = {}
    return event


@pytest.mark.parametrize(
    ("sentence", "arrivals"),
    [
        (
            "the DAG's own events need not name the Airflow DAG run",
            [
                [
                    bare_dag_event(1, 0, "START", 0),
                    *(e for i in range(3) for e in cleared(1, 0, i, 1 + 2 * i)),
                    bare_dag_event(1, 0, "COMPLETE", 9),
                ],
                [bare_dag_event(2, 0, "START", 40), *cleared(2, 0, 0, 41)],
            ],
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "_",
)
def test_instances_not_run_yet_keep_their_lineage_whatever_the_dag_events_say(
    sentence: str, arrivals: list[list[dict[str, Any]]]
) -> None:
    """A review: without ``airflowDagRun`` on the DAG's events, the Airflow DAG run before the
    one going on was not known, and the instances not run yet in it lost their flows; the task's
    own runs under it name it."""
    history: list[dict[str, Any]] = []
    for arrived in arrivals:
        history += arrived
        assert pairs(build(history, definition())) == copies(range(3))


@pytest.mark.parametrize(
    ("sentence", "arrivals", "expected"),
    [
        (
            "an instance that failed without ever completing gives the lineage of its run",
            [{0: "COMPLETE", 1: "FAIL", 2: "COMPLETE"}],
            range(3),
        ),
        (
            "so does one still running while the others completed",
            [{0: "COMPLETE", 1: ""}],
            range(2),
        ),
        (
            "its siblings that complete after it leave it its lineage",
            [{1: "FAIL"}, {0: "COMPLETE"}, {2: "COMPLETE"}],
            range(3),
        ),
        (
            "every instance failed: each gives its own lineage, not only the last one",
            [{0: "FAIL", 1: "FAIL"}, {2: "FAIL"}],
            range(3),
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "_",
)
def test_an_instance_that_never_completed_is_described_by_its_own_run(
    store_url: str, sentence: str, arrivals: list[dict[int, str]], expected: range
) -> None:
    """A mapped task's instance with no completed run to stand in for it is described by its
    latest run of the DAG run, as an unmapped task that only failed so far is (a probe of the
    sync DAG: ``SQLExecuteQueryOperator.partial().expand()`` whose index 1 failed lost its
    flows once index 0 completed), snapshot after snapshot through kept folds."""
    with open_store(store_url) as store:
        history: list[dict[str, Any]] = []
        for step, states in enumerate(arrivals):
            # the same DAG run, each arrival later in time
            arrived = later(airflow_instances(0, states), minutes=step)
            history += arrived
            store.append_many(json.dumps(event) for event in arrived)
            planned = plan_from_store(store, definition())
            assert_read_at_once(planned, build(history, definition()))
        assert pairs(planned) == copies(expected)
        again = plan_from_store(store, definition())  # nothing new: the kept fold
        assert again.report.counters["jobsUnchanged"] == 1
        assert pairs(again) == copies(expected)


def dag_run_1(instance_1: str, end: str) -> list[dict[str, Any]]:
    """DAG run 1: instance 0 completes, instance 1 ends ``instance_1``, the DAG run ``end``."""
    return [
        dag_event(1, "START", 0),
        *instance_run(1, 0, "COMPLETE", 1, "out_0"),
        *instance_run(1, 1, instance_1, 3, "out_1"),
        dag_event(1, end, 9),
    ]


DAG_RUN_2_GOES_ON = [dag_event(2, "START", 10), *instance_run(2, 0, "COMPLETE", 11, "out_0")]


@pytest.mark.parametrize(
    ("sentence", "arrivals", "expected"),
    [
        (
            "while the next DAG run goes on, one not run there yet keeps its lineage",
            [
                dag_run_1("FAIL", "COMPLETE"),  # a trigger rule let the DAG run succeed
                DAG_RUN_2_GOES_ON,
                instance_run(2, 1, "FAIL", 13, "out_1"),
            ],
            [range(2), range(2), range(2)],
        ),
        (
            "so it does when the DAG run before failed",
            [dag_run_1("FAIL", "FAIL"), DAG_RUN_2_GOES_ON, instance_run(2, 1, "FAIL", 13, "out_1")],
            [range(2), range(2), range(2)],
        ),
        (
            "and while it runs again in the next one, before it ends",
            [
                dag_run_1("FAIL", "FAIL"),
                [dag_event(2, "START", 10), *instance_run(2, 1, "COMPLETE", 11, "out_1")[:1]],
                instance_run(2, 1, "COMPLETE", 11, "out_1")[1:],
            ],
            [range(2), range(2), range(2)],
        ),
        (
            "and when no instance has completed yet",
            [
                [
                    dag_event(1, "START", 0),
                    *instance_run(1, 0, "FAIL", 1, "out_0"),
                    *instance_run(1, 1, "FAIL", 3, "out_1"),
                    dag_event(1, "FAIL", 9),
                ],
                [dag_event(2, "START", 10), *instance_run(2, 0, "COMPLETE", 11, "out_0")[:1]],
                instance_run(2, 0, "FAIL", 11, "out_0")[1:],
            ],
            [range(2), range(2), range(2)],
        ),
        (
            "as a stand-in of a DAG run that failed does",
            [dag_run_1("COMPLETE", "FAIL"), DAG_RUN_2_GOES_ON],
            [range(2), range(2)],
        ),
        (
            "once that DAG run ended without running it, it describes nothing",
            [dag_run_1("FAIL", "FAIL"), [*DAG_RUN_2_GOES_ON, dag_event(2, "COMPLETE", 19)]],
            [range(2), range(1)],
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "_",
)
def test_an_instance_keeps_its_lineage_while_it_waits_in_the_queue(
    store_url: str,
    sentence: str,
    arrivals: list[list[dict[str, Any]]],
    expected: list[range],
) -> None:
    """A review: an instance that never completed, described by its failed run, lost its flows
    while the next DAG run went on without having run it yet, and got them back when it ran:
    created, removed, created again. As an instance that completed before keeps its stand-in
    of the DAG's run before, it keeps its latest run there, snapshot after snapshot."""
    with open_store(store_url) as store:
        history: list[dict[str, Any]] = []
        for arrived, wanted in zip(arrivals, expected, strict=True):
            history += arrived
            store.append_many(json.dumps(event) for event in arrived)
            planned = plan_from_store(store, definition())
            assert_read_at_once(planned, build(history, definition()))
            assert pairs(planned) == copies(wanted)
