"""The OpenLineage Python client's own HTTP transports deliver to the receiver, as configured in
docs/configure-your-producers.md, and exactly the events they sent land in the store."""

from __future__ import annotations

import uuid

import pytest
import requests
from openlineage.client.event_v2 import (
    DatasetEvent,
    Job,
    JobEvent,
    RunEvent,
    RunState,
    StaticDataset,
)
from openlineage.client.transport.async_http import AsyncHttpConfig, AsyncHttpTransport
from openlineage.client.transport.http import HttpConfig, HttpTransport

from .helpers import NAMESPACE, PRODUCER, Served, now, spark_like_run, transport_config

pytestmark = pytest.mark.integration

ASYNC_RUNS = 20
ASYNC_TIMEOUT_SECONDS = 30.0


@pytest.mark.parametrize("gzip", [True, False], ids=["gzip", "plain"])
def test_the_sync_http_transport_delivers_run_job_and_dataset_events(
    receiver: Served, gzip: bool
) -> None:
    transport = HttpTransport(HttpConfig.from_dict(transport_config(receiver.root, gzip=gzip)))
    run_id = str(uuid.uuid4())
    events: list[RunEvent | JobEvent | DatasetEvent] = [
        spark_like_run(run_id, RunState.START),
        spark_like_run(run_id, RunState.COMPLETE),
        JobEvent(eventTime=now(), job=Job(namespace="dbt", name="model.orders"), producer=PRODUCER),
        DatasetEvent(
            eventTime=now(),
            dataset=StaticDataset(namespace=NAMESPACE, name="analytics.staging.orders"),
            producer=PRODUCER,
        ),
    ]
    try:
        for event in events:
            assert transport.emit(event).status_code == 200
    finally:
        transport.close()

    stored = list(receiver.store.events())
    assert [event.kind for event in stored] == ["RunEvent", "RunEvent", "JobEvent", "DatasetEvent"]
    assert [event.event_type for event in stored[:2]] == ["START", "COMPLETE"]
    assert {event.source for event in stored} == {"receiver"}
    facets = stored[1].payload["outputs"][0]["facets"]
    assert facets["columnLineage"]["fields"]["total"]["inputFields"][0]["field"] == "amount"


def test_a_resent_event_is_stored_once(receiver: Served) -> None:
    transport = HttpTransport(HttpConfig.from_dict(transport_config(receiver.root)))
    event = spark_like_run(str(uuid.uuid4()), RunState.COMPLETE)
    try:
        first, second = transport.emit(event), transport.emit(event)
    finally:
        transport.close()

    assert first.json()["outcome"] == "accepted"
    assert second.json()["outcome"] == "duplicate"
    assert len(receiver.stored()) == 1


def test_the_sync_http_transport_with_a_wrong_key_fails_and_stores_nothing(
    receiver: Served,
) -> None:
    config = transport_config(receiver.root, key="a-wrong-key-of-enough-length")
    transport = HttpTransport(HttpConfig.from_dict(config))
    try:
        with pytest.raises(requests.HTTPError) as raised:
            transport.emit(spark_like_run(str(uuid.uuid4()), RunState.START))
    finally:
        transport.close()

    assert raised.value.response is not None
    assert raised.value.response.status_code == 401
    assert receiver.stored() == []


def test_the_async_http_transport_delivers_every_event(receiver: Served) -> None:
    transport = AsyncHttpTransport(AsyncHttpConfig.from_dict(transport_config(receiver.root)))
    run_ids = [str(uuid.uuid4()) for _ in range(ASYNC_RUNS)]
    try:
        for run_id in run_ids:
            transport.emit(spark_like_run(run_id, RunState.START))
            transport.emit(spark_like_run(run_id, RunState.COMPLETE))
        assert transport.wait_for_completion(ASYNC_TIMEOUT_SECONDS)
        stats = dict(transport.get_stats())
    finally:
        transport.close(ASYNC_TIMEOUT_SECONDS)  # stops its worker thread

    assert stats == {"pending": 0, "success": 2 * ASYNC_RUNS, "failed": 0}
    assert receiver.stored_run_ids() == sorted(run_ids * 2)
    types = {(event.run_id, event.event_type) for event in receiver.store.events()}
    assert len(types) == 2 * ASYNC_RUNS


def test_the_async_http_transport_with_a_wrong_key_counts_failures_and_stores_nothing(
    receiver: Served,
) -> None:
    config = transport_config(receiver.root, key="a-wrong-key-of-enough-length")
    transport = AsyncHttpTransport(AsyncHttpConfig.from_dict(config))
    try:
        transport.emit(spark_like_run(str(uuid.uuid4()), RunState.START))
        transport.emit(spark_like_run(str(uuid.uuid4()), RunState.START))
        assert transport.wait_for_completion(ASYNC_TIMEOUT_SECONDS)
        stats = dict(transport.get_stats())
    finally:
        transport.close(ASYNC_TIMEOUT_SECONDS)

    assert stats == {"pending": 0, "success": 0, "failed": 2}
    assert receiver.stored() == []
