"""Fold events into runs, jobs and datasets, whatever order they arrived in.

The fold is a function of the *set* of events (seed 004): it sorts them (``eventTime``, then the
event type's rank, a terminal event winning a tie, then job and run id, then content) before
merging, so any permutation and any duplicates give the same ``Fold``. Per facet key the latest
facet wins and ``_deleted: true`` removes a job or dataset facet; a run's state is its latest
terminal event, else its latest START or RUNNING; JobEvents and DatasetEvents add facets and no
run. Every list in the result is sorted by key, every facet map by facet key. A snapshot folds
one job at a time (``FoldBuilder``), keeping what the mapping passes read; ``extend_folded``
adds newer events to a kept fold.

Why and how: docs/mapping-reference.md#how-the-fold-orders-and-merges-mapperfoldcorepy
"""

from __future__ import annotations

import hashlib
import heapq
import json
import zlib
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import islice
from operator import eq
from typing import Any, TypeVar

from airflow_blindata.events import (
    AirflowRunFacet,
    BaseFacet,
    ColumnLineageDatasetFacet,
    DatasetEvent,
    DatasourceDatasetFacet,
    Event,
    EventType,
    FacetMap,
    InputDataset,
    JobEvent,
    LifecycleStateChangeDatasetFacet,
    LineageDatasetFacet,
    NominalTimeRunFacet,
    OutputDataset,
    ParentRunFacet,
    RunEvent,
    SchemaDatasetFacet,
    facet_key,
    facet_of,
)
from airflow_blindata.mapper.identity import (
    lacks_source_database,
    name_with_source_database,
    shown_namespace,
)

__all__ = [
    "AS_WRITTEN",
    "OPEN_RUNS_HELD",
    "DatasetFold",
    "DatasetKey",
    "DatasetMentions",
    "Fold",
    "FoldBuilder",
    "FoldedJob",
    "InputFold",
    "JobFold",
    "JobKey",
    "Mention",
    "OutputFold",
    "RunFold",
    "RunRetainer",
    "database_may_come_from_source",
    "dataset_names",
    "extend_folded",
    "facet_key_of",
    "fold",
    "fold_jobs",
    "job_of",
    "layered_facet",
    "open_runs",
    "order_key",
    "run_digest",
    "run_rank",
    "runs_kept_whole",
    "whole_run_ids",
]


@dataclass(frozen=True, order=True, slots=True)
class JobKey:
    """A job by its namespace and name, the namespace without the credentials a producer may
    have put in it (``identity.shown_namespace``: ``postgres://etl:pw@db:5432`` is
    ``postgres://db:5432``, ``?password=pw`` is ``?password=***``).

    Every job the mapper reads is named by one — the event's job, a parent run facet's, a job
    dependency's, a lineage entry's — so a job namespace is cleaned here, once, and what is made
    of it (the job entity's schema, the routine's catalog and schema, the flow's name, the
    scopes) never holds the secret. Two spellings of a namespace that differ only in their
    credentials name one job."""

    namespace: str
    name: str

    def __post_init__(self) -> None:
        clean = shown_namespace(self.namespace)
        if clean != self.namespace:
            object.__setattr__(self, "namespace", clean)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


def job_of(event: RunEvent | JobEvent) -> tuple[str, str]:
    """The (namespace, name) of an event's job as its ``JobKey`` names it (credentials out): how
    the fold and the reading group a job's events."""
    return shown_namespace(event.job.namespace), event.job.name


@dataclass(frozen=True, order=True, slots=True)
class DatasetKey:
    namespace: str
    name: str

    def __str__(self) -> str:
        """How reports and sources name the dataset: never with the namespace's credentials."""
        return f"{shown_namespace(self.namespace)}/{self.name}"


def dataset_names(namespace: str, name: str, facets: Mapping[str, BaseFacet]) -> tuple[str, str]:
    """The (namespace, name) the fold keys an event's dataset by: as sent, but with the database
    its own ``dataSource`` facet names when its platform's names have a database part the name
    lacks (``identity.name_with_source_database``: Great Expectations' ``public.orders`` of
    ``postgresql+psycopg2://db/prod`` is ``prod.public.orders``).

    Read per event and per dataset, before anything is merged: the database is part of the
    dataset's identity, so the prod and the dev table of one server are two datasets whatever
    order their events come in (merged, the latest event's URI named the database of both).
    Every reading of an event's datasets goes through it (the fold, the skim's decisions)."""
    source = facets.get(DatasourceDatasetFacet.KEY)
    if source is None or source.deleted or not isinstance(source, DatasourceDatasetFacet):
        return namespace, name
    uri = source.uri
    named = name_with_source_database(namespace, name, uri) if uri else None
    return (namespace, named) if named is not None else (namespace, name)


def database_may_come_from_source(namespace: str, name: str) -> bool:
    """Whether ``dataset_names`` may give a dataset so named another name, by its
    ``dataSource`` facet: what the skim reads whole (``fold.reading``)."""
    return lacks_source_database(namespace, name)


_TERMINAL = frozenset({EventType.COMPLETE, EventType.FAIL, EventType.ABORT})
_PROGRESS = frozenset({EventType.START, EventType.RUNNING})
# Ties on eventTime: design time first, then the run cycle, a terminal event after a RUNNING one,
# and OTHER (metadata added after the run) last.
_RANK: dict[EventType | None, int] = {
    EventType.START: 0,
    EventType.RUNNING: 1,
    EventType.COMPLETE: 2,
    EventType.ABORT: 3,
    EventType.FAIL: 4,
    EventType.OTHER: 5,
    None: 5,
}
_DESIGN_RANK = -1


F = TypeVar("F", bound=BaseFacet)


def layered_facet(
    model: type[F], facets: Mapping[str, BaseFacet], over: Mapping[str, BaseFacet]
) -> F | None:
    """``facet_of({**facets, **over}, model)`` without building the merged dict: the facet of
    type ``model`` in ``over`` (the input or output facets of a dataset) or else in ``facets``
    (its dataset facets). The passes ask it of every input and output of every run."""
    key = facet_key(model)
    found = over[key] if key in over else facets.get(key)
    if found is None:  # mostly: ``isinstance`` is slow to say no (see ``facet_of``)
        return None
    return found if type(found) is model or isinstance(found, model) else None


# The fold's own classes are slotted dataclasses, not pydantic models: a fold makes them from
# values it typed itself, and the passes read their fields for every run, input and output of
# every job (docs/performance.md#what-a-pydantic-model-costs-besides-validating-eventsbasepy).
# Keyword-only: each is made by naming its fields, and a default may come before other fields.


@dataclass(slots=True, kw_only=True)
class InputFold:
    """A dataset a run read (or a JobEvent declares): its dataset facets and input facets."""

    key: DatasetKey
    facets: FacetMap
    input_facets: FacetMap


@dataclass(slots=True, kw_only=True)
class OutputFold:
    """A dataset a run wrote (or a JobEvent declares): its dataset facets and output facets."""

    key: DatasetKey
    facets: FacetMap
    output_facets: FacetMap


@dataclass(slots=True, kw_only=True)
class RunFold:
    """One run, all its events merged. ``state`` is never OTHER; ``None`` without any state."""

    job: JobKey
    run_id: str
    state: EventType | None
    event_types: list[EventType]
    first_event_time: datetime
    last_event_time: datetime
    start_time: datetime | None
    end_time: datetime | None
    producer: str
    run_facets: FacetMap
    job_facets: FacetMap
    inputs: list[InputFold]
    outputs: list[OutputFold]
    snapshot_inputs: list[DatasetKey] | None = None
    snapshot_outputs: list[DatasetKey] | None = None
    """The datasets of the run's latest event that names any (``None``: ``inputs``, or
    ``outputs``, all of them, as for most runs): the whole lineage of the run when its job's
    events are complete snapshots (``jobType`` ``emissionPattern.eventContentMode:
    COMPLETE_SNAPSHOT``; seed 004: events "are accumulative unless stated otherwise"), where
    ``inputs`` and ``outputs`` accumulate every event's."""
    parent_run_id: str | None = None
    """The parent run its events name (``Run.parent_run_id``, read from the raw ``parent`` run
    facet, valid or not): of the events naming one, the latest in time, then in rank, then the
    greatest id (``_parent_key``), so that it is known without folding the run (``runs_kept_whole``)
    and whatever the order of events tied on the fold's order."""
    map_index: int | None = None
    """Which instance of its Airflow task the run is (``Run.map_index``: -1 not mapped, ``None``
    not an Airflow task), the greatest its events name (they name one)."""
    dag_run: str | None = None
    """The Airflow DAG run it belongs to across that DAG run's clears (``Run.dag_run``), the
    greatest its events name; ``_dag_run`` groups the instances of a task by it."""

    @property
    def completed(self) -> bool:
        return self.state is EventType.COMPLETE

    @property
    def parent(self) -> ParentRunFacet | None:
        return facet_of(self.run_facets, ParentRunFacet)

    @property
    def parent_job(self) -> JobKey | None:
        parent = self.parent
        return JobKey(parent.job.namespace, parent.job.name) if parent else None

    @property
    def nominal_time(self) -> NominalTimeRunFacet | None:
        return facet_of(self.run_facets, NominalTimeRunFacet)


