"""Retention prunes raw events by age, but never the latest description of a described job."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from airflow_blindata.store import EventStore
from airflow_blindata.store import retention as retention_module
from tests import builders

from .helpers import dataset_event, event, job_event

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _age(
    store: EventStore, days_ago: float, *, runs: list[str] | None = None, kind: str = ""
) -> None:
    """Make the events of ``runs`` (or of ``kind``) look received ``days_ago`` before NOW."""
    events = store._tables.events  # type: ignore[attr-defined]
    which = events.c.run_id.in_(runs) if runs else events.c.kind == kind
    with store._writing() as conn:  # type: ignore[attr-defined]
        conn.execute(
            events.update().where(which).values(received_at=NOW - timedelta(days=days_ago))
        )


def _add(store: EventStore, job: str, runs: list[str], days_ago: float) -> None:
    for run in runs:
        for kind in ("START", "COMPLETE"):
            store.append(event(job, run=run, event_type=kind))
    _age(store, days_ago, runs=runs)


def _runs(store: EventStore, job: str) -> set[str | None]:
    return {s.run_id for s in store.events(job=("ns", job))}


def test_old_runs_go_and_recent_ones_stay(store: EventStore) -> None:
    _add(store, "daily", ["r1", "r2"], days_ago=40)
    _add(store, "daily", ["r3"], days_ago=20)
    _add(store, "daily", ["r4", "r5"], days_ago=1)
    result = store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)
    assert _runs(store, "daily") == {"r4", "r5"}
    assert result.events_removed == 6 and result.events_kept_for_described_jobs == 0


def test_a_job_described_long_ago_keeps_its_latest_run_and_job_event(store: EventStore) -> None:
    _add(store, "monthly", ["m1", "m2"], days_ago=25)
    store.append(job_event("monthly", facets_version=1))
    store.append(job_event("monthly", facets_version=2))
    _age(store, 25, kind="JobEvent")
    result = store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)
    kept = list(store.events(job=("ns", "monthly")))
    assert {s.run_id for s in kept if s.run_id} == {"m2"}
    job_events = [s for s in kept if s.kind == "JobEvent"]
    assert [s.payload["facets_version"] for s in job_events] == [2]
    assert result.events_removed == 3  # m1's START and COMPLETE, the first JobEvent
    assert result.events_kept_for_described_jobs == 3
    assert result.jobs_dropped == 0


def test_a_run_marked_failed_after_it_completed_keeps_the_run_completed_before_it(
    store: EventStore,
) -> None:
    """Airflow's "mark failed" on a task that succeeded sends FAIL for the same run: the
    mapping describes the job by its latest run whose last event is COMPLETE (its flows,
    orchestration and checks), the run before. Retention kept only the marked run (it has a
    COMPLETE event) and pruned the one the job is described by."""
    runs = {
        "m0": ("START", "COMPLETE"),
        "m1": ("START", "COMPLETE"),
        "m2": ("START", "COMPLETE", "FAIL"),
    }
    for minute, (run, kinds) in enumerate(runs.items()):
        for second, kind in enumerate(kinds):
            time = builders.at(second, minute=minute)
            store.append(event("marked", run=run, event_type=kind, time=time))
    _age(store, 20, runs=list(runs))
    store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)
    assert _runs(store, "marked") == {"m1", "m2"}


def test_a_streaming_job_restarted_keeps_the_run_that_named_its_datasets(
    store: EventStore,
) -> None:
    """Seed 004: a streaming job's terminal events "should not be relied upon". Restarted, its
    new run named no dataset yet, and the mapping describes it by the run before, which named
    them (``mapper.fold.latest_naming_datasets``): retention pruned that run, and the job lost
    its flows (a review)."""
    table = builders.dataset("public.sessions", "postgres://db:5432")
    runs = {
        "s1": (("START", "RUNNING", "FAIL"), [table]),
        "s2": (("START", "RUNNING"), []),
    }
    for minute, (run, (kinds, outputs)) in enumerate(runs.items()):
        for second, kind in enumerate(kinds):
            time = builders.at(second, minute=minute)
            store.append(event("stream", run=run, event_type=kind, time=time, outputs=outputs))
    _age(store, 20, runs=list(runs))
    store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)
    assert _runs(store, "stream") == {"s1", "s2"}


def test_a_mapped_task_described_long_ago_keeps_every_instance_of_its_latest_dag_run(
    store: EventStore,
) -> None:
    """The instances of a mapped task (one run each, all naming their DAG run as parent)
    describe the job together: retention keeps them all, not only the latest one."""

    def instances(dag_run: str, runs: list[str]) -> None:
        parent = builders.parent_facet("etl", dag_run, namespace="airflow")
        for run in runs:
            for kind in ("START", "COMPLETE"):
                store.append(event("mapped", run=run, event_type=kind, run_facets=parent))
        _age(store, 20, runs=runs)

    _add(store, "mapped", ["before"], days_ago=21)  # before it was mapped: no parent
    instances("dag-run-1", ["a0", "a1"])
    instances("dag-run-2", ["b0", "b1", "b2"])
    result = store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)
    assert _runs(store, "mapped") == {"b0", "b1", "b2"}
    assert result.events_removed == 6 and result.events_kept_for_described_jobs == 6


def test_a_job_no_longer_described_is_dropped_entirely(store: EventStore) -> None:
    _add(store, "retired", ["x1"], days_ago=45)
    _add(store, "alive", ["a1"], days_ago=1)
    result = store.retain(raw_events_days=60, job_described_for_days=30, now=NOW)
    assert _runs(store, "retired") == set()
    assert _runs(store, "alive") == {"a1"}
    assert result.jobs_dropped == 1 and result.events_removed == 2


def test_quarantine_goes_by_age(store: EventStore) -> None:
    store.append("garbage")
    store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)
    assert len(list(store.quarantine())) == 1  # received "now" (after NOW - 14 days): kept
    result = store.retain(
        raw_events_days=14, job_described_for_days=30, now=datetime.now(UTC) + timedelta(days=15)
    )
    assert list(store.quarantine()) == [] and result.quarantine_removed == 1


def _design(kind: str, time: str, *facets: str, **extra: Any) -> dict[str, Any]:
    """A JobEvent of job ``design`` or a DatasetEvent of ``public.t``, sent at ``time``, with
    the named facets (each one's value tells the event it came from)."""
    given = {name: builders.facet("CustomFacet", sent=time) for name in facets}
    if kind == "JobEvent":
        return builders.job_event(
            "design", namespace="ns", time=time, job_facets=given, schema_url=None, **extra
        )
    return builders.dataset_event("public.t", "postgres://db", facets=given, time=time)


def _kept_designs(store: EventStore, kind: str) -> list[str]:
    """The eventTimes of the stored events of ``kind``, in order."""
    return sorted(s.payload["eventTime"] for s in store.events() if s.kind == kind)


@pytest.mark.parametrize("kind", ["JobEvent", "DatasetEvent"])
def test_a_design_keeps_the_events_the_mapping_still_reads_from(
    store: EventStore, kind: str
) -> None:
    """Seed 004: "JobEvent and DatasetEvent carry design-time metadata"; the fold keeps the
    latest of each facet (seed 004, "the latest facet replaces the earlier"). An old design
    whose facet no later one carries is still read: pruning it changed the plan."""
    store.append(_design(kind, builders.at(1), "documentation", "ownership"))
    store.append(_design(kind, builders.at(2), "ownership"))  # documentation still from 1
    store.append(_design(kind, builders.at(3), "tags"))  # the latest
    store.append(_design(kind, builders.at(0), "tags", "ownership"))  # late, superseded
    _age(store, 20, kind=kind)
    result = store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)
    assert _kept_designs(store, kind) == [builders.at(1), builders.at(2), builders.at(3)]
    assert result.events_removed == 1
    # A later design carrying every facet of the first three supersedes them.
    store.append(_design(kind, builders.at(4), "documentation", "ownership", "tags"))
    _age(store, 20, kind=kind)
    store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)
    assert _kept_designs(store, kind) == [builders.at(4)]


