"""Folding job by job (a snapshot's ``FoldBuilder``) gives what one fold of every event gives.

Named after design 3.3: "a snapshot folds one job at a time and keeps only what the catalog
needs, so memory follows the size of the catalog, never the length of the history".
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.events import Event, EventType, RunEvent, parse_event
from airflow_blindata.mapper.fold import Fold, FoldBuilder, JobKey, RunFold, fold
from airflow_blindata.mapper.fold.core import latest_naming_datasets
from airflow_blindata.mapper.quality import quality_retainer
from tests.builders import definition
from tests.mapper.helpers import FACET_VALUES, JOB, NS, PARENT, as_dict, at, dataset, doc, event

DEFINITION = definition()


def dataset_event(second: int, name: str, facets: dict[str, Any]) -> Event:
    parsed = parse_event({"eventTime": at(second), "dataset": dataset(name, facets=facets)})
    assert parsed.event is not None
    return parsed.event


PARENTS = [{"parent": PARENT | {"run": {"runId": p}}} for p in ("p1", "p2")]


def by_job(events: list[Event]) -> dict[str, list[Event]]:
    groups: dict[str, list[Event]] = {}
    for item in events:
        job = getattr(item, "job", None)
        groups.setdefault(f"{job.namespace}/{job.name}" if job else "", []).append(item)
    return groups


@st.composite
def mixed_events(draw: st.DrawFn) -> Event:
    """Run, job and dataset events on a few datasets, with dataset facets set and deleted."""
    names = st.sampled_from(["a", "b", "c"])

    def facets() -> dict[str, Any]:
        chosen: dict[str, Any] = {}
        if draw(st.booleans()):
            chosen |= doc(draw(FACET_VALUES))
        if draw(st.booleans()):
            chosen["documentation"] = {"_deleted": True}
        if draw(st.booleans()):
            chosen["acme"] = {"v": draw(st.integers(0, 2))}
        return chosen

    second = draw(st.integers(0, 3))
    if draw(st.integers(0, 4)) == 0:
        return dataset_event(second, draw(names), facets())
    return event(
        draw(st.sampled_from(["START", "COMPLETE", "FAIL", "RUNNING", "JOB"])),
        second,
        run_id=draw(st.sampled_from(["r1", "r2", "r3"])),
        job=draw(st.sampled_from(["j1", "j2", "j3"])),
        run_facets=draw(st.sampled_from([{}, {}, *(PARENTS)])),
        job_facets={"sql": {"query": draw(FACET_VALUES)}},
        inputs=[dataset(name, facets=facets()) for name in draw(st.lists(names, max_size=2))],
        outputs=[dataset(name, facets=facets()) for name in draw(st.lists(names, max_size=2))],
    )


def folded_by_job(events: list[Event], data: st.DataObject, retain: bool) -> Fold:
    groups = by_job(events)
    builder = FoldBuilder(retain=quality_retainer(DEFINITION) if retain else None)
    for name in data.draw(st.permutations(sorted(groups))):
        group = groups[name]
        if name:
            builder.add(group)
        else:  # DatasetEvents may come in any number of groups
            cut = data.draw(st.integers(0, len(group)))
            builder.add(group[:cut])
            builder.add(group[cut:])
    return builder.result()


@given(events=st.lists(mixed_events(), min_size=1, max_size=10), data=st.data())
def test_folding_one_job_at_a_time_gives_the_fold_of_every_event(
    events: list[Event], data: st.DataObject
) -> None:
    """Dataset facets merged across jobs keep the rules: latest wins, ``_deleted`` removes."""
    assert as_dict(folded_by_job(events, data, retain=False)) == as_dict(fold(events))


def summary(run: RunFold | None) -> tuple[str, Any] | None:
    return (run.run_id, run.state) if run else None


@given(events=st.lists(mixed_events(), min_size=1, max_size=10), data=st.data())
def test_a_snapshot_keeps_what_the_mapping_reads(events: list[Event], data: st.DataObject) -> None:
    """The job's facets, its latest and latest completed runs, what it wrote, every dataset."""
    whole, kept = fold(events), folded_by_job(events, data, retain=True)
    assert kept.datasets == whole.datasets
    for job, slim in zip(whole.jobs, kept.jobs, strict=True):
        assert (slim.key, slim.facets, slim.written) == (job.key, job.facets, job.written)
        assert (slim.inputs, slim.outputs) == (job.inputs, job.outputs)
        assert summary(slim.latest) == summary(job.latest)
        assert slim.latest == job.latest
        assert slim.latest_completed == job.latest_completed
        assert slim.latest_completed_group == job.latest_completed_group
        # what a streaming job restarted stands on (seed 004)
        assert latest_naming_datasets(slim.runs) == latest_naming_datasets(job.runs)
        # no quality facets here: nothing else is kept than the latest run, the latest that
        # names datasets (seed 004), the latest completed group, and the outline of the two
        # runs started last (``_latest_started``: the latest may have started before them)
        assert len(slim.runs) <= 4 + len(job.latest_completed_group)


