"""What each page shows, from a real SQLite store (and PostgreSQL when available)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from airflow_blindata.mapper.report import GapCode
from airflow_blindata.store import open_store

from .helpers import token
from .seed import DEFINITION, SECRET, run_event, seed


def history_rows(page: str) -> int:
    """The sync records listed in the page's history table."""
    if '<table id="history">' not in page:
        return 0
    table = page.split('<table id="history">')[1].split("<h2>")[0]
    return table.count('<td><a href="/syncs/')


@pytest.fixture
def admin(client: Any, auth_manager: Any) -> Any:
    """An admin sees the whole page (test_ui_access.py: what other roles see)."""
    client.headers["Authorization"] = f"Bearer {token(auth_manager, 'admin')}"
    return client


def test_capture_counts_events_by_namespace_and_source(admin: Any) -> None:
    page = admin.get("/").text

    for row in (
        "<td>spark-prod</td><td>receiver</td>",
        "<td>spark-prod</td><td>transport</td>",
        "<td>airflow-prod</td><td>listener</td>",
    ):
        assert row in page
    assert '<th class="n">31</th>' in page  # every stored event arrived today


def test_capture_shows_the_quarantine_and_never_its_secrets(admin: Any) -> None:
    page = admin.get("/").text

    assert "Quarantined events (1)" in page
    assert SECRET not in page
    assert "postgresql://u:***@db/x" in page


def test_capture_says_how_to_ingest_lost_events(admin: Any, tmp_path: Path) -> None:
    (tmp_path / "lost.jsonl").write_text('{"a": 1}\n{"b": 2}\n')

    page = admin.get("/").text

    assert "<strong>2</strong> event(s) wait in" in page
    assert f"airflow-blindata ingest {tmp_path / 'lost.jsonl'}" in page


