"""Capture latency: ``BlindataTransport.emit`` against openlineage-python's ``FileTransport``.

Both transports get the same Airflow-like RunEvents (about 5 KB of JSON each: parent, nominal
time, processing engine and an Airflow-sized run facet, job type, SQL and ownership job facets,
an input and an output with a 12-column schema). Measured side by side in one run, so that the
ratios hold on a noisy machine:

* 1 writer: one process emits each event through both transports, alternating, and times each
  ``emit`` (median, p99, and the ratio Blindata / File);
* N writers: the same in N processes at once, all writing to one file and one store;
* sustained: N processes emit as fast as they can through one transport, then the other;
  events per second over the whole run;
* fork per event: as Airflow's OpenLineage provider does — a child forked per event builds the
  event and the transport (from its config dict) and emits once; the child's ``emit`` is timed.
  The store is preloaded in the parent first, as the plugin does, and the transports take turns.

Usage: ``python benchmarks/capture.py [--events 2000] [--writers 8] [--store URL]
[--synchronous normal|full] [--fork-events 400]``. Without ``--store``, a SQLite store in a
temporary directory (``--synchronous`` picks its durability; see docs/capture.md).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import attr
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    RunFacet,
    job_type_job,
    nominal_time_run,
    ownership_job,
    parent_run,
    processing_engine_run,
    schema_dataset,
    sql_job,
)
from openlineage.client.serde import Serde
from openlineage.client.transport import Transport, get_default_factory

from airflow_blindata.capture import transport as blindata_transport
from airflow_blindata.capture.openlineage_config import TRANSPORT_PATH
from airflow_blindata.store import open_store


@attr.define
class AirflowRunFacet(RunFacet):
    """Stands in for the provider's ``airflow`` run facet: the biggest part of a real event."""

    dag: dict[str, Any] = attr.field(factory=dict)
    dagRun: dict[str, Any] = attr.field(factory=dict)  # noqa: N815 (the wire name)
    task: dict[str, Any] = attr.field(factory=dict)
    taskInstance: dict[str, Any] = attr.field(factory=dict)  # noqa: N815


def airflow_like_event(i: int) -> RunEvent:
    fields = [
        schema_dataset.SchemaDatasetFacetFields(name=f"c{j}", type="INTEGER", description="col")
        for j in range(12)
    ]
    schema = schema_dataset.SchemaDatasetFacet(fields=fields)
    dag = {"dag_id": f"dag_{i % 20}", "owner": "data", "tags": ["etl"], "description": "d" * 200}
    task = {"task_id": f"t{i % 50}", "operator": "SQLExecuteQueryOperator", "retries": 1}
    return RunEvent(
        eventType=RunState.COMPLETE if i % 2 else RunState.START,
        eventTime="2026-11-29T12:00:00.000000+00:00",
        run=Run(
            runId=str(uuid.uuid4()),
            facets={
                "parent": parent_run.ParentRunFacet(
                    run=parent_run.Run(runId=str(uuid.uuid4())),
                    job=parent_run.Job(namespace="airflow", name=dag["dag_id"]),
                ),
                "nominalTime": nominal_time_run.NominalTimeRunFacet(
                    nominalStartTime="2026-11-29T12:00:00+00:00"
                ),
                "processing_engine": processing_engine_run.ProcessingEngineRunFacet(
                    version="3.3.2", name="Airflow", openlineageAdapterVersion="2.20.3"
                ),
                "airflow": AirflowRunFacet(
                    dag=dag,
                    dagRun={"run_id": f"manual__{i}", "conf": {}},
                    task={**task, "sql": "SELECT 1; " * 40},
                    taskInstance={"try_number": 1, "map_index": -1, "pool": "default_pool"},
                ),
            },
        ),
        job=Job(
            namespace="airflow",
            name=f"{dag['dag_id']}.{task['task_id']}",
            facets={
                "jobType": job_type_job.JobTypeJobFacet(
                    processingType="BATCH", integration="AIRFLOW", jobType="TASK"
                ),
                "sql": sql_job.SQLJobFacet(query="INSERT INTO a SELECT * FROM b WHERE x > 1 " * 5),
                "ownership": ownership_job.OwnershipJobFacet(
                    owners=[ownership_job.Owner(name="data")]
                ),
            },
        ),
        inputs=[
            InputDataset("postgres://db:5432", f"public.src{i % 7}", facets={"schema": schema})
        ],
        outputs=[
            OutputDataset("postgres://db:5432", f"public.dst{i % 7}", facets={"schema": schema})
        ],
        producer="https://github.com/apache/airflow/tree/providers-openlineage/2.20.3",
    )


def build(config: dict[str, Any]) -> Transport:
    """A transport the way the OpenLineage client builds one: from its config dict."""
    return get_default_factory().create(dict(config))


def timed(transport: Transport, event: RunEvent) -> float:
    started = time.perf_counter()
    transport.emit(event)
    return time.perf_counter() - started


def alternate(configs: dict[str, dict[str, Any]], count: int, seed: int) -> dict[str, list[float]]:
    """Emit ``count`` events through every transport in turn; the time of each emit, per name."""
    transports = {name: build(config) for name, config in configs.items()}
    times: dict[str, list[float]] = {name: [] for name in configs}
    for i in range(count):
        event = airflow_like_event(seed * 1_000_000 + i)
        order = list(transports.items()) if i % 2 else list(reversed(transports.items()))
        for name, transport in order:
            times[name].append(timed(transport, event))
    return times


