"""The canonical JSON text of a value: sorted keys, no whitespace, non-ASCII kept as is.

``canonical_json`` returns exactly what ``json.dumps(data, sort_keys=True, separators=(",",
":"), ensure_ascii=False, default=str)`` returns, and raises what it raises: the store keys each
event by the sha256 of this text, so the keys of events stored already depend on every byte (a
property test holds the two together). msgspec writes it when that is sure to be the same text
(a container of plain JSON, no float, read back equal to the value), at about twice the speed;
anything else, ``json.dumps`` writes.
Why: docs/performance.md#canonical-json-eventscanonicalpy
"""

from __future__ import annotations

import json
import sys
from typing import Any

import msgspec

__all__ = ["canonical_json"]

_ENCODER = msgspec.json.Encoder(order="sorted")


class _FloatFoundError(Exception):
    """msgspec writes a float's exponent otherwise (``1e16``, not ``1e+16``)."""


def _refuse_float(_: str) -> Any:
    raise _FloatFoundError


_READ_BACK = msgspec.json.Decoder(float_hook=_refuse_float).decode


def canonical_json(data: Any) -> str:
    """The canonical JSON text of ``data`` (see the module). Raises what ``json.dumps`` raises
    (``TypeError``, ``ValueError``, ``RecursionError``) for what cannot be JSON."""
    if type(data) is dict or type(data) is list:
        try:
            written = _ENCODER.encode(data)
            # Read back equal: no value json.dumps writes otherwise (a datetime, a set, an enum, a
            # tuple, NaN, which msgspec writes as null). Few enough containers that json.dumps
            # could not have run out of stack where msgspec did not.
            shallow = written.count(b"{") + written.count(b"[") <= sys.getrecursionlimit() // 2
            if shallow and _READ_BACK(written) == data:
                return written.decode("utf-8")
        except (_FloatFoundError, TypeError, ValueError, RecursionError, msgspec.MsgspecError):
            pass  # json.dumps decides, and raises what it raises
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
