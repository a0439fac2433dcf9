"""Quality (seed 003) in the mapper: checks, results and profiling records, named after the seed."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan, QualityPlan
from airflow_blindata.mapper.report import GapCode
from tests import builders
from tests.builders import DEFINITION_UUID as UUID
from tests.builders import PG, assertions_facet, at, dataset, policy, run_cycle
from tests.mapper.helpers import dbt_event_dicts as dbt_events


def definition(**options: Any) -> JobDefinition:
    return builders.definition(policy("postgres://*", nameTemplate="{host}"), **options)


def run(
    *,
    state: str = "COMPLETE",
    inputs: list[dict[str, Any]] | None = None,
    outputs: list[dict[str, Any]] | None = None,
    run_facets: dict[str, Any] | None = None,
    run_id: str = "run-1",
    job: str = "dq.check_orders",
) -> list[dict[str, Any]]:
    return run_cycle(
        job,
        end=state,
        start_time=at(0),
        end_time=at(0, minute=5),
        run_id=run_id,
        inputs=inputs or (),
        outputs=outputs or (),
        run_facets=run_facets,
        producer="p",
    )


def assertions(*items: dict[str, Any], name: str = "analytics.sales.orders") -> dict[str, Any]:
    return dataset(name, input_facets=assertions_facet(*items, producer=None))


def quality(plan: CatalogPlan) -> QualityPlan:
    assert plan.quality is not None
    return plan.quality


def test_an_assertion_is_a_check_per_dataset_assertion_and_column_with_a_result_per_run() -> None:
    events = run(
        inputs=[
            assertions(
                {"assertion": "not_null", "column": "id", "success": True},
                {"assertion": "not_null", "column": "amount", "success": False},
                {"assertion": "row_count", "name": "has_rows", "success": True},
            )
        ]
    )
    q = quality(build(events, definition()))
    assert [c.code for c in q.checks] == [
        "ol:postgres://db:5432/analytics.sales.orders:has_rows",
        "ol:postgres://db:5432/analytics.sales.orders:not_null:amount",
        "ol:postgres://db:5432/analytics.sales.orders:not_null:id",
    ]
    assert {(r.check.rsplit(":", 1)[-1], r.failures, r.total) for r in q.results} == {
        ("has_rows", 0, 1),
        ("amount", 1, 1),
        ("id", 0, 1),
    }
    check = q.checks[1]
    assert (check.entity.system, check.entity.schema_, check.entity.name) == (
        "db",
        "sales",
        "orders",
    )
    assert dict(check.properties) == {
        "openLineageKind": "assertion",
        "openLineageDataset": "postgres://db:5432/analytics.sales.orders",
        "openLineageAssertionType": "not_null",
        "openLineageColumn": "amount",
        "openLineageJobScope": "ol:airflow|dq.check_orders",
    }


_GE_ASSERTIONS = {
    "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.20.0/integration/common",
    "_schemaURL": "https://github.com/OpenLineage/OpenLineage/tree/main/integration/common/"
    "openlineage/common/provider/ge-assertions-dataset-facet.json",
    "assertions": [
        {"expectationType": "expect_column_values_to_not_be_null", "success": True, "column": "id"},
        {"expectationType": "expect_table_row_count_to_be_between", "success": False},
    ],
}


@pytest.mark.parametrize(
    "where",
    [
        {"inputFacets": {"greatExpectations_assertions": _GE_ASSERTIONS}},
        {"facets": {"greatExpectations_assertions": _GE_ASSERTIONS}},
        {"inputFacets": {"ge_results": _GE_ASSERTIONS}},  # another key, recognised by schema
    ],
    ids=["input facet", "dataset facet", "by schema URL"],
)
def test_an_assertion_is_a_check_per_dataset_assertion_and_column_great_expectations_too(
    where: dict[str, Any],
) -> None:
    """Seed 003: an assertion on an input is a check per dataset, assertion and column with a
    result per run. The Great Expectations integration sends its assertions as
    ``greatExpectations_assertions`` (``expectationType`` for the spec's ``assertion``), never as
    ``dataQualityAssertions``: they were counted as an unknown facet and made no check."""
    events = run(inputs=[{"namespace": PG, "name": "analytics.sales.orders", **where}])
    plan = build(events, definition())
    q = quality(plan)
    where_ = f"{PG}/analytics.sales.orders"
    assert {c.code: c.name for c in q.checks} == {
        f"ol:{where_}:expect_column_values_to_not_be_null:id": (
            "expect_column_values_to_not_be_null on id (analytics.sales.orders)"
        ),
        f"ol:{where_}:expect_table_row_count_to_be_between": (
            "expect_table_row_count_to_be_between (analytics.sales.orders)"
        ),
    }
    assert {r.check.removeprefix(f"ol:{where_}:"): r.failures for r in q.results} == {
        "expect_column_values_to_not_be_null:id": 0,
        "expect_table_row_count_to_be_between": 1,
    }
    assert "greatExpectations_assertions" not in plan.report.unknown_facets
    assert GapCode.MALFORMED_FACET not in plan.report.gaps


def test_one_check_per_dataset_assertion_and_column_whatever_case_a_producer_sends() -> None:
    """Seed 003: "One per dataset, per assertion name ... and per column". Under an
    ``identifierCase``, dbt's tests name a Snowflake table and column in lower case where an
    Airflow task names them in upper case: one entity and one field, and so one check with both
    runs' results, and the profiling record on the field as the catalog spells it."""
    snowflake = "snowflake://org-acct"
    job = builders.definition(
        policy("snowflake://*", identifierCase="UPPER", nameProfile="snowflake")
    )

    def checked(name: str, column: str, run_id: str, second: int) -> list[dict[str, Any]]:
        facets = {
            **assertions_facet({"assertion": "not_null", "column": column, "success": second == 0}),
            **builders.metrics_facet(columns={column: {"nullCount": second}}),
        }
        read = dataset(
            name,
            snowflake,
            facets=builders.schema_facet("AMOUNT"),
            input_facets=facets,
        )
        return run_cycle(
            "dbt.test", run_id=run_id, start_time=at(second), end_time=at(second + 1), inputs=[read]
        )

    plan = build(
        [*checked("db.s.t", "amount", "r1", 0), *checked("DB.S.T", "AMOUNT", "r2", 10)], job
    )

    where = f"{snowflake}/DB.S.T"
    assert [c.code for c in quality(plan).checks] == [f"ol:{where}:not_null:AMOUNT"]
    assert sorted(r.failures for r in quality(plan).results) == [0, 1]
    assert {r.field for r in quality(plan).records if r.metric == "nullCount"} == {"AMOUNT"}


def test_under_an_identifier_case_without_a_name_profile_spellings_are_one_entity_and_check() -> (
    None
):
    """``identifierCase`` without a ``nameProfile``: the names are read as they are (rule 4), and
    each spelling was an entity of its own while the check's code, re-cased, was one: the one
    check moved to whichever spelling ran last (a probe of quality producers). Re-cased as the
    code is, the spellings are one entity."""
    snowflake = "snowflake://org-acct"
    job = builders.definition(policy("snowflake://*", identifierCase="UPPER"))
    spellings = [
        "analytics.public.orders",
        "ANALYTICS.PUBLIC.ORDERS",
        '"ANALYTICS"."PUBLIC".orders',
    ]
    events = [
        event
        for index, name in enumerate(spellings)
        for event in run_cycle(
            "dq.orders",
            run_id=f"r{index}",
            start_time=at(index * 10),
            end_time=at(index * 10 + 1),
            inputs=[
                dataset(
                    name,
                    snowflake,
                    input_facets=assertions_facet({"assertion": "not_null", "success": True}),
                )
            ],
        )
    ]
    plan = build(events, job)
    tables = {e.key for e in plan.entities if e.key.system != "OpenLineage"}
    assert [(key.schema_, key.name) for key in tables] == [(None, "ANALYTICS.PUBLIC.ORDERS")]
    assert [c.entity for c in quality(plan).checks] == list(tables)
    # a quoted segment holding a dot is no two segments (a review)
    dotted = builders.definition(policy("snowflake://*", identifierCase="UPPER"))
    two = [
        dataset(name, snowflake, facets=builders.schema_facet("ID"))
        for name in ('db."My.Table"', 'db."My"."Table"')
    ]
    names = {e.key.name for e in build(run_cycle("x", inputs=two), dotted).entities}
    assert {'DB."My.Table"', "DB.My.Table"} <= names


def test_a_metric_of_a_column_sent_in_another_case_than_its_field_is_on_that_field() -> None:
    """Seed 003: a profiling record names a field of the entity. Great Expectations names a
    column as the suite was written (``Customer_ID``) where the schema says ``customer_id``: with
    no ``identifierCase`` the record named a field the entity lacks (a probe of quality from real
    producers). The one field spelt so without case is its field; two such fields leave it as
    sent. A check's code keeps the column as sent: a code is the check's identity, and a schema
    known later would change it (a review)."""
    read = dataset(
        "analytics.sales.orders",
        facets=builders.schema_facet("customer_id", "Amount", "amount"),
        input_facets={
            **assertions_facet(
                {"assertion": "not_null", "column": "Customer_ID", "success": True},
                {"assertion": "positive", "column": "AMOUNT", "success": True},
                producer=None,
            ),
            **builders.metrics_facet(columns={"CUSTOMER_ID": {"nullCount": 0}}),
        },
    )
    plan = build(run(inputs=[read]), definition())
    where = f"{PG}/analytics.sales.orders"
    assert [c.code for c in quality(plan).checks] == [
        f"ol:{where}:not_null:Customer_ID",
        f"ol:{where}:positive:AMOUNT",
    ]
    assert {r.field for r in quality(plan).records if r.metric == "nullCount"} == {"customer_id"}


def test_one_check_per_dataset_a_dataset_named_after_a_secret_word_too() -> None:
    """Seed 003: "One per dataset, per assertion name ... and per column". The code named its
    dataset redacted as free text: ``raw/token=eth/transfers`` and ``raw/token=btc/transfers``
    were both ``ol:s3://lake/raw/token=***``, one check with the results of two tables (a probe
    of names real warehouses allow). The dataset is named as its entity is; a secret parameter
    of the name, and SQL in the assertion, are still hidden."""
    lake = builders.definition(policy("s3://*"), policy("postgres://*", nameTemplate="{host}"))
    tested = [
        dataset(
            name, namespace, input_facets=assertions_facet({"assertion": check, "success": True})
        )
        for name, namespace, check in (
            ("raw/token=eth/transfers", "s3://lake", "not_empty"),
            ("raw/token=btc/transfers", "s3://lake", "not_empty"),
            ("analytics.sales.orders?sig=Hunter2x9", PG, "pwd = 'Hunter2x9'"),
        )
    ]
    plan = build(run(inputs=tested), lake)
    assert [c.code for c in quality(plan).checks] == [
        f"ol:{PG}/analytics.sales.orders?sig=***:pwd = '***'",
        "ol:s3://lake/raw/token=btc/transfers:not_empty",
        "ol:s3://lake/raw/token=eth/transfers:not_empty",
    ]
    assert plan.report.gap_count(GapCode.QUALITY_CODE_CONFLICT) == 0


@pytest.mark.parametrize("where", ["output_facets", "facets"])
def test_assertions_on_an_output_make_no_check_and_are_reported_not_lost(where: str) -> None:
    """Seed 003 reads the dataQualityAssertions facet "of an input dataset" (an input facet in
    the spec): sent on an output it makes no check, and the run says so (MALFORMED_FACET: "It is
    ignored; the event is still read")."""
    facet = assertions_facet({"assertion": "not_null", "column": "id", "success": False})
    written = dataset("analytics.sales.totals", **{where: facet})
    plan = build(run(inputs=[dataset("analytics.sales.orders")], outputs=[written]), definition())
    assert quality(plan).checks == []
    (gap,) = plan.report.gaps[GapCode.MALFORMED_FACET].examples
    assert "dataQualityAssertions on the output postgres://db:5432/analytics.sales.totals" in gap


@pytest.mark.parametrize("where", ["output_facets", "facets"])
def test_assertions_on_the_output_only_of_a_dataset_read_and_written_are_reported(
    where: str,
) -> None:
    """An UPDATE reads and writes one table; its assertions sent on the output entry only were
    neither read (an output's) nor reported (the output was taken for read with them): lost
    without a word, against seed 003's "It is ignored; the event is still read" and its gap."""
    facet = assertions_facet({"assertion": "not_null", "column": "id", "success": False})
    read = dataset("analytics.sales.orders")
    written = dataset("analytics.sales.orders", **{where: facet})
    plan = build(run(inputs=[read], outputs=[written]), definition())
    assert quality(plan).checks == []
    (gap,) = plan.report.gaps[GapCode.MALFORMED_FACET].examples
    assert "dataQualityAssertions on the output postgres://db:5432/analytics.sales.orders" in gap


def test_assertions_on_a_dataset_read_and_written_are_read_once_without_a_gap() -> None:
    facet = assertions_facet({"assertion": "not_null", "column": "id", "success": True})
    both = dataset("analytics.sales.orders", input_facets=facet)
    again = dataset("analytics.sales.orders", output_facets=facet)
    plan = build(run(inputs=[both], outputs=[again]), definition())
    assert [c.code for c in quality(plan).checks] == [
        "ol:postgres://db:5432/analytics.sales.orders:not_null:id"
    ]
    assert GapCode.MALFORMED_FACET not in plan.report.gaps


def test_codes_longer_than_255_characters_are_cut_and_end_with_a_hash() -> None:
    events = run(inputs=[assertions({"assertion": "x" * 300, "success": True})])
    (check,) = quality(build(events, definition())).checks
    assert len(check.code) == 255 and check.code[-13] == "~"


@pytest.mark.parametrize("severity", ["warn", "WARN", "info"])
def test_with_severity_warn_the_failure_is_a_warning(severity: str) -> None:
    """Seed 003: "With severity: warn the failure is a warning"; common.sql's ``info`` is
    "informational, never causes task failure" (a branch's decision): a warning, not RED."""
    events = run(
        inputs=[assertions({"assertion": "freshness", "success": False, "severity": severity})]
    )
    q = quality(build(events, definition()))
    assert q.checks[0].warn_only and q.results[0].failures == 1


def test_the_description_of_the_result_carries_the_run_id_expected_actual_and_content() -> None:
    item = {
        "assertion": "row_count",
        "success": False,
        "expected": "> 0",
        "actual": "0",
        "content": "SELECT count(*)",
    }
    (result,) = quality(build(run(inputs=[assertions(item)], run_id="r-42"), definition())).results
    assert (
        result.notes == "OpenLineage run r-42. Expected: > 0. Actual: 0. Content: SELECT count(*)."
    )


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({}, "its namespace maps to no System (see UNMAPPED_NAMESPACE)"),
        ({"ignoredNamespaces": ["mysql://*"]}, "its namespace is ignored (ignoredNamespaces)"),
    ],
)
def test_an_assertion_on_a_dataset_that_is_not_catalogued_makes_no_check(
    options: dict[str, Any], why: str
) -> None:
    """Seed 003: "An assertion on a dataset that is not catalogued makes no check, and the run
    reports TARGET_NOT_CATALOGUED". Its hint (crawl it, or allow entityCreation) does not help
    a dataset of no System: the example says why (a probe of the messages an admin sees)."""
    events = run(
        inputs=[
            {
                "namespace": "mysql://x:3306",
                "name": "a.b",
                "inputFacets": {
                    "dataQualityAssertions": {"assertions": [{"assertion": "a", "success": True}]}
                },
            }
        ]
    )
    plan = build(events, definition(**options))
    assert quality(plan).checks == []
    (example,) = plan.report.gaps[GapCode.TARGET_NOT_CATALOGUED].examples
    assert example == f"assertions on mysql://x:3306/a.b: {why}"


