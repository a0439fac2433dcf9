"""``airflow-blindata ingest`` and ``airflow-blindata store``, as an administrator runs them."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_blindata.cli import main
from airflow_blindata.store import open_store
from tests import builders

from .helpers import event

DBT = Path(__file__).parents[1] / "fixtures" / "openlineage" / "dbt"
CLI = str(Path(sys.executable).with_name("airflow-blindata"))


def test_ingest_counts_and_is_idempotent(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = tmp_path / "mixed.jsonl"
    good = [json.dumps(event(f"j{i}")) for i in range(3)]
    lines.write_text("\n".join([*good, good[0], "not json", '{"no": "event"}']) + "\n")
    array = tmp_path / "array.json"
    array.write_text(json.dumps([event("a1"), event("a2")]))
    assert main(["ingest", str(lines), str(array), "--store", sqlite_url]) == 0
    out = capsys.readouterr().out
    assert f"{lines}: 3 accepted, 1 duplicate, 2 quarantined" in out
    assert f"{array}: 2 accepted, 0 duplicate, 0 quarantined" in out
    assert "total: 5 accepted, 1 duplicate, 2 quarantined" in out
    assert main(["ingest", str(array), "--store", sqlite_url]) == 0
    assert "0 accepted, 2 duplicate, 0 quarantined" in capsys.readouterr().out


def test_ingest_reports_a_missing_file_and_goes_on(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps(event("x")))
    assert main(["ingest", str(tmp_path / "missing.json"), str(one), "--store", sqlite_url]) == 1
    captured = capsys.readouterr()
    assert "missing.json" in captured.err and "1 accepted" in captured.out


def test_ingest_refuses_a_bad_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps(event("x")))
    assert main(["ingest", str(one), "--store", "mysql://u:pw@h/db"]) == 2
    err = capsys.readouterr().err
    assert "no event store for mysql://" in err and "pw" not in err


@pytest.mark.parametrize(
    "command",
    [
        ["store", "stats"],
        ["store", "quarantine"],
        ["store", "forget-job", "ns", "job"],
        ["plan", "--definition", "tests/fixtures/job-definitions/example.yaml"],
    ],
)
def test_a_command_that_reads_the_store_says_it_is_missing_and_makes_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    missing = tmp_path / "typo" / "events.db"

    assert main([*command, "--store", f"sqlite:///{missing}"]) == 2

    assert f"there is no event store at {missing}" in capsys.readouterr().err
    assert not missing.parent.exists()


def test_store_stats_and_quarantine(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    files = sorted(DBT.glob("*.jsonl"))
    assert main(["ingest", *map(str, files), "--store", sqlite_url]) == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text("definitely not json\n")
    main(["ingest", str(bad), "--store", sqlite_url])
    lost = tmp_path / "lost.jsonl"
    lost.write_text(json.dumps(event("lost")) + "\n" + json.dumps(event("lost2")) + "\n")
    capsys.readouterr()
    assert main(["store", "stats", "--store", sqlite_url, "--lost-events-file", str(lost)]) == 0
    table = capsys.readouterr().out
    assert "quarantined     1" in table and f"lost events     2 in {lost}" in table
    assert "events by job namespace:" in table
    # a lost-events file capture cannot write (a directory) is said, not counted as empty
    assert main(["store", "stats", "--store", sqlite_url, "--lost-events-file", str(tmp_path)]) == 0
    said = capsys.readouterr()
    assert f"the lost-events file {tmp_path} cannot be read" in said.err
    assert f"lost events     unreadable in {tmp_path}" in said.out
    assert main(["store", "stats", "--store", sqlite_url, "--format", "json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["events"] > 0 and stats["quarantined"] == 1 and stats["backend"] == "sqlite"
    assert set(stats["events_by_kind"]) == {"RunEvent"}
    assert main(["store", "quarantine", "--store", sqlite_url]) == 0
    listed = capsys.readouterr().out
    assert "not JSON" in listed and "definitely not json" in listed


def test_store_quarantine_hides_secrets_as_the_page_does_and_raw_prints_them(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Secrets never reach logs: a terminal's output ends up in them. ``store quarantine``
    printed a quarantined event's password, a URL's and a ``password=`` parameter as stored,
    where the Blindata page shows ``***``; ``--raw`` prints the event as stored, to repair it."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"eventType": "COMPLETE", "password": "QUARPW-1", '
        '"url": "https://u:QUARURLPW@h/x?password=QUARPW-2", "broken":\n'
    )
    main(["ingest", str(bad), "--store", sqlite_url])
    capsys.readouterr()

    assert main(["store", "quarantine", "--store", sqlite_url]) == 0
    listed = capsys.readouterr().out
    assert main(["store", "quarantine", "--store", sqlite_url, "--raw"]) == 0
    raw = capsys.readouterr().out

    assert "QUAR" not in listed and '"password": "***"' in listed
    assert "QUARPW-1" in raw and "QUARURLPW" in raw


def test_store_quarantine_hides_the_postgresql_stores_own_password(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The store's password, as its URL holds it, is hidden in what it stores (a review: the
    PostgreSQL store's ``url`` is the URL as shown, its password already ``***``, so the real
    one was not hidden)."""
    planted = "Wq9-storePw-77"
    from sqlalchemy.engine import make_url

    with_password = make_url(postgres_url).set(password=planted)  # trust auth: not checked
    url = with_password.render_as_string(hide_password=False)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(f'{{"message": "login as root with {planted} refused", "broken":\n')
    main(["ingest", str(bad), "--store", url])
    capsys.readouterr()

    assert main(["store", "quarantine", "--store", url]) == 0
    listed = capsys.readouterr().out

    assert "refused" in listed and planted not in listed


