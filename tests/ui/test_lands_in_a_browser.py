"""Issue 38, in a real browser: *Where it lands* in a real ``airflow api-server``, after real
snapshots against the emulator, agrees with what the sync did (headless Chromium reads it).

The API server's store gets two DAG runs of ``sales`` (the second without its ``report`` task)
and the snapshot after each, as the sync DAG runs them. ``BLINDATA_UI_SCREENSHOTS`` keeps the
screenshots (``docs/images/where-it-lands.png`` comes from there).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.store import open_store
from airflow_blindata.sync.runner import run_snapshot
from tests.mapper.removed_tasks import ALL, DAG, NS, DagRun
from tests.sync.helpers import client_of, definition

from . import helpers
from .browser import Chromium
from .helpers import _kept, _serving, _token

pytestmark = [pytest.mark.integration, pytest.mark.airflow]

BEFORE = DagRun("r1", 0, ["extract", "load", "report"], listed=ALL)
AFTER = DagRun("r2", 1, ["extract", "load"], listed={"extract": "success", "load": "success"})


@pytest.fixture(scope="module")
def synced_api_server(
    tmp_path_factory: pytest.TempPathFactory, served_emulator: Any
) -> Iterator[str]:
    """An API server whose store holds two DAG runs and the snapshot after each."""
    served_emulator.emulator.reset()
    seed = helpers.seed

    def seed_and_sync(store_url: str) -> None:
        seed(store_url)
        with open_store(store_url) as store, client_of(served_emulator) as client:
            for dag_run in (BEFORE, AFTER):
                store.append_many(dag_run.events())
                report = run_snapshot(definition(), client, store)
                assert report.status == "success", report.render()
                served_emulator.emulator.clock.advance(2.3)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(helpers, "seed", seed_and_sync)
        with _serving(tmp_path_factory) as root:
            yield root


@pytest.mark.parametrize(
    ("sentence", "job", "expected", "absent"),
    [
        (
            "a task maps with the recorded definition and shows its DAG link",
            f"{DAG}.load",
            ["mapped with job definition", "@orchestration", "public.load"],
            ["UNMAPPED_NAMESPACE", "DANGLING_FLOW", "seeds' default rules", "Flows (0)"],
        ),
        (
            "a task its DAG no longer has shows as retired",
            f"{DAG}.report",
            ["Retired:", "task 'report' is not in the latest run of DAG", "Flows (0)"],
            ["UNMAPPED_NAMESPACE"],
        ),
    ],
)
def test_a_browser_sees_where_a_job_lands_as_the_sync_did(
    synced_api_server: str,
    browser: Chromium,
    tmp_path: Path,
    sentence: str,
    job: str,
    expected: list[str],
    absent: list[str],
) -> None:
    name = "where-it-lands" if job.endswith(".load") else "where-it-lands-retired"
    out = tmp_path / f"{name}.png"
    # the definition the sync above used: the browser test's seed records a later cleanup of
    # another definition, which the page would otherwise choose (the most recently synced)
    page = f"/blindata-ui/lands?namespace={NS}&name={job}&definition={definition().uuid}"

    dom = browser.open(f"{synced_api_server}{page}", _token(synced_api_server), out)

    _kept(out)
    text = re.sub(r"\s+", " ", dom)
    for shown in expected:
        assert shown in text or shown.replace("'", "&#39;") in text, (sentence, shown)
    for hidden in absent:
        assert hidden not in text, (sentence, hidden)
