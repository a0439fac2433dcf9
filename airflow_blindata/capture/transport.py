"""``BlindataTransport``: the OpenLineage transport that writes each event to the event store.

Select it by its dotted path, alone or as one leg of a ``composite``::

    [openlineage]
    transport = {"type": "airflow_blindata.capture.transport.BlindataTransport"}

Options (all optional): ``store_url`` (default ``[blindata] store_url``, else
``$AIRFLOW_HOME/blindata/events.db``) and ``lost_events_path`` (default
``[blindata] lost_events_file``, else ``$AIRFLOW_HOME/blindata/lost-events.jsonl``). ``emit``
writes the event to the store before it returns and never raises: what the store refuses goes to
the lost-events file. The provider's own tasks' events are left out (``own``).

Contract in full: docs/capture.md#the-transports-contract-capturetransportpy
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

import attr
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import schema_dataset, sql_job
from openlineage.client.transport import Config, Transport
from pydantic import BaseModel, ConfigDict, ValidationError

from airflow_blindata.events import deep_json
from airflow_blindata.metrics import count
from airflow_blindata.options import airflow_home_path, blindata_home, lost_events_file
from airflow_blindata.redaction import redact_text, redact_url, url_secrets
from airflow_blindata.store import (
    AppendOutcome,
    EventAppender,
    StoreError,
    UnserializableEvent,
    configured_store_url,
    default_store_url,
    open_store,
)
from airflow_blindata.store.connections import describe_error

from .own import is_own_event
from .serialize import Converted, convert

__all__ = [
    "LOST_EVENTS_METRIC",
    "BlindataTransport",
    "BlindataTransportConfig",
    "count_lost_events",
    "lost_events_path",
    "preload",
]

log = logging.getLogger(__name__)

LOST_EVENTS_METRIC = "blindata.capture.lost"
LOST_EVENTS_FILE = "lost-events.jsonl"
LOST_EVENTS_LOCK_WAIT = 1.0
"""Seconds a writer waits for its turn on the lost-events file (turns last microseconds)."""


class _Options(BaseModel):
    """The transport's options as they come from ``[openlineage] transport``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str | None = None  # the factory passes the dict with its "type" still in it
    store_url: str | None = None
    lost_events_path: str | None = None


def _config_error(error: ValidationError) -> ValueError:
    known = ", ".join(name for name in _Options.model_fields if name != "type")
    problems = []
    for issue in error.errors():
        key = ".".join(str(part) for part in issue["loc"])
        if issue["type"] == "extra_forbidden":
            problems.append(f"unknown key `{key}`")
        else:
            problems.append(f"`{key}`: {issue['msg']}")
    return ValueError(f"BlindataTransport config: {'; '.join(problems)} (known keys: {known})")


@attr.define(repr=False)
class BlindataTransportConfig(Config):
    """Where the transport stores events, and where it keeps those it could not store."""

    store_url: str | None = None
    lost_events_path: str | None = None

    def __repr__(self) -> str:
        """The store URL with its password as ``***``: a config may be logged."""
        url = None if self.store_url is None else redact_url(self.store_url)
        return (
            f"BlindataTransportConfig(store_url={url!r}, "
            f"lost_events_path={self.lost_events_path!r})"
        )

    @classmethod
    def from_dict(cls, params: dict[str, Any]) -> Self:
        """Checked with pydantic: a misspelt key is an error that names it, not a default."""
        try:
            options = _Options.model_validate(params)
        except ValidationError as error:
            raise _config_error(error) from None
        return cls(store_url=options.store_url, lost_events_path=options.lost_events_path)


_STORES: dict[str | None, EventAppender] = {}
"""One store per configured URL and process; each store guards itself against ``fork``."""


def _shared_store(url: str | None) -> EventAppender:
    store = _STORES.get(url)
    if store is None:
        store = _STORES[url] = open_store(url)
    return store


def preload(store_url: str | None) -> None:
    """Build the store of ``store_url`` ahead of the first ``emit``.

    The plugin calls this in every Airflow process where the transport is configured: the
    children forked per event then inherit the store (engine, tables and, for SQLite, a checked
    schema and compiled statements) and only open their own connection. For SQLite the rest of
    ``emit`` is rehearsed on a sample event, without writing it (``warm_up``). A PostgreSQL
    store is not connected to here. A bad URL or an unavailable store is left for ``emit``.
    """
    from airflow_blindata.store import postgres, sqlite  # noqa: F401  (imported for the fork)

    try:
        store = _shared_store(store_url)
        warm_up = getattr(store, "warm_up", None)  # SQLite: a local file, cheap to open here
        if warm_up is not None:
            sample = _sample_event()
            for _ in range(sqlite.WARM_UP_ROUNDS):  # the serialization, rehearsed like the rest
                convert(sample)
            warm_up(convert(sample).data)
    except Exception:
        log.debug("Blindata store not preloaded", exc_info=True)


