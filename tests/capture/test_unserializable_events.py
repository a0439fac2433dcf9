"""An event the OpenLineage client cannot serialize loses only what cannot be serialized.

The OpenLineage provider can build events that no JSON writer can write: with ``[openlineage]
include_full_task_info`` the ``airflow`` run facet of a PythonOperator holds the task's context,
the DAG object among it, which contains itself (a probe: every such COMPLETE went to the
lost-events file as ``{"unserializable": "RunEvent(...)"}``, which ``ingest`` quarantined as "not
an OpenLineage event", and the warning blamed the store). The transport converts such an event
part by part: a facet that cannot be serialized is dropped, its reason stored in its place (the
snapshot reports it as ``MALFORMED_FACET``), and the run, the job and the datasets are kept; an
envelope that cannot be is quarantined with its reason. Neither goes to the lost-events file,
which is for what the store refuses, and neither warning blames the store.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attr
import pytest
from openlineage.client.event_v2 import (
    InputDataset,
    Job,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
)
from openlineage.client.facet_v2 import BaseFacet, schema_dataset, sql_job
from openlineage.client.serde import Serde

from airflow_blindata.capture import transport as transport_module
from airflow_blindata.capture.transport import (
    BlindataTransport,
    BlindataTransportConfig,
    lost_events_path,
)
from airflow_blindata.events import parse_event
from airflow_blindata.options import lost_events_file
from airflow_blindata.store import AppendOutcome, open_store

TIME = "2026-03-01T10:00:00.000000+00:00"
RUN_ID = "01900000-0000-7000-8000-0000000000aa"
CONTAINS_ITSELF = "not serializable as JSON (a value that contains itself)"
TOO_DEEP = "not serializable as JSON: nested too deeply"


@attr.define
class TaskFacet(BaseFacet):
    """Stands for the provider's ``AirflowRunFacet``: the task's attributes, as they come."""

    task: Any = None


@attr.define
class Node:
    """An object of the producer's own that refers back to its parent (a DAG and its tasks)."""

    name: str
    children: list[Any] = attr.field(factory=list)


def _a_dag_and_its_task() -> Node:
    dag = Node("dag")
    dag.children.append(Node("task", children=[dag]))
    return dag


def _a_dict_that_contains_itself() -> dict[str, Any]:
    context: dict[str, Any] = {"run_id": "manual__1"}
    context["context"] = context
    return context


def _schema_nested(levels: int) -> schema_dataset.SchemaDatasetFacet:
    field = schema_dataset.SchemaDatasetFacetFields(name="leaf", type="INT")
    for level in range(levels):
        field = schema_dataset.SchemaDatasetFacetFields(
            name=f"n{level}", type="STRUCT", fields=[field]
        )
    return schema_dataset.SchemaDatasetFacet(fields=[field])


def _schema() -> schema_dataset.SchemaDatasetFacet:
    return schema_dataset.SchemaDatasetFacet(
        fields=[schema_dataset.SchemaDatasetFacetFields(name="id", type="INTEGER")]
    )


def _event(
    *,
    run_facets: dict[str, Any] | None = None,
    job_facets: dict[str, Any] | None = None,
    output_facets: dict[str, Any] | None = None,
    job_name: Any = "etl.load",
) -> RunEvent:
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=TIME,
        run=Run(runId=RUN_ID, facets=run_facets or {}),
        job=Job(
            namespace="airflow",
            name=job_name,
            facets={
                "sql": sql_job.SQLJobFacet(query="INSERT INTO b SELECT * FROM a"),
                **(job_facets or {}),
            },
        ),
        inputs=[InputDataset("postgres://db:5432", "public.a", facets={"schema": _schema()})],
        outputs=[
            OutputDataset(
                "postgres://db:5432",
                "public.b",
                facets={"schema": _schema(), **(output_facets or {})},
            )
        ],
        producer="https://example.com/tests",
    )


