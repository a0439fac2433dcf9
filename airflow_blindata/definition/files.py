"""A job definition's file read strictly: YAML or JSON, where a key written twice is an error.

PyYAML and ``json`` keep the last of two equal keys, which in a definition hides a mistake; here
either is a ``JobDefinitionError`` naming the line and column when the parser knows them. YAML
is read with a ``SafeLoader`` (no object tags); a merge key (``<<: *anchor``) is no key of its
own. What the data means is the model's business (``model.py``).
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from typing import Any

import yaml

from airflow_blindata.definition.errors import JobDefinitionError, Problem

__all__ = ["json_data", "yaml_data"]


def yaml_data(text: str, *, source: str | None = None) -> Any:
    """The data of a YAML text; ``None`` for an empty one."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: no object tags
    except yaml.MarkedYAMLError as error:
        raise JobDefinitionError([_yaml_problem(error)], source=source) from None
    except yaml.YAMLError as error:
        raise JobDefinitionError([Problem("", f"not valid YAML: {error}")], source=source) from None


def json_data(text: str, *, source: str | None = None) -> Any:
    """The data of a JSON text; ``None`` for an empty one (as YAML reads it)."""
    if not text.strip():
        return None
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except json.JSONDecodeError as error:
        problem = Problem("", f"line {error.lineno}, column {error.colno}: {error.msg}")
        raise JobDefinitionError([problem], source=source) from None
    except _DuplicateKeyError as error:
        raise JobDefinitionError([Problem("", str(error))], source=source) from None


class _DuplicateKeyError(ValueError):
    pass


_YAML_MERGE_TAG = "tag:yaml.org,2002:merge"


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys; in a definition that hides a mistake.

    A merge key (``<<: *anchor``) is no key of its own: the base class merges it, the keys
    written beside it winning, as YAML says."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[tuple[type, Hashable]] = set()
        for key_node, _value in node.value:
            if key_node.tag == _YAML_MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                continue  # the base class reports it
            typed = (type(key), key)  # 1 and true are different keys, though equal in Python
            if typed in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(typed)
        return super().construct_mapping(node, deep=deep)


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKeyError(f"duplicate key {key!r}")
        data[key] = value
    return data


def _yaml_problem(error: yaml.MarkedYAMLError) -> Problem:
    mark = error.problem_mark or error.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    what = ": ".join(part for part in (error.context, error.problem) if part)
    return Problem("", f"{where}{what or 'not valid YAML'}")
