"""A RunEvent's envelope read from its text without decoding its facets is the envelope a full
read gives, with the keys its containers file facets under; or nothing, and the usual reading.

Named after issue "Scale": "Parse only what contributes. An event whose facets are superseded by
a later event of the same run or job need not have every facet validated".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from airflow_blindata.events import BaseFacet, RunEvent, parse_event
from airflow_blindata.events.envelope import envelope_of, read_envelope, read_whole
from airflow_blindata.events.registry import MEMO_TEXT_LIMIT
from tests.mapper.helpers import histories, raw_event


def _full(text: str) -> Any:
    """The envelope as a full decode then a read without facets gives it."""
    data = json.loads(text)
    parsed = parse_event(data, facets=False)
    assert parsed.event is not None
    return envelope_of(parsed.event, data)  # type: ignore[arg-type]


def _keys(envelope: Any) -> list[tuple[Any, Any, set[str]]]:
    return [(container, location, set(keys)) for container, location, keys in envelope.keys]


@given(events=histories())
def test_an_envelope_read_from_text_is_the_one_a_full_read_gives(
    events: list[dict[str, Any]],
) -> None:
    for event in events:
        text = json.dumps(event)
        envelope = read_envelope(text)
        if envelope is None:  # a string no store can hold, or io facets by field name
            assert "\\ud" in text or "_facets" in text
            continue
        expected = _full(text)
        assert envelope.event == expected.event
        assert _keys(envelope) == _keys(expected)


def _text(**changes: Any) -> str:
    event = raw_event("COMPLETE", 1, "r1", outputs=[{"namespace": "n", "name": "d"}])
    event.update(changes)
    return json.dumps(event, allow_nan=True)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (_text(eventTime=float("nan")), "NaN: msgspec refuses it"),
        (_text(producer="\\ud800"), "an escape of a lone surrogate"),
        (_text(producer="a\\u0000b"), "an escape of NUL"),
        (_text(producer="a\nb\ud800"), "a lone surrogate escaped after another escape"),
        (_text(run=None), "no run: not a RunEvent"),
        (_text(job={"namespace": "n"}), "an invalid envelope"),
        (_text(eventTime="yesterday"), "an invalid envelope"),
        (_text(inputs=[3]), "a dataset that is not an object"),
        (_text(run={"runId": "r1", "facets": []}), "facets that are not an object"),
        (
            _text(outputs=[{"namespace": "n", "name": "d", "output_facets": {}}]),
            "io facets under the model's field name",
        ),
        ("[1, 2]", "not an object"),
        ("{", "not JSON"),
    ],
)
def test_what_the_envelope_reader_cannot_be_sure_of_is_left_to_the_usual_reading(
    text: str, why: str
) -> None:
    assert read_envelope(text) is None, why


def test_names_the_model_accepts_besides_the_wire_names_are_read_too() -> None:
    """``RunEvent`` reads a field by its alias or its name: so does the envelope reader."""
    event = raw_event("COMPLETE", 1, "r1")
    event["event_time"] = event.pop("eventTime")
    event["run"] = {"run_id": "r9"}
    text = json.dumps(event)
    envelope = read_envelope(text)
    assert envelope is not None and envelope.event.run.run_id == "r9"
    assert envelope.event == _full(text).event


PARENT_JOB = {"namespace": "airflow", "name": "etl"}


@pytest.mark.parametrize(
    ("run", "parent"),
    [
        ({"facets": {"parent": {"run": {"runId": "dag-1"}, "job": PARENT_JOB}}}, "dag-1"),
        ({"facets": {"parent": {"run": {"runId": "dag-1"}}}}, "dag-1"),  # malformed: no job
        ({"facets": {"parent": {"run": {"runId": "dag-1"}, "job": 3}}}, "dag-1"),
        # a statement of one instance of a mapped task: grouped under the root, the DAG run
        (
            {
                "facets": {
                    "parent": {"run": {"runId": "task-1"}, "root": {"run": {"runId": "dag-1"}}}
                }
            },
            "dag-1",
        ),
        (
            {"facets": {"parent": {"run": {"runId": "task-1"}, "root": {"run": {"runId": ""}}}}},
            "task-1",
        ),
        ({"facets": {"parent": {"run": {"runId": "task-1"}, "root": "dag-1"}}}, "task-1"),
        ({"facets": {"parent": {"root": {"run": {"runId": "dag-1"}}}}}, None),  # no parent run
        ({"facets": {"parent": {"run": {"runId": ""}, "job": PARENT_JOB}}}, None),
        ({"facets": {"parent": {"run": {"runId": 7}, "job": PARENT_JOB}}}, None),
        ({"facets": {"parent": {"run": {"run_id": "dag-1"}, "job": PARENT_JOB}}}, None),
        ({"facets": {"parent": {"run": "dag-1"}}}, None),
        ({"facets": {"parent": []}}, None),
        ({"facets": {"parent": None}}, None),
        ({"facets": {"nominalTime": {"nominalStartTime": "2026-01-01T00:00:00Z"}}}, None),
        ({"facets": None}, None),
        ({}, None),
        # never read from the wire under its own name
        ({"parentRunId": "wired", "parent_run_id": "wired"}, None),
        ({"parentRunId": 7, "parent_run_id": ["not", "text"]}, None),  # and never refused
        (
            {"parentRunId": "wired", "facets": {"parent": {"run": {"runId": "dag-2"}}}},
            "dag-2",
        ),
    ],
)
def test_the_parent_run_is_read_from_the_raw_facet_alike_in_both_readings(
    run: dict[str, Any], parent: str | None
) -> None:
    """Mapped task instances are grouped by the parent run their ``parent`` facet names (its
    root run when it names one), valid or not: an envelope read without the facets and a whole
    read name the same parent."""
    text = _text(run={"runId": "r1", **run})
    envelope = read_envelope(text)
    assert envelope is not None
    assert envelope.event.run.parent_run_id == parent
    assert envelope.event == _full(text).event
    whole = parse_event(text).event
    assert isinstance(whole, RunEvent) and whole.run.parent_run_id == parent
    from_text = read_whole(envelope)
    assert from_text is not None and from_text[0].event == whole
    assert "parent_run_id" not in json.dumps(whole.model_dump(mode="json"))
    assert "parentRunId" not in whole.model_dump_json()


def test_an_unknown_key_is_filed_as_a_full_read_files_it() -> None:
    """A facet under a key nobody knows whose ``_schemaURL`` names a known one: its raw JSON is
    decoded to file it under the spec's key."""
    url = "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json"
    facets = {"mine": {"_schemaURL": url, "fields": []}, "other": {"v": 1}}
    text = _text(outputs=[{"namespace": "n", "name": "d", "facets": facets}])
    envelope = read_envelope(text)
    assert envelope is not None
    assert _keys(envelope) == _keys(_full(text))
    assert {"schema", "other"} in [keys for _, _, keys in _keys(envelope)]


