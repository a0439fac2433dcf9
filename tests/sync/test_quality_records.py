"""Profiling records in Blindata (seed 003) from the metrics real producers send: numbers only,
and a run enters the ledger once every record of it was uploaded."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.sync import snapshot
from tests.builders import PG
from tests.sync.helpers import (
    OTHER_DEFINITION,
    client_of,
    definition,
    dq_run,
    metrics_run,
    objects,
    plan_for,
)

pytestmark = pytest.mark.integration


def test_metric_records_are_numbers_a_nan_or_infinite_metric_is_not_uploaded(
    emulator: Any, client: BlindataClient
) -> None:
    """Seed 003: metric records carry the measured values; NaN and Infinity (Deequ, pandas) are
    not JSON numbers: they are left out, and the run's other records are uploaded."""
    job = definition()
    metrics = {
        "dataQualityMetrics": {
            "rowCount": 10,
            "columnMetrics": {"amount": {"sum": float("nan"), "max": float("inf"), "min": 1}},
        }
    }
    report = snapshot(plan_for(client, dq_run("m", "run-m", [], **metrics), job), client, job)
    assert {(r["metricCode"], r["value"]) for r in objects(emulator, Kind.RECORD)} == {
        ("rowCount", 10.0),
        ("min", 1.0),
    }
    assert report.counters["profilingRecordsUploaded"] == 2
    (gap,) = report.gaps[GapCode.NON_FINITE_METRIC].examples  # and the producer is told
    assert gap.endswith("columnMetrics.amount.sum, columnMetrics.amount.max")


def test_a_table_read_and_written_by_a_run_with_no_start_keeps_both_measures(
    emulator: Any, client: BlindataClient
) -> None:
    """Seed 003: metrics "(input or dataset) → Profiling metric records". A run that reads and
    writes one table (a dedupe in place) and sends COMPLETE alone (Great Expectations' action,
    custom emitters) measured it as read and as written: Blindata keeps both records, the one
    as read a millisecond before the end, and a second sync adds none."""
    job = definition()
    table = {"namespace": PG, "name": "dwh.sales.orders"}
    schema = {"schema": {"fields": [{"name": "id"}]}}
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-29T10:00:30.000Z",
        "producer": "https://example.com/dq",
        "run": {"runId": "run-d", "facets": {}},
        "job": {"namespace": "dq", "name": "dedupe", "facets": {}},
        "inputs": [
            table
            | {
                "facets": schema,
                "inputFacets": {"dataQualityMetrics": {"rowCount": 100, "columnMetrics": {}}},
            }
        ],
        "outputs": [
            table
            | {
                "facets": schema,
                "outputFacets": {"dataQualityMetrics": {"rowCount": 90, "columnMetrics": {}}},
            }
        ],
    }
    for _ in range(2):
        report = snapshot(plan_for(client, [event], job), client, job)
        assert report.status == "success", report.render()
    found = sorted((r["timestamp"], r["value"]) for r in objects(emulator, Kind.RECORD))
    assert found == [("2026-11-29T10:00:29.999Z", 100.0), ("2026-11-29T10:00:30.000Z", 90.0)]


