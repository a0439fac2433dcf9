"""A long history folded a slice of time at a time.

``fold_in_slices`` takes a job's events in slices, every event of a slice later than every event
of the slices before (as ``EventStore.job_slices`` and ``plan`` of event files give them): the
first slice is folded and each next one added to that fold (``fold.extend_folded``), so memory
holds one slice. It gives the fold of every event, or ``None`` when that cannot be made sure of
(the caller then reads the job at once). A run going on across a slice's end is held whole until
its last slice. When a slice finds a malformed facet, ``report_in_slices`` makes the report again
from the slices newest first.

Why and how: docs/mapping-reference.md#slices-of-a-long-history-mapperfoldslicespy
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from airflow_blindata.events import RunEvent
from airflow_blindata.mapper.fold.core import (
    FoldedJob,
    RunRetainer,
    extend_folded,
    fold_jobs,
    whole_run_ids,
)
from airflow_blindata.mapper.fold.reading import NewerSlices, read_job_events
from airflow_blindata.mapper.report import GapCode, Report

__all__ = ["Slices", "fold_in_slices", "found_malformed", "report_in_slices"]

Slices = Iterable[tuple[Sequence[Any], AbstractSet[str]]]
"""A job's raw events a slice of time at a time, each slice with the ids of the runs that go on
after it (events in it or before it, and in a later slice): ``store.base.TimeSlice``."""


def fold_in_slices(
    slices: Slices,
    report: Report,
    *,
    retain: RunRetainer | None = None,
    quality: bool = True,
    start: FoldedJob | None = None,
    newest_first: Callable[[], Slices] | None = None,
    hold_open: bool = False,
) -> FoldedJob | None:
    """The fold of one job's events given in slices of time, added to ``start`` (the fold of its
    events before them) when given; what reading them found goes to ``report``.

    ``None``, and ``report`` left as it was, when a slice cannot be added exactly (an event not
    later than those before it, of a run the fold dropped). When a reading finds a malformed
    facet (``found_malformed``), the report is made again by ``report_in_slices`` from
    ``newest_first()``, the same slices newest first; ``None`` if that cannot be: without
    ``newest_first``, or with ``start`` (the events before the slices would be missing from it).
    With ``hold_open``, the fold holds its open runs whole (``fold.FoldedJob.held``): a fold to
    keep for the next snapshot.
    """
    found = Report()
    folded = start
    for raws, going_on in slices:
        if folded is None:
            # every run read whole when some go on: the slice alone cannot rank them
            events = read_job_events(
                raws,
                found,
                quality=quality,
                every_run_kept=bool(going_on),
                hold_open=hold_open,
            )
            folds = fold_jobs(events, retain, hold=going_on, hold_open=hold_open)
            if len(folds) != 1:
                return None
            folded = folds[0]
        else:
            added = _add_slice(folded, raws, retain, quality, going_on, hold_open)
            if added is None:
                return None
            folded, slice_report = added
            found.merge(slice_report)
        if found_malformed(found) and (newest_first is None or start is not None):
            return None
    if folded is None:
        return None
    if newest_first is not None and found_malformed(found):
        found = report_in_slices(newest_first(), folded, quality=quality)
    report.merge(found)
    return folded


def report_in_slices(newest_first: Slices, folded: FoldedJob, *, quality: bool = True) -> Report:
    """The report of reading every event of a job at once, from its slices of time newest first
    and ``folded``, the fold of them all (which says the runs the job keeps whole). Each slice is
    read with what the newer ones decided (``NewerSlices``); the reports are merged oldest first,
    as a reading at once counts them."""
    job = (folded.job.key.namespace, folded.job.key.name)
    newer = NewerSlices({(job, run_id) for run_id in whole_run_ids(folded)})
    reports: list[Report] = []
    for raws, _ in newest_first:
        reports.append(Report())
        read_job_events(raws, reports[-1], quality=quality, newer=newer)
    report = Report()
    for part in reversed(reports):
        report.merge(part)
    return report


def _add_slice(
    folded: FoldedJob,
    raws: Sequence[Any],
    retain: RunRetainer | None,
    quality: bool,
    hold: AbstractSet[str],
    hold_open: bool,
) -> tuple[FoldedJob, Report] | None:
    """The fold with a slice of newer events added, and the report of reading them; ``hold``:
    the runs going on after this slice.

    The slice is read as a whole history is (each run ranked among the slice's), the runs that
    the fold keeps or holds whole, and those going on after it, being read whole too. That is
    exact when every run the new fold keeps or holds whole and the slice has events of was read
    whole, which is checked; otherwise (a tie between runs the slice alone ranks otherwise) the
    slice is read again with every run read whole, as new events added to a kept fold are."""
    job = (folded.job.key.namespace, folded.job.key.name)
    going_on = {(job, run_id) for run_id in whole_run_ids(folded) | folded.held | hold}
    report = Report()
    read_whole: set[tuple[tuple[str, str], str]] = set()
    events = read_job_events(
        raws,
        report,
        quality=quality,
        also_whole=going_on,
        kept_whole=read_whole,
        hold_open=hold_open,
    )
    added = extend_folded(folded, events, retain, hold=hold, hold_open=hold_open)
    if added is None:
        return None
    in_slice = {event.run.run_id for event in events if isinstance(event, RunEvent)}
    kept_whole = (whole_run_ids(added) | added.held) & in_slice
    if any((job, run_id) not in read_whole for run_id in kept_whole):
        report = Report()
        events = read_job_events(raws, report, quality=quality, every_run_kept=True)
        added = extend_folded(folded, events, retain, hold=hold, hold_open=hold_open)
        if added is None:
            return None
    return added, report


def found_malformed(report: Report) -> bool:
    """Whether reading a job's events found a malformed facet. A plan reports one only if the
    run, job or dataset it is in is still used (a whole read validates no other), which a reading
    of part of the job's events cannot tell: a run read then may be one newer events supersede.
    Such a job is read at once, or its report made again (``report_in_slices``)."""
    return report.gap_count(GapCode.MALFORMED_FACET) > 0
