"""A folded job kept as text is the same job when loaded: the next snapshot may skip its events.

Named after issue "Scale": "keep in the store what is needed to skip re-folding jobs that
received nothing new (for example each job's folded description and a digest)".
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.cache import dump_folded, fold_settings, load_folded
from airflow_blindata.mapper.fold import FoldBuilder, fold_jobs
from airflow_blindata.mapper.quality import quality_retainer
from airflow_blindata.mapper.reading import read_job_events
from airflow_blindata.mapper.report import Report
from tests.builders import definition

from .test_fold import ALL_DBT, dbt_events
from .test_reading import histories, raw_event

DEFINITION = definition()


def round_trip(events: list[Any]) -> tuple[Any, Any]:
    """The fold of ``events`` job by job, directly and through dump and load."""
    direct, loaded = FoldBuilder(), FoldBuilder()
    retain = quality_retainer(DEFINITION)
    for folded in fold_jobs(read_job_events(events, Report()), retain):
        direct.add_folded(folded)
        again, _ = load_folded(dump_folded(folded, Report()))
        assert again.job == folded.job
        loaded.add_folded(again)
    return direct.result(), loaded.result()


def test_the_dbt_fixtures_load_as_they_were_folded() -> None:
    events = dbt_events(*ALL_DBT)
    random.Random(3).shuffle(events)
    direct, loaded = round_trip(events)
    assert loaded == direct
    assert loaded.model_dump() == direct.model_dump()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=histories())
def test_any_history_loads_as_it_was_folded(events: list[dict[str, Any]]) -> None:
    direct, loaded = round_trip(events)
    assert loaded == direct


def test_the_report_of_reading_the_events_is_kept_with_the_fold() -> None:
    report = Report()
    events = read_job_events(dbt_events(*ALL_DBT), report)
    (first, *_) = fold_jobs(events)
    _, loaded = load_folded(dump_folded(first, report))
    assert loaded == report and loaded.counters["eventsRead"] > 0


def test_a_fold_is_kept_only_under_the_same_quality_settings() -> None:
    other = JobDefinition.from_dict(
        {**DEFINITION.model_dump(by_alias=True), "quality": {"enabled": False}}
    )
    assert fold_settings(DEFINITION) == fold_settings(
        JobDefinition.from_dict(DEFINITION.model_dump(by_alias=True))
    )
    assert fold_settings(other) != fold_settings(DEFINITION)
    assert build(dbt_events(*ALL_DBT), DEFINITION).entities  # the fixtures map (a sanity check)


def _text(model: Any) -> str:
    return json.dumps(model.model_dump(mode="json"), sort_keys=True)  # NaN != NaN: as text


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), -float("inf"), 10**30, 1.5e-320, "é \u2028 \U0001f600"]
)
def test_a_fold_with_values_json_writes_oddly_loads_as_it_was_folded(value: Any) -> None:
    """Odd floats, big integers and non-ASCII text come back as folded from the kept text."""
    metrics = {"dataQualityMetrics": {"rowCount": 3, "columnMetrics": {"c": {"sum": value}}}}
    facets = {"acme": {"_producer": "p", "_schemaURL": "https://acme/x.json", "v": value}}
    event = raw_event(
        "COMPLETE",
        1,
        "r1",
        job_facets=facets,
        outputs=[{"namespace": "postgres://h:5432", "name": "d.s.t", "facets": facets}],
    )
    event["outputs"][0]["outputFacets"] = metrics if isinstance(value, float) else {}
    (folded,) = fold_jobs(read_job_events([event], Report()), quality_retainer(DEFINITION))
    again, _ = load_folded(dump_folded(folded, Report()))
    assert _text(again.job) == _text(folded.job)
    assert {k: _text(m.fold(k)) for k, m in again.datasets.items()} == {
        k: _text(m.fold(k)) for k, m in folded.datasets.items()
    }