def test_a_table_rewritten_with_metrics_at_one_capture_date_keeps_before_and_after(
    emulator: Any, client: BlindataClient
) -> None:
    """Seed 003: a record's timestamp is the facet's captureDate. A run that rewrites the table
    it reads (``INSERT OVERWRITE t SELECT … FROM t``) and stamps both measures with its event
    time made two records of one key in Blindata, the one uploaded last replacing the other:
    the steward sees the row count before the run and after it, in time order, and a second
    sync of the same run adds none."""
    job = definition()
    table = {"namespace": PG, "name": "dwh.sales.orders"}
    schema = {"schema": {"fields": [{"name": "id"}]}}
    date = "2026-11-29T10:00:30.000Z"

    def measure(rows: int, nulls: int) -> dict[str, Any]:
        return {
            "dataQualityMetrics": {
                "rowCount": rows,
                "columnMetrics": {"id": {"nullCount": nulls}},
                "captureDate": date,
            }
        }

    events = [
        {
            "eventType": kind,
            "eventTime": time,
            "producer": "https://example.com/dq",
            "run": {"runId": "run-o", "facets": {}},
            "job": {"namespace": "dq", "name": "overwrite", "facets": {}},
            "inputs": [table | {"facets": schema, "inputFacets": measure(100, 0)}],
            "outputs": [table | {"facets": schema, "outputFacets": measure(90, 2)}],
        }
        for kind, time in (("START", "2026-11-29T10:00:00.000Z"), ("COMPLETE", date))
    ]
    for _ in range(2):
        report = snapshot(plan_for(client, events, job), client, job)
        assert report.status == "success", report.render()
    found = sorted(
        (r["timestamp"], r["metricCode"], r["value"]) for r in objects(emulator, Kind.RECORD)
    )
    assert found == [
        ("2026-11-29T10:00:00.000Z", "nullCount", 0.0),
        ("2026-11-29T10:00:00.000Z", "rowCount", 100.0),
        ("2026-11-29T10:00:30.000Z", "nullCount", 2.0),
        ("2026-11-29T10:00:30.000Z", "rowCount", 90.0),
    ]


def test_a_run_whose_records_were_not_all_uploaded_adds_them_on_the_next_sync(
    emulator: Any, client: BlindataClient
) -> None:
    """Seed 003: "A run whose records were already uploaded adds none" — a run whose monitor
    could not be had for one of its datasets has not uploaded its records: the next sync adds
    them (the records of its other datasets are upserts: nothing is duplicated)."""
    job = definition()
    events = metrics_run("run-p", ["orders", "customers"])
    emulator.emulator.faults.fail_next(2, status=400, path="/profiling/monitors")
    snapshot(plan_for(client, events, job), client, job)
    assert len(objects(emulator, Kind.RECORD)) == 1
    snapshot(plan_for(client, events, job), client, job)
    assert len(objects(emulator, Kind.MONITOR)) == 2
    assert len(objects(emulator, Kind.RECORD)) == 2
    third = snapshot(plan_for(client, events, job), client, job)
    assert third.counters["profilingRecordsAlreadyUploaded"] == 2


class MonitorListedLate(httpx.HTTPTransport):
    """A Blindata where the monitor appears between the listing and the create: another sync
    of the same table made it (the first listing answers an empty page), so the create is
    refused with 409 (the monitor's natural key is its entity and name)."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        listing = request.method == "GET" and request.url.path.endswith("/profiling/monitors")
        if listing and not self.hidden:
            self.hidden = True
            return httpx.Response(200, json={"content": [], "number": 0, "last": True})
        return super().handle_request(request)


@pytest.mark.parametrize("race", ["answer lost", "409"])
def test_a_monitor_created_meanwhile_is_found_and_the_records_are_uploaded(
    emulator: Any, race: str
) -> None:
    """Seed 003: metric records go on the dataset's monitor. A create whose answer was lost
    (it landed), or that met the monitor another sync made meanwhile (409), finds that monitor:
    the run's records are uploaded now, not one run later after a failure."""
    job = definition()
    events = metrics_run("run-m", ["orders"])
    transport: httpx.BaseTransport | None = None
    if race == "answer lost":
        emulator.emulator.faults.drop_next(
            1, processed=True, path="/profiling/monitors$", method="POST"
        )
    else:
        transport = MonitorListedLate()
        other = definition(uuid=OTHER_DEFINITION)  # another definition describing the table
        with client_of(emulator) as direct:
            assert snapshot(plan_for(direct, events, other), direct, other).status == "success"
    with client_of(emulator, transport) as blindata:
        report = snapshot(plan_for(blindata, events, job), blindata, job)

    assert report.status == "success", report.render()
    assert len(objects(emulator, Kind.MONITOR)) == 1
    assert len(objects(emulator, Kind.RECORD)) == 1
    assert (
        report.counters.get("profilingRecordsUploaded", 0)
        + report.counters.get("profilingRecordsAlreadyUploaded", 0)
        == 1
    )
