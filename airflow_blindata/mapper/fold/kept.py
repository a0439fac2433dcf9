"""A folded job as text, so that a snapshot can keep it and skip a job that received nothing new.

``dump_folded`` writes a ``FoldedJob`` (the job's merged facets, its kept runs, its dataset
mentions) with the report of reading its events as JSON: facets in their wire form, each facet
object written once (a mention holding one of the job's dataset facets as its place in the job),
a facet read from an event as the JSON its producer sent. ``load_kept`` reads it back as events
are read (``events.envelope``), through the same facet registry: a loaded job is equal to the
folded one, each facet recorded with its text. ``fold_settings`` names what the fold depends on
besides the events (the quality switches, the version of this format and of airflow-blindata):
a kept fold is used only under the same settings.

How it is read and written, and measurements:
docs/performance.md#a-kept-fold-as-text-mapperfoldkeptpy
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Generic, TypeVar

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

from airflow_blindata import __version__
from airflow_blindata.definition import JobDefinition
from airflow_blindata.events import BaseFacet, EventType, FacetLocation
from airflow_blindata.events.parse import decode_json
from airflow_blindata.events.registry import FACETS, facet_from_json, read_facet
from airflow_blindata.mapper.fold.core import (
    DatasetKey,
    DatasetMentions,
    FoldedJob,
    InputFold,
    JobFold,
    JobKey,
    Mention,
    OutputFold,
    RunFold,
    facet_key_of,
)
from airflow_blindata.mapper.fold.reading import RawFacets
from airflow_blindata.mapper.report import Report

__all__ = ["FORMAT", "KeptFold", "dump_folded", "fold_settings", "load_kept"]

FORMAT = 23
"""The version of the text; change it with any change to the fold or to this format (23: a
dataset whose ``dataSource`` names the database its name lacks is keyed with it,
``core.dataset_names``: folds that merged two databases' tables are read again; 22: a
metrics facet with a column's entry that holds no metrics (null, a list), or without
``columnMetrics``, and an assertions facet with an assertion that cannot be read (null), are no
longer malformed: folds that dropped them are read again; 21: a
metrics facet with a count sent as text that is no integer, or a lastUpdated sent as a number, is
no longer malformed: folds that dropped it are read again; 20: the
outline of the two runs of a job that started last, of a DAG the run going on and the one before
it, even when that one failed; 19: the
latest run of each instance of a mapped task that never completed is kept whole, what describes
it; 18: the
latest run that names datasets is kept whole, what a restarted streaming job stands on; 17: a run
keeps its Airflow DAG run, ``RunFold.dag_run``, by which a task's instances are grouped across
the clears of that DAG run; 16: the
latest completed run of each map index is kept whole, the stand-in of an instance that has not
run in a DAG run under way, and ``FoldedJob.dropped_indexes`` counts those let go; 15: a run
keeps its Airflow map index, ``RunFold.map_index``; 14: a
run, input or output facet sent as ``_deleted`` is malformed, no longer a facet of the fold, and
runs are ranked by their end (``core.run_rank``);
13: a fold's job keys no longer hold the credentials of their namespace)."""

T = TypeVar("T")


def fold_settings(definition: JobDefinition) -> str:
    """A digest of what a fold depends on besides the events."""
    quality = definition.quality
    text = f"{FORMAT}|{__version__}|{quality.enabled}|{quality.metrics_enabled}"
    return hashlib.sha256(text.encode()).hexdigest()


def dump_folded(
    folded: FoldedJob,
    report: Report,
    raw_facets: RawFacets | None = None,
    *,
    until: int | None = None,
) -> str:
    """The folded job and the report of reading its events, as JSON text; ``until`` is the
    store's cursor the events were read up to (``KeptFold.until``).

    The fold's classes are handed to msgspec as they are (its facets to pydantic-core), and
    written in one pass: dumping them to dicts first was half the cost of keeping a fold. A
    mention whose facet is also a dataset facet of the job (the same object: the latest event of
    a dataset is mostly one of a kept run) is written as where it is in the job (``at``), not a
    second time: half the text of an Airflow-shaped job, written, stored, read and validated
    again for nothing.

    A facet found in ``raw_facets`` (what reading the events recorded) is written as the JSON
    object it was read from, which loads as the same facet: the producer's object is smaller than
    the model's dump (no nulls for what it left out) and half the cost to write."""
    places = _places(folded.job)
    wire = _Wire(raw_facets) if raw_facets else None
    datasets = [
        {
            "namespace": key.namespace,
            "name": key.name,
            "first": merge.first,  # datetimes as the JSON writer writes them (ISO 8601)
            "last": merge.last,
            "mentions": {
                facet_key: _mention_data(facet_key, mention, places, wire)
                for facet_key, mention in merge.mentions.items()
            },
        }
        for key, merge in folded.datasets.items()
    ]
    job = folded.job if wire is None else wire.of(folded.job)
    runs = sorted(folded.runs_seen)
    text = {
        "job": job,
        "datasets": datasets,
        "runs": runs,
        "held": sorted(folded.held),
        "parents": sorted(folded.parents),
        "dropped": sorted(folded.dropped_indexes),
        "report": report,
        "until": until,
    }
    return _json_text(text)


class _Wire:
    """A fold's classes as plain data for the JSON writer, each facet read from an event as the
    object it was read from (``RawFacets``), any other facet as its model."""

    def __init__(self, raw_facets: RawFacets) -> None:
        self.raw_facets = raw_facets

    def facet(self, facet: BaseFacet) -> BaseFacet | dict[str, Any] | Raw:
        found = self.raw_facets.get(id(facet))
        if found is None or found[0] is not facet:
            return facet
        value = found[1]
        if type(value) is dict:  # written as pydantic-core writes it: NaN stays NaN
            try:
                return Raw(to_json(value, inf_nan_mode="constants"))
            except (PydanticSerializationError, ValueError):
                return value  # a lone surrogate: the whole text is written by json.dumps
        return value

    def of(self, model: _Model) -> dict[str, Any]:
        """A fold's own class (``JobFold``, ``RunFold``, ``InputFold``, ``OutputFold``) as a
        dict of its fields by name: its dicts are facet maps, its lists of the fold's classes
        are recursed into, keys are written as objects."""
        data: dict[str, Any] = {}
        for name in _FIELDS[type(model)]:
            value = getattr(model, name)
            kind = type(value)
            if kind is dict:
                value = {key: self.facet(facet) for key, facet in value.items()}
            elif kind is list and value:
                first = type(value[0])
                if first in _NESTED:
                    value = [self.of(item) for item in value]
                elif first is DatasetKey:
                    value = [_key(item) for item in value]
            elif kind is DatasetKey or kind is JobKey:
                value = _key(value)
            data[name] = value
        return data


_Model = JobFold | RunFold | InputFold | OutputFold
_NESTED = frozenset({RunFold, InputFold, OutputFold})
"""The fold's classes that others hold in lists (``runs``, ``inputs``, ``outputs``)."""
_FIELDS: dict[type, tuple[str, ...]] = {
    kind: tuple(item.name for item in fields(kind)) for kind in (JobFold, *_NESTED)
}
"""Their fields' names, in their order (the text's)."""


def _key(key: DatasetKey | JobKey) -> dict[str, str]:
    return {"namespace": key.namespace, "name": key.name}


_Place = tuple[int | None, str, int]
"""Where a dataset facet is in a job: the index of its run (``None``: the datasets the job itself
declares), ``"i"`` or ``"o"`` (its inputs or outputs) and the index of the dataset there."""


def _places(job: JobFold) -> dict[tuple[str, int], _Place]:
    """Each dataset facet of ``job`` by its key and identity, where it is first in the job."""
    places: dict[tuple[str, int], _Place] = {}
    holders: list[tuple[int | None, JobFold | RunFold]] = [*enumerate(job.runs), (None, job)]
    for run, holder in holders:
        for side in ("i", "o"):
            for index, item in enumerate(_side(holder, side)):
                for key, facet in item.facets.items():
                    places.setdefault((key, id(facet)), (run, side, index))
    return places


def _side(holder: JobFold | RunFold, side: str) -> Sequence[InputFold | OutputFold]:
    if side == "i":
        return holder.inputs
    if side == "o":
        return holder.outputs
    raise ValueError(f"not a side of a job's datasets: {side!r}")


def _mention_data(
    key: str, mention: Mention, places: dict[tuple[str, int], _Place], wire: _Wire | None
) -> dict[str, Any]:
    (moment, *rest), content = mention.order
    data: dict[str, Any] = {"order": [moment, *rest], "content": content}
    facet = mention.facet
    place = None if facet is None else places.get((facet_key_of(key), id(facet)))
    if place is None:
        data["facet"] = facet if facet is None or wire is None else wire.facet(facet)
    else:
        data["at"] = place
    return data


def _json_text(data: dict[str, Any]) -> str:
    """The JSON of ``data``, compact, non-ASCII as is: written by msgspec (the fold's dataclasses
    too), which copies a facet's JSON text (``Raw``) as it is, each model written by
    pydantic-core (by alias, ``NaN`` and ``Infinity`` as ``json.dumps`` writes them; a fold has
    floats in facets only). What they refuse (a lone surrogate) is written by ``json.dumps``
    from the models' JSON-mode dumps."""
    try:
        return _ENCODER.encode(data).decode("utf-8")
    except (msgspec.EncodeError, PydanticSerializationError, ValueError, TypeError):
        return json.dumps(_plain(data), separators=(",", ":"))


def _model_text(value: Any) -> Raw:
    if isinstance(value, BaseModel):
        return Raw(to_json(value, by_alias=True, inf_nan_mode="constants"))
    raise TypeError(f"not written in a kept fold: {type(value).__name__}")


_ENCODER = msgspec.json.Encoder(enc_hook=_model_text)


def _plain(value: Any) -> Any:
    if isinstance(value, Raw):
        return decode_json(bytes(value))
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, datetime):
        return to_jsonable_python(value)  # as ``to_json`` writes it
    if isinstance(value, DatasetKey | JobKey):
        return _key(value)
    if type(value) in _FIELDS:
        return {name: _plain(getattr(value, name)) for name in _FIELDS[type(value)]}
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