@dataclass(slots=True, kw_only=True)
class JobFold:
    """A job: its facets merged over all its events, its declared datasets, and its runs.

    ``inputs`` and ``outputs`` are those of the latest JobEvent that lists any (design time);
    what runs read and wrote is in ``runs``, oldest first (by the time of their latest event).
    A snapshot's fold keeps only the runs the mapping reads (see ``FoldBuilder``); ``written``
    lists every dataset any run of the job wrote, whether its run was kept or not.
    ``design_producer`` is the producer of its latest JobEvent (``""`` without one): flows that
    come from the job's design name it (seed 001: a flow's description names "the producer").
    """

    key: JobKey
    facets: FacetMap
    inputs: list[InputFold]
    outputs: list[OutputFold]
    runs: list[RunFold]
    written: list[DatasetKey] = field(default_factory=list)
    first_event_time: datetime
    last_event_time: datetime
    design_producer: str = ""
    dag_run_before: str | None = None
    """When the DAG run of its latest completed group goes on (no terminal event of the DAG's
    own), the run of its DAG before it (``mapper.dag_runs``): the instances of a mapped task that
    ran there and have not run yet in the one going on are still described by their runs before.
    Set for a plan, never kept with the fold."""

    @property
    def latest(self) -> RunFold | None:
        """The run ranked last (``run_rank``: ended last, else with the latest event), whatever
        its state."""
        return self.runs[-1] if self.runs else None

    @property
    def latest_completed(self) -> RunFold | None:
        """The latest COMPLETE run: orchestration and quality come only from completed runs."""
        for run in reversed(self.runs):
            if run.state is EventType.COMPLETE:
                return run
        return None

    @property
    def latest_completed_group(self) -> list[RunFold]:
        """The latest completed run with the other completed runs of its parent run, oldest first:
        the instances of a mapped task (``.expand()``) in one DAG run, each a run of the job,
        and for an instance that ran there without completing its latest completed run before
        (``_group``), as for one that has not run there yet while that DAG run goes on
        (``dag_run_before``). A run that names no parent is a group of one. Empty without
        a completed run. Data flows come from the group (``lineage``); a snapshot keeps it whole
        (``_whole_runs``)."""
        return _group(self.runs, self.dag_run_before)

    @property
    def never_completed_instances(self) -> list[RunFold]:
        """The runs that describe the instances of a mapped task that ran in the DAG run of the
        latest completed group (or, none completed, of the latest run) and never completed, and
        of those that ran in the DAG's run before it while it goes on (``dag_run_before``):
        ``never_completed_instances``."""
        return never_completed_instances(self.runs, self.dag_run_before)


@dataclass(slots=True, kw_only=True)
class DatasetFold:
    """A dataset seen in any event, with its dataset facets merged over all of them.

    ``written_schema`` is the latest ``schema`` facet sent by a job that wrote the dataset (or
    by a DatasetEvent, the dataset's own design), when a reader's later one replaced it in
    ``facets``: a reader may list only some columns (dbt without its catalog lists the
    documented ones), and the columns the writer still writes are still described.

    ``design_lineage`` is the latest ``lineage`` facet of the dataset's DatasetEvents (its own
    declaration, with no job): a ``lineage`` facet that a job sent later on its output replaces
    it in ``facets``, as the spec's replacement rule says, but not here — the job's lineage is
    the job's evidence and the dataset's own is another (issue 37), and both are published.
    ``design_column_lineage`` is the same for a DatasetEvent's ``columnLineage`` facet."""

    key: DatasetKey
    facets: FacetMap
    first_event_time: datetime
    last_event_time: datetime
    written_schema: SchemaDatasetFacet | None = None
    design_lineage: LineageDatasetFacet | None = None
    design_column_lineage: ColumnLineageDatasetFacet | None = None
    lifecycle_at: datetime | None = None
    """When the dataset's latest ``lifecycleStateChange`` facet was sent (``catalog.gone``)."""
    lifecycle_run: str | None = None
    """The run that sent it (``""``: a DatasetEvent or a JobEvent)."""
    lifecycle_completed: bool = False
    """Whether a COMPLETE event sent it (a DatasetEvent's or a JobEvent's: as completed)."""
    renamed: LifecycleStateChangeDatasetFacet | None = None
    """The latest ``RENAME`` a writer sent for the dataset, whatever state it sent after (Spark
    sends ``OVERWRITE`` on each ``INSERT OVERWRITE``): the name it was renamed from."""
    renamed_at: datetime | None = None


@dataclass(slots=True, kw_only=True)
class Fold:
    """Every job and every dataset of a set of events, sorted by key; a plan looks a job or a
    dataset up by key for every flow end (the indexes are made once, and not compared)."""

    jobs: list[JobFold]
    datasets: list[DatasetFold]
    _jobs: dict[JobKey, JobFold] = field(init=False, repr=False, compare=False)
    _datasets: dict[DatasetKey, DatasetFold] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._jobs = {job.key: job for job in self.jobs}
        self._datasets = {dataset.key: dataset for dataset in self.datasets}

    def job(self, key: JobKey) -> JobFold | None:
        return self._jobs.get(key)

    def dataset(self, key: DatasetKey) -> DatasetFold | None:
        return self._datasets.get(key)

    def run(self, job: JobKey, run_id: str) -> RunFold | None:
        found = self._jobs.get(job)
        return next((run for run in found.runs if run.run_id == run_id), None) if found else None


T = TypeVar("T")
K = TypeVar("K", DatasetKey, tuple[str, str])


class _Order:
    """Sorts events by eventTime, rank, job and run, breaking remaining ties by content.

    The content key costs a serialisation, so it is computed only for events still tied (one
    run's events at the same instant and of the same type, or duplicates), and once per event.
    """

    def __init__(self) -> None:
        self._content: dict[int, str] = {}

    def content(self, event: Event) -> str:
        key = self._content.get(id(event))
        if key is None:
            try:
                dumped = event.model_dump(mode="json")
                text = json.dumps(dumped, sort_keys=True, separators=(",", ":"), default=str)
            except (TypeError, ValueError):  # producer extras that are not JSON
                text = repr(event)
            key = self._content[id(event)] = hashlib.sha256(text.encode()).hexdigest()
        return key

    def keyed(self, items: Iterable[T], event_of: Callable[[T], Event]) -> list[tuple[_SortKey, T]]:
        """The items in their events' order, each with its event's sort key (made once: the
        fold's mentions are ordered by it too)."""
        keyed = sorted(((_sort_key(event_of(item)), item) for item in items), key=_first)
        keys = [key for key, _ in keyed]
        if not any(map(eq, keys, islice(keys, 1, None))):  # mostly: no tie to break
            return keyed
        result: list[tuple[_SortKey, T]] = []
        start = 0
        while start < len(keyed):
            end = start + 1
            while end < len(keyed) and keyed[end][0] == keyed[start][0]:
                end += 1
            group = keyed[start:end]
            if len(group) > 1:  # stable: one event's own items keep their order
                group.sort(key=lambda pair: self.content(event_of(pair[1])))
            result.extend(group)
            start = end
        return result

    def sort(self, items: Iterable[T], event_of: Callable[[T], Event]) -> list[T]:
        return [item for _, item in self.keyed(items, event_of)]


_SortKey = tuple[datetime, int, str, str, str]


def _first(pair: tuple[_SortKey, object]) -> _SortKey:
    return pair[0]


def _sort_key(event: Event) -> _SortKey:
    if isinstance(event, RunEvent):
        job = event.job
        return event.event_time, _RANK[event.event_type], job.namespace, job.name, event.run.run_id
    if isinstance(event, JobEvent):
        return event.event_time, _DESIGN_RANK, event.job.namespace, event.job.name, ""
    return event.event_time, _DESIGN_RANK, "", "", ""


def order_key(event: Event) -> tuple[datetime, int, str, str, str]:
    """Where an event stands in the fold's order (equal keys are then ordered by content)."""
    return _sort_key(event)


