"""A store as the page reads it: events from each source, a quarantined one, a sync history."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from airflow_blindata.mapper.report import GapCode
from airflow_blindata.store import EventStore, SyncRecord, open_store
from airflow_blindata.sync.history import store_status
from airflow_blindata.sync.report import RunOrigin, RunReport

DEFINITION = "3f9c2a70-5b1e-4c8e-9d2a-0a6b1c2d3e4f"
SECRET = "s3cret-pa55"
BLINDATA = "https://catalog.example.com/blindata"
SYNC_DAG = "blindata_sync"


def run_event(index: int, namespace: str = "spark-prod") -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-11-29T10:{index // 60 % 60:02d}:{index % 60:02d}.000Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.UUID(int=index + 1))},
        "job": {"namespace": namespace, "name": f"etl.job_{index % 3}"},
        "inputs": [{"namespace": "postgres://db:5432", "name": "analytics.staging.orders"}],
        "outputs": [{"namespace": "postgres://db:5432", "name": f"analytics.marts.t{index % 3}"}],
    }


def scheduled_run(index: int) -> str:
    """The run id of the sync DAG's scheduled run that made snapshot ``index``."""
    return f"scheduled__2026-11-29T{10 + index:02d}:00:00+00:00"


def snapshot_report(index: int) -> RunReport:
    """Snapshot ``index``: the sync DAG's on even indexes, ``airflow-blindata``'s on odd ones."""
    started = datetime(2026, 11, 29, 10, tzinfo=UTC) + timedelta(hours=index)
    report = RunReport(kind="snapshot", definition_uuid=DEFINITION, started_at=started)
    report.count("entities", 12 + index)
    report.count("entitiesCreated", 2 + index)
    report.count("entitiesRefreshed", 10)
    report.count("flowsCreated", 1)
    report.count("flows", 7)
    report.gap(GapCode.DANGLING_FLOW, "etl.job_2: mysql://legacy:3306/app.users -> t2")
    report.gap(GapCode.UNMAPPED_NAMESPACE, "mysql://legacy:3306")
    report.gap(GapCode.PRODUCER_NO_LINEAGE, "spark-prod/etl.job_2")
    report.blindata_url = BLINDATA
    report.origin = (
        RunOrigin(command="snapshot")
        if index % 2
        else RunOrigin(dag_id=SYNC_DAG, run_id=scheduled_run(index), task_id="snapshot")
    )
    report.finished_at = started + timedelta(seconds=42)
    report.status = "partial" if index % 2 else "success"
    return report


def record_snapshot(store: EventStore, report: RunReport, status: str | None = None) -> None:
    """Keep ``report`` in the store's sync history, as the snapshot operator does."""
    assert report.finished_at is not None
    store.record_sync(
        SyncRecord(
            definition_uuid=report.definition_uuid,
            kind=report.kind,
            started_at=report.started_at,
            finished_at=report.finished_at,
            status=status or store_status(report),
            report=report.to_record(),
        )
    )


def seed(store_url: str, *, events: int = 30, syncs: int = 3) -> None:
    """``events`` events split among the sources, one quarantined, ``syncs`` snapshots."""
    with open_store(store_url) as store:
        sources = ("transport", "listener", "receiver")
        for source in sources:
            batch = (run_event(i) for i in range(events) if i % 3 == sources.index(source))
            store.append_many(batch, source=source)
        store.append_many([run_event(0, namespace="airflow-prod")], source="listener")
        store.append(f'{{"broken": "postgresql://u:{SECRET}@db/x"', source="receiver")
        for index in range(syncs):
            record_snapshot(store, snapshot_report(index))
