"""Quality and profiling facets of inputs and outputs (seed 003).

``dataQualityAssertions`` become checks and results per dataset, assertion and column;
``dataQualityMetrics`` and the input/output statistics become profiling metric records. They are
recognised by their schema URL too, because producers file them under other keys (the Redshift
Data provider sends ``outputStatistics`` as ``stats``). Producer extras (Iceberg scan and commit
reports) are kept as the model's extra fields.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    BeforeValidator,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)

from .base import BaseFacet, Timestamp, WireModel

__all__ = [
    "AssertedFacet",
    "Assertion",
    "ColumnMetrics",
    "DataQualityAssertionsDatasetFacet",
    "DataQualityMetricsDatasetFacet",
    "DataQualityMetricsInputDatasetFacet",
    "GreatExpectationsAssertion",
    "GreatExpectationsAssertionsDatasetFacet",
    "IcebergCommitReportOutputDatasetFacet",
    "IcebergScanReportInputDatasetFacet",
    "InputStatisticsInputDatasetFacet",
    "MeasuredFacet",
    "OutputStatisticsOutputDatasetFacet",
    "finite_number",
]


_NUMERIC_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE_TEXT = frozenset(
    sign + word for sign in ("", "+", "-") for word in ("nan", "inf", "infinity")
)


def _read_number(value: Any) -> int | float | None:
    """A metric's value as the number it says: an integer or a float (not a boolean), or text
    that writes one in JSON's way (``"12"``, ``"1e3"``, ``"2.7"``; ``"NaN"`` and ``"Infinity"`` as
    Deequ or pandas write what no JSON number can carry), an integer of any size exactly; ``None``
    for anything else (other text, an object, a list)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.lower() in _NON_FINITE_TEXT:
        return float(text)
    if not _NUMERIC_TEXT.fullmatch(text):
        return None
    if text.lstrip("+-").isdigit():
        try:
            return int(text)
        except ValueError:  # more digits than Python reads as an integer: past a float's range
            return math.inf
    return float(text)


def finite_number(value: Any) -> float | None:
    """``value`` as a finite float; ``None`` for a boolean, NaN or Infinity (which producers such
    as Deequ send and no JSON number can carry), an integer past a float's range, or anything
    that is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _count_or_none(value: Any) -> int | None:
    """A count that is no measure is read as absent, so that it makes no record and the facet's
    other metrics still do: NaN or Infinity (Deequ and pandas measure in floats), an integer past
    a float's range, a count below 0 (dbt adapters send ``rows_affected: -1`` when they do not
    know it, Hive and Spark statistics -1), anything that is no number. A count sent as text is
    read as the number it writes (``"12"``, ``"1e3"``); a fractional one (a Deequ or pandas
    estimate, ``2.7``) as the nearest integer."""
    number = _read_number(value)
    if number is None or finite_number(number) is None:
        return None
    count = round(number) if isinstance(number, float) else number
    return count if count >= 0 else None


def _number_or_none(value: Any) -> float | None:
    """A number metric that is not a finite number is no metric: it is read as absent, so that it
    makes no record and the facet's other metrics still do. NaN and Infinity, an integer past a
    float's range, text that is no number (Great Expectations sends the observed min and max of
    a date or text column as strings), an object or a list. A number sent as text (``"12.5"``)
    is still read as that number."""
    return finite_number(_read_number(value))


def _tally_or_none(value: Any) -> float | None:
    """A column's ``count`` (its number of values): a number metric, and one below 0 is no
    measure either."""
    number = _number_or_none(value)
    return number if number is None or number >= 0 else None


def _moment_or_none(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A date-time metric that is none (an epoch number, text no date-time reads) is read as
    absent, so that it makes no record and the facet's other metrics still do."""
    try:
        return handler(value)
    except ValidationError:
        return None


@dataclass(frozen=True)
class _Dropped:
    """Marks a metric read as absent when its value is none: the facet reports it (``non_finite``
    when it was a number no record can hold, ``invalid`` when it was out of its range: a count
    below 0). ``any_value``: whatever else it was is reported as ``invalid`` too (a count, a
    date-time: a producer's fault), not only a number (a ``min`` sent as text is what a producer
    sends for a text column, not a fault to fix). ``shape``: it is a part of the facet that holds
    metrics (a column's entry, its quantiles), sent as what holds none (null, a list, a number):
    ``invalid`` whatever it was."""

    any_value: bool
    shape: bool = False


