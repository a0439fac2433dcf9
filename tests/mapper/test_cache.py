"""A folded job kept as text is the same job when loaded: the next snapshot may skip its events.

Named after issue "Scale": "keep in the store what is needed to skip re-folding jobs that
received nothing new (for example each job's folded description and a digest)".
"""

from __future__ import annotations

import json
import random
from dataclasses import fields
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from airflow_blindata.definition import JobDefinition
from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.fold import (
    FoldBuilder,
    FoldedJob,
    InputFold,
    JobFold,
    OutputFold,
    RunFold,
    fold_jobs,
)
from airflow_blindata.mapper.fold import kept as cache
from airflow_blindata.mapper.fold.kept import dump_folded, fold_settings, load_kept
from airflow_blindata.mapper.fold.reading import RawFacets, read_job_events
from airflow_blindata.mapper.quality import quality_retainer
from airflow_blindata.mapper.report import Report
from tests.builders import at, definition, job_event
from tests.mapper.helpers import ALL_DBT, as_dict, dbt_events, histories, raw_event

DEFINITION = definition()


def load_folded(text: str) -> tuple[FoldedJob, Report]:
    """The job and the report a kept fold holds."""
    kept = load_kept(text)
    return kept.folded, kept.report


def round_trip(events: list[Any], *, as_text: bool = False) -> tuple[Any, Any]:
    """The fold of ``events`` job by job, directly and through dump and load: written from the
    models, and from the JSON objects the facets were read from (what a snapshot writes), decoded
    or, for events given as text, as their text."""
    direct, loaded = FoldBuilder(), FoldBuilder()
    retain = quality_retainer(DEFINITION)
    raw_facets: RawFacets = {}
    given = [_as_text(event) for event in events] if as_text else events
    for folded in fold_jobs(read_job_events(given, Report(), raw_facets=raw_facets), retain):
        direct.add_folded(folded)
        again, _ = load_folded(dump_folded(folded, Report()))
        assert again.job == folded.job
        from_raw, _ = load_folded(dump_folded(folded, Report(), raw_facets))
        assert from_raw.job == folded.job
        assert _mentions(from_raw) == _mentions(again)
        loaded.add_folded(from_raw)
    return direct.result(), loaded.result()


def _as_text(event: Any) -> str:
    return json.dumps(event) if isinstance(event, dict) else event.model_dump_json(by_alias=True)


def _mentions(folded: FoldedJob) -> dict[Any, Any]:
    return {k: (m.mentions, m.first, m.last) for k, m in folded.datasets.items()}


@pytest.mark.parametrize("as_text", [False, True])
def test_the_dbt_fixtures_load_as_they_were_folded(as_text: bool) -> None:
    events = dbt_events(*ALL_DBT)
    random.Random(3).shuffle(events)
    direct, loaded = round_trip(events, as_text=as_text)
    assert loaded == direct
    assert as_dict(loaded) == as_dict(direct)


@given(events=histories(), as_text=st.booleans())
def test_any_history_loads_as_it_was_folded(events: list[dict[str, Any]], as_text: bool) -> None:
    direct, loaded = round_trip(events, as_text=as_text)
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
    return json.dumps(as_dict(model, mode="json"), sort_keys=True)  # NaN != NaN: as text


@pytest.mark.parametrize("text", ["null", "{}", '{"job": {}}', '{"job": NaN}', "[1e400]"])
def test_a_text_that_is_not_a_kept_fold_fails_to_load_with_a_value_error(text: str) -> None:
    """A snapshot reads the job's events whole when its kept fold fails with ``ValueError``
    (``plans.store._load``); msgspec's errors are ``ValueError`` only from 0.21 on, and Airflow
    3.2 installs with 0.19: the sync failed there instead of reading the events."""
    with pytest.raises(ValueError):
        load_kept(text)


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), -float("inf"), 10**30, 1.5e-320, "é \u2028 \U0001f600"]
)
@pytest.mark.parametrize("as_text", [False, True])
def test_a_fold_with_values_json_writes_oddly_loads_as_it_was_folded(
    value: Any, as_text: bool
) -> None:
    """Odd floats, big integers and non-ASCII text come back as folded from the kept text,
    written from the models, from the decoded objects or from the producer's text."""
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
    raw_facets: RawFacets = {}
    given = json.dumps(event) if as_text else event
    read = read_job_events([given], Report(), raw_facets=raw_facets)
    (folded,) = fold_jobs(read, quality_retainer(DEFINITION))
    for raw in (None, raw_facets):
        again, _ = load_folded(dump_folded(folded, Report(), raw))
        assert _text(again.job) == _text(folded.job)
        assert {k: _text(m.fold(k)) for k, m in again.datasets.items()} == {
            k: _text(m.fold(k)) for k, m in folded.datasets.items()
        }


