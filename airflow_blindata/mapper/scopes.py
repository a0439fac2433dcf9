"""Flow scopes: the key of the job that owns a flow (seed 001 "Scopes").

``ol:<job namespace>|<job name>`` for data flows, with ``#orchestration`` appended for
orchestration flows. A scope has at most 230 characters; past that the job name is shortened and
ends with a hash of the whole scope, keeping the namespace intact, so that the scopes of one
namespace can still be listed by prefix. A job namespace never contains ``|``, so the scopes of
two namespaces never overlap: a producer's namespace that has one is written with ``|`` as
``%7C`` (and ``%`` as ``%25``, so that no other namespace is written alike).
"""

from __future__ import annotations

import hashlib

from airflow_blindata.mapper.identity import shown_namespace
from airflow_blindata.redaction import redact_text

__all__ = [
    "MAX_SCOPE_LENGTH",
    "ORCHESTRATION_SUFFIX",
    "SCOPE_PREFIX",
    "clean_scope",
    "job_scope",
    "shorten",
]

SCOPE_PREFIX = "ol:"
ORCHESTRATION_SUFFIX = "#orchestration"
MAX_SCOPE_LENGTH = 230
_HASH_LENGTH = 12


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:_HASH_LENGTH]


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending with ``~`` and a hash of the whole text."""
    if len(text) <= limit:
        return text
    return text[: limit - _HASH_LENGTH - 1] + "~" + _digest(text)


def with_digest(text: str, of: str, limit: int) -> str:
    """``text`` (cut to fit) then `` #`` and a hash of ``of``: two names spelt alike, told apart
    by what they name, each always the same."""
    tail = " #" + _digest(of)
    return shorten(text, limit - len(tail)) + tail


def _scope_namespace(namespace: str) -> str:
    """``namespace`` as a scope writes it: without ``|``, which ends it (``%`` and ``|``
    percent-encoded; a namespace with neither, every usual one, as it is)."""
    if "|" not in namespace and "%" not in namespace:
        return namespace
    return namespace.replace("%", "%25").replace("|", "%7C")


def job_scope(namespace: str, name: str, *, orchestration: bool = False) -> str:
    """The scope of a job's data flows (or orchestration flows), at most 230 characters."""
    suffix = ORCHESTRATION_SUFFIX if orchestration else ""
    namespace = _scope_namespace(namespace)
    name = redact_text(name)  # a job's name is free text: a ``?token=`` in it is no scope's
    head = f"{SCOPE_PREFIX}{namespace}|"
    full = f"{head}{name}{suffix}"
    if len(full) <= MAX_SCOPE_LENGTH:
        return full
    room = MAX_SCOPE_LENGTH - len(head) - len(suffix)
    if room > _HASH_LENGTH + 1:
        return head + name[: room - _HASH_LENGTH - 1] + "~" + _digest(full) + suffix
    # A namespace too long to keep whole: the scope still has to fit, and stay unique.
    return (
        shorten(full[: -len(suffix)] if suffix else full, MAX_SCOPE_LENGTH - len(suffix)) + suffix
    )


def clean_scope(scope: str) -> str:
    """The scope a job's flows have now of a scope written before job namespaces were cleaned
    (issue 42): ``ol:postgres://etl:pw@db:5432|load`` is ``ol:postgres://db:5432|load``, and a
    name's own secret (``load?token=…``) is hidden as ``job_scope`` hides it. A scope that holds
    none, or that is no job's, is itself.

    Exact for every scope not shortened: a scope is written with the namespace whole, then
    ``|`` (a namespace's own ``|`` and ``%`` written ``%7C`` and ``%25``, which cleaning leaves
    as they are). A scope shortened past 230 characters ends with a hash of the whole scope,
    password included, which no reading gives back: it is cleaned all the same, and names no
    scope written now (its flows are then removed by the cleanup as any scope no longer
    described, not counted as moved)."""
    if not scope.startswith(SCOPE_PREFIX):
        return scope
    namespace, bar, rest = scope[len(SCOPE_PREFIX) :].partition("|")
    if not bar:
        return scope
    clean = f"{SCOPE_PREFIX}{shown_namespace(namespace)}|{redact_text(rest)}"
    return scope if clean == scope else clean