def test_a_job_event_listing_the_datasets_stays_when_a_later_one_only_adds_a_facet(
    store: EventStore,
) -> None:
    """The job's declared inputs and outputs are those of its latest JobEvent that lists any
    (``mapper.fold``): a later JobEvent with only a documentation facet let retention prune the
    design, and the job's declared lineage vanished from the plan (the cleanup removed it)."""
    table = builders.dataset("public.out", "postgres://db")
    store.append(_design("JobEvent", builders.at(1), "sql", outputs=[table]))
    store.append(_design("JobEvent", builders.at(2), "sql"))
    store.append(_design("JobEvent", builders.at(0), outputs=[table]))  # an older design
    _age(store, 20, kind="JobEvent")
    store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)
    assert _kept_designs(store, "JobEvent") == [builders.at(1), builders.at(2)]


def test_a_dataset_without_a_design_for_job_described_for_days_loses_them_all(
    store: EventStore,
) -> None:
    """Like a job with no event for ``jobDescribedForDays``: no longer described."""
    store.append(_design("DatasetEvent", builders.at(1), "documentation"))
    store.append(builders.dataset_event("public.fresh", "postgres://db", time=builders.at(1)))
    _age(store, 31, kind="DatasetEvent")
    store.append(builders.dataset_event("public.fresh", "postgres://db", time=builders.at(2)))
    store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)
    kept = [(s.payload["dataset"]["name"], s.payload["eventTime"]) for s in store.events()]
    assert kept == [("public.fresh", builders.at(2))]


