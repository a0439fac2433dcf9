"""``airflow-blindata plan``: where each OpenLineage object will land, before any sync.

Reads event files (or the event store, ``plan_store``: as the next snapshot maps it, keeping
nothing), a job definition and optionally the Systems Blindata holds (a JSON list in the wire
format of ``GET /api/v1/systems``); the command renders the plan as JSON or as readable tables
(``plans.render``).

Event files are read the way a snapshot reads the store: one job at a time. A first pass notes
where each job's lines are (JSON lines files), a second reads them job by job (a job with a long
history a slice of time at a time), so that a plan of a long history needs the memory of its
catalog, not of its history.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import IO, Any

import msgspec
from msgspec import UNSET, Struct, UnsetType
from pydantic import TypeAdapter

from airflow_blindata.definition import JobDefinition
from airflow_blindata.events.core import EventTime
from airflow_blindata.mapper.build import plan_of_fold
from airflow_blindata.mapper.fold import FoldBuilder
from airflow_blindata.mapper.fold.reading import read_job_events
from airflow_blindata.mapper.fold.slices import fold_in_slices
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.quality import quality_retainer
from airflow_blindata.mapper.report import Report
from airflow_blindata.mapper.systems import KnownSystem
from airflow_blindata.plans import store as stored
from airflow_blindata.plans.eventfiles import BOM, read_event_file, read_line
from airflow_blindata.store.base import TimeSlice, ordered_slices, time_slices

__all__ = [
    "LongHistory",
    "event_files_groups",
    "load_known_systems",
    "plan_files",
    "plan_store",
]

_LOOSE_GROUP = 5_000
"""Events that belong to no job (DatasetEvents, unreadable lines) are mapped this many at once."""


def load_known_systems(path: str | Path) -> list[KnownSystem]:
    """Systems from a JSON list (or a Spring page) of Blindata System objects."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict) and "content" in data:
        data = data["content"]
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of Systems")
    systems = []
    for index, item in enumerate(data):
        if not isinstance(item, dict) or not item.get("name") or not item.get("uuid"):
            raise ValueError(f"{path}: Systems[{index}] needs a name and a uuid")
        properties = tuple(
            (str(p["name"]), str(p["value"])) for p in item.get("additionalProperties") or ()
        )
        systems.append(KnownSystem(str(item["name"]), str(item["uuid"]), properties))
    return systems


def plan_files(
    event_files: Iterable[str | Path],
    definition: JobDefinition,
    known_systems: Sequence[KnownSystem] = (),
) -> CatalogPlan:
    """The plan of the events in ``event_files``, read one job at a time, a long history a
    slice of time at a time (as a snapshot reads the store: ``mapper.fold.slices``)."""
    with stored.collector_paused():  # as a snapshot maps the store: a sixth of the time
        return _plan_files(event_files, definition, known_systems)


def _plan_files(
    event_files: Iterable[str | Path],
    definition: JobDefinition,
    known_systems: Sequence[KnownSystem],
) -> CatalogPlan:
    retain = quality_retainer(definition)
    quality = definition.quality.enabled
    report = Report()
    builder = FoldBuilder(retain=retain)
    pending: list[Any] = []  # whole jobs of few events, read and folded together

    def flush() -> None:
        if pending:
            builder.add(read_job_events(pending, report, quality=quality))
            pending.clear()

    for group in event_files_groups(event_files):
        if isinstance(group, LongHistory):
            flush()  # what is read is reported in the order of the jobs
            folded = fold_in_slices(
                group.slices(stored.SLICE_EVENTS),
                report,
                retain=retain,
                quality=quality,
                newest_first=partial(group.slices, stored.SLICE_EVENTS, newest_first=True),
            )
            if folded is not None:
                builder.add_folded(folded)
                report.count("jobsReadInSlices")
                continue
            group = list(group.events())
        pending.extend(group)
        if len(pending) >= _BATCH_EVENTS:
            flush()
    flush()
    return plan_of_fold(builder.result(), report, definition, known_systems)


_BATCH_EVENTS = 100
"""Jobs are read and folded together until they hold this many events. The reader and the
fold take any number of whole jobs at once (``build`` gives them every event), and read them
as they read each alone; a job of a dbt run has two events, and each call's own costs (its
sort, its maps, its counts) were a sixth of planning dbt's events one job at a time."""


