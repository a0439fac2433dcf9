"""Faults: Blindata failing, throttling and dropping connections on a share of the calls."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.sync import snapshot
from tests.sync.helpers import counts, dbt_events, definition, objects, plan_for

pytestmark = pytest.mark.integration


def _throttle(faults: Any) -> None:
    """Bursts of 429: fewer in a row than the client's attempts, on several kinds of call."""
    for path in ("systems$", "physical_fields", "dataflows", "statements"):
        faults.rate_limit_next(5, retry_after=0, path=path)


def _drop(faults: Any) -> None:
    """Connections lost after the server did the work, and before: uploads are sent again."""
    for path in ("physical_entities/", "physical_fields/", "routines/", "dataflows/"):
        faults.drop_next(2, processed=True, path=path)
        faults.drop_next(2, processed=False, path=path)


def clean_run_counts(client: BlindataClient, emulator: Any) -> dict[str, int]:
    """What a snapshot without faults leaves (statements' analysis flows aside)."""
    job = definition()
    snapshot(plan_for(client, dbt_events(), job), client, job)
    result = counts(emulator)
    emulator.emulator.reset()
    return result


def scoped_flows(emulator: Any) -> int:
    return len([f for f in objects(emulator, Kind.FLOW) if f.get("scope")])


@pytest.mark.parametrize(
    "inject",
    [
        pytest.param(lambda f: f.set_rates(error_rate=0.2, error_status=503, seed=7), id="503"),
        pytest.param(lambda f: f.set_rates(error_rate=0.2, error_status=502, seed=12), id="502"),
        pytest.param(lambda f: _throttle(f), id="429"),
        pytest.param(lambda f: _drop(f), id="drops"),
    ],
)
def test_retries_carry_the_snapshot_through_transient_faults(
    client: BlindataClient, emulator: Any, inject: Any
) -> None:
    expected = clean_run_counts(client, emulator)
    job = definition()
    plan = plan_for(client, dbt_events(), job)
    inject(emulator.emulator.faults)

    report = snapshot(plan, client, job)

    emulator.emulator.faults.clear()
    if report.status == "partial":
        # 502 on a create is not retried (it may have landed): reported, and a rerun completes.
        assert set(report.failures) <= {"system", "statement", "query bucket"}, report.render()
        report = snapshot(plan_for(client, dbt_events(), job), client, job)
    assert report.status == "success", report.render()
    found = counts(emulator)
    assert {k: v for k, v in found.items() if k != Kind.FLOW} == {
        k: v for k, v in expected.items() if k != Kind.FLOW
    }
    assert scoped_flows(emulator) == len(plan.flows)


def test_objects_blindata_keeps_refusing_are_reported_and_a_rerun_completes(
    client: BlindataClient, emulator: Any
) -> None:
    job = definition()
    plan = plan_for(client, dbt_events(), job)
    emulator.emulator.faults.fail_next(1000, status=400, path="dataflows")

    failed = snapshot(plan, client, job)

    emulator.emulator.faults.clear()
    assert failed.status == "partial"
    assert failed.failures["flow"].count == len(plan.flows)
    assert "injected failure" in failed.failures["flow"].examples[0]  # the 400 body's message
    assert set(failed.failed_scopes) == {flow.scope for flow in plan.flows}
    assert scoped_flows(emulator) == 0
    assert len(objects(emulator, Kind.ENTITY)) == len(plan.entities)

    rerun = snapshot(plan_for(client, dbt_events(), job), client, job)

    assert rerun.status == "success", rerun.render()
    assert scoped_flows(emulator) == len(plan.flows)


def test_a_refused_row_costs_only_itself(client: BlindataClient, emulator: Any) -> None:
    job = definition()
    plan = plan_for(client, dbt_events(), job)
    bad = dataclasses.replace(plan.fields[0], name="")  # Blindata requires a field name
    plan.fields[0] = bad

    report = snapshot(plan, client, job)

    assert report.status == "partial"
    assert report.failures["field"].count == 1
    assert len(objects(emulator, Kind.FIELD)) == len(plan.fields) - 1


