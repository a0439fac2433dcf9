"""Golden plans: the plan of each OpenLineage fixture set, compared with a reviewed JSON file.

A change to the mapping shows here as a diff of what would land in Blindata, to be read and then
accepted with ``pytest tests/test_golden_plans.py --update-golden`` (or
``BLINDATA_UPDATE_GOLDEN=1``), which rewrites ``tests/golden/*.json``; commit them with the change.

The plan is computed by the project's own ``plan_files`` (what ``airflow-blindata plan --json``
prints) from event files; the spec's facet examples are first wrapped into one event each
(``facet_examples``). Nothing in a plan comes from a clock or a random id: event times and run
ids are the fixtures' own, so the JSON is compared as it is, keys sorted, indent 2.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.definition import JobDefinition
from airflow_blindata.plans.files import plan_files
from tests.builders import at, dataset, definition, policy, run_event

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
OPENLINEAGE = HERE / "fixtures" / "openlineage"
DBT = OPENLINEAGE / "dbt"
FACETS = OPENLINEAGE / "facets"
GOLDEN_NAMESPACE = "postgres://warehouse:5432"


def golden_definition() -> JobDefinition:
    """PostgreSQL Systems named after their host, any other namespace too: every dataset of the
    fixtures lands somewhere, so that the golden plans show all of them."""
    return definition(
        policy("postgres://*", nameTemplate="{host}", technology="PostgreSQL"),
        policy("*", nameTemplate="{host}"),
    )


def placement(example: Path, value: dict[str, Any]) -> str:
    """Where a facet example of the spec goes in an event: by its test case's schema name."""
    kind = example.stem.split("__")[0]
    if kind == "LineageFacet":
        kind = str(value.get("_schemaURL", "")).rsplit("/", 1)[-1]
    if kind.endswith("RunFacet"):
        return "run"
    if kind.endswith("JobFacet"):
        return "job"
    if kind.endswith("InputDatasetFacet") or kind in {
        "BaseSubsetDatasetFacet",
        "DataQualityAssertionsDatasetFacet",
        "DataQualityMetricsDatasetFacet",
    }:
        return "input"
    if kind.endswith("OutputDatasetFacet"):
        return "output"
    return "dataset"


def facet_example_events() -> list[dict[str, Any]]:
    """One COMPLETE run per facet example of the spec, the facet where the spec puts it."""
    events = []
    examples = sorted(p for p in FACETS.glob("*__*.json"))
    for second, example in enumerate(examples):
        facets: dict[str, Any] = json.loads(example.read_text(encoding="utf-8"))
        where = placement(example, next(iter(facets.values())))
        name = example.stem.replace("-", "_").lower()
        source = dataset(
            f"examples.raw.{name}",
            GOLDEN_NAMESPACE,
            input_facets=facets if where == "input" else None,
        )
        target = dataset(
            f"examples.out.{name}",
            GOLDEN_NAMESPACE,
            facets=facets if where == "dataset" else None,
            output_facets=facets if where == "output" else None,
        )
        events.append(
            run_event(
                f"examples.{name}",
                run_id=f"0190b1c2-0000-7000-8000-{second:012d}",
                time=at(second % 60, minute=second // 60),
                inputs=[source],
                outputs=[target],
                run_facets=facets if where == "run" else None,
                job_facets=facets if where == "job" else None,
            )
        )
    return events


def event_files(*paths: Path) -> Callable[[Path], list[Path]]:
    """A fixture set that is files as they are."""
    return lambda _: list(paths)


def facet_examples(folder: Path) -> list[Path]:
    """The facet examples' events in a file, as ``airflow-blindata plan`` would read them."""
    path = folder / "facet_examples.json"
    path.write_text(json.dumps(facet_example_events()), encoding="utf-8")
    return [path]


SETS: dict[str, Callable[[Path], list[Path]]] = {
    "dbt_run": event_files(DBT / "postgres_run_successful_run_ol_events.jsonl"),
    "dbt_seed": event_files(DBT / "postgres_seed_seed_ol_events.jsonl"),
    "dbt_snapshot": event_files(DBT / "postgres_snapshot_snapshot_ol_events.jsonl"),
    "dbt_test": event_files(DBT / "postgres_test_test_ol_events.jsonl"),
    "example_full_event": event_files(FACETS / "example_full_event.json"),
    "facet_examples": facet_examples,
}


def rendered(files: list[Path]) -> str:
    plan = plan_files(files, golden_definition())
    data = plan.model_dump(mode="json", by_alias=True)
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("name", sorted(SETS))
def test_the_plan_of_each_fixture_set_is_the_reviewed_golden_plan(
    name: str, tmp_path: Path, update_golden: bool
) -> None:
    actual = rendered(SETS[name](tmp_path))
    golden = GOLDEN / f"{name}.json"
    if update_golden:
        golden.write_text(actual, encoding="utf-8")
        return
    assert golden.exists(), f"{golden} is missing: run pytest {__file__} --update-golden"
    expected = golden.read_text(encoding="utf-8")
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=f"golden/{name}.json (reviewed)",
            tofile=f"{name}: the plan now",
            n=4,
        )
        pytest.fail(
            "the plan differs from the reviewed golden plan; if the change is intended, review "
            "it and rerun with --update-golden:\n" + "".join(diff),
            pytrace=False,
        )


def test_every_fixture_set_has_a_golden_plan_and_every_golden_plan_a_set() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(SETS)


def test_a_facet_example_goes_where_the_spec_puts_it() -> None:
    cases = {
        "TagsRunFacet__1.json": "run",
        "SQLJobFacet__1.json": "job",
        "LineageFacet__job-to-job.json": "job",
        "LineageFacet__dataset-to-dataset.json": "dataset",
        "DataQualityAssertionsDatasetFacet__1.json": "input",
        "OutputStatisticsOutputDatasetFacet__1.json": "output",
        "SchemaDatasetFacet__1.json": "dataset",
    }
    found = {}
    for file in cases:
        facets = json.loads((FACETS / file).read_text(encoding="utf-8"))
        found[file] = placement(FACETS / file, next(iter(facets.values())))
    assert found == cases
