"""Quality in Blindata (seed 003) with what real producers send: review cases."""

from __future__ import annotations

from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.sync import snapshot
from tests.sync.conftest import definition, objects, plan_for
from tests.sync.test_quality import dq_run

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
