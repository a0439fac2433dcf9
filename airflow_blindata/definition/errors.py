"""What is wrong in a job definition, in the user's words: ``Problem`` and ``JobDefinitionError``.

``problems`` translates pydantic's validation errors into one ``Problem`` per bad key: its path
in the file's spelling (``systemPolicies[0].creation``) and a sentence that says what the key
must be and what was written (``must be true or false, got 'yes'``). An unknown key is answered
with the closest known one (a snake_case or case slip first, then a typo), or the keys allowed
there. ``JobDefinitionError`` lists every problem of a file at once, never only the first.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, get_args

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

__all__ = ["JobDefinitionError", "Problem", "describe", "problems"]

_MAX_SHOWN_INPUT = 60


class Problem(NamedTuple):
    """One thing wrong in a definition: the path of the key, in the file's spelling, and why."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class JobDefinitionError(ValueError):
    """A job definition that cannot be used; the message lists every problem, not the first."""

    def __init__(self, problems: Sequence[Problem], *, source: str | None = None) -> None:
        self.problems = tuple(problems)
        self.source = source
        where = f" in {source}" if source else ""
        count = f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}"
        lines = [f"Invalid job definition{where} ({count}):"]
        lines += [f"  - {problem}" for problem in self.problems]
        super().__init__("\n".join(lines))


def problems(error: ValidationError, root: type[BaseModel]) -> list[Problem]:
    """One ``Problem`` per error of ``error``, raised validating the model ``root``."""
    found = []
    for item in error.errors(include_url=False):
        if item["type"] == "invalid_key":  # the last part of loc is the key, not a list index
            key = describe(item["input"])
            found.append(Problem(_path(item["loc"][:-1]), f"keys must be text, got {key}"))
        else:
            found.append(Problem(_path(item["loc"]), _message(item, root)))
    return found


def _path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path


def describe(value: Any) -> str:
    """The value as the user wrote it, in YAML words, short enough for a log line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    shown = repr(value)
    return shown if len(shown) <= _MAX_SHOWN_INPUT else shown[: _MAX_SHOWN_INPUT - 3] + "..."


_MESSAGES = {
    "missing": "is required",
    "bool_type": "must be true or false",
    "int_type": "must be a whole number",
    "float_type": "must be a number",
    "string_type": "must be a string",
    "tuple_type": "must be a list",
    "model_type": "must be a mapping of keys to values",
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than_equal": "must be at most {le}",
}


def _message(item: ErrorDetails, root: type[BaseModel]) -> str:
    kind, context = item["type"], item.get("ctx", {})
    if kind == "value_error":
        return str(context.get("error", item["msg"]))
    if kind == "extra_forbidden":
        return _unknown_key_message(item["loc"], root)
    if kind == "enum":
        expected = str(context.get("expected", "")).replace("'", "")
        return f"must be {expected}, got {describe(item['input'])}"
    if kind == "missing":
        return _MESSAGES[kind]
    template = _MESSAGES.get(kind)
    text = template.format(**context) if template else item["msg"]
    return f"{text}, got {describe(item['input'])}"


def _unknown_key_message(loc: tuple[int | str, ...], root: type[BaseModel]) -> str:
    known = _keys_at(loc[:-1], root)
    key = str(loc[-1])
    suggestion = _closest(key, known)
    if suggestion:
        return f"unknown key (did you mean {suggestion}?)"
    return f"unknown key; the keys here are {', '.join(known)}" if known else "unknown key"


def _closest(key: str, known: Sequence[str]) -> str | None:
    """snake_case and case slips first, then difflib's idea of a typo."""
    by_lower = {name.lower(): name for name in known}
    for candidate in (to_camel(key), key.replace("_", "").lower(), key.lower()):
        if candidate in known:
            return candidate
        if candidate.lower() in by_lower:
            return by_lower[candidate.lower()]
    close = difflib.get_close_matches(key, known, n=1)
    return close[0] if close else None


def _keys_at(loc: tuple[int | str, ...], root: type[BaseModel]) -> list[str]:
    """The keys of the model found at ``loc``, walking the field annotations from ``root``."""
    model: type[BaseModel] | None = root
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        field = next(
            (info for name, info in model.model_fields.items() if (info.alias or name) == part),
            None,
        )
        model = _model_in(field.annotation) if field else None
    if model is None:
        return []
    return [info.alias or name for name, info in model.model_fields.items()]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in get_args(annotation):
        found = _model_in(argument)
        if found is not None:
            return found
    return None
