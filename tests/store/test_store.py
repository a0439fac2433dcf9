"""The event store's contract, on SQLite and (when available) PostgreSQL."""

from __future__ import annotations

import importlib.metadata
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from packaging.version import Version

from airflow_blindata.events import event_key
from airflow_blindata.store import (
    AppendOutcome,
    EventStore,
    StoreSchemaError,
    StoreUnavailableError,
    StoreURLError,
    SyncRecord,
    open_store,
    redact_url,
    schema,
)
from airflow_blindata.store import core as core_module
from airflow_blindata.store.prepare import prepare

from .helpers import _libpq, dataset_event, event, job_event, postgres_base_url, postgres_schema

FIXTURES = Path(__file__).parents[1] / "fixtures" / "openlineage"

AIRFLOW_RELEASE = Version(importlib.metadata.version("apache-airflow")).release[:2]


def test_append_stores_once_and_reads_back(store: EventStore) -> None:
    raw = event("load", run="r1", event_type="START")
    assert store.append(raw) is AppendOutcome.ACCEPTED
    assert store.append(raw) is AppendOutcome.DUPLICATE
    reordered = json.dumps(dict(reversed(list(raw.items()))), indent=2)
    assert store.append(reordered) is AppendOutcome.DUPLICATE  # same content, other text
    (stored,) = store.events()
    assert stored.payload == raw
    assert stored.key == event_key(raw)
    assert (stored.kind, stored.job_namespace, stored.job_name) == ("RunEvent", "ns", "load")
    assert (stored.run_id, stored.event_type, stored.source) == ("r1", "START", "transport")
    assert stored.event_time == datetime.fromisoformat(raw["eventTime"])
    assert stored.received_at.tzinfo is not None


def test_text_and_bytes_are_read_as_json(store: EventStore) -> None:
    assert store.append(json.dumps(event("a"))) is AppendOutcome.ACCEPTED
    assert store.append(json.dumps(event("b")).encode()) is AppendOutcome.ACCEPTED
    assert [stored.job_name for stored in store.events()] == ["a", "b"]


def test_every_kind_of_event_is_indexed(store: EventStore) -> None:
    store.append(job_event("design"))
    store.append(dataset_event("public.orders"))
    kinds = {(s.kind, s.job_name, s.run_id) for s in store.events()}
    assert kinds == {("JobEvent", "design", None), ("DatasetEvent", None, None)}


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("this is not json", "not JSON"),
        (b"\xff\xfe garbage", "not JSON"),
        ("[1, 2]", "not a JSON object: got an array"),
        ({"hello": "world"}, "no run, job or dataset: not an OpenLineage event"),
        (event("x", time=None) | {"eventTime": 1700000000}, "eventTime: must be an ISO-8601"),
        (event("x") | {"eventTime": "yesterday"}, "eventTime"),
        (event("x") | {"run": {"facets": {}}}, "runId"),
    ],
    ids=["text", "bytes", "array", "not-an-event", "time-number", "time-text", "no-run-id"],
)
def test_unreadable_events_are_quarantined_with_the_reason(
    store: EventStore, raw: object, reason: str
) -> None:
    assert store.append(raw) is AppendOutcome.QUARANTINED  # type: ignore[arg-type]
    assert store.append(raw) is AppendOutcome.DUPLICATE  # type: ignore[arg-type]
    (kept,) = store.quarantine()
    assert reason in kept.reason
    assert kept.raw  # the text is kept, so nothing is lost
    assert list(store.events()) == []


def test_quarantine_keeps_the_exact_text(store: EventStore) -> None:
    store.append("not json at all: ünïcode \u2603")
    (kept,) = store.quarantine()
    assert kept.raw == "not json at all: ünïcode \u2603"


