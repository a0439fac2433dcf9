"""Secrets planted in a producer's SQL and free text never reach the plan (issue 42, items 3, 4).

Each case plants ``SECRET`` in one place of an otherwise ordinary run — the routine's SQL (as its
dialect reads it), a column's description, a custom facet's string property, a job's or a
dataset's name, a job's documentation — and the plan as ``plan --format json`` writes it, its
tables and its report must not show it, while what carried it is still planned (a routine, a
field, a property, a job entity, its flows).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.plans.render import render_tables
from tests import builders
from tests.builders import run_event
from tests.helpers import SECRET
from tests.mapper.helpers import CASES, DEFINITION, _run


def _plan(**planted: Any) -> CatalogPlan:
    return build([_run(**planted)], DEFINITION)


def _shown(plan: CatalogPlan) -> str:
    """Every output of a plan: its JSON (``plan --format json``), its tables and its report."""
    return "\n".join(
        (plan.model_dump_json(by_alias=True), render_tables(plan), plan.report.model_dump_json())
    )


def test_the_run_without_a_secret_plans_a_routine_fields_a_property_and_flows() -> None:
    plan = _plan()
    assert [r.name for r in plan.routines] == ["etl.load"]
    assert any(f.description == "the order's id" for f in plan.fields)
    assert any(name == "deployment.note" for e in plan.entities for name, _ in e.properties)
    assert plan.flows


@pytest.mark.parametrize("planted", list(CASES.values()), ids=list(CASES))
def test_a_planted_secret_is_in_no_output_of_the_plan(planted: dict[str, Any]) -> None:
    plan = _plan(**planted)
    assert SECRET not in _shown(plan)
    # what carried the secret is still planned, shown redacted
    (routine,) = plan.routines
    assert any(e.key.name == routine.name for e in plan.entities)  # the job's entity
    assert plan.flows and len(plan.fields) >= 2
    assert "***" in _shown(plan)


def test_a_job_whose_name_holds_a_secret_is_one_entity_for_its_routine_and_flows() -> None:
    """The job entity, its routine and the ends of its orchestration flows are one key, the name
    shown redacted; its scopes hold no secret; nothing is planned twice or left dangling."""
    dag, task = f"orders?token={SECRET}", f"load_orders?token={SECRET}"
    dag_run = "00000000-0000-4000-8000-0000000000d0"
    events = [
        run_event(dag, run_id=dag_run),
        _run(job=task, run_facets=builders.parent_facet(dag, dag_run)),
    ]
    plan = build(events, DEFINITION)
    assert SECRET not in _shown(plan)
    shown = {"orders?token=***", "load_orders?token=***"}
    assert [r.name for r in plan.routines] == ["load_orders?token=***"]
    entities = {e.key for e in plan.entities if e.key.name in shown}
    assert {key.name for key in entities} == shown
    ends = {end.entity for f in plan.flows for end in (f.source, f.target)}
    assert entities <= ends  # the orchestration flow's ends are the job entities
    assert {flow.scope for flow in plan.flows} == {
        "ol:airflow|load_orders?token=***",
        "ol:airflow|load_orders?token=***#orchestration",
    }
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 0
    assert plan.report.gap_count(GapCode.UNRESOLVED_ORCHESTRATION_TARGET) == 0


def _assertion_run() -> dict[str, Any]:
    """A run whose input is tested: an assertion written as SQL with a password, on a column
    named after a connection string (``dataQualityAssertions``)."""
    tests = builders.assertions_facet(
        builders.assertion(f"custom_sql: CREATE USER bob PASSWORD '{SECRET}'", success=False),
        builders.assertion(
            f"SELECT count(*) FROM t WHERE pwd = '{SECRET}'", column=f"postgres://u:{SECRET}@h"
        ),
    )
    return run_event(
        inputs=[builders.dataset("db.s.orders", input_facets=tests)],
        outputs=[builders.dataset("db.s.out")],
    )


def _lineage_run(*inputs: dict[str, Any], facets: dict[str, Any] | None = None) -> dict[str, Any]:
    lineage = builders.column_lineage_facet({"a": list(inputs)})
    schema = builders.schema_facet("a")
    return run_event(
        inputs=[builders.dataset("db.s.orders", facets=schema)],
        outputs=[builders.dataset("db.s.out", facets={**schema, **lineage, **(facets or {})})],
    )


def _legacy_lineage_run(**entry: Any) -> dict[str, Any]:
    """A ``columnLineage`` field with spec 1-0-0's field-level ``transformationDescription``."""
    run = _lineage_run(builders.input_field("db.s.orders", "a", transformations=[]))
    fields = run["outputs"][0]["facets"]["columnLineage"]["fields"]
    fields["a"].update(entry)
    if "transformationType" not in entry:  # 1-2-0's transformations, the description beside
        fields["a"]["inputFields"][0]["transformations"] = [
            {"type": "DIRECT", "subtype": "IDENTITY"}
        ]
    return run


