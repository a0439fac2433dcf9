"""Mapping throughput: events/s folded and mapped, against ``json.loads`` of the same bytes.

A synthetic stream of Airflow-like task runs (START + COMPLETE per run, Postgres inputs and
outputs with schema and documentation facets, a SQL facet on half the jobs, the odd malformed
facet and unreadable line) is serialised to JSON lines, then measured in one process:

* floor: ``json.loads`` of every line;
* read: ``read_events`` (tolerant parsing into pydantic models, facets validated);
* fold: ``fold`` of the parsed events;
* build: the whole ``build`` (read + fold + Systems + entities + fields + routines).

With ``--dbt N``, the dbt fixtures (``tests/fixtures/openlineage/dbt``) repeated to N events,
each copy its own jobs and runs (one or two runs per job), are written to a JSON lines file and
planned from it (``plans.plan_files``, what ``airflow-blindata plan`` does), against
``json.loads`` of the same lines.

Times are CPU time (``time.process_time``: a shared machine's neighbours move it less than the
wall clock), best of ``--repeat``.

Usage: ``python benchmarks/mapping.py [--events 100000] [--dbt 40000] [--repeat 1]``. Prints one
line per stage with events/s and the ratio to the floor measured in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import random
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.fold import fold
from airflow_blindata.mapper.fold.reading import read_events
from airflow_blindata.mapper.report import Report

DEFINITION = JobDefinition.from_dict(
    {
        "uuid": "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "systemPolicies": [{"pattern": "postgres://*", "creation": "IF_MISSING"}],
    }
)


def synthetic_stream(count: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    lines: list[bytes] = []
    run = 0
    while len(lines) < count:
        run += 1
        job = f"dag_{run % 200}.task_{run % 37}"
        table = f"analytics.sales.t{run % 500}"
        columns = [
            {"name": f"c{i}", "type": "varchar", "description": f"column {i}"} for i in range(8)
        ]
        output = {
            "namespace": f"postgres://db{run % 3}:5432",
            "name": table,
            "facets": {
                "schema": {
                    "_producer": "p",
                    "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
                    "fields": columns,
                },
                "documentation": {"description": f"Table {table}"},
            },
        }
        inputs = [
            {"namespace": "postgres://db0:5432", "name": f"analytics.raw.r{rng.randrange(300)}"}
        ]
        job_facets: dict[str, Any] = {
            "jobType": {"processingType": "BATCH", "integration": "AIRFLOW", "jobType": "TASK"}
        }
        if run % 2:
            job_facets["sql"] = {
                "query": f"INSERT INTO {table} SELECT * FROM {inputs[0]['name']}",
                "dialect": "postgres",
            }
        if run % 97 == 0:
            output["facets"]["schema"] = {"fields": "not a list"}  # a malformed facet
        for event_type, second in (("START", 0), ("COMPLETE", 30)):
            event = {
                "eventType": event_type,
                "eventTime": f"2026-11-{1 + run % 28:02d}T10:{run % 60:02d}:{second:02d}.000Z",
                "producer": "https://github.com/apache/airflow/tree/providers-openlineage/2.20.3",
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                "run": {"runId": f"0190b1c2-0000-7000-8000-{run:012d}", "facets": {}},
                "job": {"namespace": "airflow", "name": job, "facets": job_facets},
                "inputs": inputs,
                "outputs": [output] if event_type == "COMPLETE" else [],
            }
            lines.append(json.dumps(event).encode())
        if run % 1000 == 0:
            lines.append(b"{not json")
    return lines[:count]


def decode_all(lines: list[bytes]) -> list[Any]:
    """The floor: ``json.loads`` of every line (a line that is not JSON costs its attempt)."""
    decoded: list[Any] = []
    for line in lines:
        try:
            decoded.append(json.loads(line))
        except ValueError:
            decoded.append(line.decode())
    return decoded


DBT_FIXTURES = Path(__file__).resolve().parent.parent / "tests/fixtures/openlineage/dbt"


def dbt_stream(count: int) -> list[bytes]:
    """The dbt fixtures repeated to ``count`` events: each copy's jobs and runs its own (run ids
    replaced wherever they appear, the parent facets' included), its datasets the same."""
    originals = [
        line
        for path in sorted(DBT_FIXTURES.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    run_ids = sorted({json.loads(line)["run"]["runId"] for line in originals})
    lines: list[bytes] = []
    copy = 0
    while len(lines) < count:
        copy += 1
        for line in originals:
            event = json.loads(line)
            event["job"]["name"] = f"{event['job']['name']}.copy{copy}"
            text = json.dumps(event)
            for run_id in run_ids:
                text = text.replace(run_id, str(uuid.uuid5(uuid.NAMESPACE_URL, f"{run_id}/{copy}")))
            lines.append(text.encode())
    return lines[:count]


def measure(
    label: str, action: Callable[[], object], events: int, floor: float | None, repeat: int = 1
) -> float:
    seconds = float("inf")
    for _ in range(repeat):
        gc.collect()
        started = time.process_time()
        action()
        seconds = min(seconds, time.process_time() - started)
    rate = events / seconds
    ratio = f"{seconds / floor:6.1f}x the json.loads time" if floor else "(floor)"
    print(f"{label:<34} {rate:>10,.0f} events/s  {seconds:7.2f} s  {ratio}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--dbt", type=int, default=0, help="dbt fixtures repeated to N events")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each stage, best kept")
    args = parser.parse_args()
    if args.events:
        synthetic(args.events, args.repeat)
    if args.dbt:
        dbt(args.dbt, args.repeat)


def floor_of(lines: list[bytes], repeat: int) -> float:
    """``json.loads`` of every line, each value dropped (as a reader that maps it would)."""

    def loads() -> None:
        for line in lines:
            with contextlib.suppress(ValueError):
                json.loads(line)

    return measure("json.loads (floor)", loads, len(lines), None, repeat)


def dbt(count: int, repeat: int) -> None:
    from airflow_blindata.plans.files import plan_files

    lines = dbt_stream(count)
    size = sum(len(line) for line in lines)
    print(f"dbt fixtures repeated: {len(lines):,} events, {size / 1e6:.1f} MB of JSON lines")
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "dbt.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        floor = floor_of(lines, repeat)
        measure(
            "plan from the file (plan_files)",
            lambda: plan_files([path], DBT_DEFINITION),
            len(lines),
            floor,
            repeat,
        )


DBT_DEFINITION = JobDefinition.from_dict(
    {
        "uuid": "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "systemPolicies": [{"pattern": "postgres://*", "creation": "IF_MISSING"}],
    }
)


def synthetic(events: int, repeat: int) -> None:
    lines = synthetic_stream(events)
    size = sum(len(line) for line in lines)
    print(f"{len(lines):,} events, {size / 1e6:.1f} MB of JSON lines")
    floor = floor_of(lines, repeat)
    decoded = decode_all(lines)
    parsed: list[Any] = []

    def read() -> None:
        parsed[:] = read_events(decoded, Report())

    measure("read_events (parse + validate)", read, len(lines), floor, repeat)
    measure("fold", lambda: fold(parsed), len(lines), floor, repeat)
    measure(
        "build from bytes (whole mapping)",
        lambda: build(lines, DEFINITION),
        len(lines),
        floor,
        repeat,
    )


if __name__ == "__main__":
    main()