def test_runs_without_quality_content_are_dropped_whatever_their_number() -> None:
    """Peak memory must not grow with the number of runs per job."""
    events = []
    for number in range(50):
        events.append(event("START", 0, run_id=f"r{number:02d}"))
        events.append(event("COMPLETE", 1 + number % 50, run_id=f"r{number:02d}"))
    builder = FoldBuilder(retain=quality_retainer(DEFINITION))
    builder.add(events)
    (job,) = builder.result().jobs
    # the latest whole, and the outline of the run started before it (``_latest_started``)
    assert [run.run_id for run in job.runs] == ["r48", "r49"]
    assert not (job.runs[0].run_facets or job.runs[0].inputs or job.runs[0].outputs)


def test_runs_with_results_keep_only_their_quality_facets() -> None:
    """Seed 003: one result per check and run, so every run with assertions stays."""
    assertions = {
        "dataQualityAssertions": {"assertions": [{"assertion": "not_null", "success": True}]}
    }
    events = [
        event(
            "COMPLETE",
            number,
            run_id=f"r{number}",
            run_facets={"acme": {"v": 1}},
            inputs=[dataset("a", facets=doc("x"), inputFacets=assertions)],
        )
        for number in range(3)
    ]
    builder = FoldBuilder(retain=quality_retainer(DEFINITION))
    builder.add(events)
    (job,) = builder.result().jobs
    assert [run.run_id for run in job.runs] == ["r0", "r1", "r2"]
    older = job.runs[0]
    assert older.run_facets == {} and older.job_facets == {}
    assert sorted(older.inputs[0].input_facets) == ["dataQualityAssertions"]
    assert older.inputs[0].facets == {}
    assert "acme" in job.runs[-1].run_facets  # the latest run is kept whole


def test_a_job_split_over_two_groups_is_combined_not_an_error() -> None:
    """Design 3.4: the mapper is total; a job that comes twice still gives one job."""
    builder = FoldBuilder()
    builder.add([event("START", 1, job_facets=doc("old"))])
    builder.add([event("COMPLETE", 2, job_facets=doc("new"), outputs=[dataset("a")])])
    (job,) = builder.result().jobs
    assert job.latest is not None and job.latest.state is EventType.COMPLETE
    assert job.facets == fold_of_both().facets  # the later group's description wins
    assert [key.name for key in job.written] == ["a"]


def fold_of_both() -> Any:
    both = fold(
        [
            event("START", 1, job_facets=doc("old")),
            event("COMPLETE", 2, job_facets=doc("new"), outputs=[dataset("a")]),
        ]
    )
    return both.jobs[0]


def test_the_job_remembers_every_dataset_its_runs_wrote() -> None:
    """Seed 001: a DatasetEvent's lineage of a dataset a job writes, in any run, is published
    beside the job's flows and counted (``datasetLineageBesideJobs``)."""
    events = [
        event("COMPLETE", 1, run_id="old", outputs=[dataset("a")]),
        event("COMPLETE", 2, run_id="new", outputs=[dataset("b")]),
    ]
    builder = FoldBuilder(retain=quality_retainer(DEFINITION))
    builder.add(events)
    (job,) = builder.result().jobs
    assert [str(key) for key in job.written] == [f"{NS}/a", f"{NS}/b"]
    assert isinstance(events[0], RunEvent) and job.key == JobKey(JOB.namespace, JOB.name)
