"""A DatasetEvent's lineage lands beside the flows of the job that writes the dataset (issue 37).

Seed 001: "A DatasetEvent with a lineage facet gives table flows between datasets, with no job."
The job's flows and the dataset's own lineage are different evidence: both land, each in its
scope, and each goes only with what describes it — the dataset's when a DatasetEvent deletes its
facet, whatever the job still writes.
"""

from __future__ import annotations

from typing import Any

import pytest
from blindata_emulator import Kind

from airflow_blindata.blindata import BlindataClient
from airflow_blindata.sync import cleanup, snapshot
from tests import builders
from tests.builders import at, run_event
from tests.sync.helpers import History, definition, next_second, objects, plan_for

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_margin")]

PG = "postgres://warehouse:5432"
DATASET_SCOPE = f"ol:dataset:{PG}|db.s.report"
JOB_SCOPE = "ol:etl|load"


def events(*, deleted: bool = False) -> list[dict[str, Any]]:
    """The job ``etl/load`` reads ``raw`` and writes ``report``; a catalog's DatasetEvent says
    ``raw`` and ``upstream`` feed ``report`` (and, later, ``deleted``: it says so no more)."""
    declared = builders.lineage_facet("db.s.raw", "db.s.upstream", namespace=PG)
    found = [
        run_event(
            "load",
            namespace="etl",
            inputs=[builders.dataset("db.s.raw", PG)],
            outputs=[builders.dataset("db.s.report", PG)],
            time=at(1),
        ),
        builders.dataset_event("db.s.report", PG, facets=declared, time=at(2)),
    ]
    if deleted:
        gone = {"lineage": {"_deleted": True}}
        found.append(builders.dataset_event("db.s.report", PG, facets=gone, time=at(3)))
    return found


def flows(emulator: Any) -> set[tuple[str, str]]:
    return {
        (f["scope"], f["name"])
        for f in objects(emulator, Kind.FLOW)
        if (f.get("scope") or "") in (DATASET_SCOPE, JOB_SCOPE)
    }


def test_the_dataset_s_lineage_lands_beside_the_job_s_and_goes_only_with_its_declaration(
    client: BlindataClient, emulator: Any
) -> None:
    job = definition(cleanup={"maxRemovalShare": 1})  # a small catalog: a third goes
    history = History()
    first = history.add(snapshot(plan_for(client, events(), job), client, job))
    assert first.status == "success", first.render()
    assert first.counters["datasetLineageBesideJobs"] == 1
    assert flows(emulator) == {
        (JOB_SCOPE, "s.raw -> s.report @etl/load"),
        (DATASET_SCOPE, "s.raw -> s.report"),
        (DATASET_SCOPE, "s.upstream -> s.report"),
    }
    kept = history.add(cleanup(job, client, history))
    assert kept.status == "success" and not kept.removed, kept.render()

    next_second(emulator)
    second = history.add(snapshot(plan_for(client, events(deleted=True), job), client, job))
    removed = history.add(cleanup(job, client, history))
    assert second.status == removed.status == "success", removed.render()
    assert flows(emulator) == {(JOB_SCOPE, "s.raw -> s.report @etl/load")}
    assert removed.removed["flow"].count == 2