F = TypeVar("F")
"""A facet in a kept fold's text as read: its JSON text (``Raw``), or the object decoded."""


class _Input(Struct, Generic[F]):
    key: DatasetKey
    facets: dict[str, F]
    input_facets: dict[str, F]


class _Output(Struct, Generic[F]):
    key: DatasetKey
    facets: dict[str, F]
    output_facets: dict[str, F]


class _Run(Struct, Generic[F]):
    job: JobKey
    run_id: str
    state: EventType | None
    event_types: list[EventType]
    first_event_time: datetime
    last_event_time: datetime
    start_time: datetime | None
    end_time: datetime | None
    producer: str
    run_facets: dict[str, F]
    job_facets: dict[str, F]
    inputs: list[_Input[F]]
    outputs: list[_Output[F]]
    parent_run_id: str | None
    snapshot_inputs: list[DatasetKey] | None = None
    snapshot_outputs: list[DatasetKey] | None = None
    map_index: int | None = None
    dag_run: str | None = None


class _Job(Struct, Generic[F]):
    key: JobKey
    facets: dict[str, F]
    inputs: list[_Input[F]]
    outputs: list[_Output[F]]
    runs: list[_Run[F]]
    first_event_time: datetime
    last_event_time: datetime
    written: list[DatasetKey] = []
    design_producer: str = ""
    dag_run_before: str | None = None  # set for a plan only (``mapper.dag_runs``): none here


