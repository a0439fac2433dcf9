"""A RunEvent's envelope read from its JSON text without decoding its facets.

``read_envelope`` decodes the text into ``msgspec`` structs that keep each facet as its raw JSON:
the envelope (type, time, run, job, datasets) and the keys of its facets, the same as
``envelope_of`` (an event already decoded) over ``parse_event(decode_json(text),
facets=False)``, or ``None`` whenever it cannot be sure to (an escape that may decode to a string
no store can hold, a text ``msgspec`` refuses, not a RunEvent, an invalid envelope, io facets
named ``input_facets``); the caller then reads the event the usual way, which says why.
``read_whole`` reads the facets of such an envelope: the same event and issues as
``parse_event`` of its text, each facet with the JSON text it was read from (which a kept fold
writes as it is); the envelope is spent then (its event is given its facets in place).

Why, and what it saves: docs/performance.md#an-events-envelope-without-its-facets-eventsenvelopepy
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, TypeGuard

import msgspec
from msgspec import UNSET, Raw, Struct, UnsetType
from pydantic import BaseModel

from .base import BaseFacet, FacetIssues, FacetLocation
from .core import ENVELOPE_ONLY, RunEvent, parent_run_of, raw_dag_run, raw_map_index
from .parse import ParsedEvent, decode_json, suspect_text
from .registry import FACETS, SCHEMAS, facet_from_json, filed_keys, read_facets, schema_name

__all__ = [
    "Container",
    "Envelope",
    "FacetText",
    "container_not_an_object",
    "envelope_of",
    "io_facets_by_field_name",
    "raw_containers",
    "read_envelope",
    "read_whole",
]

_RawFacets = dict[str, Raw] | None | UnsetType


class _Dataset(Struct):
    namespace: Any = UNSET
    name: Any = UNSET
    facets: _RawFacets = UNSET
    inputFacets: _RawFacets = UNSET  # noqa: N815 (the wire's names)
    outputFacets: _RawFacets = UNSET  # noqa: N815
    input_facets: Any = UNSET  # the model's names: then left to the usual reading
    output_facets: Any = UNSET


class _Run(Struct):
    runId: Any = UNSET  # noqa: N815
    run_id: Any = UNSET
    facets: _RawFacets = UNSET


class _Job(Struct):
    namespace: Any = UNSET
    name: Any = UNSET
    facets: _RawFacets = UNSET


class _RunEvent(Struct):
    """The fields ``RunEvent`` reads, under each name it accepts (alias or field name)."""

    eventType: Any = UNSET  # noqa: N815
    event_type: Any = UNSET
    eventTime: Any = UNSET  # noqa: N815
    event_time: Any = UNSET
    producer: Any = UNSET
    schemaURL: Any = UNSET  # noqa: N815
    schema_url: Any = UNSET
    run: _Run | UnsetType | None = UNSET
    job: _Job | UnsetType | None = UNSET
    inputs: list[_Dataset] | UnsetType | None = UNSET
    outputs: list[_Dataset] | UnsetType | None = UNSET


_DECODER = msgspec.json.Decoder(_RunEvent)


class _Parent(Struct):
    """The parent run facet, of which only ``run`` and ``root`` are read
    (``core.raw_parent_run_id``)."""

    run: Any = None
    root: Any = None


_PARENT_DECODER = msgspec.json.Decoder(_Parent)
"""Decodes ``run`` and skips the rest of the facet (a JSON object)."""


class _Airflow(Struct):
    """The ``airflow`` run facet, of which only ``taskInstance`` and ``dagRun`` are read
    (``core.raw_map_index``, ``core.raw_dag_run``)."""

    taskInstance: Any = None  # noqa: N815 (the wire's name)
    dagRun: Any = None  # noqa: N815


_AIRFLOW_DECODER = msgspec.json.Decoder(_Airflow)

Container = tuple[str, str, str]
"""A facet container of an event: its kind (``run``, ``job``, a side ``inputs`` or ``outputs``
for dataset facets, ``inputFacets`` or ``outputFacets``) and the namespace and name of its
dataset (empty for ``run`` and ``job``)."""


class Envelope(Struct, frozen=True):
    """A RunEvent read without its facets (every facet map empty), and the keys its facet
    containers file facets under (``filed_keys``), container by container.

    A frozen ``Struct`` rather than a frozen dataclass: made once per event, which a frozen
    dataclass's ``__init__`` (``object.__setattr__`` per field) made cost a twentieth of
    reading an envelope."""

    event: RunEvent
    keys: tuple[tuple[Container, FacetLocation, AbstractSet[str]], ...]
    raw: _RunEvent | None = None
    """What ``read_envelope`` decoded, facets as raw JSON (``None``: from ``envelope_of``)."""
    decoded: Mapping[str, Any] | None = None
    """The event decoded, for an envelope of ``envelope_of``."""

    def renames(self) -> bool:
        """Whether the event sends a dataset a ``lifecycleStateChange`` ``RENAME``: the one
        facet whose value, not its key, says where a fold keeps it (read from its JSON)."""
        # under any key: one filed as ``lifecycleStateChange`` by its ``_schemaURL`` counts
        if self.raw is not None:
            return any(
                _renaming_text(text)
                for items in (self.raw.inputs, self.raw.outputs)
                if isinstance(items, list)
                for item in items
                if isinstance(item.facets, dict)
                for text in item.facets.values()
            )
        data = self.decoded or {}
        return any(
            _renaming(facet)
            for side in ("inputs", "outputs")
            if isinstance(data.get(side), list)
            for item in data[side]
            if isinstance(item, dict) and isinstance(item.get("facets"), dict)
            for facet in item["facets"].values()
        )


_LIFECYCLE = "lifecycleStateChange"


def _renaming_text(text: Raw) -> bool:
    raw = bytes(text)
    if b"rename" not in raw.lower():  # most facets: not decoded
        return False
    try:
        return _renaming(_FACET_DECODER.decode(raw))
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return False  # malformed: no RENAME for the fold either


def _renaming(facet: Any) -> bool:
    """Whether a decoded ``lifecycleStateChange`` facet is a ``RENAME``, in any case."""
    state = facet.get(_LIFECYCLE) if isinstance(facet, dict) else None
    return isinstance(state, str) and state.strip().upper() == "RENAME"


def read_envelope(text: str | bytes) -> Envelope | None:
    """The envelope of the RunEvent ``text`` holds, or ``None`` (see the module)."""
    if suspect_text(text):
        return None
    try:
        raw = _DECODER.decode(text)
    except (msgspec.MsgspecError, ValueError, RecursionError):  # the usual reading says why
        return None
    if not isinstance(raw.run, _Run) or not isinstance(raw.job, _Job):
        return None
    data = _present(raw, ("eventType", "event_type", "eventTime", "event_time"))
    data.update(_present(raw, ("producer", "schemaURL", "schema_url")))
    data["run"] = _present(raw.run, ("runId", "run_id"))
    parent_run = map_index = dag_run = None
    run_facets = raw.run.facets
    if type(run_facets) is dict:
        try:
            # The run's parent (``Run.parent_run_id``), read from the parent facet decoded
            # alone, as a whole reading reads it from the facets decoded: the facets themselves
            # stay skipped.
            found = run_facets.get("parent")
            parent = None if found is None else _head(_PARENT_DECODER, found)
            if parent is not None:
                parent_run = parent_run_of(parent.run, parent.root)
            elif found is not None:  # not an object: no parent, as the whole reading finds
                decode_json(bytes(found))  # (or the error it finds)
            # Which instance of its task the run is (``Run.map_index``), and of which Airflow
            # DAG run (``Run.dag_run``), read the same way.
            found = run_facets.get("airflow")
            airflow = None if found is None else _head(_AIRFLOW_DECODER, found)
            if airflow is not None:
                map_index = raw_map_index({"airflow": {"taskInstance": airflow.taskInstance}})
                dag_run = raw_dag_run({"airflow": {"dagRun": airflow.dagRun}})
        except (msgspec.MsgspecError, ValueError, RecursionError):  # the usual reading says why
            return None
    data["job"] = _present(raw.job, ("namespace", "name"))
    for side in ("inputs", "outputs"):
        items = getattr(raw, side)
        if items is not UNSET:
            if items and any(_by_field_name(item) for item in items):
                return None
            data[side] = None if items is None else [_present(i, _NAMES) for i in items]
    try:
        event = _VALIDATE_RUN_EVENT(data, context=ENVELOPE_ONLY)
    except ValueError:  # pydantic's ValidationError: the usual reading says why
        return None
    # ``name_parent(event, {"run": {"facets": {"parent": parent}}})``, without its walk of the
    # decoded event (a tenth of reading an envelope): only the parent facet was decoded here.
    event.run.__dict__["parent_run_id"] = parent_run  # as name_parent sets it: ours, unvalidated
    event.run.__dict__["map_index"] = map_index
    event.run.__dict__["dag_run"] = dag_run
    return Envelope(event, tuple(_keys(raw)), raw)


_NAMES = ("namespace", "name")


def _head(decoder: msgspec.json.Decoder[Any], text: Raw) -> Any:
    """What ``decoder`` (of a ``Struct``) reads of a facet's JSON, decoded from the raw JSON
    itself (a copy as bytes costs as much as the decoding); ``None`` when it is not an object.
    Raises the decoder's error for an object it refuses (a number out of range)."""
    try:
        return decoder.decode(text)
    except msgspec.ValidationError:  # mostly: not an object
        if bytes(text).lstrip()[:1] == b"{":
            raise
        return None


