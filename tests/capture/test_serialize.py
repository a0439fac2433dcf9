"""``serialize.to_dict`` is ``Serde.to_dict``, in one pass: the stored event is the one sent.

The content key, and so deduplication across capture paths (the transport, ``ingest`` of a
``FileTransport`` file, the receiver), depends on the transport storing exactly the object the
OpenLineage client would have written.
"""

from __future__ import annotations

import datetime
import json
import uuid
from enum import Enum, IntEnum
from typing import Any

import attr
from hypothesis import given
from hypothesis import strategies as st
from openlineage.client.event_v2 import (
    DatasetEvent,
    InputDataset,
    Job,
    JobEvent,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
    StaticDataset,
)
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    data_quality_assertions_dataset,
    datasource_dataset,
    error_message_run,
    lifecycle_state_change_dataset,
    output_statistics_output_dataset,
    parent_run,
    schema_dataset,
    sql_job,
    symlinks_dataset,
    tags_job,
)
from openlineage.client.serde import Serde

from airflow_blindata.capture.serialize import to_dict


class Colour(Enum):
    RED = "red"
    NOTHING = None
    NESTED = {"a": None}


class Level(IntEnum):
    LOW = 1


@attr.define
class Node:
    value: Any = None
    _private: Any = None
    items: Any = attr.field(factory=list)


class Int64(int):
    """Stands in for numpy's int64, which Serde turns into an int by its class name."""


Int64.__name__ = "int64"

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=6)
    | st.sampled_from([*Colour, *Level])
    | st.datetimes()
    | st.dates()
    | st.uuids()
    | st.integers().map(Int64)
)
trees = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=4), children, max_size=4)
        | st.dictionaries(st.integers(0, 3), children, max_size=2)  # Serde's own fallback
        | st.frozensets(st.integers(), max_size=3)
        | st.builds(Node, children, children, st.lists(children, max_size=3))
    ),
    max_leaves=25,
)


@given(tree=trees)
def test_any_attrs_value_serialises_as_serde_does(tree: Any) -> None:
    node = Node(tree, tree, [tree, None, Node()])
    assert to_dict(node) == Serde.to_dict(node)


def run_event_with_many_facets() -> RunEvent:
    """A failed run whose datasets carry the client's nested facet classes and an enum."""
    schema = schema_dataset.SchemaDatasetFacet(
        fields=[
            schema_dataset.SchemaDatasetFacetFields(
                name="address",
                type="STRUCT",
                fields=[schema_dataset.SchemaDatasetFacetFields(name="city", type="TEXT")],
            ),
            schema_dataset.SchemaDatasetFacetFields(name="id", type="INTEGER", description=None),
        ]
    )
    source = column_lineage_dataset.InputField(
        namespace="postgres://db:5432",
        name="public.src",
        field="id",
        transformations=[column_lineage_dataset.Transformation(type="DIRECT", subtype="IDENTITY")],
    )
    output = OutputDataset(
        "postgres://db:5432",
        "public.dst",
        facets={
            "schema": schema,
            "columnLineage": column_lineage_dataset.ColumnLineageDatasetFacet(
                fields={"id": column_lineage_dataset.Fields(inputFields=[source])}, dataset=[]
            ),
            "symlinks": symlinks_dataset.SymlinksDatasetFacet(
                identifiers=[symlinks_dataset.Identifier("hive://m", "db.dst", "TABLE")]
            ),
            "lifecycleStateChange": lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(
                lifecycleStateChange=lifecycle_state_change_dataset.LifecycleStateChange.OVERWRITE
            ),
            "datasource": datasource_dataset.DatasourceDatasetFacet(uri="postgres://db:5432"),
        },
        outputFacets={
            "outputStatistics": output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
                rowCount=0, size=None
            )
        },
    )
    assertions = data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(
        assertions=[
            data_quality_assertions_dataset.Assertion(assertion="not_null", success=False),
            data_quality_assertions_dataset.Assertion(
                assertion="unique", success=True, column="id", params={"n": 1, "none": None}
            ),
        ]
    )
    return RunEvent(
        eventType=RunState.FAIL,
        eventTime="2026-11-29T12:00:00.000000+00:00",
        run=Run(
            runId=str(uuid.uuid4()),
            facets={
                "parent": parent_run.ParentRunFacet(
                    run=parent_run.Run(runId=str(uuid.uuid4())),
                    job=parent_run.Job(namespace="airflow", name="dag"),
                ),
                "errorMessage": error_message_run.ErrorMessageRunFacet(
                    message="boom", programmingLanguage="python"
                ),
            },
        ),
        job=Job(
            "airflow",
            "dag.task",
            facets={
                "sql": sql_job.SQLJobFacet(query="INSERT INTO dst SELECT id FROM src"),
                "tags": tags_job.TagsJobFacet(tags=[tags_job.TagsJobFacetFields("pii", "true")]),
            },
        ),
        inputs=[
            InputDataset(
                "postgres://db:5432",
                "public.src",
                facets={"schema": schema},
                inputFacets={"dataQualityAssertions": assertions},
            )
        ],
        outputs=[output],
        producer="https://github.com/apache/airflow/tree/providers-openlineage/2.20.3",
    )


def test_run_events_with_many_facets_serialise_as_serde_does() -> None:
    event = run_event_with_many_facets()
    assert json.dumps(to_dict(event), sort_keys=True) == Serde.to_json(event)


def test_job_and_dataset_events_serialise_as_serde_does() -> None:
    run_event = run_event_with_many_facets()
    job_event = JobEvent(
        eventTime="2026-11-29T12:00:00+00:00",
        producer="p",
        job=run_event.job,
        inputs=run_event.inputs,
    )
    dataset_event = DatasetEvent(
        eventTime=datetime.datetime(2026, 11, 29, tzinfo=datetime.UTC).isoformat(),
        producer="p",
        dataset=StaticDataset(namespace="postgres://db:5432", name=f"public.{uuid.uuid4()}"),
    )
    for event in (job_event, dataset_event):
        assert to_dict(event) == Serde.to_dict(event)


def test_nulls_and_empty_objects_leave_arrays_but_empty_objects_stay_in_objects() -> None:
    node = Node({"kept": {}, "dropped": None}, None, [None, {}, Node(items=None), [], 0, ""])
    assert to_dict(node) == Serde.to_dict(node) == {"value": {"kept": {}}, "items": [[], 0, ""]}


def test_a_facet_that_is_a_dicts_subclass_serialises_as_serde_does_in_one_pass() -> None:
    """The OpenLineage provider's own facets (``DagInfo``, ``TaskInfo``) are dict subclasses:
    written as Serde writes them, without falling back to Serde and checking the JSON again for
    every task event (a review)."""
    import attr

    from airflow_blindata.capture import serialize

    class Info(dict):  # type: ignore[type-arg]
        pass

    @attr.define
    class Facet:
        info: dict  # type: ignore[type-arg]
        count: int | None = None

    value = Facet(info=Info(a=1, b=None, c=Info(x=[1, None, {}], y="s")))
    assert serialize._plain(value) == Serde.to_dict(value)
