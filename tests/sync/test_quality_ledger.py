"""Seed 003 rules of the quality ledger and of removed jobs, against the emulator over HTTP:

* "When a snapshot removes a job, the agent disables the checks of that job" — also when it was
  the last job with checks;
* "One result is written per check and run" — also when another assertion of the same run
  targets a dataset that is not catalogued.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from types import SimpleNamespace
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
    QualityResult,
    QualitySuite,
    Ref,
    System,
)
from airflow_blindata.mapper.light import plan_of_jobs
from airflow_blindata.mapper.plan import PlannedResult
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.scopes import job_scope
from airflow_blindata.mapper.systems import NAMESPACE_PROPERTY
from airflow_blindata.sync import snapshot
from airflow_blindata.sync.quality import _Ledger, _Published, ledger_code
from tests.sync.helpers import OTHER_DEFINITION, PG, client_of, definition, objects, plan_for
from tests.sync.helpers import assertions_run as run

pytestmark = pytest.mark.integration

CRAWLED = "postgres://crawled:5432"
"""The namespace of a crawled System: entities there are never created, only found."""
UNMAPPED = "mysql://nowhere:3306"
"""A namespace that maps to no System."""
PUBLISHED_CHECKS = "publishedChecks"
"""The ledger's property of the checks each published run was published for."""


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


