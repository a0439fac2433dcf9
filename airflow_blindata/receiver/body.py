"""A request body as the receiver reads it: size limits, gzip, and the three accepted shapes.

* One JSON object: one event (what the OpenLineage clients send to ``/api/v1/lineage``).
* A JSON array of objects: a batch (OpenLineage's ``/api/v1/lineage/batch`` shape). An array
  that cannot be read whole (an element nested too deeply to decode, or not UTF-8) is read
  element by element, and only the bad elements are refused, as the bad lines of JSON lines.
* JSON lines (``Content-Type: application/x-ndjson``, or ``application/jsonl``): a batch, one
  event per non-blank line, as the OpenLineage ``FileTransport`` writes them.

The size limit applies to the body as read (compressed) and to the decompressed body: a small
gzip body that inflates past the limit is refused after inflating at most the limit plus one
byte, so a zip bomb costs nothing. Every refusal is a ``BodyError`` with the HTTP status and a
message that says what to change.

Memory: ``read_body`` and ``inflate`` hand each chunk they are about to keep to a ``reserve``
callback first (the receiver's budget of bytes in flight, ``budget``), which may make the
request wait for room, or refuse it, before it takes more memory.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio

from airflow_blindata.events import json_array_items

__all__ = [
    "GZIP_ENCODINGS",
    "NDJSON_TYPES",
    "Body",
    "BodyError",
    "Item",
    "decompress",
    "decompress_within",
    "inflate",
    "read_body",
    "split_events",
]

GZIP_ENCODINGS = frozenset({"gzip", "x-gzip"})
IDENTITY_ENCODINGS = frozenset({"", "identity"})
NDJSON_TYPES = frozenset(
    {
        "application/x-ndjson",
        "application/ndjson",
        "application/jsonl",
        "application/x-jsonlines",
        "application/jsonlines",
    }
)
_GZIP_WBITS = 16 + zlib.MAX_WBITS
INFLATE_STEP = 256 * 1024
"""Bytes decompressed at a time: the most a body inflates before its memory is accounted."""
_STATUS_BAD_REQUEST = 400
_STATUS_TIMEOUT = 408
_STATUS_TOO_LARGE = 413
_STATUS_UNSUPPORTED = 415


class BodyError(Exception):
    """The body cannot be read as events; ``status`` is the HTTP answer, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True, slots=True)
class Item:
    """One element of a body: its decoded JSON object, or why it is not one."""

    index: int
    data: dict[str, Any] | None
    problem: str | None = None
    line: int | None = None

    @property
    def where(self) -> str:
        """``event 3`` or ``event 3 (line 5)``: how messages name the item (0-based index)."""
        return f"event {self.index}" + (f" (line {self.line})" if self.line is not None else "")


@dataclass(frozen=True, slots=True)
class Body:
    """The events of a body; ``batch`` is False for a single JSON object."""

    batch: bool
    items: list[Item]


def _bytes(count: int) -> str:
    return f"{count:,} bytes"


def _too_large(limit: int, what: str) -> BodyError:
    return BodyError(
        _STATUS_TOO_LARGE,
        f"the {what} exceeds {_bytes(limit)} ([blindata] receiver_max_body_bytes): "
        "send fewer events per request",
    )


Reserve = Callable[[int], Awaitable[None]]
"""``reserve(total)``: make room for ``total`` bytes of this request's body, or raise."""


