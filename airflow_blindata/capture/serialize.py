"""The OpenLineage client's events as JSON objects: ``Serde.to_dict``'s result, made in one pass.

``Serde.to_dict`` copies an event twice (``attr.asdict``, then a pass that drops nulls and turns
enums, dates and UUIDs into text). In a child forked per event, as Airflow emits, every copy
touches fresh memory, and the two passes cost a third of the transport's ``emit``. ``to_dict``
builds the same object in one pass for the values events are made of (attrs classes, dicts with
text keys, lists, tuples, text, numbers, booleans, enums, dates, UUIDs) and hands anything else
to ``Serde.to_dict`` itself, so its result is always Serde's (a property test pins this).
"""

from __future__ import annotations

import datetime
import uuid
from enum import Enum
from typing import Any

import attr
from openlineage.client.serde import Serde

__all__ = ["to_dict"]


class _UnusualValueError(Exception):
    """A value outside the common set: ``Serde.to_dict`` decides."""


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(cls: type[Any]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(field.name for field in attr.fields(cls))
    return names


def _plain(value: Any) -> Any:
    """``value`` as Serde writes it; None for what Serde drops."""
    cls = type(value)
    if cls is str or cls is int or cls is float or cls is bool or value is None:
        return value
    if cls is dict:
        plain = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _UnusualValueError
            item = _plain(item)
            if item is not None:
                plain[key] = item
        return plain
    if cls is list or cls is tuple:
        items = []
        for item in value:
            item = _plain(item)
            # Serde drops nulls and empty objects from arrays (not from objects).
            if item is not None and not (type(item) is dict and not item):
                items.append(item)
        return items
    if attr.has(cls):
        plain = {}
        for name in _field_names(cls):
            item = _plain(getattr(value, name))
            if item is not None:
                plain[name] = item
        return plain
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime.date):  # datetime too
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise _UnusualValueError


def to_dict(event: Any) -> dict[str, Any]:
    """The JSON object of an OpenLineage client event, equal to ``Serde.to_dict(event)``."""
    try:
        plain = _plain(event)
    except _UnusualValueError:
        plain = None
    if type(plain) is dict:
        return plain
    return Serde.to_dict(event)