def _itself(event: Event) -> Event:
    return event


def _merge(into: dict[str, BaseFacet], facets: Mapping[str, BaseFacet], deletable: bool) -> None:
    if not deletable:  # the latest wins, as a loop setting each would leave them
        into.update(facets)
        return
    for key, facet in facets.items():
        if facet.deleted:
            into.pop(key, None)
        else:
            into[key] = facet


def _sorted(facets: dict[str, BaseFacet]) -> dict[str, BaseFacet]:
    """``facets`` by key; every caller hands a dict of its own, given back when it has one key
    or none (most io facet maps are empty)."""
    return facets if len(facets) < 2 else dict(sorted(facets.items()))


_Slots = dict[tuple[str, str], tuple[dict[str, BaseFacet], dict[str, BaseFacet]]]
"""A run's (or a design's) datasets of one side by (namespace, name), which sort as their
``DatasetKey`` does: a key made per dataset, not per event."""


def _add_inputs(into: _Slots, datasets: Iterable[InputDataset]) -> None:
    for dataset in datasets:
        names = dataset_names(dataset.namespace, dataset.name, dataset.facets)
        slot = into.get(names)
        if slot is None:
            slot = into[names] = ({}, {})
        _merge(slot[0], dataset.facets, deletable=True)
        slot[1].update(dataset.input_facets)  # io facets are not deleted: ``_merge``


def _add_outputs(into: _Slots, datasets: Iterable[OutputDataset]) -> None:
    for dataset in datasets:
        names = dataset_names(dataset.namespace, dataset.name, dataset.facets)
        slot = into.get(names)
        if slot is None:
            slot = into[names] = ({}, {})
        _merge(slot[0], dataset.facets, deletable=True)
        slot[1].update(dataset.output_facets)


def _inputs(slots: _Slots) -> list[InputFold]:
    return [
        InputFold(key=DatasetKey(*names), facets=_sorted(facets), input_facets=_sorted(io))
        for names, (facets, io) in sorted(slots.items())
    ]


def _outputs(slots: _Slots) -> list[OutputFold]:
    return [
        OutputFold(key=DatasetKey(*names), facets=_sorted(facets), output_facets=_sorted(io))
        for names, (facets, io) in sorted(slots.items())
    ]


def _fold_run(
    job: JobKey, run_id: str, events: list[RunEvent], earlier: RunFold | None = None
) -> RunFold:
    """Merge one run's events, already in order; on top of ``earlier``, the fold of its events
    before these (``extend_folded``), when given."""
    run_facets: dict[str, BaseFacet] = dict(earlier.run_facets) if earlier else {}
    job_facets: dict[str, BaseFacet] = dict(earlier.job_facets) if earlier else {}
    inputs: _Slots = {}
    outputs: _Slots = {}
    # The decisive event so far: the last terminal one, else the last START or RUNNING.
    terminal: EventType | None = None
    progress: EventType | None = None
    end_time: datetime | None = None
    start_time: datetime | None = None
    kinds: set[EventType] = set()
    parent: _ParentKey | None = None
    map_index = earlier.map_index if earlier else None
    dag_run = earlier.dag_run if earlier else None
    snapshot: RunEvent | None = None  # the latest event that names a dataset
    if earlier is not None:
        inputs = {_names(i.key): (dict(i.facets), dict(i.input_facets)) for i in earlier.inputs}
        outputs = {_names(o.key): (dict(o.facets), dict(o.output_facets)) for o in earlier.outputs}
        if earlier.end_time is not None:
            terminal, end_time = earlier.state, earlier.end_time
        else:
            progress = earlier.state
        start_time = earlier.start_time
        kinds.update(earlier.event_types)
    for event in events:
        run = event.run
        run_facets.update(run.facets)  # run facets are not deleted: ``_merge``
        _merge(job_facets, event.job.facets, deletable=True)
        if event.inputs:
            _add_inputs(inputs, event.inputs)
            snapshot = event
        if event.outputs:
            _add_outputs(outputs, event.outputs)
            snapshot = event
        kind = event.event_type
        if kind in _TERMINAL:
            terminal, end_time = kind, event.event_time
        elif kind in _PROGRESS:
            progress = kind
            if start_time is None and kind is EventType.START:
                start_time = event.event_time
        if kind is not None:
            kinds.add(kind)
        named = _parent_key(event)
        if named is not None and (parent is None or parent < named):
            parent = named
        index = run.map_index
        if index is not None and (map_index is None or map_index < index):
            map_index = index
        named_run = run.dag_run
        if named_run is not None and (dag_run is None or dag_run < named_run):
            dag_run = named_run
    return RunFold(
        job=job,
        run_id=run_id,
        state=terminal or progress,
        event_types=sorted(kinds, key=_RANK.__getitem__),
        first_event_time=earlier.first_event_time if earlier else events[0].event_time,
        last_event_time=events[-1].event_time,
        start_time=start_time,
        end_time=end_time,
        producer=events[-1].producer,
        run_facets=_sorted(run_facets),
        job_facets=_sorted(job_facets),
        inputs=_inputs(inputs),
        outputs=_outputs(outputs),
        snapshot_inputs=(
            _snapshot(snapshot.inputs, inputs)
            if snapshot
            else earlier.snapshot_inputs
            if earlier
            else None
        ),
        snapshot_outputs=(
            _snapshot(snapshot.outputs, outputs)
            if snapshot
            else earlier.snapshot_outputs
            if earlier
            else None
        ),
        # ``events`` on top of ``earlier`` are all later than its own: one naming a parent wins
        parent_run_id=parent[2] if parent else earlier.parent_run_id if earlier else None,
        map_index=map_index,
        dag_run=dag_run,
    )


def _snapshot(
    datasets: Iterable[InputDataset | OutputDataset], every: _Slots
) -> list[DatasetKey] | None:
    """The keys of one event's datasets of a side; ``None`` when they are all the run's."""
    keys = {dataset_names(item.namespace, item.name, item.facets) for item in datasets}
    return None if keys == every.keys() else [DatasetKey(*names) for names in sorted(keys)]


def _names(key: DatasetKey) -> tuple[str, str]:
    return key.namespace, key.name


_ParentKey = tuple[datetime, int, str]


def _parent_key(event: RunEvent) -> _ParentKey | None:
    """How an event naming a parent run ranks among its run's events naming one (the greatest
    wins): by time, then rank, then the id named, which events tied on the fold's order may not
    agree on."""
    parent = event.run.parent_run_id
    return None if parent is None else (event.event_time, _RANK[event.event_type], parent)


RunRetainer = Callable[[RunFold], "RunFold | None"]
"""Given a run the snapshot would otherwise drop, what of it to keep (``None``: nothing).

What it keeps comes from the run's facets: a run none of whose events carries a run, input or
output facet, or a dataset facet, is kept as nothing, and ``fold_jobs`` does not fold it."""


@dataclass(slots=True)
class Mention:
    """The latest mention of one dataset facet key: the facet, or ``None`` when it was deleted."""

    order: tuple[_SortKey, str]
    facet: BaseFacet | None


@dataclass(slots=True)
class DatasetMentions:
    """One dataset's facets merged over the groups of events folded so far."""

    mentions: dict[str, Mention]
    first: datetime
    last: datetime

    def add(self, order: tuple[_SortKey, str], facets: Mapping[str, BaseFacet]) -> None:
        """A contribution of an event whose order is ``order``; later orders win per key."""
        for key, facet in facets.items():
            mention = self.mentions.get(key)
            if mention is None or mention.order <= order:
                self.mentions[key] = Mention(order, None if facet.deleted else facet)
        moment = order[0][0]
        self.first = min(self.first, moment)
        self.last = max(self.last, moment)

    def absorb(self, other: DatasetMentions) -> None:
        """Merge another group's mentions of the same dataset: later orders win per key."""
        for key, mention in other.mentions.items():
            mine = self.mentions.get(key)
            if mine is None or mine.order <= mention.order:
                self.mentions[key] = mention
        self.first = min(self.first, other.first)
        self.last = max(self.last, other.last)

    def fold(self, key: DatasetKey) -> DatasetFold:
        facets = {k: m.facet for k, m in self.mentions.items() if m.facet is not None}
        lifecycle = self.mentions.get("lifecycleStateChange")
        rename = self.mentions.get(_RENAME)
        renamed = facets.pop(_RENAME, None)
        design_lineage = facets.pop(_DESIGN_LINEAGE, None)
        design_columns = facets.pop(_DESIGN_COLUMN_LINEAGE, None)
        written_schema = facets.pop(_WRITTEN_SCHEMA, None)
        if not isinstance(written_schema, SchemaDatasetFacet):
            written_schema = None
        else:
            latest = facet_of(facets, SchemaDatasetFacet)
            if written_schema is latest or written_schema == latest:
                written_schema = None  # the latest schema is the writer's (or the same)
        return DatasetFold(
            key=key,
            facets=_sorted(facets),
            first_event_time=self.first,
            last_event_time=self.last,
            written_schema=written_schema,
            design_lineage=design_lineage
            if isinstance(design_lineage, LineageDatasetFacet)
            else None,
            design_column_lineage=design_columns
            if isinstance(design_columns, ColumnLineageDatasetFacet)
            else None,
            lifecycle_at=lifecycle.order[0][0] if lifecycle and lifecycle.facet else None,
            lifecycle_run=lifecycle.order[0][4] if lifecycle and lifecycle.facet else None,
            lifecycle_completed=bool(
                lifecycle
                and lifecycle.facet
                and lifecycle.order[0][1] in (_RANK[EventType.COMPLETE], _DESIGN_RANK)
            ),
            renamed=renamed if isinstance(renamed, LifecycleStateChangeDatasetFacet) else None,
            renamed_at=rename.order[0][0] if rename and rename.facet else None,
        )


