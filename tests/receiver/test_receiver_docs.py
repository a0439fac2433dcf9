"""The events in docs/configure-your-producers.md are events the receiver takes, facets and all."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.events import LineageJobFacet, RunEvent, SQLJobFacet, parse_event

DOC = Path(__file__).parents[2] / "docs" / "configure-your-producers.md"
JSON_BLOCK = re.compile(r"```json\n(.*?)```", re.DOTALL)


def doc_events() -> list[dict[str, Any]]:
    blocks = [json.loads(block) for block in JSON_BLOCK.findall(DOC.read_text())]
    return [block for block in blocks if "eventType" in block]


def test_the_doc_has_its_two_example_events() -> None:
    assert len(doc_events()) == 2


@pytest.mark.parametrize(
    ("raw", "key", "facet"),
    list(zip(doc_events(), ["lineage", "sql"], [LineageJobFacet, SQLJobFacet], strict=True)),
    ids=["lineage facet", "sql facet"],
)
def test_each_example_event_is_read_whole(raw: dict[str, Any], key: str, facet: type) -> None:
    parsed = parse_event(raw)

    assert isinstance(parsed.event, RunEvent), parsed.problem
    assert parsed.malformed_facets == ()
    assert parsed.unknown_facets == ()
    assert isinstance(parsed.event.job.facets.get(key), facet)
