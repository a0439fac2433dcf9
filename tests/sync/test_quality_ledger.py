"""Seed 003 rules of the quality ledger and of removed jobs, against the emulator over HTTP:

* "When a snapshot removes a job, the agent disables the checks of that job" — also when it was
  the last job with checks;
* "One result is written per check and run" — also when another assertion of the same run
  targets a dataset that is not catalogued, and when a late event of a run already published
  asserts something new (a run is published once per check, not once).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.blindata.models import (
    AdditionalProperty,
    PhysicalEntity,
    QualityCheck,
    QualityImport,
    QualitySuite,
    Ref,
    System,
)
from airflow_blindata.mapper.light import plan_of_jobs
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.scopes import job_scope
from airflow_blindata.mapper.systems import NAMESPACE_PROPERTY
from airflow_blindata.sync import snapshot
from airflow_blindata.sync.quality import _Ledger, check_digest, ledger_code, published_run_values
from tests.sync.helpers import OTHER_DEFINITION, PG, client_of, definition, objects, plan_for
from tests.sync.helpers import assertions_run as run

pytestmark = pytest.mark.integration

CRAWLED = "postgres://crawled:5432"
"""The namespace of a crawled System: entities there are never created, only found."""
UNMAPPED = "mysql://nowhere:3306"
"""A namespace that maps to no System."""


def asserting(job: str, assertion: str) -> list[dict[str, Any]]:
    return run(
        job, f"run-{job}", {(PG, "dwh.sales.orders"): [{"assertion": assertion, "success": True}]}
    )


def reading(job: str) -> list[dict[str, Any]]:
    """A job that is described (it runs and reads) but asserts nothing."""
    return run(job, f"run-{job}", {(PG, "dwh.sales.orders"): []})


def enabled_by_assertion(emulator: Any) -> dict[str, bool]:
    return {
        c["code"].rsplit(":", 1)[-1]: c["enabled"]
        for c in objects(emulator, Kind.CHECK)
        if not c["code"].startswith("ol-ledger:")
    }


# -- "When a snapshot removes a job, the agent disables the checks of that job" ------------------


@pytest.mark.parametrize(
    ("first", "second", "disabled", "enabled"),
    [
        pytest.param(
            asserting("a", "a_ok") + reading("c"),
            reading("c"),
            1,
            {"a_ok": False},
            id="the-last-job-with-checks-is-removed",
        ),
        pytest.param(
            asserting("a", "a_ok") + asserting("b", "b_ok"),
            asserting("b", "b_ok"),
            1,
            {"a_ok": False, "b_ok": True},
            id="one-of-two-jobs-with-checks-is-removed",
        ),
        pytest.param(
            asserting("a", "shared") + asserting("b", "shared"),
            asserting("b", "shared"),
            0,
            {"shared": True},
            id="a-removed-job-whose-check-another-job-still-runs",
        ),
        pytest.param(
            asserting("a", "a_ok") + reading("c"),
            [],
            0,
            {"a_ok": True},
            id="an-empty-snapshot-proves-nothing",
        ),
    ],
)
def test_when_a_snapshot_removes_a_job_the_agent_disables_the_checks_of_that_job(
    emulator: Any,
    client: BlindataClient,
    first: list[dict[str, Any]],
    second: list[dict[str, Any]],
    disabled: int,
    enabled: dict[str, bool],
) -> None:
    job = definition()
    snapshot(plan_for(client, first, job), client, job)
    report = snapshot(plan_for(client, second, job), client, job)
    assert report.counters.get("qualityChecksDisabled", 0) == disabled
    assert enabled_by_assertion(emulator) == enabled
    assert len(objects(emulator, Kind.CHECK)) >= len(enabled)  # disabled, never deleted


# -- "One result is written per check and run" ---------------------------------------------------


def ledger_entries(emulator: Any, *, raw: bool = False) -> set[tuple[str, str]]:
    """The ledgers' entries; a published run by its id, without the checks it names unless
    ``raw``."""
    return {
        (p["name"], p["value"] if raw or p["name"] != "publishedRun" else p["value"].split(" ")[0])
        for c in objects(emulator, Kind.CHECK)
        if c["code"].startswith("ol-ledger:")
        for p in c.get("additionalProperties") or []
        if p["name"] != "openLineageJobScope"
    }


@pytest.mark.parametrize(
    ("elsewhere", "catalogued_later"),
    [
        pytest.param(CRAWLED, True, id="an-entity-the-crawled-system-does-not-hold"),
        pytest.param(UNMAPPED, False, id="a-namespace-that-maps-to-no-system"),
    ],
)
def test_one_result_is_written_per_check_and_run_when_another_of_the_run_is_not_catalogued(
    emulator: Any, client: BlindataClient, elsewhere: str, catalogued_later: bool
) -> None:
    crawled = client.api.systems.create(
        System(
            name="Crawled",
            subtype="DATABASE",
            additional_properties=AdditionalProperty.many(((NAMESPACE_PROPERTY, CRAWLED),)),
        )
    )
    job = definition()
    events = run(
        "check_both",
        "run-1",
        {
            (PG, "dwh.sales.orders"): [{"assertion": "not_null", "column": "id", "success": True}],
            (elsewhere, "dwh.sales.customers"): [{"assertion": "unique", "success": False}],
        },
    )
    first = snapshot(plan_for(client, events, job), client, job)
    assert first.counters["qualityResultsPublished"] == 1
    assert first.gap_count(GapCode.TARGET_NOT_CATALOGUED) >= 1
    second = snapshot(plan_for(client, events, job), client, job)
    assert "qualityResultsPublished" not in second.counters  # never re-sent
    assert second.counters["qualityResultsAlreadyPublished"] == 1
    assert len(objects(emulator, Kind.RESULT)) == 1
    if not catalogued_later:
        return
    assert ("publishedRun", "run-1") not in ledger_entries(emulator)  # its other result waits
    client.api.physical_entities.upload(
        [PhysicalEntity(system=Ref(uuid=crawled.uuid or ""), schema="sales", name="customers")]
    )
    third = snapshot(plan_for(client, events, job), client, job)
    assert third.counters["qualityResultsPublished"] == 1  # the result that waited for its check
    assert third.counters["qualityResultsAlreadyPublished"] == 1
    assert len(objects(emulator, Kind.RESULT)) == 2
    entries = ledger_entries(emulator)
    assert ("publishedRun", "run-1") in entries
    assert {value for kind, value in entries if kind == "publishedResult"} <= {"-"}
    fourth = snapshot(plan_for(client, events, job), client, job)
    assert fourth.counters["qualityResultsAlreadyPublished"] == 2
    assert "qualityResultsPublished" not in fourth.counters


# -- "A run enters the record of published runs": a snapshot that does not see a job keeps its runs


@pytest.mark.parametrize(
    "between",
    [
        pytest.param([], id="an-empty-snapshot"),
        pytest.param(reading("c"), id="a-snapshot-without-the-job"),
    ],
)
def test_the_ledger_of_a_job_the_snapshot_does_not_describe_is_kept(
    emulator: Any, client: BlindataClient, between: list[dict[str, Any]]
) -> None:
    """An empty store proves nothing, and a job that comes back (its events read again, a
    namespace mapped again) brings runs already published: they are not published again."""
    job = definition()
    events = asserting("a", "a_ok")
    snapshot(plan_for(client, events, job), client, job)
    snapshot(plan_for(client, between, job), client, job)
    assert ("publishedRun", "run-a") in ledger_entries(emulator)
    back = snapshot(plan_for(client, events, job), client, job)
    assert "qualityResultsPublished" not in back.counters
    assert back.counters["qualityResultsAlreadyPublished"] == 1
    assert len(objects(emulator, Kind.RESULT)) == 1


def test_two_definitions_that_share_a_suite_code_leave_each_other_s_checks_and_ledgers(
    emulator: Any, client: BlindataClient
) -> None:
    """A definition's snapshot does not describe the jobs of another definition: it has not
    removed them, so it does not disable their checks."""
    ours = definition(quality={"suiteCode": "team-suite"})
    theirs = definition(uuid=OTHER_DEFINITION, quality={"suiteCode": "team-suite"})
    snapshot(plan_for(client, asserting("a", "a_ok"), ours), client, ours)
    snapshot(plan_for(client, asserting("b", "b_ok"), theirs), client, theirs)
    again = snapshot(plan_for(client, asserting("a", "a_ok"), ours), client, ours)
    assert "qualityChecksDisabled" not in again.counters
    assert enabled_by_assertion(emulator) == {"a_ok": True, "b_ok": True}
    assert again.counters["qualityResultsAlreadyPublished"] == 1
    theirs_again = snapshot(plan_for(client, asserting("b", "b_ok"), theirs), client, theirs)
    assert "qualityChecksDisabled" not in theirs_again.counters
    assert "qualityResultsPublished" not in theirs_again.counters
    assert theirs_again.counters["qualityResultsAlreadyPublished"] == 1
    assert len(objects(emulator, Kind.RESULT)) == 2
    assert enabled_by_assertion(emulator) == {"a_ok": True, "b_ok": True}


def test_a_ledger_code_another_suite_holds_is_a_conflict_never_sent(
    emulator: Any, client: BlindataClient
) -> None:
    """Another definition's suite holds the ledger of a job both describe (two definitions
    consume one job's events): as for a check, the code is a conflict, reported and never sent,
    and the snapshot's own results still go out."""
    other = client.api.quality_suites.create(QualitySuite(code="team-suite", name="Team"))
    code = ledger_code(job_scope("dq", "a"))
    client.api.quality_checks.create(
        QualityCheck(code=code, name="theirs", quality_suite=Ref(uuid=other.uuid or ""))
    )
    job = definition()
    report = snapshot(plan_for(client, asserting("a", "a_ok"), job), client, job)
    assert report.counters["qualityResultsPublished"] == 1
    assert report.gap_count(GapCode.QUALITY_CODE_CONFLICT) == 1, report.render()
    assert not report.failed("quality ledger")
    (theirs,) = [c for c in objects(emulator, Kind.CHECK) if c["code"] == code]
    assert theirs["name"] == "theirs" and theirs["qualitySuite"]["uuid"] == other.uuid


