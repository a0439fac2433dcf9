"""Tolerant reading of events: raw JSON (text, bytes or a decoded mapping) in, a result out.

``parse_event`` never raises. An event that cannot be read at all (not JSON, not an object, no
``eventTime``, no job, ...) comes back with a ``problem`` that says precisely why; a malformed
facet is dropped and listed while the rest of the event is read; unknown facet keys are listed.
The mapper's ``read_events`` (``mapper/fold/reading.py``) turns those results into a run's gaps.

The event kind follows the spec: a ``run`` makes a RunEvent (which also needs a job), a job
without a run a JobEvent, a dataset without either a DatasetEvent.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
from pydantic import ValidationError

from .base import FacetIssues, MalformedFacet
from .canonical import canonical_json
from .core import ENVELOPE_ONLY, DatasetEvent, Event, JobEvent, RunEvent, name_parent
from .registry import error_reason
from .text import first_text_problem, text_problem, unencodable

__all__ = [
    "ParsedEvent",
    "canonical_json",
    "decode_json",
    "deep_json",
    "event_key",
    "event_text_problem",
    "json_array_items",
    "parse_event",
    "suspect_text",
]


@dataclass(frozen=True, slots=True)
class ParsedEvent:
    """One raw event read: the event, or the ``problem`` that made it unreadable."""

    event: Event | None
    problem: str | None = None
    malformed_facets: tuple[MalformedFacet, ...] = ()
    unknown_facets: tuple[str, ...] = ()


def _json_kind(value: Any) -> str:
    kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    for kind, name in kinds.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, int | float) else type(value).__name__


_SUSPECT_ESCAPE = r"\\u(?:[dD][89a-fA-F]|0000)"
"""A JSON escape that may decode to a lone surrogate or to NUL (a surrogate pair, or an escaped
backslash before it, is a false alarm that the walk clears)."""
_SUSPECT_IN_TEXT = re.compile(_SUSPECT_ESCAPE)
_SUSPECT_IN_BYTES = re.compile(_SUSPECT_ESCAPE.encode())


def suspect_text(text: str | bytes) -> bool:
    """Whether a JSON text may hold a string no store can hold, by a scan of it: an escape that
    may decode to a lone surrogate or NUL, such a character itself, or a NUL byte (UTF-16 or
    UTF-32 bytes). When not, the decoded event has no such string."""
    if isinstance(text, bytes):
        return b"\x00" in text or _SUSPECT_IN_BYTES.search(text) is not None
    return _suspect_escape(text) or unencodable(text) is not None


def _suspect_escape(text: str) -> bool:
    """``_SUSPECT_IN_TEXT.search(text)``, from the first backslash: most texts have none, which
    ``find`` tells at the speed of ``memchr`` (the search of the pattern costs some five
    instructions a character: a percent of a first plan)."""
    start = text.find("\\")
    return start >= 0 and _SUSPECT_IN_TEXT.search(text, start) is not None


def _text_problem(raw: Any, data: dict[str, Any]) -> str | None:
    """``text.text_problem`` of an event; a scan of its JSON text when it came as text."""
    if isinstance(raw, bytearray | memoryview):
        raw = bytes(raw)
    if isinstance(raw, bytes) and b"\x00" not in raw:
        # UTF-8 (UTF-16 and UTF-32 hold NUL bytes): json.loads refuses bytes that are not valid
        # UTF-8, so only an escape can make a bad string.
        return first_text_problem(data) if _SUSPECT_IN_BYTES.search(raw) else None
    if isinstance(raw, str):
        suspect = _suspect_escape(raw) or unencodable(raw)
        return first_text_problem(data) if suspect else None
    return text_problem(data)


def event_text_problem(data: dict[str, Any], *, text: str | bytes | None = None) -> str | None:
    """The string of a decoded event that no store can hold, as a full read (``parse_event``)
    reports it, or None: the check ``facets=False`` leaves out, for a reader that reads an event
    without its facets and must reach the same verdict. ``text`` as for ``parse_event``."""
    return _text_problem(data if text is None else text, data)


_DECODER = msgspec.json.Decoder()


def decode_json(text: str | bytes | bytearray) -> Any:
    """``json.loads(text)``, the same value or the same error, mostly with msgspec (faster).

    msgspec refuses a little that ``json.loads`` reads (``NaN``, ``1e400``, a lone surrogate,
    escaped or not, UTF-16 bytes) and reads nothing it refuses; what it refuses goes to
    ``json.loads``.
    """
    try:
        return _DECODER.decode(text)
    except (msgspec.MsgspecError, ValueError):  # ValueError: text it cannot encode as UTF-8
        return json.loads(text)


_ARRAY_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{},]')
"""A JSON string (whole: its brackets and commas are text), or a bracket or a comma."""


def json_array_items(text: str) -> list[str] | None:
    """The text of each element of the JSON array ``text``, found without recursion; None when
    ``text`` is not one array (its first bracket closed at its end).

    For a batch that ``json.loads`` cannot read whole: an element nested too deeply to decode,
    or not UTF-8 (``text`` decoded with ``surrogateescape``), is then one element to refuse or
    quarantine, and its neighbours are read. The elements are not checked here: each is decoded
    (or refused) on its own, an empty one (``[1,,2]``) included.
    """
    text = text.strip().removeprefix("\ufeff").lstrip()  # a byte order mark, as json reads it
    if not text.startswith("["):
        return None
    items: list[str] = []
    depth, start = 0, 1
    for match in _ARRAY_TOKEN.finditer(text):
        token = match.group()
        if token[0] == '"':
            continue
        if token in "[{":
            depth += 1
        elif token in "]}":
            depth -= 1
            if depth == 0:
                if match.end() != len(text):
                    return None
                last = text[start : match.start()].strip()
                if last or items:
                    items.append(last)
                return items
        elif depth == 1:  # a comma between two elements
            items.append(text[start : match.start()].strip())
            start = match.end()
    return None


def _decode(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The event's JSON object, or why there is none."""
    if type(raw) is dict:  # the usual case, without the slower abstract check
        return raw, None
    if isinstance(raw, Mapping):
        return (raw if isinstance(raw, dict) else dict(raw)), None
    if isinstance(raw, bytes | bytearray | memoryview):
        raw = bytes(raw)
    if not isinstance(raw, str | bytes):
        return None, f"not JSON text or an object: got {_json_kind(raw)}"
    try:
        data = decode_json(raw)
    except RecursionError:
        return None, "not readable JSON: nested too deeply"
    except ValueError as error:  # JSONDecodeError, and UnicodeDecodeError for bad bytes
        return None, f"not JSON: {error}"
    if not isinstance(data, dict):
        return None, f"not a JSON object: got {_json_kind(data)}"
    return data, None


