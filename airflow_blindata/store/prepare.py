"""One raw event → the row the store writes: an event row, or a quarantine row with the reason.

The store judges an event as the mapper will read it (``parse_event``, the envelope only: a
malformed facet never makes an event unreadable). What it could read is stored with its index
columns (kind, job, run, type, time); what it could not, or can never store as it is (a lone
surrogate or a NUL in any string, a job or run name over ``MAX_INDEXED_BYTES``), is quarantined
with the reason (naming the field, never its value) and its raw bytes. Both are keyed by
``event_key``, so a re-sent event is a duplicate. A row the database still refuses is
quarantined too (``refused``).
Why: docs/capture.md#what-the-store-takes-and-what-it-quarantines-storepreparepy
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from airflow_blindata.events import (
    Event,
    JobEvent,
    RunEvent,
    canonical_json,
    deep_json,
    event_key,
    parse_event,
)
from airflow_blindata.events.text import first_text_problem

from .models import UnserializableEvent

__all__ = [
    "MAX_INDEXED_BYTES",
    "Prepared",
    "column_text",
    "prepare",
    "refused",
]

MAX_INDEXED_BYTES: dict[str, int] = {"job.namespace": 500, "job.name": 2_100, "run.runId": 1_000}
"""The longest job namespace, job name and run id the store takes, in UTF-8 bytes.

The store indexes each event by job namespace and name together (with the row id), and
PostgreSQL refuses a btree index entry over 2,704 bytes (a third of a page), for good: such an
event was answered "retry later" for ever and blocked its whole batch. 500 and 2,100 bytes stay
under it together. The name's bound holds every task Airflow can name: a DAG id and a task id of
250 characters each, dotted, in any script (2,001 characters of up to 4 bytes: 2,004 bytes). The
run id is held to 1,000 bytes. Past a bound the event is quarantined, on every store, so that
SQLite and PostgreSQL keep the same events.
"""


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
    except RecursionError:  # nested too deeply for json.dumps (and repr): written without
        return deep_json(raw).encode("utf-8", "backslashreplace")
    except (TypeError, ValueError):
        return repr(raw).encode("utf-8", "backslashreplace")


_TOO_DEEP = "not serializable as JSON: nested too deeply"


def _canonical(data: dict[str, Any]) -> tuple[str, str, bool] | str | None:
    """The key and the stored text of an event, from one serialization, and whether that text
    is Unicode (holds no lone surrogate).

    The text is ``event_key``'s canonical JSON (sorted keys, no whitespace), so the key is its
    sha256 — the same as ``event_key(data)`` (a test pins this) at half the cost of computing
    both. None when ``data`` cannot be JSON at all (a mapping that contains itself: no decoded
    JSON does), ``_TOO_DEEP`` when it is nested deeper than ``json.dumps`` writes at Python's
    recursion limit (a producer's own objects can be; decoded JSON cannot be deeper than what
    ``json.loads`` reads).
    """
    try:
        text = canonical_json(data)
    except RecursionError:
        return _TOO_DEEP
    except (TypeError, ValueError):
        return None
    try:
        encoded, unicode = text.encode("utf-8"), True
    except UnicodeEncodeError:
        encoded, unicode = text.encode("utf-8", "surrogatepass"), False
    return hashlib.sha256(encoded).hexdigest(), text, unicode


_NUL_ESCAPE = "\\u0000"
"""How the canonical text writes a NUL character (an escaped backslash before ``u0000`` is a false
alarm, which the walk of ``first_text_problem`` clears)."""


def _identifiers(event: Event) -> list[tuple[str, str | None]]:
    if isinstance(event, RunEvent):
        return [
            ("job.namespace", event.job.namespace),
            ("job.name", event.job.name),
            ("run.runId", event.run.run_id),
        ]
    if isinstance(event, JobEvent):
        return [("job.namespace", event.job.namespace), ("job.name", event.job.name)]
    return []


def _unstorable(data: dict[str, Any], text: str, unicode: bool, event: Event) -> str | None:
    """Why a readable event cannot be stored as it is (see the module), or None."""
    if not unicode or _NUL_ESCAPE in text:
        problem = first_text_problem(data)
        if problem is not None:
            return problem
        if not unicode:  # not reached: the walk finds what the encoder refused
            return "a string holds a lone surrogate, which is not Unicode text"
    for where, value in _identifiers(event):
        bound = MAX_INDEXED_BYTES[where]
        if value is None or len(value) * 4 <= bound:
            continue
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > bound:
            return f"{where}: {size:,} bytes long, over the {bound:,} bytes the store indexes"
    return None


def column_text(value: str | None) -> str | None:
    """Text a database column accepts: a lone surrogate or NUL becomes its escape (``\\udc80``).

    Readers filter by the same form (``events(job=...)`` applies this too).
    """
    if value is None:
        return value
    if "\x00" in value:  # PostgreSQL text refuses NUL: a reason may quote a key that holds one
        value = value.replace("\x00", "\\u0000")
    if value.isascii():
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
    if type(raw) is UnserializableEvent:
        return Prepared(
            True,
            {
                "key": event_key(raw.partial),
                "received_at": received_at,
                "source": column_text(source),
                "reason": column_text(raw.reason),
                "raw": _raw_bytes(raw.partial),
            },
        )
    data = _decode(raw)
    parsed = parse_event(data if data is not None else raw, facets=False)
    event, problem = parsed.event, parsed.problem
    canonical: tuple[str, str, bool] | None = None
    if data is not None and event is not None:
        written = _canonical(data)
        if written is None:
            problem = "not serializable as JSON (a value that contains itself)"
        elif isinstance(written, str):
            problem = written
        else:
            problem = _unstorable(data, written[1], written[2], event)
            canonical = None if problem is not None else written
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
    key, text, _ = canonical
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


def refused(prepared: Prepared, reason: str) -> Prepared:
    """The quarantine row of an event row that the database refused, with its reason.

    The raw bytes are the event's canonical JSON (the same JSON value as received, and the same
    key, so a re-sent copy is a duplicate of the quarantined one).
    """
    values = prepared.values
    return Prepared(
        True,
        {
            "key": values["key"],
            "received_at": values["received_at"],
            "source": values["source"],
            "reason": column_text(f"the store refused it: {reason}"),
            "raw": str(values["payload"]).encode("utf-8", "surrogatepass"),
        },
    )