_VALIDATE_RUN_EVENT = RunEvent.__pydantic_validator__.validate_python
"""``RunEvent.model_validate``: its method (and any attribute of a pydantic model's class) is
looked up through the metaclass's ``__getattr__`` hook, a tenth of validating an envelope."""


def _by_field_name(item: _Dataset) -> bool:
    """io facets named as the model names them (``input_facets``), which it reads too: which
    container the model takes when both come is its own call, so the usual reading reads it."""
    return item.input_facets is not UNSET or item.output_facets is not UNSET


def _present(struct: Struct, names: tuple[str, ...]) -> dict[str, Any]:
    """The fields of ``struct`` the text holds, by their names on the wire."""
    present: dict[str, Any] = {}
    for name in names:  # a loop: two comprehensions cost twice as much (once per event)
        value = getattr(struct, name)
        if value is not UNSET:
            present[name] = value
    return present


def _keys(raw: _RunEvent) -> list[tuple[Container, FacetLocation, AbstractSet[str]]]:
    """Each facet container with the keys it files facets under, named as a reader of the
    decoded event names them (a dataset's missing namespace or name is ``"None"``)."""
    assert isinstance(raw.run, _Run) and isinstance(raw.job, _Job)
    keys = [
        (_RUN, FacetLocation.RUN, _filed(raw.run.facets, FacetLocation.RUN)),
        (_JOB, FacetLocation.JOB, _filed(raw.job.facets, FacetLocation.JOB)),
    ]
    for item in raw.inputs or ():
        namespace, name = str(_value(item.namespace)), str(_value(item.name))
        dataset = _filed(item.facets, FacetLocation.DATASET)
        keys.append((("inputs", namespace, name), FacetLocation.DATASET, dataset))
        own = _filed(item.inputFacets, FacetLocation.INPUT)
        keys.append((("inputFacets", namespace, name), FacetLocation.INPUT, own))
    for item in raw.outputs or ():
        namespace, name = str(_value(item.namespace)), str(_value(item.name))
        dataset = _filed(item.facets, FacetLocation.DATASET)
        keys.append((("outputs", namespace, name), FacetLocation.DATASET, dataset))
        own = _filed(item.outputFacets, FacetLocation.OUTPUT)
        keys.append((("outputFacets", namespace, name), FacetLocation.OUTPUT, own))
    return keys


