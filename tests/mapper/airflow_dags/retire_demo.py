"""A DAG whose tasks the test chooses (``RETIRE_DEMO_TASKS``, comma-separated): run once with a
task, then again without it, its OpenLineage events show which tasks the DAG has now."""

from __future__ import annotations

import os
from datetime import datetime

from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, Asset


def _step() -> None:
    """Stands for a step that reads one file and writes another."""


TASKS = os.environ.get("RETIRE_DEMO_TASKS", "extract,load,report").split(",")

with DAG("retire_demo", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    previous = None
    for task_id in TASKS:
        step = PythonOperator(
            task_id=task_id,
            python_callable=_step,
            inlets=[Asset(f"file:///data/in/{task_id}.csv")],
            outlets=[Asset(f"file:///data/out/{task_id}.csv")],
        )
        if previous is not None:
            previous >> step
        previous = step
