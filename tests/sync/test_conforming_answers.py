"""Snapshots and cleanups against a Blindata that answers otherwise than the emulator, within the
contract (``blindata-api.md``), over loopback HTTP.

Each transport here plays one freedom a conforming server has and the emulator does not use: an
upload answer that counts a discarded row without naming it in ``errors``, a create answered
without a body, counts sent as ``null``. The client must not take what it cannot prove landed
for written, and must not fail on what it could read otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.blindata.models import (
    AdditionalProperty,
    PhysicalEntity,
    QualityCheck,
    QualitySuite,
    QueryBucket,
    Ref,
    System,
)
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.sync import cleanup, snapshot
from tests.builders import (
    dataset,
    documentation_facet,
    field,
    lifecycle_facet,
    run_event,
    schema_facet,
)
from tests.sync.helpers import (
    PG,
    History,
    SummaryListings,
    UpperCaseReferences,
    client_of,
    counts,
    crawl,
    dbt_events,
    definition,
    dq_run,
    metrics_run,
    next_second,
    objects,
    plan_for,
)

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_margin")]

Row = dict[str, Any]


class SilentDiscards(httpx.HTTPTransport):
    """A Blindata that discards the upload rows ``discard`` picks, and answers the upload with
    its counts only: ``rowDiscarded`` says how many, ``errors`` is absent (the contract names
    ``errors``; a server may leave out what it does not fill)."""

    def __init__(self, path: str, discard: Callable[[Row], bool]) -> None:
        super().__init__()
        self.path = re.compile(path)
        self.discard = discard
        self.discarded: list[Row] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not self.path.search(request.url.path):
            return super().handle_request(request)
        rows = json.loads(request.read())
        kept = [row for row in rows if not self.discard(row)]
        dropped = len(rows) - len(kept)
        self.discarded += [row for row in rows if self.discard(row)]
        forwarded = httpx.Request(
            "POST", request.url, headers=request.headers, content=json.dumps(kept).encode()
        )
        forwarded.headers["Content-Length"] = str(len(forwarded.content))
        answer = super().handle_request(forwarded)
        body = json.loads(answer.read())
        counts = {
            "message": body.get("message"),
            "rowCreated": body.get("rowCreated", 0),
            "rowUpdated": body.get("rowUpdated", 0),
            "rowDiscarded": body.get("rowDiscarded", 0) + dropped,
        }
        return httpx.Response(200, json=counts, headers={"Date": answer.headers.get("Date", "")})


FLOWS = r"^/api/v1/dataflows/\*/upload$"
ENTITIES = r"^/api/v1/physical_entities/\*/upload$"


def scoped_flows(emulator: Any) -> dict[tuple[str, str], str]:
    """The flows of the job's scopes (the SQL analysis adds flows of no scope)."""
    return {
        (f["scope"], f["name"]): f["uuid"] for f in objects(emulator, Kind.FLOW) if f.get("scope")
    }


def test_a_flow_discarded_without_an_error_is_neither_written_nor_removed(
    client: BlindataClient, emulator: Any
) -> None:
    job = definition()
    history = History()
    events = dbt_events()
    first = history.add(snapshot(plan_for(client, events, job), client, job))
    assert first.status == "success", first.render()
    flows = scoped_flows(emulator)
    victim = sorted(flows)[0]
    next_second(emulator)

    transport = SilentDiscards(FLOWS, lambda row: (row["scope"], row["name"]) == victim)
    with client_of(emulator, transport) as blindata:
        second = history.add(snapshot(plan_for(blindata, events, job), blindata, job))
    report = history.add(cleanup(job, client, history))

    assert transport.discarded, "the flow was uploaded"
    assert second.status == "partial", second.render()
    assert second.failed("flow") == 1
    assert victim[0] in second.failed_scopes
    assert report.status == "success", report.render()
    assert scoped_flows(emulator) == flows  # still described: its scope was held


def test_a_discarded_row_is_found_among_many_and_the_others_are_written(
    client: BlindataClient, emulator: Any
) -> None:
    """The rows a server discarded without naming them are found by sending the batch again in
    halves (an upload is an upsert): only they fail."""
    job = definition()
    plan = plan_for(client, dbt_events(), job)
    names = sorted(flow.name for flow in plan.flows if flow.kind != "orchestration")
    assert len(names) >= 3
    victims = {names[0], names[-1]}
    transport = SilentDiscards(FLOWS, lambda row: row["name"] in victims)
    with client_of(emulator, transport) as blindata:
        report = snapshot(plan, blindata, job)

    assert report.status == "partial", report.render()
    assert report.failed("flow") == 2, report.render()
    written = {name for _, name in scoped_flows(emulator)}
    assert written == {flow.name for flow in plan.flows} - victims


def test_a_silent_discard_in_a_direct_upload_names_the_row(emulator: Any) -> None:
    """``BlindataClient.upload`` reports each discarded row with its index, named or not."""
    transport = SilentDiscards(ENTITIES, lambda row: row["name"] == "b")
    with client_of(emulator, transport) as blindata:
        system = blindata.api.systems.create(System(name="warehouse", subtype="DATABASE"))
        rows = [
            PhysicalEntity(system=Ref(uuid=system.uuid or ""), schema="s", name=name)
            for name in ("a", "b", "c", "d", "e")
        ]
        answer = blindata.api.physical_entities.upload(rows, batch_size=5)
    assert answer.discarded == 1
    assert [(error.index, error.row.name) for error in answer.errors] == [(1, "b")]  # type: ignore[attr-defined]
    assert sorted(e["name"] for e in objects(emulator, Kind.ENTITY)) == ["a", "c", "d", "e"]


CREATES = (
    "/api/v1/systems",
    "/api/v1/queryparser/buckets",
    "/api/v1/queryparser/statements",
    "/api/v1/data-quality/suites",
    "/api/v1/profiling/monitors",
)