async def read_body(
    chunks: AsyncIterator[bytes],
    *,
    declared_length: str | None,
    limit: int,
    reserve: Reserve | None = None,
    idle_timeout: float | None = None,
) -> bytes:
    """The body, read at most ``limit`` bytes far: a declared or actual excess is a 413.

    ``reserve`` is given the declared length before anything is read, then the size the body
    reaches with each chunk, before the chunk is kept. A body that stalls, no byte for
    ``idle_timeout`` seconds, is a 408: its producer is gone (a host that vanished leaves a
    connection open for ever) or hostile, and the request must give back its share of memory.
    """
    declared = (declared_length or "").strip()
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(limit, "request body")
    if reserve is not None and declared.isdigit():
        await reserve(int(declared))
    received = bytearray()
    iterator = aiter(chunks)
    while True:
        with anyio.move_on_after(idle_timeout) as waiting:
            chunk = await anext(iterator, None)
        if waiting.cancelled_caught:
            raise _stalled(idle_timeout or 0.0, len(received))
        if chunk is None:
            return bytes(received)
        if len(received) + len(chunk) > limit:
            raise _too_large(limit, "request body")
        if reserve is not None:
            await reserve(len(received) + len(chunk))
        received += chunk


def _stalled(idle_timeout: float, received: int) -> BodyError:
    return BodyError(
        _STATUS_TIMEOUT,
        f"no byte of the request body arrived for {idle_timeout:g} s (after {_bytes(received)}): "
        "the request was dropped and nothing of it stored; send the body at once",
    )


def _encoding(content_encoding: str | None) -> str:
    encoding = (content_encoding or "").strip().lower()
    if encoding in IDENTITY_ENCODINGS:
        return ""
    if encoding not in GZIP_ENCODINGS:
        raise BodyError(
            _STATUS_UNSUPPORTED,
            f"Content-Encoding {encoding!r} is not supported: send gzip or no encoding",
        )
    return encoding


def inflate(
    raw: bytes, content_encoding: str | None, *, limit: int, step: int = INFLATE_STEP
) -> Iterator[bytes]:
    """``raw`` decoded by its ``Content-Encoding`` (gzip or none), in pieces of at most ``step``
    bytes (``raw`` itself without an encoding), inflating at most ``limit`` bytes."""
    if not _encoding(content_encoding):
        yield raw
        return
    produced = 0
    pending = raw
    try:
        while pending:  # a gzip body may hold several members, one after the other
            inflater = zlib.decompressobj(_GZIP_WBITS)
            data = pending
            while True:
                most = min(step, limit + 1 - produced)
                piece = inflater.decompress(data, most)
                produced += len(piece)
                if produced > limit:
                    raise _too_large(limit, "decompressed request body")
                if piece:
                    yield piece
                if inflater.eof:
                    break
                data = inflater.unconsumed_tail
                if not data and len(piece) < most:  # all input used, and nothing held back
                    raise BodyError(_STATUS_BAD_REQUEST, "the gzip body is truncated")
            pending = inflater.unused_data
    except zlib.error as error:
        raise BodyError(_STATUS_BAD_REQUEST, f"the body is not valid gzip: {error}") from None


def decompress(raw: bytes, content_encoding: str | None, *, limit: int) -> bytes:
    """``raw`` decoded by its ``Content-Encoding`` (gzip or none), inflating at most ``limit``."""
    if not _encoding(content_encoding):
        return raw
    return b"".join(inflate(raw, content_encoding, limit=limit))


async def decompress_within(
    raw: bytes, content_encoding: str | None, *, limit: int, reserve: Reserve
) -> bytes:
    """``decompress``, giving ``reserve`` the bytes held (``raw`` and what it inflated so far)
    before each piece is kept."""
    if not _encoding(content_encoding):
        return raw
    out = bytearray()
    for piece in inflate(raw, content_encoding, limit=limit):
        await reserve(len(raw) + len(out) + len(piece))
        out += piece
    return bytes(out)


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    kinds: dict[type, str] = {list: "an array", str: "a string", type(None): "null"}
    for kind, name in kinds.items():
        if isinstance(value, kind):
            return name
    return "a number"


def _item(index: int, value: Any, line: int | None = None) -> Item:
    if isinstance(value, dict):
        return Item(index, value, None, line)
    return Item(index, None, f"not a JSON object: got {_json_kind(value)}", line)


