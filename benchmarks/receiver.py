"""Receiver load test on loopback: nothing lost, nothing duplicated, events/s and p99 latency.

The receiver app is served by uvicorn in its own process (one worker, as the Airflow API server
runs by default), and client processes send the same set of events, each with one keep-alive
connection, in two server modes measured in the same run:

* floor: the same server (auth, body reading, ``parse_event`` validation, response) answering
  without storing (a store that drops everything);
* sqlite: the default event store, a SQLite file (or ``--store-url``), every answer given only
  once the event is committed.

Each mode runs with one event per request (what the OpenLineage transports send) and with
batches (``--batch``). After every stored run the store is read back: every event sent must be
there exactly once (``(runId, eventType)`` all distinct, count equal to events sent), and every
answer must be 200 and ``accepted``.

Usage: ``python benchmarks/receiver.py [--events 20000] [--clients 8] [--batch 100]
[--store-url postgresql://...]``. Prints one line per (request shape, server mode) with
events/s, latency p50/p99 per request, and the ratio to the floor of the same shape.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import httpx

API_KEY = "benchmark-receiver-key-0123456789"
HOST = "127.0.0.1"
ROUTE = "/blindata/api/v1/lineage"
READY_TIMEOUT_SECONDS = 30.0
CLIENT_TIMEOUT_SECONDS = 60.0
NULL_STORE = "null"
WARM_UP_INDEX = -1
PERCENTILE_99 = 0.99
MILLISECONDS = 1000.0


# -- the server process ---------------------------------------------------------------------


def _null_store() -> Any:
    """A store that drops every event: the floor of the receiver without storing."""
    from airflow_blindata.store import AppendCounts, AppendOutcome, EventStore

    class NullStore(EventStore):
        url = "null://"

        def append(self, event: Any, *, source: str = "transport") -> AppendOutcome:
            return AppendOutcome.ACCEPTED

        def append_many(self, events: Iterable[Any], *, source: str = "ingest") -> AppendCounts:
            return AppendCounts(accepted=sum(1 for _ in events))

        def events(self, **_: Any) -> Iterator[Any]:
            return iter(())

        def last_id(self) -> int:
            return 0

        def quarantine(self) -> Iterator[Any]:
            return iter(())

        def stats(self) -> Any:
            raise NotImplementedError

        def retain(self, **_: Any) -> Any:
            raise NotImplementedError

        def record_sync(self, record: Any) -> None:
            raise NotImplementedError

        def sync_history(self, definition_uuid: str, **_: Any) -> list[Any]:
            return []

        def close(self) -> None:
            return None

    return NullStore()


def serve(store_spec: str) -> None:
    """Serve the receiver under ``/blindata`` on a free port; print the port once listening."""
    import uvicorn
    from fastapi import FastAPI

    from airflow_blindata.receiver.app import URL_PREFIX, create_receiver_app
    from airflow_blindata.store import open_store

    store = _null_store() if store_spec == NULL_STORE else open_store(store_spec)
    parent = FastAPI()
    parent.mount(URL_PREFIX, create_receiver_app(keys=[API_KEY], store=store))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    sock.listen(2048)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(parent, log_level="warning", access_log=False, lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        store.close()


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str


def start_server(store_spec: str) -> Server:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", store_spec],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("PORT "):
        process.kill()
        raise RuntimeError(f"the receiver did not start: {line!r}")
    url = f"http://{HOST}:{line.split()[1]}{ROUTE}"
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while True:  # the warm-up opens the store (schema creation is not measured)
        try:
            reply = httpx.post(url, json=event(WARM_UP_INDEX), headers=_headers(), timeout=5)
            reply.raise_for_status()
            return Server(process, url)
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.05)


def stop_server(server: Server) -> None:
    server.process.terminate()
    server.process.wait(timeout=READY_TIMEOUT_SECONDS)


# -- the events and the clients -------------------------------------------------------------


def run_id(index: int) -> str:
    return str(uuid.UUID(int=index + 2))  # index -1 (warm-up) is uuid 1


def event(index: int) -> dict[str, Any]:
    """A Spark-like COMPLETE event of about 1.5 KB: sql facet, schema, postgres datasets."""
    namespace = "postgres://warehouse.example:5432"
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-29T10:00:00.000Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id(index)},
        "job": {
            "namespace": "spark-prod",
            "name": f"etl.job_{index % 500}",
            "facets": {
                "sql": {
                    "_producer": "https://github.com/OpenLineage/OpenLineage",
                    "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json",
                    "query": f"INSERT INTO marts.t{index % 500} SELECT * FROM staging.orders",
                    "dialect": "postgres",
                }
            },
        },
        "inputs": [{"namespace": namespace, "name": "analytics.staging.orders"}],
        "outputs": [
            {
                "namespace": namespace,
                "name": f"analytics.marts.t{index % 500}",
                "facets": {
                    "schema": {
                        "_producer": "https://github.com/OpenLineage/OpenLineage",
                        "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
                        "fields": [{"name": f"c{i}", "type": "varchar"} for i in range(12)],
                    }
                },
            }
        ],
    }


def _headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}


@dataclass
class ClientResult:
    latencies: list[float]
    statuses: Counter[int]
    outcomes: Counter[str]
    finished: float


def client(url: str, indexes: list[int], batch: int, barrier: Barrier, results: Any) -> None:
    """Send ``indexes`` one per request (``batch`` 0) or in batches; report latencies."""
    groups = (
        [[index] for index in indexes]
        if batch == 0
        else [indexes[i : i + batch] for i in range(0, len(indexes), batch)]
    )
    bodies = [
        json.dumps(event(group[0]) if batch == 0 else [event(i) for i in group]).encode()
        for group in groups
    ]
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    outcomes: Counter[str] = Counter()
    with httpx.Client(headers=_headers(), timeout=CLIENT_TIMEOUT_SECONDS) as http:
        http.get(url)  # opens the keep-alive connection before the clock starts (a 405)
        barrier.wait()
        for body in bodies:
            started = time.monotonic()
            reply = http.post(url, content=body)
            latencies.append(time.monotonic() - started)
            statuses[reply.status_code] += 1
            answer = reply.json()
            if "outcome" in answer:
                outcomes[answer["outcome"]] += 1
            else:
                for outcome in ("accepted", "duplicate", "quarantined"):
                    outcomes[outcome] += answer.get("summary", {}).get(outcome, 0)
                outcomes["failed"] += answer.get("summary", {}).get("failed", 0)
    results.put(ClientResult(latencies, statuses, outcomes, time.monotonic()))


@dataclass
class Run:
    shape: str
    mode: str
    events: int
    seconds: float
    latencies: list[float]
    statuses: Counter[int]
    outcomes: Counter[str]

    @property
    def per_second(self) -> float:
        return self.events / self.seconds

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * MILLISECONDS


def load(url: str, *, events: int, clients: int, batch: int, shape: str, mode: str) -> Run:
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(clients + 1)
    results = context.Queue()
    processes = [
        context.Process(
            target=client,
            args=(url, list(range(number, events, clients)), batch, barrier, results),
        )
        for number in range(clients)
    ]
    for process in processes:
        process.start()
    barrier.wait()
    started = time.monotonic()
    collected = [results.get(timeout=CLIENT_TIMEOUT_SECONDS * 10) for _ in processes]
    for process in processes:
        process.join()
    latencies = [value for result in collected for value in result.latencies]
    statuses: Counter[int] = sum((result.statuses for result in collected), Counter())
    outcomes: Counter[str] = sum((result.outcomes for result in collected), Counter())
    finished = max(result.finished for result in collected)
    return Run(shape, mode, events, finished - started, latencies, statuses, outcomes)


# -- checking the store -----------------------------------------------------------------------


def check_store(store_url: str, events: int, run: Run) -> list[str]:
    """What went wrong: events lost or duplicated in the store, answers that were not 200."""
    from airflow_blindata.store import open_store

    problems: list[str] = []
    if set(run.statuses) != {200}:
        problems.append(f"{run.shape}: answers other than 200: {dict(run.statuses)}")
    if run.outcomes["accepted"] != events:
        problems.append(f"{run.shape}: {run.outcomes['accepted']} of {events} answered accepted")
    expected = {run_id(index) for index in range(events)} | {run_id(WARM_UP_INDEX)}
    with open_store(store_url) as store:
        stored = [(event.run_id, event.event_type) for event in store.events()]
    if len(stored) != len(expected):
        problems.append(f"{run.shape}: {len(stored)} events stored, {len(expected)} sent")
    if len(set(stored)) != len(stored):
        problems.append(f"{run.shape}: {len(stored) - len(set(stored))} duplicated in the store")
    missing = expected - {run for run, _ in stored}
    if missing:
        problems.append(f"{run.shape}: {len(missing)} events lost, e.g. {sorted(missing)[:3]}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--batch", type=int, default=100, help="events per batch request")
    parser.add_argument("--store-url", help="an empty store to fill (default: a temp SQLite)")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0

    shapes = [("1 event/request", 0), (f"{args.batch} events/request", args.batch)]
    runs: list[Run] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="receiver-bench-") as scratch:
        for shape, batch in shapes:
            for mode in (NULL_STORE, "store"):
                store_url = NULL_STORE
                if mode == "store":
                    default = f"sqlite:///{Path(scratch) / f'events-{batch}.db'}"
                    store_url = args.store_url or default
                server = start_server(store_url)
                try:
                    run = load(
                        server.url,
                        events=args.events,
                        clients=args.clients,
                        batch=batch,
                        shape=shape,
                        mode="floor (no store)" if mode == NULL_STORE else "store",
                    )
                finally:
                    stop_server(server)
                runs.append(run)
                if mode == "store":
                    problems += check_store(store_url, args.events, run)
                    if args.store_url:
                        break  # one given store cannot be reused for the next shape

    print(
        f"receiver load test, {datetime.now().isoformat(timespec='seconds')}: "
        f"{args.events:,} events from {args.clients} client processes, one uvicorn worker, "
        f"loopback, {os.cpu_count()} CPUs"
    )
    header = ("request shape", "server", "events/s", "p50 ms", "p99 ms", "x floor")
    print("{:<22}{:<18}{:>10}{:>9}{:>9}{:>9}".format(*header))
    floors: dict[str, float] = {}
    for run in runs:
        floors.setdefault(run.shape, run.per_second)
        print(
            f"{run.shape:<22}{run.mode:<18}{run.per_second:>10,.0f}"
            f"{run.percentile(0.5):>9.1f}{run.percentile(PERCENTILE_99):>9.1f}"
            f"{run.per_second / floors[run.shape]:>9.2f}"
        )
    if problems:
        print("FAILED: " + "; ".join(problems))
        return 1
    print(
        f"nothing lost, nothing duplicated: every stored run holds exactly the {args.events:,} "
        "events sent (plus one warm-up), each answered 200 accepted"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