class CreatesWithoutBody(httpx.HTTPTransport):
    """A Blindata that creates as the emulator does and answers ``201`` with no body: the
    contract gives the status of most creates and no body (for a suite, a bucket, a statement, a
    monitor), so a server may answer only the status, with the new object's ``Location`` or
    without it."""

    def __init__(self, *, location: bool) -> None:
        super().__init__()
        self.location = location
        self.empty: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method != "POST" or request.url.path not in CREATES:
            return response
        if not response.is_success:
            return response
        created = json.loads(response.read())
        headers = {"Date": response.headers.get("Date", "")}
        if self.location:
            headers["Location"] = str(request.url.copy_with(query=None)) + "/" + created["uuid"]
        self.empty.append(request.url.path)
        return httpx.Response(201, headers=headers)


@pytest.mark.parametrize("location", [True, False], ids=["with-location", "without-location"])
def test_creates_answered_without_a_body_are_found(emulator: Any, location: bool) -> None:
    job = definition()
    events = (
        dbt_events()
        + dq_run("c", "run-1", [{"assertion": "not_null", "column": "id", "success": True}])
        + metrics_run("run-p", ["orders"])
    )
    transport = CreatesWithoutBody(location=location)
    with client_of(emulator, transport) as blindata:
        report = snapshot(plan_for(blindata, events, job), blindata, job)

    assert report.status == "success", report.render()
    assert set(transport.empty) == set(CREATES)
    assert report.counters["systemsCreated"] == len(objects(emulator, Kind.SYSTEM))
    assert report.counters["statementsSubmitted"] == len(objects(emulator, Kind.STATEMENT)) > 0
    assert report.counters["qualityResultsPublished"] == len(objects(emulator, Kind.RESULT)) > 1
    assert report.counters["profilingRecordsUploaded"] == 1
    assert len(objects(emulator, Kind.SUITE)) == len(objects(emulator, Kind.MONITOR)) == 1


@pytest.mark.parametrize("location", [True, False], ids=["with-location", "without-location"])
def test_a_create_answered_without_a_body_gives_the_uuid_of_its_location(
    emulator: Any, location: bool
) -> None:
    with client_of(emulator, CreatesWithoutBody(location=location)) as blindata:
        created = blindata.api.systems.create(System(name="warehouse", subtype="DATABASE"))
    (stored,) = objects(emulator, Kind.SYSTEM)
    assert created.name == "warehouse"
    assert created.uuid == (stored["uuid"] if location else None)


class CountsAsNull(httpx.HTTPTransport):
    """A Blindata that leaves the counts of its upload answers unset: ``null`` (a boxed
    ``Integer`` a Java server did not fill), with ``errors`` ``null`` too."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method != "POST" or not request.url.path.endswith("/*/upload"):
            return response
        body = json.loads(response.read())
        if body.get("errors"):
            return httpx.Response(response.status_code, json=body, headers=response.headers)
        unset = dict.fromkeys(("rowCreated", "rowUpdated", "rowDiscarded", "errors"))
        headers = {"Date": response.headers.get("Date", "")}
        return httpx.Response(200, json={"message": body.get("message"), **unset}, headers=headers)


def test_upload_answers_with_null_counts_are_read_as_nothing_reported(emulator: Any) -> None:
    job = definition()
    with client_of(emulator, CountsAsNull()) as blindata:
        report = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
    assert report.status == "success", report.render()
    assert report.counters["entitiesDescribed"] == len(objects(emulator, Kind.ENTITY)) > 0
    assert report.counters["entitiesCreated"] == 0  # not reported by the server


class LowerCaseStatus(httpx.HTTPTransport):
    """A Blindata that spells the ``analysisStatus`` of its statements in lower case."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method != "GET" or request.url.path != "/api/v1/queryparser/statements":
            return response
        page = json.loads(response.read())
        for statement in page["content"]:
            if isinstance(statement.get("analysisStatus"), str):
                statement["analysisStatus"] = statement["analysisStatus"].lower()
        return httpx.Response(response.status_code, json=page, headers=response.headers)


def test_an_analysis_status_in_another_case_is_read(emulator: Any) -> None:
    job = definition()
    with client_of(emulator, LowerCaseStatus()) as blindata:
        snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
        second = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
    read = sum(
        second.counters.get(name, 0)
        for name in ("statementsAnalyzed", "statementsPartiallyAnalyzed")
    )
    assert second.counters.get("statementsSubmitted", 0) == 0, second.render()
    assert read + second.gap_count(GapCode.QLP_ANALYSIS_ERROR) == len(
        objects(emulator, Kind.STATEMENT)
    ), second.render()


class NoDocumentAnswer(httpx.HTTPTransport):
    """A Blindata that says "no document" otherwise than with the contract's 404: a ``204``, or
    a ``200`` whose ``content`` is ``null``."""

    def __init__(self, answer: str) -> None:
        super().__init__()
        self.answer = answer

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method != "GET" or not request.url.path.endswith("/documentation"):
            return response
        if response.status_code != 404:
            return response
        headers = {"Date": response.headers.get("Date", "")}
        if self.answer == "204":
            return httpx.Response(204, headers=headers)
        return httpx.Response(200, json={"content": None}, headers=headers)


@pytest.mark.parametrize("answer", ["204", "null"])
def test_an_entity_without_documentation_answered_otherwise_than_404_gets_it(
    emulator: Any, answer: str
) -> None:
    from tests.sync.helpers import _documented_plan

    job = definition()
    with client_of(emulator, NoDocumentAnswer(answer)) as blindata:
        bare = snapshot(_documented_plan(blindata, ""), blindata, job)  # the entity, no document
        first = snapshot(_documented_plan(blindata, "# Orders\n\nVersion one."), blindata, job)
        again = snapshot(_documented_plan(blindata, "# Orders\n\nVersion one."), blindata, job)
    assert bare.status == first.status == again.status == "success", first.render()
    assert first.counters["documentsWritten"] == 1
    assert again.counters["documentsUnchanged"] == 1


