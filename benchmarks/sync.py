"""Sync cost: a snapshot of a large synthetic catalog against the Blindata emulator.

The catalog (default: 2,000 jobs and 10,000 datasets, a few minutes; the README's figures:
10,000 jobs and 50,000 datasets; on 10 created Systems, 5 fields per
dataset, a SQL routine for one job in five, a table flow per job input and output, an
orchestration flow per job) is built as a ``CatalogPlan`` directly, so that only the sync is
measured (the mapping has its own benchmark). The emulator runs in its own process
(``airflow-blindata emulator``, state in a temporary SQLite file), so the figures are the
client's alone:

* HTTP requests and bytes per 1,000 objects written (batching);
* wall time of the first snapshot (everything created) and of a second one (everything
  refreshed, nothing created);
* peak RSS of this process (the plan, the client, the lookups);
* a light sync (issue 43) after ``--changed`` of the jobs (1 %) received a run: its requests and
  time against the second full snapshot's (the same catalog, in the same run), the plan being
  the full plan kept to those jobs (``mapper.light.plan_of_jobs``, as ``run_light`` does);
* the light sync's mapping from a store of as many Airflow-shaped jobs (``benchmarks/scale.py``'s
  events, one run each, folds kept by a first full mapping), after a run of ``--changed`` of
  them: the jobs received since the last sync listed, the store mapped (kept folds loaded, the
  new runs added) and the plan kept to those jobs, against a full snapshot's mapping of the same
  store;
* the delay from a task's end to its lineage in Blindata under the shipped sync DAG: the light
  DAG's interval (read from ``example_dags/blindata_sync.py``) plus the light sync measured.

Usage: ``python benchmarks/sync.py [--jobs 2000] [--datasets 10000] [--batch-size 500]
[--changed 0.01]``; the issue's figure: ``--jobs 10000 --datasets 50000``. Absolute times depend
on the machine and are dominated by the emulator's SQLite writes; the requests per 1,000 objects
and the light sync's ratios to the full snapshot are the comparable figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from airflow_blindata.blindata import ApiKeyCredentials, BlindataClient, RetryPolicy
from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.light import plan_of_jobs
from airflow_blindata.mapper.plan import (
    OPENLINEAGE_JOB,
    CatalogPlan,
    EntityKey,
    FlowEnd,
    PlannedEntity,
    PlannedField,
    PlannedFlow,
    PlannedRoutine,
    PlannedSystem,
)
from airflow_blindata.mapper.scopes import job_scope
from airflow_blindata.sync import RunReport, snapshot

UUID = "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
TENANT = "00000000-0000-4000-8000-00000000b1da"
USER = "bench"
SYSTEMS = 10
FIELDS_PER_DATASET = 5
SQL_EVERY = 5
JOB_NAMESPACE = "airflow-bench"
START_TIMEOUT = 30.0


@dataclass
class Counter(httpx.BaseTransport):
    """Counts what the client sends and receives."""

    inner: httpx.BaseTransport
    requests: int = 0
    sent: int = 0
    received: int = 0
    paths: dict[str, int] = field(default_factory=dict)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        path = f"{request.method} {request.url.path}"
        self.paths[path] = self.paths.get(path, 0) + 1
        self.sent += len(request.content)
        response = self.inner.handle_request(request)
        response.read()
        self.received += len(response.content)
        return response


def synthetic_plan(jobs: int, datasets: int) -> CatalogPlan:
    owner = (("openLineageOwner", UUID),)
    systems = [
        PlannedSystem(
            name=f"bench-db-{index}",
            origin="created",
            create=True,
            subtype="DATABASE",
            stamp=(("openLineageNamespace", f"postgres://bench-{index}:5432"), *owner),
            entity_creation=True,
        )
        for index in range(SYSTEMS)
    ]
    systems.append(
        PlannedSystem(
            name="OpenLineage",
            origin="openlineage",
            create=True,
            subtype="SERVICE",
            stamp=owner,
            entity_creation=True,
        )
    )
    keys = [
        EntityKey(system=f"bench-db-{i % SYSTEMS}", schema=f"schema_{i % 50}", name=f"table_{i}")
        for i in range(datasets)
    ]
    entities = [
        PlannedEntity(
            key=key, may_create=True, description=f"Table {key.name}", source=f"dataset {key}"
        )
        for key in keys
    ]
    fields = [
        PlannedField(entity=key, name=f"c{n}", type="varchar", ordinal_position=n + 1)
        for key in keys
        for n in range(FIELDS_PER_DATASET)
    ]
    job_keys = [
        EntityKey(system="OpenLineage", schema=JOB_NAMESPACE, name=f"dag_{j // 20}.task_{j}")
        for j in range(jobs)
    ]
    entities += [
        PlannedEntity(key=key, may_create=True, table_type=OPENLINEAGE_JOB, source=f"job {key}")
        for key in job_keys
    ]
    routines: list[PlannedRoutine] = []
    flows: list[PlannedFlow] = []
    for j, job in enumerate(job_keys):
        scope = job_scope(JOB_NAMESPACE, job.name)
        source, target = keys[(j * 5) % datasets], keys[(j * 5 + 1) % datasets]
        flows.append(
            PlannedFlow(
                scope=scope,
                name=f"{source.name} -> {target.name} @{JOB_NAMESPACE}/{job.name}",
                kind="table",
                evidence="io",
                source=FlowEnd(entity=source),
                target=FlowEnd(entity=target),
                description="observed",
            )
        )
        if j % 20:
            previous = job_keys[j - 1]
            flows.append(
                PlannedFlow(
                    scope=job_scope(JOB_NAMESPACE, job.name, orchestration=True),
                    name=f"{previous.name} -> {job.name} @orchestration",
                    kind="orchestration",
                    evidence="orchestration",
                    source=FlowEnd(entity=previous),
                    target=FlowEnd(entity=job),
                    description="Orchestration",
                )
            )
        if j % SQL_EVERY == 0:
            routines.append(
                PlannedRoutine(
                    system="OpenLineage",
                    catalog=JOB_NAMESPACE,
                    schema=JOB_NAMESPACE,
                    name=job.name,
                    definition=f"INSERT INTO {target.schema_}.{target.name} "
                    f"SELECT * FROM {source.schema_}.{source.name}",
                    sql_hash=f"sha256:{j}",
                    dialect="postgres",
                    job=scope,
                )
            )
    return CatalogPlan(
        definition_uuid=UUID,
        systems=systems,
        entities=entities,
        fields=fields,
        routines=routines,
        flows=flows,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_emulator(state: Path, api_key: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [str(Path(sys.executable).with_name("airflow-blindata")), "emulator"]
    command += ["--port", str(port), "--db", str(state), "--tenant", TENANT, "--user", USER]
    server = subprocess.Popen(
        [*command, "--log-level", "warning"],
        env={**os.environ, "BLINDATA_EMULATOR_API_KEY": api_key},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{url}/_emulator/health", timeout=1)
            return server, url
        except httpx.TransportError:
            time.sleep(0.1)
    server.terminate()
    raise SystemExit("the emulator did not start")


def peak_rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def written(report: RunReport) -> int:
    counters = report.counters
    names = ("entitiesDescribed", "fieldsDescribed", "routinesDescribed", "flowsDescribed")
    return sum(counters.get(name, 0) for name in names) + counters.get("systems", 0)


@dataclass
class Measured:
    requests: int
    seconds: float
    objects: int
    paths: dict[str, int]


def measure(
    label: str,
    plan: CatalogPlan,
    client: BlindataClient,
    counter: Counter,
    batch_size: int,
    *,
    light: bool = False,
) -> Measured:
    definition = JobDefinition.from_dict({"uuid": UUID})
    before = (counter.requests, counter.sent, counter.received)
    paths_before = dict(counter.paths)
    started = time.perf_counter()
    report = snapshot(plan, client, definition, batch_size=batch_size, light=light)
    elapsed = time.perf_counter() - started
    requests = counter.requests - before[0]
    traffic = (counter.sent - before[1] + counter.received - before[2]) / 1e6
    objects = written(report)
    print(
        f"{label}: {report.status}, {objects:,} objects in {elapsed:.1f} s "
        f"({objects / elapsed:,.0f}/s); {requests:,} requests = "
        f"{1000 * requests / objects:.2f} per 1,000 objects; {traffic:.1f} MB on the wire; "
        f"peak RSS {peak_rss_mb():.0f} MB",
        flush=True,
    )
    slowest = sorted(report.timings.items(), key=lambda item: -item[1])[:3]
    print(
        "  slowest phases: " + ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in slowest)
    )
    paths = {
        path: count - paths_before.get(path, 0)
        for path, count in counter.paths.items()
        if count > paths_before.get(path, 0)
    }
    if report.failures:
        print(report.render())
    return Measured(requests, elapsed, objects, paths)


def changed_jobs(jobs: int, share: float) -> list[tuple[str, str]]:
    """``share`` of the jobs, spread over the catalog (every n-th job)."""
    count = max(1, round(jobs * share))
    step = max(1, jobs // count)
    return [(JOB_NAMESPACE, f"dag_{j // 20}.task_{j}") for j in range(0, jobs, step)][:count]


def light_plan(plan: CatalogPlan, jobs: int, share: float) -> CatalogPlan:
    return plan_of_jobs(plan, changed_jobs(jobs, share))


def light_interval() -> float:
    """The light DAG's interval in seconds, from the shipped sync DAG."""
    from datetime import timedelta

    source = Path(__file__).resolve().parent.parent / "example_dags" / "blindata_sync.py"
    namespace: dict[str, object] = {}
    for line in source.read_text().splitlines():
        if line.startswith("LIGHT_INTERVAL ="):
            exec(line, {"timedelta": timedelta}, namespace)
    interval = namespace.get("LIGHT_INTERVAL")
    return interval.total_seconds() if isinstance(interval, timedelta) else 300.0


