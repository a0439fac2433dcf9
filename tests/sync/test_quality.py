"""Quality in Blindata (seed 003): suite, checks, one result per check and run, the ledger,
ownership of codes, disabled checks, profiling records — against the emulator over HTTP."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.blindata.models import ProfilingMonitor, QualityCheck, QualitySuite, Ref
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.sync import snapshot
from tests.sync.helpers import (
    DEFINITION_UUID,
    PG,
    ListedOtherwise,
    checks,
    client_of,
    dbt_events,
    definition,
    dq_run,
    objects,
    plan_for,
)

pytestmark = pytest.mark.integration


def test_the_dbt_tests_become_checks_with_results_and_semaphores(
    emulator: Any, client: BlindataClient
) -> None:
    job = definition()
    report = snapshot(plan_for(client, dbt_events(), job), client, job)
    (suite,) = objects(emulator, Kind.SUITE)
    assert suite["code"] == f"openlineage:{DEFINITION_UUID}"
    found = {code: c for code, c in checks(emulator).items() if not code.startswith("ol-ledger:")}
    semaphores = {code.rsplit(":", 2)[-2]: c["lastSemaphore"] for code, c in found.items()}
    assert semaphores == {
        "accepted_values": "RED",
        "not_null": "GREEN",
        "unique": "GREEN",
        "relationships": "GREEN",
    }
    assert all(c["physicalEntities"] for c in found.values())
    assert report.counters["qualityResultsPublished"] == 4
    assert len(objects(emulator, Kind.RESULT)) == 4


def test_retrying_the_same_run_does_not_duplicate_results(
    emulator: Any, client: BlindataClient
) -> None:
    job = definition()
    snapshot(plan_for(client, dbt_events(), job), client, job)
    again = snapshot(plan_for(client, dbt_events(), job), client, job)
    assert again.counters["qualityResultsAlreadyPublished"] == 4
    assert "qualityResultsPublished" not in again.counters
    assert len(objects(emulator, Kind.RESULT)) == 4
    ledgers = [c for code, c in checks(emulator).items() if code.startswith("ol-ledger:")]
    assert ledgers and all(c["enabled"] is False for c in ledgers)


def test_a_partly_rejected_run_is_published_fully_on_the_next_sync_and_only_then_in_the_ledger(
    emulator: Any, client: BlindataClient
) -> None:
    job = definition()
    events = dq_run(
        "check_orders",
        "run-1",
        [
            {"assertion": "not_null", "column": "id", "success": True},
            {"assertion": "not_null", "column": "amount", "success": False},
        ],
    )
    emulator.emulator.faults.fail_next(1, status=400, path="/data-quality/results")
    first = snapshot(plan_for(client, events, job), client, job)
    assert first.counters["qualityResultsPublished"] == 1
    ledger = [c for code, c in checks(emulator).items() if code.startswith("ol-ledger:")]
    assert all(
        p["name"] != "publishedRun" for c in ledger for p in c.get("additionalProperties") or []
    )
    second = snapshot(plan_for(client, events, job), client, job)
    assert second.counters["qualityResultsPublished"] == 1  # only the refused one: once per check
    assert second.counters["qualityResultsAlreadyPublished"] == 1
    assert len(objects(emulator, Kind.RESULT)) == 2
    ledger = [c for code, c in checks(emulator).items() if code.startswith("ol-ledger:")]
    assert {"publishedRun": "run-1"}.items() <= {
        p["name"]: p["value"] for c in ledger for p in c["additionalProperties"]
    }.items()
    third = snapshot(plan_for(client, events, job), client, job)
    assert third.counters["qualityResultsAlreadyPublished"] == 2


def test_severity_warn_makes_a_failure_a_warning(emulator: Any, client: BlindataClient) -> None:
    job = definition()
    events = dq_run(
        "fresh", "run-w", [{"assertion": "freshness", "success": False, "severity": "warn"}]
    )
    snapshot(plan_for(client, events, job), client, job)
    (check,) = [c for code, c in checks(emulator).items() if code.endswith(":freshness")]
    assert check["lastSemaphore"] == "YELLOW"


@pytest.mark.parametrize("severities", [("error", "warn"), ("warn", "error"), ("warn", "warn")])
def test_each_result_of_a_batch_is_coloured_by_the_severity_of_its_own_run(
    emulator: Any, client: BlindataClient, severities: tuple[str, str]
) -> None:
    """Seed 003: one result per check and run, a warn-only failure a warning. Blindata colours a
    result when it is posted, by its check's thresholds: runs synced together each take their
    own run's severity (they all took the newest's), and the check keeps the newest's."""
    job = definition()
    events = []
    runs = zip(("run-1", "run-2"), severities, strict=True)
    for hour, (run_id, severity) in enumerate(runs, start=10):
        for event in dq_run(
            "fresh", run_id, [{"assertion": "freshness", "success": False, "severity": severity}]
        ):
            events.append(event | {"eventTime": event["eventTime"].replace("T10:", f"T{hour}:")})
    report = snapshot(plan_for(client, events, job), client, job)
    assert report.status == "success"
    colour = {"error": "RED", "warn": "YELLOW"}
    results = sorted(objects(emulator, Kind.RESULT), key=lambda r: r["startedAt"])
    assert [r["semaphore"] for r in results] == [colour[s] for s in severities]
    (check,) = [c for code, c in checks(emulator).items() if code.endswith(":freshness")]
    assert check["lastSemaphore"] == colour[severities[-1]]
    assert check["warningThreshold"] == (0.0 if severities[-1] == "warn" else 100.0)
    again = snapshot(plan_for(client, events, job), client, job)
    assert again.counters["qualityResultsAlreadyPublished"] == 2
    assert "qualityChecksRecoloured" not in again.counters