def test_bytes_are_read_as_text_is() -> None:
    text = _text()
    envelope = read_envelope(text.encode())
    assert envelope is not None and envelope.event == _full(text).event
    assert read_envelope(text.encode("utf-16")) is None  # NUL bytes: the usual reading


def _whole(text: str) -> Any:
    envelope = read_envelope(text)
    assert envelope is not None
    return read_whole(envelope)


def _same_reading(text: str) -> None:
    """``read_whole`` reads what ``parse_event`` reads from the text, issue for issue, and gives
    each facet filed under its own key with the JSON of that key."""
    whole = _whole(text)
    assert whole is not None
    parsed, texts = whole
    assert parsed == parse_event(text)
    assert isinstance(parsed.event, RunEvent)
    containers = [parsed.event.job.facets, parsed.event.run.facets]
    for item in [*parsed.event.inputs, *parsed.event.outputs]:
        containers.append(item.facets)
    containers += [item.input_facets for item in parsed.event.inputs]
    containers += [item.output_facets for item in parsed.event.outputs]
    read = {id(facet) for facets in containers for facet in facets.values()}
    assert {id(facet) for facet, _ in texts} <= read
    for facet, raw in texts:
        assert type(facet).model_validate(json.loads(bytes(raw))) == facet


@given(events=histories())
def test_an_event_read_whole_from_its_envelope_is_the_one_parse_event_reads(
    events: list[dict[str, Any]],
) -> None:
    for event in events:
        text = json.dumps(event)
        if read_envelope(text) is not None:
            _same_reading(text)


URL = "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json"


@pytest.mark.parametrize(
    "facets",
    [
        {"schema": "not an object"},
        {"schema": {"fields": 3}},
        {"schema": {"_deleted": True}},
        {"schema": {"_deleted": 1}},
        {"schema": {"deleted": True, "fields": []}},
        {"documentation": {"description": "d", "_deleted": False}},
        {"mine": {"_schemaURL": URL, "fields": []}},
        {"mine": {"_schemaURL": URL, "fields": []}, "schema": {"fields": []}},
        {"acme": {"v": [1, {"w": None}]}, "documentation": {"description": "d"}},
    ],
)
def test_odd_facets_are_read_whole_as_parse_event_reads_them(facets: dict[str, Any]) -> None:
    """Malformed, deleted, unknown, or filed under the spec's key: in every container."""
    outputs = [{"namespace": "n", "name": "d", "facets": facets, "outputFacets": facets}]
    _same_reading(_text(outputs=outputs))
    _same_reading(_text(run={"runId": "r1", "facets": facets}))
    _same_reading(_text(job={"namespace": "n", "name": "j", "facets": facets}))


def test_a_deletion_under_an_escaped_key_is_read_as_parse_event_reads_it() -> None:
    """``_deleted`` spelled with an escape: JSON mode would read the facet's model, while the
    decoded reading reads a deletion marker (a plain ``BaseFacet``)."""
    facets = {"documentation": {"description": "d", "_deleted": True}}
    text = _text(job={"namespace": "n", "name": "j", "facets": facets})
    text = text.replace('"_deleted"', '"_del\\u0065ted"')
    assert '"_del\\u0065ted"' in text
    _same_reading(text)
    parsed = parse_event(text).event
    assert parsed is not None and type(parsed.job.facets["documentation"]) is BaseFacet


