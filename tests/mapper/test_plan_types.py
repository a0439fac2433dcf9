"""The plan's dataclasses (keys, entities, routines, fields, flow ends, flows) set their slots in
their own ``__init__`` (for speed): they must still behave as the frozen dataclasses they
declare, and a plan must write and read them as it wrote and read the models they were."""

from __future__ import annotations

import dataclasses
import json

import pytest

from airflow_blindata.mapper.plan import (
    CatalogPlan,
    EntityKey,
    FlowEnd,
    PlannedEntity,
    PlannedField,
    PlannedFlow,
    PlannedRoutine,
    PlannedSystem,
)

KEY = EntityKey(system="pg", schema="public", name="t")


def _flow(**changes: object) -> PlannedFlow:
    flow = PlannedFlow("s", "n", "column", "io", FlowEnd(KEY, "a"), FlowEnd(KEY, "b"), "text")
    return dataclasses.replace(flow, **changes)


def test_they_are_frozen_and_compare_and_hash_by_value() -> None:
    field = PlannedField(entity=KEY, name="a", ordinal_position=1)
    for item in (field, FlowEnd(KEY, "a"), _flow()):
        # Python 3.11 raises TypeError for a frozen dataclass with slots (its __setattr__
        # calls super() on the class as it was before slots remade it)
        with pytest.raises((dataclasses.FrozenInstanceError, TypeError)):
            item.entity = KEY  # type: ignore[misc,union-attr]
    assert field == PlannedField(entity=KEY, name="a", type=None, ordinal_position=1)
    assert hash(FlowEnd(KEY)) == hash(FlowEnd(entity=KEY, field=None))
    assert _flow() == _flow() and hash(_flow()) == hash(_flow())
    assert _flow(superseded_by_analysis=True) != _flow()
    assert _flow().superseded_by_analysis is False
    assert repr(FlowEnd(KEY, "a")) == f"FlowEnd(entity={KEY!r}, field='a')"
    with pytest.raises(TypeError):
        PlannedField(KEY, "a", None, 1)  # type: ignore[misc]


def test_a_plan_writes_and_reads_them_back() -> None:
    plan = CatalogPlan(
        definition_uuid="u",
        fields=[PlannedField(entity=KEY, name="a", type="int", ordinal_position=1)],
        flows=[_flow(superseded_by_analysis=True)],
    )
    data = plan.model_dump(by_alias=True)
    assert data["flows"][0]["source"] == {
        "entity": {"system": "pg", "schema": "public", "name": "t"},
        "field": "a",
    }
    assert list(data["flows"][0]) == [f.name for f in dataclasses.fields(PlannedFlow)]
    again = CatalogPlan.model_validate_json(plan.model_dump_json(by_alias=True))
    assert again.flows == plan.flows and again.fields == plan.fields


def test_the_dataset_entity_memo_is_not_part_of_what_a_plan_says() -> None:
    from airflow_blindata.mapper.fold import DatasetKey

    plan = CatalogPlan(definition_uuid="u")
    plan.dataset_entities.found[DatasetKey("postgres://h:5432", "db.public.t"), "pg"] = KEY
    assert plan == CatalogPlan(definition_uuid="u")
    assert CatalogPlan.model_validate_json(plan.model_dump_json(by_alias=True)) == plan


def _routine(**changes: object) -> PlannedRoutine:
    routine = PlannedRoutine(
        system="jobs",
        catalog="ns",
        schema="ns",
        name="r",
        definition="SELECT 1",
        sql_hash="h",
        job="ol:ns|r",
    )
    return dataclasses.replace(routine, **changes)


def test_keys_entities_and_routines_take_schema_by_either_name() -> None:
    assert EntityKey(system="pg", schema_="public", name="t") == KEY
    assert hash(EntityKey(system="pg", schema="public", name="t")) == hash(KEY)
    assert dataclasses.replace(KEY, name="u") == EntityKey(system="pg", schema="public", name="u")
    assert EntityKey(system="pg", name="t").schema_ is None and str(KEY) == "pg:public.t"
    assert _routine().schema_ == "ns" and _routine(schema_="x").schema_ == "x"
    assert _routine().type == "SCRIPT" and _routine() == _routine()
    with pytest.raises(TypeError):
        PlannedRoutine(system="s", catalog="c", name="r", definition="", sql_hash="", job="j")
    entity = PlannedEntity(key=KEY, may_create=True, source="dataset a/b")
    assert entity.properties == () and entity.description is None
    assert dataclasses.replace(entity, description="d") != entity
    system = PlannedSystem(name="pg", origin="mapped")
    assert hash(system) == hash(PlannedSystem(name="pg", origin="mapped"))
    for item in (KEY, entity, system, _routine()):
        with pytest.raises((dataclasses.FrozenInstanceError, TypeError, AttributeError)):
            item.name = "x"  # type: ignore[misc,union-attr]


def test_a_plan_writes_schema_by_its_alias_and_reads_it_back() -> None:
    entity = PlannedEntity(key=KEY, may_create=False, properties=(("a", "b"),), source="s")
    plan = CatalogPlan(
        definition_uuid="u",
        systems=[PlannedSystem(name="pg", origin="mapped", namespaces=("postgres://h:5432",))],
        entities=[entity],
        routines=[_routine()],
    )
    data = plan.model_dump(by_alias=True)
    assert data["entities"][0]["key"] == {"system": "pg", "schema": "public", "name": "t"}
    assert list(data["routines"][0]) == [
        "system",
        "catalog",
        "schema",
        "name",
        "type",
        "definition",
        "sql_hash",
        "dialect",
        "job",
    ]
    assert list(plan.model_dump()["entities"][0]["key"]) == ["system", "schema_", "name"]
    again = CatalogPlan.model_validate_json(plan.model_dump_json(by_alias=True))
    assert again == plan and again.entities[0].properties == (("a", "b"),)


@pytest.mark.parametrize(
    ("retired", "written"),
    [([], False), (["airflow-prod/sales.load: no longer in its DAG"], True)],
    ids=["none-retired-none-written", "one-retired-written"],
)
def test_a_reports_retired_jobs_are_written_only_when_there_are_some(
    retired: list[str], written: bool
) -> None:
    """The same dump at every pydantic version pyproject.toml accepts: ``retired`` left out of a
    plan's JSON, the sync history and a kept fold while no job is retired."""
    from pydantic_core import to_json

    from airflow_blindata.mapper.report import Report

    report = Report(retired=retired)
    for dumped in (
        report.model_dump(),
        report.model_dump(mode="json", by_alias=True),
        json.loads(report.model_dump_json()),
        json.loads(to_json(report, by_alias=True)),  # how a kept fold writes it
    ):
        assert ("retired" in dumped) is written
        assert Report.model_validate(dumped) == report