MASKED = {"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": True}
TAGS = builders.facet(
    "TagsDatasetFacet", tags=[{"key": "password", "value": f"my secret {SECRET}", "field": "a"}]
)

CARRIERS: dict[str, tuple[dict[str, Any], str]] = {
    # case: (the run, a text of the plan that shows what carried the secret is still planned)
    "an assertion and its column, SQL with a password": (_assertion_run(), "CREATE USER bob"),
    "a transformation's description, SQL masking with a key": (
        _lineage_run(
            builders.input_field(
                "db.s.orders",
                "a",
                transformations=[{**MASKED, "description": f"aes_encrypt(a, '{SECRET}')"}],
            )
        ),
        "(masking): aes_encrypt(a, '***')",
    ),
    "a dataset named only in column lineage, with a signature": (
        _lineage_run(builders.input_field(f"db.s.orders?sig={SECRET}", "a", transformations=[])),
        "db.s.orders?sig=***",
    ),
    # a probe of secrets across channels: the field-level description reached the catalog
    "a field's deprecated transformationDescription": (
        _legacy_lineage_run(
            transformationType="IDENTITY",
            transformationDescription=f"copied with password={SECRET}",
        ),
        "DIRECT/IDENTITY: copied with password=***",
    ),
    "a field's transformationDescription beside its transformations": (
        _legacy_lineage_run(transformationDescription=f"copied, Bearer {SECRET}"),
        "copied, Bearer ***",
    ),
    "a field's tag whose key names a secret, its value with spaces": (
        _lineage_run(builders.input_field("db.s.orders", "a"), facets={"tags": TAGS}),
        "a: password=***",
    ),
}


@pytest.mark.parametrize(("event", "shown"), list(CARRIERS.values()), ids=list(CARRIERS))
def test_a_secret_in_a_test_a_transformation_a_lineage_name_or_a_tag_is_in_no_output(
    event: dict[str, Any], shown: str
) -> None:
    """Design §6 and the guide: secrets never reach "reports ... or the lineage graph". A check's
    code, name and properties, a column flow's description, an entity's source and a field's tag
    each showed the planted secret (a probe of the paths added in the last weeks)."""
    plan = build([event], DEFINITION)
    assert SECRET not in _shown(plan)
    assert shown in _shown(plan)


@pytest.mark.parametrize(
    "name",
    [
        f"db.s.t2; password={SECRET}",
        f"db.s.t3 host=db password={SECRET}",
        f"raw/orders.csv?api_key:{SECRET}",
        f"raw/orders.csv?password='{SECRET} more'",
        f"raw/orders.csv?X-Amz-Security-Token=IQoJb3J/{SECRET}",
    ],
)
def test_a_secret_parameter_in_a_dataset_name_is_in_no_output(name: str) -> None:
    """A dataset's name is read as a name (a ``token=eth`` segment is a partition), yet a secret
    given as a parameter of it, however it is spelt, is hidden (a review of
    ``redaction.redact_name``: a blank before it, libpq's blank-separated pairs, ``name:
    value``, a quoted value with a blank, a token holding a ``/`` each showed it)."""
    namespace = "s3://lake" if name.startswith("raw/") else "postgres://db:5432"
    event = run_event(outputs=[builders.dataset(name, namespace)])
    plan = build([event], builders.definition(builders.policy("s3://*"), builders.policy()))
    assert SECRET not in _shown(plan)
    assert any(e.key.name != "etl.load" for e in plan.entities)