AS_WRITTEN = "\x00written"
"""Appended to the key of a ``schema`` facet of an output (or of a DatasetEvent) in a dataset's
mentions: the facet is mentioned twice, under its key (the latest wins, a reader's too) and
under this one (only writers), for ``DatasetFold.written_schema``."""


_WRITTEN_SCHEMA = "schema" + AS_WRITTEN


def facet_key_of(mention_key: str) -> str:
    """The key of the facet a dataset's mention holds: a facet mentioned a second time
    (``AS_WRITTEN``, a ``RENAME``) is under its own key with a suffix after a NUL."""
    return mention_key.partition("\x00")[0]


_RENAME = "lifecycleStateChange\x00rename"
"""The key a writer's ``lifecycleStateChange`` ``RENAME`` is mentioned under a second time, for
``DatasetFold.renamed``: a later state (``OVERWRITE``, ``ALTER``) replaces it under its own key,
not here."""


def _as_written(facets: Mapping[str, BaseFacet]) -> Mapping[str, BaseFacet]:
    """``facets`` (an output's, a DatasetEvent's) with their schema facet mentioned again under
    its written key; a deleted one too, which ends what a writer's earlier one described; and a
    ``RENAME`` under ``_RENAME``."""
    facet = facets.get("schema")  # filed under it whatever the producer's key (registry)
    lifecycle = facets.get("lifecycleStateChange")
    if facet is None and lifecycle is None:
        return facets
    written = dict(facets)
    if facet is not None:
        written[_WRITTEN_SCHEMA] = facet
    if (
        isinstance(lifecycle, LifecycleStateChangeDatasetFacet)
        and lifecycle.lifecycle_state_change == "RENAME"
        and lifecycle.previous_identifier is not None
    ):
        written[_RENAME] = lifecycle
    return written


_DESIGN_LINEAGE = "lineage\x00design"
"""The key a DatasetEvent's ``lineage`` facet is mentioned under a second time, for
``DatasetFold.design_lineage``: only DatasetEvents mention it, so a job's facet never replaces
it. Never in a kept fold (a kept fold holds the mentions of a job's events only)."""


_DESIGN_COLUMN_LINEAGE = "columnLineage\x00design"
"""The same as ``_DESIGN_LINEAGE`` for a DatasetEvent's ``columnLineage`` facet
(``DatasetFold.design_column_lineage``)."""


def _as_design(facets: Mapping[str, BaseFacet]) -> Mapping[str, BaseFacet]:
    """A DatasetEvent's ``facets`` as ``_as_written`` gives them, with its lineage facets
    mentioned again under ``_DESIGN_LINEAGE`` and ``_DESIGN_COLUMN_LINEAGE``; a deleted one too,
    which ends the earlier declaration."""
    facets = _as_written(facets)
    lineage, columns = facets.get("lineage"), facets.get("columnLineage")
    if lineage is None and columns is None:
        return facets
    design = dict(facets)
    if lineage is not None:
        design[_DESIGN_LINEAGE] = lineage
    if columns is not None:
        design[_DESIGN_COLUMN_LINEAGE] = columns
    return design


def _fold_job(
    key: JobKey, ordered: list[RunEvent | JobEvent], whole: set[tuple[JobKey, str]] | None = None
) -> JobFold:
    """Merge one job's events, already in order.

    With ``whole`` (the runs kept whole, ``runs_kept_whole``), a run outside it whose events
    carry no facet a retainer could keep (nor a map index: ``_pending``) is not folded: with
    fifty runs a job, folding runs only to drop them was a fifth of a snapshot's time."""
    facets: dict[str, BaseFacet] = {}
    runs: dict[str, list[RunEvent]] = {}
    designs: list[JobEvent] = []
    written: set[tuple[str, str]] = set()  # names: a DatasetKey per dataset, not per event
    design_producer = ""
    for event in ordered:
        _merge(facets, event.job.facets, deletable=True)
        if isinstance(event, RunEvent):
            runs.setdefault(event.run.run_id, []).append(event)
            for output in event.outputs:
                written.add(dataset_names(output.namespace, output.name, output.facets))
            continue
        design_producer = event.producer
        if event.inputs or event.outputs:
            designs.append(event)
    inputs: _Slots = {}
    outputs: _Slots = {}
    latest = designs[-1].event_time if designs else None
    for design in (event for event in designs if event.event_time == latest):
        _add_inputs(inputs, design.inputs)
        _add_outputs(outputs, design.outputs)
    started: set[str] = set()  # folded for their outline: ``_latest_started``, of events
    if whole is not None:  # (a run's first event is its earliest: ``_started_key``)
        last_two = heapq.nlargest(2, runs, key=lambda run_id: (runs[run_id][0].event_time, run_id))
        started = set(last_two)
    folded = [
        _fold_run(key, run_id, run_events)
        for run_id, run_events in runs.items()
        if whole is None
        or (key, run_id) in whole
        or run_id in started
        or any(map(_has_run_facets, run_events))
        or _may_be_pending(run_events)
    ]
    folded.sort(key=run_rank)
    return JobFold(
        key=key,
        facets=_sorted(facets),
        inputs=_inputs(inputs),
        outputs=_outputs(outputs),
        runs=folded,
        written=[DatasetKey(*names) for names in sorted(written)],
        first_event_time=ordered[0].event_time,
        last_event_time=ordered[-1].event_time,
        design_producer=design_producer,
    )


def _may_be_pending(events: list[RunEvent]) -> bool:
    """Whether a run of these events may be one whose outline a kept fold keeps (``_pending``):
    of an Airflow task instance (a map index), and not plainly completed (no terminal event, or
    one that is not COMPLETE). Read without folding the run: most are older runs, dropped."""
    if all(event.run.map_index is None for event in events):
        return False
    ends = [event.event_type for event in events if event.event_type in _TERMINAL]
    return not ends or any(end is not EventType.COMPLETE for end in ends)


def run_rank(run: RunFold) -> tuple[datetime, datetime, str]:
    """Where a run stands among its job's runs: by when it ended (its last terminal event),
    else by its last event, then by its first event and its id. An event after a run's end (an
    OTHER with more metadata, a late RUNNING) adds to the run but does not make it later: an
    older run sent an OTHER after a newer one completed is not the job's latest description."""
    return (run.end_time or run.last_event_time, run.first_event_time, run.run_id)


def dag_run_key(airflow_run: str) -> str:
    """How ``_dag_run`` keys the runs of an Airflow DAG run (``RunFold.dag_run``), apart from the
    OpenLineage run ids it keys other runs by."""
    return "airflow:" + airflow_run


def _dag_run(run: RunFold) -> str | None:
    """The DAG run a run's instances are grouped by: of an Airflow task, its Airflow DAG run
    (``RunFold.dag_run``), the same across that DAG run's clears, where the parent facet names
    a new OpenLineage run each time (a probe through a real scheduler: one instance cleared and
    run again made a group of one, and the others' flows were removed); else its parent run."""
    if run.dag_run is not None and run.parent_run_id is not None:
        return dag_run_key(run.dag_run)
    return run.parent_run_id