def test_the_stored_key_is_the_mappers_event_key() -> None:
    """``prepare`` computes the key from the text it stores; it must equal ``event_key``."""
    samples = [event("x"), event("ünïcode ☃"), event("lone \udc80 surrogate")]
    samples += [
        json.loads(line)
        for path in sorted((FIXTURES / "dbt").glob("*.jsonl"))
        for line in path.read_text().splitlines()[:3]
    ]
    for raw in samples:
        prepared = prepare(raw, source="t", received_at=datetime.now(UTC))
        assert prepared.key == event_key(raw)
        if not prepared.quarantined:  # the lone surrogate is (test_unstorable_events.py)
            assert json.loads(prepared.values["payload"]) == json.loads(json.dumps(raw))


def test_lone_surrogates_are_quarantined(store: EventStore) -> None:
    """Not Unicode text: nothing downstream could print or send it (test_unstorable_events)."""
    assert store.append(event("lone \udc80 surrogate")) is AppendOutcome.QUARANTINED
    assert list(store.events()) == []
    (kept,) = store.quarantine()
    assert kept.reason.startswith("job.name: holds a lone surrogate (\\udc80)")


def test_append_many_counts_and_batches(store: EventStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core_module, "BATCH_SIZE", 3)
    same = event("dup")
    items = [event(f"j{i}") for i in range(7)] + [same, same, "garbage", {"a": 1}]
    counts = store.append_many(items)
    assert (counts.accepted, counts.duplicate, counts.quarantined) == (8, 1, 2)
    assert store.append_many([same]).duplicate == 1
    assert {s.source for s in store.events()} == {"ingest"}


def test_a_batch_is_stored_in_order_with_the_same_event_once(store: EventStore) -> None:
    """A batch's events go in one statement: in the order given, an event sent twice in it (in
    any key order) stored once and counted a duplicate, a bad one quarantined beside them."""
    first, second, third = event("first"), event("second"), event("third")
    items = [first, second, dict(reversed(first.items())), "garbage", second, third]
    counts = store.append_many(items)
    assert (counts.accepted, counts.duplicate, counts.quarantined) == (3, 2, 1)
    assert list(counts.quarantine_reasons) == [3]
    assert [stored.job_name for stored in store.events()] == ["first", "second", "third"]
    again = store.append_many([third, event("fourth"), "garbage"])
    assert (again.accepted, again.duplicate, again.quarantined) == (1, 2, 0)
    assert [stored.job_name for stored in store.events()][-1] == "fourth"


def test_events_by_cursor_job_and_time(store: EventStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core_module, "PAGE_SIZE", 4)  # several pages
    for i in range(10):
        store.append(event("a" if i % 2 else "b", run=f"r{i}"))
    everything = list(store.events())
    ids = [stored.id for stored in everything]
    assert ids == sorted(ids) and len(set(ids)) == 10
    assert store.last_id() == ids[-1]
    assert [s.id for s in store.events(since=ids[3])] == ids[4:]
    assert {s.job_name for s in store.events(job=("ns", "a"))} == {"a"}
    assert len(list(store.events(job=("ns", "a")))) == 5
    assert list(store.events(job=("other", "a"))) == []
    later = everything[-1].received_at
    assert list(store.events(received_after=later)) == []
    assert len(list(store.events(received_after=later - timedelta(days=1)))) == 10


def test_empty_store(store: EventStore) -> None:
    assert store.last_id() == 0
    assert list(store.events()) == []
    stats = store.stats()
    assert (stats.events, stats.jobs, stats.quarantined, stats.last_id) == (0, 0, 0, 0)
    assert stats.oldest_received_at is None


