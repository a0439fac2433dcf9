"""The facet tables: which model reads which facet, by key and by schema, in each container.

A facet is read by the model its key names in its container. A key that the table does not know
is tried by the schema name of its ``_schemaURL`` (the last part, ``…/OutputStatistics
OutputDatasetFacet.json`` or ``…#/$defs/OutputStatisticsOutputDatasetFacet``) and is then
filed under the spec's key. The key decides first because producers copy schema URLs carelessly
(the spec's own examples file ``datasetType`` under ``DatasetVersionDatasetFacet.json``).

A facet that its model rejects is dropped and reported; a facet nobody knows is kept as a plain
``BaseFacet`` (its fields are the producer's properties) and counted by key. A job or dataset
facet sent with ``_deleted: true`` is kept as a plain ``BaseFacet`` too: it only says "remove
this facet"; a run, input or output facet sent so is malformed (``_DELETABLE``).

A facet that capture could not serialize (a value that contains itself, nested too deeply) is
stored as the text ``dropped_facet`` writes in its place: malformed like any facet that is not an
object, and reported with capture's reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from . import dataset_facets as ds
from . import job_facets as jf
from . import lineage_facets as lf
from . import quality_facets as qf
from . import run_facets as rf
from .airflow_facets import (
    AirflowDagRunFacet,
    AirflowJobFacet,
    AirflowMappedTaskRunFacet,
    AirflowRunFacet,
    AirflowStateRunFacet,
    UnknownOperatorAttributeRunFacet,
)
from .base import BaseFacet, FacetIssues, FacetLocation

__all__ = [
    "DROPPED_FACET",
    "FACETS",
    "SCHEMAS",
    "dropped_facet",
    "error_reason",
    "facet_from_json",
    "filed_keys",
    "forget_validated_facets",
    "read_facet",
    "read_facets",
    "schema_name",
]

DROPPED_FACET = "dropped when captured: "
"""How the text that stands for a facet capture could not serialize begins (``dropped_facet``)."""


def dropped_facet(reason: str) -> str:
    """What capture stores in place of a facet it could not serialize: the reason, which reading
    reports (``MALFORMED_FACET``) as it reports any facet that is not an object."""
    return DROPPED_FACET + reason


def _not_an_object(value: Any) -> str:
    if type(value) is str and value.startswith(DROPPED_FACET):
        return value
    return f"not an object ({type(value).__name__})"


_MODELS: dict[FacetLocation, tuple[type[BaseFacet], ...]] = {
    FacetLocation.RUN: (
        rf.ParentRunFacet,
        rf.JobDependenciesRunFacet,
        rf.NominalTimeRunFacet,
        rf.ErrorMessageRunFacet,
        rf.ExtractionErrorRunFacet,
        rf.ProcessingEngineRunFacet,
        rf.ExternalQueryRunFacet,
        rf.EnvironmentVariablesRunFacet,
        rf.ExecutionParametersRunFacet,
        rf.TagsRunFacet,
        rf.TestRunFacet,
        rf.SparkUnknownRunFacet,
        AirflowRunFacet,
        AirflowDagRunFacet,
        AirflowStateRunFacet,
        AirflowMappedTaskRunFacet,
        UnknownOperatorAttributeRunFacet,
    ),
    FacetLocation.JOB: (
        jf.SQLJobFacet,
        jf.JobTypeJobFacet,
        jf.SourceCodeLocationJobFacet,
        jf.SourceCodeJobFacet,
        jf.DocumentationJobFacet,
        jf.OwnershipJobFacet,
        jf.TagsJobFacet,
        lf.LineageJobFacet,
        AirflowJobFacet,
    ),
    FacetLocation.DATASET: (
        ds.SchemaDatasetFacet,
        ds.DocumentationDatasetFacet,
        ds.DatasetTypeDatasetFacet,
        ds.DatasetVersionDatasetFacet,
        ds.HierarchyDatasetFacet,
        ds.SymlinksDatasetFacet,
        ds.CatalogDatasetFacet,
        ds.DatasourceDatasetFacet,
        ds.StorageDatasetFacet,
        ds.OwnershipDatasetFacet,
        ds.TagsDatasetFacet,
        ds.LifecycleStateChangeDatasetFacet,
        lf.ColumnLineageDatasetFacet,
        lf.LineageDatasetFacet,
        qf.DataQualityMetricsDatasetFacet,
        qf.DataQualityAssertionsDatasetFacet,
        qf.GreatExpectationsAssertionsDatasetFacet,
        # seed 003's statistics, where openlineage-common sends them: its Dataset files the
        # Redshift Data provider's ``stats`` among the dataset facets of its outputs
        qf.InputStatisticsInputDatasetFacet,
        qf.OutputStatisticsOutputDatasetFacet,
    ),
    FacetLocation.INPUT: (
        qf.DataQualityAssertionsDatasetFacet,
        qf.GreatExpectationsAssertionsDatasetFacet,
        qf.DataQualityMetricsInputDatasetFacet,
        qf.InputStatisticsInputDatasetFacet,
        qf.IcebergScanReportInputDatasetFacet,
        ds.InputSubsetInputDatasetFacet,
    ),
    FacetLocation.OUTPUT: (
        # a producer's profile of what it wrote, sent among the output facets (the spec defines
        # the facet for inputs and datasets): read as it is among the dataset facets
        qf.DataQualityMetricsDatasetFacet,
        qf.OutputStatisticsOutputDatasetFacet,
        qf.IcebergCommitReportOutputDatasetFacet,
        ds.OutputSubsetOutputDatasetFacet,
    ),
}

FACETS: Mapping[FacetLocation, Mapping[str, type[BaseFacet]]] = MappingProxyType(
    {where: MappingProxyType({m.KEY: m for m in models}) for where, models in _MODELS.items()}
)
"""The model of each facet key, per container."""

SCHEMAS: Mapping[FacetLocation, Mapping[str, type[BaseFacet]]] = MappingProxyType(
    {
        where: MappingProxyType({name: m for m in models for name in m.SCHEMAS})
        for where, models in _MODELS.items()
    }
)
"""The model of each schema name, per container, for facets filed under another key."""

_MAX_ERRORS = 3

_DELETABLE = frozenset({FacetLocation.JOB, FacetLocation.DATASET})
"""Where a facet may be sent as ``{"_deleted": true}`` to remove it: the spec defines
``_deleted`` on job and dataset facets only. Elsewhere (a run, an input or an output facet) such
a facet is malformed: dropped and reported, and an earlier one of its key stays."""
_NOT_DELETABLE = "_deleted is defined for job and dataset facets only"


@lru_cache(maxsize=1024)
def schema_name(url: str) -> str:
    """The definition a ``_schemaURL`` points at: its ``#/$defs/`` name, else its file name."""
    path, _, fragment = url.partition("#")
    if fragment:
        return fragment.rstrip("/").rpartition("/")[2]
    name = path.rstrip("/").rpartition("/")[2]
    return name.removesuffix(".json")


