"""Runs the demo pipeline, then the sync DAG, then the light sync DAG (nothing new: skipped), the
pipeline again and the light sync DAG again (it publishes the new run), each with ``dag.test()``,
capture on.

Run as a separate process (``python run_dags.py WORK_DIR``): Airflow reads its configuration when
first imported, so the environment is set before that import. The BLINDATA connection comes from
the caller's ``AIRFLOW_CONN_BLINDATA_DEFAULT``. Prints one JSON line: the state of each DAG run.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: tests.*
from tests.airflow_db import migrate_runner_home

work = Path(sys.argv[1])
dags = Path(__file__).resolve().parents[2] / "example_dags"
store = f"sqlite:///{work / 'events.db'}"
os.environ.update(
    {
        "AIRFLOW_HOME": str(work / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__OPENLINEAGE__NAMESPACE": "e2e",
        # Under dag.test() the SQL a hook ran in one task is reported again by the next tasks
        # (one process), so only the SQL task reports hook lineage. The sync DAG needs no rule:
        # capture leaves it out by itself (docs/operators.md).
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
        "AIRFLOW__BLINDATA__STORE_URL": store,
        # Capture through the transport: it also receives the SQL steps that hooks report.
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
            {"type": "airflow_blindata.capture.transport.BlindataTransport", "store_url": store}
        ),
        "AIRFLOW_CONN_DEMO_SQLITE": json.dumps(
            {"conn_type": "sqlite", "host": str(work / "warehouse.db")}
        ),
    }
)
migrate_runner_home()  # a copy of the test process's migrated database
sys.path.insert(0, str(dags))

from blindata_sync import dag as sync_dag  # noqa: E402  (after the environment is set)
from blindata_sync import light_dag  # noqa: E402
from demo_pipeline import dag as pipeline_dag  # noqa: E402

states = {"pipeline": str(pipeline_dag.test().state), "sync": str(sync_dag.test().state)}
states["light, nothing new"] = str(light_dag.test().state)
states["pipeline again"] = str(pipeline_dag.test().state)
states["light"] = str(light_dag.test().state)
print("STATES " + json.dumps(states), flush=True)