@pytest.mark.parametrize(
    ("state", "results"), [("COMPLETE", 1), ("FAIL", 1), ("ABORT", 0), ("RUNNING", 0)]
)
def test_failed_runs_publish_assertion_results_and_aborted_runs_nothing(
    state: str, results: int
) -> None:
    events = run(state=state, inputs=[assertions({"assertion": "a", "success": False})])
    assert len(quality(build(events, definition())).results) == results


def test_a_test_also_sent_as_an_assertion_on_its_dataset_is_one_check_the_dataset_s() -> None:
    """dbt-ol sends a singular test both as an assertion on the dataset it tests and in the
    run's ``test`` facet (its structured logs; a probe of quality from real producers): one
    test was two checks, each with a result of the same run. The dataset's check stands."""
    tests = {
        "test": {
            "tests": [
                {"name": "test.shop.assert_no_future_dates", "status": "pass"},
                {"name": "test.shop.other_test", "status": "fail"},
            ]
        }
    }
    events = run(
        inputs=[assertions({"assertion": "assert_no_future_dates", "success": True})],
        run_facets=tests,
        job="test.shop.assert_no_future_dates",
    )
    plan = build(events, definition())
    codes = [c.code for c in quality(plan).checks]
    assert sorted(codes) == [
        "ol:ol:airflow|test.shop.assert_no_future_dates:test:test.shop.other_test",
        f"ol:{PG}/analytics.sales.orders:assert_no_future_dates",
    ]
    assert len(quality(plan).results) == 2
    assert plan.report.counters["testsCheckedOnDatasets"] == 1


