"""Mapping throughput: events/s folded and mapped, against ``json.loads`` of the same bytes.

A synthetic stream of Airflow-like task runs (START + COMPLETE per run, Postgres inputs and
outputs with schema and documentation facets, a SQL facet on half the jobs, the odd malformed
facet and unreadable line) is serialised to JSON lines, then measured in one process:

* floor: ``json.loads`` of every line;
* read: ``read_events`` (tolerant parsing into pydantic models, facets validated);
* fold: ``fold`` of the parsed events;
* build: the whole ``build`` (read + fold + Systems + entities + fields + routines).

Usage: ``python benchmarks/mapping.py [--events 100000]``. Prints one line per stage with
events/s and the ratio to the floor measured in the same run.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import time
from collections.abc import Callable
from typing import Any

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.fold import fold
from airflow_blindata.mapper.reading import read_events
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


def measure(label: str, action: Callable[[], object], events: int, floor: float | None) -> float:
    gc.collect()
    started = time.perf_counter()
    action()
    seconds = time.perf_counter() - started
    rate = events / seconds
    ratio = f"{seconds / floor:6.1f}x the json.loads time" if floor else "(floor)"
    print(f"{label:<34} {rate:>10,.0f} events/s  {seconds:7.2f} s  {ratio}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args()
    lines = synthetic_stream(args.events)
    size = sum(len(line) for line in lines)
    print(f"{len(lines):,} events, {size / 1e6:.1f} MB of JSON lines")
    floor = measure("json.loads (floor)", lambda: decode_all(lines), len(lines), None)
    decoded = decode_all(lines)
    parsed: list[Any] = []
    measure(
        "read_events (parse + validate)",
        lambda: parsed.extend(read_events(decoded, Report())),
        len(lines),
        floor,
    )
    measure("fold", lambda: fold(parsed), len(lines), floor)
    measure("build from bytes (whole mapping)", lambda: build(lines, DEFINITION), len(lines), floor)


if __name__ == "__main__":
    main()
