"""Quality and profiling facets of inputs and outputs (seed 003).

``dataQualityAssertions`` become checks and results per dataset, assertion and column;
``dataQualityMetrics`` and the input/output statistics become profiling metric records. They are
recognised by their schema URL too, because producers file them under other keys (the Redshift
Data provider sends ``outputStatistics`` as ``stats``). Producer extras (Iceberg scan and commit
reports) are kept as the model's extra fields.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Self

from pydantic import BeforeValidator, ModelWrapValidatorHandler, PrivateAttr, model_validator

from .base import BaseFacet, Timestamp, WireModel

__all__ = [
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


def _finite_or_none(value: Any) -> Any:
    """A count sent as NaN or Infinity (Deequ and pandas measure in floats) is no count: it is
    read as absent, so that it makes no record and the facet's other metrics still do."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return round(value)  # a count: 2.7 is an estimate of 3
    return value


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


def _number_or_none(value: Any) -> Any:
    """A number metric that is not a finite number is no metric: it is read as absent, so that it
    makes no record and the facet's other metrics still do. NaN and Infinity, an integer past a
    float's range, text that is no number (Great Expectations sends the observed min and max of
    a date or text column as strings), an object or a list. A number sent as text (``"12.5"``)
    is still read as that number."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return value if math.isfinite(number) else None
    return value if finite_number(value) is not None else None


Count = Annotated[int | None, BeforeValidator(_finite_or_none)]
"""An integer metric; a non-finite number is read as absent rather than making the facet
malformed (the mapper leaves an integer past a float's range out the same way), and a
fractional one (a Deequ or pandas estimate, ``distinctCount: 2.7``) as the nearest integer: it
made the whole facet malformed, and every other metric of it was lost."""

Metric = Annotated[float | None, BeforeValidator(_number_or_none)]
"""A number metric (sum, count, min, max, a quantile); one that is not a finite number is read
as absent rather than making the facet malformed."""


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


class DataQualityAssertionsDatasetFacet(BaseFacet):
    """An input facet by the spec; dbt sends it among the dataset facets, so both are read."""

    KEY = "dataQualityAssertions"
    SCHEMAS = ("DataQualityAssertionsDatasetFacet",)

    assertions: list[Assertion]


class GreatExpectationsAssertion(WireModel):
    """One expectation of a Great Expectations validation and whether it held."""

    expectation_type: str
    success: bool
    column: str | None = None

    def as_assertion(self) -> Assertion:
        """The spec's assertion it says: its type is the expectation type."""
        return Assertion(assertion=self.expectation_type, success=self.success, column=self.column)


class GreatExpectationsAssertionsDatasetFacet(BaseFacet):
    """The assertions of OpenLineage's Great Expectations integration: it sends them under its own
    key and schema (``expectationType`` for the spec's ``assertion``), never as
    ``dataQualityAssertions``; they are read as that facet's assertions."""

    KEY = "greatExpectations_assertions"
    SCHEMAS = ("GreatExpectationsAssertionsDatasetFacet", "ge-assertions-dataset-facet")

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


class MeasuredFacet(BaseFacet):
    """A facet of metrics. A metric that is no finite number makes no record and the facet's
    other metrics still do; the facet notes it (``non_finite``), so that the mapper reports it
    rather than leaving it out in silence."""

    _non_finite: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _note_non_finite(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        facet = handler(data)
        if isinstance(data, Mapping):
            found = tuple(_non_finite(data))
            if found:
                facet._non_finite = found
        return facet

    @property
    def non_finite(self) -> tuple[str, ...]:
        """The metrics sent as NaN, Infinity or an integer past a float's range, by their path
        as sent (``columnMetrics.amount.sum``): read as absent."""
        return self._non_finite


class ColumnMetrics(WireModel):
    null_count: Count = None
    distinct_count: Count = None
    sum: Metric = None
    count: Metric = None
    min: Metric = None
    max: Metric = None
    quantiles: dict[str, Metric] | None = None


class DataQualityMetricsDatasetFacet(MeasuredFacet):
    KEY = "dataQualityMetrics"
    SCHEMAS = ("DataQualityMetricsDatasetFacet",)

    row_count: Count = None
    bytes: Count = None
    file_count: Count = None
    last_updated: Timestamp | None = None
    column_metrics: dict[str, ColumnMetrics]


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