@pytest.mark.parametrize(
    ("namespace", "name"),
    [
        pytest.param("https://hooks.slack.com", f"/services/T000/B000/{SECRET}", id="Slack"),
        pytest.param("https://discord.com", f"/api/webhooks/123/{SECRET}", id="Discord"),
        pytest.param("https://acme.webhook.office.com", f"/webhookb2/abc@def/{SECRET}", id="Teams"),
        pytest.param("https://api.corp", f"/v1/ingest?key={SECRET}", id="an HTTP API's key"),
    ],
)
def test_a_webhook_or_an_api_key_named_as_a_dataset_is_in_no_output(
    namespace: str, name: str
) -> None:
    """A chat webhook's path is its secret, and an HTTP API's ``?key=`` one too: named as a
    dataset, they reached its entity's name, its ``openLineageDataset`` and its flows (a probe
    of secrets; the property alone hid the key)."""
    event = run_event(
        inputs=[builders.dataset("public.src")], outputs=[builders.dataset(name, namespace)]
    )
    plan = build([event], builders.definition(builders.policy("https://*"), builders.policy()))
    assert SECRET not in _shown(plan)
    assert any(e.key.system != "airflow" and "***" in e.key.name for e in plan.entities)


@pytest.mark.parametrize(
    ("namespace", "name"),
    [
        pytest.param("s3://lake", "raw,token={}/transfers", id="a key's first segment, ,token="),
        pytest.param("gs://lake", "exports:token={}.parquet", id="a file's name, :token="),
        pytest.param("s3://lake/raw,token={}/transfers", "part-0.parquet", id="a namespace's path"),
        pytest.param("hdfs://nn:8020/warehouse/x,token={}/y", "part-0.parquet", id="HDFS's path"),
        pytest.param("oci://{}-bucket@mytenancy/raw", "orders.parquet", id="Oracle Cloud's bucket"),
    ],
)
def test_two_object_keys_that_differ_in_a_value_after_a_secret_word_stay_two_entities(
    namespace: str, name: str
) -> None:
    """An object store's key or path that holds ``,token=eth`` or ``:token=eth`` is a name, not
    a JDBC URL's properties: read as one, ``raw,token=eth/transfers`` and
    ``raw,token=btc/transfers`` (and two such namespaces, two Oracle Cloud buckets) were one
    entity (a review)."""

    def plan_of(value: str) -> CatalogPlan:
        event = run_event(
            inputs=[builders.dataset(name.format(value), namespace.format(value))],
            outputs=[builders.dataset("o/x", "s3://out")],
        )
        return build([event], builders.definition(builders.policy("*")))

    eth, btc = plan_of("eth"), plan_of("btc")
    assert _landing(eth) != _landing(btc)
    assert any("eth" in str(entity.key) for entity in eth.entities)


def _landing(plan: CatalogPlan) -> tuple[object, ...]:
    """Where a plan's datasets land: its Systems whole (name, namespaces, the
    ``openLineageNamespace`` stamp), its entities' keys and ``openLineageDataset``, its flows'
    names."""
    return (
        plan.systems,
        sorted((str(e.key), dict(e.properties).get("openLineageDataset")) for e in plan.entities),
        sorted(flow.name for flow in plan.flows),
    )