@pytest.mark.parametrize(
    "test_name", ["test.shop.assert_no_future_dates", "assert_no_future_dates"]
)
def test_a_test_that_errored_sent_as_an_assertion_too_fails_its_dataset_check_not_warns(
    test_name: str,
) -> None:
    """dbt-ol sends a test both as an assertion on its dataset, with the test's severity, and in
    the run's ``test`` facet, whose status alone says it errored: a test that errored is a
    failure whatever its severity (docs: ``error`` is "a failure (the test did not run to the
    end)"; dbt fails the invocation on it), so the dataset's check is RED, not a warning."""
    tests = {"test": {"tests": [{"name": test_name, "status": "error", "severity": "warn"}]}}
    asserted = {"assertion": "assert_no_future_dates", "success": False, "severity": "warn"}
    plan = build(
        run(
            inputs=[assertions(asserted)], run_facets=tests, job="test.shop.assert_no_future_dates"
        ),
        definition(),
    )
    (check,) = quality(plan).checks
    (result,) = quality(plan).results
    assert check.code == f"ol:{PG}/analytics.sales.orders:assert_no_future_dates"
    assert (result.failures, result.warn_only, check.warn_only) == (1, False, False)


@pytest.mark.parametrize("order", ["test job first", "model's test job first"])
def test_a_singular_test_sent_as_a_job_of_its_own_is_its_dataset_s_check_alone(order: str) -> None:
    """dbt-ol reading ``run_results.json`` (its default) sends a singular test twice: as an
    assertion of the model's ``<model>.test`` job on the model's dataset, and as a job of its
    own, ``test.<project>.<name>``, whose ``test`` facet names it and whose inputs are the
    models it tests (a probe of quality from real producers): one failing test was two checks
    with two RED results a run."""
    name = "assert_total_payment_amount_is_positive"
    model_test = run(
        inputs=[assertions({"assertion": name, "name": name, "success": False})],
        job="analytics.sales.orders.test",
    )
    singular = run(
        inputs=[dataset("analytics.sales.orders")],
        run_facets={"test": {"tests": [{"name": f"test.shop.{name}", "status": "fail"}]}},
        job=f"test.shop.{name}",
        run_id="run-2",
    )
    events = [*singular, *model_test] if order == "test job first" else [*model_test, *singular]
    plan = build(events, definition())
    assert [c.code for c in quality(plan).checks] == [f"ol:{PG}/analytics.sales.orders:{name}"]
    assert len(quality(plan).results) == 1
    assert plan.report.counters["testsCheckedOnDatasets"] == 1


@pytest.mark.parametrize(
    ("asserted", "test_name", "read"),
    [
        # only dbt's ``test.<project>.<name>`` is matched with another job's assertion: a test
        # ``row_count`` of any job that reads ``orders`` was hidden, its failure with it, by
        # another job's passing assertion ``row_count`` on ``orders`` (a review)
        pytest.param("row_count", "row_count", "analytics.sales.orders", id="another producer"),
        # ... and only where the assertion is on a dataset the test's job reads: a test of the
        # same name on another model is not hidden by it
        pytest.param("positive", "test.shop.positive", "analytics.sales.refunds", id="another"),
    ],
)
def test_a_test_another_jobs_assertion_does_not_check_keeps_its_job_check(
    asserted: str, test_name: str, read: str
) -> None:
    """A test is its dataset's check alone where another job's assertion is that test: not
    for a test of another producer's shape, nor for one on another dataset."""
    model_test = run(
        inputs=[assertions({"assertion": asserted, "success": True})],
        job="analytics.sales.orders.test",
    )
    tested = run(
        inputs=[dataset(read)],
        run_facets={"test": {"tests": [{"name": test_name, "status": "fail"}]}},
        job="etl.tests",
        run_id="run-2",
    )
    plan = build([*model_test, *tested], definition())
    assert len([c for c in quality(plan).checks if c.kind == "test"]) == 1
    assert any(r.failures for r in quality(plan).results)
    assert plan.report.counters.get("testsCheckedOnDatasets", 0) == 0


@pytest.mark.parametrize(
    ("test_name", "asserted_on"),
    [
        pytest.param("customers.not_null", "analytics.sales.orders", id="another test, same end"),
        pytest.param("test.shop.not_null", "kafka-topic", id="its dataset has no entity"),
    ],
)
def test_a_test_its_run_does_not_check_on_a_dataset_keeps_its_job_check(
    test_name: str, asserted_on: str
) -> None:
    """Only a test the run's assertion made a dataset check of is that check: an unrelated
    assertion ending like it, or one on a dataset with no entity, hid the test and lost its
    failure (a review)."""
    tests = {"test": {"tests": [{"name": test_name, "status": "fail"}]}}
    asserted = assertions({"assertion": "not_null", "success": True}, name=asserted_on)
    if asserted_on == "kafka-topic":
        asserted["namespace"] = "kafka://broker:9092"
    plan = build(run(inputs=[asserted], run_facets=tests), definition())
    job_checks = [c for c in quality(plan).checks if c.kind == "test"]
    assert len(job_checks) == 1
    assert plan.report.counters.get("testsCheckedOnDatasets", 0) == 0


def test_a_test_is_a_check_on_the_job_entity_per_test_name_skipped_tests_make_nothing() -> None:
    tests = {
        "test": {
            "tests": [
                {"name": "orders_not_empty", "status": "pass"},
                {"name": "totals_match", "status": "fail", "expected": "100", "actual": "99"},
                {"name": "later", "status": "skip"},
            ]
        }
    }
    q = quality(build(run(run_facets=tests), definition()))
    assert [c.code for c in q.checks] == [
        "ol:ol:airflow|dq.check_orders:test:orders_not_empty",
        "ol:ol:airflow|dq.check_orders:test:totals_match",
    ]
    assert all(
        c.entity.name == "dq.check_orders" and c.entity.system == "OpenLineage" for c in q.checks
    )
    assert [r.failures for r in q.results] == [0, 1]


@pytest.mark.parametrize(
    ("status", "severity", "failures", "warn_only"),
    [
        ("pass", None, 0, False),
        ("PASS", None, 0, False),
        ("fail", None, 1, False),
        ("fail", "warn", 1, True),
        # dbt's run statuses, passed through by dbt-based producers
        ("warn", None, 1, True),  # issues found under severity warn: a warning, not a failure
        ("error", None, 1, False),  # the test did not run to the end: not a pass
        # ... and a failure whatever its severity: dbt fails the invocation on an error
        ("error", "warn", 1, False),
        ("ERROR", "info", 1, False),
    ],
)
def test_a_test_that_passed_or_failed_gives_pass_or_fail(
    status: str, severity: str | None, failures: int, warn_only: bool
) -> None:
    """Seed 003: "Test that passed or failed — Pass or fail"; "With severity: warn the failure
    is a warning, not a failure". A test that errored did not warn: it failed (RED)."""
    test = {"name": "t", "status": status, **({"severity": severity} if severity else {})}
    plan = build(run(run_facets={"test": {"tests": [test]}}), definition())
    (check,) = quality(plan).checks
    (result,) = quality(plan).results
    assert (result.failures, check.warn_only, result.warn_only) == (failures, warn_only, warn_only)


@pytest.mark.parametrize("status", ["skip", "skipped", "SKIP"])
def test_a_skipped_test_makes_neither_a_check_nor_a_result(status: str) -> None:
    tests = {"test": {"tests": [{"name": "t", "status": status}]}}
    plan = build(run(run_facets=tests), definition())
    assert (quality(plan).checks, quality(plan).results) == ([], [])
    assert plan.report.gap_count(GapCode.MALFORMED_FACET) == 0


def test_a_test_of_an_unknown_status_makes_no_result_and_is_reported() -> None:
    """Bad input gets a reported gap: a status that is neither pass, fail nor skip is not
    silently taken for a skip."""
    tests = {"test": {"tests": [{"name": "t", "status": "maybe"}, {"name": "u", "status": "pass"}]}}
    plan = build(run(run_facets=tests), definition())
    assert [r.check for r in quality(plan).results] == ["ol:ol:airflow|dq.check_orders:test:u"]
    assert plan.report.gap_count(GapCode.MALFORMED_FACET) == 1


def test_a_job_without_an_entity_makes_no_test_check() -> None:
    tests = {"test": {"tests": [{"name": "t", "status": "pass"}]}}
    assert quality(build(run(run_facets=tests), definition(processLayer=False))).checks == []


def test_results_come_only_from_runs_not_from_job_or_dataset_events() -> None:
    job_event = {
        "eventTime": "2026-11-29T10:00:00Z",
        "producer": "p",
        "job": {"namespace": "airflow", "name": "dq"},
        "inputs": [assertions({"assertion": "a", "success": False})],
    }
    assert quality(build([job_event], definition())).results == []


def test_all_checks_are_in_one_suite_coded_after_the_definition() -> None:
    assert quality(build([], definition())).suite_code == f"openlineage:{UUID}"
    assert quality(build([], definition(quality={"suiteCode": "dq-prod"}))).suite_code == "dq-prod"


