"""Issue 18, item 1: a bad namespace is a gap for its dataset, never an error for the run.

``postgres://db]:5432`` is accepted by the receiver (a namespace is any string), and
``urllib.parse.urlsplit`` raised ``ValueError: Invalid IPv6 URL`` for it, which stopped ``plan``,
every snapshot and the snapshot operator. Namespaces are now read by hand (``identity``), and a
namespace whose authority cannot be read creates no System: its dataset is reported as
``UNMAPPED_NAMESPACE`` with the reason, and everything else in the run is planned as before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.identity import (
    namespace_parts,
    namespace_problem,
    normalize_namespace,
    shown_namespace,
)
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.systems import NAMESPACE_PROPERTY, KnownSystem
from tests import builders
from tests.builders import dataset, definition_data, policy

CLI = str(Path(sys.executable).with_name("airflow-blindata"))
GOOD = "postgres://good:5432"
CREATE_EVERYTHING = definition_data(policy("*", nameTemplate="{host}"))

BAD_NAMESPACES = [
    "postgres://db]:5432",  # the namespace: urlsplit said "Invalid IPv6 URL"
    "postgres://[db:5432",  # an opening bracket that never closes
    "postgres://[db]:5432",  # brackets around something that is not an IPv6 address
    "postgres://[::1]x:5432",  # text after the IPv6 literal that is not a port
    "postgres://etl:pw@db]:5432/analytics",  # user info and a path around a bad host
    "s3://bu[cket",
    "abfss://raw]@lake.dfs.core.windows.net",
    "",
    "   ",
]


def run_event(*outputs: tuple[str, str]) -> dict[str, Any]:
    return builders.run_event(
        inputs=[dataset("analytics.raw.orders", GOOD)],
        outputs=[dataset(name, ns) for ns, name in outputs],
    )


@pytest.mark.parametrize("namespace", BAD_NAMESPACES)
def test_a_bad_namespace_is_an_unmapped_namespace_gap_and_the_rest_of_the_run_is_planned(
    namespace: str,
) -> None:
    plan = build(
        [run_event((namespace, "analytics.sales.orders"), (GOOD, "analytics.sales.totals"))],
        JobDefinition.from_dict(CREATE_EVERYTHING),
    )
    gap = plan.report.gaps[GapCode.UNMAPPED_NAMESPACE]
    assert gap.count == 1
    # named as the producer spelt it, without its user info (seed 002: no secret in the graph)
    shown = shown_namespace(namespace)
    assert gap.examples == [f"{shown}/analytics.sales.orders: {namespace_problem(namespace)}"]
    assert "etl:pw" not in gap.examples[0]
    assert {s.name for s in plan.systems} == {"good", "OpenLineage"}
    assert {(e.key.system, e.key.name) for e in plan.entities} == {
        ("good", "orders"),
        ("good", "totals"),
        ("OpenLineage", "etl.load"),
    }
    assert [(f.source.entity.name, f.target.entity.name) for f in plan.flows] == [
        ("orders", "totals")
    ]


@pytest.mark.parametrize(
    ("namespace", "system"),
    [
        ("postgres://[::1]:5432", "[::1]"),
        ("postgres://[fe80::1%25eth0]", "[fe80::1%25eth0]"),
        ("postgres://etl:pw@db:5432", "db"),
        # a list of bootstrap servers is its cluster's first
        ("kafka://broker-1:9092,broker-2:9092", "broker-1"),
    ],
)
def test_a_namespace_with_a_readable_authority_still_creates_its_system(
    namespace: str, system: str
) -> None:
    assert namespace_problem(namespace) is None
    plan = build([run_event((namespace, "a.b.c"))], JobDefinition.from_dict(CREATE_EVERYTHING))
    assert system in {s.name for s in plan.systems}
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0


@pytest.mark.parametrize(
    "how",
    [
        {"namespaceMappings": [{"pattern": "postgres://db]*", "system": {"name": "Crawled"}}]},
        {"known_stamp": True},
    ],
)
def test_a_bad_namespace_still_lands_on_a_system_mapped_or_stamped_for_it(
    how: dict[str, Any],
) -> None:
    stamped = how.pop("known_stamp", False)
    stamp = ((NAMESPACE_PROPERTY, "postgres://db]:5432"),) if stamped else ()
    plan = build(
        [run_event(("postgres://db]:5432", "analytics.sales.orders"))],
        JobDefinition.from_dict({**CREATE_EVERYTHING, **how}),
        [KnownSystem("Crawled", "u-crawled", stamp)],
    )
    assert ("Crawled", "orders") in {(e.key.system, e.key.name) for e in plan.entities}
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0


def test_a_bad_namespace_named_only_in_a_lineage_facet_drops_the_flow_with_a_gap() -> None:
    event = run_event((GOOD, "analytics.sales.totals"))
    event["outputs"][0]["facets"] = {
        "columnLineage": {
            "fields": {
                "total": {
                    "inputFields": [
                        {"namespace": "postgres://db]:5432", "name": "a.b.c", "field": "x"}
                    ]
                }
            }
        }
    }
    plan = build([event], JobDefinition.from_dict(CREATE_EVERYTHING))
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 1
    assert all(f.source.entity.system == "good" for f in plan.flows)


@given(st.text())
def test_reading_any_namespace_never_raises(text: str) -> None:
    for namespace in (text, f"postgres://{text}", f"s3://{text}:5432/x", f"abfss://{text}"):
        normalized = normalize_namespace(namespace)
        namespace_problem(namespace)
        namespace_problem(normalized)
        namespace_parts(normalized)


@given(st.text(alphabet=st.sampled_from("[]:@/%?#.abc19 "), max_size=12))
def test_build_never_raises_for_any_authority(authority: str) -> None:
    plan = build(
        [run_event((f"postgres://{authority}", "a.b.c"))],
        JobDefinition.from_dict(CREATE_EVERYTHING),
    )
    assert ("OpenLineage", "etl.load") in {(e.key.system, e.key.name) for e in plan.entities}


@pytest.mark.parametrize("output_format", ["table", "json"])
def test_plan_reports_a_bad_namespace_as_a_gap_and_exits_0(
    tmp_path: Path, output_format: str
) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text(
        json.dumps(run_event(("postgres://db]:5432", "a.b.c"), (GOOD, "analytics.sales.totals")))
        + "\n"
    )
    definition = tmp_path / "definition.json"
    definition.write_text(json.dumps(CREATE_EVERYTHING))
    done = subprocess.run(
        [CLI, "plan", str(events), "--definition", str(definition), "--format", output_format],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    if output_format == "json":
        plan = json.loads(done.stdout)
        assert plan["report"]["gaps"]["UNMAPPED_NAMESPACE"]["count"] == 1
        assert {s["name"] for s in plan["systems"]} == {"good", "OpenLineage"}
    else:
        assert "UNMAPPED_NAMESPACE" in done.stdout
        assert "a bracket outside an IPv6 address literal" in done.stdout