class ChecksWithoutEnabled(httpx.HTTPTransport):
    """A Blindata whose check listing leaves ``enabled`` out (a field it does not fill)."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method != "GET" or request.url.path != "/api/v1/data-quality/checks":
            return response
        page = json.loads(response.read())
        for check in page["content"]:
            check.pop("enabled", None)
        return httpx.Response(response.status_code, json=page, headers=response.headers)


def test_the_checks_of_a_removed_job_are_disabled_when_the_listing_leaves_enabled_out(
    emulator: Any,
) -> None:
    """Seed 003: "When a snapshot removes a job, the agent disables the checks of that job": a
    check listed without ``enabled`` is not known to be disabled already."""
    job = definition()
    both = dq_run("a", "run-a", [{"assertion": "a_ok", "success": True}]) + dq_run(
        "b", "run-b", [{"assertion": "b_ok", "success": True}]
    )
    with client_of(emulator, ChecksWithoutEnabled()) as blindata:
        snapshot(plan_for(blindata, both, job), blindata, job)
        only_a = dq_run("a", "run-a", [{"assertion": "a_ok", "success": True}])
        report = snapshot(plan_for(blindata, only_a, job), blindata, job)
    assert report.status == "success", report.render()
    assert report.counters["qualityChecksDisabled"] == 1
    stored = {c["code"].rsplit(":", 1)[-1]: c for c in objects(emulator, Kind.CHECK)}
    assert stored["b_ok"]["enabled"] is False and stored["a_ok"]["enabled"] is True


def test_the_checks_of_a_dropped_table_are_disabled_though_their_job_is_described(
    emulator: Any,
) -> None:
    """A table dropped since its job's tests ran: its checks were neither refreshed nor disabled,
    enabled for as long as the job is described, on a table that no longer exists (found by a
    probe of removal). As a removed job's (seed 003), they are disabled, their history kept."""
    job = definition()
    tests = dq_run("q", "run-q", [{"assertion": "not_null", "column": "id", "success": True}])
    dropped = run_event(
        "spark.drop",
        run_id="0190b1c2-0000-7000-8000-0000000000e1",
        time="2026-11-29T11:00:00.000Z",
        outputs=[dataset("dwh.sales.orders", PG, facets=lifecycle_facet("DROP"))],
    )
    with client_of(emulator) as blindata:
        first = snapshot(plan_for(blindata, tests, job), blindata, job)
        next_second(emulator)
        report = snapshot(plan_for(blindata, [*tests, dropped], job), blindata, job)
    assert first.status == report.status == "success", report.render()
    assert report.counters["qualityChecksDisabled"] == 1, report.render()
    (check,) = [c for c in objects(emulator, Kind.CHECK) if ":not_null:id" in c["code"]]
    assert check["enabled"] is False


def test_a_system_reused_from_a_summary_listing_keeps_what_the_listing_left_out(
    emulator: Any, client: BlindataClient
) -> None:
    """A System of the planned name created meanwhile is reused and stamped with a PUT of the
    whole System: a PUT of the listed summary would blank the description a person wrote."""
    job = definition()
    planned = plan_for(client, dbt_events(), job)
    system = next(system for system in planned.systems if system.create)
    name = system.name
    client.api.systems.create(System(name=name, description="The warehouse, by hand."))
    with client_of(emulator, SummaryListings()) as blindata:
        report = snapshot(planned, blindata, job)

    assert report.counters["systemsReused"] == 1, report.render()
    (stored,) = (s for s in objects(emulator, Kind.SYSTEM) if s["name"] == name)
    assert stored["description"] == "The warehouse, by hand."
    stamp = {(p["name"], p["value"]) for p in stored["additionalProperties"]}
    # not the owner's stamps: the System is someone else's (a job System's name is its owner's)
    owners = ("openLineageOwner", "openLineageJobSystemName")
    assert {prop for prop in system.stamp if prop[0] not in owners} <= stamp


def test_a_check_disabled_from_a_summary_listing_keeps_what_the_listing_left_out(
    emulator: Any,
) -> None:
    """Seed 003 disables the checks of a removed job, with a PUT of the whole check: a PUT of
    the listed summary would blank its description."""
    job = definition()
    both = dq_run("a", "run-a", [{"assertion": "a_ok", "success": True}]) + dq_run(
        "b", "run-b", [{"assertion": "b_ok", "success": True}]
    )
    with client_of(emulator) as blindata:
        snapshot(plan_for(blindata, both, job), blindata, job)
        for check in blindata.api.quality_checks.list():  # a steward documents the checks
            if not check.code.startswith("ol:"):
                continue  # the job's own ledger
            described = check.model_copy(update={"description": f"What {check.code} means."})
            blindata.api.quality_checks.update(described)
    described = {c["code"]: c["description"] for c in objects(emulator, Kind.CHECK)}
    assert len(described) == 4
    only_a = dq_run("a", "run-a", [{"assertion": "a_ok", "success": True}])
    with client_of(emulator, SummaryListings()) as blindata:
        report = snapshot(plan_for(blindata, only_a, job), blindata, job)

    assert report.counters["qualityChecksDisabled"] == 1, report.render()
    stored = {c["code"]: c for c in objects(emulator, Kind.CHECK)}
    assert {code: c["description"] for code, c in stored.items()} == described
    assert [c["enabled"] for code, c in stored.items() if code.endswith("b_ok")] == [False]


def test_statements_listed_without_their_routine_are_found_again_not_created_again(
    emulator: Any,
) -> None:
    """The contract names a statement's ``routine`` in what is sent, not in what a listing
    answers: a Blindata that leaves it out got a new statement, and the flows of its analysis,
    for every routine at every snapshot (a probe: 47, 94, 141 statements)."""
    job = definition()
    with client_of(emulator) as blindata:
        first = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
    before = counts(emulator)
    assert first.counters["statementsCreated"] == before[Kind.STATEMENT] > 0

    with client_of(emulator, SummaryListings(("routine",))) as blindata:
        again = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)

    assert again.counters.get("statementsCreated", 0) == 0, again.render()
    assert counts(emulator) == before