DROPPED: list[tuple[str, Callable[[], RunEvent], str, str]] = [
    (
        "a run facet that holds a dict containing itself",
        lambda: _event(run_facets={"airflow": TaskFacet(task=_a_dict_that_contains_itself())}),
        "run.facets.airflow",
        CONTAINS_ITSELF,
    ),
    (
        "a run facet that holds the DAG object, which refers back to itself through its tasks",
        lambda: _event(run_facets={"airflow": TaskFacet(task={"dag": _a_dag_and_its_task()})}),
        "run.facets.airflow",
        CONTAINS_ITSELF,
    ),
    (
        "a job facet that contains itself",
        lambda: _event(job_facets={"airflow": TaskFacet(task=_a_dict_that_contains_itself())}),
        "job.facets.airflow",
        CONTAINS_ITSELF,
    ),
    (
        "an output's schema nested deeper than Python's recursion limit",
        lambda: _event(output_facets={"schema": _schema_nested(600)}),
        "outputs.0.facets.schema",
        TOO_DEEP,
    ),
    (
        "a facet with keys JSON cannot have",
        lambda: _event(run_facets={"airflow": TaskFacet(task={("a", 1): "x"})}),
        "run.facets.airflow",
        "not serializable as JSON: keys must be str, int, float, bool or None, not tuple",
    ),
]


@pytest.fixture(autouse=True)
def fresh_stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AIRFLOW__BLINDATA__STORE_URL", raising=False)
    monkeypatch.delenv("AIRFLOW__BLINDATA__LOST_EVENTS_FILE", raising=False)
    monkeypatch.setattr(transport_module, "_STORES", {})
    yield
    for opened in transport_module._STORES.values():
        opened.close()


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize(
    ("what", "make", "where", "reason"), DROPPED, ids=[row[0] for row in DROPPED]
)
def test_a_facet_that_cannot_be_serialized_is_dropped_with_its_reason_and_the_event_kept(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    what: str,
    make: Callable[[], RunEvent],
    where: str,
    reason: str,
) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    lost = tmp_path / "lost.jsonl"
    sink = BlindataTransport(BlindataTransportConfig(store_url=url, lost_events_path=str(lost)))
    with caplog.at_level(logging.WARNING):
        assert sink.emit(make()) is AppendOutcome.ACCEPTED
        assert sink.emit(make()) is AppendOutcome.DUPLICATE  # the same key each time
    assert not lost.exists()  # the store refused nothing
    with open_store(url) as store:
        assert list(store.quarantine()) == []
        (stored,) = list(store.events())
    data = stored.payload if isinstance(stored.payload, dict) else json.loads(stored.payload)
    # the run, the job and the datasets are kept, with every facet that could be serialized
    assert (data["job"]["name"], data["run"]["runId"]) == ("etl.load", RUN_ID)
    assert [d["name"] for d in data["inputs"] + data["outputs"]] == ["public.a", "public.b"]
    assert data["job"]["facets"]["sql"]["query"] == "INSERT INTO b SELECT * FROM a"
    assert data["inputs"][0]["facets"]["schema"] == Serde.to_dict(_schema())
    # the dropped facet's place holds its reason, which the mapper reports as a malformed facet
    place: Any = data
    for part in where.split("."):
        place = place[int(part)] if part.isdigit() else place[part]
    assert place == f"dropped when captured: {reason}"
    malformed = [str(issue) for issue in parse_event(data).malformed_facets]
    assert any(
        issue.endswith(f"{where.rsplit('.', 1)[1]}: dropped when captured: {reason}")
        for issue in malformed
    ), malformed
    # one warning (none for the duplicate), that says what happened and does not blame the store
    (warning,) = _warnings(caplog)
    assert f"{where}: {reason}" in warning and "of job airflow/etl.load" in warning
    assert "could not store" not in warning and "lost-events" not in warning


