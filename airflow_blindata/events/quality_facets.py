"""Quality and profiling facets of inputs and outputs (seed 003).

``dataQualityAssertions`` become checks and results per dataset, assertion and column;
``dataQualityMetrics`` and the input/output statistics become profiling metric records. They are
recognised by their schema URL too, because producers file them under other keys (the Redshift
Data provider sends ``outputStatistics`` as ``stats``). Producer extras (Iceberg scan and commit
reports) are kept as the model's extra fields.
"""

from __future__ import annotations

from typing import Any

from .base import BaseFacet, Timestamp, WireModel

__all__ = [
    "Assertion",
    "ColumnMetrics",
    "DataQualityAssertionsDatasetFacet",
    "DataQualityMetricsDatasetFacet",
    "DataQualityMetricsInputDatasetFacet",
    "InputStatisticsInputDatasetFacet",
    "OutputStatisticsOutputDatasetFacet",
]


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


class ColumnMetrics(WireModel):
    null_count: int | None = None
    distinct_count: int | None = None
    sum: float | None = None
    count: float | None = None
    min: float | None = None
    max: float | None = None
    quantiles: dict[str, float] | None = None


class DataQualityMetricsDatasetFacet(BaseFacet):
    KEY = "dataQualityMetrics"
    SCHEMAS = ("DataQualityMetricsDatasetFacet",)

    row_count: int | None = None
    bytes: int | None = None
    file_count: int | None = None
    last_updated: Timestamp | None = None
    column_metrics: dict[str, ColumnMetrics]


class DataQualityMetricsInputDatasetFacet(DataQualityMetricsDatasetFacet):
    """The same metrics, measured on what one run read."""

    SCHEMAS = ("DataQualityMetricsInputDatasetFacet",)


class InputStatisticsInputDatasetFacet(BaseFacet):
    KEY = "inputStatistics"
    SCHEMAS = ("InputStatisticsInputDatasetFacet",)

    row_count: int | None = None
    size: int | None = None
    file_count: int | None = None


class OutputStatisticsOutputDatasetFacet(BaseFacet):
    KEY = "outputStatistics"
    SCHEMAS = ("OutputStatisticsOutputDatasetFacet",)

    row_count: int | None = None
    size: int | None = None
    file_count: int | None = None