class BucketsWithoutSystems(httpx.HTTPTransport):
    """A Blindata that lists query buckets without their Systems (a listing may leave out what
    the contract does not require of it); with ``nor_by_uuid``, reading one by uuid too."""

    def __init__(self, *, nor_by_uuid: bool = False) -> None:
        super().__init__()
        self.nor_by_uuid = nor_by_uuid
        self.puts = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.puts += request.method == "PUT" and path.startswith("/api/v1/queryparser/buckets/")
        response = super().handle_request(request)
        if request.method != "GET" or not path.startswith("/api/v1/queryparser/buckets"):
            return response
        body = json.loads(response.read())
        if path == "/api/v1/queryparser/buckets":
            for bucket in body["content"]:
                bucket.pop("systems", None)
        elif self.nor_by_uuid:
            body.pop("systems", None)
        return httpx.Response(response.status_code, json=body, headers=response.headers)


@pytest.mark.parametrize("nor_by_uuid", [False, True], ids=["read-by-uuid", "never-read"])
def test_a_bucket_listed_without_its_systems_keeps_the_systems_a_person_added(
    emulator: Any, client: BlindataClient, nor_by_uuid: bool
) -> None:
    """Never degrade what people put there: growing the query bucket with a PUT of what the
    listing showed would drop the Systems a person added to it, when the listing shows none."""
    job = definition()
    theirs = client.api.systems.create(System(name="crm-by-hand"))
    assert theirs.uuid
    client.api.query_buckets.create(
        QueryBucket(name=job.query_bucket_name, systems=[Ref(uuid=theirs.uuid)])
    )
    transport = BucketsWithoutSystems(nor_by_uuid=nor_by_uuid)
    with client_of(emulator, transport) as blindata:
        report = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)

    assert report.status == "success", report.render()
    (bucket,) = objects(emulator, Kind.BUCKET)
    held = {ref["uuid"] for ref in bucket["systems"]}
    assert theirs.uuid in held
    if nor_by_uuid:
        assert transport.puts == 0
        assert report.counters["bucketSystemsNotAdded"] >= 1
        # which Systems it holds is not known: each of the job's is named (a review)
        examples = report.gaps["QLP_BUCKET_INCOMPLETE"].examples
        assert examples and all(e.endswith(" (not shown)") for e in examples)
    else:
        assert report.counters["bucketSystemsAdded"] >= 1
        assert len(held) > 1  # the job's dataset Systems joined the person's


class WithoutDate(httpx.HTTPTransport):
    """A Blindata (or a proxy in front of it) whose answers carry no ``Date`` header."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "date"]
        return httpx.Response(response.status_code, headers=headers, content=response.read())


def test_without_blindatas_time_the_cleanup_removes_nothing_rather_than_trust_the_workers(
    emulator: Any,
) -> None:
    """Removal compares Blindata's dates with Blindata's clock, never the worker's: a worker
    ahead of Blindata would make everything the snapshot refreshed look stale."""
    job = definition()
    history = History()
    with client_of(emulator, WithoutDate()) as blindata:
        first = history.add(snapshot(plan_for(blindata, dbt_events(), job), blindata, job))
        before = counts(emulator)
        report = history.add(cleanup(job, blindata, history))

    assert first.status == "success", first.render()
    assert first.watermark is None
    assert first.counters["serverTimeMissing"] == 1  # the snapshot says so, not only the cleanup
    assert (report.status, report.reason) == ("refused", "no_server_time"), report.render()
    assert "Date" in (report.message or "") and "force does not lift" in (report.message or "")
    assert counts(emulator) == before


class ImportTakesOverCodes(httpx.HTTPTransport):
    """A Blindata whose ``import-objects`` upserts a check by its code wherever it is (the code
    is unique in the tenant; the contract does not say that a code of another suite is refused):
    the check of another suite is overwritten with the imported row."""

    def __init__(self, emulator: Any) -> None:
        super().__init__()
        self.emulator = emulator

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/import-objects"):
            return super().handle_request(request)
        body = json.loads(request.read())
        stored = {c["code"]: c for c in objects(self.emulator, Kind.CHECK)}
        suite = (body.get("qualitySuite") or {}).get("uuid")
        kept, taken = [], 0
        for row in body.get("qualityChecks") or []:
            theirs = stored.get(row.get("code"))
            if theirs is None or theirs["qualitySuite"]["uuid"] == suite:
                kept.append(row)
                continue
            url = request.url.copy_with(path=f"/api/v1/data-quality/checks/{theirs['uuid']}")
            overwritten = {**theirs, **row, "qualitySuite": theirs["qualitySuite"]}
            put = httpx.Request("PUT", url, headers=request.headers, json=overwritten)
            put.headers["Content-Length"] = str(len(put.content))
            assert super().handle_request(put).read()
            taken += 1
        forwarded = httpx.Request(
            "POST", request.url, headers=request.headers, json={**body, "qualityChecks": kept}
        )
        forwarded.headers["Content-Length"] = str(len(forwarded.content))
        answer = super().handle_request(forwarded)
        report = json.loads(answer.read())
        report["rowUpdated"] = report.get("rowUpdated", 0) + taken
        return httpx.Response(200, json=report, headers={"Date": answer.headers.get("Date", "")})


def test_a_check_code_of_another_suite_is_not_overwritten_by_an_import_that_would_take_it(
    emulator: Any, client: BlindataClient
) -> None:
    """Seed 003: "A check code that already belongs to a check of another suite is never
    overwritten: the agent reports a conflict for it", whatever the import does with it."""
    other = client.api.quality_suites.create(QualitySuite(code="team-suite", name="Team"))
    code = f"ol:{PG}/dwh.sales.orders:not_null:id"
    client.api.quality_checks.create(
        QualityCheck(code=code, name="theirs", quality_suite=Ref(uuid=other.uuid or ""))
    )
    job = definition()
    events = dq_run("c", "r", [{"assertion": "not_null", "column": "id", "success": True}])
    with client_of(emulator, ImportTakesOverCodes(emulator)) as blindata:
        report = snapshot(plan_for(blindata, events, job), blindata, job)
    assert report.gap_count(GapCode.QUALITY_CODE_CONFLICT) == 1
    assert report.status == "success", report.render()
    stored = {c["code"]: c for c in objects(emulator, Kind.CHECK)}
    assert stored[code]["name"] == "theirs"
    assert not stored[code].get("additionalProperties")
    assert not objects(emulator, Kind.RESULT)  # not ours to publish


