"""The snapshot and cleanup operators, executed as a task would run them (no scheduler, no DB).

The BLINDATA connection comes from ``AIRFLOW_CONN_BLINDATA_DEFAULT`` and points at the emulator
served on loopback; the event store is a SQLite file of the test.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    AirflowSkipException,
)

from airflow_blindata.get_provider_info import get_provider_info
from airflow_blindata.operators import BlindataCleanupOperator, BlindataSnapshotOperator
from airflow_blindata.operators.blindata import _flag
from airflow_blindata.store import open_store
from tests.helpers import API_KEY, TENANT, USER
from tests.operators.helpers import DEFINITION
from tests.sync.helpers import DEFINITION_UUID, dbt_events, without_job

EXAMPLE_DAGS = Path(__file__).resolve().parents[2] / "example_dags"


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'events.db'}"


@pytest.fixture
def connected(emulator: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    conn = {
        "conn_type": "blindata",
        "host": emulator.base_url,
        "login": USER,
        "password": API_KEY,
        "extra": {"tenant": TENANT, "deadline": 20},
    }
    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_DEFAULT", json.dumps(conn))
    yield emulator


def test_operators_take_keyword_arguments_and_template_their_inputs() -> None:
    snapshot = BlindataSnapshotOperator(task_id="snapshot", definition="job.yaml")
    cleanup = BlindataCleanupOperator(task_id="cleanup", definition="job.yaml")
    shared = {"definition", "blindata_conn_id", "store_url", "progress_interval"}
    assert set(snapshot.template_fields) == {
        *shared,
        "batch_size",
        "apply_retention",
        "fail_on_partial",
        "light",
    }
    assert set(cleanup.template_fields) == {*shared, "dry_run", "force"}
    with pytest.raises(TypeError):
        BlindataSnapshotOperator("snapshot", "job.yaml")  # type: ignore[misc]
    assert "hook" not in vars(snapshot)  # built when the task runs, not when the DAG is parsed


@pytest.mark.integration
def test_the_snapshot_operator_syncs_the_store_and_returns_a_small_xcom(
    connected: Any, store_url: str
) -> None:
    with open_store(store_url) as store:
        store.append_many(dbt_events())
    operator = BlindataSnapshotOperator(
        task_id="snapshot", definition=DEFINITION, store_url=store_url
    )

    xcom = operator.execute(context={})

    assert xcom["status"] == "success"
    assert xcom["counters"]["entitiesCreated"] > 0
    assert "scopes" not in xcom and "ledger" not in xcom and xcom["scopeCount"] > 0
    json.dumps(xcom)  # an XCom must serialize
    assert API_KEY not in json.dumps(xcom)
    with open_store(store_url) as store:
        (record,) = store.sync_history(DEFINITION_UUID)
    assert (record.kind, record.status) == ("snapshot", "success")
    assert record.report["scopes"]  # the history keeps what cleanup needs


@pytest.mark.integration
@pytest.mark.parametrize("status", [503, 500], ids=["503-retried-to-the-deadline", "500-at-once"])
def test_a_write_outage_fails_the_snapshot_task_so_that_airflow_retries_it(
    connected: Any, store_url: str, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    """Not ``partial``, which the operator takes for success: the history says ``failed``."""
    conn = json.loads(os.environ["AIRFLOW_CONN_BLINDATA_DEFAULT"])
    conn["extra"]["deadline"] = 2
    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_DEFAULT", json.dumps(conn))
    with open_store(store_url) as store:
        store.append_many(dbt_events())
    connected.emulator.faults.fail_next(10**6, status=status, method="POST|PUT|DELETE")
    operator = BlindataSnapshotOperator(
        task_id="snapshot", definition=DEFINITION, store_url=store_url
    )

    with pytest.raises(AirflowException, match="Blindata cannot take writes") as caught:
        operator.execute(context={})

    assert not isinstance(caught.value, AirflowFailException)  # failed, and retried by Airflow
    with open_store(store_url) as store:
        (record,) = store.sync_history(DEFINITION_UUID)
    assert (record.status, record.report["status"]) == ("failed", "failed")


@pytest.mark.integration
def test_the_cleanup_operator_skips_refuses_and_dry_runs(connected: Any, store_url: str) -> None:
    cleanup = BlindataCleanupOperator(task_id="cleanup", definition=DEFINITION, store_url=store_url)
    with pytest.raises(AirflowSkipException, match="no snapshot"):
        cleanup.execute(context={})

    with open_store(store_url) as store:
        store.append_many(dbt_events())
    BlindataSnapshotOperator(
        task_id="snapshot", definition=DEFINITION, store_url=store_url
    ).execute(context={})
    strict = BlindataCleanupOperator(
        task_id="cleanup",
        definition={**DEFINITION, "cleanup": {"maxRemovalShare": 0.0001}},
        store_url=store_url,
        dry_run="False",
    )
    assert strict.execute(context={})["status"] == "success"  # nothing stale: nothing to refuse

    dry = BlindataCleanupOperator(
        task_id="cleanup", definition=DEFINITION, store_url=store_url, dry_run="True"
    )
    xcom = dry.execute(context={})
    assert xcom["dry_run"] is True and xcom["status"] == "success"


@pytest.mark.integration
def test_a_dry_run_a_fail_safe_would_refuse_succeeds_saying_so(
    connected: Any, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dry run is a look before forcing: one over the share limit turned the task red (a
    probe of the sync DAG); it returns its report, which says it would be refused."""
    from airflow_blindata.sync.report import RunReport

    refused = RunReport(kind="cleanup", definition_uuid=DEFINITION_UUID, dry_run=True)
    refused.reason = "share_exceeded"
    monkeypatch.setattr(
        "airflow_blindata.sync.runner.run_cleanup",
        lambda *args, **kwargs: refused.finish("refused", "too much"),
    )
    dry = BlindataCleanupOperator(
        task_id="cleanup", definition=DEFINITION, store_url=store_url, dry_run=True
    )
    xcom = dry.execute(context={})
    assert (xcom["status"], xcom["dry_run"]) == ("refused", True)
    # a refusal force does not lift (the last snapshot failed) stays red, dry run or not
    refused.reason = "snapshot_failed"
    with pytest.raises(AirflowFailException, match="too much"):
        dry.execute(context={})