class LedgerDiscarded(httpx.HTTPTransport):
    """A Blindata whose suite import discards the ledger rows without naming them."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/import-objects"):
            return super().handle_request(request)
        body = json.loads(request.read())
        checks = body.get("qualityChecks") or []
        kept = [c for c in checks if not str(c.get("code", "")).startswith("ol-ledger:")]
        if len(kept) == len(checks):
            return super().handle_request(request)
        return httpx.Response(
            200,
            json={"rowCreated": 0, "rowUpdated": 0, "rowDiscarded": len(checks) - len(kept)},
        )


def test_a_ledger_the_import_discards_is_reported_as_a_failure(emulator: Any) -> None:
    """A run enters the record of published runs only if Blindata takes the ledger: when the
    import discards it, the snapshot says so instead of republishing the run at every sync
    without a word."""
    job = definition()
    with client_of(emulator, LedgerDiscarded()) as blindata:
        report = snapshot(plan_for(blindata, asserting("a", "a_ok"), job), blindata, job)
    assert report.counters["qualityResultsPublished"] == 1
    assert report.failed("quality ledger") == 1, report.render()
    assert report.status != "success"


def test_two_jobs_runs_of_one_check_started_in_the_same_second_keep_both_results(
    emulator: Any, client: BlindataClient
) -> None:
    """Seed 003: "One result is written per check and run". The contract keys a result by
    ``(check, startedAt)``: two DAGs on one schedule asserting the same thing, their runs
    stamped in whole seconds, kept one result, the other overwritten while the report counted
    both published (a probe of quality)."""
    job = definition()
    asserted = {(PG, "dwh.sales.orders"): [{"assertion": "not_null", "column": "id"}]}
    passed = [{**asserted[PG, "dwh.sales.orders"][0], "success": True}]
    failed = [{**asserted[PG, "dwh.sales.orders"][0], "success": False}]
    events = [
        *run(
            "dag_a.check",
            "0190b1c2-0000-7000-8000-00000000000a",
            {(PG, "dwh.sales.orders"): passed},
        ),
        *run(
            "dag_b.check",
            "0190b1c2-0000-7000-8000-00000000000b",
            {(PG, "dwh.sales.orders"): failed},
        ),
    ]
    report = snapshot(plan_for(client, events, job), client, job)
    assert report.counters["qualityResultsPublished"] == 2, report.render()
    results = objects(emulator, Kind.RESULT)
    assert len(results) == 2
    assert sorted(r["metric"] for r in results) == [0, 1]


# -- "A run is published once per check": a late event of a published run --------------------------

ORDERS = (PG, "dwh.sales.orders")
CUSTOMERS = (PG, "dwh.sales.customers")
NOT_NULL = [{"assertion": "not_null", "column": "id", "success": True}]
NOT_NULL_FAILS = [{"assertion": "not_null", "column": "id", "success": False}]
RUN = "0190b1c2-0000-7000-8000-0000000000a1"
OTHER_RUN = "0190b1c2-0000-7000-8000-0000000000b2"


def late(run_id: str, assertions: dict[tuple[str, str], list[dict[str, Any]]]) -> dict[str, Any]:
    """A RUNNING event of ``run_id`` of job ``dq/check`` delivered after the run completed."""
    event = run("check", run_id, assertions)[0]
    return {**event, "eventType": "RUNNING", "eventTime": "2026-11-29T10:00:20.000Z"}


def results_by_check(emulator: Any) -> dict[str, list[int]]:
    codes = {c["uuid"]: c["code"].rsplit("/", 1)[-1] for c in objects(emulator, Kind.CHECK)}
    found: dict[str, list[int]] = {}
    for result in objects(emulator, Kind.RESULT):
        found.setdefault(codes[result["qualityCheck"]["uuid"]], []).append(result["metric"])
    return {code: sorted(metrics) for code, metrics in sorted(found.items())}


PUBLISHED = run("check", RUN, {ORDERS: NOT_NULL})
OTHER_CUSTOMERS = run("check", OTHER_RUN, {CUSTOMERS: NOT_NULL})


@pytest.mark.parametrize(
    ("first", "light", "expected"),
    [
        pytest.param(
            PUBLISHED,
            False,
            {"dwh.sales.customers:not_null:id": [1], "dwh.sales.orders:not_null:id": [0]},
            id="on-a-dataset-with-no-check-yet",
        ),
        pytest.param(
            PUBLISHED + OTHER_CUSTOMERS,
            False,
            {"dwh.sales.customers:not_null:id": [0, 1], "dwh.sales.orders:not_null:id": [0]},
            id="on-a-check-with-results-of-other-runs",
        ),
        pytest.param(
            PUBLISHED + OTHER_CUSTOMERS,
            True,
            {"dwh.sales.customers:not_null:id": [0, 1], "dwh.sales.orders:not_null:id": [0]},
            id="by-a-light-sync-then-a-full-snapshot",
        ),
    ],
)
def test_an_assertion_a_late_event_adds_to_a_published_run_is_published_once(
    emulator: Any,
    client: BlindataClient,
    first: list[dict[str, Any]],
    light: bool,
    expected: dict[str, list[int]],
) -> None:
    """A probe: a late RUNNING event of a run already published asserted on another dataset; its
    check was created and never given the result, the whole run being in the ledger."""
    job = definition()
    snapshot(plan_for(client, first, job), client, job)
    events = [*first, late(RUN, {CUSTOMERS: NOT_NULL_FAILS})]
    plan = plan_for(client, events, job)
    if light:
        plan = plan_of_jobs(plan, [("dq", "check")])
    report = snapshot(plan, client, job, light=light)
    assert report.counters["qualityResultsPublished"] == 1, report.render()
    assert results_by_check(emulator) == expected
    for _ in range(2):  # a snapshot after it (a full one after the light sync) sends nothing
        again = snapshot(plan_for(client, events, job), client, job)
        assert "qualityResultsPublished" not in again.counters, again.render()
    assert results_by_check(emulator) == expected


def test_a_late_result_whose_ledger_write_failed_is_not_posted_again(emulator: Any) -> None:
    """Blindata holds the late result (its check's last run is the result's start), though the
    ledger does not name its check for the run: the next snapshot does not post it again."""
    job = definition()
    events = [*PUBLISHED, late(RUN, {CUSTOMERS: NOT_NULL_FAILS})]
    with client_of(emulator) as client:
        snapshot(plan_for(client, PUBLISHED, job), client, job)
    with client_of(emulator, LedgerDiscarded()) as blindata:
        failed = snapshot(plan_for(blindata, events, job), blindata, job)
    assert failed.counters["qualityResultsPublished"] == 1
    assert failed.failed("quality ledger") == 1, failed.render()
    with client_of(emulator) as client:
        again = snapshot(plan_for(client, events, job), client, job)
    assert "qualityResultsPublished" not in again.counters, again.render()
    assert results_by_check(emulator) == {
        "dwh.sales.customers:not_null:id": [1],
        "dwh.sales.orders:not_null:id": [0],
    }


def as_previous_release(client: BlindataClient) -> None:
    """The ledgers rewritten as the previous release wrote them: a published run as its bare
    id, meaning "every check planned for it then was published"."""
    (suite,) = client.api.quality_suites.list()
    ledgers = [c for c in client.api.quality_checks.list() if c.code.startswith("ol-ledger:")]
    for ledger in ledgers:
        ledger.additional_properties = [
            AdditionalProperty(name=p.name, value=(p.value or "").split(" ")[0])
            if p.name == "publishedRun"
            else p
            for p in ledger.additional_properties or []
        ]
    client.api.quality_suites.import_objects(
        QualityImport(quality_suite=suite, quality_checks=ledgers)
    )
    written = {
        p.value
        for c in client.api.quality_checks.list()
        if c.code.startswith("ol-ledger:")
        for p in c.additional_properties or []
        if p.name == "publishedRun"
    }
    assert written and all(" " not in (value or "") for value in written)


@pytest.mark.parametrize(
    ("first", "then", "created_before", "published", "expected"),
    [
        pytest.param(
            PUBLISHED + OTHER_CUSTOMERS,
            [],
            False,
            0,
            {"dwh.sales.customers:not_null:id": [0], "dwh.sales.orders:not_null:id": [0]},
            id="its-results-are-not-posted-again",
        ),
        pytest.param(
            PUBLISHED,
            [late(RUN, {CUSTOMERS: NOT_NULL_FAILS})],
            False,
            1,
            {"dwh.sales.customers:not_null:id": [1], "dwh.sales.orders:not_null:id": [0]},
            id="a-late-assertion-whose-check-is-new",
        ),
        pytest.param(
            PUBLISHED,
            [late(RUN, {CUSTOMERS: NOT_NULL_FAILS})],
            True,
            1,
            {"dwh.sales.customers:not_null:id": [1], "dwh.sales.orders:not_null:id": [0]},
            id="a-late-assertion-whose-check-the-previous-release-left-without-result",
        ),
        pytest.param(
            PUBLISHED + OTHER_CUSTOMERS,
            [late(RUN, {CUSTOMERS: NOT_NULL_FAILS})],
            False,
            0,
            {"dwh.sales.customers:not_null:id": [0], "dwh.sales.orders:not_null:id": [0]},
            id="a-late-assertion-on-a-check-with-results-is-taken-as-published",
        ),
    ],
)
def test_a_run_the_previous_release_ledgered_gets_only_the_results_of_checks_without_any(
    emulator: Any,
    client: BlindataClient,
    first: list[dict[str, Any]],
    then: list[dict[str, Any]],
    created_before: bool,
    published: int,
    expected: dict[str, list[int]],
) -> None:
    """An upgrade posts no old result again. A run ledgered as its bare id keeps meaning that
    every check planned for it then was published: a check is new to it only when it has no
    result at all (created now, or by the previous release, which skipped the late result)."""
    job = definition()
    snapshot(plan_for(client, first, job), client, job)
    as_previous_release(client)
    events = [*first, *then]
    if created_before:  # the previous release created the late check, and gave it no result
        plan = plan_for(client, events, job)
        assert plan.quality is not None
        plan.quality.results[:] = [
            r for r in plan.quality.results if f"/{CUSTOMERS[1]}:" not in r.check
        ]
        snapshot(plan, client, job)
        as_previous_release(client)
    report = snapshot(plan_for(client, events, job), client, job)
    assert report.counters.get("qualityResultsPublished", 0) == published, report.render()
    assert results_by_check(emulator) == expected
    again = snapshot(plan_for(client, events, job), client, job)
    assert "qualityResultsPublished" not in again.counters, again.render()
    assert results_by_check(emulator) == expected
    ledger = {value for kind, value in ledger_entries(emulator, raw=True) if kind == "publishedRun"}
    assert any(value.startswith(f"{RUN} ") for value in ledger)  # written with its checks now


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(["run-1"], None, id="a-bare-run-id-is-the-previous-release-s-every-check"),
        pytest.param(
            published_run_values("run-1", {check_digest(f"c{i}") for i in range(3)}),
            {check_digest(f"c{i}") for i in range(3)},
            id="a-run-with-its-checks",
        ),
        pytest.param(
            published_run_values("run 1", {check_digest(f"c{i}") for i in range(150)}),
            {check_digest(f"c{i}") for i in range(150)},
            id="a-run-of-many-checks-over-several-values",
        ),
    ],
)
def test_a_published_run_reads_back_with_the_checks_it_was_published_for(
    values: list[str], expected: set[str] | None
) -> None:
    run_id = "run 1" if len(values) > 1 else "run-1"
    assert all(len(value) < 700 for value in values)
    row = QualityCheck(
        code=ledger_code("ol:dq|check"),
        name="ledger",
        additional_properties=[
            AdditionalProperty(name="openLineageJobScope", value="ol:dq|check"),
            *(AdditionalProperty(name="publishedRun", value=value) for value in values),
        ],
    )
    ledger = _Ledger([row])
    assert ledger.has("ol:dq|check", "publishedRun", run_id)
    assert ledger.published_for("ol:dq|check", run_id) == expected
