"""The OpenLineage client's events as JSON objects: ``Serde.to_dict``'s result, made in one pass.

``Serde.to_dict`` copies an event twice (``attr.asdict``, then a pass that drops nulls and turns
enums, dates and UUIDs into text). In a child forked per event, as Airflow emits, every copy
touches fresh memory, and the two passes cost a third of the transport's ``emit``. ``to_dict``
builds the same object in one pass for the values events are made of (attrs classes, dicts with
text keys, lists, tuples, text, numbers, booleans, enums, dates, UUIDs) and hands anything else
to ``Serde.to_dict`` itself, so its result is always Serde's (a property test pins this).

``convert`` is what the transport calls: ``to_dict``, or, for an event that cannot be converted
or written as JSON whole (a facet that holds the DAG object, which contains itself; a schema
nested deeper than Python's recursion limit; keys JSON cannot have), the same event converted part
by part — the envelope, then each facet of the run, the job and each dataset on its own. A facet
that fails is dropped: the text ``dropped_facet`` writes (its reason) stands in its place, and
the mapper reports it as a malformed facet. Only the failure path pays for the parts.
Why: docs/capture.md#what-is-quarantined
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import attr
from openlineage.client.serde import Serde

from airflow_blindata.events import canonical_json, dropped_facet

__all__ = ["Converted", "convert", "to_dict"]


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
    # a dict's subclass too: the OpenLineage provider's own facets of every task event are
    # (``DagInfo``, ``TaskInfo``), and Serde writes them as dicts (a review: they took the slow
    # path, and the check of its JSON, on every event)
    if cls is dict or (isinstance(value, dict) and not attr.has(cls)):
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


@dataclass(frozen=True, slots=True)
class Converted:
    """An event as the store takes it, and what its conversion had to leave out."""

    data: dict[str, Any]
    dropped: tuple[str, ...] = ()
    """The facets dropped, each ``<where>: <reason>`` (``run.facets.airflow: ...``)."""
    problem: str | None = None
    """Why the envelope itself could not be converted: the event is to be quarantined."""


_HOLDERS = frozenset({"run", "job", "dataset"})
"""The event's fields that hold a facet container (RunEvent, JobEvent, DatasetEvent)."""
_DATASET_LISTS = frozenset({"inputs", "outputs"})
_CONTAINERS = frozenset({"facets", "inputFacets", "outputFacets"})
_CONTAINS_ITSELF = "not serializable as JSON (a value that contains itself)"
_TOO_DEEP = "not serializable as JSON: nested too deeply"


def convert(event: Any) -> Converted:
    """``event`` (an OpenLineage client event) as a JSON object; never raises.

    The usual event takes ``to_dict``'s fast pass and nothing more. One with a value outside it
    goes through ``Serde`` and is written as JSON once more here, so that a value the store could
    not write is found while the facets can still be told apart; one that fails either way is
    converted part by part (see the module).
    """
    try:
        plain = _plain(event)
        if type(plain) is dict:
            return Converted(plain)
    except _UnusualValueError:
        pass
    except Exception:
        return _in_parts(event)
    try:
        data = Serde.to_dict(event)
        canonical_json(data)
        return Converted(data)
    except Exception:
        return _in_parts(event)


@attr.define
class _Box:
    """Lets ``attr.asdict`` convert any value as it converts an attrs field (``Serde.to_dict``)."""

    value: Any


def _part(value: Any) -> Any:
    """One part of an event as ``Serde.to_dict`` writes it; raises what stops it being JSON."""
    try:
        plain = _plain(value)
    except _UnusualValueError:
        plain = Serde.remove_nulls_and_enums(attr.asdict(_Box(value))["value"])
    canonical_json(plain)
    return plain


def _reason(value: Any, error: Exception) -> str:
    """Why ``value`` could not be written as JSON, naming no value (it may hold secrets)."""
    if isinstance(error, RecursionError):
        return _CONTAINS_ITSELF if _contains_itself(value) else _TOO_DEEP
    if isinstance(error, ValueError) and "ircular" in str(error):
        return _CONTAINS_ITSELF
    if isinstance(error, TypeError) and str(error).startswith("keys must be"):
        return f"not serializable as JSON: {error}"  # names types only
    return f"not serializable as JSON ({type(error).__name__})"


