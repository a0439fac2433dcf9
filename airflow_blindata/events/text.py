"""Text that nothing downstream can hold: a lone surrogate, or a NUL character.

Both are valid JSON. ``"\\ud800"`` decodes to a lone surrogate, which is not Unicode text: it
cannot be encoded as UTF-8, so it cannot be printed, stored in a text column or sent to
Blindata. ``"\\u0000"`` decodes to NUL, which PostgreSQL text (the store's, and Blindata's)
refuses. An event that holds either, in any value or key, is decided on once, at the edge: the
store quarantines it with the reason ``text_problem`` gives (``store.prepare``), so the sync never
meets it; the mapper reads it as unreadable with the same reason (``parse_event``), for events
that reach it from a file or from a store written by an older version.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["first_text_problem", "text_problem", "unencodable"]

_NUL_ESCAPE = "\\u0000"
"""How JSON text (``json.dumps``, with or without ``ensure_ascii``) writes a NUL character."""
_MAX_SEGMENT = 60
_ENCODER = json.JSONEncoder(ensure_ascii=False, check_circular=False, default=str)
"""One encoder for every check (``json.dumps`` with options builds one per call). A value that
contains itself, which no decoded JSON does, ends in ``RecursionError`` instead of a check."""


def unencodable(value: str) -> str | None:
    """What in ``value`` cannot be stored as text, or None."""
    if "\x00" in value:
        return "holds a NUL character (\\u0000), which database text columns refuse"
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(value[error.start])
        return (
            f"holds a lone surrogate (\\u{code:04x}), which is not Unicode text "
            "(it cannot be encoded as UTF-8)"
        )
    return None


def text_problem(data: Any, text: str | None = None) -> str | None:
    """Where ``data`` holds a string that cannot be stored, and why; None when it holds none.

    ``text`` is ``data`` as JSON written with ``ensure_ascii=False``, when the caller has it: the
    check is then a scan of it, and ``data`` is walked only when that scan finds a suspect. Never
    raises.
    """
    if text is None:
        try:
            text = _ENCODER.encode(data)
        except (TypeError, ValueError, RecursionError):
            return None  # not JSON at all: the reader says why
    if _NUL_ESCAPE not in text and unencodable(text) is None:
        return None
    return first_text_problem(data)


def first_text_problem(data: Any) -> str | None:
    """The first bad string of ``data`` in document order (keys before their values), as
    ``<path>: <what>``; None when there is none. A walk of every string: call it on a suspect."""
    try:
        return _first(data)
    except RecursionError:
        return "(the event): nested too deeply to read"


def _first(data: Any) -> str | None:
    stack: list[tuple[Any, tuple[str, ...], bool]] = [(data, (), False)]
    while stack:
        value, path, is_key = stack.pop()
        if isinstance(value, str):
            what = unencodable(value)
            if what is not None:
                where = _where(path)
                return f"{where}: the key {what}" if is_key else f"{where}: {what}"
        elif isinstance(value, Mapping):
            for key, item in reversed(list(value.items())):
                inner = (*path, _segment(str(key)))
                stack.append((item, inner, False))
                stack.append((key, inner, True))
        elif isinstance(value, list | tuple):
            for index in range(len(value) - 1, -1, -1):
                stack.append((value[index], (*path, str(index)), False))
    return None


def _segment(key: str) -> str:
    """A key as a reason shows it: escaped when it cannot be shown as it is, and short."""
    if not key.isprintable() or unencodable(key) is not None:
        key = key.encode("unicode_escape").decode("ascii")
    return key if len(key) <= _MAX_SEGMENT else key[: _MAX_SEGMENT - 1] + "…"


def _where(path: tuple[str, ...]) -> str:
    return ".".join(path) if path else "(the event)"