def test_quality_enabled_false_turns_off_everything_metrics_enabled_false_only_the_records() -> (
    None
):
    metrics = {
        "namespace": PG,
        "name": "a.s.t",
        "inputFacets": {"dataQualityMetrics": {"rowCount": 3, "columnMetrics": {}}},
    }
    events = run(inputs=[metrics, assertions({"assertion": "a", "success": True})])
    assert build(events, definition(quality={"enabled": False})).quality is None
    no_records = quality(build(events, definition(quality={"metricsEnabled": False})))
    assert no_records.records == [] and len(no_records.checks) == 1


def test_metrics_and_statistics_become_profiling_records() -> None:
    metrics = {
        "rowCount": 10,
        "bytes": 2048,
        "fileCount": 5,
        "lastUpdated": "2026-11-28T00:00:00Z",
        "columnMetrics": {
            "amount": {
                "nullCount": 0,
                "distinctCount": 3,
                "sum": 6600,
                "count": 10,
                "min": 100,
                "max": 1500,
                "quantiles": {"0.5": 550},
            }
        },
    }
    inputs = [
        {
            "namespace": PG,
            "name": "a.s.src",
            "inputFacets": {
                "dataQualityMetrics": metrics,
                "inputStatistics": {
                    "rowCount": 10,
                    "size": 2048,
                    "fileCount": 5,
                    "scannedManifests": 2,
                },
            },
        }
    ]
    outputs = [
        {
            "namespace": PG,
            "name": "a.s.dst",
            "outputFacets": {
                # recognised by its schema URL under another key (the Redshift Data provider's)
                "stats": {
                    "_producer": "p",
                    "_schemaURL": "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet",
                    "rowCount": 7,
                    "size": 100,
                    "addedDataFiles": 1,
                },
            },
        }
    ]
    records = quality(build(run(inputs=inputs, outputs=outputs), definition())).records
    found = {(r.entity.name, r.metric, r.field, r.value) for r in records}
    assert {
        ("src", "rowCount", None, 10),
        ("src", "bytes", None, 2048),
        ("src", "fileCount", None, 5),
        ("src", "nullCount", "amount", 0),
        ("src", "distinctCount", "amount", 3),
        ("src", "sum", "amount", 6600),
        ("src", "count", "amount", 10),
        ("src", "min", "amount", 100),
        ("src", "max", "amount", 1500),
        ("src", "quantile_0.5", "amount", 550),
        ("src", "rowsRead", None, 10),
        ("src", "bytesRead", None, 2048),
        ("src", "filesRead", None, 5),
        ("src", "inputExtra_scannedManifests", None, 2),
        ("dst", "rowsWritten", None, 7),
        ("dst", "bytesWritten", None, 100),
        ("dst", "outputExtra_addedDataFiles", None, 1),
    } <= found
    assert ("src", "lastUpdated") in {(r.entity.name, r.metric) for r in records}


def test_the_timestamp_of_a_record_is_the_capture_date_or_the_event_time_of_the_run() -> None:
    inputs = [
        {
            "namespace": PG,
            "name": "a.s.src",
            "inputFacets": {
                "inputStatistics": {"rowCount": 1, "captureDate": "2026-11-29T09:00:00Z"},
                "dataQualityMetrics": {"rowCount": 1, "columnMetrics": {}},
            },
        }
    ]
    records = quality(build(run(inputs=inputs), definition())).records
    stamps = {r.metric: r.timestamp.isoformat() for r in records}
    assert stamps["rowsRead"] == "2026-11-29T09:00:00+00:00"
    assert stamps["rowCount"] == "2026-11-29T10:05:00+00:00"


_REWRITTEN_RUNS = [
    pytest.param(("START", "COMPLETE"), at(0), "2026-11-29T10:00:00+00:00", id="started"),
    # Great Expectations' action and custom emitters send COMPLETE alone: the millisecond before
    pytest.param(("COMPLETE",), at(0), "2026-11-29T10:04:59.999000+00:00", id="complete only"),
    # a run stamped in whole seconds that started and ended in one
    pytest.param(
        ("START", "COMPLETE"),
        at(0, minute=5),
        "2026-11-29T10:04:59.999000+00:00",
        id="started as it ended",
    ),
]


@pytest.mark.parametrize(("sent", "start", "read_at"), _REWRITTEN_RUNS)
def test_a_table_read_and_written_in_one_run_keeps_both_measures(
    sent: tuple[str, ...], start: str, read_at: str
) -> None:
    """Seed 003: metrics "(input or dataset) → Profiling metric records". A run that reads and
    writes one table (a dedupe in place) measured it as read and as written: both at the run's
    end, one record per metric, the output's replaced the input's. As read, it is stamped at the
    run's start, or, without a START before the end, the millisecond before the end (the same
    on every snapshot: nothing is duplicated)."""
    measured = {"rowCount": 100, "columnMetrics": {"id": {"nullCount": 0}}}
    written = {"rowCount": 150, "columnMetrics": {"id": {"nullCount": 5}}}
    inputs = [{"namespace": PG, "name": "a.s.t", "inputFacets": {"dataQualityMetrics": measured}}]
    outputs = [{"namespace": PG, "name": "a.s.t", "facets": {"dataQualityMetrics": written}}]
    times = {"START": start, "COMPLETE": at(0, minute=5)}
    events = [
        builders.run_event(
            "dq.dedupe",
            event_type=kind,
            time=times[kind],
            run_id="run-1",
            inputs=inputs,
            outputs=outputs,
            producer="p",
        )
        for kind in sent
    ]
    plans = [build(events, definition()), build(events + run(run_id="run-2"), definition())]
    for plan in plans:  # another snapshot, with another run: the same records
        found = {
            (r.metric, r.field, r.value, r.timestamp.isoformat()) for r in quality(plan).records
        }
        assert found == {
            ("rowCount", None, 100, read_at),
            ("nullCount", "id", 0, read_at),
            ("rowCount", None, 150, "2026-11-29T10:05:00+00:00"),
            ("nullCount", "id", 5, "2026-11-29T10:05:00+00:00"),
        }


def test_a_fractional_count_is_rounded_and_the_facets_other_metrics_kept() -> None:
    """A Deequ or pandas estimate (``distinctCount: 2.7``) made the whole facet malformed, and
    every other metric of it was lost; a count is kept as the nearest integer."""
    metrics = {
        "rowCount": 12.5,
        "columnMetrics": {"amount": {"nullCount": 1, "distinctCount": 2.7}},
    }
    inputs = [{"namespace": PG, "name": "a.s.src", "inputFacets": {"dataQualityMetrics": metrics}}]
    plan = build(run(inputs=inputs), definition())
    found = {(r.metric, r.field, r.value) for r in quality(plan).records}
    assert found == {
        ("rowCount", None, 12),
        ("nullCount", "amount", 1),
        ("distinctCount", "amount", 3),
    }
    assert GapCode.MALFORMED_FACET not in plan.report.gaps


def test_metrics_sent_among_an_outputs_own_facets_are_read() -> None:
    """``dataQualityMetrics`` among ``outputFacets`` (the spec defines it for inputs and
    datasets) made no record and no gap; it is read as among the output's dataset facets."""
    metrics = {"rowCount": 7, "columnMetrics": {}}
    outputs = [
        {"namespace": PG, "name": "a.s.dst", "outputFacets": {"dataQualityMetrics": metrics}}
    ]
    records = quality(build(run(outputs=outputs), definition())).records
    assert {(r.entity.name, r.metric, r.value) for r in records} == {("dst", "rowCount", 7)}


def test_the_dbt_tests_map_to_checks_and_results() -> None:
    q = quality(
        build(
            dbt_events(),
            definition(systemPolicies=[{"pattern": "postgres://*", "creation": "IF_MISSING"}]),
        )
    )
    outcomes = {":".join(r.check.rsplit(":", 2)[-2:]): r.failures for r in q.results}
    assert outcomes == {
        "accepted_values:first_name": 1,
        "not_null:customer_id": 0,
        "unique:customer_id": 0,
        "relationships:customer_id": 0,
    }


def test_metric_records_are_numbers_nan_and_infinity_make_no_record() -> None:
    inputs = [
        {
            "namespace": PG,
            "name": "a.s.src",
            "inputFacets": {
                "dataQualityMetrics": {
                    "rowCount": 3,
                    "columnMetrics": {"x": {"sum": float("nan"), "max": float("inf"), "min": 1}},
                },
                "inputStatistics": {"rowCount": 3, "scanNaN": float("nan")},
            },
        }
    ]
    plan = build(run(inputs=inputs), definition())
    assert {(r.metric, r.field, r.value) for r in quality(plan).records} == {
        ("rowCount", None, 3),
        ("min", "x", 1),
        ("rowsRead", None, 3),
    }
    gap = plan.report.gaps[GapCode.NON_FINITE_METRIC]  # left out, but not in silence
    assert gap.count == 2
    assert [example.split(": ", 1)[1] for example in gap.examples] == [
        "dataQualityMetrics of postgres://db:5432/a.s.src: columnMetrics.x.sum, "
        "columnMetrics.x.max",
        "inputStatistics of postgres://db:5432/a.s.src: scanNaN",
    ]