def test_stats(store: EventStore) -> None:
    store.append(event("a", namespace="airflow"))
    store.append(event("b", namespace="airflow"))
    store.append(event("c", namespace="dbt"))
    store.append(dataset_event())
    store.append("nope")
    stats = store.stats()
    assert stats.events == 4 and stats.jobs == 3 and stats.quarantined == 1
    assert stats.events_by_namespace == {"(dataset events)": 1, "airflow": 2, "dbt": 1}
    assert stats.events_by_kind == {"RunEvent": 3, "DatasetEvent": 1}
    assert stats.oldest_received_at and stats.newest_received_at
    assert stats.oldest_received_at <= stats.newest_received_at
    assert stats.newest_received_at.tzinfo is not None
    assert stats.size_bytes and stats.size_bytes > 0
    assert stats.schema_version == schema.SCHEMA_VERSION


def test_sync_history(store: EventStore) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i, (kind, status) in enumerate(
        [("snapshot", "success"), ("cleanup", "refused"), ("snapshot", "failed")]
    ):
        store.record_sync(
            SyncRecord(
                definition_uuid="d1",
                kind=kind,
                started_at=start + timedelta(hours=i),
                finished_at=start + timedelta(hours=i, minutes=1),
                status=status,
                report={"counters": {"uploaded": i}},
            )
        )
    newest_first = store.sync_history("d1")
    assert [r.status for r in newest_first] == ["failed", "refused", "success"]
    assert newest_first[0].report == {"counters": {"uploaded": 2}}
    assert newest_first[0].started_at == start + timedelta(hours=2)
    assert [r.status for r in store.sync_history("d1", kind="snapshot", limit=1)] == ["failed"]
    assert store.sync_history("other") == []
    assert store.stats().sync_records == 3


def test_sync_record_checks_its_kind_and_status() -> None:
    now = datetime.now(UTC)
    with pytest.raises(ValueError, match="sync kind"):
        SyncRecord("d", "upload", now, now, "success")
    with pytest.raises(ValueError, match="sync status"):
        SyncRecord("d", "snapshot", now, now, "ok")


def test_a_newer_schema_is_refused(store_url: str) -> None:
    with open_store(store_url) as store:
        store.append(event("a"))
        meta = store._tables.meta  # type: ignore[attr-defined]
        with store._writing() as conn:  # type: ignore[attr-defined]
            conn.execute(meta.update().values(value="99"))
    with open_store(store_url) as newer, pytest.raises(StoreSchemaError, match="version 99"):
        newer.append(event("b"))


def test_an_upgrade_keeps_the_stored_events(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A migration step runs once, in order, and the events stored before it are still read."""
    from sqlalchemy import text

    with open_store(store_url) as old:
        old.append(event("before", run="r0"))
    ran: list[int] = []
    newer = schema.SCHEMA_VERSION + 1

    def step(conn: object, tables: schema.Tables) -> None:
        ran.append(newer)
        name = tables.events.name
        prefix = f'"{tables.events.schema}".' if tables.events.schema else ""
        conn.execute(text(f"CREATE INDEX upgraded_idx ON {prefix}{name} (kind)"))  # type: ignore[attr-defined]

    monkeypatch.setattr(schema, "SCHEMA_VERSION", newer)
    monkeypatch.setattr(core_module, "SCHEMA_VERSION", newer)
    monkeypatch.setitem(schema.MIGRATIONS, newer, step)
    with open_store(store_url) as new:
        new.append(event("after"))
        assert [s.job_name for s in new.events()] == ["before", "after"]
    with open_store(store_url) as again:
        assert len(list(again.events())) == 2
    assert ran == [newer]


def test_default_and_configured_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AIRFLOW__BLINDATA__STORE_URL", raising=False)
    with open_store() as store:
        assert store.url == f"sqlite:///{tmp_path / 'home' / 'blindata' / 'events.db'}"
        store.append(event("a"))
    assert (tmp_path / "home" / "blindata" / "events.db").exists()
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", f"sqlite:///{tmp_path / 'other.db'}")
    with open_store() as store:
        assert store.url.endswith("other.db")


def test_a_relative_sqlite_store_url_in_the_configuration_is_read_from_airflow_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every Airflow process starts in a directory of its own: a relative path in ``[blindata]
    store_url`` would give each its own file. An explicit ``--store`` keeps the working
    directory."""
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", "sqlite:///stores/events.db?timeout=2")
    monkeypatch.chdir(tmp_path)
    with open_store() as store:
        store.append(event("a"))
        assert store.url == f"sqlite:///{tmp_path / 'home' / 'stores' / 'events.db'}"
    assert (tmp_path / "home" / "stores" / "events.db").exists()
    assert not (tmp_path / "stores").exists()


def test_a_sqlite_store_url_under_the_home_is_the_same_file_wherever_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sqlite:///~/x.db`` in ``[blindata] store_url`` was ``$AIRFLOW_HOME/~/x.db``, and the same
    URL given to ``--store`` ``$HOME/x.db``: capture wrote one file, the CLI read another (a probe
    of deployments)."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", "sqlite:///~/stores/events.db")
    monkeypatch.chdir(tmp_path)
    with open_store() as configured, open_store("sqlite:///~/stores/events.db") as given:
        assert configured.url == given.url == f"sqlite:///{tmp_path / 'user/stores/events.db'}"