def error_reason(error: ValidationError) -> str:
    """The first errors as ``field.path: message``, without the offending values (secrets)."""
    parts = []
    for detail in error.errors(include_url=False, include_input=False)[:_MAX_ERRORS]:
        where = ".".join(str(part) for part in detail["loc"])
        parts.append(f"{where}: {detail['msg']}" if where else detail["msg"])
    more = error.error_count() - _MAX_ERRORS
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def _model_for(
    location: FacetLocation, key: str, value: dict[str, Any], container: Mapping[str, Any]
) -> tuple[str, type[BaseFacet] | None]:
    model = FACETS[location].get(key)
    if model is not None:
        return key, model
    url = value.get("_schemaURL")
    if isinstance(url, str):
        model = SCHEMAS[location].get(schema_name(url))
        if model is not None:
            # Filed under the spec's key, unless the event also sends that key itself.
            return (key if model.KEY in container else model.KEY), model
    return key, None


def _container(
    raw: Any, location: FacetLocation, issues: FacetIssues | None, where: str
) -> dict[Any, Any]:
    """A facet container as a dict; one that is not an object is reported and reads empty."""
    if raw is None:
        return {}
    if type(raw) is dict:  # JSON gives dicts; the abstract check is slow
        container: dict[Any, Any] = raw
        return container
    if not isinstance(raw, Mapping):
        if issues is not None:
            issues.add_malformed(where, location, "facets", _not_an_object(raw))
        return {}
    return dict(raw)


def _filed(
    raw: dict[Any, Any], location: FacetLocation, issues: FacetIssues | None, where: str
) -> Iterator[tuple[str, str, type[BaseFacet] | None, dict[str, Any]]]:
    """Each facet of a container that is an object: its key, the key it is filed under, its
    model (``None``: nobody knows it) and its value. Other facets are reported and skipped."""
    for key, value in raw.items():
        name = key if type(key) is str else repr(key)
        if type(value) is not dict:
            if not isinstance(value, Mapping):
                if issues is not None:
                    issues.add_malformed(where, location, name, _not_an_object(value))
                continue
            value = dict(value)
        if value.get("_deleted") is True:  # a deletion marker has none of the facet's fields
            if location in _DELETABLE:
                yield name, name, BaseFacet, value
            elif issues is not None:
                issues.add_malformed(where, location, name, _NOT_DELETABLE)
        else:
            target, model = _model_for(location, name, value, raw)
            yield name, target, model, value