def test_a_passing_result_of_another_severity_needs_no_recolouring(
    emulator: Any, client: BlindataClient
) -> None:
    """A pass is GREEN under any threshold: only failures of an older run's severity set the
    check to it (a review counted two imports per passing run)."""
    job = definition()
    events = []
    for hour, (run_id, severity, success) in enumerate(
        [("run-1", "warn", True), ("run-2", "error", False)], start=10
    ):
        assertion = {"assertion": "freshness", "success": success, "severity": severity}
        for event in dq_run("fresh", run_id, [assertion]):
            events.append(event | {"eventTime": event["eventTime"].replace("T10:", f"T{hour}:")})
    report = snapshot(plan_for(client, events, job), client, job)
    results = sorted(objects(emulator, Kind.RESULT), key=lambda r: r["startedAt"])
    assert [r["semaphore"] for r in results] == ["GREEN", "RED"]
    assert "qualityChecksRecoloured" not in report.counters


def test_a_check_code_of_another_suite_is_never_overwritten(
    emulator: Any, client: BlindataClient
) -> None:
    job = definition()
    other = client.api.quality_suites.create(QualitySuite(code="team-suite", name="Team"))
    code = f"ol:{PG}/dwh.sales.orders:not_null:id"
    client.api.quality_checks.create(
        QualityCheck(code=code, name="theirs", quality_suite=Ref(uuid=other.uuid or ""))
    )
    report = snapshot(
        plan_for(
            client,
            dq_run("c", "r", [{"assertion": "not_null", "column": "id", "success": True}]),
            job,
        ),
        client,
        job,
    )
    assert report.gap_count(GapCode.QUALITY_CODE_CONFLICT) == 1
    assert report.status == "success"  # a conflict is reported, not a failure
    assert checks(emulator)[code]["name"] == "theirs"
    assert checks(emulator)[code]["qualitySuite"]["uuid"] == other.uuid


def test_two_definitions_of_one_job_are_told_the_ledger_is_not_to_be_deleted(
    emulator: Any, client: BlindataClient
) -> None:
    """Two definitions (two suites) consuming one job: the second met the first's checks and its
    ledger of published runs, and the gap's hint invited removing "the other check", the ledger
    among them (a probe of what the admin sees)."""
    from tests.builders import definition as another

    events = dq_run("c", "r", [{"assertion": "not_null", "column": "id", "success": True}])
    first = definition()
    assert snapshot(plan_for(client, events, first), client, first).status == "success"
    second = another(
        *first.model_dump(by_alias=True, mode="json")["systemPolicies"],
        uuid="0b0b0b0b-0000-4000-8000-000000000002",
    )
    report = snapshot(plan_for(client, events, second), client, second)
    examples = report.gaps[GapCode.QUALITY_CODE_CONFLICT].examples
    (ledger,) = [example for example in examples if example.startswith("ol-ledger:")]
    assert "do not delete the ledger" in ledger and "one quality.suiteCode" in ledger


