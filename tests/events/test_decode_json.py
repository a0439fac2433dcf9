"""``decode_json`` reads JSON text as ``json.loads`` does (same value, or the same error), with
msgspec where it can: a stored event decodes to the same event whichever decoder read it."""

from __future__ import annotations

import json
import math

import pytest

from airflow_blindata.events.parse import decode_json, parse_event

TEXTS = [
    '{"a": 1, "b": [1.5, -0.0, 1e5, 1.5e-320, 123456789012345678901234567890]}',
    '{"a": NaN, "b": Infinity}',  # msgspec refuses: json.loads reads them
    '{"a": 1e400}',  # out of msgspec's range: inf, as json.loads says
    '{"a": "\\ud800 lone surrogate", "b": "\\u0000"}',
    '{"a": "\ud800 a lone surrogate itself", "\udc80": 1}',  # as bytes: not UTF-8
    '{"a": "\\ud83d\\ude00 pair", "é": "ü"}',
    '{"a": 1, "a": 2}',  # the last one wins in both
    ' {"spaces": true} ',
    '{"a": 1}x',
    "[1,]",
    '"a\tb"',
    "",
    '{"a": ' * 100_000,  # too deep
]


def _outcome(read: object, text: str | bytes) -> object:
    try:
        value = read(text)  # type: ignore[operator]
    except RecursionError:
        return RecursionError
    except ValueError as error:
        return type(error)
    return json.dumps(value, sort_keys=True)  # NaN != NaN: compare their texts


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_decode_json_gives_what_json_loads_gives(text: str, as_bytes: bool) -> None:
    raw = text.encode("utf-8", "surrogatepass") if as_bytes else text
    assert _outcome(decode_json, raw) == _outcome(json.loads, raw)


def test_utf16_bytes_are_read_as_json_loads_reads_them() -> None:
    raw = '{"a": [1, 2]}'.encode("utf-16")
    assert decode_json(raw) == json.loads(raw) == {"a": [1, 2]}


def test_nan_comes_back_a_float() -> None:
    assert math.isnan(decode_json('{"a": NaN}')["a"])


EVENT = (
    '{"eventType": "COMPLETE", "eventTime": "2026-01-01T00:00:00Z", "producer": "p",'
    ' "run": {"runId": "0190b1c2-0000-7000-8000-000000000001"},'
    ' "job": {"namespace": "ns", "name": "%s"}, "inputs": [], "outputs": []}'
)


@pytest.mark.parametrize(
    ("name", "readable"),
    [("plain", True), ("\\u0000nul", False), ("\\ud800lone", False), ("\\\\u0000text", True)],
)
def test_a_decoded_event_read_with_its_text_has_the_verdict_of_the_text(
    name: str, readable: bool
) -> None:
    """``parse_event(data, text=...)`` scans the text instead of walking the data: same verdict."""
    text = EVENT % name
    with_text = parse_event(decode_json(text), text=text)
    assert (with_text.event is not None) is readable
    assert with_text == parse_event(text) == parse_event(decode_json(text))
