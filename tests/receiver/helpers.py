"""What the receiver tests share: the receiver served on loopback as producers reach it, events.

The receiver app is mounted under ``/blindata`` in a parent FastAPI app, as the Airflow API
server mounts plugin apps, and served by uvicorn in a thread on a free port. Each test gets its
own store and server, so "exactly the accepted events are in the store" needs no cleanup.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from blindata_emulator.server import serving as serve_in_thread
from fastapi import FastAPI
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset, schema_dataset, sql_job

from airflow_blindata.receiver.app import (
    ROUTE,
    URL_PREFIX,
    ReceiverSettings,
    create_receiver_app,
)
from airflow_blindata.store import EventStore

API_KEY = "receiver-key-that-must-never-be-logged"
OTHER_KEY = "another-receiver-key-for-rotation"
TEST_MAX_BODY_BYTES = 64 * 1024
TEST_MAX_BATCH_EVENTS = 50
PRODUCER = "https://github.com/airflow-blindata/tests/receiver"
NAMESPACE = "postgres://db:5432"


@dataclass
class Served:
    """A receiver on loopback: the server root, the endpoint URLs and the store behind it."""

    root: str
    store: EventStore

    @property
    def lineage_url(self) -> str:
        return f"{self.root}{URL_PREFIX}/api/v1/lineage"

    @property
    def batch_url(self) -> str:
        return f"{self.lineage_url}/batch"

    def stored(self) -> list[dict[str, Any]]:
        """Every event in the store, as stored."""
        return [event.payload for event in self.store.events()]

    def stored_run_ids(self) -> list[str]:
        return sorted(str(event.run_id) for event in self.store.events() if event.run_id)


@contextmanager
def serving(app: FastAPI, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread on a free port; yields the root URL."""
    with serve_in_thread(app, host, name="receiver") as url:
        yield url


def mounted(receiver: FastAPI) -> FastAPI:
    """A parent app with the receiver under ``/blindata``, as Airflow's ``init_plugins`` does."""
    parent = FastAPI()
    parent.mount(URL_PREFIX, receiver)
    return parent


@contextmanager
def serve_receiver(store: EventStore, **options: Any) -> Iterator[Served]:
    """The receiver with test limits and ``API_KEY`` (unless ``options`` say otherwise)."""
    options.setdefault(
        "settings",
        ReceiverSettings(
            max_body_bytes=TEST_MAX_BODY_BYTES, max_batch_events=TEST_MAX_BATCH_EVENTS
        ),
    )
    options.setdefault("keys", [API_KEY])
    app = create_receiver_app(store=store, **options)
    with serving(mounted(app)) as root:
        yield Served(root, store)


def run_event(
    index: int = 0,
    *,
    event_type: str = "COMPLETE",
    run_id: str | None = None,
    **changes: Any,
) -> dict[str, Any]:
    """A small valid RunEvent (postgres input and output), numbered by ``index``."""
    event: dict[str, Any] = {
        "eventType": event_type,
        "eventTime": f"2026-11-29T10:{index // 60 % 60:02d}:{index % 60:02d}.000Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id or str(uuid.UUID(int=index + 1))},
        "job": {"namespace": "spark-prod", "name": f"etl.job_{index}"},
        "inputs": [{"namespace": "postgres://db:5432", "name": "analytics.staging.orders"}],
        "outputs": [{"namespace": "postgres://db:5432", "name": f"analytics.marts.t{index}"}],
    }
    event.update(changes)
    return event


def transport_config(root: str, *, key: str = API_KEY, gzip: bool = True) -> dict[str, Any]:
    """The ``transport`` block of an ``openlineage.yml``, as the docs give it."""
    config: dict[str, Any] = {
        "type": "http",
        "url": root,
        "endpoint": f"{URL_PREFIX}{ROUTE}",
        "auth": {"type": "api_key", "apiKey": key},
        "retry": {"total": 0},
    }
    if gzip:
        config["compression"] = "gzip"
    return config


def now() -> str:
    return datetime.now(UTC).isoformat()


def spark_like_run(run_id: str, state: RunState) -> RunEvent:
    """A run with the sql facet, a schema and column lineage, as the docs recommend."""
    output = OutputDataset(
        namespace=NAMESPACE,
        name="analytics.marts.daily_orders",
        facets={
            "schema": schema_dataset.SchemaDatasetFacet(
                fields=[schema_dataset.SchemaDatasetFacetFields(name="total", type="numeric")]
            ),
            "columnLineage": column_lineage_dataset.ColumnLineageDatasetFacet(
                fields={
                    "total": column_lineage_dataset.Fields(
                        inputFields=[
                            column_lineage_dataset.InputField(
                                namespace=NAMESPACE,
                                name="analytics.staging.orders",
                                field="amount",
                            )
                        ]
                    )
                }
            ),
        },
    )
    return RunEvent(
        eventType=state,
        eventTime=now(),
        run=Run(runId=run_id),
        job=Job(
            namespace="spark-prod",
            name="daily_orders",
            facets={
                "sql": sql_job.SQLJobFacet(
                    query="INSERT INTO marts.daily_orders SELECT sum(amount) FROM staging.orders",
                    dialect="postgres",
                )
            },
        ),
        inputs=[InputDataset(namespace=NAMESPACE, name="analytics.staging.orders")],
        outputs=[output],
        producer=PRODUCER,
    )