SCHEMA = {"schema": {"fields": [{"name": "id", "type": "int"}]}}
URL_SCHEMA = "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json"


def _dataset(name: str, facets: dict[str, Any]) -> dict[str, Any]:
    return {"namespace": "postgres://h:5432", "name": name, "facets": facets}


def _kept(events: list[dict[str, Any]]) -> tuple[Any, Any, str]:
    """The job of ``events`` folded, loaded again and its text, written from the facets' JSON
    objects; written from the models, it loads the same."""
    raw_facets: RawFacets = {}
    read = read_job_events(events, Report(), raw_facets=raw_facets)
    (folded,) = fold_jobs(read, quality_retainer(DEFINITION))
    text = dump_folded(folded, Report(), raw_facets)
    again, _ = load_folded(text)
    from_models, _ = load_folded(dump_folded(folded, Report()))
    for loaded in (again, from_models):
        assert loaded.job == folded.job
        assert _mentions(loaded) == _mentions(folded)
    return folded, again, text


def test_a_mention_of_a_kept_runs_facet_is_written_once_and_shared_when_loaded() -> None:
    events = [
        raw_event("START", 1, "r1", inputs=[_dataset("d.s.a", SCHEMA)]),
        raw_event("COMPLETE", 2, "r1", outputs=[_dataset("d.s.b", SCHEMA)]),
    ]
    _, again, text = _kept(events)
    assert text.count('"type":"int"') == 2  # one per dataset, in the run; none in the mentions
    (run,) = again.job.runs
    key = next(key for key in again.datasets if key.name == "d.s.b")
    assert again.datasets[key].mentions["schema"].facet is run.outputs[0].facets["schema"]


