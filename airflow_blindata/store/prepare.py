"""One raw event → the row the store writes: an event row, or a quarantine row with the reason.

The store judges an event exactly as the mapper will read it (``parse_event``): what the mapper
could read is stored with its index columns (kind, job, run, type, time); what it could not read
at all is quarantined with ``parse_event``'s reason and its raw text, so that nothing is lost and
the reason is visible. Both are keyed by ``event_key`` (content), so a re-sent event is a
duplicate.

Only the envelope is read here (``parse_event(..., facets=False)``): a malformed facet never
makes an event unreadable (the mapper drops and reports it when it reads the event), so the
verdict is the same, and capture, which judges each event in a child forked for it, saves most
of the cost of reading.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from airflow_blindata.mapper.events import JobEvent, RunEvent, event_key, parse_event

__all__ = ["Prepared", "column_text", "prepare"]


@dataclass(frozen=True, slots=True)
class Prepared:
    """The row of one event; ``quarantined`` says which table it goes to."""

    quarantined: bool
    values: dict[str, Any]

    @property
    def key(self) -> str:
        key: str = self.values["key"]
        return key


def _decode(raw: Any) -> dict[str, Any] | None:
    """The JSON object of ``raw``, or None when it is not one (``parse_event`` says why)."""
    if type(raw) is dict:  # the usual case, without the slower abstract check
        return raw
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, bytearray | memoryview):
        raw = bytes(raw)
    if isinstance(raw, str | bytes):
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        return data if isinstance(data, dict) else None
    return None


def _raw_bytes(raw: Any) -> bytes:
    """The raw input as bytes, losslessly where it was text or bytes."""
    if isinstance(raw, bytes | bytearray | memoryview):
        return bytes(raw)
    if isinstance(raw, str):
        return raw.encode("utf-8", "surrogatepass")
    try:
        return json.dumps(raw, default=str).encode()
    except (TypeError, ValueError, RecursionError):
        return repr(raw).encode("utf-8", "backslashreplace")


def _canonical(data: dict[str, Any]) -> tuple[str, str] | None:
    """The key and the stored text of an event, from one serialization.

    The text is ``event_key``'s canonical JSON (sorted keys, no whitespace), so the key is its
    sha256 — the same as ``event_key(data)`` (a test pins this) at half the cost of computing
    both. Text holding a lone surrogate, which no database column accepts, is stored with
    ``\\u`` escapes instead: the same JSON value. None when ``data`` cannot be JSON at all
    (a mapping that contains itself: no decoded JSON does).
    """
    try:
        text = json.dumps(
            data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )
        encoded = text.encode("utf-8", "surrogatepass")
    except (TypeError, ValueError, RecursionError):
        return None
    key = hashlib.sha256(encoded).hexdigest()
    if not text.isascii():
        try:
            encoded.decode("utf-8")
        except UnicodeDecodeError:
            text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return key, text


def column_text(value: str | None) -> str | None:
    """Text a database column accepts: a lone surrogate becomes its ``\\udc80`` escape.

    Readers filter by the same form (``events(job=...)`` applies this too).
    """
    if value is None or value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def _utc(value: datetime) -> datetime | None:
    try:
        return value.astimezone(UTC)
    except (OverflowError, ValueError):  # year 9999 with a negative offset, and the like
        return None


def prepare(raw: Any, *, source: str, received_at: datetime) -> Prepared:
    """The event row of ``raw``, or its quarantine row; never raises for any input."""
    data = _decode(raw)
    parsed = parse_event(data if data is not None else raw, facets=False)
    event, problem = parsed.event, parsed.problem
    canonical = _canonical(data) if data is not None and event is not None else None
    if data is not None and event is not None and canonical is None:
        problem = "not serializable as JSON (a value that contains itself)"
    if canonical is None or event is None:
        return Prepared(
            True,
            {
                "key": event_key(raw),
                "received_at": received_at,
                "source": column_text(source),
                "reason": column_text(problem or "not an OpenLineage event"),
                "raw": _raw_bytes(raw),
            },
        )
    key, text = canonical
    values: dict[str, Any] = {
        "key": key,
        "received_at": received_at,
        "event_time": _utc(event.event_time),
        "kind": type(event).__name__,
        "job_namespace": None,
        "job_name": None,
        "run_id": None,
        "event_type": None,
        "source": column_text(source),
        "payload": text,
    }
    if isinstance(event, RunEvent | JobEvent):
        values["job_namespace"] = column_text(event.job.namespace)
        values["job_name"] = column_text(event.job.name)
    if isinstance(event, RunEvent):
        values["run_id"] = column_text(event.run.run_id)
        values["event_type"] = event.event_type.value if event.event_type else None
    return Prepared(False, values)