class _Mention(Struct, Generic[F]):
    order: tuple[datetime, int, str, str, str]
    content: str
    facet: F | UnsetType = UNSET  # JSON null: deleted
    at: tuple[int | None, str, int] | UnsetType = UNSET


class _Dataset(Struct, Generic[F]):
    namespace: str
    name: str
    first: datetime
    last: datetime
    mentions: dict[str, _Mention[F]]


class _Kept(Struct, Generic[F]):
    """What ``dump_folded`` writes, typed as the fold's classes type it (the text names fields
    as they do), each facet left as ``F``: the fold's classes are then made of what is typed
    already (validating them again with pydantic was a third of the cost of loading)."""

    job: _Job[F]
    datasets: list[_Dataset[F]]
    runs: list[int]
    held: list[str]
    parents: list[int]
    dropped: list[int]
    report: Any
    until: int | None


_DECODER = msgspec.json.Decoder(_Kept[Raw])
_NULL = b"null"


class _Reader:
    """Types a kept fold's facets again through the facet registry, recording each with the
    object it was read from (``RawFacets``: a fold extended and kept again writes them as is),
    and makes the fold's classes of what is typed already."""

    def __init__(self, raw_facets: RawFacets | None) -> None:
        self.raw_facets = raw_facets

    def facet(self, key: str, value: Any, location: FacetLocation) -> BaseFacet:
        """``read_facet`` of the decoded object; from a JSON text, in pydantic's JSON mode when
        the key names a model (``facet_from_json``), else as decoded."""
        if type(value) is Raw:
            facet = _from_text(key, bytes(value), location)
        else:
            facet = read_facet(key, _object(value), location)
        if self.raw_facets is not None:
            self.raw_facets[id(facet)] = (facet, value)
        return facet

    def facets(self, raw: dict[str, Any], location: FacetLocation) -> dict[str, BaseFacet]:
        return {key: self.facet(key, value, location) for key, value in raw.items()}

    def input(self, item: _Input[Any]) -> InputFold:
        return InputFold(
            key=item.key,
            facets=self.facets(item.facets, FacetLocation.DATASET),
            input_facets=self.facets(item.input_facets, FacetLocation.INPUT),
        )

    def output(self, item: _Output[Any]) -> OutputFold:
        return OutputFold(
            key=item.key,
            facets=self.facets(item.facets, FacetLocation.DATASET),
            output_facets=self.facets(item.output_facets, FacetLocation.OUTPUT),
        )

    def run(self, run: _Run[Any]) -> RunFold:
        return RunFold(
            job=run.job,
            run_id=run.run_id,
            state=run.state,
            event_types=run.event_types,
            first_event_time=run.first_event_time,
            last_event_time=run.last_event_time,
            start_time=run.start_time,
            end_time=run.end_time,
            producer=run.producer,
            run_facets=self.facets(run.run_facets, FacetLocation.RUN),
            job_facets=self.facets(run.job_facets, FacetLocation.JOB),
            inputs=[self.input(item) for item in run.inputs],
            outputs=[self.output(item) for item in run.outputs],
            snapshot_inputs=run.snapshot_inputs,
            snapshot_outputs=run.snapshot_outputs,
            parent_run_id=run.parent_run_id,
            map_index=run.map_index,
            dag_run=run.dag_run,
        )

    def job(self, job: _Job[Any]) -> JobFold:
        """The job, its facets typed again (as when read from events)."""
        return JobFold(
            key=job.key,
            facets=self.facets(job.facets, FacetLocation.JOB),
            inputs=[self.input(item) for item in job.inputs],
            outputs=[self.output(item) for item in job.outputs],
            runs=[self.run(run) for run in job.runs],
            written=job.written,
            first_event_time=job.first_event_time,
            last_event_time=job.last_event_time,
            design_producer=job.design_producer,
        )

    def kept(self, kept: _Kept[Any]) -> KeptFold:
        job = self.job(kept.job)
        datasets = {
            DatasetKey(item.namespace, item.name): DatasetMentions(
                {key: self.mention(key, mention, job) for key, mention in item.mentions.items()},
                item.first,
                item.last,
            )
            for item in kept.datasets
        }
        folded = FoldedJob(
            job,
            datasets,
            frozenset(kept.runs),
            frozenset(kept.held),
            frozenset(kept.parents),
            frozenset(kept.dropped),
        )
        return KeptFold(folded, Report.model_validate(kept.report), kept.until)

    def mention(self, key: str, mention: _Mention[Any], job: JobFold) -> Mention:
        order = (mention.order, mention.content)
        key = facet_key_of(key)  # a writer's schema is a schema facet
        if mention.at is not UNSET:
            return Mention(order, _placed(job, key, mention.at))
        value = mention.facet
        if value is UNSET:
            raise KeyError("facet")
        if value is None or (type(value) is Raw and bytes(value) == _NULL):
            return Mention(order, None)
        return Mention(order, self.facet(key, value, FacetLocation.DATASET))


