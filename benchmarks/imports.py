"""What the provider costs a process that only loads it: its plugin, and the sync DAG's parse.

Every Airflow process that loads plugins (scheduler, DAG processor, API server, triggerer, each
``airflow`` command, each task) imports the provider's plugin; the DAG processor also parses the
sync DAG file. Measured in fresh processes (each import happens once per process), alternating
the variants so that a noisy machine affects them alike; medians over ``--rounds``:

* **plugin**: after ``import airflow`` and the OpenLineage provider's own plugin (which every such
  process loads anyway: the baseline), the time to import ``airflow_blindata.plugin``;
  capture on, through the listener (the default) and through ``BlindataTransport``
  (``[openlineage] transport``). Also the set-up a process pays on its first task or DAG event
  (``--setup``: imports and the store, done before the first fork).
* **DAG parse**: after ``import airflow.sdk``, the time to run ``example_dags/blindata_sync.py``
  against the same DAG with ``EmptyOperator`` tasks (a plain DAG).

Usage: ``python benchmarks/imports.py [--rounds 7]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SYNC_DAG = ROOT / "example_dags" / "blindata_sync.py"

PLUGIN_PROBE = r"""
import json, sys, time
start = time.perf_counter()
import airflow
import airflow.providers.openlineage.plugins.openlineage  # Airflow loads it in every such process
baseline = time.perf_counter()
if sys.argv[1] == "plugin":
    from airflow_blindata import plugin
loaded = time.perf_counter()
setup = None
if sys.argv[1] == "plugin" and sys.argv[2] == "setup":
    for listener in plugin.BlindataPlugin.listeners:
        listener.prepare()  # what the first task or DAG event of a process runs first
    setup = time.perf_counter() - loaded
print("TIMES " + json.dumps(
    {"airflow": baseline - start, "plugin": loaded - baseline, "setup": setup}
))
"""

DAG_PROBE = r"""
import json, runpy, sys, time
start = time.perf_counter()
import airflow.sdk
imported = time.perf_counter()
runpy.run_path(sys.argv[1])
parsed = time.perf_counter()
print("TIMES " + json.dumps({"airflow": imported - start, "dag": parsed - imported}))
"""

PLAIN_DAG = """
from datetime import timedelta
from pathlib import Path

import pendulum
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Param

DEFINITION = str(Path(__file__).with_name("blindata_sync.yaml"))

with DAG(
    dag_id="plain_sync",
    description="The sync DAG's shape with EmptyOperator tasks",
    schedule="@hourly",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    dagrun_timeout=timedelta(hours=1),
    default_args={"retries": 2, "retry_delay": timedelta(minutes=5)},
    params={
        "dry_run": Param(False, type="boolean", description="Cleanup reports, removes nothing"),
        "force": Param(False, type="boolean", description="Cleanup may exceed maxRemovalShare"),
    },
    tags=["blindata", "openlineage"],
) as dag:
    snapshot = EmptyOperator(task_id="snapshot")
    cleanup = EmptyOperator(task_id="cleanup", retries=0)
    snapshot >> cleanup
"""

PLAIN = "plain DAG (EmptyOperator)"
TRANSPORT = '{"type": "airflow_blindata.capture.transport.BlindataTransport"}'


def probe(script: str, args: list[str], env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("TIMES ")]
    if done.returncode or not lines:
        raise SystemExit(f"probe failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    times: dict[str, float] = json.loads(lines[-1].removeprefix("TIMES "))
    return times


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="fresh processes per variant (7)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="imports-bench-") as scratch:
        base = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("AIRFLOW__OPENLINEAGE__", "AIRFLOW__BLINDATA__", "OPENLINEAGE"))
        }
        base.update(
            {
                "AIRFLOW_HOME": str(Path(scratch) / "airflow"),
                "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__BLINDATA__STORE_URL": f"sqlite:///{Path(scratch) / 'events.db'}",
            }
        )
        modes = {
            "listener (default)": base,
            "transport": {**base, "AIRFLOW__OPENLINEAGE__TRANSPORT": TRANSPORT},
        }
        print(f"imports: {args.rounds} fresh processes per variant, {os.cpu_count()} CPUs")
        for mode, env in modes.items():
            runs: dict[str, list[dict[str, float]]] = {"baseline": [], "plugin": [], "setup": []}
            probe(PLUGIN_PROBE, ["plugin", "-"], env)  # warm-up: bytecode, page cache
            for _ in range(args.rounds):
                runs["baseline"].append(probe(PLUGIN_PROBE, ["baseline", "-"], env))
                runs["plugin"].append(probe(PLUGIN_PROBE, ["plugin", "-"], env))
                runs["setup"].append(probe(PLUGIN_PROBE, ["plugin", "setup"], env))
            airflow_ms = median_ms([run["airflow"] for run in runs["baseline"]])
            plugin_ms = median_ms([run["plugin"] for run in runs["plugin"]])
            setup_ms = median_ms([run["setup"] or 0.0 for run in runs["setup"]])
            print(
                f"plugin, capture via {mode:<18} import airflow + OpenLineage plugin "
                f"{airflow_ms:6.0f} ms | + blindata plugin {plugin_ms:5.1f} ms "
                f"({plugin_ms / airflow_ms:.1%}) | set-up on the first event {setup_ms:4.0f} ms",
                flush=True,
            )

        plain = Path(scratch) / "plain_sync.py"
        plain.write_text(PLAIN_DAG)
        dags = {PLAIN: str(plain), "example_dags/blindata_sync.py": str(SYNC_DAG)}
        parsed: dict[str, list[float]] = {name: [] for name in dags}
        probe(DAG_PROBE, [str(SYNC_DAG)], base)  # warm-up
        for _ in range(args.rounds):
            for name, path in dags.items():
                parsed[name].append(probe(DAG_PROBE, [path], base)["dag"])
        plain_ms = median_ms(parsed[PLAIN])
        for name, values in parsed.items():
            ms = median_ms(values)
            print(
                f"DAG parse after import airflow.sdk: {name:<30} {ms:6.1f} ms "
                f"({ms / plain_ms:.2f}x)"
            )


if __name__ == "__main__":
    main()
