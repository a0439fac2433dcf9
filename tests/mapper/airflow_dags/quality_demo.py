"""SQL check operators whose OpenLineage events carry ``dataQualityAssertions``: one passes, one
fails. Runs against PostgreSQL (connection ``quality_pg``, schema ``$QUALITY_SCHEMA``): the
OpenLineage provider extracts check lineage only for databases whose hook describes itself."""

from __future__ import annotations

import os
from datetime import datetime

from airflow.providers.common.sql.operators.sql import (
    SQLColumnCheckOperator,
    SQLExecuteQueryOperator,
    SQLTableCheckOperator,
)
from airflow.sdk import DAG

SCHEMA = os.environ.get("QUALITY_SCHEMA", "quality_demo")
TABLE = f"{SCHEMA}.payments"

with DAG("quality_demo", schedule=None, start_date=datetime(2026, 1, 1), catchup=False) as dag:
    load = SQLExecuteQueryOperator(
        task_id="load",
        conn_id="quality_pg",
        sql=[
            f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}",
            f"CREATE TABLE IF NOT EXISTS {TABLE} (id INTEGER, amount REAL)",
            f"INSERT INTO {TABLE} VALUES (1, 10.0), (2, 20.0)",
        ],
    )
    columns_ok = SQLColumnCheckOperator(
        task_id="columns_ok",
        conn_id="quality_pg",
        table=TABLE,
        column_mapping={"id": {"null_check": {"equal_to": 0}}},
    )
    table_fails = SQLTableCheckOperator(
        task_id="table_fails",
        conn_id="quality_pg",
        table=TABLE,
        checks={"row_count_check": {"check_statement": "COUNT(*) = 1000"}},
    )
    load >> [columns_ok, table_fails]