def _from_text(key: str, text: bytes, location: FacetLocation) -> BaseFacet:
    model = FACETS[location].get(key)
    facet = None if model is None else facet_from_json(model, text)
    if facet is None:
        facet = read_facet(key, _object(decode_json(text)), location)
    return facet


def _object(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise TypeError(f"a facet is a JSON object, not {type(value).__name__}")
    return value


def _placed(job: JobFold, key: str, place: _Place) -> BaseFacet:
    """The facet ``key`` at ``place`` in the loaded job: the very object, shared as when folded."""
    run, side, index = place
    holder = job if run is None else _item(job.runs, run)
    return _item(_side(holder, side), index).facets[key]


def _item(items: Sequence[T], index: object) -> T:
    if type(index) is not int or not 0 <= index < len(items):
        raise ValueError(f"not an index of {len(items)} items: {index!r}")
    return items[index]


@dataclass(frozen=True, slots=True)
class KeptFold:
    """A kept fold loaded: the job folded, the report of reading its events, and the store's
    cursor its events were read up to (``None``: not said)."""

    folded: FoldedJob
    report: Report
    until: int | None


def load_kept(text: str, raw_facets: RawFacets | None = None) -> KeptFold:
    """What ``dump_folded`` wrote; raises ``ValueError``, ``KeyError`` or ``TypeError`` (pydantic's
    ``ValidationError`` and msgspec's errors are ``ValueError``) on other text. With
    ``raw_facets``, each facet is recorded there with the object it was read from."""
    try:
        kept: _Kept[Any] = _DECODER.decode(text)
    except (msgspec.MsgspecError, ValueError):  # NaN, a lone surrogate, or not a kept fold
        kept = _decoded(text)
    return _Reader(raw_facets).kept(kept)


def _decoded(text: str) -> _Kept[Any]:
    """The text decoded as ``json.loads`` decodes it (what msgspec refuses: ``NaN``, a number
    out of range, a lone surrogate), each facet as the object decoded."""
    try:
        return msgspec.convert(decode_json(text), _Kept[Any])
    except msgspec.MsgspecError as exc:  # a ValueError only from msgspec 0.21 on
        raise ValueError(str(exc)) from exc