def test_a_fold_written_by_json_dumps_places_its_mentions_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fallback for what pydantic-core refuses writes the same text."""
    events = [raw_event("COMPLETE", 1, "r1", outputs=[_dataset("d.s.a", SCHEMA)])]
    _, _, text = _kept(events)

    def refuse(*args: Any, **kwargs: Any) -> bytes:
        raise ValueError("refused")

    monkeypatch.setattr(cache, "to_json", refuse)
    _, again, plain = _kept(events)
    assert json.loads(plain) == json.loads(text) and '"at":[0,"o",0]' in plain
    ((_, mentions),) = again.datasets.items()
    assert mentions.mentions["schema"].facet is again.job.runs[0].outputs[0].facets["schema"]


def test_a_mention_of_a_dataset_the_job_declares_is_placed_in_the_job() -> None:
    """A JobEvent (design time) later than the job's runs: its datasets are the job's own."""
    events = [
        raw_event("COMPLETE", 1, "r1", outputs=[_dataset("d.s.a", SCHEMA)]),
        job_event(
            "pv.aggregate", namespace="halden", time=at(2), outputs=[_dataset("d.s.b", SCHEMA)]
        ),
    ]
    _, again, text = _kept(events)
    assert '"at":[null,"o",0]' in text
    key = next(key for key in again.datasets if key.name == "d.s.b")
    assert again.datasets[key].mentions["schema"].facet is again.job.outputs[0].facets["schema"]


def test_a_mention_of_a_dropped_runs_facet_is_written_whole() -> None:
    """r1 wrote d.s.a and is dropped (r2 is the latest completed run, r3 the latest): its
    mention of d.s.a is in no kept run, so the fold carries the facet itself."""
    events = [
        raw_event("COMPLETE", 1, "r1", outputs=[_dataset("d.s.a", SCHEMA)]),
        raw_event("COMPLETE", 2, "r2", outputs=[_dataset("d.s.b", SCHEMA)]),
        raw_event("START", 3, "r3", inputs=[_dataset("d.s.b", SCHEMA)]),
    ]
    folded, again, text = _kept(events)
    assert [run.run_id for run in again.job.runs] == ["r2", "r3"]
    key = next(key for key in again.datasets if key.name == "d.s.a")
    assert (
        again.datasets[key].mentions["schema"].facet
        == folded.datasets[key].mentions["schema"].facet
    )
    # r2's output, r3's input, r1's mention, and r1's again as the schema its writer sent
    # (``fold.AS_WRITTEN``: a mention of its own, written whole too)
    assert text.count('"type":"int"') == 4


def test_a_deleted_mention_is_kept_deleted() -> None:
    events = [
        raw_event("START", 1, "r1", outputs=[_dataset("d.s.a", SCHEMA)]),
        raw_event("COMPLETE", 2, "r1", outputs=[_dataset("d.s.a", {"schema": {"_deleted": True}})]),
    ]
    folded, again, _ = _kept(events)
    ((key, mentions),) = again.datasets.items()
    assert mentions.mentions["schema"].facet is None
    assert again.datasets[key].fold(key) == folded.datasets[key].fold(key)


@pytest.mark.parametrize(
    "place", [[5, "o", 0], [0, "x", 0], [0, "o", 9], [0, "o", -1], ["0", "o", 0]]
)
def test_a_mention_placed_nowhere_in_its_job_is_refused(place: list[Any]) -> None:
    _, _, text = _kept([raw_event("COMPLETE", 1, "r1", outputs=[_dataset("d.s.a", SCHEMA)])])
    data = json.loads(text)
    data["datasets"][0]["mentions"]["schema"]["at"] = place
    with pytest.raises(ValueError):
        load_folded(json.dumps(data))


def test_a_fold_of_another_format_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = fold_settings(DEFINITION)
    monkeypatch.setattr(cache, "FORMAT", cache.FORMAT - 1)
    assert fold_settings(DEFINITION) != settings


def test_a_facet_read_from_an_event_is_kept_as_the_producer_sent_it() -> None:
    """Written from the JSON object it was read from, not from its model: no nulls for what the
    producer left out (a smaller text, and half the cost to write); it loads as the same facet."""
    events = [raw_event("COMPLETE", 1, "r1", outputs=[_dataset("d.s.a", SCHEMA)])]
    folded, again, text = _kept(events)
    from_models = dump_folded(folded, Report())
    assert '"_producer":null' in from_models and '"_producer":null' not in text
    assert len(text) < len(from_models)
    assert again.job.runs[0].outputs[0].facets == folded.job.runs[0].outputs[0].facets


def test_a_facet_read_from_an_event_text_is_kept_as_that_text() -> None:
    """An event given as text (as the store gives it): each facet is written as the text it was
    read from, byte for byte, without decoding and encoding it again."""
    facets = {"schema": {"fields": [{"name": "id", "type": "int", "x": 1.50}]}}
    text = json.dumps(raw_event("COMPLETE", 1, "r1", outputs=[_dataset("d.s.a", facets)]))
    raw_facets: RawFacets = {}
    read = read_job_events([text], Report(), raw_facets=raw_facets)
    (folded,) = fold_jobs(read, quality_retainer(DEFINITION))
    kept = dump_folded(folded, Report(), raw_facets)
    assert '{"fields": [{"name": "id", "type": "int", "x": 1.5}]}' in kept  # as json.dumps wrote it
    again, _ = load_folded(kept)
    assert again.job == folded.job and _mentions(again) == _mentions(folded)


def _decoded_reading(text: str, raw_facets: RawFacets | None = None) -> cache.KeptFold:
    """The kept fold read from the text decoded as ``json.loads`` decodes it, each facet typed
    from its decoded object by ``read_facet``: what ``load_kept`` gives from the text."""
    return cache._Reader(raw_facets).kept(cache._decoded(text))


def _same_both_ways(text: str) -> cache.KeptFold:
    loaded, decoded = load_kept(text), _decoded_reading(text)
    assert loaded.folded.job == decoded.folded.job
    assert _mentions(loaded.folded) == _mentions(decoded.folded)
    assert loaded.folded.runs_seen == decoded.folded.runs_seen
    assert (loaded.report, loaded.until) == (decoded.report, decoded.until)
    return loaded


MINE = {"mine": {"_schemaURL": URL_SCHEMA, "fields": [{"name": "id", "type": "int"}]}}


@pytest.mark.parametrize(
    "facets",
    [
        SCHEMA,
        MINE,  # an unknown key filed by its _schemaURL: under the spec's key
        {**MINE, **SCHEMA},  # the spec's key taken: kept under its own, read as its schema's
        {"acme": {"_schemaURL": "https://acme/x.json", "v": [1, {"w": None}], "é": "\u2028"}},
        {"schema": {"fields": [], "deleted": True}},  # deleted by the field's name
    ],
)
@pytest.mark.parametrize("as_text", [False, True])
def test_odd_facets_load_as_folded_and_as_the_decoded_reading_reads_them(
    facets: dict[str, Any], as_text: bool
) -> None:
    # run facets are not deletable: a marker is malformed, dropped; the others are kept
    run_facets = {"acme": {"_deleted": True}, "nominalTime": {"_deleted": True}, "own": {"v": 1}}
    event = raw_event(
        "COMPLETE",
        1,
        "r1",
        run_facets=run_facets,
        job_facets=facets,
        outputs=[{**_dataset("d.s.a", facets), "outputFacets": facets}],
    )
    raw_facets: RawFacets = {}
    given = [json.dumps(event)] if as_text else [event]
    read = read_job_events(given, Report(), raw_facets=raw_facets)
    (folded,) = fold_jobs(read, quality_retainer(DEFINITION))
    assert list(folded.job.runs[0].run_facets) == ["own"]  # the markers are not
    for raw in (None, raw_facets):
        loaded = _same_both_ways(dump_folded(folded, Report(), raw))
        assert loaded.folded.job == folded.job
        assert _mentions(loaded.folded) == _mentions(folded)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 10**30, 1.5e-320])
def test_a_kept_text_msgspec_refuses_is_read_decoded(value: Any) -> None:
    metrics = {"dataQualityMetrics": {"rowCount": 3, "columnMetrics": {"c": {"sum": value}}}}
    event = raw_event(
        "COMPLETE", 1, "r1", outputs=[{**_dataset("d.s.a", {}), "outputFacets": metrics}]
    )
    raw_facets: RawFacets = {}
    (folded,) = fold_jobs(read_job_events([event], Report(), raw_facets=raw_facets))
    _same_both_ways(dump_folded(folded, Report(), raw_facets))


def test_a_lone_surrogate_in_a_kept_text_is_read_decoded() -> None:
    """No event holding one is read, so no fold holds one; a text that does loads as decoded."""
    _, _, text = _kept([raw_event("COMPLETE", 1, "r1", outputs=[_dataset("d.s.a", SCHEMA)])])
    odd = text.replace('"type":"int"', '"type":"\\ud800"', 1)
    assert odd != text
    loaded = _same_both_ways(odd)
    assert loaded.folded.job.runs[0].outputs[0].facets["schema"].fields[0].type == "\ud800"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"fields":[{"name":"id"', '"fields":[{"name":7'),  # a facet its model refuses
        ('"fields":[{', '"fields":"no"'),
        ('"schema":{', '"schema":["a list"],"x":{'),  # not an object
        ('"run_id":"r1"', '"run_id":1'),
        ('"state":"COMPLETE"', '"state":"DONE"'),
        ('"first_event_time":"', '"first_event_time":"x'),
        ('"until":null', '"until":"1"'),
        ('"runs":[', '"runs":[true,'),
        ('"order":["', '"order":[1,"'),
    ],
)
def test_a_damaged_kept_text_is_refused_both_ways(old: str, new: str) -> None:
    _, _, text = _kept([raw_event("COMPLETE", 1, "r1", outputs=[_dataset("d.s.a", SCHEMA)])])
    damaged = text.replace(old, new, 1)
    assert damaged != text
    for read in (load_kept, _decoded_reading):
        with pytest.raises((ValueError, KeyError, TypeError)):
            read(damaged)


def test_a_loaded_fold_kept_again_writes_the_same_text() -> None:
    """Each facet is written as the text it was loaded from, the fold's own fields in order.

    Once: loading may share a facet that two places of the job hold as the same text (a text is
    validated once, ``registry.facet_from_json``), and the fold then writes the second place as
    where the first is. The fold loaded is the same either way."""
    events = [
        raw_event("START", 1, "r1", inputs=[_dataset("d.s.a", SCHEMA)]),
        raw_event("COMPLETE", 2, "r1", outputs=[_dataset("d.s.b", {**SCHEMA, **MINE})]),
        raw_event("COMPLETE", 3, "r2", outputs=[_dataset("d.s.c", SCHEMA)]),
    ]
    raw_facets: RawFacets = {}
    read = read_job_events([json.dumps(e) for e in events], Report(), raw_facets=raw_facets)
    (folded,) = fold_jobs(read, quality_retainer(DEFINITION))
    text = dump_folded(folded, Report(), raw_facets, until=7)
    again: RawFacets = {}
    kept = load_kept(text, again)
    assert all(type(raw) is msgspec.Raw for _, raw in again.values())
    assert kept.folded == folded
    once = dump_folded(kept.folded, kept.report, again, until=kept.until)
    assert load_kept(once).folded == folded
    twice: RawFacets = {}
    kept = load_kept(once, twice)
    assert dump_folded(kept.folded, kept.report, twice, until=kept.until) == once


def test_the_kept_text_types_every_field_of_the_folds_models() -> None:
    """The fold's classes are made of the text's typed fields as they are: every field of each
    class is typed, and nothing making one would do besides (a post-init, a field it computes)
    is missed."""
    pairs = [
        (cache._Input, InputFold),
        (cache._Output, OutputFold),
        (cache._Run, RunFold),
        (cache._Job, JobFold),
    ]
    for struct, model in pairs:
        assert set(struct.__struct_fields__) == {field.name for field in fields(model)}
        assert all(field.init for field in fields(model))
        assert not hasattr(model, "__post_init__") and not issubclass(model, BaseModel)


def test_the_fallback_writer_writes_a_folds_classes_as_msgspec_does() -> None:
    """What msgspec refuses (a lone surrogate) is written by ``json.dumps`` from ``_plain``: the
    fold's dataclasses, their keys, times and facets come out as the same JSON."""
    for folded in fold_jobs(read_job_events(dbt_events(*ALL_DBT), Report())):
        data = {"job": folded.job}
        assert json.loads(json.dumps(cache._plain(data))) == json.loads(cache._json_text(data))


