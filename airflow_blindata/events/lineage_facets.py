"""Field-level lineage: the ``columnLineage`` dataset facet and the ``lineage`` facet.

Seed 001 ranks them as evidence: the ``lineage`` job facet (entries per output, entity inputs and
``fields.<target>.inputs[]``) is declared lineage and beats ``columnLineage``; a ``lineage``
dataset facet (on a DatasetEvent) gives flows between datasets with no job.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from .base import BaseFacet, WireModel

__all__ = [
    "ColumnLineageDatasetFacet",
    "ColumnLineageField",
    "InputField",
    "LineageDatasetEntry",
    "LineageDatasetFacet",
    "LineageDatasetInput",
    "LineageEntry",
    "LineageFieldEntry",
    "LineageInput",
    "LineageJobEntry",
    "LineageJobFacet",
    "LineageJobInput",
    "LineageTransformation",
    "Transformation",
]


class Transformation(WireModel):
    """``DIRECT`` (IDENTITY, TRANSFORMATION, AGGREGATION) or ``INDIRECT`` (JOIN, FILTER, ...)."""

    type: str
    subtype: str | None = None
    description: str | None = None
    masking: bool | None = None


class InputField(WireModel):
    namespace: str
    name: str
    field: str
    transformations: list[Transformation] | None = None


class ColumnLineageField(WireModel):
    input_fields: list[InputField]
    transformation_description: str | None = None
    transformation_type: str | None = None


class ColumnLineageDatasetFacet(BaseFacet):
    """Per output field its input fields, and in ``dataset`` the inputs of the whole output."""

    KEY = "columnLineage"
    SCHEMAS = ("ColumnLineageDatasetFacet",)

    fields: dict[str, ColumnLineageField]
    dataset: list[InputField] | None = None


class LineageTransformation(WireModel):
    type: str
    subtype: str | None = None
    description: str | None = None
    masking: bool | None = None


class _OptionalJobName(WireModel):
    """A job end may omit namespace and name together: it is then the event's own job."""

    namespace: str | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _both_or_neither(self) -> _OptionalJobName:
        if (self.namespace is None) != (self.name is None):
            raise ValueError("namespace and name must be given together")
        return self


class LineageDatasetInput(WireModel):
    namespace: str
    name: str
    type: Literal["DATASET"]
    field: str | None = None
    transformations: list[LineageTransformation] | None = None


class LineageJobInput(_OptionalJobName):
    type: Literal["JOB"]
    run_id: str | None = None
    transformations: list[LineageTransformation] | None = None


LineageInput = Annotated[LineageDatasetInput | LineageJobInput, Field(discriminator="type")]


class LineageFieldEntry(WireModel):
    inputs: list[LineageInput]


class LineageDatasetEntry(WireModel):
    namespace: str
    name: str
    type: Literal["DATASET"]
    inputs: list[LineageInput] | None = None
    fields: dict[str, LineageFieldEntry] | None = None


class LineageJobEntry(_OptionalJobName):
    type: Literal["JOB"]
    run_id: str | None = None
    inputs: list[LineageInput] | None = None


LineageEntry = Annotated[LineageDatasetEntry | LineageJobEntry, Field(discriminator="type")]


class LineageJobFacet(BaseFacet):
    """Declared (JobEvent) or observed (RunEvent) lineage of a job, one entry per target."""

    KEY = "lineage"
    SCHEMAS = ("LineageJobFacet",)

    entries: list[LineageEntry]


class LineageDatasetFacet(BaseFacet):
    """Lineage into this dataset, at entity level (``inputs``) and per field (``fields``)."""

    KEY = "lineage"
    SCHEMAS = ("LineageDatasetFacet",)

    inputs: list[LineageInput] | None = None
    fields: dict[str, LineageFieldEntry] | None = None