_NON_FINITE_COUNTS = [
    ("dataQualityMetrics", {"rowCount": float("nan")}, ("rowCount", None)),
    ("dataQualityMetrics", {"bytes": float("inf")}, ("bytes", None)),
    ("dataQualityMetrics", {"fileCount": float("-inf")}, ("fileCount", None)),
    (
        "dataQualityMetrics",
        {"columnMetrics": {"x": {"nullCount": float("nan")}}},
        ("nullCount", "x"),
    ),
    (
        "dataQualityMetrics",
        {"columnMetrics": {"x": {"distinctCount": float("inf")}}},
        ("distinctCount", "x"),
    ),
    ("inputStatistics", {"rowCount": float("nan")}, ("rowsRead", None)),
    ("inputStatistics", {"size": float("inf")}, ("bytesRead", None)),
    ("inputStatistics", {"fileCount": float("nan")}, ("filesRead", None)),
    # sent as text, as the facet's other counts are read when they write a number
    ("dataQualityMetrics", {"columnMetrics": {"x": {"nullCount": "NaN"}}}, ("nullCount", "x")),
    ("dataQualityMetrics", {"rowCount": "Infinity"}, ("rowCount", None)),
    ("inputStatistics", {"size": "-inf"}, ("bytesRead", None)),
]


@pytest.mark.parametrize(("key", "counts", "left_out"), _NON_FINITE_COUNTS)
def test_metric_records_are_numbers_a_nan_or_infinite_count_makes_no_record_and_no_malformed_facet(
    key: str, counts: dict[str, Any], left_out: tuple[str, str | None]
) -> None:
    """Seed 003: the records carry numbers. A count (rowCount, bytes, nullCount, size, …) sent as
    NaN or Infinity, as Deequ and pandas measure in floats, makes no record, like a NaN sum; it
    does not make the whole facet malformed and take the run's other metrics with it."""
    every = {
        "dataQualityMetrics": {
            "rowCount": 3,
            "bytes": 30,
            "fileCount": 1,
            "columnMetrics": {"x": {"nullCount": 0, "distinctCount": 3, "min": 1}},
        },
        "inputStatistics": {"rowCount": 3, "size": 30, "fileCount": 1},
    }
    facet = every[key]
    for name, value in counts.items():
        if name == "columnMetrics":
            facet["columnMetrics"]["x"].update(value["x"])
        else:
            facet[name] = value
    inputs = [{"namespace": PG, "name": "a.s.src", "inputFacets": every}]
    plan = build(run(inputs=inputs), definition())
    assert GapCode.MALFORMED_FACET not in plan.report.gaps
    (example,) = plan.report.gaps[GapCode.NON_FINITE_METRIC].examples
    assert example.endswith(f"{key} of {PG}/a.s.src: {_path(counts)}")
    expected = {
        ("rowCount", None),
        ("bytes", None),
        ("fileCount", None),
        ("nullCount", "x"),
        ("distinctCount", "x"),
        ("min", "x"),
        ("rowsRead", None),
        ("bytesRead", None),
        ("filesRead", None),
    }
    assert {(r.metric, r.field) for r in quality(plan).records} == expected - {left_out}


def test_a_nan_or_infinite_rows_written_makes_no_record_and_keeps_the_others() -> None:
    """The same for outputStatistics: a NaN rowCount leaves out rowsWritten only."""
    outputs = [
        {
            "namespace": PG,
            "name": "a.s.dst",
            "outputFacets": {
                "outputStatistics": {"rowCount": float("nan"), "size": 30, "fileCount": 2}
            },
        }
    ]
    plan = build(run(outputs=outputs), definition())
    assert GapCode.MALFORMED_FACET not in plan.report.gaps
    assert {(r.metric, r.value) for r in quality(plan).records} == {
        ("bytesWritten", 30),
        ("filesWritten", 2),
    }
    (example,) = plan.report.gaps[GapCode.NON_FINITE_METRIC].examples
    assert example.endswith(f"outputStatistics of {PG}/a.s.dst: rowCount")


def _measured(side: str, sent: dict[str, Any]) -> list[dict[str, Any]]:
    """A run that measured what it read (``dataQualityMetrics``, ``inputStatistics``) and what it
    wrote (``outputStatistics``), one metric of ``side``'s facet replaced by ``sent``."""
    every: dict[str, dict[str, Any]] = {
        "dataQualityMetrics": {
            "rowCount": 3,
            "bytes": 30,
            "fileCount": 1,
            "lastUpdated": "2026-11-28T00:00:00Z",
            "columnMetrics": {"x": {"nullCount": 0, "distinctCount": 3, "count": 3, "min": -1}},
        },
        "inputStatistics": {"rowCount": 3, "size": 30, "fileCount": 1},
        "outputStatistics": {"rowCount": 2, "size": 20, "fileCount": 1},
    }
    for name, value in sent.items():
        if name == "columnMetrics":
            every[side]["columnMetrics"]["x"].update(value["x"])
        else:
            every[side][name] = value
    written = {"outputStatistics": every.pop("outputStatistics")}
    return run(
        inputs=[{"namespace": PG, "name": "a.s.src", "inputFacets": every}],
        outputs=[{"namespace": PG, "name": "a.s.dst", "outputFacets": written}],
    )


_EVERY_MEASURE = {
    ("src", "rowCount", None),
    ("src", "bytes", None),
    ("src", "fileCount", None),
    ("src", "lastUpdated", None),
    ("src", "nullCount", "x"),
    ("src", "distinctCount", "x"),
    ("src", "count", "x"),
    ("src", "min", "x"),
    ("src", "rowsRead", None),
    ("src", "bytesRead", None),
    ("src", "filesRead", None),
    ("dst", "rowsWritten", None),
    ("dst", "bytesWritten", None),
    ("dst", "filesWritten", None),
}

_NO_MEASURES = [
    # below 0: dbt adapters send rows_affected -1 when they do not know it, Hive and Spark -1
    ("dataQualityMetrics", {"rowCount": -1}, ("src", "rowCount", None)),
    ("dataQualityMetrics", {"bytes": -1}, ("src", "bytes", None)),
    ("dataQualityMetrics", {"fileCount": -2.0}, ("src", "fileCount", None)),
    ("dataQualityMetrics", {"columnMetrics": {"x": {"nullCount": -3}}}, ("src", "nullCount", "x")),
    (
        "dataQualityMetrics",
        {"columnMetrics": {"x": {"distinctCount": "-1"}}},
        ("src", "distinctCount", "x"),
    ),
    ("dataQualityMetrics", {"columnMetrics": {"x": {"count": -1}}}, ("src", "count", "x")),
    ("inputStatistics", {"rowCount": -1}, ("src", "rowsRead", None)),
    ("inputStatistics", {"size": -1}, ("src", "bytesRead", None)),
    ("outputStatistics", {"rowCount": -1}, ("dst", "rowsWritten", None)),
    ("outputStatistics", {"size": -1}, ("dst", "bytesWritten", None)),
    ("outputStatistics", {"fileCount": "-1"}, ("dst", "filesWritten", None)),
    # a count that is no number, a lastUpdated that is no date-time
    ("dataQualityMetrics", {"rowCount": "many"}, ("src", "rowCount", None)),
    (
        "dataQualityMetrics",
        {"columnMetrics": {"x": {"nullCount": True}}},
        ("src", "nullCount", "x"),
    ),
    ("inputStatistics", {"fileCount": [2]}, ("src", "filesRead", None)),
    ("dataQualityMetrics", {"lastUpdated": 1764403200}, ("src", "lastUpdated", None)),
    ("dataQualityMetrics", {"lastUpdated": "yesterday"}, ("src", "lastUpdated", None)),
]


@pytest.mark.parametrize(("key", "sent", "left_out"), _NO_MEASURES)
def test_a_count_below_zero_or_no_number_makes_no_record_is_reported_and_keeps_the_others(
    key: str, sent: dict[str, Any], left_out: tuple[str, str, str | None]
) -> None:
    """Seed 003: the records carry what was measured. A count below 0 is no measure (dbt's
    ``rows_affected: -1``, a Hive statistic -1 say "unknown"): it made a record of -1. A count
    that is no number, a ``lastUpdated`` that is no date-time (an epoch number: never read as
    seconds since 1970) made the whole facet malformed and lost its other metrics. Either makes
    no record, the facet's other metrics make theirs, and ``INVALID_METRIC`` names it."""
    plan = build(_measured(key, sent), definition())
    assert GapCode.MALFORMED_FACET not in plan.report.gaps
    assert GapCode.NON_FINITE_METRIC not in plan.report.gaps
    found = {(r.entity.name, r.metric, r.field) for r in quality(plan).records}
    assert found == _EVERY_MEASURE - {left_out}
    (example,) = plan.report.gaps[GapCode.INVALID_METRIC].examples
    where = "a.s.dst" if key == "outputStatistics" else "a.s.src"
    assert example == f"job airflow/dq.check_orders: {key} of {PG}/{where}: {_path(sent)}"


