"""The three events of spec 2-0-2 and what they carry: runs, jobs and datasets.

A RunEvent reports a run changing state and has a run and a job; a JobEvent (no run) and a
DatasetEvent (a dataset, no job and no run) carry design-time metadata. The envelope is strict —
an event without an ``eventTime`` string or a job cannot be read — while facets are tolerant:
every facet container is read by ``registry.read_facets``, which drops a malformed facet instead
of failing the event. Validate with ``context=FacetIssues()`` to learn what was dropped and which
facet keys were unknown (``parse.parse_event`` does). Field order matters: ``namespace`` and
``name`` come before ``facets``, so that a facet issue can name its job or dataset.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, TypeGuard, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic.alias_generators import to_camel

from .base import FacetIssues, FacetLocation, FacetMap, Timestamp
from .registry import read_facets

__all__ = [
    "Dataset",
    "DatasetEvent",
    "Event",
    "EventType",
    "InputDataset",
    "Job",
    "JobEvent",
    "OutputDataset",
    "Run",
    "RunEvent",
    "name_parent",
    "raw_dag_run",
    "raw_map_index",
    "raw_parent_run_id",
]


class EventType(StrEnum):
    START = "START"
    RUNNING = "RUNNING"
    COMPLETE = "COMPLETE"
    ABORT = "ABORT"
    FAIL = "FAIL"
    OTHER = "OTHER"


ENVELOPE_ONLY = object()
"""Validation context that skips the facets: their containers come back empty.

Facet reading never fails an event (a malformed facet is dropped), so an event is readable with
its facets exactly when it is readable without them; the store judges events this way at a
fraction of the cost (``parse_event(raw, facets=False)``).
"""


def _facets_validator(location: FacetLocation) -> WrapValidator:
    # A wrap validator that never calls its handler: it replaces validation like a plain one,
    # but keeps pydantic's own serializer for the facet map (a plain one adds a Python call).
    def validate(value: Any, _: ValidatorFunctionWrapHandler, info: ValidationInfo) -> FacetMap:
        issues = info.context
        if issues is ENVELOPE_ONLY:
            return {}
        if not isinstance(issues, FacetIssues):
            return read_facets(value, location)
        # The container's namespace and name are validated before its facets (field order).
        namespace, name = info.data.get("namespace"), info.data.get("name")
        where = f"{namespace}/{name}" if namespace is not None and name is not None else ""
        return read_facets(value, location, issues, where)

    return WrapValidator(validate)


RunFacets = Annotated[FacetMap, _facets_validator(FacetLocation.RUN)]
JobFacets = Annotated[FacetMap, _facets_validator(FacetLocation.JOB)]
DatasetFacets = Annotated[FacetMap, _facets_validator(FacetLocation.DATASET)]
InputFacets = Annotated[FacetMap, _facets_validator(FacetLocation.INPUT)]
OutputFacets = Annotated[FacetMap, _facets_validator(FacetLocation.OUTPUT)]


EventTime = Timestamp
"""An event's time: a date-time string (``Timestamp``)."""

T = TypeVar("T")


def _none_is_empty(value: Any) -> Any:
    return [] if value is None else value


Datasets = Annotated[list[T], BeforeValidator(_none_is_empty)]


class _Wire(BaseModel):
    model_config = ConfigDict(
        extra="ignore",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )


class _Named(_Wire):
    namespace: str
    name: str

    @property
    def ref(self) -> str:
        """``namespace/name``, as reports name a job or a dataset."""
        return f"{self.namespace}/{self.name}"


class Job(_Named):
    facets: JobFacets = Field(default_factory=dict)


class Dataset(_Named):
    facets: DatasetFacets = Field(default_factory=dict)


class InputDataset(Dataset):
    input_facets: InputFacets = Field(default_factory=dict)


class OutputDataset(Dataset):
    output_facets: OutputFacets = Field(default_factory=dict)


def raw_parent_run_id(facets: Any) -> str | None:
    """The run a run's raw facets (decoded JSON) group it under: ``parent.root.run.runId`` when
    the parent facet names a root run, else ``parent.run.runId``; ``None`` without a parent run
    (a non-empty string). The root, because a parent may itself be one instance of a mapped task:
    the statements its SQL hooks report (``<dag>.<task>.query.<n>``) are child runs of each
    instance, and only the root run, the DAG run, groups them as it groups the instances.

    Read without validating the facet, so that a reading of the envelope only
    (``ENVELOPE_ONLY``, ``envelope.read_envelope``) and a whole reading give the same answer,
    whether the facet is valid or not."""
    parent = facets.get("parent") if _is_mapping(facets) else None
    if not _is_mapping(parent):
        return None
    return parent_run_of(parent.get("run"), parent.get("root"))


def parent_run_of(run: Any, root: Any) -> str | None:
    """``raw_parent_run_id`` of a parent facet (an object) whose ``run`` and ``root`` are
    these: for a reader that decoded only them (``envelope.read_envelope``)."""
    run_id = _id_of(run)
    if run_id is None:
        return None
    root_run = root.get("run") if _is_mapping(root) else None
    return _id_of(root_run) or run_id


