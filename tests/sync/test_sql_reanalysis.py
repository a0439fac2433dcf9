"""A partial SQL analysis is repeated when the catalog around it changes, within a bound.

Named after issue "One bad event or one fault" item 4: "Re-analyse what is not fully analysed
when the catalog around it changed (new entities), with a bound, and report
QLP_PENDING/partial analysis as a gap with its statements." Seed 001: "the analysis result may
become visible only in a later run".
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.sync import routines as sync_routines_module
from airflow_blindata.sync import snapshot
from tests.builders import policy
from tests.sync.helpers import client_of, definition, objects, plan_for

pytestmark = pytest.mark.integration

PG = "postgres://warehouse:5432"
MSSQL = "mssql://sqlsrv:1433"
TRINO = "trino://trino:8080"
COLUMNS = [{"name": "a", "type": "int"}, {"name": "b", "type": "int"}]
POLICIES = [
    policy("postgres://*", nameTemplate="{host}", technology="PostgreSQL"),
    policy("mssql://*", nameTemplate="{host}", nameProfile="mssql"),
    policy("trino://*", nameTemplate="{host}", nameProfile="trino"),
    policy("bigquery", nameProfile="bigquery"),
]


def sql_job(
    name: str,
    query: str,
    source: str,
    target: str,
    *,
    schema: bool,
    namespace: str = PG,
    dialect: str = "postgres",
) -> dict[str, Any]:
    """A SQL job reading ``source`` into ``target``; ``schema``: whether it describes its input
    (its output it always describes)."""
    described = {"schema": {"fields": COLUMNS}}
    facets = described if schema else {}
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-29T10:00:00.000Z",
        "producer": "https://example.com/producer",
        "run": {"runId": f"0190b1c2-0000-7000-8000-00000000000{len(name)}", "facets": {}},
        "job": {
            "namespace": "airflow",
            "name": name,
            "facets": {"sql": {"query": query, "dialect": dialect}},
        },
        "inputs": [{"namespace": namespace, "name": f"dwh.sales.{source}", "facets": facets}],
        "outputs": [{"namespace": namespace, "name": f"dwh.sales.{target}", "facets": described}],
    }


READER = sql_job(
    "etl.report",
    "INSERT INTO sales.report (a, b) SELECT a, b FROM sales.staging",
    "staging",
    "report",
    schema=False,
)
WRITER = sql_job(
    "etl.stage",
    "INSERT INTO sales.staging (a, b) SELECT a, b FROM sales.raw",
    "raw",
    "staging",
    schema=True,
)


def analysed_column_flows(emulator: Any, routine: str) -> int:
    statements = {s["uuid"] for s in objects(emulator, Kind.STATEMENT) if s.get("name") == routine}
    return sum(
        1
        for flow in objects(emulator, Kind.FLOW)
        if (flow.get("queryStatement") or {}).get("uuid") in statements
        and flow.get("fromPhysicalField")
    )


def sync(client: BlindataClient, events: list[dict[str, Any]]) -> Any:
    job = definition(systemPolicies=POLICIES)
    return snapshot(plan_for(client, events, job), client, job)


def test_a_reader_analysed_before_its_writer_is_analysed_again_when_the_writer_comes(
    emulator: Any, client: BlindataClient
) -> None:
    sync(client, [READER])
    first = sync(client, [READER])  # analysed by now: its input has no columns yet
    assert first.gaps["QLP_PARTIALLY_ANALYZED"].examples[0].startswith("OpenLineage:airflow/")
    assert analysed_column_flows(emulator, "etl.report") == 0

    second = sync(client, [READER, WRITER])  # the writer catalogues the reader's input
    assert second.counters["statementsReanalysed"] == 1
    third = sync(client, [READER, WRITER])
    assert analysed_column_flows(emulator, "etl.report") == 2  # as when both come at once
    assert third.counters.get("statementsReanalysed", 0) == 0  # nothing changed since
    assert "QLP_PARTIALLY_ANALYZED" not in third.gaps


@pytest.mark.parametrize(
    ("namespace", "dialect", "source", "query"),
    [
        # a name with a letter beyond ASCII, quoted and not
        (
            PG,
            "postgres",
            "régions",
            'INSERT INTO sales.report (a, b) SELECT a, b FROM sales."régions"',
        ),
        (
            PG,
            "postgres",
            "régions",
            "INSERT INTO sales.report (a, b) SELECT a, b FROM sales.régions",
        ),
        # a name with a blank, in SQL Server's brackets
        (
            MSSQL,
            "mssql",
            "Sales Zones",
            "INSERT INTO [sales].[report] ([a], [b]) SELECT [a], [b] FROM [sales].[Sales Zones]",
        ),
        # a hyphen in a quoted name, after a catalog and a schema
        (
            TRINO,
            "trino",
            "daily-zones",
            'INSERT INTO dwh.sales.report SELECT a, b FROM dwh.sales."daily-zones"',
        ),
        # a whole dotted path in one pair of backticks (BigQuery's)
        (
            "bigquery",
            "bigquery",
            "daily-zones",
            "INSERT INTO `dwh.sales.report` (a, b) SELECT a, b FROM `dwh.sales.daily-zones`",
        ),
    ],
    ids=["accented-quoted", "accented", "brackets-with-a-blank", "hyphen", "backticked-path"],
)
def test_a_reader_is_analysed_again_whatever_its_dialect_quotes_in_the_name_of_its_input(
    emulator: Any, client: BlindataClient, namespace: str, dialect: str, source: str, query: str
) -> None:
    """A probe of SQL routines: the SQL's names were read as ASCII words, so ``"régions"`` was
    ``r`` and ``gions`` and ``[Sales Zones]`` two words: the table its writer catalogued was
    never in the reader's analysis context, and its statement stayed partially analysed."""
    reader = sql_job(
        "etl.report", query, source, "report", schema=False, namespace=namespace, dialect=dialect
    )
    writer = sql_job(
        "etl.stage",
        f"INSERT INTO sales.{source} (a, b) SELECT a, b FROM sales.landing",
        "landing",
        source,
        schema=True,
        namespace=namespace,
        dialect=dialect,
    )
    sync(client, [reader])
    sync(client, [reader])
    second = sync(client, [reader, writer])  # the writer catalogues the reader's input
    assert second.counters.get("statementsReanalysed", 0) == 1, second.render()


