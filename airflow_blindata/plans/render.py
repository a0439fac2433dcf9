"""The run report's table of gaps (the generic tables are ``airflow_blindata.tables``)."""

from __future__ import annotations

from collections.abc import Iterable

from airflow_blindata.mapper.report import Gap, ordered_gaps
from airflow_blindata.tables import MAX_CELL, table

__all__ = ["gap_table"]


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