def test_a_sqlite_connections_relative_path_is_read_from_airflow_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``airflow-conn://events`` with a SQLite connection whose host is ``blindata/events.db``
    opened that path from each process's working directory: two stores (a probe)."""
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AIRFLOW_CONN_EVENTS", "sqlite://blindata%2Fevents.db")
    monkeypatch.chdir(tmp_path)
    with open_store("airflow-conn://events") as store:
        assert store.url == f"sqlite:///{tmp_path / 'home/blindata/events.db'}"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://u:pw@h/db", "no event store for mysql://"),
        ("just-a-path.db", "expected scheme://"),
        ("sqlite:///x.db?journal=off", "unknown SQLite store option(s) journal"),
        ("sqlite:///x.db?synchronous=off", "synchronous must be one of"),
        ("sqlite://", "needs a file"),
        ("airflow-conn://", "needs a connection id"),
        ("sqlite:///~no-such-user-here/events.db", "names no home directory"),
    ],
)
def test_bad_urls_are_refused_clearly(url: str, message: str) -> None:
    with pytest.raises(StoreURLError) as raised:
        open_store(url)
    assert message in str(raised.value)
    assert "pw" not in str(raised.value)


def test_passwords_never_show() -> None:
    assert redact_url("postgresql://bob:s3cret@db:5432/x") == "postgresql://bob:***@db:5432/x"
    assert "s3cret" not in redact_url("postgresql://bob:s3cret@[bad")


@pytest.mark.postgres
@pytest.mark.parametrize(
    "url",
    [
        "postgresql://root:s3cret-pw@127.0.0.1:1/test?connect_timeout=1",
        # libpq takes the password as a parameter too
        "postgresql://root@127.0.0.1:1/test?password=s3cret-pw&connect_timeout=1",
        "postgresql://root@127.0.0.1:1/test?connect_timeout=1&sslpassword=s3cret%2Dpw",
    ],
)
def test_postgres_errors_hide_the_password(url: str) -> None:
    pytest.importorskip("psycopg")
    from airflow_blindata.store import StoreUnavailableError

    store = open_store(url)
    assert "s3cret" not in store.url and "***" in store.url
    assert "s3cret" not in repr(store)
    with pytest.raises(StoreUnavailableError) as raised:
        store.append(event("a"))
    assert "s3cret" not in str(raised.value)
    assert "127.0.0.1" in str(raised.value)
    with pytest.raises(StoreUnavailableError) as raised:
        store.stats()
    assert "s3cret" not in str(raised.value)


