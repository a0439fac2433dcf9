"""A long history read in slices at the edges: retention between snapshots, times out of range."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.plans import store as mapping
from airflow_blindata.plans.files import plan_files
from tests.builders import dataset, run_event
from tests.sync.helpers import _runs, _snapshots_equal_builds, assert_read_at_once

from .helpers import definition


def test_a_kept_fold_is_not_extended_in_slices_when_retention_removed_folded_events(
    store_url: str,
) -> None:
    """Retention removes a folded run, then more than ``SLICE_EVENTS`` events come: the digests
    count fewer received events than there are past the fold's cursor, so the fold (which still
    holds the removed run's table) must not take them; the job is read again."""
    first = _runs(2)
    for event in first[:2]:  # run 0 writes a table only it mentions
        event["outputs"] = [dataset("public.old")]
    more = _runs(10, first=2)
    with mock.patch.object(mapping, "SLICE_EVENTS", 4):
        _snapshots_equal_builds([first, more], store_url, retention_after=0)


@pytest.mark.parametrize("time", ["0001-01-01T00:30:00+01:00", "9999-12-31T23:00:00-05:00"])
def test_an_event_time_out_of_range_in_utc_does_not_fail_the_plan_of_event_files(
    tmp_path: Path, time: str
) -> None:
    """Such a time is a valid event's (read at once, it plans); noting the lines' times for
    slices must not raise on it."""
    events = [run_event("job", time=time)]
    lines = tmp_path / "events.jsonl"
    lines.write_text("".join(f"{json.dumps(event)}\n" for event in events), encoding="utf-8")
    assert_read_at_once(plan_files([lines], definition()), build(events, definition()))