class ImportRefusesOneCheck(httpx.HTTPTransport):
    """A Blindata whose import-objects refuses one check for a reason of its own (a value it
    validates) and names it in ``errors``, applying the other rows (the contract's upload
    semantics: one bad row is discarded and reported)."""

    def __init__(self, code: str) -> None:
        super().__init__()
        self.code = code

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/import-objects"):
            return super().handle_request(request)
        body = json.loads(request.read())
        rows = body.get("qualityChecks") or []
        refused = [i for i, row in enumerate(rows) if row.get("code") == self.code]
        if not refused:
            return super().handle_request(request)
        kept = [row for row in rows if row.get("code") != self.code]
        forwarded = httpx.Request(
            "POST", request.url, headers=request.headers, json={**body, "qualityChecks": kept}
        )
        forwarded.headers["Content-Length"] = str(len(forwarded.content))
        answer = super().handle_request(forwarded)
        report = json.loads(answer.read())
        report["rowDiscarded"] = report.get("rowDiscarded", 0) + 1
        message = "successThreshold must be between 0 and 100"
        report["errors"] = [{"message": message, "index": refused[0]}]
        return httpx.Response(200, json=report, headers={"Date": answer.headers.get("Date", "")})


def test_a_check_the_import_refuses_for_its_own_reason_is_a_failure_not_a_code_conflict(
    emulator: Any,
) -> None:
    """Seed 003's conflict is "a check code that already belongs to a check of another suite";
    a check refused for another reason is a failure that quotes it, as an unnamed discard is,
    and its result waits for it (a probe: it was called a conflict, the snapshot a success)."""
    code = f"ol:{PG}/dwh.sales.orders:not_null:id"
    job = definition()
    assertions = [
        {"assertion": "not_null", "column": "id", "success": True},
        {"assertion": "not_null", "column": "amount", "success": False},
    ]
    events = dq_run("c", "r", assertions)
    with client_of(emulator, ImportRefusesOneCheck(code)) as blindata:
        report = snapshot(plan_for(blindata, events, job), blindata, job)
    assert report.gap_count(GapCode.QUALITY_CODE_CONFLICT) == 0, report.render()
    assert report.status == "partial", report.render()
    (refusal,) = report.failures["quality check"].examples
    assert refusal.startswith(code) and "successThreshold must be between 0 and 100" in refusal
    assert code not in {c["code"] for c in objects(emulator, Kind.CHECK)}
    assert len(objects(emulator, Kind.RESULT)) == 1  # the other check's
    with client_of(emulator) as blindata:  # accepted now: its result is published
        again = snapshot(plan_for(blindata, events, job), blindata, job)
    assert again.status == "success", again.render()
    assert len(objects(emulator, Kind.RESULT)) == 2


def test_the_result_of_a_check_whose_update_the_import_refuses_waits_for_its_colour(
    emulator: Any,
) -> None:
    """Seed 003 colours a result by its own run's severity; a check the import refused keeps
    its former thresholds, so its result waits until the check is accepted (a review: a failing
    error-severity run was posted YELLOW, by the warn severity of the run before, for good)."""
    code = f"ol:{PG}/dwh.sales.orders:not_null:id"
    job = definition()

    def failing(run_id: str, severity: str, minute: int) -> list[dict[str, Any]]:
        assertion = {"assertion": "not_null", "column": "id", "success": False}
        events = dq_run("c", run_id, [{**assertion, "severity": severity}])
        return [
            {**e, "eventTime": e["eventTime"].replace("T10:00", f"T10:{minute:02d}")}
            for e in events
        ]

    warned, errored = failing("r1", "warn", 0), failing("r2", "error", 5)
    with client_of(emulator) as blindata:
        snapshot(plan_for(blindata, warned, job), blindata, job)
    with client_of(emulator, ImportRefusesOneCheck(code)) as blindata:
        refused = snapshot(plan_for(blindata, warned + errored, job), blindata, job)
    assert refused.status == "partial", refused.render()
    assert len(objects(emulator, Kind.RESULT)) == 1  # r2's waits
    with client_of(emulator) as blindata:
        accepted = snapshot(plan_for(blindata, warned + errored, job), blindata, job)
    assert accepted.status == "success", accepted.render()
    results = sorted(objects(emulator, Kind.RESULT), key=lambda r: r["startedAt"])
    assert [r.get("semaphore") for r in results] == ["YELLOW", "RED"]


class DateOtherwise(httpx.HTTPTransport):
    """A Blindata (or a proxy in front of it) whose ``Date`` header is in one of the other two
    formats HTTP recipients must accept (RFC 9110 §5.6.7: both are GMT, and name no zone)."""

    def __init__(self, spelling: str) -> None:
        super().__init__()
        self.spelling = spelling

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        moment = parsedate_to_datetime(response.headers["Date"])
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "date"]
        headers.append(("Date", moment.strftime(self.spelling)))
        return httpx.Response(response.status_code, headers=headers, content=response.read())