_COUNTS_AS_TEXT = [
    ("dataQualityMetrics", {"rowCount": "1e3"}, ("src", "rowCount", None), 1000),
    ("dataQualityMetrics", {"bytes": " 2.0E3 "}, ("src", "bytes", None), 2000),
    (
        "dataQualityMetrics",
        {"columnMetrics": {"x": {"nullCount": "2.7"}}},
        ("src", "nullCount", "x"),
        3,
    ),
    ("inputStatistics", {"rowCount": "1.2e1"}, ("src", "rowsRead", None), 12),
    ("outputStatistics", {"size": "4e1"}, ("dst", "bytesWritten", None), 40),
]


@pytest.mark.parametrize(("key", "sent", "metric", "value"), _COUNTS_AS_TEXT)
def test_a_count_sent_as_text_is_read_as_the_number_it_writes(
    key: str, sent: dict[str, Any], metric: tuple[str, str, str | None], value: int
) -> None:
    """A count sent as text that writes a number (``"1e3"``) is that number, a fractional one an
    estimate rounded as when sent as a number (``"2.7"`` is 3): it made the whole facet
    malformed, and every other metric of it was lost."""
    plan = build(_measured(key, sent), definition())
    assert plan.report.gaps == {}
    records = {(r.entity.name, r.metric, r.field): r.value for r in quality(plan).records}
    assert records.keys() == _EVERY_MEASURE
    assert records[metric] == value


def _path(sent: dict[str, Any]) -> str:
    """The path of the one metric in ``sent`` (``columnMetrics.x.nullCount``)."""
    ((key, value),) = sent.items()
    return f"{key}.{_path(value)}" if isinstance(value, dict) else key


def test_with_severity_warn_the_failure_is_a_warning_as_the_newest_run_says() -> None:
    """A severity changed from warn to error makes the check's failures failures again (and the
    other way round): the check follows the newest run, not the oldest one the store holds."""

    def assertion_run(run_id: str, day: int, severity: str) -> list[dict[str, Any]]:
        item = {"assertion": "a", "success": False, "severity": severity}
        return run_cycle(
            "dq.check_orders",
            start_time=at(0, day=f"2026-11-{day}"),
            end_time=at(0, day=f"2026-11-{day}", minute=5),
            run_id=run_id,
            inputs=[assertions(item)],
            producer="p",
        )

    older, newer = assertion_run("r-1", 28, "warn"), assertion_run("r-2", 29, "error")
    for events in (older + newer, newer + older):
        (check,) = quality(build(events, definition())).checks
        assert not check.warn_only
    (check,) = quality(build(newer + assertion_run("r-3", 30, "warn"), definition())).checks
    assert check.warn_only


_NOT_NUMBERS = [
    pytest.param({"min": "2024-01-01"}, ("min", "x"), id="a date min (Great Expectations)"),
    pytest.param({"max": "Zebra"}, ("max", "x"), id="a string max"),
    pytest.param({"sum": {"value": 3}}, ("sum", "x"), id="an object sum"),
    pytest.param({"count": [10]}, ("count", "x"), id="a list count"),
    pytest.param({"max": 10**400}, ("max", "x"), id="an integer past a float's range"),
    pytest.param({"quantiles": {"0.5": "median"}}, ("quantile_0.5", "x"), id="a string quantile"),
    pytest.param({"distinctCount": 10**400}, ("distinctCount", "x"), id="a huge distinct count"),
]


@pytest.mark.parametrize(("sent", "left_out"), _NOT_NUMBERS)
def test_a_value_that_is_not_a_finite_number_makes_no_record_and_the_facet_is_not_malformed(
    sent: dict[str, Any], left_out: tuple[str, str | None]
) -> None:
    """Seed 003: dataQualityMetrics gives records of the row count, bytes, … and per column null
    count, distinct count, sum, count, min, max and quantiles. Great Expectations reports the
    observed min and max of a date or text column as strings: that metric makes no record, and
    the facet's other metrics (the row count, the other columns) still make theirs — as a NaN
    does (docs/mapping-reference.md). The whole facet was dropped as malformed."""
    column = {
        "nullCount": 0,
        "distinctCount": 3,
        "sum": 6,
        "count": 3,
        "min": 1,
        "max": 3,
        "quantiles": {"0.5": 2},
    }
    metrics = {"rowCount": 3, "columnMetrics": {"x": column | sent, "y": {"nullCount": 1}}}
    inputs = [{"namespace": PG, "name": "a.s.src", "inputFacets": {"dataQualityMetrics": metrics}}]
    plan = build(run(inputs=inputs), definition())
    assert GapCode.MALFORMED_FACET not in plan.report.gaps
    expected = {
        ("rowCount", None),
        ("nullCount", "x"),
        ("distinctCount", "x"),
        ("sum", "x"),
        ("count", "x"),
        ("min", "x"),
        ("max", "x"),
        ("quantile_0.5", "x"),
        ("nullCount", "y"),
    }
    assert {(r.metric, r.field) for r in quality(plan).records} == expected - {left_out}


def test_an_extra_metric_past_a_floats_range_makes_no_record_and_the_others_still_do() -> None:
    """Seed 003: inputStatistics gives rowsRead, … and the producer's extra metrics as
    inputExtra_<key>. An extra that is an integer past a float's range (a JSON number of 400
    digits) makes no record; it raised OverflowError out of the mapper, which is total."""
    inputs = [
        {
            "namespace": PG,
            "name": "a.s.src",
            "inputFacets": {"inputStatistics": {"rowCount": 3, "scanned": 10**400, "files": 2}},
        }
    ]
    records = quality(build(run(inputs=inputs), definition())).records
    assert {(r.metric, r.value) for r in records} == {("rowsRead", 3), ("inputExtra_files", 2)}


SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.26.0/integration/spark"
_ICEBERG_REPORTS = [
    (
        "input",
        "icebergScanReport",
        "https://openlineage.io/spec/facets/1-0-0/IcebergScanReportInputDatasetFacet.json",
        {
            "snapshotId": 4236662509783741112,
            "filterDescription": "",
            "projectedFieldNames": ["a", "b"],
            "scanMetrics": {
                "totalPlanningDuration": 32,
                "resultDataFiles": 3,
                "skippedDataFiles": 0,
            },
            "metadata": {"engine-version": "3.5.1"},
        },
        {
            ("inputExtra_totalPlanningDuration", 32),
            ("inputExtra_resultDataFiles", 3),
            ("inputExtra_skippedDataFiles", 0),
        },
    ),
    (
        "output",
        "icebergCommitReport",
        # sic: the Spark integration names its commit report's schema an input facet
        "https://openlineage.io/spec/facets/1-0-0/IcebergCommitReportInputDatasetFacet.json",
        {
            "snapshotId": 5412323498173124565,
            "sequenceNumber": 2,
            "operation": "append",
            "commitMetrics": {
                "totalDuration": 120,
                "attempts": 1,
                "addedDataFiles": 2,
                "addedRecords": 7,
            },
            "metadata": {"engine-version": "3.5.1"},
        },
        {
            ("outputExtra_totalDuration", 120),
            ("outputExtra_attempts", 1),
            ("outputExtra_addedDataFiles", 2),
            ("outputExtra_addedRecords", 7),
        },
    ),
]


@pytest.mark.parametrize(("side", "key", "schema_url", "report", "expected"), _ICEBERG_REPORTS)
def test_extra_metrics_of_the_producer_for_example_iceberg_scan_and_commit_reports(
    side: str, key: str, schema_url: str, report: dict[str, Any], expected: set[tuple[str, int]]
) -> None:
    """Seed 003: inputStatistics and outputStatistics give "extra metrics of the producer (for
    example Iceberg scan reports) as inputExtra_<key>" ("Iceberg commit reports" as
    outputExtra_<key>). The Spark integration sends those reports as facets of their own, beside
    the statistics: ``icebergScanReport.scanMetrics`` and ``icebergCommitReport.commitMetrics``."""
    facet = {"_producer": SPARK, "_schemaURL": schema_url, **report}
    item = {"namespace": PG, "name": "a.s.t", f"{side}Facets": {key: facet}}
    plan = build(run(**{f"{side}s": [item]}), definition())
    assert {(r.metric, r.value) for r in quality(plan).records} == expected
    assert key not in plan.report.unknown_facets