@dataclass(frozen=True)
class LongHistory:
    """A job with more than ``SLICE_EVENTS`` lines in JSON lines files: where they are, with
    the event time (``None``: none it can be read by) and the run each line says."""

    lines: list[tuple[int, int, datetime | None, str | None]]
    read: Callable[[list[tuple[int, int]]], Iterator[Any]]

    def slices(self, size: int, *, newest_first: bool = False) -> Iterator[TimeSlice[Any]]:
        """Its events in slices of time (``store.base.time_slices``), read a slice at a time;
        from the newest back with ``newest_first``."""
        spots = {index: (number, offset) for index, (number, offset, *_) in enumerate(self.lines)}
        listing = [(index, time, run) for index, (_, _, time, run) in enumerate(self.lines)]
        for indexes, going_on in ordered_slices(time_slices(listing, size), newest_first):
            yield TimeSlice(list(self.read([spots[index] for index in indexes])), going_on)

    def events(self) -> Iterator[Any]:
        return self.read([(number, offset) for number, offset, *_ in self.lines])


def _run_of(value: Any) -> str | None:
    run = value.get("run") if isinstance(value, dict) else None
    run_id = run.get("runId") if isinstance(run, dict) else None
    return run_id if isinstance(run_id, str) else None


def _time_of(value: Any) -> datetime | None:
    """A line's event time as the event model reads it (``EventTime``), in UTC; ``None`` when
    it has none the model reads, or none in UTC's range (year 1 ahead of it, 9999 behind)."""
    text = value.get("eventTime") if isinstance(value, dict) else None
    try:
        return _EVENT_TIME.validate_python(text).astimezone(UTC)
    except (ValueError, OverflowError):
        return None


_EVENT_TIME: TypeAdapter[datetime] = TypeAdapter(EventTime)


class _SpotRun(Struct):
    runId: Any = None  # noqa: N815 (the wire's names)


class _SpotJob(Struct):
    namespace: Any = None
    name: Any = None


class _Spot(Struct):
    """What the first pass over a JSON lines file reads of a line: its job, time and run; the
    rest of the line is skipped, not decoded (``json.loads`` of every line was most of it)."""

    eventTime: Any = None  # noqa: N815
    run: _SpotRun | UnsetType | None = UNSET
    job: _SpotJob | UnsetType | None = UNSET


_SPOT = msgspec.json.Decoder(_Spot)
_BOM = b"\xef\xbb\xbf"


def _spot_of(line: bytes) -> tuple[tuple[str, str] | None, Any] | None:
    """A line's job (``_job_of``) and the object its time and run are read from, read by the
    cheap decoder; ``None`` when it cannot tell as ``json.loads`` would (a line not UTF-8, or
    one it refuses: the line is then read with ``json.loads``)."""
    if line.startswith(_BOM):
        return None
    try:
        line.decode("utf-8")
        spot = _SPOT.decode(line)
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return None
    job = spot.job
    if not isinstance(job, _SpotJob):
        return None
    namespace, name = job.namespace, job.name
    if not (isinstance(namespace, str) and isinstance(name, str)):
        return None
    run = spot.run
    value = {"eventTime": spot.eventTime}
    if isinstance(run, _SpotRun):
        value["run"] = {"runId": run.runId}
    return (namespace, name), value


def _spotted(line: bytes) -> tuple[tuple[str, str] | None, Any]:
    """A line's job and the object its time and run are read from: by the cheap decoder
    (``_spot_of``), else by ``json.loads`` (``None`` for a line it refuses, read again as
    loose and reported)."""
    spotted = _spot_of(line)
    if spotted is not None:
        return spotted
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        value = None
    return _job_of(value), value


def _job_of(value: Any) -> tuple[str, str] | None:
    job = value.get("job") if isinstance(value, dict) else None
    if isinstance(job, dict):
        namespace, name = job.get("namespace"), job.get("name")
        if isinstance(namespace, str) and isinstance(name, str):
            return namespace, name
    return None