_RUN: Container = ("run", "", "")
_JOB: Container = ("job", "", "")


def _is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """A JSON object: a dict, checked first (the abstract check costs more and is rare)."""
    return type(value) is dict or isinstance(value, Mapping)


def raw_containers(data: Mapping[str, Any]) -> Iterator[tuple[Container, FacetLocation, Any]]:
    """Every facet container of a decoded RunEvent, with its location and its raw facets, named
    as ``read_envelope`` names them."""
    run, job = data.get("run"), data.get("job")
    yield ("run", "", ""), FacetLocation.RUN, run.get("facets") if _is_map(run) else None
    yield ("job", "", ""), FacetLocation.JOB, job.get("facets") if _is_map(job) else None
    for side, io, location in _SIDES:
        items = data.get(side)
        for item in items if isinstance(items, list) else ():
            if _is_map(item):
                namespace, name = str(item.get("namespace")), str(item.get("name"))
                yield (side, namespace, name), FacetLocation.DATASET, item.get("facets")
                yield (io, namespace, name), location, item.get(io)


_SIDES = (
    ("inputs", "inputFacets", FacetLocation.INPUT),
    ("outputs", "outputFacets", FacetLocation.OUTPUT),
)


def io_facets_by_field_name(data: Mapping[str, Any]) -> bool:
    """Whether a decoded RunEvent names a dataset's input or output facets by the model's field
    name (``input_facets``), which the model reads too: its containers are then not the ones
    ``raw_containers`` names, so the event is read whole."""
    for side in ("inputs", "outputs"):
        items = data.get(side)
        for item in items if isinstance(items, list) else ():
            if _is_map(item) and ("input_facets" in item or "output_facets" in item):
                return True
    return False