def _group(
    runs: list[RunFold], before: str | None = None, *, every_absent: bool = False
) -> list[RunFold]:
    """``JobFold.latest_completed_group`` of runs in the fold's order. Of an Airflow task, the
    latest completed try of each of its instances in the DAG run of the latest completed run (a
    task cleared and run again in its DAG run is a new run of the same parent, whose earlier try
    is no longer what it does); and of each instance that ran in that DAG run without completing
    (it failed, or goes on), its latest completed run of an earlier DAG run, its stand-in, as a
    task's failed run does not replace the run it completed before (one failed instance of a
    mapped task dropped its flows, and the cleanup removed them). With ``before`` (that DAG run
    goes on, and ``before`` is its DAG's run before it: ``JobFold.dag_run_before``), the same for
    each instance that ran in ``before`` and has not run in it yet (``_absent``): a snapshot taken
    while a mapped task's instances wait in the queue dropped their flows, and the next one made
    them again. Not an instance of an older DAG run only: a map that shrank in ``before`` let it
    go (a review). With ``every_absent``, for each instance that has not run in it, whichever
    DAG run it ran in before: the runs a kept fold keeps whole (``_whole_runs``), whatever
    ``before`` a plan will find."""
    if len(runs) == 1:  # most jobs of a plan (dbt's models run once): nothing else to group
        return runs[:] if runs[0].completed else []
    group, parent = _latest_group(runs)
    wanted = {run.map_index for run in _unfinished(runs, parent, group)}
    if every_absent:
        wanted |= _absent(runs, parent)
    elif before is not None:
        wanted |= _absent(runs, parent) & _ran_in(runs, before)
    if not wanted:
        return group
    stand_ins: dict[int | None, RunFold] = {}
    for run in runs:  # in the fold's order: the latest wins
        if run.completed and run.map_index in wanted and _dag_run(run) != parent:
            stand_ins[run.map_index] = run
    if not stand_ins:
        return group
    chosen = {id(run) for run in (*group, *stand_ins.values())}
    return [run for run in runs if id(run) in chosen]


def never_completed_instances(
    runs: list[RunFold], before: str | None = None, *, every_absent: bool = False
) -> list[RunFold]:
    """Of the Airflow task instances that ran in the DAG run of the latest completed group (or,
    none completed, of the latest run) and have no completed run at all, each one's latest run
    there, in the fold's order: such an instance is described by what it ran, as an unmapped
    task that only failed so far is (``lineage._described_by``), where it has no stand-in
    (``_group``). A probe of the sync DAG: the instance of a mapped task that failed lost its
    flows once a sibling completed. Without Airflow's instances (no map index), none.

    With ``before`` (that DAG run goes on, and ``before`` is its DAG's run before it), also each
    such instance that has not run in it yet and whose latest run is of ``before``, as ``_group``
    takes a stand-in: a snapshot taken while it waits in the queue does not drop its flows for
    the next one to make again (a review). With ``every_absent``, whatever DAG run that latest
    run is of: the runs a kept fold keeps whole (``_whole_runs``)."""
    if len(runs) < 2:  # one run: the latest, which describes the job already
        return []
    group, parent = _latest_group(runs)
    if not group:
        parent = _dag_run(runs[-1])
    if parent is None:
        return []
    completed = {run.map_index for run in runs if run.completed}
    there: dict[int, RunFold] = {}  # each index's latest run in ``parent``
    latest: dict[int, RunFold] = {}  # and whatever its DAG run
    for run in runs:  # in the fold's order: the latest wins
        index = run.map_index
        if index is not None and index not in completed:
            latest[index] = run
            if _dag_run(run) == parent:
                there[index] = run
    chosen = {id(run) for run in there.values()}
    for index, run in latest.items():
        if index in there and not every_absent:
            continue  # it ran there: its run there describes it (another may go on elsewhere)
        dag_run = _dag_run(run)
        if index >= 0 and dag_run is not None and (every_absent or dag_run == before):
            chosen.add(id(run))
    if not chosen:
        return []
    return [run for run in runs if id(run) in chosen]


def _latest_group(runs: list[RunFold]) -> tuple[list[RunFold], str | None]:
    """The latest completed run with the latest completed try of each other instance of its
    parent run (``_instance``), in the fold's order, and that parent run."""
    latest = next((run for run in reversed(runs) if run.completed), None)
    if latest is None:
        return [], None
    parent = _dag_run(latest)
    if parent is None:
        return [latest], None
    group = [run for run in runs if run.completed and _dag_run(run) == parent]
    if len(group) > 1:
        newest = {_instance(run): run for run in group}  # in the fold's order: the latest wins
        group = [run for run in group if newest[_instance(run)] is run]
    return group, parent


def _unfinished(runs: list[RunFold], parent: str | None, group: list[RunFold]) -> list[RunFold]:
    """The runs of Airflow task instances of ``parent`` (the latest completed group's parent
    run) that did not complete, of instances with no completed run in ``group``."""
    if parent is None:
        return []
    done = {run.map_index for run in group}
    return [
        run
        for run in runs
        if _dag_run(run) == parent
        and not run.completed
        and run.map_index is not None
        and run.map_index not in done
    ]


def _absent(runs: list[RunFold], parent: str | None) -> set[int]:
    """The map indexes of a mapped task's instances that completed in an earlier DAG run and have
    no run in ``parent`` (the latest completed group's): not run there yet, or no longer mapped."""
    if parent is None:
        return set()
    present = {run.map_index for run in runs if _dag_run(run) == parent}
    return {
        run.map_index
        for run in runs
        if run.completed
        and run.map_index is not None
        and run.map_index >= 0
        and _dag_run(run) not in (None, parent)
        and run.map_index not in present
    }


def _ran_in(runs: list[RunFold], dag_run: str) -> set[int | None]:
    """The map indexes whose latest completed run is of ``dag_run``, or that ran there without
    completing: read from what a kept fold always holds (the latest completed run of every
    index whole, of a run that did not complete its outline), so the same whichever way the
    job was read."""
    latest = _latest_completed_by_index(runs)
    ran: set[int | None] = {index for index, run in latest.items() if _dag_run(run) == dag_run}
    ran.update(run.map_index for run in runs if not run.completed and _dag_run(run) == dag_run)
    return ran


def _pending(runs: list[RunFold]) -> set[str]:
    """The ids of the runs of Airflow task instances that did not complete: when another
    instance of their DAG run completes, they call for their stand-ins
    (``_group``), and so a kept fold keeps their outline (``_outline``)."""
    return {
        run.run_id
        for run in runs
        if not run.completed and run.map_index is not None and _dag_run(run) is not None
    }


def _latest_started(runs: list[RunFold]) -> set[str]:
    """The ids of the two runs that started last (``_started_key``), whose outline a kept fold
    keeps: of a DAG, the run going on and the one before it, which tells which DAG run the
    instances not run yet stand in from (``dag_runs``). A DAG run that failed was let go, and
    a snapshot taken while the next one went on dropped its instances' flows (a review)."""
    return {run.run_id for run in heapq.nlargest(2, runs, key=_started_key)}


def _started_key(run: RunFold) -> tuple[datetime, str]:
    return (run.first_event_time, run.run_id)


def _outline(run: RunFold) -> RunFold:
    """A run without its facets and datasets: its state, times, parent and map index, all that
    ``_group`` reads of a run that did not complete, and ``dag_runs`` of a DAG's run."""
    return replace(
        run,
        run_facets={},
        job_facets={},
        inputs=[],
        outputs=[],
        snapshot_inputs=None,
        snapshot_outputs=None,
    )


def _dropped_indexes(runs: list[RunFold], whole: AbstractSet[str]) -> frozenset[int]:
    """The map indexes whose latest completed run a kept fold does not keep whole (``whole``:
    ``_whole_runs``): it may be the stand-in a later group calls for (a stand-in is always
    the latest completed run of its index)."""
    return frozenset(
        index
        for index, run in _latest_completed_by_index(runs).items()
        if index is not None and run.run_id not in whole
    )


def _latest_completed_by_index(runs: list[RunFold]) -> dict[int | None, RunFold]:
    """Each map index's latest completed run (the stand-in it would be), ``runs`` in the fold's
    order."""
    latest: dict[int | None, RunFold] = {}
    for run in runs:  # the latest wins
        if run.completed:
            latest[run.map_index] = run
    return latest


def _instance(run: RunFold) -> object:
    """Which instance of its task a run is: an Airflow task instance's direct parent (its DAG
    run: a DAG triggered twice from one DAG run shares the root) and map index (-1 unmapped),
    from the ``parent`` and ``airflow`` run facets; any other run is an instance of its own."""
    airflow = facet_of(run.run_facets, AirflowRunFacet)
    if airflow is None:
        return run.run_id
    index = airflow.task_instance.get("map_index")
    index = index if isinstance(index, int) else -1
    if run.dag_run is not None and run.parent_run_id is not None:
        return (_dag_run(run), index)  # a clear of the DAG run runs the same instance again
    parent = facet_of(run.run_facets, ParentRunFacet)
    return (parent.run.run_id if parent else None, index)


