"""Plain-text tables for task logs and the command line (no dependency, fixed-width columns)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from airflow_blindata.mapper.report import Gap

__all__ = ["MAX_CELL", "excerpt", "gap_table", "table"]

MAX_CELL = 100
"""Longer cells are cut with an ellipsis, so one long message does not widen every row."""


def excerpt(value: object, limit: int | None = MAX_CELL) -> str:
    """``value`` on one line, cut with an ellipsis past ``limit`` characters (None: never)."""
    text = "" if value is None else " ".join(str(value).split())
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def table(
    headers: Sequence[str], rows: Iterable[Sequence[object]], *, max_cell: int | None = MAX_CELL
) -> str:
    """Left-aligned columns under a dashed rule."""
    cells = [
        [excerpt(h, max_cell) for h in headers],
        *[[excerpt(c, max_cell) for c in row] for row in rows],
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)).rstrip()
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def gap_table(gaps: Iterable[Gap], *, max_cell: int | None = MAX_CELL) -> str:
    """The gaps by code: how many, two examples, and what to do about them."""
    return table(
        ("gap", "count", "examples", "what to do"),
        (
            (gap.code.value, gap.count, "; ".join(gap.examples[:2]), gap.hint)
            for gap in sorted(gaps, key=lambda g: g.code.value)
        ),
        max_cell=max_cell,
    )
