"""Pydantic models of the Blindata wire format (``blindata-api.md`` §2).

Python attributes are snake_case, the wire is camelCase (``modification_date`` ↔
``modificationDate``). Models are tolerant readers: fields the contract does not name are kept in
``model_extra`` instead of failing, because each Blindata version adds attributes.

When a model is sent, ``None`` fields are left out (``to_wire``): in Blindata uploads an absent
property leaves the stored value unchanged, while an explicit ``null`` could blank it on a server
that reads the contract less kindly than the emulator.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Generic, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PlainSerializer,
    PrivateAttr,
    model_validator,
)
from pydantic.alias_generators import to_camel

from airflow_blindata.definition import SystemSubtype

__all__ = [
    "AdditionalProperty",
    "AnalysisStatus",
    "CurrentUser",
    "DataFlow",
    "Documentation",
    "ErrorBody",
    "MetricRecord",
    "Page",
    "PhysicalEntity",
    "PhysicalField",
    "ProfilingMonitor",
    "QualityCheck",
    "QualityImport",
    "QualityImportResult",
    "QualityResult",
    "QualitySuite",
    "QueryBucket",
    "QueryStatement",
    "Ref",
    "RoutineType",
    "ScoreStrategy",
    "Semaphore",
    "System",
    "SystemRoutine",
    "SystemSubtype",
    "Timestamp",
    "UploadResponse",
    "UploadRowError",
    "WireModel",
    "format_timestamp",
    "uuid_case",
]


def format_timestamp(moment: datetime) -> str:
    """Blindata's date format: ISO-8601 in UTC with milliseconds, ``2026-11-29T10:00:00.000Z``."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def _in_utc(moment: datetime) -> datetime:
    """A date read without a zone is in UTC, as every Blindata date is."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _from_parts(value: Any) -> Any:
    """A date a Spring server sends as Jackson's array of parts (``WRITE_DATES_AS_TIMESTAMPS``
    with a ``LocalDateTime``: ``[2026, 11, 29, 10, 0, 0, 123000000]``, the last nanoseconds) as
    the datetime it names, without a zone; any other value as it came."""
    if (
        isinstance(value, list)
        and 3 <= len(value) <= 7
        and all(type(part) is int for part in value)
    ):
        year, month, day, hour, minute, second, nanos = list(value) + [0] * (7 - len(value))
        try:
            return datetime(year, month, day, hour, minute, second, nanos // 1000)
        except ValueError:
            return value  # not a date: pydantic says so
    return value


Timestamp = Annotated[
    datetime,
    BeforeValidator(_from_parts),
    AfterValidator(_in_utc),
    PlainSerializer(format_timestamp, when_used="json"),
]
"""A date that goes on the wire in Blindata's format, and is read as UTC when it has no zone
(``2026-11-29T10:00:00.000``, as a server with local date-times answers): never a naive date,
which cleanup could not compare with its watermark."""


_EXACT_INTEGERS = 2.0**53
"""Past this, a float is not a count: it stays a float (``1e300``, not 301 digits)."""


def _integral(value: float) -> float | int:
    """``10.0`` as ``10``: a count or a threshold goes on the wire as the integer it is. JSON
    does not tell them apart, but a server that reads the field strictly as an integer (Go,
    Rust, a strict schema) refuses ``10.0``."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT_INTEGERS:
        return int(value)
    return value


Number = Annotated[float, PlainSerializer(_integral, when_used="json")]
"""A number of the wire: read as a float, sent as an integer when it is one."""


class WireModel(BaseModel):
    """Base of every wire model: camelCase on the wire, unknown fields kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        use_enum_values=True,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON body for this object, without the fields that are ``None``."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class RoutineType(StrEnum):
    PROCEDURE = "PROCEDURE"
    FUNCTION = "FUNCTION"
    SCRIPT = "SCRIPT"


class AnalysisStatus(StrEnum):
    PENDING = "PENDING"
    ANALYZED = "ANALYZED"
    PARTIALLY_ANALYZED = "PARTIALLY_ANALYZED"
    ERROR = "ERROR"


class ScoreStrategy(StrEnum):
    PERCENTAGE = "PERCENTAGE"
    MINIMUM = "MINIMUM"
    MAXIMUM = "MAXIMUM"
    DISTANCE = "DISTANCE"
    PERCENTAGE_DEVIATION = "PERCENTAGE_DEVIATION"
    EXTERNAL = "EXTERNAL"


class Semaphore(StrEnum):
    GREEN = "GREEN"
    YELLOW = "YELLOW"
    RED = "RED"


def _enum_case(enum: type[StrEnum]) -> BeforeValidator:
    """Reads a value of ``enum`` whatever its case (``analyzed`` is ``ANALYZED``): the contract
    spells the values, not that a server answers them in that case; any other string is kept."""
    members = {member.value.upper(): member.value for member in enum}

    def read(value: Any) -> Any:
        return members.get(value.upper(), value) if isinstance(value, str) else value

    return BeforeValidator(read)


_CANONICAL_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


def uuid_case(value: Any) -> Any:
    """A UUID in lower case: UUIDs compare without case (RFC 9562), and an answer may spell one
    in upper case, in a reference and not in the object itself (a reference stored as a client
    sent it): the sync matches objects and references by uuid, and a System's entities, a
    table's fields and flows would not be its own. Any other id is kept as it is."""
    if isinstance(value, str) and _CANONICAL_UUID.fullmatch(value):
        return value.lower()
    return value


