"""``airflow-blindata ingest`` of a JSON lines file: events per CPU second and peak RSS.

The file holds the lean Airflow-shaped events of ``scale.py`` (START and COMPLETE of 6 runs per
job, about 6.7 KB of JSON each) up to ``--mb`` megabytes, with one event in a hundred written
twice (a duplicate) and one line in five thousand not JSON (quarantined). Each measurement runs in
a fresh process, on the same file, in the same run:

* the floor: ``json.loads`` of every line;
* capture's own path: ``store.append`` of each decoded event, one at a time (what
  ``BlindataTransport.emit`` does per event), for the first ``--append-events`` lines;
* ``ingest``: the command itself (``cli.main``) into a fresh store, its output printed; with
  ``--against DIR``, also the ``ingest`` of the checkout in ``DIR`` (the code before a change:
  ``git worktree add ../before main``), into a store of its own.

Times are CPU time of the measuring process (``time.process_time``, user + system), not wall
time: the machine is shared, and CPU time moves less with a neighbour's load. Peak RSS is the
process's (``ru_maxrss``).

Usage: ``python benchmarks/ingest.py [--mb 200] [--append-events 5000] [--repeat 1]
[--against ../before] [--postgres postgresql://root@127.0.0.1:5432/test]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RUNS = 6
DUPLICATE_EVERY = 100
BAD_EVERY = 5_000


def write_file(path: Path, megabytes: float) -> tuple[int, int]:
    """The events up to ``megabytes``; returns (lines, bytes)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.scale import job_events

    limit, lines, size, job, events = megabytes * 1_000_000, 0, 0, 0, 0
    with path.open("w", encoding="utf-8") as handle:
        while size < limit:
            for event in job_events(job, RUNS):
                events += 1
                text = (json.dumps(event) + "\n") * (2 if events % DUPLICATE_EVERY == 0 else 1)
                if events % BAD_EVERY == 0:
                    text += f'{{"eventType": "START", "n": {events}, not json}}\n'
                handle.write(text)
                lines += text.count("\n")
                size += len(text)
            job += 1
    return lines, size


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def child_floor(path: str) -> dict[str, Any]:
    start, count = time.process_time(), 0
    with Path(path).open("rb") as handle:
        for line in handle:
            with contextlib.suppress(ValueError):
                json.loads(line)
            count += 1
    return {"cpu": time.process_time() - start, "lines": count, "rss_mb": peak_rss_mb()}


def child_append(url: str, path: str, limit: str) -> dict[str, Any]:
    from airflow_blindata.store import open_store

    with open_store(url) as store:
        store.last_id()  # the schema created before the clock starts
        start, count = time.process_time(), 0
        with Path(path).open("rb") as handle:
            for line in handle:
                if count >= int(limit):
                    break
                try:
                    event: Any = json.loads(line)
                except ValueError:
                    event = line
                store.append(event, source="transport")
                count += 1
        cpu = time.process_time() - start
    return {"cpu": cpu, "lines": count, "rss_mb": peak_rss_mb()}


def child_ingest(url: str, path: str) -> dict[str, Any]:
    from airflow_blindata.cli.main import main

    out = io.StringIO()
    start = time.process_time()
    with contextlib.redirect_stdout(out):
        code = main(["ingest", "--store", url, path])
    cpu = time.process_time() - start
    return {"cpu": cpu, "code": code, "output": out.getvalue().strip(), "rss_mb": peak_rss_mb()}


def in_child(*arguments: str, code: str | None = None) -> dict[str, Any]:
    """``arguments`` measured in a fresh process; with ``code``, importing the package there."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([code, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, __file__, "--child", *arguments],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"child {arguments[0]} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def store_url(work: Path, postgres: str | None, name: str) -> str:
    if postgres is None:
        return f"sqlite:///{work / f'{name}.db'}"
    schema = f"bench_ingest_{uuid.uuid4().hex[:8]}"
    separator = "&" if "?" in postgres else "?"
    return f"{postgres}{separator}schema={schema}"


def best_ingest(
    work: Path, path: Path, args: argparse.Namespace, label: str, code: str | None
) -> dict[str, Any]:
    """The ingest of the least CPU time of ``--repeat``, each into a fresh store."""
    best: dict[str, Any] | None = None
    for attempt in range(args.repeat):
        url = store_url(work, args.postgres, f"{label}{attempt}")
        done = in_child("ingest", url, str(path), code=code)
        if done["code"] != 0:
            raise SystemExit(f"{label} failed: {done['output']}")
        if best is None or done["cpu"] < best["cpu"]:
            best = done
    assert best is not None
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200.0, help="size of the file (MB)")
    parser.add_argument("--append-events", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=1, help="ingests (the best is kept)")
    parser.add_argument("--postgres", help="ingest into PostgreSQL (a schema of its own)")
    parser.add_argument("--against", help="a checkout of the code before, measured too")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        measure = {"floor": child_floor, "append": child_append, "ingest": child_ingest}[kind]
        print(json.dumps(measure(*rest)))
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as directory:
        work = Path(directory)
        path = work / "events.jsonl"
        lines, size = write_file(path, args.mb)
        print(f"file: {lines:,} lines, {size / 1e6:,.0f} MB")
        floor = in_child("floor", str(path))
        print(
            f"floor (json.loads of each line): {lines / floor['cpu']:,.0f} lines per CPU s, "
            f"peak RSS {floor['rss_mb']:.0f} MB"
        )
        url = store_url(work, args.postgres, "append")
        append = in_child("append", url, str(path), str(args.append_events))
        append_rate = append["lines"] / append["cpu"]
        print(
            f"capture's path (store.append per event, first {append['lines']:,}): "
            f"{append_rate:,.0f} events per CPU s"
        )
        for label, code in [("ingest", None), ("before", args.against)]:
            if label == "before" and code is None:
                continue
            best = best_ingest(work, path, args, label, code)
            rate = lines / best["cpu"]
            print(f"{label}: {best['output']}")
            print(
                f"{label}: {rate:,.0f} events per CPU s ({best['cpu']:.1f} s), "
                f"{rate / append_rate:.2f}x capture's path, "
                f"{floor['cpu'] / best['cpu'] * 100:.1f}% of the floor's speed; "
                f"peak RSS {best['rss_mb']:.0f} MB"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
