"""Runs a DAG of ``airflow_dags/`` with ``dag.test()`` and the OpenLineage FileTransport.

Run as a separate process (``python run_lineage_dag.py EVENTS WORK_DIR [DAG_MODULE]``): Airflow
reads its configuration when first imported, so the environment is set before that import. The
DAG run's state is written to ``WORK_DIR/state.txt``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: tests.*
from tests.airflow_db import migrate_runner_home

events, work = Path(sys.argv[1]), Path(sys.argv[2])
dag_name = sys.argv[3] if len(sys.argv) > 3 else "lineage_demo"
here = Path(__file__).resolve().parent / "airflow_dags"
sys.path.insert(0, str(here))
os.environ.update(
    {
        "AIRFLOW_HOME": str(work / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(here),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
            {"type": "file", "log_file_path": str(events), "append": True}
        ),
        "AIRFLOW__OPENLINEAGE__NAMESPACE": "lineage-tests",
        # only the FileTransport captures here: the provider's own listener stays out of it
        "AIRFLOW__BLINDATA__LISTENER_ENABLED": "False",
        "AIRFLOW_CONN_QUALITY_PG": os.environ.get("BLINDATA_TEST_POSTGRES_URL", ""),
        "AIRFLOW_CONN_LINEAGE_SQLITE": json.dumps(
            {"conn_type": "sqlite", "host": str(work / "warehouse.db")}
        ),
    }
)
migrate_runner_home()  # a copy of the test process's migrated database

module = __import__(dag_name)  # after the environment is set
run = module.dag.test()
# the state goes to a file: forked OpenLineage children write to the same stdout
(work / "state.txt").write_text(str(run.state))