Uuid = Annotated[str, BeforeValidator(uuid_case)]
"""The id of an object, read in lower case when it is a UUID."""


class Ref(WireModel):
    """A reference to another object by uuid, e.g. ``"system": {"uuid": "..."}``."""

    uuid: Uuid


def _as_text(value: Any) -> Any:
    """A property value answered as a JSON number or boolean, as its text (``5``, ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


class AdditionalProperty(WireModel):
    """One additional property; values are strings and a name may repeat.

    ``value`` is ``None`` when the server holds a name without a value (``"value": null``, or
    no value at all): a property a person named and left empty must not make a whole listing
    unreadable. The job's own properties always have a value; readers skip ``None``. A value
    answered as a number or a boolean (stored so by another client) is read as its text.
    """

    name: str
    value: Annotated[str | None, BeforeValidator(_as_text)] = None

    @classmethod
    def many(cls, properties: Iterable[tuple[str, str]]) -> list[AdditionalProperty]:
        return [cls(name=name, value=value) for name, value in properties]


class _Stored(WireModel):
    """Fields every stored object has."""

    uuid: Uuid | None = None
    creation_date: Timestamp | None = None
    modification_date: Timestamp | None = None


def _property(properties: list[AdditionalProperty] | None, name: str) -> str | None:
    for prop in properties or ():
        if prop.name == name and prop.value is not None:
            return prop.value
    return None


class System(_Stored):
    name: str
    description: str | None = None
    # Typed as ``SystemSubtype | str`` so that a subtype a newer Blindata adds is still read.
    subtype: SystemSubtype | str | None = None
    technology: str | None = None
    additional_properties: list[AdditionalProperty] | None = None

    def property(self, name: str) -> str | None:
        """The first value of the additional property ``name``."""
        return _property(self.additional_properties, name)


class PhysicalEntity(_Stored):
    system: Ref | None = None
    schema_: str | None = Field(default=None, alias="schema")
    name: str
    description: str | None = None
    table_type: str | None = None
    data_set: str | None = None
    is_hidden: bool | None = None
    additional_properties: list[AdditionalProperty] | None = None

    def property(self, name: str) -> str | None:
        """The first value of the additional property ``name``."""
        return _property(self.additional_properties, name)


class PhysicalEntityRef(WireModel):
    """How a field names its entity: by uuid, or by system, schema and name."""

    uuid: Uuid | None = None
    schema_: str | None = Field(default=None, alias="schema")
    name: str | None = None
    system: Ref | None = None


class PhysicalField(_Stored):
    physical_entity: PhysicalEntityRef | None = None
    name: str
    type: str | None = None
    ordinal_position: int | None = None
    description: str | None = None
    additional_properties: list[AdditionalProperty] | None = None


class Documentation(WireModel):
    content: str | None = None
    """``None`` (or empty) when a server answers "no document" with a null content."""
    content_type: str | None = "MARKDOWN"
    """Always sent; read as ``None`` from a server that holds a document without a type."""
    modification_date: Timestamp | None = None


class DataFlow(_Stored):
    # Optional when read: the contract requires no flow's name (uploads key flows by scope and
    # name), and a flow a person or the SQL analysis made may have none; every flow is listed
    # when cleanup reads what ends on a table.
    name: str | None = None
    description: str | None = None
    scope: str | None = None
    from_system: Ref | None = None
    from_physical_entity: Ref | None = None
    from_physical_field: Ref | None = None
    to_system: Ref | None = None
    to_physical_entity: Ref | None = None
    to_physical_field: Ref | None = None
    query_statement: Ref | None = None


class SystemRoutine(_Stored):
    system: Ref | None = None
    catalog: str | None = None
    schema_: str | None = Field(default=None, alias="schema")
    name: str
    type: Annotated[RoutineType | str | None, _enum_case(RoutineType)] = None
    definition: str | None = None
    description: str | None = None
    status: str | None = None
    additional_properties: list[AdditionalProperty] | None = None


class QueryBucket(_Stored):
    name: str
    description: str | None = None
    systems: list[Ref] | None = None
    auto_generate_data_flows: bool | None = None


class QueryStatement(_Stored):
    query_bucket: Ref | None = None
    routine: Ref | None = None
    name: str | None = None
    query_text: str | None = None
    default_schema: str | None = None
    dialect: str | None = None
    analysis_status: Annotated[AnalysisStatus | str | None, _enum_case(AnalysisStatus)] = None
    analysis_message: str | None = None


class QualitySuite(_Stored):
    code: str
    name: str | None = None
    description: str | None = None
    published: bool | None = None


class QualityCheck(_Stored):
    code: str
    name: str | None = None
    description: str | None = None
    quality_suite: Ref | None = None
    physical_entities: list[Ref] | None = None
    physical_fields: list[Ref] | None = None
    enabled: bool | None = None
    manual: bool | None = None
    score_strategy: Annotated[ScoreStrategy | str | None, _enum_case(ScoreStrategy)] = None
    success_threshold: Number | None = None
    warning_threshold: Number | None = None
    score_expected_value: Number | None = None
    additional_properties: list[AdditionalProperty] | None = None
    last_run: Timestamp | None = None
    last_score: Number | None = None
    last_semaphore: Annotated[Semaphore | str | None, _enum_case(Semaphore)] = None


class QualityImport(WireModel):
    """The body of ``suites/*/import-objects``: a suite and its checks, by code."""

    quality_suite: QualitySuite
    quality_checks: list[QualityCheck]


ItemT = TypeVar("ItemT")


def _none_as_empty(value: Any) -> Any:
    return [] if value is None else value


AnswerList = Annotated[list[ItemT], BeforeValidator(_none_as_empty)]
"""A list in an answer, where ``null`` (a list the server left unset) reads as empty."""


def _none_as_zero(value: Any) -> Any:
    return 0 if value is None else value


AnswerCount = Annotated[int, BeforeValidator(_none_as_zero)]
"""A count in an answer, where ``null`` (a count the server left unset) reads as 0, as an
absent one does."""


class UploadRowError(WireModel):
    message: str
    index: int


_COUNTS = (
    "rowCreated",
    "rowUpdated",
    "rowDiscarded",
    "row_created",
    "row_updated",
    "row_discarded",
)


class _CountedAnswer(WireModel):
    """An answer to a bulk write, with the server's counts of what it did with the rows."""

    _counted: bool = PrivateAttr(default=False)

    @model_validator(mode="wrap")
    @classmethod
    def _note_counts(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        answer = handler(data)
        if isinstance(data, dict):
            answer._counted = any(data.get(name) is not None for name in _COUNTS)
        return answer

    @property
    def counted(self) -> bool:
        """Whether the server gave any count. One that leaves every count unset (``null``: a
        boxed Integer a Java server did not fill) reports none, and its answer cannot be held
        against what was sent; one that says ``0`` for a row it was sent can."""
        return self._counted


class QualityImportResult(_CountedAnswer):
    message: str | None = None
    row_created: AnswerCount = 0
    row_updated: AnswerCount = 0
    row_discarded: AnswerCount = 0
    quality_suite_uuid: Uuid | None = None
    quality_checks_uuids: AnswerList[Uuid] = []
    errors: AnswerList[UploadRowError] = []


class QualityResult(_Stored):
    quality_check: Ref
    metric: Number
    total_elements: Number
    started_at: Timestamp
    finished_at: Timestamp | None = None
    notes: str | None = None
    score: Number | None = None
    semaphore: Annotated[Semaphore | str | None, _enum_case(Semaphore)] = None


class ProfilingMonitor(_Stored):
    name: str
    physical_entity: Ref | None = None
    description: str | None = None


class MetricRecord(_Stored):
    monitor: Ref
    metric_code: str
    physical_field_name: str | None = None
    value: Number
    timestamp: Timestamp


class UploadResponse(_CountedAnswer):
    message: str | None = None
    row_created: AnswerCount = 0
    row_updated: AnswerCount = 0
    row_discarded: AnswerCount = 0
    errors: AnswerList[UploadRowError] = []


class CurrentUser(WireModel):
    uuid: str | None = None
    username: str
    full_name: str | None = None
    # The contract says ``permissions: [...]``, not what an item is (a name, or an object).
    permissions: AnswerList[Any] = []


class ErrorBody(WireModel):
    """Blindata's (Spring Boot's) error body."""

    status: int | None = None
    timestamp: str | int | None = None  # Spring writes epoch milliseconds when configured so
    error: str | None = None
    message: str | None = None
    path: str | None = None
    error_name: str | None = None


class Page(WireModel, Generic[ItemT]):
    """A Spring page: one slice of a list, 0-based ``number``.

    Only ``content`` is required: a page field the server leaves out is ``None`` (unknown), never
    a default that could end a listing early or count an object that is there as absent.
    """

    content: list[ItemT]
    number: int = 0
    size: int | None = None
    total_elements: int | None = None
    total_pages: int | None = None
    first: bool | None = None
    last: bool | None = None
    number_of_elements: int | None = None

    def is_last(self, number: int) -> bool:
        """Whether this page, asked for as page ``number``, ends the list: an empty page does;
        else ``last``, else ``totalPages``, else a page shorter than the ``size`` it reports."""
        if not self.content:
            return True
        if self.last is not None:
            return self.last
        if self.total_pages is not None:
            return number + 1 >= self.total_pages
        return self.size is not None and len(self.content) < self.size