@dataclass(frozen=True)
class _Entries:
    """Marks a mapping of metrics read entry by entry (``columnMetrics``, a column's
    ``quantiles``): an entry that cannot be read is dropped alone and reported, the others are
    kept; the mapping sent as anything else (a list, text) is read as none and reported. ``item``:
    the mark of an entry that is a metric (a quantile), ``None`` for one that holds metrics (a
    column's entry, walked for its own)."""

    item: _Dropped | None


def _entries_or_none(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A mapping of metrics with only the entries that read: one malformed entry (a column's
    entry sent as null, a list or a number) made the whole facet malformed, and every metric of
    the dataset was lost (its row count, its bytes, the other columns). ``None`` for what is no
    mapping."""
    if not isinstance(value, Mapping):
        return None
    try:
        return handler(value)  # all of it reads, as it almost always does: in one go
    except ValidationError:
        pass
    kept: dict[str, Any] = {}
    for key, item in value.items():
        try:
            kept.update(handler({key: item}))
        except ValidationError:
            continue  # reported by ``_dropped``: the entry is missing from what was read
    return kept


def _columns_or_empty(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """``columnMetrics`` with only the columns whose entry reads; none (null, left out, or no
    mapping) when the producer measured no column as it should: the facet's row count, bytes
    and files are still its measures."""
    kept = _entries_or_none(value, handler)
    return {} if kept is None else kept


_REPORTED = _Dropped(any_value=True)
_NUMBERS_REPORTED = _Dropped(any_value=False)
_SHAPE_REPORTED = _Dropped(any_value=True, shape=True)

Count = Annotated[int | None, BeforeValidator(_count_or_none), _REPORTED]
"""An integer metric (a row count, a null count, bytes, files); one that is no measure is read
as absent rather than making the facet malformed (every other metric of it was lost), and
reported."""

Metric = Annotated[float | None, BeforeValidator(_number_or_none), _NUMBERS_REPORTED]
"""A number metric (sum, min, max, a quantile); one that is not a finite number is read as
absent rather than making the facet malformed."""

Tally = Annotated[float | None, BeforeValidator(_tally_or_none), _NUMBERS_REPORTED]
"""A column's ``count``: a number metric that is never below 0."""

Moment = Annotated[Timestamp | None, WrapValidator(_moment_or_none), _REPORTED]
"""A date-time metric (``lastUpdated``); one that is none is read as absent, and reported."""


class Assertion(WireModel):
    """One assertion and whether it held; ``severity: warn`` makes a failure a warning."""

    assertion: str
    success: bool
    column: str | None = None
    severity: str | None = None
    name: str | None = None
    description: str | None = None
    expected: str | None = None
    actual: str | None = None
    content: str | None = None
    content_type: str | None = None
    params: dict[str, Any] | None = None


class AssertedFacet(BaseFacet):
    """A facet of assertions, read one by one: an assertion that cannot be read (null, one
    without its ``success``) is dropped alone and noted (``unread``), so that the mapper reports
    it; it made the whole facet malformed, and every other assertion's result was lost."""

    ASSERTION: ClassVar[type[WireModel]]
    """The model of one assertion as the facet sends it."""
    _unread: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _read_each(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        sent = data.get("assertions") if isinstance(data, Mapping) else None
        if not isinstance(sent, list):
            return handler(data)  # no list of assertions: the facet is malformed
        model = cls.ASSERTION
        read: list[Any] = []
        unread: list[str] = []
        for index, each in enumerate(sent):
            try:
                read.append(model.model_validate(each))
            except ValidationError:
                unread.append(f"assertions[{index}]")
        facet = handler({**data, "assertions": read})
        facet._unread = tuple(unread)
        return facet

    @property
    def unread(self) -> tuple[str, ...]:
        """The assertions that could not be read, by their place as sent (``assertions[1]``)."""
        return self._unread


class DataQualityAssertionsDatasetFacet(AssertedFacet):
    """An input facet by the spec; dbt sends it among the dataset facets, so both are read."""

    KEY = "dataQualityAssertions"
    SCHEMAS = ("DataQualityAssertionsDatasetFacet",)
    ASSERTION = Assertion

    assertions: list[Assertion]


class GreatExpectationsAssertion(WireModel):
    """One expectation of a Great Expectations validation and whether it held."""

    expectation_type: str
    success: bool
    column: str | None = None

    def as_assertion(self) -> Assertion:
        """The spec's assertion it says: its type is the expectation type."""
        return Assertion(assertion=self.expectation_type, success=self.success, column=self.column)


class GreatExpectationsAssertionsDatasetFacet(AssertedFacet):
    """The assertions of OpenLineage's Great Expectations integration: it sends them under its own
    key and schema (``expectationType`` for the spec's ``assertion``), never as
    ``dataQualityAssertions``; they are read as that facet's assertions."""

    KEY = "greatExpectations_assertions"
    SCHEMAS = ("GreatExpectationsAssertionsDatasetFacet", "ge-assertions-dataset-facet")
    ASSERTION = GreatExpectationsAssertion

    assertions: list[GreatExpectationsAssertion]


_NON_FINITE_DEPTH = 4
"""How deep a facet's metrics are looked for: ``columnMetrics.<column>.quantiles.<q>``."""


def _non_finite(data: Mapping[Any, Any], prefix: str = "", depth: int = 0) -> Iterator[str]:
    """The paths of the numbers in ``data`` that are no finite number: NaN or Infinity (which
    ``json.loads`` reads and producers such as Deequ or pandas send), or an integer past a
    float's range."""
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, float):
            if not math.isfinite(value):
                yield path
        elif isinstance(value, int) and not isinstance(value, bool):
            if finite_number(value) is None:
                yield path
        elif isinstance(value, Mapping) and depth + 1 < _NON_FINITE_DEPTH:
            yield from _non_finite(value, f"{path}.", depth + 1)


def _dropped(
    model: WireModel, data: Mapping[Any, Any], prefix: str = ""
) -> Iterator[tuple[str, Any, _Dropped]]:
    """The metrics of ``model`` (``_Dropped`` fields, in its nested parts too) that ``data`` sent
    with a value and the model read as absent: their path as sent, the value, and the field's
    mark; and the entries of its ``_Entries`` mappings that were dropped (a column's entry sent
    as null too: a column named with no metrics is a producer's fault)."""
    for name, field in type(model).model_fields.items():
        alias = field.alias or name
        if alias not in data and name not in data:
            continue
        path = f"{prefix}{alias}"
        sent = data[alias] if alias in data else data[name]
        value = getattr(model, name)
        mark = next((each for each in field.metadata if isinstance(each, _Dropped)), None)
        entries = next((each for each in field.metadata if isinstance(each, _Entries)), None)
        if entries is not None:
            yield from _dropped_entries(entries, value, sent, path)
        elif mark is not None:
            if value is None and sent is not None:
                yield path, sent, mark
        elif isinstance(value, WireModel) and isinstance(sent, Mapping):
            yield from _dropped(value, sent, f"{path}.")


def _dropped_entries(
    entries: _Entries, value: Any, sent: Any, path: str
) -> Iterator[tuple[str, Any, _Dropped]]:
    """What ``_dropped`` finds in a mapping of metrics: the mapping itself when it was sent as
    no mapping (null is none: nothing was measured), else each entry that was dropped (a
    quantile that is no number, a column's entry that holds no metrics) and what was dropped
    within each entry kept."""
    if not isinstance(sent, Mapping):
        if sent is not None:
            yield path, sent, _SHAPE_REPORTED
        return
    held = value if isinstance(value, dict) else {}
    for key, item in sent.items():
        kept = held.get(key)
        if entries.item is not None:  # a metric each: a quantile
            if kept is None and item is not None:
                yield f"{path}.{key}", item, entries.item
        elif kept is None:
            yield f"{path}.{key}", item, _SHAPE_REPORTED
        elif isinstance(kept, WireModel) and isinstance(item, Mapping):
            yield from _dropped(kept, item, f"{path}.{key}.")


class MeasuredFacet(BaseFacet):
    """A facet of metrics. A metric that is no measure makes no record and the facet's other
    metrics still do; the facet notes it (``non_finite``, ``invalid``), so that the mapper
    reports it rather than leaving it out in silence."""

    _non_finite: tuple[str, ...] = PrivateAttr(default=())
    _invalid: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _note_non_finite(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        facet = handler(data)
        if isinstance(data, Mapping):
            non_finite = list(_non_finite(data))
            invalid: list[str] = []
            for path, sent, mark in _dropped(facet, data):
                if mark.shape:  # a column's entry sent as NaN is noted once, as the walk saw it
                    if path not in non_finite:
                        invalid.append(path)
                    continue
                number = _read_number(sent)
                if number is not None and finite_number(number) is None:
                    if path not in non_finite:  # sent as text ("NaN"): the walk saw no number
                        non_finite.append(path)
                elif number is not None or mark.any_value:
                    invalid.append(path)
            facet._non_finite = tuple(non_finite)
            facet._invalid = tuple(invalid)
        return facet

    @property
    def non_finite(self) -> tuple[str, ...]:
        """The metrics sent as NaN, Infinity or an integer past a float's range (as a number or
        as text), by their path as sent (``columnMetrics.amount.sum``): read as absent."""
        return self._non_finite

    @property
    def invalid(self) -> tuple[str, ...]:
        """The metrics sent with a value they cannot have, by their path as sent: a count below
        0, a count that is no number, a ``lastUpdated`` that is no date-time, a column's entry or
        its quantiles that hold no metrics (null, a list, a number); read as absent."""
        return self._invalid


class ColumnMetrics(WireModel):
    null_count: Count = None
    distinct_count: Count = None
    sum: Metric = None
    count: Tally = None
    min: Metric = None
    max: Metric = None
    quantiles: Annotated[
        dict[str, Metric] | None,
        WrapValidator(_entries_or_none),
        _Entries(item=_NUMBERS_REPORTED),
    ] = None


class DataQualityMetricsDatasetFacet(MeasuredFacet):
    KEY = "dataQualityMetrics"
    SCHEMAS = ("DataQualityMetricsDatasetFacet",)

    row_count: Count = None
    bytes: Count = None
    file_count: Count = None
    last_updated: Moment = None
    column_metrics: Annotated[
        dict[str, ColumnMetrics], WrapValidator(_columns_or_empty), _Entries(item=None)
    ] = Field(default_factory=dict)
    """The spec requires it; a producer that measured no column and left it out, or sent it as
    null, still measured the dataset."""


class DataQualityMetricsInputDatasetFacet(DataQualityMetricsDatasetFacet):
    """The same metrics, measured on what one run read."""

    SCHEMAS = ("DataQualityMetricsInputDatasetFacet",)


class InputStatisticsInputDatasetFacet(MeasuredFacet):
    KEY = "inputStatistics"
    SCHEMAS = ("InputStatisticsInputDatasetFacet",)

    row_count: Count = None
    size: Count = None
    file_count: Count = None


class OutputStatisticsOutputDatasetFacet(MeasuredFacet):
    KEY = "outputStatistics"
    SCHEMAS = ("OutputStatisticsOutputDatasetFacet",)

    row_count: Count = None
    size: Count = None
    file_count: Count = None


class IcebergScanReportInputDatasetFacet(MeasuredFacet):
    """The Iceberg scan report of the Spark integration, an input facet of its own beside
    ``inputStatistics``: its ``scanMetrics`` are the producer's extra metrics of seed 003
    ("for example Iceberg scan reports"), recorded as ``inputExtra_<metric>``."""

    KEY = "icebergScanReport"
    SCHEMAS = ("IcebergScanReportInputDatasetFacet",)

    scan_metrics: dict[str, Any] | None = None


class IcebergCommitReportOutputDatasetFacet(MeasuredFacet):
    """The Iceberg commit report of the Spark integration, an output facet of its own beside
    ``outputStatistics``: its ``commitMetrics`` are recorded as ``outputExtra_<metric>``. The
    integration names its schema ``IcebergCommitReportInputDatasetFacet``, so both names are
    read."""

    KEY = "icebergCommitReport"
    SCHEMAS = ("IcebergCommitReportOutputDatasetFacet", "IcebergCommitReportInputDatasetFacet")

    commit_metrics: dict[str, Any] | None = None
