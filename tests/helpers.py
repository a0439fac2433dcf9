"""What the provider's tests share beyond the builders: the served emulator's tenants and users,
the planted SQL secrets, and every OpenLineage fixture event.

``emulator_settings`` is what ``served_emulator`` (``tests/conftest.py``) serves: two tenants,
the ETL user ``USER`` (API key ``API_KEY``) reaching only ``TENANT``, the steward ``HUMAN``
logging in with ``PASSWORD``; a test of a refused tenant uses ``OTHER_TENANT``. The secrets are
spelled so that a log or an error that carries one is easy to find. ``SQL_SECRETS`` are SQL
statements that carry ``SECRET`` (the redaction's cases, also planted by the mapper's and the
sync's tests); ``all_fixture_events`` reads every file of ``tests/fixtures/openlineage``.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from airflow_blindata.plans.eventfiles import read_event_file

TENANT = "11111111-1111-4111-8111-111111111111"
OTHER_TENANT = "22222222-2222-4222-8222-222222222222"
USER = "etl-user"
API_KEY = "k3y-that-must-never-be-logged"
PASSWORD = "pa55-that-must-never-be-logged"
HUMAN = "steward"


def emulator_settings() -> Any:
    """Two tenants; the ETL user may use only the first, the steward logs in with a password."""
    from blindata_emulator import EmulatorSettings, EmulatorUser

    return EmulatorSettings(
        tenants=[TENANT, OTHER_TENANT],
        users=[
            EmulatorUser(username=USER, password=API_KEY, tenants=[TENANT]),
            EmulatorUser(username=HUMAN, password=PASSWORD),
        ],
    )


SECRET = "Hunter2x9"
"""The secret each table below plants; no output may show it."""


SQL_SECRETS = {
    # (statement, its dialect as sqlglot names it): each was shown as written before
    "dollar-quoted": (f"ALTER ROLE etl PASSWORD $${SECRET}$$", "postgres"),
    "dollar-quoted with a tag": (f"ALTER ROLE etl PASSWORD $pw${SECRET}$pw$", "postgres"),
    "dollar-quoted after =": (f"CREATE USER etl WITH PASSWORD = $${SECRET}$$", "snowflake"),
    "MySQL SET PASSWORD FOR": (f"SET PASSWORD FOR bob = '{SECRET}'", "mysql"),
    "MySQL SET PASSWORD FOR user@host": (
        f"SET PASSWORD FOR 'bob'@'%' = '{SECRET}'; SELECT 1",
        "mysql",
    ),
    "MySQL # comment with an apostrophe": (
        f"# bob's account\nCREATE USER bob IDENTIFIED BY '{SECRET}'; SELECT 'x' FROM t",
        "mysql",
    ),
    "MySQL REPLACE the current password": (
        f"ALTER USER bob IDENTIFIED BY '***' REPLACE '{SECRET}'",
        "mysql",
    ),
    "a literal ending in a backslash": (
        f"INSERT INTO s.t SELECT 'C:\\' AS dir FROM s.u; ALTER ROLE etl PASSWORD '{SECRET}'",
        "postgres",
    ),
    "after a command": (f"PREPARE p AS ALTER USER u PASSWORD $${SECRET}$$; SELECT 1", "postgres"),
    "in a BigQuery script": (f"BEGIN\n-- it's\nALTER USER u PASSWORD '{SECRET}'; END", "bigquery"),
    "a comment's key: value": (f"-- etl password: {SECRET}\nINSERT INTO s.t SELECT 1", None),
    "a comment's JSON": (f'/* {{"api_key": "{SECRET}"}} */ INSERT INTO s.t SELECT 1', None),
    "a literal's JSON": (f"""SELECT '{{"password": "{SECRET}"}}'::jsonb""", "postgres"),
    "a comment's bearer token": (
        f"-- curl -H 'Authorization: Bearer {SECRET}'\nINSERT INTO s.t SELECT 1",
        None,
    ),
    "a literal's PEM key": (
        f"SELECT '-----BEGIN PRIVATE KEY-----\nMII{SECRET}\n-----END PRIVATE KEY-----' AS k",
        None,
    ),
    # a name that ends with a secret word names one too (found by probing producers' SQL)
    "MySQL CHANGE MASTER TO": (
        f"CHANGE MASTER TO MASTER_USER='r', MASTER_PASSWORD='{SECRET}'",
        "mysql",
    ),
    "MySQL 8 CHANGE REPLICATION SOURCE TO": (
        f"CHANGE REPLICATION SOURCE TO SOURCE_USER='r', SOURCE_PASSWORD='{SECRET}'",
        "mysql",
    ),
    "Trino's quoted connection-password": (
        f"CREATE CATALOG c USING postgresql WITH (\"connection-password\"='{SECRET}')",
        "trino",
    ),
    "a Flink option's key as a literal": (
        f"CREATE TABLE t (a INT) WITH ('connector'='jdbc', 'password'='{SECRET}')",
        None,
    ),
    "a Spark option's key and value as literals": (
        f"CREATE TABLE t USING jdbc OPTIONS ('url' 'jdbc:x', 'password' '{SECRET}')",
        "spark",
    ),
    "a dotted table property": (
        f"ALTER TABLE t SET TBLPROPERTIES ('db.password' = '{SECRET}')",
        "spark",
    ),
    "a column named db_password": (f"UPDATE s.users SET db_password = '{SECRET}'", None),
    "a conninfo's quoted password": (
        f"SELECT dblink_connect('c', 'host=db password=''{SECRET}''')",
        "postgres",
    ),
    "a conninfo's quoted password in an E-string": (
        f"SELECT dblink_connect('c', E'host=db password=\\'{SECRET}\\'')",
        "postgres",
    ),
    "a Hadoop dotted secret key": (
        f"CREATE TABLE t TBLPROPERTIES ('fs.s3a.secret.key'='{SECRET}')",
        "hive",
    ),
    # a secret passed by position to a function or a procedure
    "pgcrypto's pgp_sym_encrypt": (
        f"INSERT INTO s.t SELECT pgp_sym_encrypt(ssn, '{SECRET}') FROM s.u",
        "postgres",
    ),
    "MySQL's AES_ENCRYPT": (f"SELECT AES_ENCRYPT(ssn, '{SECRET}') FROM s.u", "mysql"),
    "MySQL's AES_ENCRYPT of a key built by a call": (
        f"SELECT AES_ENCRYPT(ssn, CONCAT('{SECRET}', salt)) FROM s.u",
        "mysql",
    ),
    "Snowflake's ENCRYPT": (f"SELECT ENCRYPT(v, '{SECRET}') FROM s.u", "snowflake"),
    "Oracle's DBMS_CLOUD.CREATE_CREDENTIAL": (
        f"BEGIN DBMS_CLOUD.CREATE_CREDENTIAL('C', 'etl', '{SECRET}'); END;",
        "oracle",
    ),
    "SQL Server's sp_addlinkedsrvlogin, schema-qualified": (
        f"EXEC master.dbo.sp_addlinkedsrvlogin 'SRV', 'false', NULL, 'etl', '{SECRET}'",
        "tsql",
    ),
    "SQL Server's sp_addlinkedsrvlogin": (
        f"EXEC sp_addlinkedsrvlogin 'SRV', 'false', NULL, 'etl', N'{SECRET}'",
        "tsql",
    ),
    # a SET's bare value, and Azure's settings that name the account after the secret word
    "Spark's SET of a secret name, unquoted": (f"SET spark.datasource.password={SECRET}", "spark"),
    "a SET with a comment after its value": (f"SET spark.x.password={SECRET} -- rotated", "spark"),
    "an Azure account key SET unquoted": (
        f"SET fs.azure.account.key.acct.dfs.core.windows.net = {SECRET};\nSELECT 1",
        "databricks",
    ),
    "an Azure account key as an option's literal key": (
        f"CREATE TABLE t USING delta OPTIONS ('fs.azure.account.key.acct.dfs.core.windows.net' "
        f"'{SECRET}', 'path' 'abfss://c@acct.dfs.core.windows.net/t')",
        "spark",
    ),
}


FIXTURES = Path(__file__).resolve().parent / "fixtures"


def all_fixture_events() -> list[object]:
    events: list[object] = []
    for path in sorted((FIXTURES / "openlineage").rglob("*.json*")):
        events.extend(read_event_file(path))
    return events


@contextmanager
def loopback_server(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on a free loopback port, as ``http://127.0.0.1:<port>``: a server
    that plays what the emulator cannot (a proxy, another Blindata)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
