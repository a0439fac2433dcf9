"""A small DAG whose OpenLineage events the lineage tests map: SQL against SQLite, and a Python
task with inlets and several outlets."""

from __future__ import annotations

from datetime import datetime

from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, Asset


def _split() -> None:
    """Stands for a non-SQL step that reads one table and writes two."""


with DAG("lineage_demo", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    create = SQLExecuteQueryOperator(
        task_id="create",
        conn_id="lineage_sqlite",
        sql=[
            "CREATE TABLE IF NOT EXISTS orders (id INTEGER, customer TEXT, amount REAL)",
            "CREATE TABLE IF NOT EXISTS totals (customer TEXT, total REAL)",
            "INSERT INTO orders VALUES (1, 'ana', 10.0), (2, 'bo', 5.5)",
        ],
    )
    aggregate = SQLExecuteQueryOperator(
        task_id="aggregate",
        conn_id="lineage_sqlite",
        sql="INSERT INTO totals SELECT customer, SUM(amount) FROM orders GROUP BY customer",
    )
    split = PythonOperator(
        task_id="split",
        python_callable=_split,
        inlets=[Asset("file:///data/in/orders.csv"), Asset("file:///data/in/customers.csv")],
        outlets=[Asset("file:///data/out/big_orders.csv"), Asset("file:///data/out/small.csv")],
    )
    create >> aggregate >> split