# A JDBC URL's properties in a dataset's namespace, and the same namespace without them
JDBC_PROPERTIES_IN_A_NAMESPACE = {
    "DB2's, after the database (jdbc:db2://host:port/db:prop=value;)": (
        f"db2://db2host:50000/SAMPLE:user=db2inst1;password={SECRET};",
        "db2://db2host:50000/SAMPLE",
    ),
    "DB2's, a key of DB2 on Cloud": (
        f"db2://db2host:50000/SAMPLE:apiKey={SECRET};securityMechanism=15;",
        "db2://db2host:50000/SAMPLE",
    ),
    "Teradata's, separated by commas": (
        f"teradata://tdhost/DATABASE=sales,PASSWORD={SECRET}",
        "teradata://tdhost/DATABASE=sales",
    ),
    "Teradata's, the password first": (
        f"teradata://tdhost/PASSWORD={SECRET},USER=etl",
        "teradata://tdhost",
    ),
    "Simba BigQuery's private key": (
        f"bigquery://https://www.googleapis.com/bigquery/v2:443;ProjectId=p;OAuthPvtKey={SECRET}",
        "bigquery://https://www.googleapis.com/bigquery/v2:443;ProjectId=p",
    ),
    "a password holding ;name=": (
        f"mysql://etl:Xy;k=9{SECRET}@db:3306/shop",
        "mysql://db:3306/shop",
    ),
    "a user holding ;name=": (f"postgres://etl;role=x:{SECRET}@db:5432", "postgres://db:5432"),
    "SQL Server's, a password holding ;name=": (
        f"sqlserver://etl:Hu;k=9{SECRET}@sql01:1433;databaseName=dwh",
        "sqlserver://sql01:1433;databaseName=dwh",
    ),
    "a password holding /p,name=": (f"postgres://etl:2024/p,w={SECRET}@db", "postgres://db"),
    "DB2's, a # in the password": (
        f"db2://db2host:50000/SAMPLE:user=db2inst1;password=Hun#{SECRET};",
        "db2://db2host:50000/SAMPLE",
    ),
    "DB2's, a & in the key": (
        f"db2://db2host:50000/SAMPLE:apiKey=Hun&{SECRET};",
        "db2://db2host:50000/SAMPLE",
    ),
    "Teradata's, a blank in the password": (
        f"teradata://tdhost/DATABASE=sales,PASSWORD=Hun {SECRET}",
        "teradata://tdhost/DATABASE=sales",
    ),
    "Teradata's LDAP sign-in": (
        f"teradata://tdhost/LOGMECH=LDAP,LOGDATA=etl@@{SECRET}",
        "teradata://tdhost",
    ),
    "MySQL Connector/J's key-value host": (
        f"mysql://(host=db,port=3306,user=etl,password={SECRET})/shop",
        "mysql://db:3306/shop",
    ),
    "SQL Server's, a password in braces": (
        f"sqlserver://sql01:1433;user=etl;password={{Hun;{SECRET}}};databaseName=dwh",
        "sqlserver://sql01:1433;databaseName=dwh",
    ),
    "SQL Server's, an @ and a : in a password in braces": (
        f"sqlserver://sql01:1433;databaseName=dwh;user=etl;password={{Pa:ss@{SECRET}}}",
        "sqlserver://sql01:1433;databaseName=dwh",
    ),
    "SQL Server's, a /, ? and # in a password in braces": (
        f"sqlserver://sql01:1433;password={{a/b?c#d@{SECRET}}};databaseName=dwh",
        "sqlserver://sql01:1433;databaseName=dwh",
    ),
    "SQL Server's, a }} in a password in braces": (
        f"sqlserver://sql01:1433;password={{a}}}};b@{SECRET}}};databaseName=dwh",
        "sqlserver://sql01:1433;databaseName=dwh",
    ),
    "SQL Server's, the database in braces": (
        f"sqlserver://sql01:1433;databaseName={{dwh}};password={{Pa:ss@{SECRET}}}",
        "sqlserver://sql01:1433;databaseName=dwh",
    ),
    "SQL Server's, an @ in the user and in the password": (
        f"sqlserver://sql01:1433;databaseName=dwh;user=etl@tenant;password=p@{SECRET}",
        "sqlserver://sql01:1433;databaseName=dwh",
    ),
    "DB2's, an @ in the password": (
        f"db2://db2host:50000/SAMPLE:user=db2inst1;password=p@{SECRET};",
        "db2://db2host:50000/SAMPLE",
    ),
    "Teradata's, an @ in the password first": (
        f"teradata://tdhost/PASSWORD=p@{SECRET},USER=etl",
        "teradata://tdhost",
    ),
    "a secret property in an object store's path": (
        f"hdfs://nn:8020/warehouse,password={SECRET}",
        "hdfs://nn:8020/warehouse",
    ),
    "a password that starts with digits and holds ;name=": (
        f"mysql://etl:1234;k={SECRET}@db1:3306/shop",
        "mysql://db1:3306/shop",
    ),
    "Hive's, an @ in the last property's password": (
        f"hive://hive1:10000/default;user=etl;password=Pa@{SECRET}",
        "hive://hive1:10000/default",
    ),
    "Teradata's only property, an @ in the password": (
        f"teradata://tdhost/PASSWORD=Pa@{SECRET}",
        "teradata://tdhost",
    ),
    "Connector/J's second password, in Teradata's list": (
        f"teradata://tdhost/DATABASE=sales,USER=etl,password1={SECRET}",
        "teradata://tdhost/DATABASE=sales",
    ),
}