def _whole_runs(runs: list[RunFold]) -> set[str]:
    """The ids of the runs ``_kept_runs`` keeps whole: the latest, the latest completed and the
    other completed runs of its parent run (``JobFold.latest_completed_group``, and the earlier
    tries it leaves out: a reading ranks runs without the facets that tell tries apart), and
    the stand-ins it holds (``_group``; of the runs that call for them, a kept
    fold keeps the outline: ``_kept_runs``)."""
    whole = {runs[-1].run_id} if runs else set()
    named = latest_naming_datasets(runs)
    if named is not None:
        whole.add(named.run_id)
    group = _group(runs, every_absent=True)  # its DAG run may go on: ``dag_run_before``
    whole.update(run.run_id for run in group)
    parent = _dag_run(group[-1]) if group else None
    if parent is not None:  # every completed try of it, as ``_kept_of`` reads them whole
        whole.update(run.run_id for run in runs if run.completed and _dag_run(run) == parent)
    whole.update(run.run_id for run in never_completed_instances(runs, every_absent=True))
    return whole


def latest_naming_datasets(runs: list[RunFold]) -> RunFold | None:
    """The latest run that names a dataset, whatever its state: what a streaming job's lineage
    stands on while its run restarted names none yet (seed 004: its terminal events "should not
    be relied upon"; a Flink job restarted was described by no run, and the cleanup removed its
    flows until its next RUNNING). Kept whole (``_whole_runs``)."""
    for run in reversed(runs):
        if run.inputs or run.outputs:
            return run
    return None


def whole_run_ids(folded: FoldedJob) -> set[str]:
    """The runs a fold keeps whole (its latest, and its latest completed with its group), by
    id."""
    return _whole_runs(folded.job.runs)


def _completed_parents(runs: Iterable[RunFold]) -> frozenset[int]:
    """``run_digest`` of the parent run named by each completed run (``FoldedJob.parents``)."""
    return frozenset(
        run_digest(key) for run in runs if run.completed and (key := _dag_run(run)) is not None
    )


def _has_run_facets(event: RunEvent) -> bool:
    """Whether the event carries a facet of the kinds a ``RunRetainer`` may keep."""
    if event.run.facets:
        return True
    for item in event.inputs:
        if item.facets or item.input_facets:
            return True
    return any(output.facets or output.output_facets for output in event.outputs)


def _kept_runs(
    runs: list[RunFold],
    retain: RunRetainer,
    hold: AbstractSet[str] = frozenset(),
    whole: AbstractSet[str] | None = None,
) -> list[RunFold]:
    """The latest run and the latest completed one whole, and those of ``hold`` (runs that go on
    in events still to come: ``fold.slices``); of the others what ``retain`` keeps, and of a run
    that may call for a stand-in later (``_pending``) or that tells a DAG's run before the one
    going on (``_latest_started``) its outline. (A job's runs have distinct ids.) ``whole``:
    ``_whole_runs(runs)`` when the caller has it already."""
    whole = (_whole_runs(runs) if whole is None else whole) | hold
    outlined = _pending(runs) | _latest_started(runs)
    kept: list[RunFold] = []
    for run in runs:
        part = run if run.run_id in whole else retain(run)
        if part is None and run.run_id in outlined:
            part = _outline(run)
        if part is not None:
            kept.append(part)
    return kept


OPEN_RUNS_HELD = 64
"""At most this many open runs of a job, the latest, are held whole in a kept fold: a run that
never ends (its task killed without a terminal event) is let go once newer ones outnumber it."""


def open_runs(events: Iterable[RunEvent | JobEvent]) -> set[str]:
    """The ids of one job's latest ``OPEN_RUNS_HELD`` runs with no terminal event, ranked as
    ``_fold_job`` ranks runs (facets play no part: events read without them do)."""
    runs: dict[str, list[Any]] = {}  # first, last, ended
    for event in events:
        if not isinstance(event, RunEvent):
            continue
        run = runs.get(event.run.run_id)
        if run is None:
            run = runs[event.run.run_id] = [event.event_time, event.event_time, False]
        run[0], run[1] = min(run[0], event.event_time), max(run[1], event.event_time)
        run[2] = run[2] or event.event_type in _TERMINAL
    ranked = sorted(
        (item for item in runs.items() if not item[1][2]),
        key=lambda item: (item[1][1], item[1][0], item[0]),
    )
    return {run_id for run_id, _ in ranked[-OPEN_RUNS_HELD:]}


def _open_folded_runs(runs: Iterable[RunFold]) -> set[str]:
    """``open_runs`` of runs folded whole (``runs`` in the fold's order)."""
    ended = [run.run_id for run in runs if run.end_time is None]
    return set(ended[-OPEN_RUNS_HELD:])


def runs_kept_whole(events: Iterable[RunEvent | JobEvent]) -> set[tuple[JobKey, str]]:
    """The runs a snapshot keeps whole: per job, its latest run, its latest completed one and
    the other completed runs of its parent run (``JobFold.latest_completed_group``).

    Facets play no part in this, so events read without them (``facets=False``) give the answer
    (a run's parent is read from the raw facet whichever way: ``Run.parent_run_id``).
    The runs are ranked as ``_fold_job`` ranks them (``run_rank``: by their last terminal
    event's time, else their last event's, then their first, then run id) without folding them:
    a run's state is that of its last terminal event in the fold's order, else of its last START
    or RUNNING (events tied on order have the same type), and its parent that of
    ``RunFold.parent_run_id``.
    """
    return _kept_of(_summaries(events))


_Summary = list[Any]
"""A run ranked without folding it: its first and last event times, its last terminal and last
progress events (time, rank), the parent it names (``_parent_key``), its map index
(``RunFold.map_index``), its Airflow DAG run (``RunFold.dag_run``) and whether it names a
dataset (``latest_naming_datasets``)."""


def _summaries(events: Iterable[RunEvent | JobEvent]) -> dict[tuple[str, str], dict[str, _Summary]]:
    """Each run of each job (namespace, name) summed up for ``runs_kept_whole``."""
    runs: dict[tuple[str, str], dict[str, _Summary]] = {}
    for event in events:
        if not isinstance(event, RunEvent):
            continue
        key = job_of(event)  # a JobKey per job, not per event
        moment, rank = event.event_time, _RANK[event.event_type]
        run = runs.setdefault(key, {}).get(event.run.run_id)
        if run is None:
            run = runs[key][event.run.run_id] = [
                moment,
                moment,
                None,
                None,
                None,
                None,
                None,
                False,
            ]
        if event.inputs or event.outputs:
            run[7] = True
        run[0], run[1] = min(run[0], moment), max(run[1], moment)
        slot = 2 if event.event_type in _TERMINAL else 3 if event.event_type in _PROGRESS else 0
        if slot and (run[slot] is None or run[slot] <= (moment, rank)):
            run[slot] = (moment, rank)
        if event.run.parent_run_id is not None:
            named = _parent_key(event)
            if run[4] is None or run[4] < named:
                run[4] = named
        index = event.run.map_index
        if index is not None and (run[5] is None or run[5] < index):
            run[5] = index
        named_run = event.run.dag_run
        if named_run is not None and (run[6] is None or run[6] < named_run):
            run[6] = named_run
    return runs


def _summed_rank(item: tuple[str, _Summary]) -> tuple[datetime, datetime, str]:
    """``run_rank`` of a run summed up: its last terminal event's time, else its last event's,
    then its first event's and its id."""
    run_id, summary = item
    ended = summary[2]
    return (ended[0] if ended is not None else summary[1], summary[0], run_id)


def _summed_completed(summary: _Summary) -> bool:
    decisive = summary[2] or summary[3]
    return decisive is not None and bool(decisive[1] == _RANK[EventType.COMPLETE])


def _summed_parent(summary: _Summary) -> str | None:
    """``_dag_run`` of a run summed up."""
    if summary[4] is None:
        return None
    return dag_run_key(summary[6]) if summary[6] is not None else str(summary[4][2])