def test_airflow_connection_urls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from airflow_blindata.store import urls

    monkeypatch.setenv(
        "AIRFLOW_CONN_BD_STORE",
        json.dumps(
            {
                "conn_type": "postgres",
                "host": "db.example",
                "port": 5433,
                "login": "bob",
                "password": "p@ss/word",
                "schema": "lineage",
                "extra": {"sslmode": "require", "schema": "blindata"},
            }
        ),
    )
    url = urls._connection_url("bd_store")
    assert url.startswith("postgresql+psycopg://bob:p%40ss%2Fword@db.example:5433/lineage?")
    assert "sslmode=require" in url and "schema=blindata" in url
    monkeypatch.setenv(
        "AIRFLOW_CONN_BD_FILE", json.dumps({"conn_type": "sqlite", "host": str(tmp_path / "s.db")})
    )
    with open_store("airflow-conn://bd_file") as store:
        store.append(event("a"))
        assert store.url == f"sqlite:///{tmp_path / 's.db'}"
    monkeypatch.setenv("AIRFLOW_CONN_BD_HTTP", json.dumps({"conn_type": "http", "host": "h"}))
    with pytest.raises(StoreURLError, match="needs postgres or sqlite"):
        open_store("airflow-conn://bd_http")
    with pytest.raises(StoreURLError, match="connection 'bd_nowhere' could not be read: it is not"):
        open_store("airflow-conn://bd_nowhere")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"shema": "blindata"},
            "extra has 'shema', which the store does not read: did you mean 'schema'?",
        ),
        (
            {"search_path": "blindata"},
            "extra has 'search_path', which the store does not read: did you mean 'schema'?",
        ),
        ({"Schema": "blindata"}, "did you mean 'schema'?"),
        (
            {"ssl_mode": "require"},
            "extra has 'ssl_mode', which the store does not read: did you mean 'sslmode'?",
        ),
        ({"statement-timeout": 5000}, "did you mean 'statement_timeout'?"),
        (
            {"colour": "blue"},
            "extra has 'colour', which the store does not read: it reads schema, timeout",
        ),
        # not sslpassword, which it is close to: the connection's own field
        (
            {"password": "hunter2secret"},
            "extra has 'password': give it in the connection's Password field",
        ),
        # JSON text of JSON text: Airflow reads a string (a probe of the BLINDATA connection)
        (
            json.dumps(json.dumps({"schema": "blindata"})),
            "extra is not a JSON object (a JSON string holding one",
        ),
    ],
    ids=[
        *("typo", "another-tools-name", "case", "libpq-typo", "dash", "unknown"),
        *("a-connection-field", "double-encoded"),
    ],
)
def test_a_key_of_a_postgres_connections_extra_the_store_does_not_read_is_refused_naming_it(
    extra: object, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dropped without a word, ``{"shema": "blindata"}`` put the store's tables in the database's
    ``public`` schema, Airflow's own metadata database's when it is shared (a probe)."""
    connection = {
        "conn_type": "postgres",
        "host": "127.0.0.1",
        "login": "root",
        "password": "hunter2secret",
        "schema": "test",
        "extra": extra,
    }
    monkeypatch.setenv("AIRFLOW_CONN_BD_TYPO", json.dumps(connection))
    with pytest.raises(StoreURLError) as raised:
        open_store("airflow-conn://bd_typo")
    if AIRFLOW_RELEASE < (3, 2) and not isinstance(extra, dict):
        # Airflow 3.1 drops a connection whose extra is no JSON object as undefined before
        # the store reads it (the floors' run): said so, not read
        message = "it is not defined"
    assert message in str(raised.value)
    assert "the store's connection 'bd_typo'" in str(raised.value)
    assert "hunter2secret" not in str(raised.value)


def test_a_postgres_connection_shared_with_airflows_postgres_hook_keeps_its_libpq_parameters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The postgres hook's own keys (IAM, Redshift, its cursor) are left out without a word;
    libpq's parameters, which the hook hands to the driver, go in the store's URL too."""
    from sqlalchemy.engine import make_url

    from airflow_blindata.store import urls

    extra = {
        "schema": "blindata",
        "iam": False,
        "aws_conn_id": "aws_default",
        "cursor": "dictcursor",
        "sqlalchemy_scheme": "postgresql+psycopg2",
        "cluster-identifier": "dwh",
        "keepalives": True,
        "keepalives_idle": 30,
        "target_session_attrs": "read-write",
        "sslmode": "prefer",
        "application_name": "",
    }
    connection = {"conn_type": "postgres", "host": "db.example", "schema": "lineage"}
    monkeypatch.setenv("AIRFLOW_CONN_BD_SHARED", json.dumps({**connection, "extra": extra}))
    query = dict(make_url(urls._connection_url("bd_shared")).query)
    assert query == {
        "schema": "blindata",
        "keepalives": "1",
        "keepalives_idle": "30",
        "target_session_attrs": "read-write",
        "sslmode": "prefer",
    }


@pytest.mark.postgres
def test_a_postgres_store_opens_through_a_connection_with_libpq_parameters_in_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server sees the parameters: the store's sessions carry the connection's
    ``fallback_application_name`` (dropped before, as every key but a few)."""
    import uuid

    import psycopg
    from sqlalchemy.engine import make_url

    base = postgres_base_url()
    parsed = make_url(base)
    name = f"bd-store-{uuid.uuid4().hex[:8]}"
    with postgres_schema(base) as url:
        extra = {
            "schema": make_url(url).query["schema"],
            "fallback_application_name": name,
            "keepalives_idle": 30,
            "aws_conn_id": "aws_default",
        }
        connection = {
            "conn_type": "postgres",
            "host": parsed.host,
            "port": parsed.port or 5432,
            "login": parsed.username,
            "password": parsed.password,
            "schema": parsed.database,
            "extra": extra,
        }
        monkeypatch.setenv("AIRFLOW_CONN_BD_LIBPQ", json.dumps(connection))
        with open_store("airflow-conn://bd_libpq") as store:
            assert store.append(event("through_the_connection")) is AppendOutcome.ACCEPTED
            assert [e.job_name for e in store.events()] == ["through_the_connection"]
            with psycopg.connect(_libpq(base)) as conn:
                sessions = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
                ).fetchone()
            assert sessions is not None and sessions[0] >= 1


def test_a_postgres_connection_whose_host_is_a_unix_socket_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """libpq and Airflow's postgres hook take a directory as the host (a Unix socket's): the
    store's URL carries it as ``?host=``, not as its authority (where the slashes would end the
    host and make the directory the database's name)."""
    from airflow_blindata.store import urls

    connection = {"conn_type": "postgres", "host": "/var/run/postgresql", "port": 5433}
    monkeypatch.setenv("AIRFLOW_CONN_BD_SOCKET", json.dumps({**connection, "schema": "lineage"}))
    from sqlalchemy.engine import make_url

    parsed = make_url(urls._connection_url("bd_socket"))
    assert (parsed.host, parsed.port, parsed.database) == (None, 5433, "lineage")
    assert parsed.query["host"] == "/var/run/postgresql"


