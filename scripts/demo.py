"""The demo behind ``./dev demo``: the provider against a Blindata emulator, as a user would run it.

1. serve the Blindata emulator with ``airflow-blindata emulator`` (state in ``.demo/``);
2. show that Airflow sees the provider and its connection type;
3. test the BLINDATA connection the way the Airflow UI does (``BlindataHook.test_connection``);
4. use the hook's client to catalogue a small warehouse: a System, entities, fields, a SQL routine
   analysed by the emulator's SQL lineage, and the data flows that analysis derived.

It grows into the end-to-end pipeline (Airflow DAGs → OpenLineage → store → sync) as those land.
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

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / ".demo"
BIN = Path(sys.executable).parent
TENANT = "00000000-0000-4000-8000-00000000b1da"
USER = "airflow"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def step(title: str) -> None:
    print(f"\n== {title}", flush=True)


def main() -> int:
    shutil.rmtree(DEMO, ignore_errors=True)
    (DEMO / "airflow").mkdir(parents=True)
    api_key = secrets.token_urlsafe(16)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    os.environ.update(
        {
            "AIRFLOW_HOME": str(DEMO / "airflow"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
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
    )

    step(f"Blindata emulator on {url} (state in .demo/blindata-emulator.db)")
    emulator = subprocess.Popen(
        [
            BIN / "airflow-blindata",
            "emulator",
            "--port",
            str(port),
            "--tenant",
            TENANT,
            "--user",
            USER,
            "--db",
            str(DEMO / "blindata-emulator.db"),
        ],
    )
    try:
        wait_until_up(url)
        step("Airflow sees the provider")
        for command in (["providers", "list"], ["providers", "hooks"]):
            out = subprocess.run(
                [BIN / "airflow", *command], capture_output=True, text=True, check=True
            ).stdout
            print("\n".join(line for line in out.splitlines() if "blindata" in line.lower()))

        step("Test the BLINDATA connection (as the Airflow UI's Test button does)")
        subprocess.run([BIN / "airflow-blindata", "check"], check=True)

        step("Catalogue a small warehouse through the hook's client")
        catalogue()
    finally:
        emulator.terminate()
        emulator.wait(timeout=10)
    print("\nDemo finished. Inspect what landed with: sqlite3 .demo/blindata-emulator.db")
    return 0


def wait_until_up(url: str) -> None:
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/_emulator/requests", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit(f"the emulator did not start on {url}")


def catalogue() -> None:
    from airflow_blindata.blindata.models import (
        AdditionalProperty,
        PhysicalEntity,
        PhysicalEntityRef,
        PhysicalField,
        QueryBucket,
        QueryStatement,
        Ref,
        RoutineType,
        System,
        SystemRoutine,
        SystemSubtype,
    )
    from airflow_blindata.hooks.blindata import BlindataHook

    with BlindataHook().get_conn() as client:
        api = client.api
        system = api.systems.create(
            System(
                name="Demo warehouse",
                subtype=SystemSubtype.DATABASE,
                technology="PostgreSQL",
                additional_properties=[
                    AdditionalProperty(name="openLineageNamespace", value="postgres://dwh:5432")
                ],
            )
        )
        ref = Ref(uuid=system.uuid or "")
        tables = {
            "orders": ["id", "customer_id", "amount"],
            "customers": ["id", "name"],
            "order_totals": ["customer_name", "total"],
        }
        entities = api.physical_entities.upload(
            PhysicalEntity(system=ref, schema="sales", name=name, table_type="TABLE")
            for name in tables
        )
        fields = api.physical_fields.upload(
            PhysicalField(
                physical_entity=PhysicalEntityRef(system=ref, schema="sales", name=table),
                name=column,
                ordinal_position=position,
            )
            for table, columns in tables.items()
            for position, column in enumerate(columns, start=1)
        )
        print(f"entities: {entities.created} created; fields: {fields.created} created")

        sql = (
            "INSERT INTO sales.order_totals (customer_name, total) "
            "SELECT c.name, SUM(o.amount) FROM sales.orders o "
            "JOIN sales.customers c ON o.customer_id = c.id GROUP BY c.name"
        )
        api.routines.upload(
            [
                SystemRoutine(
                    system=ref,
                    catalog="demo",
                    schema="demo",
                    name="build_order_totals",
                    type=RoutineType.SCRIPT,
                    definition=sql,
                )
            ]
        )
        routine = api.routines.first(systemUuid=system.uuid, name="build_order_totals")
        bucket = api.query_buckets.create(
            QueryBucket(name="OpenLineage SQL demo", systems=[ref], auto_generate_data_flows=True)
        )
        statement = api.statements.create(
            QueryStatement(
                query_bucket=Ref(uuid=bucket.uuid or ""),
                routine=Ref(uuid=routine.uuid or "") if routine else None,
                name="build_order_totals",
                query_text=sql,
                dialect="postgres",
                default_schema="sales",
            )
        )
        api.statements.analyze(statement.uuid or "")
        status = "PENDING"
        for _ in range(50):
            found = api.statements.first(bucketUuid=bucket.uuid)
            status = str(found.analysis_status) if found else "missing"
            if status != "PENDING":
                break
            time.sleep(0.1)
        print(f"SQL analysis of build_order_totals: {status}")
        names = {e.uuid: e.name for e in api.physical_entities.list(systemUuid=system.uuid)}
        field_names = {f.uuid: f.name for f in api.physical_fields.list(systemUuid=system.uuid)}
        print("data flows derived by the analysis:")
        for flow in api.dataflows.list(toSystemUuid=system.uuid):
            source = names.get(flow.from_physical_entity.uuid if flow.from_physical_entity else "")
            target = names.get(flow.to_physical_entity.uuid if flow.to_physical_entity else "")
            if flow.from_physical_field and flow.to_physical_field:
                source = f"{source}.{field_names.get(flow.from_physical_field.uuid)}"
                target = f"{target}.{field_names.get(flow.to_physical_field.uuid)}"
            print(f"  {source} -> {target}")


if __name__ == "__main__":
    sys.exit(main())