def _too_many(limit: int) -> BodyError:
    return BodyError(
        _STATUS_TOO_LARGE,
        f"the batch has more than {limit:,} events ([blindata] receiver_max_batch_events): "
        "split it into smaller batches",
    )


def _decoded(index: int, text: bytes, line: int | None = None) -> Item:
    """One event of a batch decoded on its own: a line, or an element of an array that could
    not be read whole. What is not JSON, nested too deeply, or not UTF-8 is this item's
    problem alone: the batch's other events are stored."""
    try:
        value = json.loads(text)
    except RecursionError:
        return Item(index, None, "not readable JSON: nested too deeply", line)
    except ValueError as error:  # JSONDecodeError, and UnicodeDecodeError for bad bytes
        return Item(index, None, _not_readable(error), line)
    return _item(index, value, line)


def _not_readable(error: ValueError) -> str:
    """Why JSON text could not be read, in a producer's words: an integer longer than Python
    reads (4,300 digits) is valid JSON, and its error's hint names a Python function."""
    if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
        return f"not JSON: {error}"
    return "not readable JSON: a number of more than 4,300 digits"


def _json_lines(body: bytes, max_events: int) -> Body:
    items: list[Item] = []
    for number, line in enumerate(body.splitlines(), start=1):
        if not line.strip():
            continue
        if len(items) >= max_events:
            raise _too_many(max_events)
        items.append(_decoded(len(items), line, number))
    return Body(True, items)


def _array_items(body: bytes, max_events: int) -> Body | None:
    """A JSON array that ``json.loads`` cannot read whole, element by element (an element too
    deep, or not UTF-8, is refused alone); None when the body is not one array."""
    elements = json_array_items(body.decode("utf-8", "surrogateescape"))
    if elements is None:
        return None
    if len(elements) > max_events:
        raise _too_many(max_events)
    return Body(
        True,
        [
            _decoded(index, element.encode("utf-8", "surrogateescape"))
            for index, element in enumerate(elements)
        ],
    )


def split_events(body: bytes, content_type: str | None, *, max_events: int) -> Body:
    """The events of a decoded body: one object, an array, or JSON lines (module docstring)."""
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if not body.strip():
        raise BodyError(_STATUS_BAD_REQUEST, "the body is empty: send an OpenLineage event")
    if media_type in NDJSON_TYPES:
        return _json_lines(body, max_events)
    try:
        value = json.loads(body)
    except (RecursionError, UnicodeDecodeError) as error:
        batch = _array_items(body, max_events)  # one bad event must not sink its batch
        if batch is not None:
            return batch
        if isinstance(error, UnicodeDecodeError):
            raise BodyError(_STATUS_BAD_REQUEST, f"the body is not JSON: {error}") from None
        message = "the body is not readable JSON: nested too deeply"
        raise BodyError(_STATUS_BAD_REQUEST, message) from None
    except ValueError as error:  # JSONDecodeError; or an integer of too many digits
        if not isinstance(error, json.JSONDecodeError):
            batch = _array_items(body, max_events)  # one bad event must not sink its batch
            if batch is not None:
                return batch
            raise BodyError(_STATUS_BAD_REQUEST, f"the body is {_not_readable(error)}") from None
        hint = ""
        if body.lstrip()[:1] == b"{" and b"\n{" in body:
            hint = " (several JSON objects? send them as Content-Type: application/x-ndjson)"
        raise BodyError(_STATUS_BAD_REQUEST, f"the body is not JSON: {error}{hint}") from None
    if isinstance(value, list):
        if len(value) > max_events:
            raise _too_many(max_events)
        return Body(True, [_item(index, element) for index, element in enumerate(value)])
    if isinstance(value, dict):
        return Body(False, [Item(0, value)])
    raise BodyError(
        _STATUS_BAD_REQUEST,
        f"the body is {_json_kind(value)}: send an OpenLineage event (a JSON object) "
        "or a batch (a JSON array of events)",
    )