def test_nothing_recent_is_touched(store: EventStore) -> None:
    for i in range(5):
        store.append(event("fresh", run=f"f{i}"))
    result = store.retain(raw_events_days=14, job_described_for_days=30)
    assert result.events_removed == 0 and len(list(store.events())) == 5


def test_deletes_run_in_small_batches(store: EventStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retention_module, "DELETE_BATCH", 3)
    _add(store, "busy", [f"b{i}" for i in range(10)], days_ago=20)
    result = store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)
    assert result.events_removed == 18 and _runs(store, "busy") == {"b9"}


def test_negative_days_are_refused(store: EventStore) -> None:
    with pytest.raises(ValueError, match="negative"):
        store.retain(raw_events_days=-1, job_described_for_days=30)


def test_ids_are_never_reused_after_everything_is_pruned(store: EventStore) -> None:
    store.append(dataset_event("a"))
    first = store.last_id()
    store.retain(
        raw_events_days=0, job_described_for_days=0, now=datetime.now(UTC) + timedelta(days=1)
    )
    assert store.last_id() == 0
    store.append(dataset_event("b"))
    (again,) = store.events()
    assert again.id > first  # a cursor saved before the prune does not skip the new event


@pytest.mark.parametrize(
    ("now", "days_ago", "kept"),
    [
        # an event received on a UTC day goes once that day is more than raw_events_days behind
        (NOW + timedelta(hours=10), 14.3, True),  # received on the day 14 days back: stays
        (NOW + timedelta(hours=10), 14.5, False),  # received the day before it: goes
        (NOW + timedelta(hours=23), 14.9, True),  # nearly 15 days old, still on that day
        (NOW, 14.0001, False),  # at midnight the day before goes
        (NOW, 13.9999, True),
    ],
)
def test_raw_events_go_a_whole_day_at_a_time(
    store: EventStore, now: datetime, days_ago: float, kept: bool
) -> None:
    """Pruned by the day, not by the hour: a job's old runs go at the first sync of a day, and
    the syncs after it that day find its kept fold whole (``retention.prune_before``)."""
    _add(store, "hourly", ["old"], days_ago=(NOW - now).total_seconds() / 86400 + days_ago)
    _add(store, "hourly", ["latest"], days_ago=0)
    store.retain(raw_events_days=14, job_described_for_days=30, now=now)
    assert ("old" in _runs(store, "hourly")) is kept