def _writer(
    configs: dict[str, dict[str, Any]],
    count: int,
    seed: int,
    barrier: Barrier,
    results: Any,
) -> None:
    barrier.wait()
    results.put(alternate(configs, count, seed))


def _flood(config: dict[str, Any], count: int, seed: int, barrier: Barrier) -> None:
    transport = build(config)
    events = [airflow_like_event(seed * 1_000_000 + i) for i in range(count)]
    barrier.wait()
    for event in events:
        transport.emit(event)


def concurrently(writers: int, target: Callable[..., None], *args: Any) -> float:
    """Run ``target(*args, seed, barrier)`` in ``writers`` processes; seconds from the start."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(writers + 1)
    processes = [
        context.Process(target=target, args=(*args, seed, barrier)) for seed in range(writers)
    ]
    for process in processes:
        process.start()
    barrier.wait()
    started = time.perf_counter()
    for process in processes:
        process.join()
        if process.exitcode != 0:
            sys.exit(f"a writer failed (exit code {process.exitcode})")
    return time.perf_counter() - started


def latency_in_writers(
    configs: dict[str, dict[str, Any]], writers: int, count: int
) -> dict[str, list[float]]:
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    barrier = context.Barrier(writers)
    processes = [
        context.Process(target=_writer, args=(configs, count, seed + 100, barrier, results))
        for seed in range(writers)
    ]
    for process in processes:
        process.start()
    merged: dict[str, list[float]] = {name: [] for name in configs}
    for _ in processes:
        for name, times in results.get().items():
            merged[name].extend(times)
    for process in processes:
        process.join()
    return merged


def fork_per_event(configs: dict[str, dict[str, Any]], count: int) -> dict[str, list[float]]:
    """Each event from a fresh child that builds the event and the transport, and emits once.

    As the provider does: its child builds the event, so the event's memory is the child's own.
    The transports take turns event by event, so that each pair of children is forked from the
    same parent (the parent's memory, and its collector's counts, shape a child's first steps).
    """
    times: dict[str, list[float]] = {name: [] for name in configs}
    for i in range(count):
        order = list(configs.items()) if i % 2 else list(reversed(configs.items()))
        for name, config in order:
            times[name].append(_forked_emit(config, seed=900_000_000 + i))
    return times


def _forked_emit(config: dict[str, Any], seed: int) -> float:
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read)
        event = airflow_like_event(seed)
        elapsed = timed(build(config), event)
        os.write(write, f"{elapsed}".encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        elapsed = float(answer.read())
    os.waitpid(child, 0)
    return elapsed


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p99 * 1000


def compare(label: str, times: dict[str, list[float]]) -> None:
    file_median, file_p99 = summary(times["file"])
    ours_median, ours_p99 = summary(times["blindata"])
    print(
        f"{label:<22} FileTransport median {file_median:.3f} ms, p99 {file_p99:.3f} ms | "
        f"BlindataTransport median {ours_median:.3f} ms, p99 {ours_p99:.3f} ms | "
        f"ratio median {ours_median / file_median:.2f}x, p99 {ours_p99 / file_p99:.2f}x",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000, help="events per writer (2000)")
    parser.add_argument("--writers", type=int, default=8, help="concurrent processes (8)")
    parser.add_argument("--store", help="store URL (default: SQLite in a temporary directory)")
    parser.add_argument("--synchronous", choices=["normal", "full"], default="normal")
    parser.add_argument("--fork-events", type=int, default=400, help="events, one fork each")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="capture-bench-") as scratch:
        store_url = args.store or (
            f"sqlite:///{Path(scratch) / 'events.db'}?synchronous={args.synchronous}"
        )
        configs = {
            "file": {
                "type": "file",
                "log_file_path": str(Path(scratch) / "events.jsonl"),
                "append": True,
            },
            "blindata": {"type": TRANSPORT_PATH, "store_url": store_url},
        }
        size = len(Serde.to_json(airflow_like_event(0)))
        open_store(store_url).last_id()  # the schema, created once up front
        print(
            f"capture: events of {size / 1000:.1f} KB, store {open_store(store_url).url}, "
            f"{os.cpu_count()} CPUs",
            flush=True,
        )
        alternate(configs, 50, seed=999)  # warm-up: imports, first connection, caches
        compare("1 writer", alternate(configs, args.events, seed=1))
        concurrent = latency_in_writers(configs, args.writers, args.events)
        compare(f"{args.writers} writers", concurrent)
        rates = {}
        for name, config in configs.items():
            seconds = concurrently(args.writers, _flood, config, args.events)
            rates[name] = args.writers * args.events / seconds
        print(
            f"{'sustained, ' + str(args.writers) + ' writers':<22} "
            f"FileTransport {rates['file']:,.0f} events/s | "
            f"BlindataTransport {rates['blindata']:,.0f} events/s | "
            f"ratio {rates['file'] / rates['blindata']:.2f}x the time",
            flush=True,
        )
        blindata_transport.preload(store_url)  # what the plugin does in the task's process
        compare("fork per event", fork_per_event(configs, args.fork_events))
        stored = open_store(store_url).stats().events
        print(f"stored events: {stored:,} (every Blindata emit above, none lost)")


if __name__ == "__main__":
    main()