def test_a_postgres_store_reached_through_a_unix_socket_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    base = postgres_base_url()
    with psycopg.connect(_libpq(base)) as conn:
        row = conn.execute("SHOW unix_socket_directories").fetchone()
    directories = [d.strip() for d in str(row[0] if row else "").split(",") if d.strip()]
    socket_dir = next((d for d in directories if Path(d).is_dir()), None)
    if socket_dir is None:
        pytest.skip("the test server listens on no Unix socket directory here")
    parsed = make_url(base)
    with postgres_schema(base) as url:
        connection = {
            "conn_type": "postgres",
            "host": socket_dir,
            "port": parsed.port or 5432,
            "login": parsed.username,
            "password": parsed.password,
            "schema": parsed.database,
            "extra": {"schema": make_url(url).query["schema"]},
        }
        monkeypatch.setenv("AIRFLOW_CONN_BD_SOCKET", json.dumps(connection))
        try:
            with open_store("airflow-conn://bd_socket") as store:
                assert store.append(event("over_the_socket")) is AppendOutcome.ACCEPTED
                assert [e.job_name for e in store.events()] == ["over_the_socket"]
        except StoreUnavailableError as error:
            if "authentication" in str(error) or "pg_hba" in str(error):
                pytest.skip(f"the server does not let this user in over its socket: {error}")
            raise