def _sample_event() -> RunEvent:
    """An event shaped like a task's, for ``preload`` to rehearse ``emit`` with."""
    schema = schema_dataset.SchemaDatasetFacet(
        fields=[schema_dataset.SchemaDatasetFacetFields(name="id", type="INTEGER")]
    )
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime="2026-01-01T00:00:00+00:00",
        run=Run(runId="01900000-0000-7000-8000-000000000000"),
        job=Job(
            namespace="airflow",
            name="dag.task",
            facets={"sql": sql_job.SQLJobFacet(query="INSERT INTO b SELECT id FROM a")},
        ),
        inputs=[InputDataset("postgres://db:5432", "public.a", facets={"schema": schema})],
        outputs=[OutputDataset("postgres://db:5432", "public.b", facets={"schema": schema})],
        producer="https://github.com/apache/airflow/tree/providers-openlineage",
    )


def lost_events_path(configured: str | None = None) -> Path:
    """The lost-events file: ``configured``, ``[blindata] lost_events_file``, or the default.

    A relative path is read from ``$AIRFLOW_HOME``, never from the working directory of the
    process that loses an event: a worker's is not where ``store stats`` and the Blindata page
    look (``airflow_home_path``, as a relative SQLite ``store_url``)."""
    if configured:
        try:
            return airflow_home_path(configured)
        except RuntimeError:  # no home directory to read it from: as given, not lost (a review)
            return Path(configured).expanduser()
    from_airflow = lost_events_file()
    if from_airflow:
        return Path(from_airflow)
    return blindata_home() / LOST_EVENTS_FILE


def count_lost_events(path: Path | None = None) -> int:
    """How many events the lost-events file holds (0 when there is none); ``OSError`` when it
    cannot be read (a directory: capture cannot write there either)."""
    path = path or lost_events_path()
    try:
        with path.open("rb") as lines:
            return sum(1 for line in lines if line.strip())
    except FileNotFoundError:
        return 0


def _describe(data: Any) -> str:
    """``the COMPLETE event of job ns/name (run id)``: enough to find it, nothing more — a job
    namespace that holds credentials (``postgres://etl:pw@db:5432``) is shown without them."""
    if not isinstance(data, Mapping):
        return "an event"
    job, run = data.get("job"), data.get("run")
    what = f"the {data.get('eventType')} event" if data.get("eventType") else "an event"
    if isinstance(job, Mapping):
        namespace, name = (redact_text(str(job.get(key))) for key in ("namespace", "name"))
        what += f" of job {namespace}/{name}"
    if isinstance(run, Mapping) and run.get("runId"):
        what += f" (run {run.get('runId')})"
    return what


def _as_line(data: Any) -> bytes:
    """One JSON line for the lost-events file (what ``airflow-blindata ingest`` reads)."""
    if isinstance(data, bytes | bytearray):
        data = bytes(data).decode("utf-8", "replace")
    if isinstance(data, str):
        text: str = data
        try:
            data = json.loads(text)
        except ValueError:
            return (text.replace("\r", " ").replace("\n", " ") + "\n").encode()
    if not isinstance(data, Mapping):
        data = convert(data).data
    try:
        return (json.dumps(data, default=str) + "\n").encode()
    except (RecursionError, TypeError, ValueError):  # nested too deeply, keys JSON cannot have
        return (deep_json(data) + "\n").encode("utf-8", "backslashreplace")


def _warn_dropped(data: Any, dropped: tuple[str, ...]) -> None:
    """Say which facets an event was stored without, and why (the snapshot reports them too)."""
    log.warning(
        "Blindata capture stored %s without %s it could not serialize: %s. The snapshot reports "
        "it as MALFORMED_FACET; the lineage it describes is kept. The task is not affected.",
        _describe(data),
        "the facet" if len(dropped) == 1 else f"{len(dropped)} facets",
        "; ".join(dropped),
    )


def _keep_line(path: Path, line: bytes) -> None:
    """Append ``line`` to ``path`` whole, or not at all; ``OSError`` says why it could not.

    One ``os.write`` on an ``O_APPEND`` descriptor: the kernel appends it in one piece, so the
    lines of concurrent writers never interleave. A short write (the disk filled up, a file size
    limit) is taken back, so that the next line starts on a line of its own; writers take turns on
    the file's lock for that, so that the bytes taken back are this writer's.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
    try:
        locked = _take_turn(descriptor)
        written = os.write(descriptor, line)
        if written == len(line):
            return
        end = os.lseek(descriptor, 0, os.SEEK_CUR)  # after an O_APPEND write: where it ended
        left = f"; {written} bytes of it are left at the end of the file"
        if locked and os.fstat(descriptor).st_size == end:
            try:
                os.ftruncate(descriptor, end - written)
                left = ""
            except OSError:
                pass
        raise OSError(f"only {written} of {len(line)} bytes could be written{left}")
    finally:
        os.close(descriptor)  # and the turn with it


def _take_turn(descriptor: int) -> bool:
    """The file's lock within ``LOST_EVENTS_LOCK_WAIT``; False when it could not be had."""
    deadline, pause = time.monotonic() + LOST_EVENTS_LOCK_WAIT, 0.0005
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.01)
        except OSError:  # a filesystem without locks: the line is still appended whole
            return False


