"""Where a text goes: the description of an entity, or its Markdown documentation (seed 000).

Plain text of 250 characters or fewer is the description; longer plain text, or any text whose
content type is Markdown or HTML, is the documentation. The documentation carries the hash of
what the job wrote, so that the sync can tell a user's later edit from its own text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from airflow_blindata.redaction import redact_text

__all__ = [
    "DESCRIPTION_LIMIT",
    "Placement",
    "as_stored",
    "documentation_hash",
    "is_stamped",
    "place_text",
]

DESCRIPTION_LIMIT = 250
"""Longest plain text kept as a description."""

_FORMATTED = ("markdown", "html")


@dataclass(frozen=True, slots=True)
class Placement:
    description: str | None = None
    documentation: str | None = None
    documentation_hash: str | None = None


def as_stored(text: str) -> str:
    """A text as a Blindata may store it: line ends as ``\n``, no blanks at either end. The
    contract does not say that a text comes back byte for byte; a job's own text read back
    otherwise must not look like a person's edit."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def documentation_hash(content: str) -> str:
    """The hash stamped in ``openLineageDocumentationHash`` and ``openLineageDescriptionHash``:
    of the text as stored (``as_stored``), the same whether a server keeps it byte for byte."""
    return _sha256(as_stored(content))


def is_stamped(text: str, stamps: Iterable[str | None]) -> bool:
    """Whether a stored ``text`` is the one a job stamped: its hash as stored, or of the text as
    it is (stamps written before line ends were read so)."""
    found = set(stamps)
    return documentation_hash(text) in found or _sha256(text.strip()) in found


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def place_text(text: str | None, content_type: str | None = None) -> Placement:
    """Description or documentation for ``text``; nothing for an empty text (never sent).

    The text is placed as ``redaction.redact_text`` shows it: a producer's description may quote
    a connection (``postgres://etl:…@db``, ``password=…``), and no secret reaches the catalog."""
    if text is None or not text.strip():
        return Placement()
    text = redact_text(text.strip())
    formatted = any(kind in (content_type or "").lower() for kind in _FORMATTED)
    if not formatted and len(text) <= DESCRIPTION_LIMIT:
        return Placement(description=text)
    # HTML is kept whole: Blindata documentation is Markdown, and Markdown renders inline HTML.
    return Placement(documentation=text, documentation_hash=documentation_hash(text))