def test_hourly_syncs_prune_once_a_day(store: EventStore) -> None:
    """A job that ran every hour 14 days back: the syncs of a day remove none of its runs, the
    first of the next day removes that day's (all but the latest run)."""
    for hour in range(24):
        _add(store, "hourly", [f"h{hour}"], days_ago=14 - hour / 24)
    _add(store, "hourly", ["latest"], days_ago=0)
    removed = [
        store.retain(
            raw_events_days=14, job_described_for_days=30, now=NOW + timedelta(hours=hours)
        ).events_removed
        for hours in (0, 1, 6, 23.5, 24, 25)
    ]
    assert removed == [0, 0, 0, 0, 48, 0]
    assert _runs(store, "hourly") == {"latest"}


@pytest.mark.parametrize(
    ("latest_state", "case"),
    [
        ("START", "still running"),
        ("RUNNING", "a streaming job between snapshots"),
        ("FAIL", "failing since its last success"),
        ("ABORT", "aborted"),
    ],
)
def test_the_latest_description_of_a_job_still_described_is_kept(
    store: EventStore, latest_state: str, case: str
) -> None:
    """docs/removal-of-deprecated-metadata.md: "Raw events are pruned after
    retention.rawEventsDays ..., but the latest description of a job that is still described is
    kept." A job is described by its latest completed run (its flows, orchestration and checks
    come from it: ``JobFold.latest_completed_group``), not only by its latest run: a run that
    started since, and has not completed, must not make retention prune the completed one."""
    _add(store, "weekly", ["done-1"], days_ago=30)
    _add(store, "weekly", ["done-2"], days_ago=20)
    store.append(event("weekly", run="open", event_type=latest_state))
    store.retain(raw_events_days=14, job_described_for_days=45, now=NOW)
    assert _runs(store, "weekly") == {"done-2", "open"}, case


def test_the_latest_description_is_the_latest_in_event_time_not_in_arrival(
    store: EventStore,
) -> None:
    """A run that arrives after a newer one (events ingested from the lost-events file, a
    producer that sends late) is not the job's latest run: the mapper orders runs by eventTime
    (``mapper.fold``), so retention must keep the run the mapper describes the job by."""
    newer, older = "2026-05-10T10:00:00Z", "2026-05-01T10:00:00Z"
    for run, time in (("newer", newer), ("older", older)):  # the older run arrives last
        for kind in ("START", "COMPLETE"):
            store.append(event("late", run=run, event_type=kind, time=time))
    _age(store, 20, runs=["newer", "older"])
    store.retain(raw_events_days=14, job_described_for_days=45, now=NOW)
    assert _runs(store, "late") == {"newer"}


@pytest.mark.parametrize(
    ("state", "previous"), [("DROP", None), ("RENAME", ("postgres://db", "public.t"))]
)
def test_a_run_that_dropped_or_renamed_a_table_stays_while_a_description_of_it_may(
    store: EventStore, state: str, previous: tuple[str, str] | None
) -> None:
    """docs/facet-support.md: a DROP takes effect "when no event mentions the dataset after it",
    and a RENAME's previous name is no longer described. Job A wrote ``public.t`` (its only run,
    kept as its latest description); job B dropped (or renamed) it in a run that is not B's
    latest: retention pruned that run and the table came back at the next snapshot (a renamed
    one's new name was removed by the cleanup, the old one re-created)."""
    from airflow_blindata.mapper.build import build

    table = builders.dataset("public.t", "postgres://db")
    ended = builders.dataset(
        "public.t" if previous is None else "public.t2",
        "postgres://db",
        facets=builders.lifecycle_facet(state, previous),
    )
    times = {"a1": builders.at(0, day="2026-05-06"), "b1": builders.at(0, day="2026-05-07")}
    store.append(event("A", run="a1", time=times["a1"], outputs=[table]))
    store.append(event("B", run="b1", time=times["b1"], outputs=[ended]))
    store.append(
        event(
            "B",
            run="b2",
            time=builders.at(0, day="2026-05-08"),
            outputs=[builders.dataset("public.other", "postgres://db")],
        )
    )
    _age(store, 26, runs=["a1"])
    _age(store, 25, runs=["b1"])
    _age(store, 24, runs=["b2"])

    store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)

    assert _runs(store, "B") == {"b1", "b2"}
    plan = build([s.payload for s in store.events()], builders.definition(builders.policy()))
    assert "public.t" not in {entity.key.name for entity in plan.entities}
    # once every description it could undo is gone too, so is it
    store.retain(raw_events_days=14, job_described_for_days=30, now=NOW + timedelta(days=6))
    assert _runs(store, "B") == {"b2"} and _runs(store, "A") == set()