def raw_map_index(facets: Any) -> int | None:
    """Which instance of its Airflow task a run is, from its raw ``airflow`` run facet: its task
    instance's ``map_index`` (-1: a task not mapped); ``None`` without that facet (not a run of
    an Airflow task). Read without validating, as ``raw_parent_run_id`` is."""
    airflow = facets.get("airflow") if _is_mapping(facets) else None
    if not _is_mapping(airflow):
        return None
    instance = airflow.get("taskInstance")
    index = instance.get("map_index") if _is_mapping(instance) else None
    return index if type(index) is int else -1


def raw_dag_run(facets: Any) -> str | None:
    """The Airflow DAG run a run of a task belongs to, from its raw ``airflow`` run facet: its
    ``dagRun.run_id`` (``manual__2026-…``), the same across the clears of that DAG run, where the
    parent facet names a new OpenLineage run each time a task is cleared. Read without
    validating, as ``raw_parent_run_id`` is."""
    airflow = facets.get("airflow") if _is_mapping(facets) else None
    dag_run = airflow.get("dagRun") if _is_mapping(airflow) else None
    run_id = dag_run.get("run_id") if _is_mapping(dag_run) else None
    return run_id if isinstance(run_id, str) and run_id else None


def _id_of(run: Any) -> str | None:
    """``run.runId`` when it is a non-empty string."""
    run_id = run.get("runId") if _is_mapping(run) else None
    return run_id if isinstance(run_id, str) and run_id else None


def _is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, a dict (decoded JSON) checked first: the abstract check
    costs more than the rest of reading a parent, and every run reads one."""
    return type(value) is dict or isinstance(value, Mapping)


def _not_from_the_wire(_: Any) -> None:
    """A value the wire gives a field of ours: dropped (validated only when one is given)."""
    return None


class Run(_Wire):
    run_id: str
    facets: RunFacets = Field(default_factory=dict)
    parent_run_id: Annotated[str | None, BeforeValidator(_not_from_the_wire)] = Field(
        default=None, exclude=True
    )
    """The run id its ``parent`` run facet groups it under (``raw_parent_run_id`` of the facets
    as given: the root run it names, else the parent run; set by the reading: ``name_parent``;
    whatever the wire says under this name is dropped, and it is not written):
    the run of an Airflow DAG whose task this run is (every instance of a mapped task,
    ``.expand()``, names the same, and so do the statements each instance's SQL hooks report)."""
    map_index: Annotated[int | None, BeforeValidator(_not_from_the_wire)] = Field(
        default=None, exclude=True
    )
    """Which instance of its Airflow task the run is (``raw_map_index`` of the facets as given,
    set by the reading with ``parent_run_id``): an instance that failed in the latest DAG run is
    still described by its latest completed run (``fold.core._group``)."""
    dag_run: Annotated[str | None, BeforeValidator(_not_from_the_wire)] = Field(
        default=None, exclude=True
    )
    """The Airflow DAG run of a task's run across its clears (``raw_dag_run`` of the facets as
    given, set by the reading with ``parent_run_id``): the instances of a mapped task one of which
    was cleared and run again are still one DAG run's (``fold.core._dag_run``)."""


def name_parent(event: Any, data: Any) -> None:
    """Give a RunEvent read from ``data`` (its decoded JSON) the parent its raw ``parent`` run
    facet names (``Run.parent_run_id``) and the map index of its raw ``airflow`` facet
    (``Run.map_index``), over anything the wire said under those names. Set after
    validation rather than by a validator: every event has a run, and a Python validator per
    run was a tenth of reading a long history."""
    if isinstance(event, RunEvent):
        run = data.get("run") if _is_mapping(data) else None
        facets = run.get("facets") if _is_mapping(run) else None
        event.run.__dict__["parent_run_id"] = raw_parent_run_id(facets)  # ours: no validation
        event.run.__dict__["map_index"] = raw_map_index(facets)
        event.run.__dict__["dag_run"] = raw_dag_run(facets)


def _none_is_blank(value: Any) -> Any:
    return "" if value is None else value


OptionalText = Annotated[str, BeforeValidator(_none_is_blank)]


class _BaseEvent(_Wire):
    """``producer`` and ``schemaURL`` are required by the spec but not needed to map an event."""

    event_time: EventTime
    producer: OptionalText = ""
    schema_url: OptionalText = Field(default="", alias="schemaURL")


class RunEvent(_BaseEvent):
    event_type: EventType | None = None
    job: Job
    run: Run
    inputs: Datasets[InputDataset] = Field(default_factory=list)
    outputs: Datasets[OutputDataset] = Field(default_factory=list)


class JobEvent(_BaseEvent):
    job: Job
    inputs: Datasets[InputDataset] = Field(default_factory=list)
    outputs: Datasets[OutputDataset] = Field(default_factory=list)


class DatasetEvent(_BaseEvent):
    dataset: Dataset


Event = RunEvent | JobEvent | DatasetEvent