def test_an_envelope_that_cannot_be_serialized_is_quarantined_with_its_reason(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    lost = tmp_path / "lost.jsonl"
    sink = BlindataTransport(BlindataTransportConfig(store_url=url, lost_events_path=str(lost)))
    with caplog.at_level(logging.WARNING):
        bad = _event(job_name=_a_dict_that_contains_itself())
        assert sink.emit(bad) is AppendOutcome.QUARANTINED
        assert sink.emit(_event(job_name=_a_dict_that_contains_itself())) is (
            AppendOutcome.DUPLICATE
        )
        assert sink.emit(_event()) is AppendOutcome.ACCEPTED  # nothing blocks the next one
    assert not lost.exists()
    with open_store(url) as store:
        (kept,) = list(store.quarantine())
        assert len(list(store.events())) == 1
    assert kept.reason == f"not serializable as JSON: job.name: {CONTAINS_ITSELF}"
    raw = json.loads(kept.raw)
    assert raw["run"]["runId"] == RUN_ID and raw["job"]["name"] == CONTAINS_ITSELF
    warning = _warnings(caplog)[0]
    assert "quarantined the COMPLETE event" in warning and "job.name" in warning
    assert "could not store" not in warning


def test_the_usual_event_is_converted_in_one_pass_as_serde_writes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only the failure path converts part by part: the usual event never reaches it."""
    from airflow_blindata.capture import serialize
    from airflow_blindata.capture.serialize import convert

    def never(event: Any) -> Any:
        raise AssertionError("converted part by part")

    monkeypatch.setattr(serialize, "_in_parts", never)
    event = _event(run_facets={"airflow": TaskFacet(task={"when": uuid.UUID(RUN_ID)})})
    converted = convert(event)
    assert (converted.data, converted.dropped, converted.problem) == (
        Serde.to_dict(event),
        (),
        None,
    )


# -- a relative lost-events file is read from $AIRFLOW_HOME -----------------------------------


def _configured(monkeypatch: pytest.MonkeyPatch, value: str) -> Path:
    monkeypatch.setenv("AIRFLOW__BLINDATA__LOST_EVENTS_FILE", value)
    return lost_events_path()


def _transport_key(monkeypatch: pytest.MonkeyPatch, value: str) -> Path:
    return lost_events_path(value)


RELATIVE: list[tuple[str, Callable[[pytest.MonkeyPatch, str], Path]]] = [
    ("[blindata] lost_events_file", _configured),
    ("the transport's lost_events_path", _transport_key),
]


@pytest.mark.parametrize(("what", "way"), RELATIVE, ids=[row[0] for row in RELATIVE])
@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("blindata/lost.jsonl", "{home}/blindata/lost.jsonl"),
        ("/var/lost.jsonl", "/var/lost.jsonl"),
        ("~/lost.jsonl", "{user}/lost.jsonl"),
    ],
    ids=["relative: from AIRFLOW_HOME", "absolute: as it is", "~: the user's home"],
)
def test_a_relative_lost_events_file_is_read_from_airflow_home_not_the_working_directory(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    what: str,
    way: Callable[[pytest.MonkeyPatch, str], Path],
    given: str,
    expected: str,
) -> None:
    """A worker starts in a directory of its own: read from there, its lost events were where
    neither ``store stats`` nor the Blindata page looks (a probe)."""
    elsewhere = tmp_path / "worker-cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    home = tmp_path / "home"
    user = Path("~").expanduser()
    assert way(monkeypatch, given) == Path(expected.format(home=home, user=user))


def test_the_worker_keeps_lost_events_where_store_stats_counts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    worker, cli = tmp_path / "worker", tmp_path / "cli"
    worker.mkdir()
    cli.mkdir()
    monkeypatch.setenv("AIRFLOW__BLINDATA__LOST_EVENTS_FILE", "blindata/lost.jsonl")
    monkeypatch.chdir(worker)
    with caplog.at_level(logging.WARNING):
        BlindataTransport(BlindataTransportConfig(store_url="mysql://db/x")).emit(_event())
    assert list(worker.iterdir()) == []
    kept = tmp_path / "home" / "blindata" / "lost.jsonl"
    assert len(kept.read_text().splitlines()) == 1
    monkeypatch.chdir(cli)
    assert lost_events_file() == str(kept)
    assert lost_events_path() == kept