def _children(value: Any) -> list[Any]:
    """What ``attr.asdict`` (and ``Serde``) descend into."""
    cls = type(value)
    if attr.has(cls):
        return [getattr(value, name) for name in _field_names(cls)]
    if isinstance(value, Mapping):
        return [*value.keys(), *value.values()]
    if isinstance(value, list | tuple | set | frozenset):
        return list(value)
    return []


def _contains_itself(value: Any) -> bool:
    """Whether ``value`` reaches itself through what the conversion descends into: a depth-first
    walk without recursion, each object walked once."""
    on_path: set[int] = set()
    done: set[int] = set()
    todo: list[tuple[Any, bool]] = [(value, False)]
    while todo:
        item, leaving = todo.pop()
        if leaving:
            on_path.discard(id(item))
            done.add(id(item))
            continue
        if id(item) in on_path:
            return True
        children = _children(item)
        if not children or id(item) in done:
            continue
        on_path.add(id(item))
        todo.append((item, True))
        todo.extend((child, False) for child in children)
    return False


class _Parts:
    """The state of one conversion part by part: what was dropped, and the envelope's problem."""

    def __init__(self) -> None:
        self.dropped: list[str] = []
        self.problems: list[str] = []

    def envelope(self, value: Any, where: str) -> Any:
        """A part of the envelope; one that fails is noted as the event's problem."""
        try:
            return _part(value)
        except Exception as error:
            reason = _reason(value, error)
            self.problems.append(f"{where}: {reason}")
            return reason

    def facets(self, container: Any, where: str) -> Any:
        """A facet container, each facet on its own: one that fails is dropped."""
        if not isinstance(container, Mapping):
            return self.envelope(container, where)
        facets: dict[str, Any] = {}
        for key, facet in container.items():
            if type(key) is not str:  # no key to leave the reason under: named in the warning
                self.dropped.append(f"{where}: a facet under a {type(key).__name__} key")
                continue
            try:
                plain = _part(facet)
            except Exception as error:
                reason = _reason(facet, error)
                self.dropped.append(f"{where}.{key}: {reason}")
                plain = dropped_facet(reason)
            if plain is not None:
                facets[key] = plain
        return facets

    def holder(self, value: Any, where: str) -> Any:
        """A run, job or dataset: its fields, its facet containers a facet at a time."""
        if not attr.has(type(value)):
            return self.envelope(value, where)
        plain: dict[str, Any] = {}
        for name in _field_names(type(value)):
            item = getattr(value, name)
            path = f"{where}.{name}"
            part = self.facets(item, path) if name in _CONTAINERS else self.envelope(item, path)
            if part is not None:
                plain[name] = part
        return plain

    def event(self, event: Any) -> dict[str, Any]:
        plain: dict[str, Any] = {}
        for name in _field_names(type(event)):
            value = getattr(event, name)
            if name in _HOLDERS:
                part = self.holder(value, name)
            elif name in _DATASET_LISTS and isinstance(value, list | tuple):
                parts = (self.holder(item, f"{name}.{i}") for i, item in enumerate(value))
                part = [each for each in parts if each is not None and each != {}]
            else:
                part = self.envelope(value, name)
            if part is not None:
                plain[name] = part
        return plain


def _in_parts(event: Any) -> Converted:
    parts = _Parts()
    what = {"unserializable": type(event).__name__}
    if not attr.has(type(event)):  # not a client event
        return Converted(what, problem="not an OpenLineage client event")
    try:
        data = parts.event(event)
    except Exception as error:  # a field that cannot even be read: nothing to keep but its kind
        return Converted(what, problem=f"the event cannot be read ({type(error).__name__})")
    problem = "; ".join(parts.problems) or None
    return Converted(data, tuple(parts.dropped), problem)