def test_store_stats_count_a_job_namespace_without_its_password(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42: events by job namespace with the password hidden, spellings that differ only in
    their password counted together; the password in neither the table nor the JSON."""
    planted = "Pl4nted-S3cret"
    events = tmp_path / "events.jsonl"
    events.write_text(
        "\n".join(
            json.dumps(event("load", namespace=namespace))
            for namespace in (
                f"postgres://etl:{planted}@db:5432",
                "postgres://etl:older-pw@db:5432",
                "postgres://db:5432",
                f"postgres://db:5432?password={planted}",
            )
        )
    )
    assert main(["ingest", str(events), "--store", sqlite_url]) == 0
    capsys.readouterr()
    assert main(["store", "stats", "--store", sqlite_url]) == 0
    table = capsys.readouterr().out
    assert main(["store", "stats", "--store", sqlite_url, "--format", "json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["events_by_namespace"] == {
        "postgres://db:5432": 1,
        "postgres://db:5432?password=***": 1,
        "postgres://etl:***@db:5432": 2,
    }
    assert "postgres://etl:***@db:5432 " in table
    for output in (table, json.dumps(stats)):
        assert planted not in output and "older-pw" not in output


def test_store_without_a_subcommand_shows_its_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["store"]) == 2
    assert "stats" in capsys.readouterr().out


def test_the_installed_command(tmp_path: Path, sqlite_url: str) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps(event("x")))
    done = subprocess.run(
        [CLI, "ingest", str(one), "--store", sqlite_url], capture_output=True, text=True
    )
    assert done.returncode == 0 and "1 accepted" in done.stdout


def test_store_stats_lists_each_job_namespace_under_its_header(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "events.jsonl"
    lines = [event("a", namespace="smoke-test"), event("b", namespace="smoke-test")]
    events.write_text("\n".join(json.dumps(e) for e in [*lines, event("c", namespace="spark")]))
    assert main(["ingest", str(events), "--store", sqlite_url]) == 0
    capsys.readouterr()
    assert main(["store", "stats", "--store", sqlite_url]) == 0
    section = capsys.readouterr().out.split("events by job namespace:\n", 1)[1].splitlines()
    header, _, *rows = section
    assert header.split() == ["job", "namespace", "events"]
    assert [row.split() for row in rows] == [["smoke-test", "2"], ["spark", "1"]]


TOO_DEEP = '{"a":' * 1_000 + "1" + "}" * 1_000
"""A line nested ~1,000 levels: more than ``json.loads`` reads at Python's recursion limit."""


def _poisoned_files(tmp_path: Path) -> tuple[Path, Path, bytes]:
    """JSON lines and a JSON array, each with good events around a line (or element) too deep
    to decode and one that is not UTF-8; and the bytes of the latter."""
    not_utf8 = json.dumps(event("bad-\udcff"), ensure_ascii=False).encode(
        "utf-8", "surrogateescape"
    )
    lines = tmp_path / "poisoned.jsonl"
    good = [json.dumps(event(f"line-{i}")).encode() for i in range(2)]
    lines.write_bytes(b"\n".join([good[0], TOO_DEEP.encode(), not_utf8, good[1]]) + b"\n")
    array = tmp_path / "poisoned.json"
    elements = [json.dumps(event(f"array-{i}")).encode() for i in range(2)]
    deep = TOO_DEEP.replace('"a"', '"b"').encode()  # not a duplicate of the line
    array.write_bytes(b"[" + b",\n".join([elements[0], deep, elements[1]]) + b"]")
    return lines, array, not_utf8


def test_one_bad_line_does_not_sink_its_file(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line too deep to decode and one that is not UTF-8 are quarantined with their reasons,
    the latter with its bytes as they were (not stored under a name the file never held); every
    other event of the file is stored."""
    lines, array, not_utf8 = _poisoned_files(tmp_path)

    assert main(["ingest", str(lines), str(array), "--store", sqlite_url]) == 0

    out = capsys.readouterr().out
    assert f"{lines}: 2 accepted, 0 duplicate, 2 quarantined" in out
    assert f"{array}: 2 accepted, 0 duplicate, 1 quarantined" in out
    with open_store(sqlite_url) as store:
        names = sorted(str(stored.job_name) for stored in store.events())
        reasons = sorted(kept.reason for kept in store.quarantine())
    assert names == ["array-0", "array-1", "line-0", "line-1"]
    assert reasons[0].startswith("not JSON: 'utf-8' codec can't decode byte 0xff")
    assert reasons[1:] == ["not readable JSON: nested too deeply"] * 2
    with sqlite3.connect(Path(sqlite_url.removeprefix("sqlite:///"))) as db:
        raws = [bytes(row[0]) for row in db.execute("SELECT raw FROM blindata_quarantine")]
    assert not_utf8 in raws


def test_an_indented_event_that_is_not_utf8_is_quarantined_whole(
    tmp_path: Path, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    one = tmp_path / "indented.json"
    text = json.dumps(event("bad-\udcff"), indent=2, ensure_ascii=False)
    one.write_bytes(text.encode("utf-8", "surrogateescape"))

    assert main(["ingest", str(one), "--store", sqlite_url]) == 0

    assert f"{one}: 0 accepted, 0 duplicate, 1 quarantined" in capsys.readouterr().out


def test_plan_of_a_file_with_a_bad_line_reports_it_and_plans_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines, array, _ = _poisoned_files(tmp_path)
    definition = tmp_path / "definition.json"
    definition.write_text(json.dumps(builders.definition_data()))

    assert (
        main(["plan", str(lines), str(array), "--definition", str(definition), "--format", "json"])
        == 0
    )

    plan = json.loads(capsys.readouterr().out)
    unreadable = plan["report"]["gaps"]["UNREADABLE_EVENT"]
    assert unreadable["count"] == 3
    assert plan["report"]["counters"]["jobs"] == 4
    assert plan["report"]["counters"]["eventsUnreadable"] == 3