def light_mapping(jobs: int, share: float, work: Path) -> tuple[float, float]:
    """(light mapping, full mapping) seconds on a store of ``jobs`` Airflow-shaped jobs after a
    run of ``share`` of them (``benchmarks/scale.py``'s events)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from airflow_blindata.plans.store import Touched, plan_from_store
    from airflow_blindata.store import open_store
    from benchmarks.scale import DEFINITION, fill_store, job_events

    url = f"sqlite:///{work / 'events.db'}"
    definition = JobDefinition.from_dict(DEFINITION)
    events, size = fill_store(url, jobs, 1)
    with open_store(url) as store:
        started = time.perf_counter()
        plan_from_store(store, definition)  # the last sync: folds kept
        first = time.perf_counter() - started
        cursor = store.last_id()
        count = max(1, round(jobs * share))
        step = max(1, jobs // count)
        new = [e for job in range(0, jobs, step)[:count] for e in job_events(job, 2, start=1)]
        store.append_many(new)
        until = store.last_id()
        started = time.perf_counter()
        touched = Touched(store.jobs_since(cursor, until=until))
        plan = plan_from_store(store, definition, until=until, touched=touched, keep=False)
        part = plan_of_jobs(plan, touched.named, touched.datasets)
        light = time.perf_counter() - started
        started = time.perf_counter()
        plan_from_store(store, definition, until=until)
        full = time.perf_counter() - started
    print(
        f"mapping from a store of {jobs:,} Airflow-shaped jobs ({events:,} events, "
        f"{size / 1e6:.0f} MB; first mapping {first:.1f} s), after a run of "
        f"{len(touched.named):,} of them: light {light:.1f} s ({len(part.entities):,} entities, "
        f"{len(part.flows):,} flows kept), full {full:.1f} s: {light / full:.2f}x",
        flush=True,
    )
    return light, full


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2_000)
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--changed", type=float, default=0.01, help="share of jobs run (0.01)")
    parser.add_argument("--no-mapping", action="store_true", help="skip the mapping figure")
    args = parser.parse_args()

    started = time.perf_counter()
    plan = synthetic_plan(args.jobs, args.datasets)
    print(
        f"plan: {len(plan.systems)} Systems, {len(plan.entities):,} entities, "
        f"{len(plan.fields):,} fields, {len(plan.routines):,} routines, {len(plan.flows):,} flows "
        f"built in {time.perf_counter() - started:.1f} s; RSS {peak_rss_mb():.0f} MB",
        flush=True,
    )
    api_key = secrets.token_urlsafe(16)
    with tempfile.TemporaryDirectory(prefix="blindata-bench-") as work:
        server, url = start_emulator(Path(work) / "emulator.db", api_key)
        try:
            counter = Counter(httpx.HTTPTransport())
            retry = RetryPolicy(deadline=600.0)
            with BlindataClient(
                url,
                credentials=ApiKeyCredentials(USER, api_key),
                tenant=TENANT,
                retry=retry,
                timeout=300.0,
                transport=counter,
            ) as client:
                measure("first snapshot (creates)", plan, client, counter, args.batch_size)
                full = measure(
                    "second snapshot (refreshes)", plan, client, counter, args.batch_size
                )
                part = light_plan(plan, args.jobs, args.changed)
                light = measure(
                    f"light sync ({args.changed:.0%} of the jobs)",
                    part,
                    client,
                    counter,
                    args.batch_size,
                    light=True,
                )
        finally:
            server.terminate()
            server.wait(timeout=30)
        print(
            f"light sync against the second full snapshot: {light.requests:,} / "
            f"{full.requests:,} requests = {light.requests / full.requests:.1%} "
            f"({light.objects:,} / {full.objects:,} objects = "
            f"{light.objects / full.objects:.1%}); {light.seconds:.1f} / {full.seconds:.1f} s = "
            f"{light.seconds / full.seconds:.1%}"
        )
        print(
            "  light sync's requests: "
            + ", ".join(
                f"{path} {count}"
                for path, count in sorted(light.paths.items(), key=lambda item: -item[1])
            )
        )
        mapping = 0.0
        if not args.no_mapping:
            mapping, _ = light_mapping(args.jobs, args.changed, Path(work))
    interval = light_interval()
    total = light.seconds + mapping
    print(
        f"delay from a task's end to its lineage in Blindata, at most: the light DAG's "
        f"interval {interval:.0f} s + the light sync {total:.1f} s (mapping {mapping:.1f} s, "
        f"sync {light.seconds:.1f} s) = {(interval + total) / 60:.1f} min, plus the scheduler's "
        "start of the run"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
