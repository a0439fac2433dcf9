"""Bad input gets a clear error or a reported gap and loses nothing; one malformed event must never
stop a sync or lose the other events; secrets never reach the plan or its report.

A producer sends anything: a rich RunEvent (every facet the spec gives an example of, on a
namespace with credentials, its texts quoting a connection) spoiled in one to four places —
values of the wrong JSON type, huge, empty, NUL, lone surrogates, control characters and ``|`` in
names, odd times with offsets, far years, run ids that are no UUID, negative or huge positions,
lists of non-objects, keys removed — or made a JobEvent or a DatasetEvent. Stored on SQLite beside
a good job's run, each is stored or quarantined with its reason; the snapshots' mapping
(``plan_from_store``, then again from the kept folds) never raises and plans the good job exactly
as alone; an event read with a malformed facet has the gap ``MALFORMED_FACET``, one that cannot be
read ``UNREADABLE_EVENT``; and no secret of the bad events is in the plan or the report.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.events.parse import parse_event
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import open_store
from tests.builders import at, dataset, run_event, schema_facet, sql_facet

from .helpers import definition

FACETS = Path(__file__).resolve().parent.parent / "fixtures" / "openlineage" / "facets"
SECRET = "s3cret"
BAD_NAMESPACE = f"postgres://etl:{SECRET}@bad:5432/db?password={SECRET}"
SAID = f"see postgresql://etl:{SECRET}@db/x (password={SECRET})"
"""A producer's text that quotes a connection."""


def _facets(*stems: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for stem in stems:
        merged.update(json.loads((FACETS / f"{stem}.json").read_text()))
    return merged


def _good() -> list[dict[str, Any]]:
    """A job's run, START and COMPLETE, that reads one table and writes another."""
    return [
        run_event(
            "good.job",
            event_type=event_type,
            time=at(second),
            run_id="00000000-0000-4000-8000-000000000001",
            inputs=[dataset("g.in", facets=schema_facet("a", "b"))],
            outputs=[dataset("g.out", facets=schema_facet("x", "y"))],
            job_facets=sql_facet("INSERT INTO g.out SELECT a AS x, b AS y FROM g.in"),
        )
        for event_type, second in (("START", 0), ("COMPLETE", 1))
    ]


def _bad() -> dict[str, Any]:
    dataset_facets = _facets(
        "SchemaDatasetFacet__1",
        "DocumentationDatasetFacet__1",
        "OwnershipDatasetFacet__1",
        "DatasourceDatasetFacet__1",
        "ColumnLineageDatasetFacet__1",
        "DatasetTypeDatasetFacet__1",
        "HierarchyDatasetFacet__1",
        "SymlinksDatasetFacet__1",
        "StorageDatasetFacet__1",
        "TagsDatasetFacet__1",
        "LifecycleStateChangeDatasetFacet__1",
        "DatasetVersionDatasetFacet__1",
        "LineageFacet__dataset-to-dataset",
    )
    dataset_facets["documentation"]["description"] = SAID
    dataset_facets["schema"]["fields"][0]["description"] = SAID
    dataset_facets["dataSource"]["uri"] = BAD_NAMESPACE
    job_facets = _facets(
        "DocumentationJobFacet__1",
        "OwnershipJobFacet__1",
        "JobTypeJobFacet__1",
        "SourceCodeJobFacet__1",
        "SourceCodeLocationJobFacet__1",
        "TagsJobFacet__1",
        "LineageFacet__mixed-sources",
    )
    job_facets["documentation"]["description"] = SAID
    job_facets["sql"] = {
        "query": f"-- {SAID}\nCREATE USER etl PASSWORD '{SECRET}'; INSERT INTO b.out SELECT 1"
    }
    run_facets = _facets(
        "ParentRunFacet__2",
        "NominalTimeRunFacet__1",
        "ErrorMessageRunFacet__1",
        "ExtractionErrorRunFacet__1",
        "ProcessingEngineRunFacet__1",
        "ExternalQueryRunFacet__1",
        "EnvironmentVariablesRunFacet__1",
        "TagsRunFacet__1",
    )
    run_facets["test"] = {"tests": [{"name": "t", "status": "fail", "expected": SAID}]}
    run_facets["airflow"] = {
        "dag": {"dag_id": "bad"},
        "dagRun": {"dag_id": "bad", "run_id": "manual"},
        "task": {"task_id": "job", "downstream_task_ids": "['other']"},
        "taskInstance": {"try_number": 1},
    }
    input_facets = _facets(
        "DataQualityAssertionsDatasetFacet__1", "DataQualityMetricsInputDatasetFacet__1"
    )
    input_facets["dataQualityAssertions"]["assertions"][0]["description"] = SAID
    return run_event(
        "bad.job",
        producer=f"https://ci:{SECRET}@git.example.com/lineage?token={SECRET}",
        time=at(5),
        run_id="00000000-0000-4000-8000-000000000009",
        inputs=[dataset("b.in", BAD_NAMESPACE, facets=dataset_facets, input_facets=input_facets)],
        outputs=[
            dataset(
                "b.out",
                BAD_NAMESPACE,
                facets=copy.deepcopy(dataset_facets),
                output_facets=_facets("OutputStatisticsOutputDatasetFacet__1"),
            )
        ],
        job_facets=job_facets,
        run_facets=run_facets,
    )


BAD = _bad()

ODD = st.sampled_from(
    [
        None,
        [],
        [1, "a", None],
        [[["x"]]],
        [{"name": "x"}, {"name": "x"}],
        "",
        " ",
        "\x00",
        "\ud800",
        "é/名/\u202e",
        "a|b",
        "a/b",
        "a\nb",
        "x" * 5000,
        0,
        -1,
        2**70,
        1e308,
        float("nan"),
        float("inf"),
        1.5,
        True,
        {},
        {"_deleted": True},
        {"_deleted": "yes"},
        {"a": {"b": [{"c": None}]}},
        "2026-11-29T10:00:05+14:00",
        "9999-12-31T23:59:59-01:00",
        "0001-01-01T00:00:00+01:00",
        "not a time",
        "not-a-uuid",
        "[" + "-" * 5000 + "1]",  # too deep for literal_eval
        "{['a']}",
        "START",
        "complete",
        "DATASET",
    ]
)
VALUES = st.one_of(
    ODD,
    st.text(max_size=8),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4),
        lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=4,
    ),
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