def test_an_unreachable_blindata_fails_the_run(emulator: Any) -> None:
    from airflow_blindata.blindata import ApiKeyCredentials, RetryPolicy
    from tests.helpers import API_KEY, TENANT, USER

    job = definition()
    with BlindataClient(
        "http://127.0.0.1:9",
        credentials=ApiKeyCredentials(USER, API_KEY),
        tenant=TENANT,
        retry=RetryPolicy(deadline=1.0, max_attempts=2, backoff_initial=0.01),
    ) as unreachable:
        report = snapshot(plan_for_unreachable(job), unreachable, job)
    assert report.status == "failed"
    assert "cannot connect" in (report.message or "")


def plan_for_unreachable(job: Any) -> Any:
    from airflow_blindata.mapper.build import build

    return build(dbt_events(), job, [])


WRITES = "POST|PUT|DELETE"
OUTAGE_DEADLINE = 2.0


def _writes(emulator: Any, since: int) -> list[str]:
    return [
        f"{entry['method']} {entry['path']}"
        for entry in emulator.emulator.requests.entries(since)
        if entry["method"] != "GET"
    ]


@pytest.mark.parametrize(
    ("inject", "second", "status", "stopped_in"),
    [
        pytest.param(
            lambda f: f.fail_next(10**6, status=503, method=WRITES),
            False,
            "failed",
            "systems",
            id="503-on-every-write-first-snapshot",
        ),
        pytest.param(
            lambda f: f.fail_next(10**6, status=500, method=WRITES),
            False,
            "failed",
            "systems",
            id="500-on-every-create-is-not-retried-but-stops-the-phase",
        ),
        pytest.param(
            lambda f: f.fail_next(10**6, status=500, method=WRITES),
            True,
            "failed",
            "entities",
            id="500-on-every-upload-second-snapshot",
        ),
        pytest.param(
            lambda f: f.drop_next(10**6, method=WRITES),
            True,
            "failed",
            "entities",
            id="unreachable-for-writes-second-snapshot",
        ),
        pytest.param(
            lambda f: f.fail_next(10**6, status=409, path=r"/dataflows/\*/upload$"),
            True,
            "partial",
            None,
            id="4xx-on-some-rows-stays-partial",
        ),
    ],
)
def test_a_write_outage_fails_the_snapshot_at_the_first_phase_that_cannot_write(
    client: BlindataClient,
    emulator: Any,
    inject: Any,
    second: bool,
    status: str,
    stopped_in: str | None,
) -> None:
    """Reads pass, writes do not: ``failed`` (the operator fails, the CLI exits 1), not ``partial``
    (exit 3, which the operator takes for success), and without waiting out the deadline for
    every batch of every later phase."""
    from airflow_blindata.blindata import ApiKeyCredentials, RetryPolicy
    from tests.helpers import API_KEY, TENANT, USER

    job = definition()
    if second:
        assert snapshot(plan_for(client, dbt_events(), job), client, job).status == "success"
    policy = RetryPolicy(deadline=OUTAGE_DEADLINE, backoff_initial=0.05, backoff_max=0.2)
    with BlindataClient(
        emulator.base_url, credentials=ApiKeyCredentials(USER, API_KEY), tenant=TENANT, retry=policy
    ) as blindata:
        plan = plan_for(blindata, dbt_events(), job)
        since = max((entry["id"] for entry in emulator.emulator.requests.entries()), default=0)
        inject(emulator.emulator.faults)
        started = time.monotonic()

        report = snapshot(plan, blindata, job, batch_size=10)

        elapsed = time.monotonic() - started
    emulator.emulator.faults.clear()
    assert report.status == status, report.render()
    if stopped_in is None:
        # every flow refused (409 splits a batch to its rows: each is refused alone)
        refused = report.counters["flowsDescribed"]
        assert set(report.failures) == {"flow"} and report.failures["flow"].count == refused
        return
    assert f"stopped in its {stopped_in} phase" in (report.message or "")
    assert (report.message or "").startswith("Blindata cannot take writes")
    # One deadline, not one per batch: the entity phase alone has 8 batches of 10 (16 s and more
    # if each waited its own); three deadlines leave a loaded machine its margin.
    assert elapsed < 3 * OUTAGE_DEADLINE, elapsed
    written = _writes(emulator, since)
    assert len(set(written)) == 1, written  # one operation was tried, the run stopped there
    assert not any("dataflows" in write for write in written)


