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

from airflow_blindata.redaction import redact_text

__all__ = ["MAX_SCOPE_LENGTH", "ORCHESTRATION_SUFFIX", "SCOPE_PREFIX", "job_scope", "shorten"]

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