@pytest.mark.parametrize(
    ("query", "dialect", "table"),
    [
        ("SELECT a FROM [sales].[Sales Zones]", None, "sales zones"),
        ("SELECT a FROM `sales`.`daily-zones`", None, "daily-zones"),
        ('SELECT a FROM sales."Régions"', None, "régions"),
        ("SELECT a FROM [sales].[Sales Zones]", "ansi", "sales zones"),
        ('SELECT a FROM public."raw.zones"', "postgres", "zones"),
        ("SELECT a FROM dwh.sales.orders", "postgres", "orders"),
    ],
)
def test_the_names_of_a_statement_are_read_in_every_quoting_its_dialect_allows(
    query: str, dialect: str | None, table: str
) -> None:
    """A statement of no dialect sqlglot knows may quote as SQL Server or MySQL do: its names
    are read in each of those quotings (a table named in it counts in its analysis context)."""
    assert table in sync_routines_module._table_names(query, dialect)


def test_a_snapshot_reanalyses_a_bounded_number_of_routines(
    emulator: Any, client: BlindataClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    readers = [
        sql_job(
            f"etl.report{number}",
            f"INSERT INTO sales.report{number} (a, b) SELECT a, b FROM sales.staging",
            "staging",
            f"report{number}",
            schema=False,
        )
        for number in range(3)
    ]
    sync(client, readers)
    sync(client, readers)
    monkeypatch.setattr(sync_routines_module, "REANALYSIS_LIMIT", 2)
    bounded = sync(client, [*readers, WRITER])
    assert bounded.counters["statementsReanalysed"] == 2
    rest = sync(client, [*readers, WRITER])
    assert rest.counters["statementsReanalysed"] == 1  # the third one, one snapshot later


def test_a_statement_stored_with_other_line_ends_or_blanks_at_its_ends_is_not_sent_again(
    client: BlindataClient,
) -> None:
    """The contract does not say that Blindata gives a text back byte for byte. A server that
    stores a statement trimmed, or with its line ends changed, would have it sent again and
    analysed again at every snapshot (found by a review of the client against the contract):
    the text is compared as such a server may store it."""
    job = sql_job(
        "etl.copy",
        "INSERT INTO sales.copy (a, b)\r\nSELECT a, b FROM sales.raw\r\n",
        "raw",
        "copy",
        schema=True,
    )
    first = sync(client, [job])
    assert first.counters["statementsCreated"] == 1
    (stored,) = [s for s in client.api.statements.list() if s.name == "etl.copy"]
    assert stored.query_text is not None and stored.query_text.endswith("\r\n")
    trimmed = stored.query_text.replace("\r\n", "\n").strip()  # as another server keeps it
    client.api.statements.update(stored.model_copy(update={"query_text": trimmed}))
    again = sync(client, [job])
    assert again.counters.get("statementsUpdated", 0) == 0


def test_a_statement_whose_comments_change_at_every_run_is_not_analysed_again(
    client: BlindataClient,
) -> None:
    """Seed 001 analyses a routine when its SQL changed; comments and blanks do not change its
    ``openLineageSqlHash``. Airflow renders a comment of its run into the text: it was sent, and
    analysed, again at every snapshot (a probe)."""

    def run(day: int) -> dict[str, Any]:
        query = (
            f"-- rendered for 2026-12-0{day}\n"
            "INSERT INTO sales.copy (a, b)\n  SELECT a, b FROM sales.raw"
        )
        event = sql_job("etl.copy", query, "raw", "copy", schema=True)
        event["run"]["runId"] = f"0190b1c2-0000-7000-8000-00000000010{day}"
        event["eventTime"] = f"2026-12-0{day}T10:00:00.000Z"
        return event

    first = sync(client, [run(1)])
    assert first.counters["statementsCreated"] == 1
    again = sync(client, [run(1), run(2)])

    assert again.counters.get("statementsUpdated", 0) == 0, again.render()
    assert again.counters.get("statementsSubmitted", 0) == 0, again.render()


class ListsStatementSummaries(httpx.HTTPTransport):
    """A Blindata whose list of a bucket's statements leaves out the bucket they were asked by
    (the contract offers no GET of one statement, nor says what its list holds), and that keeps
    each PUT body it is sent."""

    def __init__(self) -> None:
        super().__init__()
        self.puts: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "PUT" and "/queryparser/statements/" in path:
            self.puts.append(json.loads(request.content))
        response = super().handle_request(request)
        if request.method != "GET" or not path.endswith("/queryparser/statements"):
            return response
        page = json.loads(response.read())
        for item in page.get("content", []):
            item.pop("queryBucket", None)
        return httpx.Response(response.status_code, json=page)


def test_a_statement_updated_from_a_list_without_its_bucket_keeps_its_bucket(
    emulator: Any,
) -> None:
    """The SQL of a job changed: its statement was PUT as the list gave it, with the new text,
    and a server whose list leaves out the bucket would have had it cut off by a PUT that
    replaces the statement (a review of the client against the contract). The routine and the
    bucket are sent whatever the list gives."""
    transport = ListsStatementSummaries()
    client = client_of(emulator, transport)
    first = sql_job(
        "etl.copy",
        "INSERT INTO sales.copy (a, b) SELECT a, b FROM sales.raw",
        "raw",
        "copy",
        schema=True,
    )
    sync(client, [first])
    changed = sql_job(
        "etl.copy",
        "INSERT INTO sales.copy (a, b) SELECT b, a FROM sales.raw",
        "raw",
        "copy",
        schema=True,
    )
    report = sync(client, [changed])
    assert report.counters["statementsUpdated"] == 1
    (put,) = transport.puts
    assert put["routine"]["uuid"] and put["queryBucket"]["uuid"]
    (stored,) = [s for s in objects(emulator, Kind.STATEMENT) if s["name"] == "etl.copy"]
    assert stored["queryBucket"] == put["queryBucket"] and "SELECT b, a" in stored["queryText"]