def test_a_run_whose_result_met_a_conflict_is_published_once_the_code_is_free(
    emulator: Any, client: BlindataClient
) -> None:
    """Seed 003: "a run enters the record of published runs only when all its results were
    accepted": a result refused for a conflict was not, so once the other suite's check gives
    the code up, the run's result goes out."""
    job = definition()
    other = client.api.quality_suites.create(QualitySuite(code="team-suite", name="Team"))
    code = f"ol:{PG}/dwh.sales.orders:not_null:id"
    theirs = client.api.quality_checks.create(
        QualityCheck(code=code, name="theirs", quality_suite=Ref(uuid=other.uuid or ""))
    )
    events = dq_run("c", "r", [{"assertion": "not_null", "column": "id", "success": True}])
    first = snapshot(plan_for(client, events, job), client, job)
    assert first.gap_count(GapCode.QUALITY_CODE_CONFLICT) == 1
    client.api.quality_checks.update(theirs.model_copy(update={"code": "team:orders-not-null"}))

    second = snapshot(plan_for(client, events, job), client, job)

    assert second.gap_count(GapCode.QUALITY_CODE_CONFLICT) == 0, second.render()
    assert second.counters.get("qualityResultsPublished") == 1, second.render()
    assert checks(emulator)[code]["qualitySuite"]["uuid"] != other.uuid
    third = snapshot(plan_for(client, events, job), client, job)  # and only once
    assert not third.counters.get("qualityResultsPublished"), third.render()


def test_the_checks_of_a_job_no_longer_described_are_disabled_never_deleted(
    emulator: Any, client: BlindataClient
) -> None:
    job = definition()
    both = dq_run("a", "run-a", [{"assertion": "a_ok", "success": True}]) + dq_run(
        "b", "run-b", [{"assertion": "b_ok", "success": True}]
    )
    snapshot(plan_for(client, both, job), client, job)
    report = snapshot(
        plan_for(client, dq_run("a", "run-a", [{"assertion": "a_ok", "success": True}]), job),
        client,
        job,
    )
    assert report.counters["qualityChecksDisabled"] == 1
    by_name = {code.rsplit(":", 1)[-1]: c for code, c in checks(emulator).items()}
    assert by_name["b_ok"]["enabled"] is False and by_name["a_ok"]["enabled"] is True
    assert len(objects(emulator, Kind.RESULT)) == 2


def test_the_check_of_an_assertion_a_described_job_no_longer_makes_is_disabled(
    emulator: Any, client: BlindataClient
) -> None:
    """Removal of what is no longer described: a test deleted from a job that still runs
    stayed enabled, with its last colour, once retention had dropped the runs that asserted
    it (only the checks of a job no longer described were disabled). History is kept, and the
    check is enabled again when the assertion comes back."""
    job = definition()
    both = [{"assertion": "a_ok", "success": True}, {"assertion": "b_ok", "success": False}]
    snapshot(plan_for(client, dq_run("a", "run-1", both), job), client, job)
    only_a = dq_run("a", "run-2", [{"assertion": "a_ok", "success": True}])

    report = snapshot(plan_for(client, only_a, job), client, job)  # run-1 aged out

    assert report.counters["qualityChecksDisabled"] == 1, report.render()
    by_name = {code.rsplit(":", 1)[-1]: c for code, c in checks(emulator).items()}
    assert by_name["b_ok"]["enabled"] is False and by_name["a_ok"]["enabled"] is True
    back = snapshot(plan_for(client, dq_run("a", "run-3", both), job), client, job)
    assert back.status == "success", back.render()
    assert all(c["enabled"] for c in checks(emulator).values() if "ledger" not in c["code"])


def test_metrics_become_records_on_the_openlineage_monitor_uploaded_once(
    emulator: Any, client: BlindataClient
) -> None:
    job = definition()
    metrics = {
        "dataQualityMetrics": {
            "rowCount": 10,
            "columnMetrics": {"amount": {"nullCount": 0, "max": 7}},
        }
    }
    events = dq_run("m", "run-m", [], **metrics)
    first = snapshot(plan_for(client, events, job), client, job)
    (monitor,) = objects(emulator, Kind.MONITOR)
    assert monitor["name"] == "OpenLineage"
    assert {
        (r["metricCode"], r.get("physicalFieldName"), r["value"])
        for r in objects(emulator, Kind.RECORD)
    } == {
        ("rowCount", None, 10.0),
        ("nullCount", "amount", 0.0),
        ("max", "amount", 7.0),
    }
    assert first.counters["profilingRecordsUploaded"] == 3
    again = snapshot(plan_for(client, events, job), client, job)
    assert again.counters["profilingRecordsAlreadyUploaded"] == 3


def test_quality_enabled_false_publishes_nothing(emulator: Any, client: BlindataClient) -> None:
    job = definition(quality={"enabled": False})
    snapshot(plan_for(client, dbt_events(), job), client, job)
    assert objects(emulator, Kind.SUITE) == [] and objects(emulator, Kind.RESULT) == []


