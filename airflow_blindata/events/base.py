"""What every facet shares: the spec's base fields, a tolerant model config, and where facets live.

Facet models keep the spec's field names on the wire (camelCase, or snake_case where the spec
says so) and snake_case in Python. Every model keeps the fields it does not know (``extra``), so
a producer's additions survive for the catalog's properties, and optional fields accept ``null``
because real producers send it (dbt's ``errorMessage.stackTrace``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, SerializeAsAny
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

__all__ = [
    "BaseFacet",
    "FacetIssues",
    "FacetLocation",
    "FacetMap",
    "MalformedFacet",
    "Timestamp",
    "WireModel",
    "facet_key",
    "facet_of",
]


class FacetLocation(StrEnum):
    """The five facet containers of the spec; a key means different facets in each."""

    RUN = "run"
    JOB = "job"
    DATASET = "dataset"
    INPUT = "input"
    OUTPUT = "output"


def _aware(value: datetime) -> datetime:
    """Read a naive time as UTC, so that times of any producer can be compared and sorted."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


# RFC 9557's suffix after an offset: ``[Europe/Paris]``, ``[UTC]``, ``[u-ca=iso8601]``, as
# Java's ``ZonedDateTime.toString()`` writes a JVM producer's time
# (``2024-01-01T10:00+01:00[Europe/Paris]``).
# A time without an offset keeps its suffix, and is refused: the name alone would need a zone
# database to give the instant.
_ZONE_SUFFIX = re.compile(r"(?P<time>.*T.*(?:[zZ]|[+-][0-9]{2}(?::?[0-9]{2})?))(?:\[[^\[\]]*\])+")


def _date_time_string(value: Any) -> Any:
    """Only a string is a date-time here (the spec's ``format: date-time``): pydantic would read
    a number as a Unix time, and a producer's bug would land in 1970 instead of being reported.

    A time with an offset followed by RFC 9557's bracketed zone name (Java's ``ZonedDateTime``)
    is read by its offset, which says the instant; the name adds nothing to it."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        kind = "null" if value is None else type(value).__name__
        raise PydanticCustomError(
            "date_time_type", "must be an ISO-8601 date-time string, not {kind}", {"kind": kind}
        )
    if _NUMBER.fullmatch(value):  # ``"1700000000"``: a number as text, read as a Unix time
        raise PydanticCustomError(
            "date_time_type", "must be an ISO-8601 date-time string, not a number", {}
        )
    if value.endswith("]"):
        suffixed = _ZONE_SUFFIX.fullmatch(value)
        return suffixed.group("time") if suffixed else value
    return value


_NUMBER = re.compile(r"\s*[+-]?[0-9]+(?:\.[0-9]*)?\s*")


Timestamp = Annotated[datetime, BeforeValidator(_date_time_string), AfterValidator(_aware)]
"""An ISO-8601 date-time string, always timezone-aware (an event's time, a facet's)."""


class WireModel(BaseModel):
    """A part of a facet: camelCase on the wire, snake_case in Python, unknown fields kept."""

    model_config = ConfigDict(
        extra="allow",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )


class BaseFacet(WireModel):
    """The spec's ``BaseFacet``; ``_producer`` and ``_schemaURL`` may be missing (dbt omits them).

    ``KEY`` is the key the spec attaches the facet under, ``SCHEMAS`` the schema names (the last
    part of ``_schemaURL``) that identify it under any other key.
    """

    KEY: ClassVar[str] = ""
    SCHEMAS: ClassVar[tuple[str, ...]] = ()

    producer: str | None = Field(default=None, alias="_producer")
    schema_url: str | None = Field(default=None, alias="_schemaURL")
    deleted: bool | None = Field(default=None, alias="_deleted")


FacetMap = dict[str, SerializeAsAny[BaseFacet]]
"""Facets by key. Known facets are their typed model, unknown ones a plain ``BaseFacet``."""

F = TypeVar("F", bound=BaseFacet)


_KEY_OF: dict[type[BaseFacet], str] = {}
"""Each model's ``KEY``: an attribute of a pydantic model's class is slow to read (its
metaclass has ``__getattr__``), and a plan asks ``facet_of`` of every job and dataset."""


def facet_key(model: type[BaseFacet]) -> str:
    """``model.KEY``, read once per model (see ``_KEY_OF``)."""
    key = _KEY_OF.get(model)
    if key is None:
        key = _KEY_OF[model] = model.KEY
    return key


def facet_of(facets: dict[str, BaseFacet], model: type[F]) -> F | None:
    """The facet of type ``model`` under its spec key, typed; ``None`` when absent or unknown."""
    key = _KEY_OF.get(model)
    if key is None:
        key = facet_key(model)
    found = facets.get(key)
    if found is None:  # mostly: ``isinstance`` of a pydantic model's class is slow to say no
        return None
    return found if type(found) is model or isinstance(found, model) else None


@dataclass(frozen=True, slots=True)
class MalformedFacet:
    """A facet that is not valid for its schema: dropped, while the rest of the event is read."""

    where: str
    location: FacetLocation
    key: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.key}: {self.reason}"


@dataclass(slots=True)
class FacetIssues:
    """Collects what facet reading dropped or did not know, during one event's validation.

    Passed as the pydantic validation ``context``. Facets of a job or a dataset are named after
    it; run facets, whose container has no name, are named after the event's job by
    ``parse_event``.
    """

    malformed: list[MalformedFacet] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    def add_malformed(self, where: str, location: FacetLocation, key: str, reason: str) -> None:
        self.malformed.append(MalformedFacet(where, location, key, reason))

    def name_unnamed(self, where: str) -> None:
        """Give the issues found in nameless containers (run facets) a name."""
        self.malformed = [
            issue if issue.where else MalformedFacet(where, issue.location, issue.key, issue.reason)
            for issue in self.malformed
        ]
