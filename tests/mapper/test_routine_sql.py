"""The routine of a job is the SQL of its latest description, as its flows are
(docs/mapping-reference.md: "A job's flows come from its latest description: its latest
completed run"), found with real Airflow: a retry that failed on new SQL, and the instances of a
mapped task, each with its own statement."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.mapper.build import build
from tests import builders
from tests.builders import at, dataset, run_cycle, sql_facet

DEFINITION = builders.definition(builders.policy())
DAG_RUN = "0190b1c2-0000-7000-8000-0000000000d0"


def _run(sql: str, second: int, end: str = "COMPLETE", **options: Any) -> list[dict[str, Any]]:
    options.setdefault("inputs", [dataset("db.s.src")])
    return run_cycle(
        "dag.load",
        end=end,
        run_id=builders.new_run_id(),
        start_time=at(second),
        end_time=at(second + 1),
        job_facets=sql_facet(sql, "postgres"),
        **options,
    )


def test_a_failed_run_does_not_replace_the_sql_of_the_last_success() -> None:
    """A deploy whose new statement failed: Blindata would analyse lineage that never happened
    (and the routine's SQL changed, so analysed again)."""
    events = [
        *_run("INSERT INTO s.dst SELECT id FROM s.src", 0, outputs=[dataset("db.s.dst")]),
        *_run("INSERT INTO s.dst SELECT id FROM s.missing", 10, end="FAIL"),
    ]
    (routine,) = build(events, DEFINITION).routines
    assert routine.definition == "INSERT INTO s.dst SELECT id FROM s.src"


def test_a_job_whose_latest_run_sends_no_sql_has_no_routine_any_more() -> None:
    """A task moved from SQL to Python: its latest completed run sends its job facets, and no
    SQL. Its old routine, and the flows Blindata's analysis of it made, stayed (a probe); seed
    000 uploads what the job still describes."""
    python = builders.job_type_facet("TASK")
    events = [
        *_run("INSERT INTO s.dst SELECT id FROM s.src", 0, outputs=[dataset("db.s.dst")]),
        *run_cycle(
            "dag.load",
            run_id=builders.new_run_id(),
            start_time=at(10),
            end_time=at(11),
            job_facets=python,
            inputs=[dataset("db.s.other")],
            outputs=[dataset("db.s.dst")],
        ),
    ]
    assert build(events, DEFINITION).routines == []
    # the job's design (a JobEvent) may name its SQL alone: then it stays
    design = builders.job_event("dag.load", job_facets=sql_facet("SELECT 1", "postgres"))
    assert [r.definition for r in build([design, *events[2:]], DEFINITION).routines] == ["SELECT 1"]


@pytest.mark.parametrize("order", [("eu", "us", "apac"), ("apac", "eu", "us")])
def test_the_instances_of_a_mapped_task_give_one_routine_of_their_statements(
    order: tuple[str, ...],
) -> None:
    """``.expand(sql=[...])``: each instance its own statement. The routine held the one that
    finished last, which changes from one DAG run to the next (analysed again each time)."""
    parent = builders.parent_facet("dag", DAG_RUN)
    events = [
        event
        for index, region in enumerate(order)
        for event in _run(
            f"INSERT INTO s.out_{region} SELECT id FROM s.src",
            index,
            outputs=[dataset(f"db.s.out_{region}")],
            run_facets=parent,
        )
    ]
    (routine,) = build(events, DEFINITION).routines
    assert routine.definition == (
        "INSERT INTO s.out_apac SELECT id FROM s.src;\n"
        "INSERT INTO s.out_eu SELECT id FROM s.src;\n"
        "INSERT INTO s.out_us SELECT id FROM s.src"
    )
    assert routine.dialect == "postgres"


def _airflow(map_index: int | None = None, try_number: int = 1) -> dict[str, Any]:
    instance: dict[str, Any] = {"try_number": try_number}
    if map_index is not None:
        instance["map_index"] = map_index
    return {"airflow": {"taskInstance": instance, "task": {"task_id": "load"}}}


def test_a_task_cleared_and_run_again_in_its_dag_run_is_its_latest_try() -> None:
    """Airflow gives each try its own run id, all with the DAG run as parent: a task fixed and
    cleared was read as two instances, its routine the old and the new statement joined and its
    flows those of both (found by a review of this session's work)."""
    parent = builders.parent_facet("dag", DAG_RUN)
    events = [
        *_run(
            "INSERT INTO s.dst SELECT id FROM s.src_old",
            0,
            outputs=[dataset("db.s.dst")],
            inputs=[dataset("db.s.src_old")],
            run_facets=parent | _airflow(try_number=1),
        ),
        *_run(
            "INSERT INTO s.dst SELECT id FROM s.src",
            10,
            outputs=[dataset("db.s.dst")],
            run_facets=parent | _airflow(try_number=2),
        ),
    ]
    plan = build(events, DEFINITION)
    (routine,) = plan.routines
    assert routine.definition == "INSERT INTO s.dst SELECT id FROM s.src"
    table = {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == "table"}
    assert table == {("src", "dst")}


def test_each_instance_of_a_mapped_task_is_its_latest_try() -> None:
    parent = builders.parent_facet("dag", DAG_RUN)
    events = [
        event
        for second, (index, try_number, region) in enumerate(
            [(0, 1, "eu_old"), (1, 1, "us"), (0, 2, "eu")]
        )
        for event in _run(
            f"INSERT INTO s.out_{region} SELECT id FROM s.src",
            second * 10,
            outputs=[dataset(f"db.s.out_{region}")],
            run_facets=parent | _airflow(map_index=index, try_number=try_number),
        )
    ]
    (routine,) = build(events, DEFINITION).routines
    assert routine.definition == (
        "INSERT INTO s.out_eu SELECT id FROM s.src;\nINSERT INTO s.out_us SELECT id FROM s.src"
    )


def test_a_dag_triggered_twice_from_one_dag_run_keeps_each_runs_lineage() -> None:
    """A DAG triggered twice from one DAG run: Airflow's provider gives the tasks of both child
    DAG runs the trigger's root, and their map index is -1; read as two tries of one instance,
    the first child run's lineage was lost (found by a review of this session's work). The
    instance is its direct parent (its DAG run) and its map index."""
    root = ("airflow", "parent_dag", DAG_RUN)
    events = [
        event
        for index, (child_run, table) in enumerate(
            [
                ("0190b1c2-0000-7000-8000-0000000000c1", "out_a"),
                ("0190b1c2-0000-7000-8000-0000000000c2", "out_b"),
            ]
        )
        for event in _run(
            f"INSERT INTO s.{table} SELECT id FROM s.src",
            index * 10,
            outputs=[dataset(f"db.s.{table}")],
            run_facets=builders.parent_facet("child", child_run, root=root) | _airflow(),
        )
    ]
    plan = build(events, DEFINITION)
    table = {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == "table"}
    assert table == {("src", "out_a"), ("src", "out_b")}