def test_a_job_that_drops_its_staging_table_at_every_run_keeps_no_old_run_for_it(
    store: EventStore,
) -> None:
    """Only a DROP that may still undo a description is kept: one the job's latest run (kept
    anyway) follows with its own mention of the table is not (a review found every DROP run
    kept for ``job_described_for_days``: 54 of 80 runs instead of 28)."""
    staging = builders.dataset("public.tmp", "postgres://db")
    dropped = builders.dataset(
        "public.tmp", "postgres://db", facets=builders.lifecycle_facet("DROP")
    )
    for number, days_ago in enumerate((25, 24, 23, 22, 1)):
        run = f"s{number}"
        time = builders.at(0, day=f"2026-05-{10 + number:02d}")
        store.append(event("S", run=run, event_type="START", time=time, outputs=[staging]))
        store.append(event("S", run=run, time=time, outputs=[dropped]))
        _age(store, days_ago, runs=[run])

    store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)

    assert _runs(store, "S") == {"s4"}


def test_a_drop_stays_when_only_a_run_before_it_names_the_table_again(store: EventStore) -> None:
    """A run kept anyway names the table again only after the DROP: b1 completed writing it (kept
    as the latest completed run), b2 dropped it and failed, b3 is running. b2 was pruned, and
    the table came back (a review of the rule above)."""
    table = builders.dataset("public.t", "postgres://db")
    dropped = builders.dataset("public.t", "postgres://db", facets=builders.lifecycle_facet("DROP"))
    for run, day, kinds, outputs in (
        ("b1", "2026-05-10", ("START", "COMPLETE"), [table]),
        ("b2", "2026-05-11", ("START", "FAIL"), [dropped]),
        ("b3", "2026-05-12", ("START",), []),
    ):
        for second, kind in enumerate(kinds):
            time = builders.at(second, day=day)
            store.append(event("B", run=run, event_type=kind, time=time, outputs=outputs))
    _age(store, 20, runs=["b1", "b2", "b3"])

    store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)

    assert _runs(store, "B") == {"b1", "b2", "b3"}


def test_a_drop_whose_time_could_not_be_read_stops_no_retention(store: EventStore) -> None:
    """An eventTime the store cannot place (``0001-01-01T00:00:00+05:00``) is kept without a
    time: comparing it stopped the retention of every job (a review)."""
    dropped = builders.dataset("public.t", "postgres://db", facets=builders.lifecycle_facet("DROP"))
    unreadable = "0001-01-01T00:00:00+05:00"
    store.append(event("S", run="s0", event_type="START", time=unreadable, outputs=[dropped]))
    store.append(event("S", run="s0", time=builders.at(0, day="2026-05-10"), outputs=[dropped]))
    store.append(event("S", run="s1", time=builders.at(0, day="2026-05-31")))
    _age(store, 20, runs=["s0"])
    _age(store, 1, runs=["s1"])

    store.retain(raw_events_days=14, job_described_for_days=30, now=NOW)

    assert _runs(store, "S") == {"s0", "s1"}