def _event_class(data: dict[str, Any]) -> type[Event] | None:
    if data.get("run") is not None:
        return RunEvent
    if data.get("job") is not None:
        return JobEvent
    if data.get("dataset") is not None:
        return DatasetEvent
    return None


def parse_event(
    raw: str | bytes | Mapping[str, Any] | Any,
    *,
    facets: bool = True,
    text: str | bytes | None = None,
) -> ParsedEvent:
    """Read one event; never raises. Pass a decoded mapping to avoid decoding twice, and with it
    the ``text`` it was decoded from: its strings are then checked by a scan of the text, not by
    a walk of the mapping.

    ``facets=False`` reads the envelope only (every facet map comes back empty): the same verdict
    on whether the event can be read, for a third of the cost. Capture uses it to judge events.
    One check is left to the caller there: a string that no store can hold (a lone surrogate or
    NUL, ``text.py``), which a full read reports as the problem and the store's ``prepare``
    finds in the JSON text it writes anyway.
    """
    try:
        data, problem = _decode(raw)
        if data is None:
            return ParsedEvent(None, problem)
        model = _event_class(data)
        if model is None:
            return ParsedEvent(None, "no run, job or dataset: not an OpenLineage event")
        if not facets:
            envelope = model.model_validate(data, context=ENVELOPE_ONLY)
            name_parent(envelope, data)
            return ParsedEvent(envelope)
        issues = FacetIssues()
        event = model.model_validate(data, context=issues)
        name_parent(event, data)
        if issues.malformed and isinstance(event, RunEvent):
            issues.name_unnamed(event.job.ref)
        problem = _text_problem(raw if text is None else text, data)  # after the envelope
        if problem is not None:
            return ParsedEvent(None, problem)
    except ValidationError as error:
        return ParsedEvent(None, error_reason(error))
    except RecursionError:
        return ParsedEvent(None, "not readable: nested too deeply")
    except Exception as error:  # a guard: reading must never fail the caller
        return ParsedEvent(None, f"not readable: {type(error).__name__}")
    return ParsedEvent(event, None, tuple(issues.malformed), tuple(issues.unknown))