@pytest.mark.integration
def test_a_light_sync_before_a_first_snapshot_says_so(connected: Any, store_url: str) -> None:
    """ "nothing new since the last sync" was said with events in the store and no sync ever
    run (a probe of the sync DAG)."""
    with open_store(store_url) as store:
        store.append_many(dbt_events())
    light = BlindataSnapshotOperator(
        task_id="light", definition=DEFINITION, store_url=store_url, light=True
    )
    with pytest.raises(AirflowSkipException, match="no full snapshot of this definition yet"):
        light.execute(context={})


@pytest.mark.integration
def test_a_refused_cleanup_fails_the_task_without_retry(
    connected: Any, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow_blindata.sync.report import RunReport

    refused = RunReport(kind="cleanup", definition_uuid=DEFINITION_UUID)
    refused.reason = "share_exceeded"
    monkeypatch.setattr(
        "airflow_blindata.sync.runner.run_cleanup",
        lambda *args, **kwargs: refused.finish("refused", "too much"),
    )
    cleanup = BlindataCleanupOperator(task_id="cleanup", definition=DEFINITION, store_url=store_url)
    with pytest.raises(AirflowFailException, match="too much"):
        cleanup.execute(context={})


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), ("True", True), ("true", True), (False, False), ("False", False), ("", False)],
)
def test_flags_accept_rendered_templates(value: Any, expected: bool) -> None:
    assert _flag(value, "dry_run") is expected


def test_a_flag_that_is_not_a_boolean_is_an_error() -> None:
    with pytest.raises(ValueError, match="dry_run must be true or false"):
        _flag("maybe", "dry_run")


WHOLE = "must be a positive whole number"
SECONDS = "must be a positive number of seconds"
FLAG = "must be true or false"
SNAPSHOT, CLEANUP = BlindataSnapshotOperator, BlindataCleanupOperator