_REDSHIFT_STATS = {
    # openlineage-common's RedshiftDataDatasetsProvider: ``custom_facets["stats"]``, which
    # ``Dataset.to_openlineage_dataset`` sends among the dataset facets, not the output facets
    "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.9.0/integration/airflow",
    "_schemaURL": "https://raw.githubusercontent.com/OpenLineage/OpenLineage/main/spec/"
    "OpenLineage.json#/definitions/OutputStatisticsOutputDatasetFacet",
    "rowCount": 7,
    "size": 100,
}


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"facets": {"stats": _REDSHIFT_STATS}}, {("rowsWritten", 7), ("bytesWritten", 100)}),
        ({"outputFacets": {"stats": _REDSHIFT_STATS}}, {("rowsWritten", 7), ("bytesWritten", 100)}),
        (  # the spec's place wins over the dataset facets
            {
                "facets": {"stats": _REDSHIFT_STATS},
                "outputFacets": {"outputStatistics": {"rowCount": 3}},
            },
            {("rowsWritten", 3)},
        ),
    ],
    ids=["among the dataset facets", "among the output facets", "both"],
)
def test_output_statistics_under_another_key_are_read_too_the_redshift_data_providers_stats(
    where: dict[str, Any], expected: set[tuple[str, int]]
) -> None:
    """Seed 003: "The facets are recognized by their schema URL, so a producer that publishes
    outputStatistics under another key (the Redshift Data provider uses stats) is read too." The
    Redshift Data provider sends ``stats`` among the dataset facets of its outputs: it was an
    unknown dataset facet there, and its rows and bytes made no record."""
    item = {"namespace": PG, "name": "a.s.dst", **where}
    plan = build(run(outputs=[item]), definition())
    assert {(r.metric, r.value) for r in quality(plan).records} == expected
    assert "stats" not in plan.report.unknown_facets


@pytest.mark.parametrize(
    ("capture_date", "expected"),
    [
        ("2026-11-29T09:00:00Z", "2026-11-29T09:00:00+00:00"),
        # Java's ZonedDateTime.toString(), as a JVM producer writes a time (read so in eventTime)
        ("2026-11-29T09:00:00+01:00[Europe/Paris]", "2026-11-29T09:00:00+01:00"),
        ("2026-11-29T09:00+01:00[Europe/Paris]", "2026-11-29T09:00:00+01:00"),
        ("2026-11-29T09:00:00z", "2026-11-29T09:00:00+00:00"),
        ("2026-11-29T09:00:00", "2026-11-29T09:00:00+00:00"),  # naive: UTC, as event times
        ("not a date", "2026-11-29T10:05:00+00:00"),  # none it has: the run's end
        (1764406800, "2026-11-29T10:05:00+00:00"),  # a number is no date-time (as eventTime)
    ],
)
def test_the_timestamp_of_a_record_is_the_capture_date_however_the_producer_writes_it(
    capture_date: Any, expected: str
) -> None:
    """Seed 003: "The timestamp of a record is the captureDate of the facet when it has one,
    otherwise the event time of the run." A captureDate that an event time would be read from
    (Java's zone suffix, a lowercase z) was not read, and the record took the run's end."""
    stats = {"rowCount": 1, "captureDate": capture_date}
    item = {"namespace": PG, "name": "a.s.src", "inputFacets": {"inputStatistics": stats}}
    (record,) = quality(build(run(inputs=[item]), definition())).records
    assert record.timestamp.isoformat() == expected


def _asserted_by(job: str, run_id: str, *, end: str, success: bool) -> list[dict[str, Any]]:
    return run_cycle(
        job,
        start_time=at(0),
        end_time=end,
        run_id=run_id,
        inputs=[assertions({"assertion": "not_null", "column": "id", "success": success})],
        producer="p",
    )


def test_a_result_never_finishes_before_its_moved_start() -> None:
    """Whole-second starts are moved into their second by the run id (``result_start``): a run
    of under a second, or with no START, finished before it started (a review)."""
    events = [
        *_asserted_by("dag_a.check", "run-a", end=at(0), success=True),
        *_asserted_by("dag_b.check", "run-b", end=at(0), success=False),
    ]
    results = quality(build(events, definition())).results
    assert len(results) == 2
    assert len({r.started_at for r in results}) == 2  # moved apart by their run ids
    for result in results:
        assert result.finished_at is not None and result.finished_at >= result.started_at


_COLUMN = {"nullCount": 0, "distinctCount": 3, "min": 1, "quantiles": {"0.5": 2}}
_EVERY_COLUMN_MEASURE = {
    ("rowCount", None),
    ("bytes", None),
    ("nullCount", "x"),
    ("distinctCount", "x"),
    ("min", "x"),
    ("quantile_0.5", "x"),
    ("nullCount", "y"),
}
_X = {("nullCount", "x"), ("distinctCount", "x"), ("min", "x"), ("quantile_0.5", "x")}
_MALFORMED_COLUMNS = [
    # a column's entry that holds no metrics: that column's entry alone is left out
    pytest.param({"x": None}, _X, "columnMetrics.x", id="an entry sent as null"),
    pytest.param({"x": [0, 3]}, _X, "columnMetrics.x", id="an entry sent as a list"),
    pytest.param({"x": "n/a"}, _X, "columnMetrics.x", id="an entry sent as text"),
    pytest.param({"x": 7}, _X, "columnMetrics.x", id="an entry sent as a number"),
    pytest.param({"x": "NaN"}, _X, "columnMetrics.x", id="an entry sent as NaN text"),
    # a part of an entry of the wrong type: that part alone
    pytest.param(
        {"x": _COLUMN | {"quantiles": [2]}},
        {("quantile_0.5", "x")},
        "columnMetrics.x.quantiles",
        id="quantiles sent as a list",
    ),
    pytest.param(
        {"x": _COLUMN | {"quantiles": "p50=2"}},
        {("quantile_0.5", "x")},
        "columnMetrics.x.quantiles",
        id="quantiles sent as text",
    ),
    pytest.param(
        {"x": _COLUMN | {"nullCount": {"value": 0}}},
        {("nullCount", "x")},
        "columnMetrics.x.nullCount",
        id="a metric sent as an object",
    ),
    # the whole mapping sent as no mapping: only the column metrics, never the row count
    pytest.param([{"name": "x", "nullCount": 0}], _X, "columnMetrics", id="columnMetrics a list"),
    pytest.param("x,y", _X, "columnMetrics", id="columnMetrics as text"),
]


@pytest.mark.parametrize("side", ["inputFacets", "outputFacets"])
@pytest.mark.parametrize(("sent", "left_out", "path"), _MALFORMED_COLUMNS)
def test_a_malformed_column_entry_drops_only_itself_and_is_reported_as_an_invalid_metric(
    side: str, sent: Any, left_out: set[tuple[str, str | None]], path: str
) -> None:
    """Seed 003: dataQualityMetrics gives the row count, bytes, … and per column the column's
    metrics. One column's entry sent as null (or a list, text, a number) made the whole facet
    malformed: every metric of the dataset was lost, its row count, bytes and other columns.
    Only what is malformed is left out, and ``INVALID_METRIC`` names it (as a bad value is)."""
    columns = {"x": dict(_COLUMN), "y": {"nullCount": 1}}
    if isinstance(sent, dict):
        columns |= sent
    else:  # the whole mapping: its columns are none of those measured
        columns = sent
    metrics = {"rowCount": 3, "bytes": 30, "columnMetrics": columns}
    item = {"namespace": PG, "name": "a.s.t", side: {"dataQualityMetrics": metrics}}
    events = run(**{"inputs" if side == "inputFacets" else "outputs": [item]})
    plan = build(events, definition())
    assert GapCode.MALFORMED_FACET not in plan.report.gaps
    assert GapCode.NON_FINITE_METRIC not in plan.report.gaps
    found = {(r.metric, r.field) for r in quality(plan).records}
    expected = _EVERY_COLUMN_MEASURE - left_out
    if not isinstance(sent, dict):
        expected -= {("nullCount", "y")}
    assert found == expected
    (example,) = plan.report.gaps[GapCode.INVALID_METRIC].examples
    assert example == f"job airflow/dq.check_orders: dataQualityMetrics of {PG}/a.s.t: {path}"


@pytest.mark.parametrize(
    "metrics",
    [
        pytest.param({"rowCount": 3, "bytes": 30}, id="columnMetrics left out"),
        pytest.param({"rowCount": 3, "bytes": 30, "columnMetrics": None}, id="columnMetrics null"),
    ],
)
def test_metrics_without_column_metrics_keep_the_datasets_own_and_report_nothing(
    metrics: dict[str, Any],
) -> None:
    """The spec requires ``columnMetrics``; a producer that measured no column and left it out
    (or sent null) still measured the dataset: its row count and bytes are records, and nothing
    was lost to report. The whole facet was malformed."""
    item = {"namespace": PG, "name": "a.s.t", "inputFacets": {"dataQualityMetrics": metrics}}
    plan = build(run(inputs=[item]), definition())
    assert plan.report.gaps == {}
    found = {(r.metric, r.field, r.value) for r in quality(plan).records}
    assert found == {("rowCount", None, 3), ("bytes", None, 30)}


_UNREADABLE_ASSERTIONS = [
    pytest.param(None, id="null"),
    pytest.param(5, id="a number"),
    pytest.param("not_null", id="text"),
    pytest.param({"assertion": "unique"}, id="without success"),
    pytest.param({"success": True}, id="without assertion"),
]