_CIRCULAR = '"<circular>"'


def deep_json(data: Any) -> str:
    """``canonical_json`` of ``data`` without recursion: for a value nested deeper than
    ``json.dumps`` (and ``repr``) can write at Python's recursion limit. Keys sorted as text,
    a value that contains itself written ``"<circular>"``; never raises."""
    out: list[str] = []
    # what is left to write, last first: a value, or text to write as it is (a str in a tuple),
    # or the id of a container whose writing is done (an int in a tuple of two)
    todo: list[Any] = [data]
    open_ids: set[int] = set()
    while todo:
        item = todo.pop()
        if type(item) is tuple:
            if len(item) == 1:
                out.append(item[0])
            else:
                open_ids.discard(item[1])
            continue
        if isinstance(item, Mapping | list):
            if id(item) in open_ids:
                out.append(_CIRCULAR)
                continue
            open_ids.add(id(item))
            todo.append(("done", id(item)))
            if isinstance(item, Mapping):
                pairs = sorted(((str(k), v) for k, v in item.items()), key=lambda kv: kv[0])
                todo.append(("}",))
                for index in range(len(pairs) - 1, -1, -1):
                    key, value = pairs[index]
                    todo.append(value)
                    todo.append(
                        (("," if index else "") + json.dumps(key, ensure_ascii=False) + ":",)
                    )
                todo.append(("{",))
            else:
                todo.append(("]",))
                for index in range(len(item) - 1, -1, -1):
                    todo.append(item[index])
                    if index:
                        todo.append((",",))
                todo.append(("[",))
            continue
        try:
            out.append(json.dumps(item, ensure_ascii=False, default=str))
        except (TypeError, ValueError, RecursionError):
            out.append(json.dumps(repr(item), ensure_ascii=False))
    return "".join(out)


def event_key(raw: str | bytes | Mapping[str, Any] | Any) -> str:
    """The content key of an event: sha256 of its canonical JSON (sorted keys, no whitespace).

    The same event re-sent, re-indented or with its keys reordered has the same key, so a store
    keeps it once. Raw text that is not JSON is keyed by its bytes.
    """
    data: Any = dict(raw) if isinstance(raw, Mapping) else raw
    if isinstance(raw, bytes | bytearray | memoryview | str):
        try:
            data = json.loads(bytes(raw) if not isinstance(raw, str) else raw)
        except (ValueError, RecursionError):
            text = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
            return hashlib.sha256(text).hexdigest()
    try:
        canonical = canonical_json(data)
    except (TypeError, ValueError, RecursionError):  # keys of mixed types, nesting too deep
        try:
            canonical = repr(data)
        except RecursionError:  # too deep for repr too: a producer's objects can be
            canonical = deep_json(data)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
