"""BlindataTransport: built like any OpenLineage transport, stores at once, never raises."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import (
    DatasetEvent,
    InputDataset,
    Job,
    JobEvent,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
    StaticDataset,
)
from openlineage.client.serde import Serde
from openlineage.client.transport import get_default_factory

from airflow_blindata.capture import transport as transport_module
from airflow_blindata.capture.openlineage_config import TRANSPORT_PATH
from airflow_blindata.capture.transport import (
    BlindataTransport,
    BlindataTransportConfig,
    count_lost_events,
)
from airflow_blindata.store import AppendOutcome, open_store
from airflow_blindata.store.direct import DirectAppender
from airflow_blindata.store.sqlite import DEFAULT_TIMEOUT as SQLITE_TIMEOUT

TIME = "2026-03-01T10:00:00.000000+00:00"


def run_event(
    job: str = "etl.load", state: RunState = RunState.COMPLETE, namespace: str = "airflow"
) -> RunEvent:
    return RunEvent(
        eventType=state,
        eventTime=TIME,
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace=namespace, name=job),
        inputs=[InputDataset("postgres://db:5432", "public.src")],
        outputs=[OutputDataset("postgres://db:5432", "public.dst")],
        producer="https://example.com/tests",
    )


@pytest.fixture(autouse=True)
def fresh_stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test its own AIRFLOW_HOME (lost-events file) and no store shared with another."""
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AIRFLOW__BLINDATA__STORE_URL", raising=False)
    monkeypatch.delenv("AIRFLOW__BLINDATA__LOST_EVENTS_FILE", raising=False)
    monkeypatch.setattr(transport_module, "_STORES", {})
    yield


def transport(url: str, **options: str) -> BlindataTransport:
    config = get_default_factory().create({"type": TRANSPORT_PATH, "store_url": url, **options})
    assert isinstance(config, BlindataTransport)
    return config


def lost_file(tmp_path: Path) -> Path:
    return tmp_path / "home" / "blindata" / "lost-events.jsonl"


# -- configuration -------------------------------------------------------------------------


def test_config_from_dict_keeps_known_keys() -> None:
    config = BlindataTransportConfig.from_dict(
        {"type": TRANSPORT_PATH, "store_url": "sqlite:///x.db", "lost_events_path": "/tmp/l"}
    )
    assert (config.store_url, config.lost_events_path) == ("sqlite:///x.db", "/tmp/l")
    assert BlindataTransportConfig.from_dict({}).store_url is None


def test_config_names_a_misspelt_key() -> None:
    with pytest.raises(ValueError, match=r"unknown key `stor_url` \(known keys: store_url"):
        BlindataTransportConfig.from_dict({"type": TRANSPORT_PATH, "stor_url": "sqlite:///x"})
    with pytest.raises(ValueError, match="`store_url`: Input should be a valid string"):
        BlindataTransportConfig.from_dict({"store_url": 5})


def test_construction_opens_nothing(tmp_path: Path) -> None:
    transport(f"sqlite:///{tmp_path / 'never.db'}")
    assert not (tmp_path / "never.db").exists()
    assert transport_module._STORES == {}


# -- storing -------------------------------------------------------------------------------


