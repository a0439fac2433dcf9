"""``RunReport``: what one snapshot or cleanup did, for the task log, the XCom and the sync history.

It extends the mapper's ``Report`` (counters, unknown facets, gaps by code with examples and the
seed's hint) with what only the sync knows: the status of the run, the objects Blindata refused
(by kind, with a few examples and the server's message), the time spent per phase, and the
ownership facts that the next cleanup needs (the scopes and Systems the snapshot wrote, the
server time at its start).

Those ownership lists can be long (one scope per job), so ``to_xcom()`` leaves them out; the full
report goes to the store's sync history (``to_record()``). Nothing here holds a credential: the
client's errors name the operation and the server's message only.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from airflow_blindata.mapper.report import MAX_EXAMPLES, Report, ordered_gaps
from airflow_blindata.plans.render import gap_table
from airflow_blindata.redaction import redact_text
from airflow_blindata.tables import MAX_CELL, table

__all__ = [
    "KnownSystemRecord",
    "Ledger",
    "ObjectGroup",
    "RunKind",
    "RunOrigin",
    "RunReport",
    "RunStatus",
    "SystemUse",
]

RunKind = Literal["snapshot", "cleanup", "light"]
"""``light``: a light sync, which publishes the jobs that received events since the last sync of
the definition and removes nothing (``runner.run_light``); cleanup never reads it as a snapshot."""
RunStatus = Literal["running", "success", "partial", "failed", "refused", "skipped"]
"""``partial``: some objects were refused (4xx) and reported, the rest applied. ``failed``: the
run stopped (Blindata unreachable, credentials refused, or, for a snapshot, unable to take writes:
see ``context.WriteWatch``). ``refused``: a cleanup fail-safe held. ``skipped``: nothing to do
(cleanup disabled, or an empty snapshot)."""

XCOM_EXCLUDED = frozenset(
    {"scopes", "failed_scopes", "ledger", "definition", "known_systems", "jobs"}
)
"""Long lists kept in the sync history but not in the XCom."""


def utcnow() -> datetime:
    return datetime.now(UTC)


_JOBS_SHOWN = 10
"""Jobs a light sync's text report names (its JSON and the history hold them all)."""


class ObjectGroup(BaseModel):
    """Objects of one kind: how many, and a few of them (refused, or removed by a cleanup)."""

    count: int = 0
    examples: list[str] = Field(default_factory=list)


class SystemUse(BaseModel):
    """A System a snapshot wrote to: its uuid, what it holds, whether this definition owns it."""

    uuid: str
    owned: bool = False
    datasets: bool = False
    jobs: bool = False


class Ledger(BaseModel):
    """What a definition owns in Blindata beyond its stamps: the flow scopes it has written.

    Cleanup carries it from one run to the next (see ``cleanup.py``), so that the scope of a job
    that stopped being described is still known when its flows must go.
    """

    scopes: list[str] = Field(default_factory=list)
    job_systems: list[str] = Field(default_factory=list)
    """uuids of the Systems that hold this definition's job entities and routines."""
    entity_systems: list[str] | None = None
    """uuids of every System the snapshots placed this definition's entities in (datasets and
    jobs): an entity it created found in another System was moved there by a person, and stays
    (``ownership._Moves``). ``None`` in a ledger written before it was recorded: the next cleanup
    counts every System that holds the definition's entities (``ownership.collect``)."""


class KnownSystemRecord(BaseModel):
    """A System the snapshot read from Blindata and used (``mapper.systems.KnownSystem``)."""

    name: str
    uuid: str
    properties: list[tuple[str, str]] = Field(default_factory=list)


class RunOrigin(BaseModel):
    """Who ran the sync: a task of a DAG run (the operators), or the ``airflow-blindata`` command
    (``command``: ``snapshot`` or ``cleanup``). The page links the first to its run and log."""

    dag_id: str | None = None
    run_id: str | None = None
    task_id: str | None = None
    map_index: int = -1
    command: str | None = None