class BlindataTransport(Transport):
    """Writes OpenLineage events (RunEvent, JobEvent, DatasetEvent) to the Blindata event store."""

    kind = "blindata"
    config_class = BlindataTransportConfig

    def __init__(self, config: BlindataTransportConfig, *, source: str = "transport") -> None:
        self.config = config
        self.source = source

    def emit(self, event: Any) -> AppendOutcome | None:
        """Store ``event``; on failure log, keep and count it — never raise into Airflow.

        A client event is converted to JSON first (``convert``): a facet that cannot be
        serialized is dropped and named in a warning (the snapshot reports it too), one whose
        envelope cannot be is quarantined with the reason. Neither is the store's failure: only
        what the store refuses goes to the lost-events file.
        """
        data: Any = event
        converted: Converted | None = None
        try:
            if attr.has(type(event)):  # the client's events; not ``isinstance(event, Mapping)``:
                converted = convert(event)  # its first abstract check costs ~0.5 ms in a child
                data = converted.data
            if is_own_event(data, ask_airflow=self.source == "transport"):
                log.debug("Blindata capture leaves out %s: the provider's own", _describe(data))
                return None
        except Exception as error:  # not reached: ``convert`` never raises
            self._report(error, data, stored=False)
            return None
        if converted is not None and converted.problem is not None:
            return self._quarantine(converted)
        try:
            outcome = _shared_store(self.config.store_url).append(data, source=self.source)
        except Exception as error:
            self._report(error, data)
            return None
        if converted is not None and converted.dropped and outcome is AppendOutcome.ACCEPTED:
            _warn_dropped(data, converted.dropped)  # a duplicate was named when first stored
        return outcome

    def _quarantine(self, converted: Converted) -> AppendOutcome | None:
        """Quarantine an event whose envelope could not be serialized, with the reason."""
        reason = f"not serializable as JSON: {converted.problem}"
        try:
            store = _shared_store(self.config.store_url)
            outcome = store.append(UnserializableEvent(converted.data, reason), source=self.source)
        except Exception as error:
            self._report(error, converted.data)
            return None
        if outcome is AppendOutcome.DUPLICATE:
            return outcome
        log.warning(
            "Blindata capture quarantined %s: %s (`airflow-blindata store quarantine` shows it). "
            "The task is not affected.",
            _describe(converted.data),
            reason,
        )
        return outcome

    def _report(self, error: Exception, data: Any, *, stored: bool = True) -> None:
        """``_lose`` an event the store failed to take; one line for a failure before the store
        (``stored=False``), which the store is not to blame for and a file cannot help."""
        try:
            if stored:
                self._lose(data, error)
            else:
                log.warning(
                    "Blindata capture could not serialize %s: %s. The task is not affected.",
                    _describe(data),
                    type(error).__name__,
                )
                log.debug("Blindata capture failure details:", exc_info=True)
        except Exception:  # the last guard: even the report of a loss must not raise
            log.warning("Blindata capture lost an event: %s", type(error).__name__)

    def close(self, timeout: float = -1) -> bool:
        return True

    def _target(self) -> str:
        try:
            return self.config.store_url or configured_store_url() or default_store_url()
        except Exception:
            return "the configured store"

    def _lose(self, data: Any, error: Exception) -> None:
        """One warning line, the event kept in the lost-events file, the loss counted."""
        target = self._target()
        secrets = url_secrets(target)
        if isinstance(error, StoreError):
            reason = describe_error(error, secrets=secrets)
        else:
            reason = f"{describe_error(error, secrets=secrets)} (store {redact_url(target)})"
        path = lost_events_path(self.config.lost_events_path)
        try:
            _keep_line(path, _as_line(data))
            kept = f"kept in {path}; store it later with `airflow-blindata ingest {path}`"
        except OSError as file_error:
            why = file_error.strerror or str(file_error)
            kept = f"and could not be kept in {path} ({why}): it is lost"
        log.warning(
            "Blindata capture could not store %s: %s; %s. The task is not affected.",
            _describe(data),
            reason,
            kept,
        )
        log.debug("Blindata capture failure details:", exc_info=True)
        count(LOST_EVENTS_METRIC)