@pytest.mark.usefixtures("worker_west_of_utc")
@pytest.mark.parametrize(
    "spelling",
    [
        pytest.param("%a %b %d %H:%M:%S %Y", id="asctime"),
        pytest.param("%a, %d %b %Y %H:%M:%S -0000", id="zone -0000"),
    ],
)
def test_re_sends_refresh_every_object_whatever_the_spelling_of_blindatas_date(
    emulator: Any, spelling: str
) -> None:
    """Seed 000: "the upload refreshes the last update of each object, which is how the job
    tells what is still described". The watermark is Blindata's time in UTC whatever the
    worker's zone: an HTTP date without a zone is GMT, not the worker's local time (five hours
    ahead, everything the snapshot had just refreshed looked stale)."""
    job = definition()
    history = History()
    with client_of(emulator, DateOtherwise(spelling)) as blindata:
        history.add(snapshot(plan_for(blindata, dbt_events(), job), blindata, job))
        next_second(emulator)
        second = history.add(snapshot(plan_for(blindata, dbt_events(), job), blindata, job))
        before = counts(emulator)
        report = history.add(cleanup(job, blindata, history))

    assert report.status == "success" and not report.removed, report.render()
    assert counts(emulator) == before
    assert second.watermark is not None
    blindata_now = datetime.fromtimestamp(emulator.emulator.clock.now(), UTC)
    assert abs((second.watermark - blindata_now).total_seconds()) < 60


class PropertiesWithoutValue(httpx.HTTPTransport):
    """A Blindata that holds additional properties without a value (a person named one and left
    its value empty) and answers them with ``"value": null``; it takes them back so in a PUT."""

    NAME = "steward"

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "PUT":
            body = json.loads(request.read())
            for prop in body.get("additionalProperties") or ():
                if prop.get("name") == self.NAME and prop.get("value") is None:
                    prop["value"] = ""
            content = json.dumps(body).encode()
            request = httpx.Request("PUT", request.url, headers=request.headers, content=content)
            request.headers["Content-Length"] = str(len(content))
        response = super().handle_request(request)
        content = response.read()
        if request.method != "GET" or not content:
            return httpx.Response(response.status_code, headers=response.headers, content=content)
        body = json.loads(content)
        self.blank(body)
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx.Response(response.status_code, headers=headers, json=body)

    def blank(self, data: Any) -> None:
        if isinstance(data, list):
            for item in data:
                self.blank(item)
        elif isinstance(data, dict):
            for key, value in data.items():
                if key == "additionalProperties" and isinstance(value, list):
                    for prop in value:
                        if isinstance(prop, dict) and prop.get("name") == self.NAME:
                            prop["value"] = None
                else:
                    self.blank(value)


def test_a_property_without_a_value_on_a_crawled_system_or_entity_is_kept_and_read(
    emulator: Any,
) -> None:
    """Never degrade what people put there: a System and a table a person gave a property with
    no value are read (the whole listing of Systems, the mapper's input, failed on it) and keep
    that property when the job stamps the System."""
    namespace = "postgres://postgres:5432"
    crawled = (("openLineageNamespace", namespace), (PropertiesWithoutValue.NAME, ""))
    with client_of(emulator) as direct:
        crawl(
            direct,
            "warehouse",
            {("public", "customers"): {"customer_id": "int4"}},
            properties=crawled,
        )
        (customers,) = objects(emulator, Kind.ENTITY)
        direct.api.physical_entities.upload(
            [
                PhysicalEntity(
                    uuid=customers["uuid"],
                    system=Ref(uuid=customers["system"]["uuid"]),
                    schema="public",
                    name="customers",
                    additional_properties=[
                        AdditionalProperty(name=PropertiesWithoutValue.NAME, value="")
                    ],
                )
            ]
        )
    job = definition()
    with client_of(emulator, PropertiesWithoutValue()) as blindata:
        report = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)

    assert report.status == "success", report.render()
    (warehouse,) = [s for s in objects(emulator, Kind.SYSTEM) if s["name"] == "warehouse"]
    held = {(p["name"], p["value"]) for p in warehouse["additionalProperties"]}
    assert (PropertiesWithoutValue.NAME, "") in held
    assert ("openLineageNamespace", namespace) in held
    assert report.counters["entitiesRefreshed"] >= 1


