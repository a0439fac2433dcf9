"""Plain-text tables for task logs and the command line (no dependency, fixed-width columns)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["MAX_CELL", "table"]

MAX_CELL = 100
"""Longer cells are cut with an ellipsis, so one long message does not widen every row."""


def _cell(value: object) -> str:
    text = "" if value is None else " ".join(str(value).split())
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Left-aligned columns under a dashed rule."""
    cells = [[_cell(h) for h in headers], *[[_cell(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(value.ljust(width) for value, width in zip(row, widths, strict=True)).rstrip()
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)
