"""A small warehouse pipeline on SQLite whose OpenLineage events the demo catalogues in Blindata.

It produces every kind of lineage the provider maps:

* ``load_raw`` (Python) loads two raw tables and declares them as outlets, with their schemas;
* ``build_order_totals`` (SQL) runs a real ``INSERT ... SELECT``: its SQL becomes a routine that
  Blindata's SQL lineage analyses for column flows, and its inlets and outlets the table flows;
* ``check_order_totals`` (SQL column check) tests the result;
* ``export_report`` (Python) writes the totals to a CSV file, another System.

SQLite tables have no lineage extractor in the OpenLineage provider, so the tasks declare their
datasets as OpenLineage ``Dataset`` inlets and outlets, in the namespace ``sqlite://demo-warehouse``
(the job definition next to the sync DAG creates a System for it). The database is the connection
``demo_sqlite`` (``AIRFLOW_CONN_DEMO_SQLITE='{"conn_type": "sqlite", "host": "/path/demo.db"}'``),
read by ``apache-airflow-providers-sqlite``: the ``dev`` extra (``./dev demo``) installs it;
a deployment running this DAG installs it itself (``Unknown hook type "sqlite"`` otherwise).
"""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import pendulum
from airflow.providers.common.sql.operators.sql import (
    SQLColumnCheckOperator,
    SQLExecuteQueryOperator,
)
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, BaseHook
from openlineage.client.event_v2 import Dataset
from openlineage.client.facet_v2 import documentation_dataset, schema_dataset

CONN_ID = "demo_sqlite"
NAMESPACE = "sqlite://demo-warehouse"
REPORT_NAMESPACE = "file"
REPORT_PATH = "/demo/reports/order_totals.csv"

CUSTOMERS = [(1, "Ana", "IT"), (2, "Bo", "SE"), (3, "Chen", "DE")]
ORDERS = [(10, 1, 25.0), (11, 1, 12.5), (12, 2, 40.0), (13, 3, 7.25)]


def _table(name: str, columns: dict[str, str], description: str) -> Dataset:
    fields = [schema_dataset.SchemaDatasetFacetFields(name=n, type=t) for n, t in columns.items()]
    return Dataset(
        namespace=NAMESPACE,
        name=name,
        facets={
            "schema": schema_dataset.SchemaDatasetFacet(fields=fields),
            "documentation": documentation_dataset.DocumentationDatasetFacet(
                description=description
            ),
        },
    )


RAW_CUSTOMERS = _table(
    "raw_customers",
    {"id": "INTEGER", "name": "TEXT", "country": "TEXT"},
    "Customers as loaded from the CRM export.",
)
RAW_ORDERS = _table(
    "raw_orders",
    {"id": "INTEGER", "customer_id": "INTEGER", "amount": "REAL"},
    "Orders as loaded from the shop.",
)
ORDER_TOTALS = _table(
    "order_totals",
    {"customer_name": "TEXT", "total": "REAL"},
    "Total amount ordered per customer, rebuilt by the demo pipeline.",
)
REPORT = Dataset(namespace=REPORT_NAMESPACE, name=REPORT_PATH)


def _database() -> str:
    return str(BaseHook.get_connection(CONN_ID).host)


def _load_raw() -> None:
    with sqlite3.connect(_database()) as db:
        db.execute("CREATE TABLE IF NOT EXISTS raw_customers (id INTEGER, name TEXT, country TEXT)")
        db.execute(
            "CREATE TABLE IF NOT EXISTS raw_orders (id INTEGER, customer_id INTEGER, amount REAL)"
        )
        db.execute("DELETE FROM raw_customers")
        db.execute("DELETE FROM raw_orders")
        db.executemany("INSERT INTO raw_customers VALUES (?, ?, ?)", CUSTOMERS)
        db.executemany("INSERT INTO raw_orders VALUES (?, ?, ?)", ORDERS)


def _export_report() -> None:
    database = _database()
    target = Path(database).with_name("order_totals.csv")
    with sqlite3.connect(database) as db, target.open("w", newline="") as out:
        rows = db.execute("SELECT customer_name, total FROM order_totals ORDER BY customer_name")
        writer = csv.writer(out)
        writer.writerow(["customer_name", "total"])
        writer.writerows(rows)


with DAG(
    dag_id="blindata_demo_pipeline",
    description="A SQLite warehouse pipeline whose lineage the Blindata demo catalogues",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    tags=["blindata", "demo"],
) as dag:
    load_raw = PythonOperator(
        task_id="load_raw", python_callable=_load_raw, outlets=[RAW_CUSTOMERS, RAW_ORDERS]
    )
    build_order_totals = SQLExecuteQueryOperator(
        task_id="build_order_totals",
        conn_id=CONN_ID,
        sql=[
            "CREATE TABLE IF NOT EXISTS order_totals (customer_name TEXT, total REAL)",
            "DELETE FROM order_totals",
            "INSERT INTO order_totals (customer_name, total) "
            "SELECT c.name, SUM(o.amount) FROM raw_orders o "
            "JOIN raw_customers c ON o.customer_id = c.id GROUP BY c.name",
        ],
        inlets=[RAW_ORDERS, RAW_CUSTOMERS],
        outlets=[ORDER_TOTALS],
    )
    check_order_totals = SQLColumnCheckOperator(
        task_id="check_order_totals",
        conn_id=CONN_ID,
        table="order_totals",
        column_mapping={"total": {"null_check": {"equal_to": 0}, "min": {"geq_to": 0}}},
    )
    export_report = PythonOperator(
        task_id="export_report",
        python_callable=_export_report,
        inlets=[ORDER_TOTALS],
        outlets=[REPORT],
    )
    load_raw >> build_order_totals >> check_order_totals >> export_report
