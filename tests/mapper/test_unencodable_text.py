"""Issue 18, item 2, the mapper's side: an event holding text that is not text is unreadable.

The store quarantines such an event at the edge (tests/store/test_unstorable_events.py). Events
reach the mapper from files too (``plan``), and from stores written before that: a lone
surrogate (``"\\ud800"``, valid JSON) crashed ``plan`` (table and JSON) when it printed the plan,
and a NUL reached Blindata. They are now read as ``UNREADABLE_EVENT`` with the same reason the
store's quarantine gives, and every other event is planned.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.definition import JobDefinition
from airflow_blindata.events import parse_event
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.report import GapCode
from tests import builders
from tests.builders import dataset, definition_data, policy

CLI = str(Path(sys.executable).with_name("airflow-blindata"))
DEFINITION = definition_data(policy("*", nameTemplate="{host}"))


def run_event(job: str, output: str = "analytics.sales.orders", **extra: Any) -> dict[str, Any]:
    return builders.run_event(job, outputs=[dataset(output)], **extra)


BAD_TEXT = [
    (run_event("load \ud800"), "job.name: holds a lone surrogate (\\ud800)"),
    (run_event("load", output="a.b.\udfff"), "outputs.0.name: holds a lone surrogate (\\udfff)"),
    (run_event("load", facets={"\udc80": 1}), "facets.\\udc80: the key holds a lone surrogate"),
    (run_event("load\x00"), "job.name: holds a NUL character (\\u0000)"),
    (run_event("load", output="a.b\x00.c"), "outputs.0.name: holds a NUL character"),
]
FORMS = {
    "a decoded object": lambda raw: raw,
    "JSON text with escapes": json.dumps,
    "JSON text with the characters": lambda raw: json.dumps(raw, ensure_ascii=False),
    "JSON bytes": lambda raw: json.dumps(raw).encode(),
    "UTF-16 JSON bytes": lambda raw: json.dumps(raw).encode("utf-16"),
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("bad", "reason"), BAD_TEXT)
def test_an_event_holding_a_lone_surrogate_or_nul_is_unreadable_with_the_reason(
    bad: dict[str, Any], reason: str, form: str
) -> None:
    raw = FORMS[form](bad)
    problem = parse_event(raw).problem
    assert problem is not None and problem.startswith(reason), problem
    plan = build(
        [raw, run_event("good", output="analytics.sales.totals")],
        JobDefinition.from_dict(DEFINITION),
    )
    gap = plan.report.gaps[GapCode.UNREADABLE_EVENT]
    assert (gap.count, gap.examples) == (1, [problem])
    assert {e.key.name for e in plan.entities} == {"good", "totals"}
    plan.model_dump_json().encode("utf-8")  # printable: nothing in it that is not text


@pytest.mark.parametrize(
    "text",
    [
        "a literal backslash: \\u0000 and \\ud800",
        "a surrogate pair, escaped or not: \U0001f600",
        "ünïcode ☃",
    ],
)
def test_text_that_only_looks_like_a_bad_escape_is_read(text: str) -> None:
    event = run_event(text)
    for raw in (event, json.dumps(event), json.dumps(event, ensure_ascii=False).encode()):
        parsed = parse_event(raw)
        assert parsed.problem is None
        assert parsed.event is not None


@pytest.mark.parametrize("output_format", ["table", "json"])
def test_plan_reports_such_an_event_as_unreadable_and_exits_0(
    tmp_path: Path, output_format: str
) -> None:
    events = tmp_path / "events.jsonl"
    lines = [run_event("load \ud800"), run_event("load\x00"), run_event("good")]
    events.write_text("".join(json.dumps(line) + "\n" for line in lines))
    definition = tmp_path / "definition.json"
    definition.write_text(json.dumps(DEFINITION))
    done = subprocess.run(
        [CLI, "plan", str(events), "--definition", str(definition), "--format", output_format],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    if output_format == "json":
        plan = json.loads(done.stdout)
        assert plan["report"]["gaps"]["UNREADABLE_EVENT"]["count"] == 2
        assert "good" in {e["key"]["name"] for e in plan["entities"]}
    else:
        assert "UNREADABLE_EVENT" in done.stdout
        assert "job.name: holds a lone surrogate" in done.stdout