@pytest.mark.usefixtures("no_margin")
@pytest.mark.parametrize(
    "inject",
    [
        pytest.param(lambda f: f.fail_next(10**6, status=503, method="DELETE"), id="503"),
        pytest.param(lambda f: f.drop_next(10**6, method="DELETE"), id="unreachable"),
    ],
)
def test_an_outage_stops_the_cleanup_at_once_and_the_next_cleanup_finishes_it(
    client: BlindataClient, emulator: Any, inject: Any
) -> None:
    """Deletes that Blindata cannot take end the cleanup ``failed`` after one retry deadline,
    not one deadline per stale object; nothing is forgotten, so the next cleanup removes it."""
    from airflow_blindata.blindata import ApiKeyCredentials, RetryPolicy
    from airflow_blindata.sync import cleanup
    from tests.helpers import API_KEY, TENANT, USER
    from tests.sync.helpers import History, next_second, run, without_job

    job = definition()
    history = History()
    run(client, history, dbt_events(), job)
    next_second(emulator)
    run(client, history, without_job(dbt_events()), job)
    policy = RetryPolicy(deadline=OUTAGE_DEADLINE, backoff_initial=0.05, backoff_max=0.2)
    with BlindataClient(
        emulator.base_url, credentials=ApiKeyCredentials(USER, API_KEY), tenant=TENANT, retry=policy
    ) as blindata:
        since = max((entry["id"] for entry in emulator.emulator.requests.entries()), default=0)
        inject(emulator.emulator.faults)
        started = time.monotonic()

        stopped = history.add(cleanup(job, blindata, history))

        elapsed = time.monotonic() - started
    emulator.emulator.faults.clear()
    assert stopped.status == "failed", stopped.render()
    assert "stopped in its flows step" in (stopped.message or "")
    assert len(set(_writes(emulator, since))) == 1  # one delete was tried, the run stopped there

    finished = history.add(cleanup(job, client, history))

    assert finished.status == "success", finished.render()
    assert finished.removed["flow"].count > 0 and finished.removed["entity"].count > 0
    # One deadline, not one per flow: with a deadline per stale flow it would take at least
    # that many deadlines; three leave a loaded machine its margin.
    assert finished.removed["flow"].count >= 4, finished.render()
    assert elapsed < 3 * OUTAGE_DEADLINE, elapsed


@pytest.mark.parametrize(
    "lose_the_answer",
    [
        pytest.param(lambda f, **where: f.drop_next(1, processed=True, **where), id="dropped"),
        # a gateway (Envoy on an upstream reset) answers 503 after Blindata created it: a
        # statement has no natural key, so a create sent again made a second one, analysed
        # twice, its flows doubled and never removed (a probe of a conforming server)
        pytest.param(
            lambda f, **where: f.fail_next(2, status=503, processed=True, **where),
            id="a-gateways-503-after-the-work",
        ),
        pytest.param(
            lambda f, **where: f.fail_next(2, status=502, processed=True, **where),
            id="a-gateways-502-after-the-work",
        ),
    ],
)
def test_a_statement_whose_create_answer_was_lost_is_found_and_submitted(
    client: BlindataClient, emulator: Any, lose_the_answer: Any
) -> None:
    """Seed 001, SQL in the events: each SQL job's statement is submitted for analysis. A
    create that landed and lost its answer (a create is not sent again) is found by its
    routine and submitted in the same snapshot: no failure, no second statement."""
    job = definition()
    plan = plan_for(client, dbt_events(), job)
    lose_the_answer(emulator.emulator.faults, path="/queryparser/statements$", method="POST")

    report = snapshot(plan, client, job)

    assert report.status == "success", report.render()
    statements = objects(emulator, Kind.STATEMENT)
    assert len(statements) == len(plan.routines)
    assert report.counters["statementsSubmitted"] == len(plan.routines)