def container_not_an_object(data: Mapping[str, Any]) -> bool:
    """Whether a decoded RunEvent has a facet container that is neither an object nor ``null``
    (``"facets": []``): reading its facets reports it malformed, and it files no key, so the
    event is read whole for its issue to be reported (``read_envelope`` refuses such a text)."""
    return any(raw is not None and not _is_map(raw) for _, _, raw in raw_containers(data))


def envelope_of(event: RunEvent, data: Mapping[str, Any]) -> Envelope:
    """The envelope of a decoded RunEvent, ``event`` being its read without facets."""
    keys = tuple(
        (container, location, filed_keys(raw, location))
        for container, location, raw in raw_containers(data)
    )
    return Envelope(event, keys, decoded=data)


def _value(value: Any) -> Any:
    return None if value is UNSET else value


_NOTHING: AbstractSet[str] = frozenset()
_KNOWN = {location: frozenset(models) for location, models in FACETS.items()}
"""The keys of each location's models, as a set (a view of a mapping's keys is made per call)."""


def _filed(facets: _RawFacets, location: FacetLocation) -> AbstractSet[str]:
    """``filed_keys`` of a container whose facets are still raw JSON: decoded only in the rare
    case that filing needs them (a key nobody knows, whose ``_schemaURL`` may name one)."""
    if not facets or type(facets) is not dict:
        return _NOTHING
    if facets.keys() <= _KNOWN[location]:
        return facets.keys()
    known = _KNOWN[location]
    # A key nobody knows is filed by its facet's _schemaURL (``registry._model_for``): only that
    # and ``_deleted`` are decoded of it, the rest skipped; every other key is filed as it is
    # (a facet that is not an object is malformed under its own key).
    filed: set[str] = set()
    schemas = SCHEMAS[location]
    for key, raw in facets.items():
        if key in known:
            filed.add(key)
            continue
        try:  # from the raw JSON itself: a copy as bytes costs as much as the decoding
            head = _HEAD_DECODER.decode(raw)
        except msgspec.ValidationError:  # mostly not an object (or a number out of range)
            if bytes(raw).lstrip()[:1] != b"{":
                filed.add(key)
                continue
            return _filed_decoded(facets, location)
        except (msgspec.MsgspecError, ValueError, RecursionError):
            return _filed_decoded(facets, location)
        url = head.schema_url
        model = schemas.get(schema_name(url)) if isinstance(url, str) else None
        if head.deleted is True or model is None or model.KEY in facets:
            filed.add(key)
        else:
            filed.add(model.KEY)
    return filed


class _FacetHead(Struct):
    """What filing a facet under an unknown key reads of it (``registry._model_for``)."""

    schema_url: Any = msgspec.field(default=None, name="_schemaURL")
    deleted: Any = msgspec.field(default=None, name="_deleted")


_HEAD_DECODER = msgspec.json.Decoder(_FacetHead)


def _filed_decoded(facets: dict[str, Raw], location: FacetLocation) -> AbstractSet[str]:
    """``_filed`` of facets decoded whole: for a facet ``msgspec`` refuses to decode as it is."""
    # decode_json: what msgspec refuses (a number out of range) json.loads reads, as a full read
    decoded: Mapping[str, Any] = {key: decode_json(bytes(raw)) for key, raw in facets.items()}
    return filed_keys(decoded, location)


FacetText = tuple[BaseFacet, Raw]
"""A facet read whole, with the JSON text of the object it was read from."""