class DocumentWithoutType(httpx.HTTPTransport):
    """A Blindata that answers a document whose type it does not hold (a person wrote it
    without one) with ``"contentType": null``."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.method != "GET" or not request.url.path.endswith("/documentation"):
            return response
        if response.status_code != 200:
            return response
        body = json.loads(response.read())
        body["contentType"] = None
        return httpx.Response(200, json=body, headers={"Date": response.headers.get("Date", "")})


def test_a_document_answered_without_a_content_type_is_read_and_a_persons_edit_kept(
    emulator: Any,
) -> None:
    """Seed 000, documentation: a person's edit is kept and counted; the job's own text is
    recognised. A document answered with ``contentType: null`` was unreadable: a failure at
    every snapshot, and never updated."""
    from tests.sync.helpers import _documented_plan

    job = definition()
    with client_of(emulator, DocumentWithoutType()) as blindata:
        first = snapshot(_documented_plan(blindata, "# Orders\n\nVersion one."), blindata, job)
        unchanged = snapshot(_documented_plan(blindata, "# Orders\n\nVersion one."), blindata, job)
        changed = snapshot(_documented_plan(blindata, "# Orders\n\nVersion two."), blindata, job)
        (orders,) = objects(emulator, Kind.ENTITY)
        blindata.api.physical_entities.put_documentation(orders["uuid"], "Edited by a steward")
        kept = snapshot(_documented_plan(blindata, "# Orders\n\nVersion three."), blindata, job)
    with client_of(emulator) as direct:
        stored = direct.api.physical_entities.get_documentation(orders["uuid"])

    for report in (first, unchanged, changed, kept):
        assert report.status == "success", report.render()
    assert unchanged.counters["documentsUnchanged"] == 1
    assert changed.counters["documentsWritten"] == 1
    assert kept.counters["documentsKeptUserEdited"] == 1
    assert stored is not None and stored.content == "Edited by a steward"


class ClocksApart(httpx.HTTPTransport):
    """A Blindata whose ``Date`` header and last updates do not agree: its ``Date`` is an hour
    ahead (set by a proxy whose clock is ahead), or its dates are an hour behind (local times
    of a zone west of UTC, written without a zone, as ``LocalDateTime`` serializes)."""

    def __init__(self, apart: str) -> None:
        super().__init__()
        self.apart = apart

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        content = response.read()
        headers = [
            (k, v)
            for k, v in response.headers.items()
            if k.lower() not in ("date", "content-length")
        ]
        date = parsedate_to_datetime(response.headers["Date"])
        if self.apart == "Date ahead":
            date += timedelta(hours=1)
        elif content and "json" in response.headers.get("content-type", ""):
            shift = self.east if self.apart == "dates ahead" else self.local
            content = re.sub(rb'"modificationDate": ?"([^"]+)"', shift, content)
        headers.append(("Date", format_datetime(date, usegmt=True)))
        return httpx.Response(response.status_code, headers=headers, content=content)

    @staticmethod
    def local(match: re.Match[bytes], hours: int = -1) -> bytes:
        moment = datetime.fromisoformat(match.group(1).decode().replace("Z", "+00:00"))
        shifted = (moment + timedelta(hours=hours)).replace(tzinfo=None)
        return b'"modificationDate": "' + shifted.isoformat(timespec="milliseconds").encode() + b'"'

    @staticmethod
    def east(match: re.Match[bytes]) -> bytes:
        """Local times of a zone east of UTC, written without a zone."""
        return ClocksApart.local(match, hours=1)


@pytest.mark.parametrize("apart", ["Date ahead", "dates behind"])
def test_when_blindatas_clock_and_its_dates_disagree_the_cleanup_removes_nothing(
    emulator: Any, apart: str
) -> None:
    """Seed 000: "the upload refreshes the last update of each object, which is how the job
    tells what is still described". Removal compares last updates with Blindata's ``Date``; the
    contract does not say both come from one clock. When an object the snapshot had just
    refreshed is older than that time, nothing tells refreshed from stale: the snapshot keeps no
    watermark and the cleanup removes nothing (it removed, or offered to force, everything)."""
    job = definition()
    history = History()
    with client_of(emulator, ClocksApart(apart)) as blindata:
        history.add(snapshot(plan_for(blindata, dbt_events(), job), blindata, job))
        next_second(emulator)
        second = history.add(snapshot(plan_for(blindata, dbt_events(), job), blindata, job))
        before = counts(emulator)
        report = history.add(cleanup(job, blindata, history))

    assert second.status == "success", second.render()
    assert second.watermark is None
    assert (report.status, report.reason) == ("refused", "no_server_time"), report.render()
    assert counts(emulator) == before


def test_when_blindatas_dates_are_ahead_of_its_clock_the_snapshot_says_so(emulator: Any) -> None:
    """Last updates in local times of a zone east of UTC, written without a zone, read as UTC
    are an hour ahead: nothing is removed too early, but every removal waits an hour longer
    and nothing said why. The snapshot warns and counts ``serverDatesAhead``."""
    job = definition()
    with client_of(emulator, ClocksApart("dates ahead")) as blindata:
        snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
        next_second(emulator)
        second = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
    assert second.status == "success", second.render()
    assert second.watermark is not None
    assert second.counters["serverDatesAhead"] == 1


class ClockReadFailsAfterTheFirst(httpx.HTTPTransport):
    """A gateway that refuses (400) every page of one System after the snapshot's first (the
    read of Blindata's time at its start), as the dates check asks again. (An outage, 5xx for
    the whole deadline, stops the snapshot whichever request meets it: ``WriteWatch``.)"""

    def __init__(self) -> None:
        super().__init__()
        self.clock_reads = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        clock_read = request.url.path.endswith("/systems") and dict(request.url.params) == {
            "page": "0",
            "size": "1",
        }
        if request.method == "GET" and clock_read:
            self.clock_reads += 1
            if self.clock_reads > 1:
                return httpx.Response(400, json={"error": "Bad Request"})
        return super().handle_request(request)


def test_a_dates_check_that_cannot_read_the_clock_fails_nothing(emulator: Any) -> None:
    """The check only warns: a refused read of Blindata's time failed the whole snapshot (found
    by a review of this session's work)."""
    job = definition()
    with client_of(emulator) as blindata:
        snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
    next_second(emulator)
    with client_of(emulator, ClockReadFailsAfterTheFirst()) as blindata:
        second = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
    assert second.status == "success", second.render()


def test_when_blindatas_dates_agree_with_its_clock_nothing_is_said(emulator: Any) -> None:
    job = definition()
    with client_of(emulator) as blindata:
        snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
        next_second(emulator)
        second = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
    assert "serverDatesAhead" not in second.counters