def test_a_quality_suite_whose_create_answer_was_lost_is_found_and_its_checks_written(
    client: BlindataClient, emulator: Any
) -> None:
    """Seed 003: checks and results go in the definition's suite. A create that landed and
    lost its answer is found by its code in the same snapshot: the quality phase is not skipped
    for a run (no failure, one suite, the checks written)."""
    job = definition()
    plan = plan_for(client, dbt_events(), job)
    assert plan.quality is not None and plan.quality.checks
    emulator.emulator.faults.drop_next(
        1, processed=True, path="/data-quality/suites$", method="POST"
    )

    report = snapshot(plan, client, job)

    assert report.status == "success", report.render()
    assert len(objects(emulator, Kind.SUITE)) == 1
    assert report.counters["qualityChecksCreated"] > 0


def test_a_system_whose_create_answer_was_lost_is_found_and_the_snapshot_goes_on(
    client: BlindataClient, emulator: Any
) -> None:
    """The only write of the systems phase is a create whose answer was lost; the System is
    found, stamped as this definition's: the write got through, which is no outage. The
    snapshot stopped there, failed ("cannot take writes"), though everything landed."""
    from tests.sync.helpers import _documented_plan

    job = definition()
    plan = _documented_plan(client, "# Orders\n\nVersion one.")
    assert [system.create for system in plan.systems] == [True]
    emulator.emulator.faults.drop_next(1, processed=True, path="/api/v1/systems$", method="POST")

    report = snapshot(plan, client, job)

    assert report.status == "success", report.render()
    assert report.counters["systemsCreated"] == 1
    assert len(objects(emulator, Kind.SYSTEM)) == 1
    assert report.counters["documentsWritten"] == 1


def test_a_flow_blindata_would_not_delete_but_removed_with_its_table_is_no_failure(
    client: BlindataClient, emulator: Any
) -> None:
    """Blindata deletes with an entity every flow that ends on it: flows whose delete was
    refused and that went with their table were reported left in Blindata (a probe of reports:
    4 reported, 2 there). Only those still there are failures; the others were removed."""
    from airflow_blindata.sync import cleanup
    from tests.sync.helpers import History, next_second, run, without_job

    job = definition(cleanup={"maxRemovalShare": 1.0})
    history = History()
    run(client, history, dbt_events(), job)
    next_second(emulator)
    run(client, history, without_job(dbt_events()), job)
    emulator.emulator.faults.fail_next(10**6, status=400, path="dataflows", method="DELETE")

    report = history.add(cleanup(job, client, history))

    emulator.emulator.faults.clear()
    assert report.removed["entity"].count > 0, report.render()
    left = {flow["name"] for flow in objects(emulator, Kind.FLOW)}
    failed = report.failures.get("flow")
    examples = failed.examples if failed is not None else []
    reported = {example.split(" ", 1)[1].split(": DELETE", 1)[0] for example in examples}
    assert reported <= left, (reported - left, report.render())
    assert report.counters["flowsRemovedWithTheirEnd"] > 0, report.render()
    # every delete was refused: each flow removed went with its table
    assert report.removed["flow"].count == report.counters["flowsRemovedWithTheirEnd"]