def read_whole(envelope: Envelope) -> tuple[ParsedEvent, list[FacetText]] | None:
    """The event ``envelope`` was read from, with its facets (``parse_event`` of its text), and
    each facet filed under its own key with its JSON text; ``None`` when the envelope was not
    read from text, or a facet's JSON is one that ``msgspec`` refuses to decode (a number out of
    range): the caller then reads the text the usual way.

    Facet containers are read in the order ``parse_event`` validates them (job, run, then each
    dataset), so issues come in the same order. The envelope's event is the one returned, its
    facets set in place: the envelope is spent (see the module)."""
    raw = envelope.raw
    if raw is None:
        return None
    event = envelope.event
    assert isinstance(raw.run, _Run) and isinstance(raw.job, _Job)
    issues = FacetIssues()
    texts: list[FacetText] = []
    read: list[tuple[BaseModel, dict[str, dict[str, BaseFacet]]]] = []
    try:
        job = _read(raw.job.facets, FacetLocation.JOB, issues, event.job.ref, texts)
        run = _read(raw.run.facets, FacetLocation.RUN, issues, "", texts)
        read += [(event.job, {"facets": job}), (event.run, {"facets": run})]
        for items, found, io, location in (
            (event.inputs, raw.inputs, "input_facets", FacetLocation.INPUT),
            (event.outputs, raw.outputs, "output_facets", FacetLocation.OUTPUT),
        ):
            for item, own in zip(items, found or (), strict=True):
                io_raw = own.inputFacets if location is FacetLocation.INPUT else own.outputFacets
                facets = _read(own.facets, FacetLocation.DATASET, issues, item.ref, texts)
                read.append(
                    (item, {"facets": facets, io: _read(io_raw, location, issues, item.ref, texts)})
                )
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return None
    for model, fields in read:  # as ``model_copy(update=fields)`` sets them, without a copy
        model.__dict__.update(fields)
        model.__pydantic_fields_set__.update(fields)
    if issues.malformed:
        issues.name_unnamed(event.job.ref)
    return ParsedEvent(event, None, tuple(issues.malformed), tuple(issues.unknown)), texts


_FACET_DECODER = msgspec.json.Decoder()


def _read(
    facets: _RawFacets,
    location: FacetLocation,
    issues: FacetIssues,
    where: str,
    texts: list[FacetText],
) -> dict[str, BaseFacet]:
    """One container read as ``read_facets`` reads it decoded; each facet found under its own
    key is added to ``texts`` with that key's JSON (one filed under another key is not)."""
    if not facets or type(facets) is not dict:
        return {}
    known = FACETS[location]
    unknown: dict[str, BaseFacet] = {}
    if not facets.keys() <= _KNOWN[location]:
        unknown = _unknown_kept(facets, known, location)
        if len(unknown) + len(facets.keys() & _KNOWN[location]) < len(facets):
            return _read_decoded(facets, location, issues, where, texts)
    read: dict[str, BaseFacet] = {}
    for key, text in facets.items():
        found = unknown.get(key)
        if found is not None:  # a facet nobody knows, kept as it came (``read_facets``)
            issues.unknown.append(key)
            read[key] = found
            texts.append((found, text))
            continue
        found = facet_from_json(known[key], bytes(text))
        if found is None:  # not an object, a deletion, or malformed: as read_facets reads it
            found = read_facets({key: _FACET_DECODER.decode(text)}, location, issues, where).get(
                key
            )
        if found is not None:
            read[key] = found
            texts.append((found, text))
    return read


def _unknown_kept(
    facets: dict[str, Raw], known: Mapping[str, type[BaseFacet]], location: FacetLocation
) -> dict[str, BaseFacet]:
    """The facets under keys nobody knows that ``read_facets`` keeps under their own key as
    plain ``BaseFacet``s (an object, no deletion, no ``_schemaURL`` naming a known facet),
    validated from their JSON (``facet_from_json``: a text that comes again, a producer's
    version facet on every event, is read once). Any other one is left out: the caller then
    reads the container decoded, as ``read_facets`` files it."""
    kept: dict[str, BaseFacet] = {}
    schemas = SCHEMAS[location]
    for key, text in facets.items():
        if key in known:
            continue
        facet = facet_from_json(BaseFacet, bytes(text))
        if facet is None:
            break
        url = facet.schema_url
        if url is not None and schemas.get(schema_name(url)) is not None:
            break  # filed by its _schemaURL
        if not _finite(facet.__pydantic_extra__):
            break  # a number out of range, which msgspec refuses: the usual reading reads it
        kept[key] = facet
    return kept


def _finite(value: Any) -> bool:
    """Whether no float in ``value`` (decoded JSON) is infinite: JSON has no infinity, but
    pydantic reads a number out of range (``1e400``) as one where ``msgspec`` refuses it."""
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    if kind is dict:
        return all(_finite(item) for item in value.values())
    if kind is list:
        return all(_finite(item) for item in value)
    return True


def _read_decoded(
    facets: dict[str, Raw],
    location: FacetLocation,
    issues: FacetIssues,
    where: str,
    texts: list[FacetText],
) -> dict[str, BaseFacet]:
    decoded = {key: _FACET_DECODER.decode(text) for key, text in facets.items()}
    read = read_facets(decoded, location, issues, where)
    for key, facet in read.items():
        text = facets.get(key)
        if text is not None:
            texts.append((facet, text))
    return read
