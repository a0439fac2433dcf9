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
    return run_cycle(
        "dag.load",
        end=end,
        run_id=builders.new_run_id(),
        start_time=at(second),
        end_time=at(second + 1),
        job_facets=sql_facet(sql, "postgres"),
        inputs=[dataset("db.s.src")],
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
