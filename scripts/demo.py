"""The demo behind ``./dev demo``: Airflow lineage captured and catalogued in a Blindata emulator.

1. serve the Blindata emulator with ``airflow-blindata emulator`` (state in ``.demo/``);
2. show that Airflow sees the provider, and test the BLINDATA connection as the UI does;
3. run the demo pipeline (``example_dags/demo_pipeline.py``: real SQL on SQLite) under
   ``dag.test()`` with capture on: every OpenLineage event goes to the embedded SQLite store;
4. run the sync DAG (``example_dags/blindata_sync.py``: snapshot, then cleanup), ``dag.test()``;
5. sync once more from the command line: nothing new is created, and the SQL analysis that
   Blindata ran in between has added column lineage;
6. print what landed in Blindata: Systems, entities, flows, routines, the run report.

It exits non-zero when nothing landed. ``python scripts/demo.py run-dags`` is step 3-4 alone (the
script runs it in a child process, because Airflow reads its configuration when imported).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / ".demo"
DAGS = ROOT / "example_dags"
DEFINITION = DAGS / "blindata_sync.yaml"
BIN = Path(sys.executable).parent
TENANT = "00000000-0000-4000-8000-00000000b1da"
USER = "airflow"
STORE = f"sqlite:///{DEMO / 'events.db'}"
EMULATOR_START_SECONDS = 30


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def step(title: str) -> None:
    print(f"\n== {title}", flush=True)


def environment(url: str, api_key: str) -> dict[str, str]:
    """Everything Airflow and the provider read, set before any of them is imported."""
    transport = {"type": "airflow_blindata.capture.transport.BlindataTransport"}
    return {
        "AIRFLOW_HOME": str(DEMO / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__OPENLINEAGE__NAMESPACE": "demo",
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps({**transport, "store_url": STORE}),
        # Under dag.test() every task runs in one process, and the SQL a hook ran is reported
        # again by the later tasks: only the SQL task reports hook lineage (in a real deployment
        # each task has its own process). The sync DAG needs no rule: capture leaves it out.
        "AIRFLOW__OPENLINEAGE__EMISSION_POLICY": json.dumps(
            [
                *(
                    {
                        "scope": {"dag_id": "blindata_demo_pipeline", "task_id": task},
                        "controls": {"hook_lineage": False},
                    }
                    for task in ("check_order_totals", "export_report")
                ),
            ]
        ),
        "AIRFLOW__BLINDATA__STORE_URL": STORE,
        "AIRFLOW_CONN_DEMO_SQLITE": json.dumps(
            {"conn_type": "sqlite", "host": str(DEMO / "warehouse.db")}
        ),
        "BLINDATA_EMULATOR_API_KEY": api_key,
        "AIRFLOW_CONN_BLINDATA_DEFAULT": json.dumps(
            {
                "conn_type": "blindata",
                "host": url,
                "login": USER,
                "password": api_key,
                "extra": {"tenant": TENANT, "auth_method": "api_key"},
            }
        ),
    }


def main() -> int:
    shutil.rmtree(DEMO, ignore_errors=True)
    (DEMO / "airflow").mkdir(parents=True)
    api_key = secrets.token_urlsafe(16)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    os.environ.update(environment(url, api_key))

    step(f"Blindata emulator on {url} (state in .demo/blindata-emulator.db)")
    emulator = subprocess.Popen(
        [
            BIN / "airflow-blindata",
            "emulator",
            *("--port", str(port), "--tenant", TENANT, "--user", USER),
            *("--db", str(DEMO / "blindata-emulator.db"), "--log-level", "warning"),
        ],
    )
    try:
        wait_until_up(url)
        return demo()
    finally:
        emulator.terminate()
        emulator.wait(timeout=10)


def demo() -> int:
    step("Airflow sees the provider; the BLINDATA connection works (the UI's Test button)")
    out = run([BIN / "airflow", "providers", "list"]).stdout
    print("\n".join(line for line in out.splitlines() if "blindata" in line.lower()))
    run([BIN / "airflow-blindata", "check"], show=True)

    step("Run the demo pipeline and the sync DAG with dag.test(), capture on")
    print("  (airflow db migrate, then two DAG runs: about half a minute; log in .demo/dags.log)")
    started = time.monotonic()
    log = DEMO / "dags.log"
    with log.open("w") as output:
        done = subprocess.run(
            [sys.executable, __file__, "run-dags"], stdout=output, stderr=subprocess.STDOUT
        )
    states = [line for line in log.read_text().splitlines() if line.startswith("STATES ")]
    print(f"  {states[-1] if states else 'no DAG ran'} in {time.monotonic() - started:.0f} s")
    if done.returncode != 0 or not states:
        print(f"error: the DAG runs failed, see {log}", file=sys.stderr)
        return 1
    run([BIN / "airflow-blindata", "store", "stats", "--store", STORE], show=True)

    step("Sync again from the command line: nothing new, and the SQL analysis has landed")
    sync = [*("--definition", str(DEFINITION), "--store", STORE)]
    again = run([BIN / "airflow-blindata", "snapshot", *sync, "--json"])
    (report,) = json.loads(again.stdout)
    counters = report["counters"]
    created = {name: value for name, value in counters.items() if "Created" in name and value}
    print(
        f"  status {report['status']}; created: {created or 'nothing'}; "
        f"refreshed {counters.get('entitiesRefreshed', 0)} entities and "
        f"{counters.get('flowsRefreshed', 0)} flows; "
        f"{counters.get('statementsAnalyzed', 0)} SQL statements analysed"
    )
    run([BIN / "airflow-blindata", "cleanup", *sync], show=True, check=False)

    step("What landed in Blindata")
    landed = show_catalog()
    step("The last sync reports (airflow-blindata report)")
    run(
        [
            BIN / "airflow-blindata",
            "report",
            "--definition",
            str(DEFINITION),
            "--limit",
            "2",
            "--store",
            STORE,
        ],
        show=True,
    )
    if not landed:
        print("error: nothing landed in Blindata", file=sys.stderr)
        return 1
    print(
        "\nDemo finished. Inspect the state with: sqlite3 .demo/blindata-emulator.db "
        '"SELECT name FROM physical_entities"'
    )
    return 0


def run(
    command: list[Any], *, show: bool = False, check: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True)
    if show:
        print(done.stdout, end="")
    if check and done.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command[:2]))} failed:\n{done.stderr[-2000:]}")
    return done


def wait_until_up(url: str) -> None:
    import httpx

    deadline = time.monotonic() + EMULATOR_START_SECONDS
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/_emulator/health", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit(f"the emulator did not start on {url}")


def show_catalog() -> bool:
    """Print Systems, entities, flows and routines; True when entities and flows landed."""
    from airflow_blindata.hooks.blindata import BlindataHook

    with BlindataHook().get_conn() as client:
        api = client.api
        systems = {s.uuid: s for s in api.systems.list()}
        entities = {e.uuid: e for e in api.physical_entities.list(page_size=1000)}
        fields = {f.uuid: f for f in api.physical_fields.list(page_size=1000)}
        flows = list(api.dataflows.list(page_size=1000))
        routines = list(api.routines.list(page_size=1000))
        statements = {s.routine.uuid: s for s in api.statements.list() if s.routine}

    def name(ref: Any, field: Any = None) -> str:
        entity = entities.get(ref.uuid) if ref else None
        if entity is None:
            return "?"
        text = f"{entity.schema_}.{entity.name}" if entity.schema_ else entity.name
        column = fields.get(field.uuid) if field else None
        return f"{text}.{column.name}" if column else text

    print("Systems")
    for system in systems.values():
        held = [e for e in entities.values() if e.system and e.system.uuid == system.uuid]
        print(
            f"  {system.name:<16} {system.subtype or '':<9} {system.technology or '':<12} "
            f"{len(held)} entities"
        )
    print("Entities")
    for entity in sorted(entities.values(), key=lambda e: (e.table_type or "", e.name)):
        system = systems.get(entity.system.uuid if entity.system else "")
        print(
            f"  {system.name if system else '?':<16} {entity.table_type or '':<16} {name(entity)}"
        )
    print("Data flows")
    for flow in sorted(flows, key=lambda f: (f.scope or "~", f.name)):
        kind = (
            "analysed SQL"
            if flow.query_statement
            else ("orchestration" if (flow.scope or "").endswith("#orchestration") else "declared")
        )
        print(
            f"  {kind:<13} {name(flow.from_physical_entity, flow.from_physical_field)} -> "
            f"{name(flow.to_physical_entity, flow.to_physical_field)}"
        )
    print("SQL routines (analysed by Blindata's SQL lineage)")
    for routine in routines:
        statement = statements.get(routine.uuid)
        status = statement.analysis_status if statement else "no statement"
        print(f"  {routine.name:<50} {status}")
    return bool(entities) and any(flow.scope for flow in flows)


def run_dags() -> int:
    """Steps 3 and 4, in a fresh process whose environment ``main`` has set."""
    airflow = BIN / "airflow"
    subprocess.run([str(airflow), "db", "migrate"], check=True, capture_output=True)
    sys.path.insert(0, str(DAGS))
    from blindata_sync import dag as sync_dag
    from demo_pipeline import dag as pipeline_dag

    states = {"pipeline": str(pipeline_dag.test().state), "sync": str(sync_dag.test().state)}
    print("STATES " + json.dumps(states), flush=True)
    return 0 if set(states.values()) == {"success"} else 1


if __name__ == "__main__":
    sys.exit(run_dags() if sys.argv[1:] == ["run-dags"] else main())