@pytest.mark.parametrize("key", ["dataQualityAssertions", "greatExpectations_assertions"])
@pytest.mark.parametrize("bad", _UNREADABLE_ASSERTIONS)
def test_an_assertion_that_cannot_be_read_drops_only_itself_and_is_reported(
    key: str, bad: Any
) -> None:
    """Seed 003: a check per dataset, assertion and column, with a result per run. An
    assertion sent as null (or one without its ``success``) made the whole facet malformed:
    every other assertion of the dataset lost its result. It alone makes none, and
    ``MALFORMED_FACET`` names it."""
    name = "assertion" if key == "dataQualityAssertions" else "expectationType"
    good = [{name: "not_null", "column": "id", "success": True}, {name: "b", "success": False}]
    if isinstance(bad, dict) and key != "dataQualityAssertions" and "assertion" in bad:
        bad = {"expectationType": bad["assertion"]}
    facet = {"assertions": [good[0], bad, good[1]]}
    item = {"namespace": PG, "name": "analytics.sales.orders", "inputFacets": {key: facet}}
    plan = build(run(inputs=[item]), definition())
    where = f"ol:{PG}/analytics.sales.orders"
    results = {r.check.removeprefix(where): r.failures for r in quality(plan).results}
    assert results == {":not_null:id": 0, ":b": 1}
    (example,) = plan.report.gaps[GapCode.MALFORMED_FACET].examples
    assert example == (
        f"job airflow/dq.check_orders: {key} of {PG}/analytics.sales.orders: assertions[1]: "
        "no assertion, no result (the facet's other assertions make theirs)"
    )


def test_assertions_sent_as_null_make_the_facet_malformed_as_it_holds_nothing_else() -> None:
    """A facet whose ``assertions`` is no list holds no assertion to keep: it is malformed, as
    the spec's schema says, and reported."""
    item = {
        "namespace": PG,
        "name": "analytics.sales.orders",
        "inputFacets": {"dataQualityAssertions": {"assertions": None}},
    }
    plan = build(run(inputs=[item]), definition())
    assert quality(plan).checks == []
    assert plan.report.gaps[GapCode.MALFORMED_FACET].examples == [
        f"{PG}/analytics.sales.orders: dataQualityAssertions: assertions: Input should be a "
        "valid list"
    ]


_START, _END = "2026-11-29T10:00:00+00:00", "2026-11-29T10:05:00+00:00"
_REWRITTEN_AT_ONE_TIME = [
    # both measures stamped with the run's end: as read at the run's start
    pytest.param(("START", "COMPLETE"), at(0, minute=5), at(0, minute=5), _START, _END, id="end"),
    # ... without a START: the millisecond before the measure as written
    pytest.param(
        ("COMPLETE",),
        at(0, minute=5),
        at(0, minute=5),
        "2026-11-29T10:04:59.999000+00:00",
        _END,
        id="end, complete only",
    ),
    # both stamped before the run started (a scheduled time): before the measure as written
    pytest.param(
        ("START", "COMPLETE"),
        "2026-11-29T09:00:00Z",
        "2026-11-29T09:00:00Z",
        "2026-11-29T08:59:59.999000+00:00",
        "2026-11-29T09:00:00+00:00",
        id="before the start",
    ),
    # the input stamped with the run's end, the output with none: the run's end too
    pytest.param(("START", "COMPLETE"), at(0, minute=5), None, _START, _END, id="output unstamped"),
    # two times within one millisecond are one record in Blindata
    pytest.param(
        ("START", "COMPLETE"),
        "2026-11-29T10:05:00.000100Z",
        "2026-11-29T10:05:00.000900Z",
        _START,
        "2026-11-29T10:05:00.000900+00:00",
        id="one millisecond",
    ),
    # two distinct times are kept as the producer sent them
    pytest.param(
        ("START", "COMPLETE"),
        "2026-11-29T10:01:00Z",
        "2026-11-29T10:04:00Z",
        "2026-11-29T10:01:00+00:00",
        "2026-11-29T10:04:00+00:00",
        id="distinct times",
    ),
]


@pytest.mark.parametrize(
    ("sent", "read_date", "written_date", "read_at", "written_at"), _REWRITTEN_AT_ONE_TIME
)
def test_a_table_read_and_rewritten_measured_at_one_capture_date_keeps_both_in_time_order(
    sent: tuple[str, ...],
    read_date: str | None,
    written_date: str | None,
    read_at: str,
    written_at: str,
) -> None:
    """Seed 003: metrics "(input or dataset) → Profiling metric records", stamped with the
    facet's captureDate. A run that reads and rewrites one table (``INSERT OVERWRITE t SELECT …
    FROM t``, a dbt incremental model) measured it before and after, both at one captureDate:
    two records of one key, and the output's replaced the input's. The measure as read is
    stamped before the measure as written (at the run's start, or the millisecond before), the
    same on every snapshot."""

    def measure(rows: int, nulls: int, date: str | None) -> dict[str, Any]:
        facet = {"rowCount": rows, "columnMetrics": {"id": {"nullCount": nulls}}}
        return facet | ({"captureDate": date} if date else {})

    inputs = [
        {
            "namespace": PG,
            "name": "a.s.t",
            "inputFacets": {"dataQualityMetrics": measure(100, 0, read_date)},
        }
    ]
    outputs = [
        {
            "namespace": PG,
            "name": "a.s.t",
            "outputFacets": {"dataQualityMetrics": measure(150, 5, written_date)},
        }
    ]
    times = {"START": at(0), "COMPLETE": at(0, minute=5)}
    events = [
        builders.run_event(
            "dq.rewrite",
            event_type=kind,
            time=times[kind],
            run_id="run-1",
            inputs=inputs,
            outputs=outputs,
            producer="p",
        )
        for kind in sent
    ]
    plans = [build(events, definition()), build(events + run(run_id="run-2"), definition())]
    for plan in plans:  # another snapshot, with another run: the same records
        found = {
            (r.metric, r.field, r.value, r.timestamp.isoformat()) for r in quality(plan).records
        }
        assert found == {
            ("rowCount", None, 100, read_at),
            ("nullCount", "id", 0, read_at),
            ("rowCount", None, 150, written_at),
            ("nullCount", "id", 5, written_at),
        }


def test_statistics_read_and_written_at_one_capture_date_keep_their_times() -> None:
    """Rows read and rows written are two metrics: at one captureDate they are two records
    already, and keep the time the producer sent."""
    date = {"captureDate": "2026-11-29T10:05:00Z"}
    inputs = [
        {
            "namespace": PG,
            "name": "a.s.t",
            "inputFacets": {"inputStatistics": {"rowCount": 100} | date},
        }
    ]
    outputs = [
        {
            "namespace": PG,
            "name": "a.s.t",
            "outputFacets": {"outputStatistics": {"rowCount": 150} | date},
        }
    ]
    records = quality(build(run(inputs=inputs, outputs=outputs), definition())).records
    assert {(r.metric, r.value, r.timestamp.isoformat()) for r in records} == {
        ("rowsRead", 100, _END),
        ("rowsWritten", 150, _END),
    }


@pytest.mark.parametrize(
    ("namespace", "settings", "spellings", "checked"),
    [
        # Unity Catalog and Trino store a quoted name in lower case too: one table, one check
        (
            "databricks://adb",
            {"nameProfile": "databricks", "identifierCase": "LOWER"},
            ["main.sales.orders", "main.sales.`Orders`"],
            ["main.sales.orders"],
        ),
        (
            "trino://t:8080",
            {"nameProfile": "trino", "identifierCase": "LOWER"},
            ['"hive"."sales"."Orders"', "Hive.Sales.Orders"],
            ["hive.sales.orders"],
        ),
        # Snowflake keeps a quoted name's case: two tables, two checks
        (
            "snowflake://org-acct",
            {"nameProfile": "snowflake", "identifierCase": "UPPER"},
            ["db.s.t", 'DB.S."t"'],
            ["DB.S.T", "DB.S.t"],
        ),
    ],
)
def test_a_checks_code_names_a_quoted_table_as_its_platform_stores_it(
    namespace: str, settings: dict[str, Any], spellings: list[str], checked: list[str]
) -> None:
    """A check's code names its dataset as the entity is named: where the platform folds
    quoted names too, `` `Orders` `` and ``orders`` are one check (seed 003)."""
    job = builders.definition(policy(namespace, **settings))
    events = [
        event
        for index, name in enumerate(spellings)
        for event in run_cycle(
            "dq.orders",
            run_id=f"r{index}",
            start_time=at(index * 10),
            end_time=at(index * 10 + 1),
            inputs=[
                dataset(
                    name,
                    namespace,
                    input_facets=assertions_facet({"assertion": "not_null", "success": True}),
                )
            ],
        )
    ]
    codes = sorted(c.code for c in quality(build(events, job)).checks)
    assert codes == [f"ol:{namespace}/{name}:not_null" for name in checked]