class DatesOfChangesOnly(httpx.HTTPTransport):
    """A Blindata that dates an object's last update only when its content changes, so that an
    upload of an unchanged object leaves its date as it was (that an upload refreshes it is
    inferred): every object the emulator holds shows the date of its creation."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        content = response.read()
        if not content or "json" not in response.headers.get("content-type", ""):
            return response
        data = json.loads(content)
        items = data.get("content") if isinstance(data, dict) else None
        for item in items if isinstance(items, list) else [data]:
            if isinstance(item, dict) and item.get("creationDate"):
                item["modificationDate"] = item["creationDate"]
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx.Response(response.status_code, headers=headers, json=data)


def test_against_a_blindata_that_dates_changes_only_the_cleanup_removes_nothing(
    emulator: Any,
) -> None:
    """Seed 000: "the upload refreshes the last update of each object, which is how the job
    tells what is still described". On a Blindata whose uploads leave an unchanged object's
    date as it was, every object still described would look stale: the clock check reads back
    an entity that existed before the snapshot, not one it has just created (dated now on any
    Blindata), and the snapshot keeps no watermark."""
    job = definition()
    history = History()
    first = dbt_events()
    # the second run also writes a table the first did not, whose entity sorts first
    namespace = next(o["namespace"] for event in first for o in event.get("outputs") or ())
    added = run_event("dbt.added", outputs=[dataset("aaa.first.table", namespace)])
    with client_of(emulator, DatesOfChangesOnly()) as blindata:
        history.add(snapshot(plan_for(blindata, first, job), blindata, job))
        next_second(emulator)
        plan = plan_for(blindata, [*first, added], job)
        second = history.add(snapshot(plan, blindata, job))
        before = counts(emulator)
        report = history.add(cleanup(job, blindata, history))

    assert second.status == "success", second.render()
    assert second.counters["entitiesCreated"] >= 1
    assert second.watermark is None, second.render()
    assert (report.status, report.reason) == ("refused", "no_server_time"), report.render()
    assert counts(emulator) == before


def test_a_snapshot_against_references_in_upper_case_lands_as_against_lower_case(
    emulator: Any,
) -> None:
    """Seed 000, "Re-sends and updates": a second snapshot creates nothing. UUIDs compare
    without case (RFC 9562): the entities of a System whose listing names it ``SYSTEM-UUID``
    are its own, and so are the fields of a table named so."""
    job = definition()
    with client_of(emulator, UpperCaseReferences()) as blindata:
        first = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
        before = counts(emulator)
        second = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)

    assert first.status == second.status == "success", first.render() + second.render()
    created = {name: value for name, value in second.counters.items() if "Created" in name}
    assert set(created.values()) == {0}, created
    assert counts(emulator) == before


class IntegerCounts(httpx.HTTPTransport):
    """A Blindata whose counts and thresholds are integers, read strictly (a Go or Rust
    service, a schema of ``"type": "integer"`` in a strict validator): ``10.0`` is refused with
    400, as it would be in a result's ``totalElements`` or a check's ``successThreshold``."""

    FLOAT = re.compile(rb'"(metric|totalElements|successThreshold|warningThreshold)": ?-?\d+\.\d+')

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method in ("POST", "PUT") and self.FLOAT.search(request.read()):
            body = {"status": 400, "error": "Bad Request", "message": "expected an integer"}
            return httpx.Response(400, json=body)
        return super().handle_request(request)


def test_results_and_checks_reach_a_blindata_that_reads_counts_as_integers(
    emulator: Any,
) -> None:
    """Seed 003: each dbt test becomes a check with its results. A count is sent as the
    integer it is (``10``, never ``10.0``): JSON does not tell them apart, a strict server
    does, and refused every check and result."""
    job = definition()
    with client_of(emulator, IntegerCounts()) as blindata:
        report = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)

    assert report.status == "success", report.render()
    assert report.counters["qualityResultsPublished"] == 4
    assert len(objects(emulator, Kind.RESULT)) == 4


class TextsAsStored(httpx.HTTPTransport):
    """A Blindata that stores a text as it likes (the contract does not say that a text comes
    back byte for byte): descriptions and documents with their line ends as ``\n`` and no
    blanks at either end, a document answered with a line end after it."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method in ("POST", "PUT") and request.content[:1] in (b"{", b"["):
            body = _as_stored(json.loads(request.content))
            headers = [(k, v) for k, v in request.headers.items() if k.lower() != "content-length"]
            request = httpx.Request(
                request.method, request.url, headers=headers, content=json.dumps(body).encode()
            )
        response = super().handle_request(request)
        if request.method != "GET" or not request.url.path.endswith("/documentation"):
            return response
        if response.status_code != 200:
            return response
        document = json.loads(response.read())
        document["content"] = (document.get("content") or "") + "\n"
        return httpx.Response(200, json=document, headers={"Date": response.headers["Date"]})


def _as_stored(value: Any) -> Any:
    if isinstance(value, list):
        return [_as_stored(item) for item in value]
    if isinstance(value, dict):
        return {
            key: item.replace("\r\n", "\n").strip()
            if key in ("description", "content") and isinstance(item, str)
            else _as_stored(item)
            for key, item in value.items()
        }
    return value


def _described_run(version: int) -> dict[str, Any]:
    """A job writing two tables: one described in two lines (a description), one documented at
    length (a document), a field described in two lines; Windows line ends."""
    long = f"# Items v{version}\r\n\r\n" + "Every item of every order, one a row. " * 10
    return run_event(
        "copy_orders",
        outputs=[
            dataset(
                "shop.public.orders",
                facets=documentation_facet(f"Orders v{version}\r\none a row")
                | schema_facet(field("id", "int", description=f"The id v{version}\r\nof it")),
            ),
            dataset("shop.public.items", facets=documentation_facet(long)),
        ],
    )


def test_a_jobs_own_texts_stored_otherwise_are_neither_taken_for_edits_nor_kept(
    emulator: Any,
) -> None:
    """Seed 000: a person's edit is kept, the job's own text is refreshed. Against a Blindata that
    stores line ends as ``\n``, the job's description, field description and document looked
    edited by a person from the second snapshot on (``...KeptUserEdited``), and a new version
    of them never reached the catalog."""
    job = definition()
    with client_of(emulator, TextsAsStored()) as blindata:
        first = snapshot(plan_for(blindata, [_described_run(1)], job), blindata, job)
        next_second(emulator)
        again = snapshot(plan_for(blindata, [_described_run(1)], job), blindata, job)
        next_second(emulator)
        changed = snapshot(plan_for(blindata, [_described_run(2)], job), blindata, job)
        entities = {e["name"]: e for e in objects(emulator, Kind.ENTITY)}
        document = blindata.api.physical_entities.get_documentation(entities["items"]["uuid"])

    for report in (first, again, changed):
        assert report.status == "success", report.render()
        assert not [name for name in report.counters if "KeptUserEdited" in name], report.counters
    assert again.counters["documentsUnchanged"] == 1
    assert changed.counters["documentsWritten"] == 1
    assert entities["orders"]["description"] == "Orders v2\none a row"
    (described,) = [f for f in objects(emulator, Kind.FIELD) if f["name"] == "id"]
    assert described["description"] == "The id v2\nof it"
    assert document is not None and document.content.startswith("# Items v2")