class RunReport(Report):
    """The report of one run; counters and gaps come from ``Report`` (and the plan's report)."""

    kind: RunKind
    definition_uuid: str
    status: RunStatus = "running"
    dry_run: bool = False
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    watermark: datetime | None = None
    """Blindata's time when the snapshot started: objects it refreshed are at least this recent."""
    message: str | None = None
    reason: str | None = None
    """Why a cleanup was refused or skipped, as a code (``cleanup.REASONS``)."""
    failures: dict[str, ObjectGroup] = Field(default_factory=dict)
    removed: dict[str, ObjectGroup] = Field(default_factory=dict)
    """Cleanup: what it removed (or, in a dry run, would remove), by kind."""
    kept: dict[str, ObjectGroup] = Field(default_factory=dict)
    """Cleanup: stale owned objects it keeps because others reference them, by kind; each
    example says why. Snapshot: the producer's column flows of a job whose SQL Blindata
    analysed, kept because the analysis derived no column flow into their field."""
    superseded: dict[str, ObjectGroup] = Field(default_factory=dict)
    """Snapshot: the producer's column flows left out because a column flow derived by Blindata's
    analysis of the job's SQL ends on the same field; each example names that flow."""
    timings: dict[str, float] = Field(default_factory=dict)
    systems: dict[str, SystemUse] = Field(default_factory=dict)
    scopes: list[str] = Field(default_factory=list)
    """Snapshot: every flow scope it wrote (or tried to)."""
    failed_scopes: list[str] = Field(default_factory=list)
    """Snapshot: scopes with a flow Blindata refused; cleanup leaves their flows alone."""
    ledger: Ledger | None = None
    """Cleanup: what the definition owns after this run, for the next cleanup."""
    definition: dict[str, Any] | None = None
    """Snapshot: the job definition it mapped with, as data (``JobDefinition.from_dict`` reads
    it back): the Blindata page maps a job as this snapshot did (``ui.views.lands_page``)."""
    known_systems: list[KnownSystemRecord] = Field(default_factory=list)
    """Snapshot: the Systems of Blindata its plan used, with the properties that resolve a
    namespace to them, so that a job mapped again resolves its namespaces as it did."""
    origin: RunOrigin | None = None
    """Who ran it (None in records written before it was kept)."""
    blindata_url: str | None = None
    """The Blindata it talked to, without credentials."""
    cursor: int | None = None
    """Snapshot and light sync: the store's cursor the run read the events up to; the next light
    sync publishes the jobs with an event past the cursor of the last one that completed."""
    jobs: list[str] = Field(default_factory=list)
    """Light sync: the jobs it published (``namespace/name``), for the Blindata page."""

    # -- recording -----------------------------------------------------------------------------

    def fail(self, kind: str, key: str, message: str) -> None:
        """Record one object of ``kind`` that could not be written or removed."""
        _add(self.failures, kind, f"{key}: {message}")

    def note_removed(self, kind: str, key: str) -> None:
        """Record one object of ``kind`` removed (or to remove, in a dry run)."""
        _add(self.removed, kind, key)

    def note_kept(self, kind: str, key: str, reason: str) -> None:
        """Record one stale owned object of ``kind`` kept because of ``reason``."""
        _add(self.kept, kind, f"{key}: {reason}")

    def note_superseded(self, kind: str, key: str, by: str) -> None:
        """Record one object of ``kind`` left out because ``by`` is finer evidence of it. Flow
        names quote a job namespace as sent: kept as ``redaction.redact_text`` shows them."""
        _add(self.superseded, kind, redact_text(f"{key}: by {by}"))

    def failed(self, kind: str) -> int:
        group = self.failures.get(kind)
        return group.count if group else 0

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Add the time spent in the block to ``timings[phase]``."""
        started = time.monotonic()
        try:
            yield
        finally:
            elapsed = time.monotonic() - started
            self.timings[phase] = round(self.timings.get(phase, 0.0) + elapsed, 3)

    def finish(self, status: RunStatus | None = None, message: str | None = None) -> RunReport:
        """Close the run: ``partial`` when objects failed, unless a status is given."""
        self.finished_at = utcnow()
        if status is None:
            status = "partial" if self.failures else "success"
        self.status = status
        if message is not None:
            self.message = message
        return self

    @property
    def duration(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()

    # -- output --------------------------------------------------------------------------------

    def to_record(self) -> dict[str, Any]:
        """Everything, as JSON-ready data: what the sync history keeps."""
        return self.model_dump(mode="json")

    def to_xcom(self) -> dict[str, Any]:
        """The report without the long ownership lists: small enough for an XCom."""
        data = self.model_dump(mode="json", exclude=set(XCOM_EXCLUDED))
        data["scopeCount"] = len(self.scopes)
        if self.kind == "light":
            data["jobCount"] = len(self.jobs)
        return data

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> RunReport:
        return cls.model_validate(data)

    def render(self) -> str:
        """The report as the text tables a steward reads in the task log."""
        duration = f"{self.duration:.1f} s" if self.duration is not None else "running"
        kind = "light sync" if self.kind == "light" else self.kind
        title = f"Blindata {kind}{' (dry run)' if self.dry_run else ''}"
        parts = [
            f"{title} of job definition {self.definition_uuid}: {self.status.upper()} in {duration}"
        ]
        if self.message:
            parts.append(self.message)
        if self.kind == "light" and self.jobs:
            shown = ", ".join(self.jobs[:_JOBS_SHOWN])
            more = len(self.jobs) - _JOBS_SHOWN
            parts.append(f"Jobs published: {shown}{f' and {more} more' if more > 0 else ''}")
        if self.counters:
            parts += ["", table(("counter", "value"), sorted(self.counters.items()))]
        if self.timings:
            parts += [
                "",
                table(
                    ("phase", "seconds"),
                    ((phase, f"{seconds:.2f}") for phase, seconds in self.timings.items()),
                ),
            ]
        if self.gaps:
            parts += ["", gap_table(self.gaps.values())]
            # the table cuts a cell at MAX_CELL, and a hint's end is what to do (a probe of what
            # the admin sees: "…refused by Blindata this run (see t…"): those are given whole
            cut = [gap for gap in ordered_gaps(self.gaps.values()) if len(gap.hint) > MAX_CELL]
            if cut:
                parts += ["", "What to do, in full:"]
                parts += [f"  {gap.code.value}: {gap.hint}" for gap in cut]
        if self.removed:
            # a refused cleanup lists what it would have removed, as a dry run does
            verb = "would remove" if self.dry_run or self.status == "refused" else "removed"
            parts += [
                "",
                table(
                    (verb, "count", "examples"),
                    (
                        (kind, group.count, "; ".join(group.examples[:2]))
                        for kind, group in sorted(self.removed.items())
                    ),
                ),
            ]
        if self.kept:
            parts += [
                "",
                table(
                    ("kept", "count", "first example (why)"),
                    (
                        (kind, group.count, group.examples[0] if group.examples else "")
                        for kind, group in sorted(self.kept.items())
                    ),
                ),
            ]
        if self.superseded:
            parts += [
                "",
                table(
                    ("superseded", "count", "first example (by)"),
                    (
                        (kind, group.count, group.examples[0] if group.examples else "")
                        for kind, group in sorted(self.superseded.items())
                    ),
                ),
            ]
        if self.failures:
            parts += [
                "",
                table(
                    ("failed", "count", "first example"),
                    (
                        (kind, group.count, group.examples[0] if group.examples else "")
                        for kind, group in sorted(self.failures.items())
                    ),
                ),
            ]
        if self.retired:
            retired = self.counters.get("jobsRetired", len(self.retired))
            parts += [
                "",
                table(
                    (f"retired job ({retired})", "why"),
                    (example.split(": ", 1) for example in self.retired),
                ),
            ]
        if self.unknown_facets:
            parts += ["", table(("unknown facet", "count"), sorted(self.unknown_facets.items()))]
        return "\n".join(parts) + "\n"


def _add(groups: dict[str, ObjectGroup], kind: str, example: str) -> None:
    group = groups.setdefault(kind, ObjectGroup())
    group.count += 1
    if len(group.examples) < MAX_EXAMPLES:
        # Blindata's own names: an object written before job names and namespaces were shown
        # redacted still holds its ``?token=…`` or ``user:password@`` when the cleanup removes it
        group.examples.append(redact_text(example))