PATHS = _paths(BAD)


def _bare(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with every facet container empty."""
    for holder in (event["run"], event["job"], *event["inputs"], *event["outputs"]):
        for key in ("facets", "inputFacets", "outputFacets"):
            if key in holder:
                holder[key] = {}
    return event


BARE = _bare(copy.deepcopy(BAD))
BARE_PATHS = [p for p in _paths(BARE) if p[-1] in ("facets", "inputFacets", "outputFacets")]


@st.composite
def spoiled(draw: st.DrawFn) -> dict[str, Any]:
    """``BAD`` with one to four places replaced or removed, now and then another kind, or
    without facets and its containers spoiled (a container that is not an object is then all
    it carries)."""
    kind = draw(st.sampled_from(["run", "run", "run", "job", "dataset", "bare"]))
    event, paths = (
        (copy.deepcopy(BARE), BARE_PATHS) if kind == "bare" else (copy.deepcopy(BAD), PATHS)
    )
    if kind == "job":
        del event["run"], event["eventType"]
    elif kind == "dataset":
        event = {"eventTime": event["eventTime"], "producer": "p", "dataset": event["outputs"][0]}
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(paths))
        holder: Any = event
        for step in path[:-1]:
            try:
                holder = holder[step]
            except (KeyError, IndexError, TypeError):
                break
        else:
            if isinstance(holder, dict) and draw(st.integers(0, 4)) == 0:
                holder.pop(path[-1], None)
            elif isinstance(holder, dict) or (isinstance(holder, list) and path[-1] < len(holder)):
                holder[path[-1]] = copy.deepcopy(draw(VALUES))
    return event


def _as_alone(plan: CatalogPlan) -> dict[str, list[Any]]:
    return {
        "systems": plan.systems,
        "entities": plan.entities,
        "fields": plan.fields,
        "routines": plan.routines,
        "flows": plan.flows,
    }


ALONE = _as_alone(build(_good(), definition()))


def _text(event: Any) -> str:
    return json.dumps(event)  # NaN and Infinity as json.dumps writes them; "\ud800" escaped


def _secret_free(plan: CatalogPlan) -> None:
    assert SECRET not in plan.model_dump_json(by_alias=True)
    assert SECRET not in plan.report.model_dump_json()


@given(bad=st.lists(spoiled(), min_size=1, max_size=3), order=st.randoms(use_true_random=False))
def test_bad_events_beside_a_good_one_lose_nothing_are_reported_and_leak_no_secret(
    bad: list[dict[str, Any]], order: Any
) -> None:
    texts = [_text(event) for event in [*_good(), *bad]]
    order.shuffle(texts)
    with (
        tempfile.TemporaryDirectory() as directory,
        open_store(f"sqlite:///{directory}/events.db") as store,
    ):
        counts = store.append_many(texts)
        assert counts.accepted + counts.duplicate + counts.quarantined == len(texts)
        assert all(counts.quarantine_reasons.values())  # each with its reason
        assert counts.accepted >= 2  # the good run
        for planned in (plan_from_store(store, definition()), plan_from_store(store, definition())):
            for kind, alone in ALONE.items():
                present = getattr(planned, kind)
                assert [item for item in alone if item not in present] == [], kind
            _secret_free(planned)
    for event in bad:
        parsed = parse_event(_text(event))
        assert SECRET not in (parsed.problem or "")
        plan = build([_text(event)], definition())
        _secret_free(plan)
        if parsed.event is None:
            assert GapCode.UNREADABLE_EVENT in plan.report.gaps, parsed.problem
        elif parsed.malformed_facets:
            assert plan.report.gap_count(GapCode.MALFORMED_FACET) >= len(parsed.malformed_facets)