def test_store_url_from_a_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``[blindata] store_url`` is sensitive: ``store_url_cmd`` works (its newline stripped)."""
    monkeypatch.delenv("AIRFLOW__BLINDATA__STORE_URL", raising=False)
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL_CMD", f"echo sqlite:///{tmp_path / 'c.db'}")
    with open_store() as store:
        assert store.url == f"sqlite:///{tmp_path / 'c.db'}"


def test_a_mapping_that_contains_itself_is_quarantined(store: EventStore) -> None:
    raw = event("loop")
    raw["self"] = raw
    assert store.append(raw) is AppendOutcome.QUARANTINED
    (kept,) = store.quarantine()
    assert "contains itself" in kept.reason


def test_sqlite_direct_and_batched_appends_write_the_same_rows(sqlite_url: str) -> None:
    """``append`` goes through the driver directly, ``append_many`` through SQLAlchemy."""
    import sqlite3

    moment = "2026-03-01T10:00:00.123456+02:00"
    with open_store(sqlite_url) as store:
        store.append(event("direct", time=moment))
        store.append_many([event("batched", time=moment)])
        store.append(b"\x00garbage")
        store.append_many([b"\x00more garbage"])
        direct, batched = store.events()
        assert direct.event_time == batched.event_time == datetime.fromisoformat(moment)
        assert direct.received_at.tzinfo is not None and batched.received_at.tzinfo is not None
        assert [q.raw for q in store.quarantine()] == ["\x00garbage", "\x00more garbage"]
    path = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as raw:
        rows = raw.execute("SELECT event_time, typeof(received_at) FROM blindata_events").fetchall()
        kinds = raw.execute("SELECT typeof(raw) FROM blindata_quarantine").fetchall()
    assert rows == [("2026-03-01 08:00:00.123456", "text")] * 2
    assert kinds == [("blob",), ("blob",)]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://db/x?password=s3cret", "postgresql://db/x?password=***"),
        (
            "postgresql://bob@db/x?sslmode=require&PASSWORD=s3cret&connect_timeout=5",
            "postgresql://***@db/x?sslmode=require&PASSWORD=***&connect_timeout=5",
        ),
        ("postgresql://bob:pw1@db/x?password=s3cret", "postgresql://bob:***@db/x?password=***"),
        ("https://bd.example/api?api_key=s3cret#top", "https://bd.example/api?api_key=***#top"),
        ("https://bd.example/api?token=s3cret&page=2", "https://bd.example/api?token=***&page=2"),
        ("sqlite:///tmp/store.db?mode=ro", "sqlite:///tmp/store.db?mode=ro"),
        ("https://bd.example/a?passwordless=yes", "https://bd.example/a?passwordless=yes"),
    ],
)
def test_a_password_in_the_query_never_shows(url: str, shown: str) -> None:
    from airflow_blindata.redaction import scrub, url_secrets

    assert redact_url(url) == shown
    message = f"connection to {url} failed"
    assert "s3cret" not in scrub(message, url_secrets(url))


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://bd:p@ss#w0rd@127.0.0.1:5432/test",
        "postgresql://bd:p@ss/w0rd@127.0.0.1:5432/test",
        "postgresql://bd:p@ss?w0rd@127.0.0.1:5432/test?schema=x",
        # a query part without "=" is dropped by the parser, with the "@" after it
        "postgresql://bd:Tr0ub4dor@w0rd/Battery?9@127.0.0.1:5432/test",
        "postgresql://bd:p@ssw0rd?@127.0.0.1:5432/test",
        "postgresql://bd:ab@w0rd/ef?g=h@127.0.0.1:5432/test",
    ],
)
def test_a_password_with_an_unencoded_at_never_shows(url: str) -> None:
    """A password pasted as it is (``p@ss#w0rd``): the parser ends it at its first ``@`` and
    takes the rest for the host; neither the URL shown nor the store's error may quote it."""
    from airflow_blindata.redaction import scrub, url_secrets

    assert redact_url(url).startswith("postgresql://bd:***@127.0.0.1:5432/test")
    assert "w0rd" not in scrub(f"could not resolve {url}", url_secrets(url))
    with pytest.raises(StoreURLError, match="percent-encode") as refused:
        open_store(url)
    assert "w0rd" not in str(refused.value) and "@ss" not in str(refused.value)


@pytest.mark.parametrize(
    "query", ["application_name=blindata@airflow-prod", "sslrootcert=/etc/ssl/ca@2026.pem"]
)
def test_an_at_in_a_query_value_is_the_values_own(query: str) -> None:
    """Only an ``@`` followed by a host with a port or a path shows a password cut at its
    ``?``: one in a query's value is taken (a review)."""
    with open_store(f"postgresql://etl:pw@127.0.0.1:1/events?{query}") as store:
        assert store.url.startswith("postgresql://etl:***@127.0.0.1:1/events")


def test_a_percent_encoded_query_password_is_scrubbed_as_decoded() -> None:
    from airflow_blindata.redaction import scrub, url_secrets

    url = "postgresql://db/x?password=p%40ss%2Fw0rd"
    assert redact_url(url) == "postgresql://db/x?password=***"
    assert scrub("auth failed for p@ss/w0rd", url_secrets(url)) == "auth failed for ***"


def test_a_jobs_events_come_in_slices_of_time_past_a_cursor(store: EventStore) -> None:
    """``job_slices``: one job's events with ``after < cursor <= until``, in event-time order
    whatever order they came in, cut where the time changes; no other job's."""
    base = datetime.now(UTC).replace(microsecond=0)
    minutes = [5, 1, 3, 3, 0, 4, 2]  # received out of time order; two at minute 3
    for minute in minutes:
        store.append(event("long", time=base + timedelta(minutes=minute)))
        store.append(event("other", time=base + timedelta(minutes=minute)))
    stored = [e for e in store.events(job=("ns", "long"))]
    after, until = stored[0].id, stored[-1].id  # the first received is left out, the last in
    slices = [
        part.events for part in store.job_slices(("ns", "long"), after=after, until=until, size=2)
    ]
    read = [json.loads(text) for part in slices for text in part]
    expected = sorted((e for e in stored if after < e.id <= until), key=lambda e: e.event_time)
    assert [e["eventTime"] for e in read] == [e.payload["eventTime"] for e in expected]
    assert {e["job"]["name"] for e in read} == {"long"}
    assert [len(part) for part in slices] == [2, 3, 1]  # minutes 0, 1 | 2, 3, 3 | 4


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://etl:s3cr3t-pw@db:abc/blindata",  # a port that is no number
        "postgresql://etl:s3cr3t-pw@[::1/blindata",  # an unclosed IPv6 bracket
        "sqlite://etl:s3cr3t-pw@h:x/events.db",
    ],
)
def test_a_store_url_that_cannot_be_read_is_a_clear_error_without_its_password(url: str) -> None:
    """SQLAlchemy's reading of such a URL raised a ValueError: every command that opens the
    store ended in a traceback (a probe of secrets). It is a ``StoreURLError`` that names the
    URL as shown and why, never the password."""
    with pytest.raises(StoreURLError, match="cannot be read") as raised:
        open_store(url).stats()
    assert "s3cr3t-pw" not in str(raised.value)