@pytest.mark.parametrize(
    ("operator", "name", "value", "refusal"),
    [
        (SNAPSHOT, "batch_size", 0, WHOLE),
        (SNAPSHOT, "batch_size", -1, WHOLE),
        (SNAPSHOT, "batch_size", "500 rows", WHOLE),
        (SNAPSHOT, "batch_size", 2.5, WHOLE),
        (SNAPSHOT, "batch_size", True, WHOLE),
        (SNAPSHOT, "progress_interval", 0, SECONDS),
        (SNAPSHOT, "progress_interval", "soon", SECONDS),
        (SNAPSHOT, "progress_interval", float("nan"), SECONDS),
        (SNAPSHOT, "light", "maybe", FLAG),
        (SNAPSHOT, "apply_retention", "nein", FLAG),
        (SNAPSHOT, "fail_on_partial", 2, FLAG),
        (CLEANUP, "dry_run", "maybe", FLAG),
        (CLEANUP, "force", "perhaps", FLAG),
        (CLEANUP, "progress_interval", -5, SECONDS),
    ],
)
def test_a_number_or_flag_argument_that_is_not_one_is_refused_naming_it_when_the_dag_is_parsed(
    operator: type[BlindataSnapshotOperator | BlindataCleanupOperator],
    name: str,
    value: Any,
    refusal: str,
) -> None:
    """``batch_size=0`` uploaded nothing and the task was green, ``-1`` or ``"500"`` failed
    after the Systems were written, with Python's words; ``light="False"`` ran a light sync
    (a probe of the operators). The DAG file's import error names the argument."""
    with pytest.raises(ValueError, match=f"^{re.escape(f'{name} {refusal}, got {value!r}')}$"):
        operator(task_id="sync", definition=DEFINITION, **{name: value})