class SearchByName(httpx.HTTPTransport):
    """A Blindata whose suite ``search`` matches names only: what it matches is not in the
    contract (the emulator matches codes too)."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        search = request.url.params.get("search")
        if request.url.path != "/api/v1/data-quality/suites" or not search:
            return response
        page = json.loads(response.read())
        page["content"] = [s for s in page["content"] if search.lower() in s["name"].lower()]
        headers = {"Date": response.headers["Date"]} if "Date" in response.headers else {}
        return httpx.Response(response.status_code, headers=headers, json=page)


def test_the_suite_is_found_by_its_code_when_the_search_does_not_match_codes(
    emulator: Any,
) -> None:
    job = definition()
    events = dq_run("c", "r", [{"assertion": "not_null", "column": "id", "success": True}])
    with client_of(emulator, SearchByName()) as client:
        first = snapshot(plan_for(client, events, job), client, job)
        second = snapshot(plan_for(client, events, job), client, job)
    assert first.status == "success", first.render()
    assert second.status == "success", second.render()  # the create's 409 is the suite's
    assert len(objects(emulator, Kind.SUITE)) == 1
    assert second.counters["qualityResultsAlreadyPublished"] == 1


class NameNotFiltered(ListedOtherwise):
    """A Blindata whose monitor listing ignores ``name`` and is ordered by name: how ``name``
    matches is not in the contract (the emulator matches it exactly, in creation order)."""

    path = "/api/v1/profiling/monitors"
    kept = ("physicalEntityUuid",)

    def listed(self, items: list[dict[str, Any]], asked: dict[str, str]) -> list[dict[str, Any]]:
        return sorted(items, key=lambda monitor: monitor["name"])


def test_metrics_go_to_the_openlineage_monitor_when_the_name_filter_matches_loosely(
    emulator: Any, client: BlindataClient
) -> None:
    job = definition()

    def metrics(run: str, rows: int) -> list[dict[str, Any]]:
        return dq_run("m", run, [], dataQualityMetrics={"rowCount": rows, "columnMetrics": {}})

    snapshot(plan_for(client, metrics("run-1", 10), job), client, job)
    (ours,) = objects(emulator, Kind.MONITOR)
    entity = ours["physicalEntity"]["uuid"]
    other = ProfilingMonitor(name="Nightly profile", physical_entity=Ref(uuid=entity))
    client.api.profiling_monitors.create(other)
    with client_of(emulator, NameNotFiltered()) as loose:
        report = snapshot(plan_for(loose, metrics("run-2", 20), job), loose, job)
    assert report.status == "success", report.render()
    records = objects(emulator, Kind.RECORD)
    assert 20.0 in {r["value"] for r in records}
    assert {r["monitor"]["uuid"] for r in records} == {ours["uuid"]}


def test_the_results_of_several_runs_are_posted_oldest_first(
    emulator: Any, client: BlindataClient
) -> None:
    """Whatever the run ids (a producer's may be random): a Blindata that takes a check's last
    result from the order results arrive in shows the newest run's."""
    job = definition()
    events = []
    for run_id, minute, success in (("b-older", 0, False), ("a-newer", 5, True)):
        for event in dq_run("c", run_id, [{"assertion": "not_null", "success": success}]):
            event["eventTime"] = event["eventTime"].replace("10:00:", f"10:{minute:02d}:")
            events.append(event)
    report = snapshot(plan_for(client, events, job), client, job)
    assert report.status == "success", report.render()
    posted = [result["startedAt"] for result in objects(emulator, Kind.RESULT)]
    assert len(posted) == 2 and posted == sorted(posted)


class SuiteNotFiltered(ListedOtherwise):
    """A Blindata whose check listing ignores ``suiteUuid``: every suite's checks come back."""

    path = "/api/v1/data-quality/checks"

    def listed(self, items: list[dict[str, Any]], asked: dict[str, str]) -> list[dict[str, Any]]:
        return items


def test_a_check_listing_that_ignores_its_suite_disables_no_check_of_another_definition(
    emulator: Any, client: BlindataClient
) -> None:
    """A definition disables the checks of the jobs it no longer describes, in its own suite: a
    check the listing answers from another suite is left out, not taken for one of its own."""
    first, second = definition(), definition(uuid="0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f")
    passed = [{"assertion": "not_null", "success": True}]
    report = snapshot(plan_for(client, dq_run("a", "run-1", passed), first), client, first)
    assert report.status == "success", report.render()
    theirs = {code for code in checks(emulator) if not code.startswith("ol-ledger:")}
    with client_of(emulator, SuiteNotFiltered()) as loose:
        unique = [{"assertion": "unique", "success": True}]
        report = snapshot(plan_for(loose, dq_run("b", "run-2", unique), second), loose, second)
    assert report.status == "success", report.render()
    assert report.counters.get("qualityChecksDisabled", 0) == 0
    assert all(checks(emulator)[code]["enabled"] is not False for code in theirs)
