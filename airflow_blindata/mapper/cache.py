"""A folded job as text, so that a snapshot can keep it and skip a job that received nothing new.

A snapshot reads every stored event of a job only when the job's events changed; otherwise it
loads what it folded last time (``FoldedJob``: the job's merged facets, its kept runs, its dataset
mentions) with the report of reading those events. The text is JSON: facets in their wire form,
read back through the same facet registry as events, so a loaded job is equal to the folded one.

``fold_settings`` names what the fold depends on besides the events (the quality switches, the
version of this format and of airflow-blindata): a kept fold is used only under the same settings.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

from airflow_blindata import __version__
from airflow_blindata.definition import JobDefinition
from airflow_blindata.events import BaseFacet, FacetLocation
from airflow_blindata.events.parse import decode_json
from airflow_blindata.events.registry import read_facet
from airflow_blindata.mapper.fold import (
    DatasetKey,
    DatasetMentions,
    FoldedJob,
    JobFold,
    Mention,
)
from airflow_blindata.mapper.report import Report

__all__ = ["FORMAT", "dump_folded", "fold_settings", "load_folded"]

FORMAT = 1
"""The version of the text; change it with any change to the fold or to this format."""


def fold_settings(definition: JobDefinition) -> str:
    """A digest of what a fold depends on besides the events."""
    quality = definition.quality
    text = f"{FORMAT}|{__version__}|{quality.enabled}|{quality.metrics_enabled}"
    return hashlib.sha256(text.encode()).hexdigest()


def dump_folded(folded: FoldedJob, report: Report) -> str:
    """The folded job and the report of reading its events, as JSON text.

    The models are handed to pydantic-core as they are, and written in one pass: dumping them to
    dicts first was half the cost of keeping a fold."""
    datasets = [
        {
            "namespace": key.namespace,
            "name": key.name,
            "first": merge.first.isoformat(),
            "last": merge.last.isoformat(),
            "mentions": {
                facet_key: {
                    "order": [mention.order[0][0].isoformat(), *mention.order[0][1:]],
                    "content": mention.order[1],
                    "facet": mention.facet,
                }
                for facet_key, mention in merge.mentions.items()
            },
        }
        for key, merge in folded.datasets.items()
    ]
    return _json_text({"job": folded.job, "datasets": datasets, "report": report})


def _json_text(data: dict[str, Any]) -> str:
    """The JSON of ``data`` (models by alias) written by pydantic-core, compact: ``NaN`` and
    ``Infinity`` as ``json.dumps`` writes them, non-ASCII as is. What it refuses (a lone
    surrogate) is written by ``json.dumps`` from the models' JSON-mode dumps."""
    try:
        return to_json(data, by_alias=True, inf_nan_mode="constants").decode("utf-8")
    except (PydanticSerializationError, ValueError):
        return json.dumps(_plain(data), separators=(",", ":"))


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _read(raw: dict[str, Any], location: FacetLocation) -> dict[str, BaseFacet]:
    return {key: read_facet(key, value, location) for key, value in raw.items()}


def _load_io(items: list[dict[str, Any]], own: str, location: FacetLocation) -> None:
    for item in items:
        item["facets"] = _read(item["facets"], FacetLocation.DATASET)
        item[own] = _read(item[own], location)


def _load_job(data: dict[str, Any]) -> JobFold:
    """The job from its JSON, its facets typed again by the registry (as when read from events)."""
    data["facets"] = _read(data["facets"], FacetLocation.JOB)
    _load_io(data["inputs"], "input_facets", FacetLocation.INPUT)
    _load_io(data["outputs"], "output_facets", FacetLocation.OUTPUT)
    for run in data["runs"]:
        run["run_facets"] = _read(run["run_facets"], FacetLocation.RUN)
        run["job_facets"] = _read(run["job_facets"], FacetLocation.JOB)
        _load_io(run["inputs"], "input_facets", FacetLocation.INPUT)
        _load_io(run["outputs"], "output_facets", FacetLocation.OUTPUT)
    return JobFold.model_validate(data)


def _mention(key: str, data: dict[str, Any]) -> Mention:
    moment, rank, namespace, name, run = data["order"]
    order = ((datetime.fromisoformat(moment), rank, namespace, name, run), data["content"])
    raw = data["facet"]
    facet = None if raw is None else read_facet(key, raw, FacetLocation.DATASET)
    return Mention(order, facet)


def load_folded(text: str) -> tuple[FoldedJob, Report]:
    """What ``dump_folded`` wrote; raises ``ValueError``, ``KeyError`` or ``TypeError`` (pydantic's
    ``ValidationError`` is a ``ValueError``) on other text."""
    data = decode_json(text)
    job = _load_job(data["job"])
    datasets = {
        DatasetKey(item["namespace"], item["name"]): DatasetMentions(
            {key: _mention(key, mention) for key, mention in item["mentions"].items()},
            datetime.fromisoformat(item["first"]),
            datetime.fromisoformat(item["last"]),
        )
        for item in data["datasets"]
    }
    return FoldedJob(job, datasets), Report.model_validate(data["report"])