@pytest.fixture
def old_and_new_events(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dbt events, those of one job received 40 days ago: the retention prunes them."""
    events = dbt_events()
    with open_store(store_url) as store:
        store.append_many(without_job(events))
        with monkeypatch.context() as patched:
            long_ago = datetime.now(UTC) - timedelta(days=40)
            patched.setattr("airflow_blindata.store.core.now", lambda: long_ago)
            store.append_many([event for event in events if event not in without_job(events)])


@pytest.mark.integration
@pytest.mark.usefixtures("old_and_new_events")
@pytest.mark.parametrize(
    ("arguments", "refused_flows", "status", "pruned"),
    [
        pytest.param(
            {"light": "False", "apply_retention": "no", "batch_size": "500"},
            False,
            "success",
            False,
            id="no-retention",
        ),
        pytest.param(
            {"light": "0", "apply_retention": "Yes", "batch_size": 7.0, "progress_interval": "5"},
            False,
            "success",
            True,
            id="retention",
        ),
        pytest.param(
            {"light": "off", "apply_retention": "None", "fail_on_partial": "false"},
            True,
            "partial",
            True,
            id="partial-succeeds",
        ),
        pytest.param(
            {"fail_on_partial": "on"}, True, "refused some objects", True, id="partial-fails"
        ),
    ],
)
def test_numbers_and_flags_given_as_text_are_read_as_every_setting_of_the_provider(
    connected: Any,
    store_url: str,
    arguments: dict[str, Any],
    refused_flows: bool,
    status: str,
    pruned: bool,
) -> None:
    """``light="False"`` ran a light sync, ``apply_retention="no"`` and ``fail_on_partial=
    "false"`` counted as true (a probe of the operators): a flag is read as docs/connection.md
    says every one is, an empty rendering (``"None"``) takes the default."""
    if refused_flows:
        connected.emulator.faults.fail_next(10**6, status=409, path=r"/dataflows/\*/upload$")
    operator = BlindataSnapshotOperator(
        task_id="snapshot", definition=DEFINITION, store_url=store_url, **arguments
    )

    if status == "refused some objects":
        with pytest.raises(AirflowException, match=status):
            operator.execute(context={})
    else:
        assert operator.execute(context={})["status"] == status

    with open_store(store_url) as store:
        (record,) = store.sync_history(DEFINITION_UUID)
    assert record.kind == "snapshot"  # a full one, not a light sync skipped before the first
    assert (record.report["counters"].get("eventsPruned", 0) > 0) is pruned


@pytest.mark.integration
@pytest.mark.parametrize(
    ("operator", "params", "refusal"),
    [
        (SNAPSHOT, {"batch_size": "0"}, f"batch_size {WHOLE}, got '0'"),
        (SNAPSHOT, {"progress_interval": "5s"}, f"progress_interval {SECONDS}, got '5s'"),
        (SNAPSHOT, {"light": "Flase"}, f"light {FLAG}, got 'Flase'"),
        (CLEANUP, {"force": "maybe"}, f"force {FLAG}, got 'maybe'"),
        (
            SNAPSHOT,
            {"batch_size": "3", "light": "False", "progress_interval": "1", "apply_retention": ""},
            None,
        ),
        (CLEANUP, {"dry_run": "yes", "force": "None", "progress_interval": "1"}, None),
    ],
)
def test_templated_numbers_and_flags_are_read_once_rendered_and_refused_before_anything_is_written(
    connected: Any,
    store_url: str,
    operator: type[BlindataSnapshotOperator | BlindataCleanupOperator],
    params: dict[str, str],
    refusal: str | None,
) -> None:
    """A template is read when the task starts; a rendering that is no number or no flag fails
    the task without retry (it renders the same every try), naming the argument, before the
    store or Blindata is touched: no write, no record in the sync history."""
    with open_store(store_url) as store:
        store.append_many(dbt_events())
    if operator is BlindataCleanupOperator:
        BlindataSnapshotOperator(
            task_id="snapshot", definition=DEFINITION, store_url=store_url
        ).execute(context={})
    task = operator(
        task_id="sync",
        definition=DEFINITION,
        store_url=store_url,
        **{name: f"{{{{ params.{name} }}}}" for name in params},
    )
    task.render_template_fields({"params": params})
    writes = len([e for e in connected.emulator.requests.entries() if e["method"] != "GET"])

    if refusal is None:
        assert task.execute(context={})["status"] == "success"
        return
    with pytest.raises(AirflowFailException, match=f"^{re.escape(refusal)}$"):
        task.execute(context={})
    assert len([e for e in connected.emulator.requests.entries() if e["method"] != "GET"]) == writes
    with open_store(store_url) as store:
        kinds = [record.kind for record in store.sync_history(DEFINITION_UUID)]
    assert kinds == (["snapshot"] if operator is BlindataCleanupOperator else [])


def test_a_relative_definition_path_is_read_from_the_dag_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task runs in the directory its worker started in, not next to its DAG file: a
    definition given as ``"blindata_sync.yaml"`` is read beside the DAG file, as Airflow reads
    template files; one missing there is named by the path that was looked at."""
    import pendulum
    from airflow.sdk import DAG

    from airflow_blindata.definition import JobDefinitionError

    dags = tmp_path / "dags"
    (dags / "defs").mkdir(parents=True)
    (dags / "defs" / "job.yaml").write_text(f"uuid: {DEFINITION_UUID}\n")
    elsewhere = tmp_path / "worker"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with DAG("rel", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
        found = BlindataSnapshotOperator(task_id="found", definition="defs/job.yaml")
        missing = BlindataCleanupOperator(task_id="missing", definition="nowhere.yaml")
    dag.fileloc = str(dags / "sync.py")

    assert found.job_definition().uuid == DEFINITION_UUID
    with pytest.raises(JobDefinitionError, match=str(dags / "nowhere.yaml")):
        missing.job_definition()
    (elsewhere / "nowhere.yaml").write_text(f"uuid: {DEFINITION_UUID}\n")
    assert missing.job_definition().uuid == DEFINITION_UUID  # read where it was read before
    absolute = BlindataSnapshotOperator(task_id="abs", definition=str(dags / "defs" / "job.yaml"))
    assert absolute.job_definition().uuid == DEFINITION_UUID  # no DAG: as given


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sync_dag_imports_without_a_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW_CONN_BLINDATA_DEFAULT", raising=False)
    dag = _load(EXAMPLE_DAGS / "blindata_sync.py").dag

    assert dag.max_active_runs == 1
    assert set(dag.params) == {"dry_run", "force"}
    snapshot, cleanup = dag.get_task("snapshot"), dag.get_task("cleanup")
    assert snapshot.downstream_task_ids == {"cleanup"}
    assert snapshot.retries == 2 and cleanup.retries == 0
    assert Path(snapshot.definition).name == "blindata_sync.yaml"
    assert cleanup.dry_run == "{{ params.dry_run }}"


def test_the_light_sync_dag_runs_the_snapshot_operator_light_every_five_minutes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 43: the light sync on a short schedule, beside the hourly snapshot and cleanup."""
    monkeypatch.delenv("AIRFLOW_CONN_BLINDATA_DEFAULT", raising=False)
    module = _load(EXAMPLE_DAGS / "blindata_sync.py")
    dag = module.light_dag

    assert module.LIGHT_INTERVAL.total_seconds() == 300
    assert dag.max_active_runs == 1 and not dag.catchup
    (task,) = dag.tasks
    assert isinstance(task, BlindataSnapshotOperator) and task.light
    assert task.retries == 0
    assert not module.dag.get_task("snapshot").light


def test_the_demo_pipeline_imports_and_declares_its_lineage() -> None:
    dag = _load(EXAMPLE_DAGS / "demo_pipeline.py").dag

    build = dag.get_task("build_order_totals")
    assert [d.name for d in build.inlets] == ["raw_orders", "raw_customers"]
    assert [d.name for d in build.outlets] == ["order_totals"]


def test_the_provider_declares_the_operators() -> None:
    (operators,) = get_provider_info()["operators"]
    assert operators["python-modules"] == ["airflow_blindata.operators.blindata"]


def test_the_operators_defaults_are_the_sync_and_the_hook_defaults() -> None:
    """Repeated in the operators' module so that parsing a DAG imports neither."""
    from airflow_blindata.hooks.blindata import BlindataHook
    from airflow_blindata.operators import blindata
    from airflow_blindata.sync import DEFAULT_BATCH_SIZE, DEFAULT_PROGRESS_INTERVAL

    assert BlindataHook.default_conn_name == blindata.DEFAULT_CONN_ID
    assert blindata.DEFAULT_BATCH_SIZE == DEFAULT_BATCH_SIZE
    assert blindata.DEFAULT_PROGRESS_INTERVAL == DEFAULT_PROGRESS_INTERVAL


PARSE_PROBE = """
import json, runpy, sys
import airflow.sdk
before = set(sys.modules)
runpy.run_path(sys.argv[1])
print("MODULES " + json.dumps(sorted(set(sys.modules) - before)))
"""


@pytest.mark.airflow
def test_parsing_the_sync_dag_imports_only_the_operators(tmp_path: Path) -> None:
    """The DAG processor parses the file often: it costs what a DAG of EmptyOperator tasks costs
    (benchmarks/imports.py measures the time); the sync is imported when a task runs."""
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path), "AIRFLOW__CORE__LOAD_EXAMPLES": "False"}
    done = subprocess.run(
        [sys.executable, "-c", PARSE_PROBE, str(EXAMPLE_DAGS / "blindata_sync.py")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("MODULES ")]
    assert lines, done.stdout[-2000:] + done.stderr[-2000:]
    ours = {name for name in json.loads(lines[-1].removeprefix("MODULES ")) if "blindata" in name}
    assert ours <= {
        "airflow_blindata",
        "airflow_blindata.get_provider_info",
        "airflow_blindata.operators",
        "airflow_blindata.operators.blindata",
        "airflow_blindata.options",  # the arguments' parsers (the standard library only)
    }, sorted(ours)


@pytest.mark.integration
def test_the_snapshot_warns_of_a_sqlite_store_on_an_executor_of_several_machines(
    connected: Any, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from structlog.testing import capture_logs

    monkeypatch.setenv("AIRFLOW__CORE__EXECUTOR", "CeleryExecutor")
    operator = BlindataSnapshotOperator(
        task_id="snapshot", definition=DEFINITION, store_url=store_url
    )
    with capture_logs() as logs:
        operator.execute(context={})
    (warning,) = [e for e in logs if e["log_level"] == "warning" and "SQLite" in str(e)]
    assert "SQLite file" in str(warning) and "CeleryExecutor" in str(warning)
    assert API_KEY not in str(logs)


@pytest.mark.integration
def test_the_snapshot_of_a_store_that_never_received_an_event_says_so(
    connected: Any, tmp_path: Any
) -> None:
    """A mistyped store_url is a new empty store: the snapshot succeeded with nothing, and its
    log said nothing either (a probe)."""
    from structlog.testing import capture_logs

    typo = f"sqlite:///{tmp_path / 'evnets.db'}"
    operator = BlindataSnapshotOperator(task_id="snapshot", definition=DEFINITION, store_url=typo)
    with capture_logs() as logs:
        operator.execute(context={})
    said = [str(e) for e in logs if e["log_level"] == "warning" and "holds no event" in str(e)]
    assert len(said) == 1 and "evnets.db" in said[0]


@pytest.mark.integration
def test_a_sync_task_records_its_task_instance_and_the_blindata_it_used(
    connected: Any, store_url: str
) -> None:
    """The page links each sync record to its DAG run and task log, and names its Blindata."""
    from types import SimpleNamespace

    with open_store(store_url) as store:
        store.append_many(dbt_events())
    ti = SimpleNamespace(
        dag_id="blindata_sync", run_id="scheduled__1", task_id="snap", map_index=-1
    )
    snapshot = BlindataSnapshotOperator(task_id="snap", definition=DEFINITION, store_url=store_url)

    snapshot.execute(context={"ti": ti})

    with open_store(store_url) as store:
        (record,) = store.sync_history(DEFINITION_UUID)
    assert record.report["origin"] == {
        "dag_id": "blindata_sync",
        "run_id": "scheduled__1",
        "task_id": "snap",
        "map_index": -1,
        "command": None,
    }
    assert record.report["blindata_url"] == connected.base_url.rstrip("/")


@pytest.mark.integration
@pytest.mark.parametrize("base_url", ["https://airflow.example.com/prod/", None])
def test_the_snapshot_links_a_task_s_job_entity_to_airflow_s_base_url(
    connected: Any, store_url: str, monkeypatch: pytest.MonkeyPatch, base_url: str | None
) -> None:
    """``[api] base_url`` goes into the definition (the mapper reads no configuration): the job
    entity of a task carries its task's and its DAG's URL in the Airflow UI; unset, none."""
    from blindata_emulator import Kind

    from tests.builders import run_event
    from tests.sync.helpers import objects

    if base_url:
        monkeypatch.setenv("AIRFLOW__API__BASE_URL", base_url)
    else:
        monkeypatch.delenv("AIRFLOW__API__BASE_URL", raising=False)
    airflow = {"dag": {"dag_id": "sales"}, "task": {"task_id": "load"}}
    with open_store(store_url) as store:
        store.append(run_event("sales.load", run_facets={"airflow": airflow}))
    snapshot = BlindataSnapshotOperator(task_id="s", definition=DEFINITION, store_url=store_url)

    assert snapshot.execute(context={})["status"] == "success"

    (job,) = [e for e in objects(connected, Kind.ENTITY) if e["name"] == "sales.load"]
    urls = {
        p["name"]: p["value"]
        for p in job.get("additionalProperties") or []
        if p["name"].startswith("openLineageAirflow") and p["name"].endswith("Url")
    }
    if base_url:
        assert urls == {
            "openLineageAirflowDagUrl": "https://airflow.example.com/prod/dags/sales",
            "openLineageAirflowTaskUrl": "https://airflow.example.com/prod/dags/sales/tasks/load",
        }
    else:
        assert urls == {}


def test_the_store_urls_password_is_masked_once_the_fields_are_rendered() -> None:
    """A ``store_url`` argument (templated) kept its password in the task's rendered fields,
    which Airflow shows to whoever may view the task (a probe of the sync DAG)."""
    try:  # Airflow 3.3; 3.1 has it only where 3.3 deprecates it
        from airflow.sdk._shared.secrets_masker import redact
    except ImportError:
        from airflow.sdk.execution_time.secrets_masker import redact

    url = "postgresql://etl:Rendered-s3cret-9@db:5432/events"
    operator = BlindataSnapshotOperator(
        task_id="snapshot", definition=DEFINITION, store_url="{{ params.store }}"
    )
    operator.render_template_fields({"params": {"store": url}})
    assert operator.store_url == url
    assert "Rendered-s3cret-9" not in str(redact(operator.store_url))
    # a mapped task's rendering passes by ``render_template_fields`` (a review)
    mapped = url.replace("Rendered", "Mapped")
    unmapped = BlindataSnapshotOperator(
        task_id="mapped", definition=DEFINITION, store_url="{{ params.store }}"
    )
    unmapped._do_render_template_fields(
        unmapped,
        unmapped.template_fields,
        {"params": {"store": mapped}},
        unmapped.get_template_env(),
        set(),
    )
    assert "Mapped-s3cret-9" not in str(redact(mapped))
    # a nested templated object renders first, the URL still a template: not masked (a review)
    template = "{{ params.unmasked_template }}"
    nested = BlindataSnapshotOperator(
        task_id="nested", definition=DEFINITION, store_url=f"postgresql://etl:{template}@db/x"
    )
    nested._do_render_template_fields(
        object(), (), {"params": {}}, nested.get_template_env(), set()
    )
    assert template in str(redact(f"the template {template} is shown"))
    # a user given without a password is no secret: masked, every "postgres" of the logs was
    alone = BlindataSnapshotOperator(
        task_id="alone", definition=DEFINITION, store_url="postgresql://pgadmin-alone@db/events"
    )
    alone.render_template_fields({})
    assert "pgadmin-alone" in str(redact("user pgadmin-alone"))