def _kept_of(summaries: dict[tuple[str, str], dict[str, _Summary]]) -> set[tuple[JobKey, str]]:
    kept: set[tuple[JobKey, str]] = set()
    for names, by_id in summaries.items():
        job = JobKey(*names)
        ranked = sorted(by_id.items(), key=_summed_rank)
        kept.add((job, ranked[-1][0]))
        named = next((run_id for run_id, run in reversed(ranked) if run[7]), None)
        if named is not None:  # as ``_whole_runs`` keeps it
            kept.add((job, named))
        completed = [(run_id, run) for run_id, run in ranked if _summed_completed(run)]
        kept.update((job, run_id) for run_id in _summed_never_completed(ranked, completed))
        if not completed:
            continue
        latest_id, latest = completed[-1]
        parent = _summed_parent(latest)
        if parent is None:
            kept.add((job, latest_id))
            continue
        siblings = [(run_id, run) for run_id, run in completed if _summed_parent(run) == parent]
        kept.update((job, run_id) for run_id, _ in siblings)
        done = {run[5] for _, run in siblings}
        wanted = {  # as ``_group`` finds them: of instances that did not complete there
            run[5]
            for _, run in ranked
            if _summed_parent(run) == parent
            and not _summed_completed(run)
            and run[5] is not None
            and run[5] not in done
        }
        present = {run[5] for _, run in ranked if _summed_parent(run) == parent}
        wanted |= {  # and that have not run there yet (``_absent``)
            run[5]
            for _, run in completed
            if run[5] is not None
            and run[5] >= 0
            and _summed_parent(run) not in (None, parent)
            and run[5] not in present
        }
        if wanted:
            stand_ins = {
                run[5]: run_id
                for run_id, run in completed
                if run[5] in wanted and _summed_parent(run) != parent
            }
            kept.update((job, run_id) for run_id in stand_ins.values())
    return kept


def _summed_never_completed(
    ranked: list[tuple[str, _Summary]], completed: list[tuple[str, _Summary]]
) -> list[str]:
    """``never_completed_instances`` of runs summed up, by id, with ``every_absent``."""
    if len(ranked) < 2:
        return []
    parent = _summed_parent((completed or ranked)[-1][1])
    if parent is None:
        return []
    done = {run[5] for _, run in completed}
    there: dict[int, str] = {}
    latest: dict[int, tuple[str, _Summary]] = {}
    for run_id, run in ranked:  # the latest wins
        if run[5] is not None and run[5] not in done:
            latest[run[5]] = (run_id, run)
            if _summed_parent(run) == parent:
                there[run[5]] = run_id
    chosen = set(there.values())
    chosen.update(
        run_id
        for index, (run_id, run) in latest.items()
        if index >= 0 and _summed_parent(run) is not None
    )
    return sorted(chosen)


def _combine(earlier: JobFold, later: JobFold) -> JobFold:
    """A job that came in two groups (which ``FoldBuilder`` asks callers not to do): the group
    whose latest event is later wins per facet key, and the runs are put together. Close to the
    fold of both groups at once, and never an error."""
    first, second = sorted((earlier, later), key=lambda job: job.last_event_time)
    runs: dict[str, RunFold] = {run.run_id: run for run in first.runs}
    runs.update((run.run_id, run) for run in second.runs)
    return JobFold(
        key=second.key,
        facets=_sorted({**first.facets, **second.facets}),
        inputs=second.inputs or first.inputs,
        outputs=second.outputs or first.outputs,
        runs=sorted(runs.values(), key=run_rank),
        written=sorted({*first.written, *second.written}),
        first_event_time=min(first.first_event_time, second.first_event_time),
        last_event_time=second.last_event_time,
        design_producer=second.design_producer or first.design_producer,
    )


@dataclass(slots=True)
class FoldedJob:
    """One job folded on its own: what a snapshot keeps of it, and what its events say of their
    datasets (merged with other jobs' by ``FoldBuilder``). Small, and the same whenever the job's
    events are the same: a snapshot may keep it and skip reading the events next time."""

    job: JobFold
    datasets: dict[DatasetKey, DatasetMentions]
    runs_seen: frozenset[int] = frozenset()
    """``run_digest`` of every run folded, kept or not: an event of one of them cannot be added
    to the fold later (``extend_folded``), its other events being no longer in it."""
    held: frozenset[str] = frozenset()
    """Runs held whole besides those the fold keeps whole, because more of their events may come:
    runs still open (no terminal event yet) when the fold is kept for the next snapshot, so that
    a run that completes after a newer one started can still be added to it (a task whose runs
    overlap); runs going on into the next slice of a long history. ``FoldBuilder.add_folded``
    keeps of them what it keeps of any run."""
    parents: frozenset[int] = frozenset()
    """``run_digest`` of the parent run of every completed run folded, kept or not: a new group of
    completed runs (``JobFold.latest_completed_group``) with an older run of its own that the
    fold did not keep whole cannot be made by adding events (``extend_folded``)."""
    dropped_indexes: frozenset[int] = frozenset()
    """The map indexes of completed task instances the fold did not keep whole (``_whole_runs``):
    a new group whose unfinished instances call for a stand-in of one of them cannot be made by
    adding events (``extend_folded``)."""


def run_digest(run_id: str) -> int:
    """A 32-bit digest of a run id: a set of them tells whether a run may have been folded (a
    collision only costs a read of the job's events)."""
    return zlib.crc32(run_id.encode("utf-8", "surrogatepass"))


def extend_folded(
    kept: FoldedJob,
    events: Iterable[Event],
    retain: RunRetainer | None = None,
    *,
    hold: AbstractSet[str] = frozenset(),
    hold_open: bool = False,
) -> FoldedJob | None:
    """The fold of the job's events that ``kept`` folded and ``events``, its events received
    since, given ``kept``; ``None`` when that cannot be exact, and the job is read whole.

    Exact when every new event is later than every folded one (a strictly later ``eventTime``)
    and belongs to a run not folded yet or to a run the fold keeps whole (its latest, which goes
    on: its START folded, its COMPLETE new; or its latest completed and its group): the fold
    merges in time order, so the new events go on top of what is kept, and the other kept runs
    are already what ``retain`` keeps. An event that comes late, or of a run folded and dropped,
    is read whole; so is a job whose new latest completed group would take an older run the fold
    did not keep whole (``_whole_again``: a DAG run's instances completing while another's do).
    ``events`` are read with ``read_job_events(..., every_run_kept=True)``: which of their runs
    the fold keeps whole depends on older events too.

    The runs ``kept`` holds (``FoldedJob.held``) may take new events as the runs it keeps whole
    do. ``hold``: runs the new fold must hold whole, going on in events still to come (a long
    history added a slice of time at a time, ``fold.slices``); with ``hold_open``, its open
    runs too (a fold kept for the next snapshot).
    """
    old = kept.job
    keyed = _Order().keyed([e for e in events if isinstance(e, RunEvent | JobEvent)], _itself)
    ordered = [event for _, event in keyed]
    if not ordered:
        return kept
    if any(job_of(e) != (old.key.namespace, old.key.name) for e in ordered):
        return None
    if ordered[0].event_time <= old.last_event_time:
        return None
    runs: dict[str, list[RunEvent]] = {}
    for event in ordered:
        if isinstance(event, RunEvent):
            runs.setdefault(event.run.run_id, []).append(event)
    whole = _whole_runs(old.runs) | (kept.held & {run.run_id for run in old.runs})
    seen = {run_digest(run_id) for run_id in runs}
    if any(run_digest(run_id) in kept.runs_seen for run_id in runs if run_id not in whole):
        return None
    new = _fold_job(old.key, ordered)
    facets = dict(old.facets)
    for event in ordered:
        _merge(facets, event.job.facets, deletable=True)
    every = [
        _fold_run(old.key, run.run_id, runs[run.run_id], run) if run.run_id in runs else run
        for run in old.runs
    ]
    if any(
        run.completed and not later.completed for run, later in zip(old.runs, every, strict=True)
    ):
        return None  # the latest completed run no longer is: the one before it was dropped
    every += [run for run in new.runs if run.run_id not in whole]
    every.sort(key=run_rank)
    if not _whole_again(kept, whole, every):
        return None
    if hold_open:  # of the runs folded whole: those kept or held whole, and the new ones
        entire = whole | {run.run_id for run in new.runs}
        hold = set(hold) | _open_folded_runs(run for run in every if run.run_id in entire)
    has_designs = any(isinstance(e, JobEvent) and (e.inputs or e.outputs) for e in ordered)
    job = JobFold(
        key=old.key,
        facets=_sorted(facets),
        inputs=new.inputs if has_designs else old.inputs,
        outputs=new.outputs if has_designs else old.outputs,
        runs=every if retain is None else _kept_runs(every, retain, hold),
        written=sorted({*old.written, *new.written}),
        first_event_time=old.first_event_time,
        last_event_time=new.last_event_time,
        design_producer=new.design_producer or old.design_producer,
    )
    datasets = {
        key: DatasetMentions(dict(merge.mentions), merge.first, merge.last)
        for key, merge in kept.datasets.items()
    }
    for key, merge in _mentions(keyed).items():
        mine = datasets.get(key)
        if mine is None:
            datasets[key] = merge
        else:
            mine.absorb(merge)
    held = frozenset(hold) & {run.run_id for run in job.runs}
    parents = kept.parents | _completed_parents(every)
    dropped = kept.dropped_indexes
    if retain is not None:
        dropped |= _dropped_indexes(every, _whole_runs(every))
    return FoldedJob(job, datasets, kept.runs_seen | seen, held, parents, dropped)