@pytest.mark.parametrize("as_text", [False, True])
def test_a_fold_of_a_rename_and_a_drop_loads_as_it_was_folded(as_text: bool) -> None:
    """A writer's RENAME is mentioned a second time (``DatasetFold.renamed``), under a key of its
    own: a kept fold writes and reads it as the schema facet's written mention."""
    from tests.builders import dataset, lifecycle_facet, run_cycle

    renamed = lifecycle_facet("RENAME", previous=("postgres://db:5432", "d.s.old"))
    events = [
        *run_cycle("etl.rename", run_id="r-1", outputs=[dataset("d.s.new", facets=renamed)]),
        *run_cycle(
            "etl.fill",
            run_id="r-2",
            start_time=at(10),
            end_time=at(11),
            outputs=[dataset("d.s.new", facets=lifecycle_facet("OVERWRITE"))],
        ),
        *run_cycle(
            "etl.drop",
            run_id="r-3",
            start_time=at(20),
            end_time=at(21),
            outputs=[dataset("d.s.gone", facets=lifecycle_facet("DROP"))],
        ),
    ]
    direct, loaded = round_trip(events, as_text=as_text)
    assert loaded == direct
    (new,) = [d for d in loaded.datasets if d.key.name == "d.s.new"]
    assert new.renamed is not None and new.renamed_at is not None
