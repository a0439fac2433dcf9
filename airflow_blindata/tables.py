"""Plain-text tables for task logs and the command line (no dependency, fixed-width columns).

Every table the provider prints goes through ``table``: the run report, ``plan``, ``store stats``
and ``check --api``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["MAX_CELL", "excerpt", "table"]

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
