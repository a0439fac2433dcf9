"""``airflow-blindata plan``: where each OpenLineage object will land, before any sync.

Reads event files, a job definition and optionally the Systems Blindata holds (a JSON list in the
wire format of ``GET /api/v1/systems``), and renders the mapper's plan and report as JSON or as
readable tables.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from airflow_blindata.config import JobDefinition
from airflow_blindata.eventfiles import read_event_file
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.systems import KnownSystem
from airflow_blindata.sync.render import excerpt, gap_table, table

__all__ = ["load_known_systems", "plan_files", "render_tables"]

_EXCERPT = 40


def load_known_systems(path: str | Path) -> list[KnownSystem]:
    """Systems from a JSON list (or a Spring page) of Blindata System objects."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict) and "content" in data:
        data = data["content"]
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of Systems")
    systems = []
    for index, item in enumerate(data):
        if not isinstance(item, dict) or not item.get("name") or not item.get("uuid"):
            raise ValueError(f"{path}: Systems[{index}] needs a name and a uuid")
        properties = tuple(
            (str(p["name"]), str(p["value"])) for p in item.get("additionalProperties") or ()
        )
        systems.append(KnownSystem(str(item["name"]), str(item["uuid"]), properties))
    return systems


def plan_files(
    event_files: Iterable[str | Path],
    definition: JobDefinition,
    known_systems: Sequence[KnownSystem] = (),
) -> CatalogPlan:
    events: list[Any] = []
    for path in event_files:
        events.extend(read_event_file(path))
    return build(events, definition, known_systems)


def _table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    return table(headers, rows, max_cell=None)  # a plan is read whole: no cell is cut


def _excerpt(text: str | None) -> str:
    return excerpt(text or "", _EXCERPT)


def render_tables(plan: CatalogPlan) -> str:
    """The plan and report as text tables, the way a steward reads them."""
    fields_per_entity: dict[str, int] = {}
    for planned in plan.fields:
        fields_per_entity[str(planned.entity)] = fields_per_entity.get(str(planned.entity), 0) + 1
    parts = [
        f"Plan of job definition {plan.definition_uuid}",
        "",
        "Systems",
        _table(
            ("name", "how", "create", "subtype", "technology", "namespaces"),
            (
                (
                    s.name,
                    s.origin,
                    "yes" if s.create else "",
                    s.subtype,
                    s.technology,
                    " ".join(s.namespaces),
                )
                for s in plan.systems
            ),
        ),
        "",
        "Entities",
        _table(
            ("system", "schema", "name", "type", "create", "fields", "description"),
            (
                (
                    e.key.system,
                    e.key.schema_,
                    e.key.name,
                    e.table_type,
                    "may" if e.may_create else "enrich only",
                    fields_per_entity.get(str(e.key), 0),
                    _excerpt(e.description or (e.documentation and "(documentation)")),
                )
                for e in plan.entities
            ),
        ),
    ]
    if plan.routines:
        parts += [
            "",
            "Routines (SQL analysed by Blindata)",
            _table(
                ("system", "catalog", "name", "dialect", "sql"),
                (
                    (r.system, r.catalog, r.name, r.dialect, _excerpt(r.definition))
                    for r in plan.routines
                ),
            ),
        ]
    if plan.flows:
        parts += [
            "",
            "Flows",
            _table(
                ("kind", "evidence", "name", "scope"),
                ((f.kind, f.evidence, f.name, f.scope) for f in plan.flows),
            ),
        ]
    report = plan.report
    parts += ["", "Counters", _table(("counter", "value"), sorted(report.counters.items()))]
    if report.gaps:
        parts += [
            "",
            "Gaps",
            gap_table(report.gaps.values(), max_cell=None),
        ]
    if report.unknown_facets:
        parts += [
            "",
            "Unknown facets",
            _table(("facet", "count"), sorted(report.unknown_facets.items())),
        ]
    return "\n".join(parts) + "\n"