def ledger_entries(emulator: Any) -> set[tuple[str, str]]:
    return {
        (p["name"], p["value"])
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


# -- "One result is written per check and run": a late event of a run already published ---------

ORDERS = (PG, "dwh.sales.orders")
CUSTOMERS = (PG, "dwh.sales.customers")
NOT_NULL = [{"assertion": "not_null", "column": "id", "success": True}]
NOT_NULL_FAILS = [{"assertion": "not_null", "column": "id", "success": False}]
RUN = "0190b1c2-0000-7000-8000-0000000000a1"
OTHER_RUN = "0190b1c2-0000-7000-8000-0000000000b2"
PUBLISHED = run("check", RUN, {ORDERS: NOT_NULL})
OTHER_CUSTOMERS = run("check", OTHER_RUN, {CUSTOMERS: NOT_NULL})


def late(
    run_id: str, assertions: dict[tuple[str, str], list[dict[str, Any]]], **changes: Any
) -> dict[str, Any]:
    """A RUNNING event of ``run_id`` of job ``dq/check`` delivered after the run completed."""
    event = run("check", run_id, assertions)[0]
    return {**event, "eventType": "RUNNING", "eventTime": "2026-11-29T10:00:20.000Z", **changes}


def results_by_check(emulator: Any) -> dict[str, list[int]]:
    codes = {c["uuid"]: c["code"].rsplit("/", 1)[-1] for c in objects(emulator, Kind.CHECK)}
    found: dict[str, list[int]] = {}
    for result in objects(emulator, Kind.RESULT):
        found.setdefault(codes[result["qualityCheck"]["uuid"]], []).append(result["metric"])
    return {code: sorted(metrics) for code, metrics in sorted(found.items())}


def ledger_values(emulator: Any, name: str) -> list[str]:
    return [
        p["value"]
        for c in objects(emulator, Kind.CHECK)
        if c["code"].startswith("ol-ledger:")
        for p in c.get("additionalProperties") or []
        if p["name"] == name and p["value"] != "-"
    ]


class ResultsCounted(httpx.HTTPTransport):
    """A Blindata that counts the listings of quality results asked of it; with ``fail``, it
    answers them with that status."""

    def __init__(self, *, fail: int = 0) -> None:
        super().__init__()
        self.fail, self.listed = fail, 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path.endswith("/data-quality/results"):
            self.listed += 1
            if self.fail:
                return httpx.Response(self.fail, json={"status": self.fail, "message": "no"})
        return super().handle_request(request)


LATE_ON_ORDERS_AND_CUSTOMERS = {
    "dwh.sales.customers:not_null:id": [1],
    "dwh.sales.orders:not_null:id": [0],
}


@pytest.mark.parametrize(
    ("first", "later", "light", "expected"),
    [
        pytest.param(
            PUBLISHED,
            [late(RUN, {CUSTOMERS: NOT_NULL_FAILS})],
            False,
            LATE_ON_ORDERS_AND_CUSTOMERS,
            id="on-a-dataset-with-no-check-yet",
        ),
        pytest.param(
            PUBLISHED + OTHER_CUSTOMERS,
            [late(RUN, {CUSTOMERS: NOT_NULL_FAILS})],
            False,
            {"dwh.sales.customers:not_null:id": [0, 1], "dwh.sales.orders:not_null:id": [0]},
            id="on-a-check-with-results-of-other-runs",
        ),
        pytest.param(
            PUBLISHED + OTHER_CUSTOMERS,
            [late(RUN, {CUSTOMERS: NOT_NULL_FAILS})],
            True,
            {"dwh.sales.customers:not_null:id": [0, 1], "dwh.sales.orders:not_null:id": [0]},
            id="by-a-light-sync-then-a-full-snapshot",
        ),
        pytest.param(
            PUBLISHED,
            [
                {
                    **event,
                    "producer": "https://example.com/second-producer",
                    "eventTime": event["eventTime"].replace(":00:", ":01:"),
                }
                for event in run("check", RUN, {CUSTOMERS: NOT_NULL_FAILS})
            ],
            False,
            LATE_ON_ORDERS_AND_CUSTOMERS,
            id="by-a-second-producer-of-the-run",
        ),
    ],
)
def test_an_assertion_a_late_event_adds_to_a_published_run_is_published_once(
    emulator: Any,
    client: BlindataClient,
    first: list[dict[str, Any]],
    later: list[dict[str, Any]],
    light: bool,
    expected: dict[str, list[int]],
) -> None:
    """Seed 003: one result per check and run. A run already in the ledger (``publishedRun``)
    whose later event asserts something new had its new check made, its result never posted."""
    job = definition()
    snapshot(plan_for(client, first, job), client, job)
    events = [*first, *later]
    plan = plan_for(client, events, job)
    if light:
        plan = plan_of_jobs(plan, [("dq", "check")])
    report = snapshot(plan, client, job, light=light)
    assert report.counters.get("qualityResultsPublished") == 1, report.render()
    assert results_by_check(emulator) == expected
    for _ in range(2):  # the snapshots after it (a full one after a light sync) send nothing
        again = snapshot(plan_for(client, events, job), client, job)
        assert "qualityResultsPublished" not in again.counters, again.render()
        assert again.status == "success", again.render()
    assert results_by_check(emulator) == expected
    assert RUN in ledger_values(emulator, "publishedRun")  # a bare id, as before


def test_an_assertion_on_a_dataset_catalogued_after_its_run_was_published_is_published(
    emulator: Any, client: BlindataClient
) -> None:
    """The run's other dataset mapped to no System: the run was whole without it. Once its
    namespace is catalogued, the run has a check more, whose result is posted once."""
    job = definition()
    events = run("check", RUN, {ORDERS: NOT_NULL, (UNMAPPED, "sales.customers"): NOT_NULL_FAILS})
    first = snapshot(plan_for(client, events, job), client, job)
    assert first.counters["qualityResultsPublished"] == 1
    assert RUN in ledger_values(emulator, "publishedRun")
    mapped = client.api.systems.create(
        System(
            name="Shop",
            subtype="DATABASE",
            additional_properties=AdditionalProperty.many(((NAMESPACE_PROPERTY, UNMAPPED),)),
        )
    )
    client.api.physical_entities.upload(
        [PhysicalEntity(system=Ref(uuid=mapped.uuid or ""), name="sales.customers")]
    )
    second = snapshot(plan_for(client, events, job), client, job)
    assert second.counters.get("qualityResultsPublished") == 1, second.render()
    assert second.counters["qualityResultsAlreadyPublished"] == 1
    third = snapshot(plan_for(client, events, job), client, job)
    assert "qualityResultsPublished" not in third.counters, third.render()
    assert sorted(r["metric"] for r in objects(emulator, Kind.RESULT)) == [0, 1]


def test_a_late_result_whose_ledger_write_failed_is_not_posted_again(emulator: Any) -> None:
    """Blindata holds the late result, the ledger does not say so: the next snapshot asks
    Blindata which results of the run it holds, and posts none again."""
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
    assert results_by_check(emulator) == LATE_ON_ORDERS_AND_CUSTOMERS


def test_a_late_assertion_whose_results_cannot_be_listed_waits_for_the_next_snapshot(
    emulator: Any,
) -> None:
    """Which results of a changed run Blindata holds is asked before any is posted: a listing
    that fails posts nothing (a result is never posted twice), fails the snapshot, and the
    next snapshot posts the late result."""
    job = definition()
    events = [*PUBLISHED, late(RUN, {CUSTOMERS: NOT_NULL_FAILS})]
    with client_of(emulator) as client:
        snapshot(plan_for(client, PUBLISHED, job), client, job)
    with client_of(emulator, ResultsCounted(fail=500)) as blindata:
        failed = snapshot(plan_for(blindata, events, job), blindata, job)
    assert "qualityResultsPublished" not in failed.counters, failed.render()
    assert failed.failed("quality result"), failed.render()
    with client_of(emulator) as client:
        again = snapshot(plan_for(client, events, job), client, job)
    assert again.counters.get("qualityResultsPublished") == 1, again.render()
    assert results_by_check(emulator) == LATE_ON_ORDERS_AND_CUSTOMERS


def test_a_late_assertion_waiting_for_its_dataset_is_not_looked_up_at_every_snapshot(
    emulator: Any,
) -> None:
    """A late assertion on a dataset not catalogued yet: Blindata is asked once which results
    of the run it holds; the snapshots after it, while the dataset is still missing, ask
    nothing (the run's recorded checks are those it has, but the one that cannot exist)."""
    client = client_of(emulator)
    crawled = client.api.systems.create(
        System(
            name="Crawled",
            subtype="DATABASE",
            additional_properties=AdditionalProperty.many(((NAMESPACE_PROPERTY, CRAWLED),)),
        )
    )
    job = definition()
    events = [*PUBLISHED, late(RUN, {(CRAWLED, "dwh.sales.customers"): NOT_NULL_FAILS})]
    snapshot(plan_for(client, PUBLISHED, job), client, job)
    for _ in range(2):
        counted = ResultsCounted()
        with client_of(emulator, counted) as blindata:
            waiting = snapshot(plan_for(blindata, events, job), blindata, job)
        assert "qualityResultsPublished" not in waiting.counters, waiting.render()
        assert waiting.gap_count(GapCode.TARGET_NOT_CATALOGUED) >= 1
        assert counted.listed == 0, "a run whose late check waits is not looked up again"
    client.api.physical_entities.upload(
        [PhysicalEntity(system=Ref(uuid=crawled.uuid or ""), schema="sales", name="customers")]
    )
    catalogued = snapshot(plan_for(client, events, job), client, job)
    assert catalogued.counters.get("qualityResultsPublished") == 1, catalogued.render()
    assert sorted(r["metric"] for r in objects(emulator, Kind.RESULT)) == [0, 1]
    after = snapshot(plan_for(client, events, job), client, job)
    assert "qualityResultsPublished" not in after.counters, after.render()
    client.close()


# -- the ledger across releases: an upgrade, a roll-back ------------------------------------------


def as_previous_release(client: BlindataClient) -> None:
    """The ledgers as the previous release left them: without the checks of published runs
    (an upsert keeps a name it is not sent, so it is emptied as the agent empties one)."""
    (suite,) = client.api.quality_suites.list()
    ledgers = [c for c in client.api.quality_checks.list() if c.code.startswith("ol-ledger:")]
    for ledger in ledgers:
        ledger.additional_properties = [
            AdditionalProperty(name=p.name, value="-" if p.name == PUBLISHED_CHECKS else p.value)
            for p in ledger.additional_properties or []
        ]
    client.api.quality_suites.import_objects(
        QualityImport(quality_suite=suite, quality_checks=ledgers)
    )


@pytest.mark.parametrize(
    ("first", "then", "expected"),
    [
        pytest.param(
            PUBLISHED + OTHER_CUSTOMERS,
            [],
            {"dwh.sales.customers:not_null:id": [0], "dwh.sales.orders:not_null:id": [0]},
            id="its-results-are-not-posted-again",
        ),
        pytest.param(
            PUBLISHED + OTHER_CUSTOMERS,
            [late(RUN, {CUSTOMERS: NOT_NULL_FAILS})],
            {"dwh.sales.customers:not_null:id": [0], "dwh.sales.orders:not_null:id": [0]},
            id="a-late-assertion-the-previous-release-skipped-stays-so",
        ),
    ],
)
def test_an_upgrade_takes_the_previous_releases_runs_as_published_without_asking(
    emulator: Any,
    client: BlindataClient,
    first: list[dict[str, Any]],
    then: list[dict[str, Any]],
    expected: dict[str, list[int]],
) -> None:
    """A ledger of the previous release names no checks of its published runs: each is taken as
    wholly published for the checks the plan gives it, as that release took it, and recorded
    with them, with no listing of every check's results (thousands of requests at an upgrade,
    and a result Blindata lists otherwise than it was posted would be posted again)."""
    job = definition()
    snapshot(plan_for(client, first, job), client, job)
    as_previous_release(client)
    assert not ledger_values(emulator, PUBLISHED_CHECKS)
    events = [*first, *then]
    counted = ResultsCounted()
    with client_of(emulator, counted) as blindata:
        report = snapshot(plan_for(blindata, events, job), blindata, job)
    assert "qualityResultsPublished" not in report.counters, report.render()
    assert counted.listed == 0
    assert results_by_check(emulator) == expected
    assert {v.rsplit(" ", 1)[0] for v in ledger_values(emulator, PUBLISHED_CHECKS)} == {
        v for v in ledger_values(emulator, "publishedRun")
    }
    again = snapshot(plan_for(client, events, job), client, job)
    assert "qualityResultsPublished" not in again.counters, again.render()
    assert results_by_check(emulator) == expected


def test_an_upgrade_posts_the_results_of_checks_made_since_for_the_runs_it_takes_as_published(
    emulator: Any, client: BlindataClient
) -> None:
    """A run the previous release published without one of its assertions (it could not read
    the facet that held it, which this release reads): its check is made now, holds no result,
    and its failing result is posted (a review: it was taken as published, the failure hidden).
    """
    job = definition()
    as_read_before = run("check", RUN, {ORDERS: NOT_NULL, CUSTOMERS: []})
    unique_fails = {"assertion": "unique", "column": "id", "success": False}
    stored = run("check", RUN, {ORDERS: NOT_NULL, CUSTOMERS: [None, unique_fails]})
    snapshot(plan_for(client, as_read_before, job), client, job)
    as_previous_release(client)
    counted = ResultsCounted()
    with client_of(emulator, counted) as blindata:
        report = snapshot(plan_for(blindata, stored, job), blindata, job)
    assert report.counters.get("qualityResultsPublished") == 1, report.render()
    assert counted.listed == 0  # a check made now holds no result: nothing to ask
    assert results_by_check(emulator) == {
        "dwh.sales.customers:unique:id": [1],
        "dwh.sales.orders:not_null:id": [0],
    }
    again = snapshot(plan_for(client, stored, job), client, job)
    assert "qualityResultsPublished" not in again.counters, again.render()


def test_an_upgrade_whose_results_cannot_be_listed_takes_the_runs_as_published(
    emulator: Any, client: BlindataClient
) -> None:
    """A Blindata that does not list results (the query is inferred): the runs of the previous
    release are taken as wholly published, as that release took them, and nothing is posted."""
    job = definition()
    events = [*PUBLISHED, *OTHER_CUSTOMERS]
    snapshot(plan_for(client, events, job), client, job)
    as_previous_release(client)
    with client_of(emulator, ResultsCounted(fail=404)) as blindata:
        report = snapshot(plan_for(blindata, events, job), blindata, job)
    assert "qualityResultsPublished" not in report.counters, report.render()
    assert report.status == "success", report.render()
    assert len(ledger_values(emulator, PUBLISHED_CHECKS)) == 2
    assert len(objects(emulator, Kind.RESULT)) == 2


def test_a_roll_back_reads_the_ledger_as_the_previous_release_wrote_it(
    emulator: Any, client: BlindataClient
) -> None:
    """The previous release reads ``publishedRun`` as bare run ids, and its upserts keep the
    names it does not send: the checks of published runs are a property of their own, and a
    property this release does not know (a later release's) is kept."""
    job = definition()
    events = [*PUBLISHED, *OTHER_CUSTOMERS]
    snapshot(plan_for(client, events, job), client, job)
    (suite,) = client.api.quality_suites.list()
    (ledger,) = [c for c in client.api.quality_checks.list() if c.code.startswith("ol-ledger:")]
    ledger.additional_properties = [
        *(ledger.additional_properties or []),
        AdditionalProperty(name="publishedByALaterRelease", value=f"{RUN} x"),
    ]
    client.api.quality_suites.import_objects(
        QualityImport(quality_suite=suite, quality_checks=[ledger])
    )
    snapshot(plan_for(client, events, job), client, job)
    assert sorted(ledger_values(emulator, "publishedRun")) == sorted([RUN, OTHER_RUN])
    assert ledger_values(emulator, "publishedByALaterRelease") == [f"{RUN} x"]


def test_the_ledger_grows_by_one_short_value_per_run_whatever_its_checks(
    emulator: Any, client: BlindataClient
) -> None:
    """The checks of a published run are one digest of their set: 12 runs of 15 checks each
    write 12 values, each well under the 255 characters a server may keep of a property."""
    job = definition()
    assertions = [{"assertion": f"rule_{i}", "column": "id", "success": True} for i in range(15)]
    events = [
        {**event, "eventTime": event["eventTime"].replace("T10:", f"T{10 + hour}:")}
        for hour in range(12)
        for event in run(
            "check", f"0190b1c2-0000-7000-8000-0000000001{hour:02d}", {ORDERS: assertions}
        )
    ]
    report = snapshot(plan_for(client, events, job), client, job)
    assert report.counters["qualityResultsPublished"] == 12 * 15, report.render()
    checks_of_runs = ledger_values(emulator, PUBLISHED_CHECKS)
    assert len(checks_of_runs) == 12
    assert len(ledger_values(emulator, "publishedRun")) == 12
    assert not ledger_values(emulator, "publishedResult")
    assert all(len(value) <= 36 + 1 + 16 for value in checks_of_runs)


START = datetime(2026, 11, 29, 10, 0, 0, 417000, tzinfo=UTC)
"""A run's start moved into its whole second (``result_start``)."""


@pytest.mark.parametrize(
    ("notes", "started_at", "held"),
    [
        pytest.param(
            "OpenLineage run run-1. Expected: 0.", START, True, id="its-notes-name-the-run"
        ),
        pytest.param("OpenLineage run run-1.", START.replace(second=9), True, id="a-start-since"),
        pytest.param("OpenLineage run run-2.", START, True, id="the-run-s-start-blindata-s-key"),
        pytest.param(None, START.replace(microsecond=0), True, id="before-starts-were-moved"),
        pytest.param(
            "OpenLineage run run-10.",
            START.replace(microsecond=5000),
            False,
            id="a-run-whose-id-begins-alike",
        ),
        pytest.param(
            "OpenLineage run run-2.",
            START.replace(microsecond=5000),
            False,
            id="another-run-of-that-second",
        ),
        pytest.param(None, START.replace(second=1), False, id="another-second"),
    ],
)
def test_a_result_blindata_holds_is_the_run_s_by_its_notes_or_its_start(
    notes: str | None, started_at: datetime, held: bool
) -> None:
    """Which result of a check is a run's: never a result posted twice, nor one taken for it
    that names another run at another start."""
    posted = QualityResult(
        quality_check=Ref(uuid="c"), metric=0, total_elements=1, started_at=started_at, notes=notes
    )
    api = SimpleNamespace(quality_results=SimpleNamespace(list=lambda **_: iter([posted])))
    ctx = SimpleNamespace(client=SimpleNamespace(api=api), attempt=lambda _k, _c, call: call())
    planned = PlannedResult(
        check="ol:c", run_id="run-1", started_at=START, failures=0, notes="", job="dq/check"
    )
    published = _Published(ctx, _Ledger([]), {"ol:c": "c"}, set(), {"ol:c"})  # type: ignore[arg-type]
    assert published._holding("c", [planned]) == ([planned] if held else [])