def test_emits_every_kind_of_event(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    sink = transport(url)
    first = run_event()
    assert sink.emit(first) is AppendOutcome.ACCEPTED
    assert sink.emit(first) is AppendOutcome.DUPLICATE
    job = JobEvent(eventTime=TIME, job=Job(namespace="airflow", name="etl"), producer="p")
    dataset = DatasetEvent(
        eventTime=TIME, dataset=StaticDataset(namespace="postgres://db", name="t"), producer="p"
    )
    assert sink.emit(job) is AppendOutcome.ACCEPTED
    assert sink.emit(dataset) is AppendOutcome.ACCEPTED
    with open_store(url) as store:
        stored = list(store.events())
    assert [s.kind for s in stored] == ["RunEvent", "JobEvent", "DatasetEvent"]
    assert stored[0].payload["inputs"][0]["name"] == "public.src"
    assert stored[0].run_id == first.run.runId and stored[0].source == "transport"


def test_the_default_store_is_in_airflow_home(tmp_path: Path) -> None:
    BlindataTransport(BlindataTransportConfig()).emit(run_event())
    with open_store(f"sqlite:///{tmp_path / 'home' / 'blindata' / 'events.db'}") as store:
        assert store.stats().events == 1


def test_one_store_per_process_and_url(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    transport(url).emit(run_event())
    transport(url).emit(run_event())
    assert list(transport_module._STORES) == [url]


def test_a_composite_with_a_failing_http_leg_still_stores(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    client = OpenLineageClient(
        config={
            "transport": {
                "type": "composite",
                "continue_on_failure": True,
                "transports": {
                    "marquez": {
                        "type": "http",
                        "url": "http://127.0.0.1:9",
                        "timeout": 1,
                        "retry": {"total": 0},
                    },
                    "blindata": {"type": TRANSPORT_PATH, "store_url": url},
                },
            }
        }
    )
    with caplog.at_level(logging.WARNING):
        client.emit(run_event())
    assert "marquez" in caplog.text  # the HTTP leg failed...
    with open_store(url) as store:
        assert store.stats().events == 1  # ...and the Blindata leg stored the event


def test_forked_children_use_their_own_connections(store_url: str) -> None:
    """OpenLineage emits from a fork per event: parent and child must not share a connection."""
    sink = transport(store_url)
    sink.emit(run_event("parent.before"))
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through its exit code only
        code = 0 if sink.emit(run_event("child")) is AppendOutcome.ACCEPTED else 1
        os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    sink.emit(run_event("parent.after"))
    with open_store(store_url) as store:
        assert [s.job_name for s in store.events()] == ["parent.before", "child", "parent.after"]


# -- faults: the task goes on, the loss is logged once, kept and counted ----------------------


def _one_warning(caplog: pytest.LogCaptureFixture) -> str:
    (record,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    return record.getMessage()


def test_a_read_only_store_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "events.db"
    url = f"sqlite:///{path}"
    with open_store(url) as store:
        store.append(run_event_dict())
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        path.chmod(0o444)
        if os.access(path, os.W_OK):
            pytest.skip("cannot make a file read-only here (root without chattr)")
    try:
        with caplog.at_level(logging.WARNING):
            assert transport(url).emit(run_event("etl.readonly")) is None
    finally:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        path.chmod(0o644)
    message = _one_warning(caplog)
    assert "of job airflow/etl.readonly" in message and "readonly database" in message
    assert f"{path} cannot be opened for writing" in message
    assert f"airflow-blindata ingest {lost_file(tmp_path)}" in message
    assert count_lost_events() == 1
    (line,) = lost_file(tmp_path).read_text().splitlines()
    assert json.loads(line)["job"]["name"] == "etl.readonly"


def test_a_store_url_with_an_unencoded_password_keeps_the_event_and_never_shows_the_password(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    url = "postgresql://bd:p@ss#w0rd@127.0.0.1:5432/lineage"
    with caplog.at_level(logging.DEBUG):
        configured = transport(url)
        assert configured.emit(run_event("etl.unencoded")) is None
    logged = caplog.text + "".join(capfd.readouterr())  # Airflow may route it through structlog
    assert "could not store the COMPLETE event of job airflow/etl.unencoded" in logged
    assert "percent-encode" in logged
    assert "w0rd" not in logged and "w0rd" not in repr(configured)
    assert count_lost_events() == 1


def run_event_dict() -> dict[str, object]:
    return json.loads(json.dumps(Serde.to_dict(run_event("seed"))))


def test_a_full_disk_injected(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """SQLITE_FULL from the driver (the real thing is the tmpfs test below)."""

    def full(*_: object, **__: object) -> bool:
        raise sqlite3.OperationalError("database or disk is full")

    url = f"sqlite:///{tmp_path / 'events.db'}"
    sink = transport(url)
    with pytest.MonkeyPatch.context() as patch, caplog.at_level(logging.WARNING):
        patch.setattr(DirectAppender, "insert", full)
        assert sink.emit(run_event()) is None
    assert "database or disk is full" in _one_warning(caplog)
    assert count_lost_events() == 1
    assert sink.emit(run_event()) is AppendOutcome.ACCEPTED  # space again: capture resumes


FULL_DISK = textwrap.dedent(
    """
    import json, sqlite3, sys, uuid
    from airflow_blindata.capture.transport import BlindataTransport, BlindataTransportConfig
    from airflow_blindata.store import open_store
    store_dir, lost = sys.argv[1], sys.argv[2]
    url = f"sqlite:///{store_dir}/events.db"
    sink = BlindataTransport(BlindataTransportConfig(store_url=url, lost_events_path=lost))
    stored = lost_count = 0
    padding = "x" * 50_000
    while lost_count < 3 and stored < 10_000:
        event = {"eventTime": "2026-01-01T00:00:00+00:00", "eventType": "COMPLETE",
                 "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "n", "name": "j"},
                 "producer": padding}
        if sink.emit(event) is None:
            lost_count += 1
        else:
            stored += 1
    integrity = sqlite3.connect(f"{store_dir}/events.db").execute("PRAGMA integrity_check")
    readable = open_store(url).stats().events
    print(json.dumps({"stored": stored, "lost": lost_count, "readable": readable,
                      "integrity": integrity.fetchone()[0]}))
    """
)


def test_a_really_full_disk(tmp_path: Path) -> None:
    """A 2 MB tmpfs in a private mount namespace (needs root and unshare; skipped otherwise)."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare to mount a tiny tmpfs privately")
    store_dir, lost = tmp_path / "tiny", tmp_path / "lost.jsonl"
    store_dir.mkdir()
    script = (
        f"mount -t tmpfs -o size=2m tmpfs {store_dir} && "
        f"exec {sys.executable} -c '{FULL_DISK}' {store_dir} {lost}"
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120
    )
    if "mount" in done.stderr and done.returncode != 0 and not done.stdout:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["lost"] == 3 and result["stored"] > 0
    assert result["integrity"] == "ok" and result["readable"] == result["stored"]
    assert "database or disk is full" in done.stderr
    assert count_lost_events(lost) == 3


def test_postgres_down(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("psycopg")
    sink = transport("postgresql://bd:s3cret-pw@127.0.0.1:1/lineage?connect_timeout=2")
    with caplog.at_level(logging.WARNING):
        assert sink.emit(run_event("etl.pg")) is None
    message = _one_warning(caplog)
    assert "s3cret-pw" not in caplog.text
    assert "postgresql://bd:***@127.0.0.1:1/lineage" in message
    assert "Connection refused" in message or "connection" in message.lower()
    assert count_lost_events() == 1


def test_a_bad_url_is_a_counted_loss_too(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert transport("mysql://bd:s3cret-pw@db/x").emit(run_event()) is None
    assert "no event store for mysql://" in _one_warning(caplog)
    assert "s3cret-pw" not in caplog.text
    assert count_lost_events() == 1


def test_the_warning_never_shows_the_credentials_of_a_job_namespace(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 42: a job namespace that holds a password is named without it in the task log."""
    dirty = "postgres://etl:Pl4nted-S3cret@db:5432"
    with caplog.at_level(logging.DEBUG):
        assert transport("mysql://bd@db/x").emit(run_event("etl.pg", namespace=dirty)) is None
    logged = caplog.text + "".join(capfd.readouterr())
    assert "could not store the COMPLETE event of job postgres://etl:***@db:5432/etl.pg" in logged
    assert "Pl4nted-S3cret" not in logged
    assert count_lost_events() == 1  # the event itself is kept whole, to be ingested later


def test_when_even_the_lost_file_fails(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    sink = transport("mysql://db/x", lost_events_path=str(blocker / "lost.jsonl"))
    with caplog.at_level(logging.WARNING):
        assert sink.emit(run_event()) is None
    assert "could not be kept in" in _one_warning(caplog) and "it is lost" in caplog.text


OPENLINEAGE_EXECUTION_TIMEOUT = 10.0
"""The provider's default ``[openlineage] execution_timeout``: it kills the emitting child then."""


@pytest.mark.parametrize("queue_held", [True, False], ids=["queue-and-sqlite", "sqlite"])
def test_a_locked_store_gives_up_within_one_bound_and_keeps_the_event(
    tmp_path: Path, queue_held: bool
) -> None:
    """Another writer holds SQLite's write lock (and maybe the lock file's turn) and never lets go:
    the append gives up after ``timeout`` in all, well before the provider kills the child at
    its 10 s ``execution_timeout``, and the event is in the lost-events file."""
    import airflow.providers.common.compat.sdk  # noqa: F401  (as in Airflow: the loss's metric)

    path = tmp_path / "events.db"
    url = f"sqlite:///{path}"
    sink = transport(url)
    assert sink.emit(run_event("etl.before")) is AppendOutcome.ACCEPTED
    queue = os.open(f"{path}.lock", os.O_RDWR)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        if queue_held:
            fcntl.flock(queue, fcntl.LOCK_EX)
        holder.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        outcome = sink.emit(run_event("etl.locked"))
        waited = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
        os.close(queue)
    assert outcome is None
    assert SQLITE_TIMEOUT - 0.1 <= waited < SQLITE_TIMEOUT + 1.5, waited  # one bound, not two
    assert waited < OPENLINEAGE_EXECUTION_TIMEOUT / 2  # well before the child is killed
    (line,) = lost_file(tmp_path).read_text().splitlines()
    assert json.loads(line)["job"]["name"] == "etl.locked"
    assert sink.emit(run_event("etl.after")) is AppendOutcome.ACCEPTED  # the lock is gone


def test_a_fresh_process_gives_up_within_one_bound_on_a_store_locked_exclusively(
    tmp_path: Path,
) -> None:
    """A tool holds the file in SQLite's exclusive locking mode (``PRAGMA locking_mode =
    EXCLUSIVE``): readers wait too. A process whose store has not checked the schema yet (the
    listener of a scheduler, a first ``emit`` without preload) opened connections whose pragmas
    and schema check each waited the whole timeout — four times the bound. One bound covers
    them all now."""
    import airflow.providers.common.compat.sdk  # noqa: F401  (as in Airflow: the loss's metric)

    path = tmp_path / "events.db"
    with open_store(f"sqlite:///{path}") as created:  # the schema exists, as in a deployment
        created.append(run_event("etl.before"))
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        sink = transport(f"sqlite:///{path}?timeout=1")  # a store this process never used
        started = time.monotonic()
        outcome = sink.emit(run_event("etl.locked"))
        waited = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
    assert outcome is None
    assert waited < 1 + 0.75, waited  # one bound, not four
    (line,) = lost_file(tmp_path).read_text().splitlines()
    assert json.loads(line)["job"]["name"] == "etl.locked"


LOCKED_WITHOUT_AIRFLOW = textwrap.dedent(
    """
    import json, sqlite3, sys, time
    from airflow_blindata.capture.transport import BlindataTransport, BlindataTransportConfig
    from airflow_blindata.store import open_store
    path, lost = sys.argv[1], sys.argv[2]
    event = {"eventTime": "2026-01-01T00:00:00+00:00", "eventType": "COMPLETE",
             "run": {"runId": "01900000-0000-7000-8000-000000000001"},
             "job": {"namespace": "n", "name": "locked"}, "producer": "p"}
    with open_store(f"sqlite:///{path}") as store:
        store.append({**event, "job": {"namespace": "n", "name": "before"}})
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    config = BlindataTransportConfig(store_url=f"sqlite:///{path}?timeout=1", lost_events_path=lost)
    started = time.monotonic()
    BlindataTransport(config).emit(event)
    print(json.dumps({"waited": time.monotonic() - started, "airflow": "airflow" in sys.modules}))
    """
)


def test_the_first_loss_in_a_process_without_airflow_stays_within_the_bound(
    tmp_path: Path,
) -> None:
    """Counting the lost event loaded Airflow (its metrics) in a process that had not: about a
    second, more on a loaded machine, past the store's bound. Such a process counts nothing."""
    lost = tmp_path / "lost.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", LOCKED_WITHOUT_AIRFLOW, str(tmp_path / "events.db"), str(lost)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["waited"] < 1 + 0.75, answer
    assert answer["airflow"] is False  # nothing loaded it on the way
    assert json.loads(lost.read_text())["job"]["name"] == "locked"


SHORT_WRITE = textwrap.dedent(
    """
    import logging, os, resource, signal, sys
    from airflow_blindata.capture.transport import BlindataTransport, BlindataTransportConfig
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    lost = sys.argv[1]
    config = BlindataTransportConfig(store_url="mysql://db/x", lost_events_path=lost)
    sink = BlindataTransport(config)
    def event(name, size=0):
        return {"eventTime": "2026-01-01T00:00:00+00:00", "eventType": "COMPLETE",
                "run": {"runId": "01900000-0000-7000-8000-000000000001"},
                "job": {"namespace": "n", "name": name}, "producer": "p" * size}
    sink.emit(event("before"))
    # A file size limit 100 bytes past the end: the next line is written only in part.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(lost) + 100, hard))
    sink.emit(event("cut", 1000))
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    sink.emit(event("after"))
    """
)


def test_a_short_write_to_the_lost_events_file_is_a_loss_and_leaves_lines_whole(
    tmp_path: Path,
) -> None:
    """A real short write: a file size limit (RLIMIT_FSIZE) in a process of its own."""
    lost = tmp_path / "lost.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", SHORT_WRITE, str(lost)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = [json.loads(line)["job"]["name"] for line in lost.read_bytes().splitlines()]
    assert names == ["before", "after"]  # every line whole: the cut one was taken back
    assert count_lost_events(lost) == 2
    log = done.stdout + done.stderr  # Airflow, once imported, logs to stdout
    (cut,) = [line for line in log.splitlines() if "of job n/cut" in line]
    assert "(only 100 of " in cut and "bytes could be written): it is lost." in cut
    assert "kept in" not in cut.replace("could not be kept in", "")


def test_anything_at_all_never_raises(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    sink = transport(f"sqlite:///{tmp_path / 'events.db'}")
    assert sink.emit("not json") is AppendOutcome.QUARANTINED
    with caplog.at_level(logging.WARNING):
        assert sink.emit(object()) in (None, AppendOutcome.QUARANTINED)
    assert sink.close() is True


def test_the_wal_stays_small_when_every_event_comes_from_a_fresh_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Children that end with ``os._exit`` never reset the WAL: the transport must bound it.

    Left alone it grows by every event, and so does the time of every emit (each child
    re-reads the whole WAL): 27 ms per event after 1,500 were measured before the fix.
    """
    from airflow_blindata.store import direct

    monkeypatch.setattr(direct, "WAL_TRUNCATE_BYTES", 100_000)
    url = f"sqlite:///{tmp_path / 'events.db'}"
    transport_module.preload(url)  # as the plugin does in the task's process
    event = run_event_dict()
    for i in range(300):
        child = os.fork()
        if child == 0:  # pragma: no cover - reports through its exit code
            code = 1
            try:
                payload = {**event, "run": {"runId": str(uuid.UUID(int=i))}}
                sink = BlindataTransport(BlindataTransportConfig(store_url=url))
                code = 0 if sink.emit(payload) is AppendOutcome.ACCEPTED else 1
            finally:
                os._exit(code)
        assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0
    wal = tmp_path / "events.db-wal"
    assert not wal.exists() or wal.stat().st_size < 300_000
    with open_store(url) as store:
        assert store.stats().events == 300


def test_preload_rehearses_emit_without_storing_or_holding_anything(tmp_path: Path) -> None:
    """The plugin preloads in the task's process: nothing may be stored, locked or left open."""
    url = f"sqlite:///{tmp_path / 'events.db'}"
    transport_module.preload(url)
    store = transport_module._STORES[url]
    assert store.stats().events == 0 and store.stats().quarantined == 0
    appender = getattr(store, "_direct", None)
    assert isinstance(appender, DirectAppender) and appender._connection is None
    # The write turn was released: another process takes it at once.
    probe = sqlite3.connect(tmp_path / "events.db", timeout=0)
    probe.execute("BEGIN IMMEDIATE")
    probe.rollback()
    probe.close()
    assert transport(url).emit(run_event()) is AppendOutcome.ACCEPTED
    assert store.stats().events == 1


@pytest.mark.parametrize(
    "url",
    ["postgresql://bd:s3cret-pw@db/lineage", "postgresql://bd@db/lineage?password=s3cret-pw"],
)
def test_the_transport_config_never_shows_the_stores_password(url: str) -> None:
    config = BlindataTransportConfig.from_dict({"store_url": url})
    assert "s3cret-pw" not in repr(config) and "***" in repr(config)
    assert "s3cret-pw" not in str(config)
    assert config.store_url == url  # what the transport opens is the URL as given
