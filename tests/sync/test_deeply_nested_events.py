"""One malformed event must never stop every sync: an event nested too deeply to read.

Named after the spec's "bad input gets a clear error or a reported gap and loses nothing" and
"one malformed event must never stop every sync". How deep JSON Python can decode depends on how
deep the stack already is where it decodes: the store (capture, the receiver) judges an event
where the stack is shallow, a sync (an Airflow task) reads it where it is deeper. An event nested
just under what the store could decode was stored, and then every snapshot (and ``build`` of the
stored events) ended in ``RecursionError``. Read where the stack is deeper, such an event is
now reported as unreadable (``UNREADABLE_EVENT``), kept in the store, and the rest is mapped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import EventStore, open_store
from airflow_blindata.store.prepare import prepare
from tests.builders import at, dataset, dataset_event, documentation_facet, run_event
from tests.sync.helpers import assert_read_at_once

from .helpers import definition

T = TypeVar("T")
MARK = '"NESTED"'
DEEPER = 60
"""Frames the sync's stack is deeper than the store's, here (an Airflow task's is far deeper)."""


def _deeper(frames: int, call: Callable[[], T]) -> T:
    return call() if frames == 0 else _deeper(frames - 1, call)


def _deepest_stored(template: str) -> str:
    """``template`` with the deepest nesting at ``MARK`` the store takes here (not quarantined)."""

    def text(depth: int) -> str:
        return template.replace(MARK, "[" * depth + "]" * depth)

    def stored(depth: int) -> bool:
        return not prepare(text(depth), source="ingest", received_at=datetime.now(UTC)).quarantined

    low, high = 1, 5000
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if stored(middle) else (low, middle - 1)
    assert low > 100
    return text(low)


def _run(second: int, run: int, **options: Any) -> dict[str, Any]:
    return run_event(
        "orders.load",
        time=at(second),
        run_id=f"00000000-0000-4000-8000-{run:012d}",
        outputs=[dataset("s.orders", facets=documentation_facet("orders"))],
        **options,
    )


DEEP = {
    "in a facet": json.dumps(_run(5, 2, job_facets={"acme": {"v": "NESTED"}})),
    "in the run": json.dumps(_run(5, 2) | {"extra": "NESTED"}),
    "in a DatasetEvent": json.dumps(
        dataset_event("s.orders", facets={"acme": {"v": "NESTED"}}, time=at(6))
    ),
}


def _payloads(store: EventStore) -> list[Any]:
    return [event.payload for event in store.events()]


@pytest.mark.parametrize("where", list(DEEP))
def test_an_event_nested_too_deeply_for_the_sync_is_a_gap_not_a_failed_sync(
    store_url: str, where: str
) -> None:
    """Stored where the stack is shallow, planned where it is deeper, twice (the second
    snapshot extends the job's kept fold with a later run)."""
    deep = _deepest_stored(DEEP[where])
    with open_store(store_url) as store:
        store.append_many([json.dumps(_run(0, 1)), deep])
        assert not list(store.quarantine())
        for later in ([], [json.dumps(_run(9, 3))]):
            store.append_many(later)
            planned = _deeper(DEEPER, lambda: plan_from_store(store, definition()))
            expected = _deeper(DEEPER, lambda: build(_payloads(store), definition()))
            assert_read_at_once(planned, expected)
            assert planned.report.gap_count(GapCode.UNREADABLE_EVENT) == 1
            assert planned.entities  # the rest is mapped
