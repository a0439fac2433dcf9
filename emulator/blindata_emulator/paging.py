"""Query parameters and Spring pages.

Lists take `page` (0-based), `size` (capped at the emulator's `page_size_cap`, as Spring's
`max-page-size` does) and `sort=prop,ASC|DESC` (repeatable, `a,b,DESC` sorts on both). Empty
values mean "not given": a client may send `?name=&schema=` and get the unfiltered list.
The order always ends with creation order, so walking the pages never skips or repeats an object.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ApiError

__all__ = ["DEFAULT_PAGE_SIZE", "PageRequest", "Params", "page_body"]

DEFAULT_PAGE_SIZE = 20
"""Spring Data's default page size."""

_SORT_PROPERTY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_DIRECTIONS = {"ASC": True, "DESC": False}


class Params:
    """The query parameters of a request, with empty values treated as absent."""

    def __init__(self, items: Iterable[tuple[str, str]]) -> None:
        self._items = [(key, value) for key, value in items]

    def get(self, name: str) -> str | None:
        """The first non-empty value of `name`, or None."""
        return next((value for key, value in self._items if key == name and value != ""), None)

    def getlist(self, name: str) -> list[str]:
        """Every non-empty value of `name`."""
        return [value for key, value in self._items if key == name and value != ""]

    def flag(self, name: str) -> bool:
        """A boolean parameter (`true`/`false`, absent is false)."""
        value = self.get(name)
        if value is None:
            return False
        if value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise ApiError(400, f"query parameter {name} must be true or false, got {value!r}")

    def integer(self, name: str, default: int) -> int:
        """An integer parameter, 400 when it is not one."""
        value = self.get(name)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise ApiError(
                400, f"query parameter {name} must be an integer, got {value!r}"
            ) from None


@dataclass(frozen=True)
class PageRequest:
    """Which page of a list to serve, and in which order."""

    page: int
    size: int
    sort: tuple[tuple[str, bool], ...]

    @property
    def offset(self) -> int:
        """Index of the first object of the page."""
        return self.page * self.size

    @classmethod
    def from_params(cls, params: Params, cap: int) -> PageRequest:
        """Read `page`, `size` and `sort`; 400 on a bad value."""
        page = params.integer("page", 0)
        size = params.integer("size", DEFAULT_PAGE_SIZE)
        if page < 0:
            raise ApiError(400, f"page must be 0 or more, got {page}")
        if size < 1:
            raise ApiError(400, f"size must be 1 or more, got {size}")
        return cls(page=page, size=min(size, cap), sort=tuple(_parse_sort(params.getlist("sort"))))


def _parse_sort(values: Sequence[str]) -> list[tuple[str, bool]]:
    order: list[tuple[str, bool]] = []
    for value in values:
        parts = [part.strip() for part in value.split(",") if part.strip()]
        ascending = True
        if parts and parts[-1].upper() in _DIRECTIONS:
            ascending = _DIRECTIONS[parts.pop().upper()]
        for prop in parts:
            if not _SORT_PROPERTY.match(prop):
                raise ApiError(400, f"cannot sort on {prop!r}: expected sort=property,ASC|DESC")
            order.append((f"$.{prop}", ascending))
    return order


def page_body(content: list[Any], total: int, request: PageRequest) -> dict[str, Any]:
    """A Spring page of `content`, which is page `request.page` of `total` objects."""
    pages = math.ceil(total / request.size) if total else 0
    return {
        "content": content,
        "number": request.page,
        "size": request.size,
        "totalElements": total,
        "totalPages": pages,
        "first": request.page == 0,
        "last": request.page >= pages - 1,
        "numberOfElements": len(content),
        "empty": not content,
    }
