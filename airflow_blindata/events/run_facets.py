"""Run facets: how a run relates to other runs, when it was scheduled, and how it went.

``parent`` and ``jobDependencies`` become orchestration flows (seed 001), ``nominalTime`` dates a
run, ``test`` results become quality checks on the job (seed 003), and ``errorMessage``,
``extractionError`` and ``spark_unknown`` explain failed runs and partial lineage
(``PRODUCER_PARTIAL_LINEAGE``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .base import BaseFacet, Timestamp, WireModel

__all__ = [
    "EnvironmentVariable",
    "EnvironmentVariablesRunFacet",
    "ErrorMessageRunFacet",
    "ExecutionParameter",
    "ExecutionParametersRunFacet",
    "ExternalQueryRunFacet",
    "ExtractionError",
    "ExtractionErrorRunFacet",
    "JobDependenciesRunFacet",
    "JobDependency",
    "JobIdentifier",
    "NominalTimeRunFacet",
    "ParentJob",
    "ParentRoot",
    "ParentRun",
    "ParentRunFacet",
    "ProcessingEngineRunFacet",
    "RunIdentifier",
    "RunTag",
    "SparkUnknownRunFacet",
    "TagsRunFacet",
    "TestExecution",
    "TestRunFacet",
]


class ParentRun(WireModel):
    """The parent (or root) run; ``facets`` is a convenience copy, kept as sent."""

    run_id: str
    facets: dict[str, Any] | None = None


class ParentJob(WireModel):
    namespace: str
    name: str
    facets: dict[str, Any] | None = None


class ParentRoot(WireModel):
    run: ParentRun
    job: ParentJob


class ParentRunFacet(BaseFacet):
    """The run that started this one; from 1-1-0 on also the ``root`` of the whole tree."""

    KEY = "parent"
    SCHEMAS = ("ParentRunFacet",)

    run: ParentRun
    job: ParentJob
    root: ParentRoot | None = None


class JobIdentifier(WireModel):
    namespace: str
    name: str


class RunIdentifier(WireModel):
    run_id: str


class JobDependency(WireModel):
    job: JobIdentifier
    run: RunIdentifier | None = None
    dependency_type: str | None = Field(default=None, alias="dependency_type")
    sequence_trigger_rule: str | None = Field(default=None, alias="sequence_trigger_rule")
    status_trigger_rule: str | None = Field(default=None, alias="status_trigger_rule")


class JobDependenciesRunFacet(BaseFacet):
    KEY = "jobDependencies"
    SCHEMAS = ("JobDependenciesRunFacet",)

    upstream: list[JobDependency] | None = None
    downstream: list[JobDependency] | None = None
    trigger_rule: str | None = Field(default=None, alias="trigger_rule")


class NominalTimeRunFacet(BaseFacet):
    KEY = "nominalTime"
    SCHEMAS = ("NominalTimeRunFacet",)

    nominal_start_time: Timestamp
    nominal_end_time: Timestamp | None = None


class ErrorMessageRunFacet(BaseFacet):
    KEY = "errorMessage"
    SCHEMAS = ("ErrorMessageRunFacet",)

    message: str
    programming_language: str
    stack_trace: str | None = None


class ExtractionError(WireModel):
    error_message: str
    stack_trace: str | None = None
    task: str | None = None
    task_number: int | None = None


class ExtractionErrorRunFacet(BaseFacet):
    KEY = "extractionError"
    SCHEMAS = ("ExtractionErrorRunFacet",)

    total_tasks: int
    failed_tasks: int
    errors: list[ExtractionError]


class ProcessingEngineRunFacet(BaseFacet):
    KEY = "processing_engine"
    SCHEMAS = ("ProcessingEngineRunFacet",)

    version: str
    name: str | None = None
    openlineage_adapter_version: str | None = None


class ExternalQueryRunFacet(BaseFacet):
    KEY = "externalQuery"
    SCHEMAS = ("ExternalQueryRunFacet",)

    external_query_id: str
    source: str


class EnvironmentVariable(WireModel):
    name: str
    value: str


class EnvironmentVariablesRunFacet(BaseFacet):
    KEY = "environmentVariables"
    SCHEMAS = ("EnvironmentVariablesRunFacet",)

    environment_variables: list[EnvironmentVariable]


class ExecutionParameter(WireModel):
    key: str
    name: str | None = None
    description: str | None = None
    value: Any = None


class ExecutionParametersRunFacet(BaseFacet):
    KEY = "executionParameters"
    SCHEMAS = ("ExecutionParametersRunFacet",)

    parameters: list[ExecutionParameter] | None = None


class RunTag(WireModel):
    key: str
    value: str
    source: str | None = None


class TagsRunFacet(BaseFacet):
    KEY = "tags"
    SCHEMAS = ("TagsRunFacet",)

    tags: list[RunTag] | None = None


class TestExecution(WireModel):
    """One test and its outcome: ``status`` is ``pass``, ``fail`` or ``skip``."""

    __test__ = False  # a model, not a pytest class

    name: str
    status: str
    severity: str | None = None
    type: str | None = None
    description: str | None = None
    expected: str | None = None
    actual: str | None = None
    content: str | None = None
    content_type: str | None = None
    params: dict[str, Any] | None = None


class TestRunFacet(BaseFacet):
    __test__ = False  # a model, not a pytest class

    KEY = "test"
    SCHEMAS = ("TestRunFacet",)

    tests: list[TestExecution]


class SparkUnknownRunFacet(BaseFacet):
    """Spark's report of plan nodes it could not turn into lineage; kept as sent."""

    KEY = "spark_unknown"
    SCHEMAS = ("SparkUnknownRunFacet", "UnknownEntryRunFacet")

    output: dict[str, Any] | None = None
    inputs: list[dict[str, Any]] | None = None
