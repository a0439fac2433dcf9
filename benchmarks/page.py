"""The Blindata page with a large store against an empty one: its reads must stay indexed.

Two SQLite stores (or a PostgreSQL schema each, ``--store-url``): an empty one, and one with
``--events`` events received over the last ``--days`` days from three sources (``received_at``
spread by rewriting the column after the append, as if they had arrived day by day), a
quarantined event per thousand and ``--syncs`` snapshot records with full reports. Each page's
data is read and its HTML rendered (``airflow_blindata.ui.views`` and the templates, the work a
request does after Airflow's auth check) ``--rounds`` times per store; the median times and the
ratio large / empty are printed. A ratio near 1 means the page does not grow with the store.

Usage: ``python benchmarks/page.py [--events 200000] [--syncs 2000] [--days 60] [--rounds 15]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _event(index: int) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-29T10:00:00.000Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.UUID(int=index + 1))},
        "job": {"namespace": f"ns-{index % 40}", "name": f"etl.job_{index % 2000}"},
        "inputs": [{"namespace": "postgres://db:5432", "name": f"a.s.in{index % 500}"}],
        "outputs": [{"namespace": "postgres://db:5432", "name": f"a.s.out{index % 2000}"}],
    }


def fill(url: str, events: int, syncs: int, days: int) -> None:
    from sqlalchemy import func, update

    from airflow_blindata.store import open_store
    from airflow_blindata.store.sql import SqlEventStore
    from tests.ui.seed import record_snapshot, snapshot_report

    with open_store(url) as store:
        assert isinstance(store, SqlEventStore)
        sources = ("transport", "listener", "receiver")
        step = 10_000
        for start in range(0, events, step):
            batch = [_event(i) for i in range(start, min(events, start + step))]
            store.append_many(batch, source=sources[(start // step) % 3])
        store.append_many([f"not json {i}" for i in range(events // 1000)], source="receiver")
        ev = store._tables.events
        with store._writing() as conn:  # spread over ``days``: as if received day by day
            offset = (ev.c.id % days) * 86400
            if store.backend == "sqlite":
                value = func.datetime(
                    ev.c.received_at, "-" + func.cast(offset, ev.c.kind.type) + " seconds"
                )
            else:
                value = ev.c.received_at - func.make_interval(0, 0, 0, 0, 0, 0, offset)
            conn.execute(update(ev).values(received_at=value))
        for index in range(syncs):
            record_snapshot(store, snapshot_report(index % 24), status="success")


def pages() -> dict[str, Callable[[], str]]:
    from airflow_blindata.ui import views
    from airflow_blindata.ui.app import _templates

    def render(name: str, read: Callable[[], dict[str, Any]]) -> Callable[[], str]:
        def page() -> str:
            context = read()
            return _templates().get_template(name).render(root="", store_url="", **context)

        return page

    return {
        "capture": render("capture.html", views.capture_page),
        "syncs": render("syncs.html", lambda: views.syncs_page(None, None)),
        "syncs, page 50": render("syncs.html", lambda: views.syncs_page(None, 1000)),
        "lands (chooser)": render("lands.html", lambda: views.lands_page(None, None)),
    }


def measure(url: str, rounds: int) -> dict[str, float]:
    os.environ["AIRFLOW__BLINDATA__STORE_URL"] = url
    found: dict[str, float] = {}
    for name, page in pages().items():
        page()  # warm: the schema check, the template compiled
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            page()
            times.append(time.perf_counter() - started)
        found[name] = statistics.median(times)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--syncs", type=int, default=2_000)
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--store-url", help="a PostgreSQL URL (a schema per store is created)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="blindata-page-bench-"))
    os.environ.setdefault("AIRFLOW_HOME", str(folder))
    tag = uuid.uuid4().hex[:8]
    if args.store_url:
        join = "&" if "?" in args.store_url else "?"
        empty, large = (f"{args.store_url}{join}schema=page_{n}_{tag}" for n in ("e", "l"))
    else:
        empty, large = (f"sqlite:///{folder / n}.db" for n in ("empty", "large"))
    started = time.perf_counter()
    fill(large, args.events, args.syncs, args.days)
    fill(empty, 0, 0, args.days)
    print(
        f"filled {args.events:,} events, {args.syncs:,} syncs in "
        f"{time.perf_counter() - started:.0f} s"
    )
    small, big = measure(empty, args.rounds), measure(large, args.rounds)
    for name in small:
        print(
            f"{name:18} empty {small[name] * 1000:7.1f} ms   large {big[name] * 1000:7.1f} ms"
            f"   ratio {big[name] / small[name]:5.1f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