def read_facets(
    raw: Any, location: FacetLocation, issues: FacetIssues | None = None, where: str = ""
) -> dict[str, BaseFacet]:
    """Read one facet container; never raises. Drops malformed facets, keeps unknown ones.

    ``where`` names the job or dataset in the issues recorded.
    """
    facets: dict[str, BaseFacet] = {}
    container = _container(raw, location, issues, where)
    for name, target, known, value in _filed(container, location, issues, where):
        model = known
        if model is None:
            model = BaseFacet
            if issues is not None:
                issues.unknown.append(name)
        try:
            facets[target] = model.__pydantic_validator__.validate_python(value)
        except ValidationError as error:
            if issues is not None:
                issues.add_malformed(where, location, name, error_reason(error))
    return facets


def filed_keys(raw: Any, location: FacetLocation) -> AbstractSet[str]:
    """The keys ``read_facets`` would file the facets of container ``raw`` under, found without
    validating them: what the container can set at most (a malformed facet is dropped then).

    A key is not always its own: a facet under an unknown key is filed under the spec's key when
    its ``_schemaURL`` names a known facet, so a reader that compares facets of two events by key
    (``mapper/fold/reading.py``) compares these.
    """
    container = _container(raw, location, None, "")
    if container.keys() <= FACETS[location].keys():  # the usual case: known keys stay
        return container.keys()
    filed = {target for _, target, _, _ in _filed(container, location, None, "")}
    # A facet that is not an object (``"acme": 5``) is malformed under its own key, as one under
    # a known key is: the reader reads its event, and reports it, unless a newer one decided it.
    filed.update(key for key, value in container.items() if not isinstance(value, Mapping))
    return filed


def read_facet(key: str, value: dict[str, Any], location: FacetLocation) -> BaseFacet:
    """One facet already filed under ``key`` (by ``read_facets``), typed again the same way.

    For facets written back from a read one (a kept fold): the key is not moved, and a facet
    that no longer validates raises ``ValidationError``.
    """
    model: type[BaseFacet] | None = None
    if value.get("_deleted") is not True:
        model = FACETS[location].get(key)
        url = value.get("_schemaURL")
        if model is None and isinstance(url, str):
            model = SCHEMAS[location].get(schema_name(url))
    facet: BaseFacet = (model or BaseFacet).__pydantic_validator__.validate_python(value)
    return facet


def facet_from_json(model: type[BaseFacet], text: bytes) -> BaseFacet | None:
    """The facet ``model`` reads from the JSON object ``text``, validated in pydantic's JSON mode
    (no decoded objects made on the way: a third less than decoding, then validating), or
    ``None`` when only the decoded object can say what it is (``read_facets``, ``read_facet``):
    not an object, a deletion marker (a ``_deleted`` however its key is escaped), or a text the
    JSON mode refuses (malformed for ``model``, a lone surrogate). A text of at most
    ``MEMO_TEXT_LIMIT`` bytes is read once (``_read_once``)."""
    if len(text) <= MEMO_TEXT_LIMIT:
        return _read_once(model, text)
    return _read_json(model, text)


def _read_json(model: type[BaseFacet], text: bytes) -> BaseFacet | None:
    if text[:1] != b"{" or b'"_deleted"' in text:
        return None
    try:
        facet: BaseFacet = model.__pydantic_validator__.validate_json(text)
    except ValueError:
        return None
    return facet if facet.deleted is None else None


MEMO_TEXT_LIMIT = 8192
"""Facet texts of at most this many bytes are read once (``_read_once``)."""

_read_once = lru_cache(maxsize=2048)(_read_json)
"""``_read_json`` once per text: the same text comes back in many events, jobs and kept folds
(the schema of a table in every job that reads it, a DAG run's parent facet in each of its
tasks, a ``jobType`` in every task) and gives an equal facet each time, or ``None`` each time;
a repeat costs one look-up, not the checks again. The facet is shared: facets are never changed
in place (a fold copies what it changes). Bounded: 2,048 texts of at most 8 KB, and emptied by
``forget_validated_facets`` when a plan is done."""


def forget_validated_facets() -> None:
    """Empty the memo of ``facet_from_json``: once a plan is made, what it validated need not
    stay in memory (a facet of a long columnLineage holds hundreds of objects, which every full
    collection of the garbage collector would visit)."""
    _read_once.cache_clear()