def _is_json_lines(handle: IO[bytes]) -> bool:
    """A file whose first readable line is a JSON object on its own: JSON lines.

    A line nested too deeply to decode, or not UTF-8, tells nothing: the next one decides (one
    bad line must not make a file of millions of lines be read whole).
    """
    if handle.read(len(BOM)) != BOM:  # a byte order mark is no part of the first line
        handle.seek(0)
    for line in handle:
        if line.strip():
            try:
                return isinstance(json.loads(line), dict)
            except (UnicodeDecodeError, RecursionError):
                continue
            except ValueError:
                return False
    return False


def event_files_groups(
    event_files: Iterable[str | Path],
) -> Iterator[list[Any] | LongHistory]:
    """The raw events of ``event_files`` one job at a time, then those of no job.

    JSON lines files are indexed (where each job's lines start) and read again job by job; a
    job with more than ``SLICE_EVENTS`` lines there, and none elsewhere, comes as a
    ``LongHistory`` (its lines read again for their event times), to be read a slice of time at
    a time. A file that is one JSON
    document (an event, or an array of events) is read whole.
    """
    handles: list[IO[bytes]] = []
    lines: dict[tuple[str, str], list[tuple[int, int]]] = {}
    held: dict[tuple[str, str], list[Any]] = {}
    loose: list[Any] = []
    loose_lines: list[tuple[int, int]] = []
    try:
        for path in event_files:
            handle: IO[bytes] = Path(path).open("rb")  # noqa: SIM115 - closed after the 2nd pass
            if not _is_json_lines(handle):
                handle.close()
                for value in read_event_file(path):
                    job = _job_of(value)
                    (held.setdefault(job, []) if job else loose).append(value)
                continue
            handles.append(handle)
            number = len(handles) - 1
            handle.seek(0)
            offset = len(BOM) if handle.read(len(BOM)) == BOM else 0  # no part of a line
            handle.seek(offset)
            for line in handle:
                if line.strip():
                    job, _ = _spotted(line)
                    if job:
                        lines.setdefault(job, []).append((number, offset))
                    else:
                        loose_lines.append((number, offset))
                offset += len(line)

        def read(spots: list[tuple[int, int]]) -> Iterator[Any]:
            """A job's lines as their bytes, read as the store's texts are read (one reader:
            ``read_job_events`` decodes each once, its facets only when they count); a line
            that ``read_line`` would not pass on as JSON, as it passes it on."""
            for number, offset in spots:
                source = handles[number]
                source.seek(offset)
                yield _raw_line(source.readline())

        def read_loose(spots: list[tuple[int, int]]) -> Iterator[Any]:
            for number, offset in spots:
                source = handles[number]
                source.seek(offset)
                yield read_line(source.readline())

        def timed(
            spots: list[tuple[int, int]],
        ) -> list[tuple[int, int, datetime | None, str | None]]:
            """A long history's lines with the time and run each says, read again (the
            first pass keeps of a line where it is: few jobs have a long history)."""
            listing = []
            for number, offset in spots:
                source = handles[number]
                source.seek(offset)
                _, value = _spotted(source.readline())
                listing.append((number, offset, _time_of(value), _run_of(value)))
            return listing

        for job in sorted({*lines, *held}):
            spots = lines.pop(job, [])
            if len(spots) > stored.SLICE_EVENTS and job not in held:
                yield LongHistory(timed(spots), read)
                continue
            yield [*held.pop(job, ()), *read(spots)]
        loose.extend(read_loose(loose_lines))
        for start in range(0, len(loose), _LOOSE_GROUP):
            yield loose[start : start + _LOOSE_GROUP]
    finally:
        for opened in handles:
            opened.close()


def _raw_line(line: bytes) -> Any:
    """A JSON lines file's line as its bytes, when it is UTF-8 text (no BOM) that ``json.loads``
    reads: decoded from them by the reader, as ``read_line`` would have decoded it; any other
    line as ``read_line`` passes it on."""
    if line.startswith(_BOM):
        return read_line(line)
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return read_line(line)
    return line.rstrip(b"\r\n")


def plan_store(
    store_url: str | None,
    definition: JobDefinition,
    known_systems: Sequence[KnownSystem] = (),
) -> CatalogPlan:
    """The plan of the events in the event store, as the next snapshot will map them."""
    from airflow_blindata.plans.store import plan_from_store
    from airflow_blindata.store import open_store

    with open_store(store_url, create=False) as store:
        return plan_from_store(store, definition, known_systems, keep=False)
