"""Field specifications of the resources, and the two ways of writing them: merge and replace.

A resource declares its writable fields as data (`{"name": STR, "type": ENUM(...)}`); one
function checks a body against them (`clean`), so every endpoint rejects the same wrong types with
the same messages, and an upload reports them per row.

- `merge` is the upsert of an upload: an absent or null property leaves the stored value unchanged,
  and `additionalProperties` merge by name (a sent name replaces every stored value of that name;
  names not sent stay).
- `replace` is a PUT: the body is the whole object, an absent property becomes null.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .clock import normalize_instant
from .errors import RowError
from .model import Doc

__all__ = [
    "ANY",
    "BOOL",
    "DATE",
    "INT",
    "LOOSE_REF",
    "NUM",
    "PROPS",
    "REF",
    "REFS",
    "STR",
    "FieldSpec",
    "Fields",
    "blank",
    "clean",
    "enum",
    "merge",
    "replace",
    "require",
]

PROPERTIES = "additionalProperties"


@dataclass(frozen=True)
class FieldSpec:
    """The wire type of one writable field (`kind`), and its allowed values for an enum."""

    kind: str
    choices: tuple[str, ...] = ()


Fields = Mapping[str, FieldSpec]

STR = FieldSpec("string")
INT = FieldSpec("integer")
NUM = FieldSpec("number")
BOOL = FieldSpec("boolean")
DATE = FieldSpec("date-time")
REF = FieldSpec("reference")
REFS = FieldSpec("list of references")
PROPS = FieldSpec("additional properties")
ANY = FieldSpec("any")
LOOSE_REF = FieldSpec("object")
"""An object kept as sent: the physicalEntity of a field may name it by uuid or by name."""


def enum(*choices: str) -> FieldSpec:
    """A string among `choices`."""
    return FieldSpec("enum", choices)


def _clean_ref(name: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not isinstance(value.get("uuid"), str) or not value["uuid"]:
        raise RowError(f"{name} must be an object with a uuid, got {value!r}")
    return {"uuid": value["uuid"]}


def _clean_props(value: Any) -> list[dict[str, str]]:
    if not isinstance(value, list):
        raise RowError(f"{PROPERTIES} must be a list of {{name, value}}")
    props = []
    for index, prop in enumerate(value):
        if not isinstance(prop, dict) or not isinstance(prop.get("name"), str) or not prop["name"]:
            raise RowError(f"{PROPERTIES}[{index}] must have a name")
        if not isinstance(prop.get("value"), str):
            raise RowError(
                f"{PROPERTIES}[{index}] ({prop['name']}): value must be a string, "
                f"got {prop.get('value')!r}"
            )
        props.append({"name": prop["name"], "value": prop["value"]})
    return props


def _clean_value(name: str, spec: FieldSpec, value: Any) -> Any:
    wrong = RowError(f"{name} must be a {spec.kind}, got {value!r}")
    if spec is STR:
        if not isinstance(value, str):
            raise wrong
        return value
    if spec is INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong
        return value
    if spec is NUM:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise wrong
        return value
    if spec is BOOL:
        if not isinstance(value, bool):
            raise wrong
        return value
    if spec is DATE:
        if not isinstance(value, str):
            raise wrong
        try:
            return normalize_instant(value)
        except ValueError as err:
            raise RowError(f"{name}: {err}") from err
    if spec is REF:
        return _clean_ref(name, value)
    if spec is REFS:
        if not isinstance(value, list):
            raise wrong
        return [_clean_ref(f"{name}[{index}]", item) for index, item in enumerate(value)]
    if spec is PROPS:
        return _clean_props(value)
    if spec is LOOSE_REF:
        if not isinstance(value, dict):
            raise wrong
        return value
    if spec.kind == "enum":
        if value not in spec.choices:
            raise RowError(f"{name} must be one of {', '.join(spec.choices)}, got {value!r}")
        return value
    return value


def clean(body: Any, fields: Fields) -> Doc:
    """The writable fields of `body` that are present and not null, checked and normalized.

    Unknown properties are ignored, as Jackson does in Spring services configured leniently.
    """
    if not isinstance(body, dict):
        raise RowError(f"expected a JSON object, got {type(body).__name__}")
    return {
        name: _clean_value(name, spec, body[name])
        for name, spec in fields.items()
        if body.get(name) is not None
    }


def require(values: Doc, names: tuple[str, ...]) -> None:
    """Raise RowError naming the first required field that is missing."""
    for name in names:
        if values.get(name) in (None, ""):
            raise RowError(f"{name} is required")


def blank(fields: Fields) -> Doc:
    """An object with every field unset."""
    return {name: ([] if spec is PROPS else None) for name, spec in fields.items()}


def merge_properties(
    stored: list[dict[str, str]], sent: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Stored properties whose name was not sent, then the sent ones (repeats kept)."""
    sent_names = {prop["name"] for prop in sent}
    return [prop for prop in stored if prop["name"] not in sent_names] + sent


def merge(stored: Doc, values: Doc) -> Doc:
    """Upsert: `values` (present, non-null) over `stored`; never blanks a stored value."""
    merged = dict(stored)
    for name, value in values.items():
        if name == PROPERTIES:
            merged[name] = merge_properties(list(stored.get(name) or []), value)
        else:
            merged[name] = value
    return merged


def replace(stored: Doc, values: Doc, fields: Fields) -> Doc:
    """PUT: every writable field takes the sent value, or null when absent."""
    replaced = dict(stored)
    replaced.update(blank(fields))
    replaced.update(values)
    return replaced
