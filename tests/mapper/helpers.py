"""What the mapper's tests share with each other and with the sync's and events' tests.

The fold's small world (``NS``, ``JOB``, ``at``, ``dataset``, ``event``, ``doc``: parsed events
of one job, a second apart), the dbt fixture runs (``dbt_events``, ``ALL_DBT``; as raw dicts,
``dbt_event_dicts``), the reading's Hypothesis strategies of raw histories (``histories``,
``datasets``, ``parents``, the facet tables ``RUN_FACETS``, ``JOB_FACETS``, ``DATASET_FACETS``),
the flows of a plan (``flows``, ``pairs``) and the planted secrets' cases (``CASES``,
``DEFINITION``, ``_run``). They moved here as they were from the test files that had them.
``as_dict`` dumps a fold's classes as ``model_dump`` dumped them when they were pydantic models.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from hypothesis import strategies as st
from pydantic import TypeAdapter

from airflow_blindata.events import Event, parse_event
from airflow_blindata.mapper.fold import JobKey
from airflow_blindata.mapper.fold.reading import read_events
from airflow_blindata.mapper.plan import CatalogPlan, PlannedFlow
from airflow_blindata.mapper.report import Report
from airflow_blindata.mapper.systems import KnownSystem
from tests import builders
from tests.builders import PG, facet, policy, run_event
from tests.helpers import SECRET, SQL_SECRETS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "openlineage"
NS = "postgres://db:5432"
JOB = JobKey("halden", "pv.aggregate")


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def as_dict(value: Any, mode: Literal["python", "json"] = "python") -> Any:
    """A fold's dataclass (``Fold``, ``JobFold``, ...) as nested dicts and lists, each facet
    dumped by its own model (``FacetMap``'s ``SerializeAsAny``), ``Fold``'s indexes left out:
    what ``model_dump`` gave when the fold's classes were pydantic models, compared as it was."""
    kind = type(value)
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        adapter = _ADAPTERS[kind] = TypeAdapter(kind)
    return adapter.dump_python(value, mode=mode)


def at(second: int) -> str:
    return f"2026-10-26T06:00:{second:02d}Z"


def dataset(name: str, **containers: dict[str, Any]) -> dict[str, Any]:
    return {"namespace": NS, "name": name, **containers}


def event(
    event_type: str | None,
    second: int,
    *,
    run_id: str = "run-1",
    job: str = JOB.name,
    run_facets: dict[str, Any] | None = None,
    job_facets: dict[str, Any] | None = None,
    inputs: list[dict[str, Any]] | None = None,
    outputs: list[dict[str, Any]] | None = None,
    producer: str = "https://example.com/p",
) -> Event:
    raw: dict[str, Any] = {
        "eventTime": at(second),
        "producer": producer,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "job": {"namespace": JOB.namespace, "name": job, "facets": job_facets or {}},
        "inputs": inputs or [],
        "outputs": outputs or [],
    }
    if event_type != "JOB":
        raw["run"] = {"runId": run_id, "facets": run_facets or {}}
        if event_type is not None:
            raw["eventType"] = event_type
    parsed = parse_event(raw)
    assert parsed.event is not None and parsed.malformed_facets == (), parsed
    return parsed.event


def created_as_known(plan: CatalogPlan) -> list[KnownSystem]:
    """The Systems ``plan`` creates, as the next plan knows them from Blindata (with their
    stamps): to check that a second snapshot places everything where the first did."""
    return [KnownSystem(s.name, f"u-{i}", s.stamp) for i, s in enumerate(plan.systems) if s.create]


def doc(text: str) -> dict[str, Any]:
    return {"documentation": {"description": text}}


def dbt_events(*names: str) -> list[Event]:
    lines = [
        line
        for name in names
        for line in (FIXTURES / "dbt" / f"{name}.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return read_events(lines, Report())


ALL_DBT = (
    "postgres_run_successful_run_ol_events",
    "postgres_seed_seed_ol_events",
    "postgres_snapshot_snapshot_ol_events",
    "postgres_test_test_ol_events",
)


FACET_VALUES = st.sampled_from(["SELECT 1", "SELECT 2", "SELECT 3"])
PARENT = {"job": {"namespace": "airflow", "name": "dag"}}
GOOD_DOC = {"documentation": {"description": "fine"}}
BAD_DOC = {"documentation": {"description": {"not": "text"}}}
DOC_URL = "https://openlineage.io/spec/facets/1-0-1/DocumentationJobFacet.json"
SCHEMA_URL = "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json"


def raw_event(
    event_type: str,
    second: int,
    run_id: str,
    *,
    run_facets: dict[str, Any] | None = None,
    job_facets: dict[str, Any] | None = None,
    inputs: list[dict[str, Any]] | None = None,
    outputs: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return run_event(
        "pv.aggregate",
        namespace="halden",
        event_type=event_type,
        time=at(second),
        run_id=run_id,
        run_facets=run_facets,
        job_facets=job_facets,
        inputs=inputs or (),
        outputs=outputs or (),
        producer="https://example.com/p",
    )


RUN_FACETS = [
    {},
    {"nominalTime": {"nominalStartTime": at(1)}},
    {"nominalTime": {"nominalStartTime": at(2)}, "acme": {"v": 1}},
    {"nominalTime": {"nominalStartTime": "soon"}},
    {"nominalTime": {"_deleted": True}},
    {"acme": {"v": 2}},
    {"acme": {"v": "bad \udc80"}},  # unreadable event, whichever facet is used
]


JOB_FACETS = [
    {},
    GOOD_DOC,
    BAD_DOC,
    {"documentation": {"_deleted": True}},
    {"sql": {"query": "SELECT 1"}},
    {"sql": {"query": "DROP TABLE a"}},  # a table the job's SQL drops: dropped as by a facet
    {"sql": {"query": 7}},
    {"acme": {"v": 1}},
    {"foo": {"_schemaURL": DOC_URL, "description": "moved"}},
    {"foo": {"v": 2}},
]


DATASET_FACETS = [
    {},
    {"schema": {"fields": [{"name": "a"}]}},
    {"schema": {"fields": 3}},
    {"schema": {"_deleted": True}},
    {"documentation": {"description": "d"}},
    {"foo": {"_schemaURL": SCHEMA_URL, "fields": [{"name": "b"}]}},
    # a state under the spec's key: a RENAME is kept apart from the states after it
    {"lifecycleStateChange": {"lifecycleStateChange": "OVERWRITE"}},
    {"lifecycleStateChange": {"lifecycleStateChange": "DROP"}},
    {
        "lifecycleStateChange": {
            "lifecycleStateChange": "RENAME",
            "previousIdentifier": {"namespace": NS, "name": "old"},
        }
    },
]


IO_FACETS = [
    {},
    {"subset": {"inputCondition": {"a": 1}, "outputCondition": {"a": 1}}},
    {"subset": {"inputCondition": 5, "outputCondition": 5}},
    {"acme": {"v": 1}},
    {"outputStatistics": {"rowCount": 3}},
    {"dataQualityAssertions": {"assertions": [{"assertion": "not_null", "success": True}]}},
]


_FIELD_NAMES = {"inputFacets": "input_facets", "outputFacets": "output_facets"}


@st.composite
def datasets(draw: st.DrawFn, io: str) -> list[dict[str, Any]]:
    """Datasets, their io facets now and then under the model's field name (which it reads)."""
    return [
        {
            "namespace": NS,
            "name": name,
            "facets": draw(st.sampled_from(DATASET_FACETS)),
            draw(st.sampled_from([io, io, io, _FIELD_NAMES[io]])): draw(st.sampled_from(IO_FACETS)),
        }
        for name in draw(st.lists(st.sampled_from(["a", "b"]), max_size=2))
    ]


PARENT_JOB = {"namespace": "airflow", "name": "dag"}


def parent_facet(run_id: Any, *, valid: bool = True) -> dict[str, Any]:
    """A ``parent`` run facet naming ``run_id``; without its job (malformed) unless ``valid``."""
    facet: dict[str, Any] = {"run": {"runId": run_id}}
    if valid:
        facet["job"] = PARENT_JOB
    return {"parent": facet}


@st.composite
def parents(draw: st.DrawFn, parent: str | None) -> dict[str, Any]:
    """The ``parent`` facet of one event of a run whose parent run is ``parent`` (Airflow: the DAG
    run; the instances of a mapped task share it): mostly that, now and then none, malformed (it
    still names the run), empty, or naming another."""
    if parent is None:
        return {}
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return {}
    if kind == 1:
        return parent_facet(parent, valid=False)
    if kind == 2:
        return parent_facet(draw(st.sampled_from(["", 7, "p1", "p2"])))
    return parent_facet(parent)


def task_instance(index: int | None) -> dict[str, Any]:
    """The ``airflow`` facet of the events of a run that is instance ``index`` of an Airflow
    task (``None``: not a task; -1: a task not mapped, whose facet names no index), as Airflow's
    provider sends it with every event of a task run."""
    if index is None:
        return {}
    if index == -1:
        return {"airflow": {"taskInstance": {"try_number": 1}}}
    return {"airflow": {"taskInstance": {"map_index": index, "try_number": 1}}}


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Runs of one job, each of a few events whose facets overlap, differ, are deleted, or are
    malformed, in every container (run, job, dataset, input and output facets); runs often name
    a parent run they share with others (``parents``: the instances of a mapped task), and an
    Airflow map index (``task_instance``: the instances of a mapped task in several DAG runs)."""
    events = []
    for number in range(draw(st.integers(1, 6))):
        run = f"r{number}"
        parent = draw(st.sampled_from([None, "p1", "p1", "p2"]))
        index = draw(st.sampled_from([None, None, -1, 0, 1]))
        cycle = ["START", *(["RUNNING"] * draw(st.integers(0, 1))), "COMPLETE"]
        for step, event_type in enumerate(cycle):
            if draw(st.integers(0, 5)) == 0:
                event_type = draw(st.sampled_from(["FAIL", "RUNNING", "ABORT"]))
            second = draw(st.sampled_from([3 * number + step, 0]))  # ties are common
            event = raw_event(
                event_type,
                second,
                run,
                run_facets=draw(st.sampled_from(RUN_FACETS))
                # Airflow's provider sends a task run's parent with its every event; another
                # producer now and then not, or malformed (``parents``)
                | (parent_facet(parent) if index is not None and parent else draw(parents(parent)))
                | task_instance(index),
                job_facets=draw(st.sampled_from(JOB_FACETS)),
                inputs=draw(datasets("inputFacets")),
                outputs=draw(datasets("outputFacets")),
            )
            events.append(event)
    return events


def cycle(
    start: dict[str, Any], complete: dict[str, Any], *runs: dict[str, Any]
) -> list[dict[str, Any]]:
    """One run, START then COMPLETE, each with the containers given (keyword arguments of
    ``raw_event``), after older runs (COMPLETE only) with the containers given."""
    older = [raw_event("COMPLETE", n, f"old{n}", **facets) for n, facets in enumerate(runs)]
    return [
        *older,
        raw_event("START", 10, "r", **start),
        raw_event("COMPLETE", 11, "r", **complete),
    ]


def dbt_event_dicts() -> list[dict[str, Any]]:
    events = []
    for path in sorted((FIXTURES / "dbt").glob("*.jsonl")):
        events += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return events


def flows(plan: CatalogPlan, kind: str | None = None) -> list[PlannedFlow]:
    return [f for f in plan.flows if kind is None or f.kind == kind]


def pairs(plan: CatalogPlan, kind: str = "table") -> set[tuple[str, str]]:
    def label(end: Any) -> str:
        text = end.entity.name
        return f"{text}.{end.field}" if end.field else text

    return {(label(f.source), label(f.target)) for f in flows(plan, kind)}


DEFINITION = builders.definition(
    policy("postgres://*", nameTemplate="{host}"), policy("s3://*"), policy("https://*")
)


def _run(
    *,
    job: str = "etl.load",
    sql: str = "INSERT INTO s.out SELECT a FROM s.orders",
    dialect: str | None = "postgres",
    description: str = "the order's id",
    note: str = "deployed by the CI",
    documentation: str = "Loads the orders.",
    output: tuple[str, str] = (PG, "db.s.out"),
    run_facets: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A run of ``job`` that reads ``db.s.orders`` (its column ``a`` described by
    ``description``) and writes ``output``, with its SQL, a custom job facet ``deployment``
    whose ``note`` is a string property, and its documentation."""
    source = builders.dataset(
        "db.s.orders",
        PG,
        facets=builders.schema_facet({"name": "a", "type": "int", "description": description}),
    )
    target = builders.dataset(output[1], output[0], facets=builders.schema_facet("a"))
    sql_facet: dict[str, Any] = {"query": sql}
    if dialect:
        sql_facet["dialect"] = dialect
    return run_event(
        job,
        inputs=[source],
        outputs=[target],
        job_facets={
            "sql": facet("SQLJobFacet", **sql_facet),
            "deployment": {"_producer": builders.PRODUCER, "_schemaURL": "x", "note": note},
            "documentation": facet("DocumentationJobFacet", description=documentation),
        },
        run_facets=run_facets,
    )


CASES: dict[str, dict[str, Any]] = {
    **{
        f"routine SQL: {name}": {"sql": sql, "dialect": dialect}
        for name, (sql, dialect) in SQL_SECRETS.items()
    },
    # a statement without a dialect, on PostgreSQL datasets: read as every reading does, not as
    # the platform's (Spark SQL over JDBC quotes its options' values with ", a name in PostgreSQL)
    "routine SQL: Spark's JDBC options on PostgreSQL datasets": {
        "sql": f'CREATE TABLE t USING jdbc OPTIONS (url "jdbc:x", password "{SECRET}")',
        "dialect": None,
    },
    "column description: key: value": {"description": f"password: {SECRET}"},
    "column description: JSON": {"description": f'sample {{"api_key": "{SECRET}"}}'},
    "column description: bearer": {"description": f"Authorization: Bearer {SECRET}"},
    "custom facet property: key=value": {"note": f"deploy with MYSQL_PWD={SECRET}"},
    "custom facet property: PEM": {
        "note": f"-----BEGIN EC PRIVATE KEY-----\nMHc{SECRET}\n-----END EC PRIVATE KEY-----"
    },
    "custom facet property: JSON": {"note": f'{{"client_secret": "{SECRET}"}}'},
    "job documentation: token": {"documentation": f"Call it with token: {SECRET}."},
    "job documentation: curl -u": {"documentation": f"Get it: curl -u etl:{SECRET} https://x.io"},
    "custom facet property: --password": {"note": f"mysqldump --password {SECRET} dwh"},
    "custom facet property: an Azure key": {
        "note": f"spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net={SECRET}"
    },
    "job name: ?token=": {"job": f"fetch_orders?token={SECRET}"},
    "job name: &access_token=": {"job": f"api.orders?a=1&access_token={SECRET}"},
    "a quality test's name and texts": {
        "run_facets": {
            "test": {
                "tests": [
                    {
                        "name": f"ping api?token={SECRET}",
                        "status": "fail",
                        "description": f"Authorization: Bearer {SECRET}",
                        "expected": f'{{"password": "{SECRET}"}}',
                    }
                ]
            }
        }
    },
    "dataset name: ?X-Amz-Signature=": {
        "output": ("s3://bucket", f"exports/out.csv?X-Amz-Signature={SECRET}")
    },
    # a URL as an object key: its // is one folder's end when the key is split (found by a probe)
    "dataset name: a URL's password on an object store": {
        "output": ("s3://bucket", f"https://etl:{SECRET}@api.example.com/v1/orders")
    },
    "dataset name: a database URL on an object store": {
        "output": ("s3://bucket", f"postgres://etl:{SECRET}@db:5432/dwh.public.orders")
    },
}