def test_a_gap_for_what_blindata_refused_this_run_says_so(
    client: BlindataClient, emulator: Any
) -> None:
    """A check whose entity, and a column flow whose field, Blindata refused this run were
    reported ``TARGET_NOT_CATALOGUED`` ("crawl the store, or allow entityCreation", allowed
    already) and ``FIELD_NOT_CATALOGUED`` ("send the schema facet", sent), and the refused
    fields were counted owned (a probe of what the admin sees)."""
    from airflow_blindata.mapper.report import GapCode
    from tests.builders import (
        assertion,
        assertions_facet,
        column_lineage_facet,
        dataset,
        input_field,
        run_cycle,
        schema_facet,
    )

    source = dataset(
        "shop.public.src",
        facets=schema_facet("id", "amount"),
        input_facets=assertions_facet(assertion("not_null", column="id")),
    )
    target = dataset(
        "shop.public.dst",
        facets={
            **schema_facet("id", "total"),
            **column_lineage_facet({"total": [input_field("shop.public.src", "amount")]}),
        },
    )
    events = run_cycle("etl.load", inputs=[source], outputs=[target])
    job = definition()
    plan = plan_for(client, events, job)
    assert plan.quality.checks and any(flow.kind == "column" for flow in plan.flows)
    emulator.emulator.faults.fail_next(10**6, status=400, path=r"/physical_fields/\*/upload$")

    fields_refused = snapshot(plan, client, job)

    emulator.emulator.faults.clear()
    (example, *_) = fields_refused.gaps[GapCode.FIELD_NOT_CATALOGUED].examples
    assert "refused by Blindata this run" in example, fields_refused.render()
    assert fields_refused.counters["fieldsOwned"] == 0
    emulator.emulator.reset()
    emulator.emulator.faults.fail_next(10**6, status=400, path=r"/physical_entities/\*/upload$")

    entities_refused = snapshot(plan_for(client, events, job), client, job)

    emulator.emulator.faults.clear()
    checks = entities_refused.gaps[GapCode.TARGET_NOT_CATALOGUED].examples
    assert checks and all("refused by Blindata this run" in e for e in checks if "check" in e)


def test_a_gap_for_what_may_not_be_created_says_nothing_was_refused(
    client: BlindataClient, emulator: Any
) -> None:
    """An entity never sent (its System's policy creates none) is no refusal: the note that it
    was refused this run, and is sent again, was on its check too (a review)."""
    from airflow_blindata.mapper.report import GapCode
    from tests.builders import assertion, assertions_facet, dataset, run_cycle

    source = dataset("shop.public.src", input_facets=assertions_facet(assertion("not_null")))
    events = run_cycle("etl.load", inputs=[source], outputs=[dataset("shop.public.dst")])
    job = definition(
        systemPolicies=[
            {"pattern": "postgres://*", "creation": "IF_MISSING", "entityCreation": False}
        ]
    )
    report = snapshot(plan_for(client, events, job), client, job)
    examples = report.gaps[GapCode.TARGET_NOT_CATALOGUED].examples
    assert examples and not any("refused" in example for example in examples), examples


def test_an_entity_created_but_not_read_back_is_said_refused_in_its_gaps(
    client: BlindataClient, emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Created, but its read-back failed: its check's gap gave the hint to allow entityCreation,
    allowed already (a review)."""
    from airflow_blindata.blindata import BlindataError
    from airflow_blindata.mapper.report import GapCode
    from airflow_blindata.sync import entities
    from tests.builders import assertion, assertions_facet, dataset, run_cycle

    source = dataset("shop.public.src", input_facets=assertions_facet(assertion("not_null")))
    events = run_cycle("etl.load", inputs=[source], outputs=[dataset("shop.public.dst")])
    job = definition()
    plan = plan_for(client, events, job)
    real = entities.existing_entities

    def reads_before_only(*args: Any, **kwargs: Any) -> Any:
        import sys

        if sys._getframe(1).f_code.co_name == "_read_back":  # what was created, read back
            raise BlindataError("read back refused")
        return real(*args, **kwargs)

    monkeypatch.setattr(entities, "existing_entities", reads_before_only)
    report = snapshot(plan, client, job)
    assert "created, but not read back" in report.failures["entity"].examples[0]
    examples = report.gaps[GapCode.TARGET_NOT_CATALOGUED].examples
    assert examples and all("refused by Blindata this run" in e for e in examples), examples
