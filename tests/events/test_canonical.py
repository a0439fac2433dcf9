"""``canonical_json`` writes what ``json.dumps`` wrote before it (the same text, or the same error),
whatever the value: the store keys each event by the sha256 of that text, so the keys of events
stored already must never change."""

from __future__ import annotations

import enum
import hashlib
import json
import uuid
from collections import OrderedDict
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.events import canonical_json, event_key

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "openlineage"


def reference(data: Any) -> str:
    """``canonical_json`` as it was written until msgspec wrote it (the keys of stored events)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def outcome(write: Any, data: Any) -> object:
    try:
        return write(data)
    except (TypeError, ValueError, RecursionError) as error:
        return type(error)


any_text = st.text(st.characters(codec=None, categories=None))  # lone surrogates and NUL too
numbers = (
    st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**65)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([1e16, 1e-5, 1.5e-07, -0.0, 5e-324, 1e308, 100.0, 0.1])
)
scalars = st.none() | st.booleans() | numbers | any_text | st.text()
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(any_text | st.text(), inner),
    max_leaves=40,
)


@given(st.dictionaries(any_text | st.text(), json_values) | st.lists(json_values))
def test_the_same_text_as_json_dumps_for_any_json_value(data: Any) -> None:
    assert outcome(canonical_json, data) == outcome(reference, data)


@given(json_values)
def test_the_same_text_for_a_value_of_any_shape(data: Any) -> None:
    assert outcome(canonical_json, data) == outcome(reference, data)


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Kind(enum.StrEnum):
    TABLE = "table"


python_values = st.sampled_from(
    [
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5),
        date(2026, 1, 2),
        timedelta(hours=1),
        uuid.UUID("0190a0a0-0000-7000-8000-000000000000"),
        Decimal("1.50"),
        b"bytes",
        bytearray(b"bytes"),
        (1, "a"),
        frozenset({1}),
        {2, 1},
        Colour.RED,
        Level.HIGH,
        Kind.TABLE,
        Path("/a/b"),
        OrderedDict([("b", 1), ("a", 2)]),
        {1: "int key"},
        {1: "a", "b": 2},  # keys of mixed types: TypeError
    ]
)


@given(
    st.recursive(
        scalars | python_values,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=20,
    )
)
def test_the_same_text_for_python_values_json_writes_with_str(data: Any) -> None:
    """What a producer's own objects may hold (the transport's): written as ``str`` writes
    them, as before, never as msgspec would."""
    assert outcome(canonical_json, {"event": data}) == outcome(reference, {"event": data})


@pytest.mark.parametrize("depth", [10, 400, 600, 990, 1000, 5000])
def test_the_same_text_or_error_however_deep(depth: int) -> None:
    data: Any = [1]
    for _ in range(depth):
        data = {"a": [data]}
    assert outcome(canonical_json, data) == outcome(reference, data)


def test_a_value_that_contains_itself_is_the_same_error() -> None:
    data: dict[str, Any] = {"a": 1}
    data["self"] = data
    assert outcome(canonical_json, data) is ValueError
    assert outcome(reference, data) is ValueError


def _fixture_events() -> list[Any]:
    events: list[Any] = []
    for path in sorted(FIXTURES.rglob("*.json*")):
        text = path.read_text(encoding="utf-8")
        try:
            whole = json.loads(text)
        except ValueError:
            events += [json.loads(line) for line in text.splitlines() if line.strip()]
            continue
        events += whole if isinstance(whole, list) else [whole]
    return events


def test_the_fixtures_keep_their_keys() -> None:
    """Every event of the fixture sets: the same text, so the same ``event_key``."""
    events = _fixture_events()
    assert len(events) > 10
    for data in events:
        assert canonical_json(data) == reference(data)
    event = {"eventType": "START", "é": [1, 2.5, None, True], "z": {"b": "\u2028", "a": "\x7f"}}
    expected = hashlib.sha256(reference(event).encode()).hexdigest()
    assert event_key(event) == expected


def test_a_plain_event_is_written_without_json_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast way is the one taken for an event of plain JSON without floats (else the
    properties above would hold trivially)."""
    from airflow_blindata.events import canonical

    event = {"eventType": "START", "run": {"runId": "r"}, "job": {"name": "é", "n": 2**70}}
    expected = reference(event)

    def refuse(*_: Any, **__: Any) -> str:
        raise AssertionError("json.dumps was called")

    monkeypatch.setattr(canonical.json, "dumps", refuse)
    assert canonical_json(event) == expected