def test_capture_says_a_lost_events_file_it_cannot_read(
    admin: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory for ``lost_events_file``: capture cannot keep a refused event there, and the
    page said "No event waits" (a probe)."""
    monkeypatch.setenv("AIRFLOW__BLINDATA__LOST_EVENTS_FILE", str(tmp_path))

    page = admin.get("/").text

    assert f"<code>{tmp_path}</code>, the lost-events file, cannot be read" in page
    assert "No event waits" not in page


def test_the_store_url_is_shown_without_its_password(
    admin: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", f"postgresql://u:{SECRET}@127.0.0.1:1/x")

    response = admin.get("/")

    assert response.status_code == 503
    assert "postgresql://u:***@127.0.0.1:1/x" in response.text
    assert SECRET not in response.text
    assert 'id="problem"' in response.text


@pytest.mark.parametrize("path", ["/", "/syncs", "/lands"])
def test_a_store_url_naming_no_file_is_said_and_no_store_is_made(
    admin: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    missing = tmp_path / "typo" / "events.db"
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", f"sqlite:///{missing}")

    response = admin.get(path)

    assert response.status_code == 503
    assert f"there is no event store at {missing}" in response.text
    assert not missing.parent.exists()


def test_syncs_list_the_history_and_group_the_gaps(admin: Any) -> None:
    page = admin.get("/syncs").text

    assert DEFINITION in page
    assert history_rows(page) == 3
    assert "UNMAPPED_NAMESPACE" in page and "mysql://legacy:3306" in page
    assert 'class="status-partial"' in page


def test_syncs_are_paged(admin: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'many.db'}"
    seed(url, events=0, syncs=25)
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)

    first = admin.get("/syncs").text
    second = admin.get(f"/syncs?definition={DEFINITION}&before=6").text

    assert history_rows(first) == 20 and "before=6" in first
    assert history_rows(second) == 5 and "Older runs" not in second


def test_a_definition_asked_for_in_upper_case_shows_its_syncs(admin: Any) -> None:
    """The docs: a definition uuid is accepted in any spelling and kept in lower case."""
    lower = admin.get(f"/syncs?definition={DEFINITION}").text
    upper = admin.get(f"/syncs?definition={DEFINITION.upper()}").text

    assert history_rows(upper) == history_rows(lower) > 0


def test_a_record_shows_the_report_as_the_task_log_does(admin: Any) -> None:
    page = admin.get("/syncs/1").text

    assert "Report, as the task log shows it" in page
    assert f"Blindata snapshot of job definition {DEFINITION}: SUCCESS in 42.0 s" in page


def test_an_unknown_record_is_not_found(admin: Any) -> None:
    assert admin.get("/syncs/999").status_code == 404


def test_an_id_past_what_a_store_holds_is_not_found_rather_than_a_server_error(
    admin: Any,
) -> None:
    """A hand-edited link with an id past 64 bits matches nothing: a 404, and the runs' list."""
    huge = 2**70

    record = admin.get(f"/syncs/{huge}")
    listing = admin.get("/syncs", params={"definition": DEFINITION, "before": huge})

    assert record.status_code == 404 and "no such sync record" in record.text
    assert listing.status_code == 200 and history_rows(listing.text) == 3


def test_where_it_lands_maps_a_chosen_job(admin: Any) -> None:
    chooser = admin.get("/lands").text
    page = admin.get("/lands", params={"namespace": "spark-prod", "name": "etl.job_1"}).text

    assert "etl.job_1" in chooser
    assert "Entities (" in page and "analytics.marts.t1" in page
    # The seeded snapshots ran before these events came: the next snapshot describes them.
    assert "No snapshot has read the events of" in page
    assert "No Blindata URL is known" in page


def test_where_it_lands_says_why_the_configured_job_definition_cannot_be_used(
    admin: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A mistyped ``ui_job_definition`` is a message on the page, not an Internal Server Error."""
    missing = tmp_path / "definitons.yaml"
    monkeypatch.setenv("AIRFLOW__BLINDATA__UI_JOB_DEFINITION", str(missing))

    response = admin.get("/lands", params={"namespace": "spark-prod", "name": "etl.job_1"})

    assert response.status_code == 503
    assert 'id="problem"' in response.text
    assert "ui_job_definition" in response.text and str(missing) in response.text


@pytest.mark.parametrize(
    ("host", "link"),
    [
        ("https://catalog.example.com/blindata", 'href="https://catalog.example.com/blindata/#/'),
        ("javascript://%0aalert(document.cookie)", None),
        ("data://text/html,<script>alert(1)</script>", None),
    ],
)
def test_where_it_lands_links_objects_to_an_http_blindata_only(
    admin: Any, monkeypatch: pytest.MonkeyPatch, host: str, link: str | None
) -> None:
    """A connection URL becomes an href on every object: a script URL there would run in the
    admin's Airflow session when they click, so only http(s) URLs are linked."""
    import json

    monkeypatch.setenv(
        "AIRFLOW_CONN_BLINDATA_DEFAULT", json.dumps({"conn_type": "blindata", "host": host})
    )

    page = admin.get("/lands", params={"namespace": "spark-prod", "name": "etl.job_1"}).text

    assert "analytics.marts.t1" in page
    if link:
        assert link in page
    else:
        assert 'href="javascript' not in page and 'href="data' not in page
        assert "No Blindata URL is known" in page


def test_where_it_lands_shows_what_the_last_snapshot_described_and_counts_what_came_since(
    client: Any, auth_manager: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The events received after the last snapshot started are not what it described."""
    from datetime import UTC, datetime

    from airflow_blindata.store import SyncRecord

    from .seed import run_event, snapshot_report

    url = f"sqlite:///{tmp_path / 'lands.db'}"
    with open_store(url) as store:
        store.append(run_event(1))  # etl.job_1 writes analytics.marts.t1
        report = snapshot_report(0)
        started = datetime.now(UTC)
        store.record_sync(
            SyncRecord(DEFINITION, "snapshot", started, started, "success", report.to_record())
        )
        later = run_event(4)  # etl.job_1 again, now writing analytics.marts.t_new
        later["outputs"][0]["name"] = "analytics.marts.t_new"
        store.append(later)
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)
    client.headers["Authorization"] = f"Bearer {token(auth_manager, 'admin')}"

    page = client.get("/lands", params={"namespace": "spark-prod", "name": "etl.job_1"}).text

    assert "What the last snapshot (" in page
    assert "<strong>1</strong> event(s) received since" in page
    assert "analytics.marts.t1" in page and "analytics.marts.t_new" not in page


def test_where_it_lands_says_when_the_job_last_received_an_event_and_reached_blindata(
    client: Any, auth_manager: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 43: per job, its last event and the last sync (full or light) that published it."""
    from datetime import UTC, datetime, timedelta

    from airflow_blindata.store import SyncRecord
    from airflow_blindata.sync.report import RunReport

    from .seed import run_event, snapshot_report

    url = f"sqlite:///{tmp_path / 'lands.db'}"
    first = datetime.now(UTC)
    with open_store(url) as store:
        store.append(run_event(1))
        snapshot = snapshot_report(0)
        snapshot.cursor = store.last_id()
        store.record_sync(
            SyncRecord(DEFINITION, "snapshot", first, first, "success", snapshot.to_record())
        )
        store.append(run_event(4))  # etl.job_1 again
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)
    client.headers["Authorization"] = f"Bearer {token(auth_manager, 'admin')}"
    params = {"namespace": "spark-prod", "name": "etl.job_1"}

    page = client.get("/lands", params=params).text
    assert f"last reached Blindata {first:%Y-%m-%d %H:%M:%S} UTC (by a snapshot)" in page
    assert "<strong>before its last event</strong>" in page

    later = first + timedelta(minutes=5)
    light = RunReport(kind="light", definition_uuid=DEFINITION, jobs=["spark-prod/etl.job_1"])
    with open_store(url) as store:
        store.record_sync(
            SyncRecord(DEFINITION, "light", later, later, "success", light.to_record())
        )
    page = client.get("/lands", params=params).text
    assert f"last reached Blindata {later:%Y-%m-%d %H:%M:%S} UTC (by a light sync)" in page
    assert "before its last event" not in page
    assert "Last event received 20" in page


def test_a_job_reached_by_a_partial_snapshot_is_not_said_to_have_reached_blindata_whole(
    client: Any, auth_manager: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the admin sees must be true: a snapshot whose flows Blindata all refused is
    recorded a success in the store (a partial run), and the job's page said it reached
    Blindata with no word of what was not written."""
    from airflow_blindata.sync.report import RunReport

    from .seed import record_snapshot, run_event

    url = f"sqlite:///{tmp_path / 'partial.db'}"
    with open_store(url) as store:
        store.append(run_event(1))
        report = RunReport(kind="snapshot", definition_uuid=DEFINITION)
        for index in range(3):
            report.fail("flows", f"flow {index}", "400 Bad Request")
        report.finish()
        assert report.status == "partial"
        report.cursor = store.last_id()
        record_snapshot(store, report)
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)
    client.headers["Authorization"] = f"Bearer {token(auth_manager, 'admin')}"

    page = client.get("/lands", params={"namespace": "spark-prod", "name": "etl.job_1"}).text

    assert "(by a snapshot that did not write everything (3 objects not written" in page


def test_the_gaps_shown_are_of_the_last_snapshot_that_read_the_events(
    admin: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot that failed at login mapped nothing and reports no gap: the page said the
    last snapshot's gaps were "None", as if the producers had been fixed."""
    from datetime import timedelta

    from airflow_blindata.sync.report import RunReport

    from .seed import record_snapshot, snapshot_report

    url = f"sqlite:///{tmp_path / 'failed.db'}"
    mapped = snapshot_report(0)
    mapped.timings = {"mapping": 0.5}
    assert mapped.finished_at is not None
    failed = RunReport(
        kind="snapshot", definition_uuid=DEFINITION, started_at=mapped.finished_at
    ).finish("failed", "Blindata rejected the credentials (401)")
    failed.finished_at = mapped.finished_at + timedelta(seconds=1)
    with open_store(url) as store:
        record_snapshot(store, mapped)
        record_snapshot(store, failed)
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)

    page = admin.get("/syncs").text

    gaps = page.split("<h2>Gaps of the last snapshot</h2>")[1]
    assert "UNMAPPED_NAMESPACE" in gaps and "None." not in gaps
    assert 'id="gaps-of"' in gaps and "failed before they read the events" in gaps


def test_the_gaps_of_a_snapshot_that_failed_while_it_wrote_are_the_newest(
    admin: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot that failed in a write phase (an outage) had mapped the events: its gaps are
    the newest, not those of the snapshot before it (a review)."""
    from .seed import record_snapshot, snapshot_report

    url = f"sqlite:///{tmp_path / 'outage.db'}"
    older = snapshot_report(0)
    older.timings = {"mapping": 0.5}
    newer = snapshot_report(2)
    newer.timings = {"mapping": 0.5}
    newer.gaps.clear()
    newer.gap(GapCode.UNMAPPED_NAMESPACE, "oracle://new-db:1521")
    newer.finish("failed", "Blindata stopped answering in the flows phase")
    with open_store(url) as store:
        record_snapshot(store, older)
        record_snapshot(store, newer)
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)

    gaps = admin.get("/syncs").text.split("<h2>Gaps of the last snapshot</h2>")[1]

    assert "oracle://new-db:1521" in gaps and "mysql://legacy:3306" not in gaps
    assert 'id="gaps-of"' not in gaps


def test_a_run_without_a_report_says_so(admin: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow_blindata.ui import views

    monkeypatch.setattr(views, "run_page", lambda dag_id, run_id: [])

    page = admin.get("/runs/blindata_sync/manual__1").text

    assert "No task of this run synced with Blindata" in page


def test_a_run_whose_sync_failed_shows_the_failure_its_task_returned_no_report_of(
    admin: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot that failed (Blindata unreachable) returns no XCom: the tab said that no task
    synced, on the very runs an admin opens it for (a probe). The sync history has the record."""
    from airflow_blindata.ui import views

    from .seed import SYNC_DAG, record_snapshot, scheduled_run, snapshot_report

    url = f"sqlite:///{tmp_path / 'failed.db'}"
    seed(url, events=0, syncs=1)
    failed = snapshot_report(2)  # the sync DAG's run scheduled_run(2)
    failed.status, failed.message = "failed", "Cannot reach Blindata at https://bd.example"
    with open_store(url) as store:
        record_snapshot(store, failed, status="failed")
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)
    monkeypatch.setattr(views, "_returned_reports", lambda dag_id, run_id: [])

    page = admin.get(f"/runs/{SYNC_DAG}/{quote(scheduled_run(2), safe='')}").text
    other = admin.get(f"/runs/{SYNC_DAG}/{quote(scheduled_run(4), safe='')}").text

    assert "Task snapshot" in page
    assert "Cannot reach Blindata at https://bd.example" in page
    assert "No task of this run synced" in other


def test_a_run_report_reads_airflow_s_database_off_the_event_loop(
    admin: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API server serves every request (the receiver's too) from its event loop: a database
    read there, slow or waiting on a lock, would hold them all."""
    import asyncio

    from airflow_blindata.ui import views

    on_the_loop: list[bool] = []

    def run_page(dag_id: str, run_id: str) -> list[Any]:
        try:
            asyncio.get_running_loop()
            on_the_loop.append(True)
        except RuntimeError:
            on_the_loop.append(False)
        return []

    monkeypatch.setattr(views, "run_page", run_page)

    assert admin.get("/runs/blindata_sync/manual__1").status_code == 200
    assert on_the_loop == [False]


@pytest.mark.postgres
def test_the_page_reads_a_postgresql_store(admin: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    base = os.environ.get("BLINDATA_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("BLINDATA_TEST_POSTGRES_URL is not set")
    schema = f"ui_{uuid.uuid4().hex[:8]}"
    url = f"{base}?schema={schema}" if "?" not in base else f"{base}&schema={schema}"
    try:
        seed(url)
    except Exception as error:  # unreachable
        pytest.skip(f"PostgreSQL is not reachable: {type(error).__name__}")
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)

    capture, syncs = admin.get("/").text, admin.get("/syncs").text

    assert "<td>spark-prod</td><td>receiver</td>" in capture
    assert "UNMAPPED_NAMESPACE" in syncs
    with open_store(url) as store:
        store.close()


@pytest.mark.parametrize(
    ("raw", "hidden", "shown"),
    [
        ('{"url": "https://u:pw-1@h/x"}', "pw-1", "https://u:***@h/x"),
        ('{"apiKey": "k-2", "a": 1}', "k-2", '"apiKey": "***"'),
        ('{"db_password" : "p-3"}', "p-3", '"db_password" : "***"'),
        ('{"Authorization": "Bearer t-4"}', "t-4", '"Authorization": "***"'),
        ('{"password": "p5\\"-tail-5", "a": 1}', "tail-5", '"password": "***", "a": 1'),
        ('{"a": 1, "client_secret": "cut-6', "cut-6", '"client_secret": "***"'),
        ('{"token": "t7\\\nrest-7"}', "rest-7", '"token": "***"}'),
    ],
)
def test_the_page_hides_secrets_in_what_it_shows(raw: str, hidden: str, shown: str) -> None:
    from airflow_blindata.ui.views import _clean

    cleaned = _clean(raw)

    assert hidden not in cleaned
    assert shown in cleaned


@pytest.mark.parametrize(
    "secret_at",
    [
        '"password": "{secret}"',
        '"url": "postgresql://etl:{secret}@db/x"',
    ],
)
def test_a_quarantined_event_cut_for_its_excerpt_keeps_a_secret_hidden_across_the_cut(
    admin: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret_at: str
) -> None:
    """The page shows the event's first 300 characters; a secret the cut falls in is hidden."""
    secret = "SeCrEtVaLuE-1234567890"
    value = secret_at.format(secret=secret)
    pad = "x" * (300 - len('{"pad": "", ') - value.index(secret) - 4)
    url = f"sqlite:///{tmp_path / 'cut.db'}"
    with open_store(url) as store:
        store.append(f'{{"pad": "{pad}", {value}', source="receiver")
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)

    page = admin.get("/").text

    assert f"{pad}&#34;, " in page  # the cut falls inside the secret
    assert secret[:4] not in page


@pytest.mark.parametrize(("value", "entries"), [("True", 1), ("False", 0)])
def test_ui_enabled_adds_or_removes_the_page(
    monkeypatch: pytest.MonkeyPatch, value: str, entries: int
) -> None:
    from airflow_blindata.ui.app import plugin_external_views, plugin_fastapi_apps

    monkeypatch.setenv("AIRFLOW__BLINDATA__UI_ENABLED", value)

    assert len(plugin_fastapi_apps()) == entries
    assert len(plugin_external_views()) == 2 * entries


def test_a_job_namespace_with_a_password_is_shown_and_linked_without_it(
    client: Any, auth_manager: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42: Capture and Where it lands show a job namespace as the catalog names it, and
    the page's own links (which reach the API server's access log) never carry its password.
    Two spellings that differ only in their password are one job."""
    import re
    from html import unescape

    from .seed import run_event

    planted = "Pl4nted-S3cret"
    url = f"sqlite:///{tmp_path / 'dirty.db'}"
    with open_store(url) as store:
        store.append(run_event(1, namespace=f"postgres://etl:{planted}@db:5432"))
        store.append(run_event(4, namespace="postgres://etl:older-pw@db:5432"))
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)
    client.headers["Authorization"] = f"Bearer {token(auth_manager, 'admin')}"

    capture = client.get("/").text
    chooser = client.get("/lands").text
    (link,) = re.findall(r'<option value="([^"]+)"', chooser)
    chosen = client.get(f"/lands?{unescape(link)}")
    typed = client.get(
        "/lands", params={"namespace": f"postgres://etl:{planted}@db:5432", "name": "etl.job_1"}
    ).text

    assert "<td>postgres://db:5432</td><td>transport</td>" in capture
    assert chosen.status_code == 200
    assert planted not in str(chosen.request.url) and "older-pw" not in str(chosen.request.url)
    assert "<strong>2</strong> stored event(s)" in chosen.text  # both spellings are the job's
    assert "analytics.marts.t1" in chosen.text
    assert "postgres://db:5432/etl.job_1" in chosen.text
    for page in (capture, chooser, chosen.text, typed):
        assert planted not in page and "older-pw" not in page


def test_each_sync_is_summed_up_with_its_counters_behind_a_click(admin: Any) -> None:
    page = admin.get("/syncs").text

    # snapshot #1 (index 0): 2 entities and 1 flow created, 10 refreshed, 3 gaps
    assert (
        "<details><summary>created <strong>3</strong> · refreshed <strong>10</strong> · "
        "removed <strong>0</strong> · failed <strong>0</strong> · gaps <strong>3</strong>"
        "</summary>" in page
    )
    details = page.split("<details>")[-1].split("</details>")[0]
    assert "<td>entitiesCreated</td>" in details and "<td>flows</td>" in details


def test_a_sync_of_the_sync_dag_links_to_its_dag_run_and_task_log(admin: Any) -> None:
    """Links into the Airflow UI open in its whole window, not in the page's frame."""
    from .seed import SYNC_DAG, scheduled_run

    page = admin.get("/syncs").text

    run = f"/dags/{SYNC_DAG}/runs/{quote(scheduled_run(0), safe='')}"
    assert f'<a href="{run}" target="_top">{SYNC_DAG} / {scheduled_run(0)}</a>' in page
    assert f'<a href="{run}/tasks/snapshot" target="_top">task log</a>' in page


def test_command_line_runs_are_marked_apart_from_the_sync_dag_s(admin: Any) -> None:
    page = admin.get("/syncs").text

    marked = [row for row in page.split("<tr") if 'class="by-command"' in row]
    assert len(marked) == 1 and ">#2</a>" in marked[0]  # snapshot index 1 ran from the CLI
    assert "command line: <code>airflow-blindata snapshot</code>" in marked[0]


def test_each_sync_names_the_blindata_it_used(admin: Any) -> None:
    from .seed import BLINDATA

    page = admin.get("/syncs").text
    record = admin.get("/syncs/1").text

    assert page.count(f"<code>{BLINDATA}</code>") == 3
    assert f"<code>{BLINDATA}</code>" in record


def _failed_sync(tmp_path: Path, message: str) -> str:
    from .seed import record_snapshot, snapshot_report

    url = f"sqlite:///{tmp_path / 'failed.db'}"
    with open_store(url) as store:
        store.append(run_event(1))
        record_snapshot(store, snapshot_report(0))
        failed = snapshot_report(2)
        failed.finish("failed", message)
        record_snapshot(store, failed)
    return url


def test_a_failed_sync_s_message_is_shown_in_full_and_wrapped(
    admin: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not cut at a cell's width: the whole message, wrapped, in the list, the record and the
    page at a glance."""
    message = "Blindata cannot be used: " + " ".join(f"reason-{i}" for i in range(80))
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", _failed_sync(tmp_path, message))

    for path in ("/syncs", "/syncs/2", "/"):
        page = admin.get(path).text
        assert '<div class="wrap status-failed"' in page, path
        assert message in page, path


def test_the_page_at_a_glance_shows_the_last_event_and_the_last_sync(
    admin: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", _failed_sync(tmp_path, "unreachable"))

    page = admin.get("/").text

    glance = page.split('<section id="glance">')[1].split("</section>")[0]
    assert "Last event received" in glance and "<strong>just now</strong>" in glance
    assert "spark-prod / etl.job_1" in glance
    assert "Last sync" in glance and "snapshot #2</a>" in glance
    assert '<strong class="status-failed">failed</strong>' in glance


def test_gaps_pointing_above_come_after_what_they_point_at_with_their_hints_in_full(
    admin: Any,
) -> None:
    from airflow_blindata.mapper.report import GAP_HINTS, GapCode

    page = admin.get("/syncs").text
    gaps = page.split('<table class="gaps">')[1]

    assert gaps.index("UNMAPPED_NAMESPACE") < gaps.index("DANGLING_FLOW")
    for code in (GapCode.UNMAPPED_NAMESPACE, GapCode.DANGLING_FLOW):
        assert f"<td>{GAP_HINTS[code]}</td>" in gaps


def test_a_dag_run_s_report_links_each_task_to_its_log(
    admin: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow_blindata.ui import views

    from .seed import snapshot_report

    monkeypatch.setattr(views, "run_page", lambda dag_id, run_id: [("snap", snapshot_report(0))])

    page = admin.get("/runs/blindata_sync/manual__2026-12-01T00:00:00+00:00").text

    log = "/dags/blindata_sync/runs/manual__2026-12-01T00%3A00%3A00%2B00%3A00/tasks/snap"
    assert f'<a href="{log}" target="_top">task log</a>' in page


@pytest.mark.parametrize(
    ("dry_run", "status", "label"),
    [
        (False, "success", "removed"),
        (True, "success", "would remove"),
        (False, "refused", "would remove"),
    ],
)
def test_a_cleanup_that_removed_nothing_is_summed_up_as_what_it_would_remove(
    dry_run: bool, status: str, label: str
) -> None:
    """The report says "would remove" for a dry run or a refused cleanup; the page said
    "removed" (a probe of what the admin sees, against the emulator's state)."""
    from airflow_blindata.sync.report import RunReport
    from airflow_blindata.ui.views import summary

    report = RunReport(kind="cleanup", definition_uuid="d", dry_run=dry_run)
    report.note_removed("flow", "a -> b")
    report.note_removed("entity", "pg:public.a")
    report.finish(status)  # type: ignore[arg-type]
    counted = summary(report)
    assert counted[label] == 2
    assert ({"removed", "would remove"} - {label}).isdisjoint(counted)


def test_a_job_name_with_a_token_is_shown_and_linked_without_it(
    client: Any, auth_manager: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job's name is free text: a ``?token=`` in it is hidden on every page and in the page's
    own links, as the catalog hides it (a probe of secrets across channels found it on Capture,
    Syncs and Where it lands). The job is still found and mapped by the name it shows."""
    import re
    from html import unescape

    from .seed import run_event

    planted = "Pl4nted-T0ken"
    event = run_event(1)
    event["job"]["name"] = f"etl.load?token={planted}"
    url = f"sqlite:///{tmp_path / 'named.db'}"
    with open_store(url) as store:
        store.append(event)
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)
    client.headers["Authorization"] = f"Bearer {token(auth_manager, 'admin')}"

    capture = client.get("/").text
    syncs = client.get("/syncs").text
    chooser = client.get("/lands").text
    (link,) = re.findall(r'<option value="([^"]+)"', chooser)
    chosen = client.get(f"/lands?{unescape(link)}")

    assert "etl.load?token=***" in capture
    assert planted not in str(chosen.request.url)
    assert "<strong>1</strong> stored event(s)" in chosen.text  # found by the name it shows
    assert "analytics.marts.t1" in chosen.text
    for page in (capture, syncs, chooser, chosen.text):
        assert planted not in page


def test_the_parent_job_a_job_is_mapped_with_is_shown_without_its_credentials(
    client: Any, auth_manager: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task's parent facet names its DAG's job in a namespace that may hold a password, and a
    name a ``?token=``: "mapped … together with the parent job …" showed them raw, the rest of
    the page redacted (a probe of the page)."""
    from .seed import record_snapshot, run_event, snapshot_report

    url = f"sqlite:///{tmp_path / 'parents.db'}"
    event = run_event(1)
    event["run"]["facets"] = {
        "parent": {
            "run": {"runId": "01930000-0000-7000-8000-000000000001"},
            "job": {
                "namespace": "airflow://admin:JobNsPa55@airflow-host",
                "name": "dag1?token=T0k55",
            },
        }
    }
    with open_store(url) as store:
        store.append(event)
        report = snapshot_report(9)
        report.definition = {"uuid": DEFINITION}  # the history's definition: mapped with it
        record_snapshot(store, report)
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)
    client.headers["Authorization"] = f"Bearer {token(auth_manager, 'admin')}"

    page = client.get("/lands", params={"namespace": "spark-prod", "name": "etl.job_1"}).text

    assert "together with the parent job" in page
    assert "JobNsPa55" not in page and "T0k55" not in page


def a_listener_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, namespace: str, name: str
) -> None:
    """A store of one event of the job, captured by the listener, as the page's store."""
    from .seed import run_event

    url = f"sqlite:///{tmp_path / 'viewer.db'}"
    event = run_event(1, namespace=namespace)
    event["job"]["name"] = name
    with open_store(url) as store:
        store.append(event, source="listener")
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)


def test_a_viewer_reads_their_dags_job_whose_namespace_holds_a_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A viewer of ``dag1`` was refused its job on *Where it lands* when the namespace held a
    password (the page names it without), and let in when they typed the password, which then
    reached the URL and the API server's log (a probe of the page). The chooser left it out."""
    from airflow_blindata.ui import views
    from airflow_blindata.ui.access import Access

    a_listener_job(tmp_path, monkeypatch, "airflow://admin:JobNsPa55@airflow-host", "dag1.task2")
    viewer = Access(admin=False, dag_ids=frozenset({"dag1"}))

    assert views.job_readable(viewer, "airflow://airflow-host", "dag1.task2")
    shown = ("airflow://airflow-host", "dag1.task2")
    assert views.readable_jobs(viewer, [shown]) == [shown]


def test_a_viewer_may_not_read_another_dags_job_whose_name_shows_as_theirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two job names hidden whole by redaction (shaped as JSON web tokens) show as one: the
    viewer of one DAG typed a name of theirs and read the other's (a review). Each stored job is
    judged by its own name."""
    from airflow_blindata.ui import views
    from airflow_blindata.ui.access import Access

    a_listener_job(tmp_path, monkeypatch, "airflow", "eyJzZWNy.eyJvdGhl.export")
    viewer = Access(admin=False, dag_ids=frozenset({"eyJhbGci"}))

    assert not views.job_readable(viewer, "airflow", "eyJhbGci.eyJpbnRl.load")
    assert views.readable_jobs(viewer, [("airflow", "***")]) == []