@pytest.mark.parametrize(
    ("namespace", "bare"),
    list(JDBC_PROPERTIES_IN_A_NAMESPACE.values()),
    ids=list(JDBC_PROPERTIES_IN_A_NAMESPACE),
)
def test_no_secret_reaches_the_lineage_graph_from_a_namespaces_connection_properties(
    namespace: str, bare: str
) -> None:
    """Seed 002: "no secret reaches the lineage graph". A JDBC URL's properties are no part of
    the store's identity, as SQL Server's ``;props`` are not, whatever separates them (DB2's
    ``:`` and ``;``, Teradata's ``,``): the secret among them reached the System's name, its
    ``openLineageNamespace`` stamp, the entity's System, ``openLineageDataset``, ``source`` and
    the flows' names (a probe of secrets). The dataset lands where it lands without them."""

    def plan_of(namespace: str) -> CatalogPlan:
        event = run_event(
            inputs=[builders.dataset("SCH.T", namespace)],
            outputs=[builders.dataset("o/x", "s3://out")],
        )
        return build([event], builders.definition(builders.policy("*")))

    plan = plan_of(namespace)
    assert SECRET not in _shown(plan)
    assert _landing(plan) == _landing(plan_of(bare))


@pytest.mark.parametrize(
    "namespace",
    [
        f"teradata://tdhost/PASSWORD=Pa@{SECRET}",
        f"hive://hive1:10000/default;user=etl;password=Pa@{SECRET}",
        f"db2://db2host:50000/SAMPLE:user=a;password=Pa@{SECRET};",
    ],
)
def test_no_secret_reaches_the_catalog_from_a_data_sources_uri_with_an_at_in_a_property(
    namespace: str,
) -> None:
    """A ``dataSource`` facet's URI is shown as its namespace is: an ``@`` in a property's value
    read as a user info's end kept the password's rest as a host (``teradata://***@…``)."""
    event = run_event(
        inputs=[
            builders.dataset(
                "SCH.T", namespace, facets=builders.data_source_facet("src", namespace)
            )
        ],
        outputs=[builders.dataset("o/x", "s3://out")],
    )
    plan = build([event], builders.definition(builders.policy("*")))
    assert SECRET not in _shown(plan)


@pytest.mark.parametrize(
    "name",
    [
        "SAMPLE:apiKey={};.SCH.T",
        "SAMPLE:sslTrustStorePassword={};.SCH.T",
        "SAMPLE:user=db2inst1;password={};.SCH.T",
        # its value runs to its ``;``, past a ``#`` (a review) and a ``/`` (base64: a review)
        "SAMPLE:apiKey={}#Hun;.SCH.T",
        "SAMPLE:user=db2inst1;password=Ab/{}==;.SCH.T",
        "SAMPLE:user=etl;pass={};.SCH.T",
    ],
)
def test_no_secret_reaches_the_lineage_graph_from_connection_properties_in_a_name(
    name: str,
) -> None:
    """Seed 002: "no secret reaches the lineage graph". openlineage-java's DB2 extractor keeps
    the URL's path as the database, and its sanitizer drops only ``user``, ``username`` and
    ``password``: DB2 on Cloud's ``apiKey`` and an ``sslTrustStorePassword`` reached the
    entity's name, ``openLineageDataset``, ``source`` and the flows' names. The value is hidden
    as a name's other parameters are: two names that differ only in it are one entity, of the
    System the namespace names."""

    def plan_of(secret: str) -> CatalogPlan:
        event = run_event(
            inputs=[builders.dataset(name.format(secret), "db2://db2host:50000")],
            outputs=[builders.dataset("o/x", "s3://out")],
        )
        return build([event], builders.definition(builders.policy("*")))

    plan = plan_of(SECRET)
    assert SECRET not in _shown(plan)
    assert _landing(plan) == _landing(plan_of("0ther-Pw9"))
    assert ("db2://db2host:50000", re.sub(r"=[^;=]*\{\}[^;]*", "=***", name)) in {
        (e.key.system, e.key.name) for e in plan.entities
    }