def test_a_facet_msgspec_cannot_decode_is_left_to_the_usual_reading() -> None:
    """A number out of range (``json.loads`` reads it as infinity): the envelope is read, the
    event whole is not, and the usual reading reads it."""
    text = _text(run={"runId": "r1", "facets": {"acme": {"v": 7}}}).replace('"v": 7', '"v": 1e400')
    assert read_envelope(text) is not None
    assert _whole(text) is None
    assert parse_event(text).event is not None


@pytest.mark.parametrize(
    "facet", [{"x": [1, {"v": 24680}]}, {"x": {"y": [2.5, "s", 24680]}}], ids=["list", "object"]
)
def test_a_facet_nobody_knows_is_read_from_its_json_unless_msgspec_refuses_it(
    facet: dict[str, Any],
) -> None:
    """A facet under a key nobody knows is validated from its JSON as a plain ``BaseFacet``,
    the same facet each time its text comes again; a number out of range nested in it is one
    ``msgspec`` refuses, so the event whole is then left to the usual reading."""
    text = _text(run={"runId": "r1", "facets": {"acme": facet, "other": facet}})
    _same_reading(text)
    whole = _whole(text)
    assert whole is not None
    parsed, texts = whole
    assert isinstance(parsed.event, RunEvent)
    assert parsed.event.run.facets["acme"] is parsed.event.run.facets["other"]
    assert [raw for _, raw in texts]  # each with its text, for a kept fold
    out_of_range = text.replace("24680", "1e400")
    assert read_envelope(out_of_range) is not None
    assert _whole(out_of_range) is None
    assert parse_event(out_of_range).event is not None


FIXTURES = Path(__file__).parents[1] / "fixtures" / "openlineage"


def _producer_texts() -> list[Any]:
    """Every event of the dbt fixtures, and every facet fixture put in every container."""
    texts = [
        pytest.param(line, id=f"{path.stem}:{number}")
        for path in sorted((FIXTURES / "dbt").glob("*.jsonl"))
        for number, line in enumerate(path.read_text().splitlines())
        if line.strip()
    ]
    for path in sorted((FIXTURES / "facets").glob("*.json")):
        facets = json.loads(path.read_text())
        if "eventType" in facets:  # a whole event
            texts.append(pytest.param(json.dumps(facets), id=path.stem))
            continue
        dataset = {"namespace": "n", "name": "d", "facets": facets}
        event = raw_event(
            "COMPLETE",
            1,
            "r1",
            run_facets=facets,
            job_facets=facets,
            inputs=[{**dataset, "inputFacets": facets}],
            outputs=[{**dataset, "outputFacets": facets}],
        )
        texts.append(pytest.param(json.dumps(event), id=path.stem))
    return texts


@pytest.mark.parametrize("text", _producer_texts())
def test_producers_events_are_read_whole_as_parse_event_reads_them(text: str) -> None:
    """Facets are validated from their JSON text (pydantic's JSON mode): real producers' facets
    come out as the usual reading of the decoded event gives them."""
    _same_reading(text)  # every one has an envelope read from its text


def _output_facets(text: str) -> dict[str, Any]:
    whole = _whole(text)
    assert whole is not None
    event = whole[0].event
    assert isinstance(event, RunEvent)
    return dict(event.outputs[0].facets)


def test_a_facet_text_that_comes_again_is_validated_once_and_read_the_same() -> None:
    """The schema of a table comes back in every job that reads it: the same text gives the
    very facet read before (facets are never changed in place), equal to a fresh reading;
    a malformed one is reported every time it is used."""
    schema = {"_schemaURL": URL, "fields": [{"name": "a", "type": "int"}]}
    texts = [
        _text(outputs=[{"namespace": "n", "name": "d", "facets": {"schema": schema}}], job=job)
        for job in ({"namespace": "n", "name": "j1"}, {"namespace": "n", "name": "j2"})
    ]
    first, second = (_output_facets(text)["schema"] for text in texts)
    assert first is second
    for text in texts:
        _same_reading(text)
    broken = _text(outputs=[{"namespace": "n", "name": "d", "facets": {"schema": {"fields": 3}}}])
    for _ in range(2):
        _same_reading(broken)
        assert len(parse_event(broken).malformed_facets) == 1


def test_a_long_facet_text_is_not_kept_to_be_read_again() -> None:
    """Bounded memory: texts over ``MEMO_TEXT_LIMIT`` are validated each time."""
    fields = [{"name": f"c{i}", "type": "varchar"} for i in range(MEMO_TEXT_LIMIT // 20)]
    schema = {"_schemaURL": URL, "fields": fields}
    text = _text(outputs=[{"namespace": "n", "name": "d", "facets": {"schema": schema}}])
    assert len(json.dumps(schema)) > MEMO_TEXT_LIMIT
    first, second = (_output_facets(text)["schema"] for _ in range(2))
    assert first == second and first is not second
