"""A plan as text tables (``airflow-blindata plan``), and the table of gaps that the sync's run
report shows too. The generic tables are ``airflow_blindata.tables``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import Gap, ordered_gaps
from airflow_blindata.tables import MAX_CELL, excerpt, table

__all__ = ["gap_table", "render_tables"]

_EXCERPT = 40


def gap_table(gaps: Iterable[Gap], *, max_cell: int | None = MAX_CELL) -> str:
    """The gaps by code (``ordered_gaps``): how many, two examples, and what to do about them."""
    return table(
        ("gap", "count", "examples", "what to do"),
        (
            (gap.code.value, gap.count, "; ".join(gap.examples[:2]), gap.hint)
            for gap in ordered_gaps(gaps)
        ),
        max_cell=max_cell,
    )


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
