"""A folded job as text, so that a snapshot can keep it and skip a job that received nothing new.

A snapshot reads every stored event of a job only when the job's events changed; otherwise it
loads what it folded last time (``FoldedJob``: the job's merged facets, its kept runs, its dataset
mentions) with the report of reading those events. The text is JSON: facets in their wire form,
read back through the same facet registry as events, so a loaded job is equal to the folded one.
Each facet object is written once: a dataset mention holding one of the job's dataset facets is
written as its place in the job and loaded as that very object (an Airflow-shaped job of
``benchmarks/scale.py``: 18.6 KB of text before, 11.1 KB after, and half the time to load). A
facet read from an event is written as the JSON object the producer sent (``RawFacets``), not
as its model's dump: 8.1 KB, a third less time to write and a fifth less to load. Read from the
event's text, it is copied in as that text (msgspec's ``Raw``): no encoding at all.

``fold_settings`` names what the fold depends on besides the events (the quality switches, the
version of this format and of airflow-blindata): a kept fold is used only under the same settings.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import msgspec
from msgspec import Raw
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

from airflow_blindata import __version__
from airflow_blindata.definition import JobDefinition
from airflow_blindata.events import BaseFacet, FacetLocation
from airflow_blindata.events.parse import decode_json
from airflow_blindata.events.registry import read_facet
from airflow_blindata.mapper.fold import (
    DatasetKey,
    DatasetMentions,
    FoldedJob,
    InputFold,
    JobFold,
    JobKey,
    Mention,
    OutputFold,
    RunFold,
)
from airflow_blindata.mapper.reading import RawFacets
from airflow_blindata.mapper.report import Report

__all__ = ["FORMAT", "KeptFold", "dump_folded", "fold_settings", "load_kept"]

FORMAT = 3
"""The version of the text; change it with any change to the fold or to this format."""

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

    The models are handed to pydantic-core as they are, and written in one pass: dumping them to
    dicts first was half the cost of keeping a fold. A mention whose facet is also a dataset facet
    of the job (the same object: the latest event of a dataset is mostly one of a kept run) is
    written as where it is in the job (``at``), not a second time: half the text of an
    Airflow-shaped job, written, stored, read and validated again for nothing.

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
    text = {"job": job, "datasets": datasets, "runs": runs, "report": report, "until": until}
    return _json_text(text)


class _Wire:
    """A fold's models as plain data for the JSON writer, each facet read from an event as the
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

    def of(self, model: BaseModel) -> dict[str, Any]:
        """A fold's own model (``JobFold``, ``RunFold``, ``InputFold``, ``OutputFold``) as a
        dict of its fields by name (they have no aliases): its dicts are facet maps, its lists
        of models are recursed into, keys are written as objects."""
        data: dict[str, Any] = {}
        for name, value in model.__dict__.items():
            kind = type(value)
            if kind is dict:
                value = {key: self.facet(facet) for key, facet in value.items()}
            elif kind is list and value and isinstance(value[0], BaseModel):
                value = [self.of(item) for item in value]
            elif kind is list and value and type(value[0]) is DatasetKey:
                value = [_key(item) for item in value]
            elif kind is DatasetKey or kind is JobKey:
                value = _key(value)
            data[name] = value
        return data


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
    place = None if facet is None else places.get((key, id(facet)))
    if place is None:
        data["facet"] = facet if facet is None or wire is None else wire.facet(facet)
    else:
        data["at"] = place
    return data


def _json_text(data: dict[str, Any]) -> str:
    """The JSON of ``data``, compact, non-ASCII as is: written by msgspec, which copies a facet's
    JSON text (``Raw``) as it is, each model written by pydantic-core (by alias, ``NaN`` and
    ``Infinity`` as ``json.dumps`` writes them; a fold has floats in facets only). What they
    refuse (a lone surrogate) is written by ``json.dumps`` from the models' JSON-mode dumps."""
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
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


class _Reader:
    """Types a kept fold's facets again through the facet registry, recording each with the
    object it was read from (``RawFacets``: a fold extended and kept again writes them as is)."""

    def __init__(self, raw_facets: RawFacets | None) -> None:
        self.raw_facets = raw_facets

    def facets(self, raw: dict[str, Any], location: FacetLocation) -> dict[str, BaseFacet]:
        facets = {key: read_facet(key, value, location) for key, value in raw.items()}
        if self.raw_facets is not None:
            for key, facet in facets.items():
                self.raw_facets[id(facet)] = (facet, raw[key])
        return facets

    def datasets(self, items: list[dict[str, Any]], own: str, location: FacetLocation) -> None:
        for item in items:
            item["facets"] = self.facets(item["facets"], FacetLocation.DATASET)
            item[own] = self.facets(item[own], location)

    def job(self, data: dict[str, Any]) -> JobFold:
        """The job from its JSON, its facets typed again (as when read from events)."""
        data["facets"] = self.facets(data["facets"], FacetLocation.JOB)
        self.datasets(data["inputs"], "input_facets", FacetLocation.INPUT)
        self.datasets(data["outputs"], "output_facets", FacetLocation.OUTPUT)
        for run in data["runs"]:
            run["run_facets"] = self.facets(run["run_facets"], FacetLocation.RUN)
            run["job_facets"] = self.facets(run["job_facets"], FacetLocation.JOB)
            self.datasets(run["inputs"], "input_facets", FacetLocation.INPUT)
            self.datasets(run["outputs"], "output_facets", FacetLocation.OUTPUT)
        return JobFold.model_validate(data)


def _mention(key: str, data: dict[str, Any], job: JobFold) -> Mention:
    moment, rank, namespace, name, run = data["order"]
    order = ((datetime.fromisoformat(moment), rank, namespace, name, run), data["content"])
    if "at" in data:
        return Mention(order, _placed(job, key, data["at"]))
    raw = data["facet"]
    facet = None if raw is None else read_facet(key, raw, FacetLocation.DATASET)
    return Mention(order, facet)


def _placed(job: JobFold, key: str, place: list[Any]) -> BaseFacet:
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
    ``ValidationError`` is a ``ValueError``) on other text. With ``raw_facets``, each facet is
    recorded there with the object it was read from."""
    data = decode_json(text)
    job = _Reader(raw_facets).job(data["job"])
    datasets = {
        DatasetKey(item["namespace"], item["name"]): DatasetMentions(
            {key: _mention(key, mention, job) for key, mention in item["mentions"].items()},
            datetime.fromisoformat(item["first"]),
            datetime.fromisoformat(item["last"]),
        )
        for item in data["datasets"]
    }
    runs = data["runs"]
    until = data["until"]
    if not all(type(run) is int for run in runs) or not (until is None or type(until) is int):
        raise ValueError("runs seen and the cursor are integers")
    folded = FoldedJob(job, datasets, frozenset(runs))
    return KeptFold(folded, Report.model_validate(data["report"]), until)