def _whole_again(kept: FoldedJob, whole: AbstractSet[str], every: list[RunFold]) -> bool:
    """Whether the runs the extended fold keeps whole (``every``: the kept fold's runs with their
    new events, and the new runs) are all whole in it, as the fold of every event keeps them: no
    run the kept fold did not keep whole (``whole``: it has a part of it, or nothing) is in the
    new latest completed group. Its group is the kept one's (whose completed runs are all kept
    whole), or one that no completed run of the kept fold named (``FoldedJob.parents``)."""
    folded = {run.run_id for run in kept.job.runs}
    if any(run_id in folded and run_id not in whole for run_id in _whole_runs(every)):
        return False
    group, parent = _latest_group(every)
    wanted = {run.map_index for run in _unfinished(every, parent, group)} | _absent(every, parent)
    if parent is not None:  # a let-go index has no run left to be found absent by (a review)
        present = {run.map_index for run in every if _dag_run(run) == parent}
        wanted |= {index for index in kept.dropped_indexes if index >= 0 and index not in present}
    if wanted & kept.dropped_indexes:
        return False  # the stand-in it calls for may be a run the fold let go
    if parent is None or run_digest(parent) not in kept.parents:
        return True
    before = _group(kept.job.runs)
    return bool(before) and _dag_run(before[-1]) == parent


def fold_jobs(
    events: Iterable[Event],
    retain: RunRetainer | None = None,
    *,
    hold: AbstractSet[str] = frozenset(),
    hold_open: bool = False,
) -> list[FoldedJob]:
    """Fold the RunEvents and JobEvents of ``events`` job by job (see ``FoldBuilder``); the runs
    of ``hold`` held whole (they go on in events still to come: ``fold.slices``), and with
    ``hold_open`` each job's open runs (a fold kept for the next snapshot: ``FoldedJob.held``)."""
    by_job: dict[tuple[str, str], list[RunEvent | JobEvent]] = {}
    for event in events:
        if isinstance(event, RunEvent | JobEvent):
            by_job.setdefault(job_of(event), []).append(event)
    order = _Order()
    folded: list[FoldedJob] = []
    for names, job_events in by_job.items():
        key = JobKey(*names)
        keyed = order.keyed(job_events, _itself)
        ordered = [event for _, event in keyed]
        run_ids = {event.run.run_id for event in ordered if isinstance(event, RunEvent)}
        # A job's only run is its latest, kept whole: the same as folding every run, with no
        # ranking (most jobs of a first snapshot have one run). Digests per run, not per event.
        summaries = None if retain is None or len(run_ids) < 2 else _summaries(ordered)
        whole = None if summaries is None else _kept_of(summaries)
        held = set(hold) & run_ids
        if hold_open and len(run_ids) > 1:  # a job's only run is its latest, kept whole
            held |= open_runs(ordered)
        if whole is not None and held:
            whole |= {(key, run_id) for run_id in held}
        job = _fold_job(key, ordered, whole)
        if summaries is None:  # every run folded
            parents = _completed_parents(job.runs)
        else:
            parents = frozenset(
                run_digest(parent)
                for run in summaries.get(names, {}).values()
                if _summed_completed(run) and (parent := _summed_parent(run)) is not None
            )
        dropped: frozenset[int] = frozenset()
        # With ``retain``, a job's only run is its latest, kept whole: nothing dropped, and its
        # runs as folded. Else of every run, those left unfolded too (their events skimmed).
        if summaries is not None and retain is not None:
            whole_now = _whole_runs(job.runs)
            latest: dict[int, str] = {}
            for run_id, run in sorted(summaries.get(names, {}).items(), key=_summed_rank):
                if _summed_completed(run) and run[5] is not None:
                    latest[run[5]] = run_id
            dropped = frozenset(i for i, run_id in latest.items() if run_id not in whole_now)
            job.runs = _kept_runs(job.runs, retain, held, whole_now)
        seen = frozenset(map(run_digest, run_ids))
        folded.append(FoldedJob(job, _mentions(keyed), seen, frozenset(held), parents, dropped))
    return folded


def _mentions(
    keyed: list[tuple[_SortKey, RunEvent | JobEvent]],
) -> dict[DatasetKey, DatasetMentions]:
    """What one job's events, in order with their sort keys, say of their datasets."""
    mentioned: dict[tuple[str, str], DatasetMentions] = {}
    for key, event in keyed:
        if not event.inputs and not event.outputs:
            continue
        # Events of two jobs never tie on the sort key (it holds the job): no content.
        position = (key, "")
        for read in event.inputs:
            names = dataset_names(read.namespace, read.name, read.facets)
            _mention(mentioned, names, position, read.facets)
        for output in event.outputs:
            names = dataset_names(output.namespace, output.name, output.facets)
            _mention(mentioned, names, position, _as_written(output.facets))
    return {DatasetKey(*names): merge for names, merge in mentioned.items()}


def _mention(
    into: dict[K, DatasetMentions],
    key: K,
    order: tuple[_SortKey, str],
    facets: Mapping[str, BaseFacet],
) -> None:
    merge = into.get(key)
    if merge is None:
        moment = order[0][0]
        merge = into[key] = DatasetMentions({}, moment, moment)
    merge.add(order, facets)


class FoldBuilder:
    """Folds events group by group; ``result()`` is the ``Fold`` of every event added.

    Every event of a job should come in one ``add`` call: that is what lets the builder drop a
    job's events once they are folded (a job that comes again is combined, close to exactly).
    DatasetEvents may come in any number of calls. With ``retain``, a job keeps only the runs the
    mapping passes read (its latest, its latest completed, and what ``retain`` returns for the
    others); without it, every run, as ``fold`` does.
    """

    def __init__(self, retain: RunRetainer | None = None) -> None:
        self._retain = retain
        self._jobs: dict[JobKey, JobFold] = {}
        self._datasets: dict[DatasetKey, DatasetMentions] = {}

    def add(self, events: Iterable[Event]) -> None:
        """Fold a group of events: whole jobs, and DatasetEvents. Non-events are skipped."""
        events = list(events)
        for folded in fold_jobs(events, self._retain):
            self.add_folded(folded)
        designs = [event for event in events if isinstance(event, DatasetEvent)]
        order = _Order()
        for sort_key, design in order.keyed(designs, _itself):
            # DatasetEvents tie with each other: the content breaks the tie, in every group.
            position = (sort_key, order.content(design))
            dataset = design.dataset
            key = DatasetKey(*dataset_names(dataset.namespace, dataset.name, dataset.facets))
            _mention(self._datasets, key, position, _as_design(design.dataset.facets))

    def add_folded(self, folded: FoldedJob) -> None:
        """Add a job folded on its own (by ``fold_jobs``, or kept from an earlier snapshot); of
        the runs it holds (``FoldedJob.held``) what it keeps of any run."""
        job = folded.job
        if folded.held and self._retain is not None:
            job = replace(job, runs=_kept_runs(job.runs, self._retain))
        earlier = self._jobs.get(job.key)
        if earlier is not None:
            job = _combine(earlier, job)
            if self._retain is not None:
                job.runs = _kept_runs(job.runs, self._retain)
        self._jobs[job.key] = job
        for key, merge in folded.datasets.items():
            mine = self._datasets.get(key)
            if mine is None:
                self._datasets[key] = DatasetMentions(dict(merge.mentions), merge.first, merge.last)
            else:
                mine.absorb(merge)

    def result(self) -> Fold:
        return Fold(
            jobs=[self._jobs[key] for key in sorted(self._jobs)],
            datasets=[self._datasets[key].fold(key) for key in sorted(self._datasets)],
        )


def fold(events: Iterable[Event]) -> Fold:
    """Fold a set of events; the same set always gives the same ``Fold``. Non-events are skipped."""
    builder = FoldBuilder()
    builder.add(events)
    return builder.result()
