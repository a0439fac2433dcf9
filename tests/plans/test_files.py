"""``airflow-blindata plan`` and the event file reader it shares with ingestion."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.plans.eventfiles import read_event_file
from tests.helpers import FIXTURES, all_fixture_events

CLI = str(Path(sys.executable).with_name("airflow-blindata"))
DBT = FIXTURES / "openlineage" / "dbt" / "postgres_run_successful_run_ol_events.jsonl"
EVENT = {
    "eventType": "COMPLETE",
    "eventTime": "2026-11-29T10:00:00Z",
    "job": {"namespace": "n", "name": "j"},
    "run": {"runId": "r"},
    "producer": "p",
}


def test_a_file_may_hold_one_event_an_array_or_json_lines(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps(EVENT))
    array = tmp_path / "array.json"
    array.write_text(json.dumps([EVENT, EVENT]))
    lines = tmp_path / "events.jsonl"
    lines.write_text(f"{json.dumps(EVENT)}\n\n{{not json\n{json.dumps(EVENT)}\n")
    assert list(read_event_file(one)) == [EVENT]
    assert list(read_event_file(array)) == [EVENT, EVENT]
    assert list(read_event_file(lines)) == [EVENT, "{not json", EVENT]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(json.dumps(EVENT, indent=2), [EVENT], id="one event, indented"),
        pytest.param(f"{json.dumps(EVENT)}\n{json.dumps(EVENT)}\n", [EVENT, EVENT], id="lines"),
        pytest.param(json.dumps([EVENT, EVENT], indent=2), [EVENT, EVENT], id="an array"),
    ],
)
def test_a_file_behind_a_byte_order_mark_holds_the_same_events(
    tmp_path: Path, text: str, expected: list[Any]
) -> None:
    """A UTF-8 byte order mark (written by Windows tools) made an indented event eleven lines
    of junk, and the first of JSON lines a string (a review)."""
    path = tmp_path / "events.json"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert list(read_event_file(path)) == expected


def test_a_plan_of_json_lines_behind_a_byte_order_mark_reads_the_first_event(
    tmp_path: Path,
) -> None:
    """``plan`` reads JSON lines job by job from where each line starts: the first line's
    started at the mark, and the first event was UNREADABLE_EVENT (a review)."""
    from airflow_blindata.definition import JobDefinition
    from airflow_blindata.mapper.report import GapCode
    from airflow_blindata.plans.files import plan_files

    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + f"{json.dumps(EVENT)}\n{json.dumps(EVENT)}\n".encode())
    definition = JobDefinition.from_yaml(write_definition(tmp_path).read_text())
    plan = plan_files([path], definition)
    assert plan.report.gap_count(GapCode.UNREADABLE_EVENT) == 0
    assert plan.report.counters["runEvents"] == 2


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('"RunEvent"', "not a JSON object: got a string"),
        ("5", "not a JSON object: got a number"),
        ("null", "not a JSON object: got null"),
        ("{not json", "not JSON: "),
    ],
)
def test_a_line_that_is_no_event_is_unreadable_for_the_documented_reason(
    tmp_path: Path, line: str, reason: str
) -> None:
    """docs/facet-support.md, UNREADABLE_EVENT: "not a JSON object: got a string (a string, a
    number, …)" when the JSON is valid but no object; ``plan`` read a JSON string line's value
    as JSON text again ("not JSON: Expecting value", a probe of the docs)."""
    from airflow_blindata.definition import JobDefinition
    from airflow_blindata.mapper.report import GapCode
    from airflow_blindata.plans.files import plan_files

    path = tmp_path / "events.jsonl"
    path.write_text(f"{json.dumps(EVENT)}\n{line}\n")
    definition = JobDefinition.from_yaml(write_definition(tmp_path).read_text())
    plan = plan_files([path], definition)
    (example,) = plan.report.gaps[GapCode.UNREADABLE_EVENT].examples
    assert reason in example, example
    assert plan.report.counters["runEvents"] == 1


def write_definition(tmp_path: Path) -> Path:
    path = tmp_path / "definition.yaml"
    path.write_text(
        "uuid: 6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d\n"
        "systemPolicies:\n"
        "  - {pattern: 'postgres://*', creation: IF_MISSING, nameTemplate: '{host}'}\n"
    )
    return path


def test_plan_prints_where_each_object_lands_as_tables(tmp_path: Path) -> None:
    done = subprocess.run(
        [CLI, "plan", str(DBT), "--definition", str(write_definition(tmp_path))],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Systems" in done.stdout and "Entities" in done.stdout
    flows = done.stdout.split("Flows\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert any(
        line.startswith("table")
        and "public.stg_orders -> public.orders @dbt-test-namespace/" in line
        for line in flows
    )
    assert any(line.startswith("orchestration") for line in flows)
    (gap_line,) = [
        line for line in done.stdout.splitlines() if "FIELD_DESCRIPTION_TOO_LONG" in line
    ]
    assert "shorten the description" in gap_line
    systems = done.stdout.split("Systems\n", 1)[1].split("\n\n", 1)[0].splitlines()
    (system_line,) = [line for line in systems if line.startswith("postgres ")]
    assert "created" in system_line and "PostgreSQL" in system_line


def test_plan_as_json_uses_known_systems_and_reports_bad_lines(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text(DBT.read_text() + "this is not an event\n")
    systems = tmp_path / "systems.json"
    systems.write_text(
        json.dumps(
            [
                {
                    "uuid": "u-1",
                    "name": "Crawled PG",
                    "additionalProperties": [
                        {"name": "openLineageNamespace", "value": "postgres://postgres:5432"}
                    ],
                }
            ]
        )
    )
    done = subprocess.run(
        [
            CLI,
            "plan",
            str(events),
            "--definition",
            str(write_definition(tmp_path)),
            "--systems",
            str(systems),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    plan = json.loads(done.stdout)
    assert {s["name"] for s in plan["systems"]} == {"Crawled PG", "OpenLineage"}
    assert plan["report"]["gaps"]["UNREADABLE_EVENT"]["count"] == 1


def test_plan_names_the_bad_key_of_a_definition(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("uuid: 6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d\nprocesLayer: true\n")
    done = subprocess.run(
        [CLI, "plan", str(DBT), "--definition", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "procesLayer" in done.stderr and "did you mean processLayer" in done.stderr


def test_a_plan_read_job_by_job_is_the_plan_of_every_event_at_once(tmp_path: Path) -> None:
    """Issue "Scale": event files are read one job at a time, with the same plan."""
    import random

    from airflow_blindata.definition import JobDefinition
    from airflow_blindata.mapper.build import build
    from airflow_blindata.plans.files import event_files_groups, plan_files

    events = all_fixture_events()
    shuffled = list(events)
    random.Random(5).shuffle(shuffled)
    half = len(shuffled) // 2
    lines = tmp_path / "events.jsonl"
    lines.write_text(
        "".join(f"{json.dumps(e)}\n" for e in shuffled[:half]) + "not an event\n\n",
        encoding="utf-8",
    )
    array = tmp_path / "array.json"
    array.write_text(json.dumps(shuffled[half:]), encoding="utf-8")
    definition = JobDefinition.load(write_definition(tmp_path))
    # a JSON lines file's lines come as their bytes, read as the store's texts are
    groups = [
        [json.loads(e) if isinstance(e, bytes) else e for e in group]
        for group in event_files_groups([lines, array])
    ]
    jobs = [
        {(e["job"]["namespace"], e["job"]["name"]) for e in group if isinstance(e, dict)}
        for group in groups[:-1]
    ]
    assert all(len(keys) == 1 for keys in jobs)  # one job per group, then the rest
    assert sum(len(group) for group in groups) == len(events) + 1
    assert "not an event" in groups[-1]
    expected = build([*events, "not an event"], definition)
    assert plan_files([lines, array], definition) == expected


def test_plan_with_no_event_files_plans_from_the_store(tmp_path: Path) -> None:
    """Issue "Scale": `plan --definition F` with no event files reads the configured store."""
    store = f"sqlite:///{tmp_path / 'events.db'}"
    subprocess.run([CLI, "ingest", str(DBT), "--store", store], check=True, capture_output=True)
    definition = str(write_definition(tmp_path))
    from_store = subprocess.run(
        [CLI, "plan", "--definition", definition, "--store", store, "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    from_file = subprocess.run(
        [CLI, "plan", str(DBT), "--definition", definition, "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    planned = json.loads(from_store.stdout)
    counters = planned["report"]["counters"]
    assert counters.pop("jobsUnchanged") == counters.pop("jobsExtended") == 0  # plan only reads
    assert counters.pop("jobsReadInSlices") == 0  # no history that long
    assert planned == json.loads(from_file.stdout)
    assert planned["entities"]


def test_plan_never_shows_the_password_of_a_job_namespace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42: the dbt jobs in ``postgres://etl:<password>@dbt:5432``, planned from a file
    and from the store, as tables and as JSON: the clean namespace, never the password."""
    from airflow_blindata.cli import main

    planted = "Pl4nted-S3cret"
    dirty = tmp_path / "dirty.jsonl"
    dirty.write_text(
        DBT.read_text().replace('"dbt-test-namespace"', f'"postgres://etl:{planted}@dbt:5432"')
    )
    store = f"sqlite:///{tmp_path / 'events.db'}"
    definition = str(write_definition(tmp_path))
    assert main(["ingest", str(dirty), "--store", store]) == 0
    outputs = []
    for source in ([str(dirty)], ["--store", store]):
        for output in ("table", "json"):
            capsys.readouterr()
            assert main(["plan", *source, "--definition", definition, "--format", output]) == 0
            outputs.append(capsys.readouterr().out)
    for text in outputs:
        assert "postgres://dbt:5432" in text
        assert planted not in text
