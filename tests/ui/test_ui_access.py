"""Who may open the page: Airflow's own tokens and roles decide, through its auth manager."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_blindata.store import open_store

from .helpers import token

PAGES = ["/", "/syncs", "/syncs/1", "/lands", "/runs/blindata_sync/manual__1"]


@pytest.mark.parametrize("path", PAGES)
def test_a_request_without_a_token_is_refused(client: Any, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 401


@pytest.mark.parametrize("path", PAGES)
def test_a_forged_token_is_refused(client: Any, path: str) -> None:
    response = client.get(path, headers={"Authorization": "Bearer not.a.jwt"})

    assert response.status_code in (401, 403)
    assert "Blindata" not in response.text


@pytest.mark.parametrize("path", PAGES)
def test_a_user_without_read_access_is_forbidden(client: Any, auth_manager: Any, path: str) -> None:
    response = client.get(path, headers={"Authorization": f"Bearer {token(auth_manager, None)}"})

    assert response.status_code == 403
    assert "read access" in response.json()["detail"]


@pytest.mark.parametrize(
    ("how", "path"),
    [("bearer", "/"), ("cookie", "/"), ("bearer", "/syncs"), ("cookie", "/lands")],
)
def test_a_viewer_reads_the_page_by_header_or_by_the_ui_cookie(
    client: Any, auth_manager: Any, how: str, path: str
) -> None:
    jwt = token(auth_manager, "viewer")
    if how == "bearer":
        response = client.get(path, headers={"Authorization": f"Bearer {jwt}"})
    else:
        client.cookies.set("_token", jwt)
        response = client.get(path)

    assert response.status_code == 200, response.text
    assert "<nav>" in response.text


def test_a_dag_run_report_needs_read_access_to_that_dag_s_runs(
    client: Any, auth_manager: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A viewer of the page who may not read one DAG (FAB's per-DAG permissions) gets no report
    of its runs; the decision is the auth manager's, asked for that DAG's runs."""
    from airflow_blindata.ui import views

    asked: list[tuple[str, str]] = []

    def is_authorized_dag(*, method: str, access_entity: Any, details: Any, user: Any) -> bool:
        asked.append((details.id, access_entity.name))
        return bool(details.id != "hr.payroll")

    monkeypatch.setattr(auth_manager, "is_authorized_dag", is_authorized_dag)
    monkeypatch.setattr(views, "run_page", lambda dag_id, run_id: [])
    viewer = {"Authorization": f"Bearer {token(auth_manager, 'viewer')}"}

    refused = client.get("/runs/hr.payroll/manual__1", headers=viewer)
    allowed = client.get("/runs/blindata_sync/manual__1", headers=viewer)

    assert refused.status_code == 403
    assert allowed.status_code == 200
    assert asked == [("hr.payroll", "RUN"), ("blindata_sync", "RUN")]


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("role", [None, "viewer", "admin"])
def test_every_answer_carries_the_security_headers(
    client: Any, auth_manager: Any, monkeypatch: pytest.MonkeyPatch, path: str, role: str | None
) -> None:
    """Framed by Airflow's own UI only, never cached (a page holds what one user may read), and
    never sniffed into another type: on pages, refusals and errors alike."""
    from airflow_blindata.ui import views

    monkeypatch.setattr(views, "run_page", lambda dag_id, run_id: [])
    headers = {"Authorization": f"Bearer {token(auth_manager, role)}"} if role else {}

    response = client.get(path, headers=headers)

    assert "frame-ancestors 'self'" in response.headers["content-security-policy"]
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("session", ["expired", "invalid", "none"])
def test_an_expired_session_in_the_browser_gets_a_way_back_to_airflow_s_login(
    client: Any, auth_manager: Any, session: str
) -> None:
    """In the Airflow UI's frame, a browser whose token expired (401), was signed by another key
    (403 "Invalid JWT token", which Airflow's own UI also sends to its login) or is missing gets a
    page with a link to Airflow's login (which comes back to the Blindata entry), not raw JSON."""
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    user = SimpleAuthManagerUser(username="u-viewer", role="viewer")
    if session == "expired":
        expired = auth_manager.generate_jwt(user, expiration_time_in_seconds=-60)
        client.cookies.set("_token", expired)
    elif session == "invalid":
        client.cookies.set("_token", "not.a.jwt")

    response = client.get("/syncs", headers={"Accept": "text/html,application/xhtml+xml"})

    assert response.status_code in (401, 403)
    assert response.headers["content-type"].startswith("text/html")
    assert 'href="/api/v2/auth/login?next=%2Fplugin%2Fblindata"' in response.text
    assert 'target="_top"' in response.text
    assert "detail" not in response.text


# -- per-DAG access: real users of each role of the simple auth manager -------------------------

ROLES = ["viewer", "user", "op", "admin"]
ADMIN_LEVEL = {"op", "admin"}  # those who may read Airflow's connections


@pytest.fixture
def per_dag_store(
    dags: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, int]:
    """Events of two DAGs' tasks (the listener's), one of an unknown DAG, one from a producer
    outside Airflow that names its job as a DAG's task; syncs by the sync DAG, by the command,
    and one recorded before reports said who ran them. The ids of the sync records, by origin."""
    from airflow_blindata.sync.report import RunOrigin

    from .seed import record_snapshot, run_event, snapshot_report

    def event(index: int, namespace: str, name: str) -> dict[str, Any]:
        return run_event(index, namespace) | {"job": {"namespace": namespace, "name": name}}

    url = f"sqlite:///{tmp_path / 'per-dag.db'}"
    with open_store(url) as store:
        store.append(event(1, "airflow-prod", "sales_etl.load"), source="listener")
        store.append(event(2, "airflow-prod", "sales_etl"), source="transport")
        store.append(event(3, "airflow-prod", "hr.payroll.compute"), source="listener")
        store.append(event(4, "airflow-prod", "gone_dag.task"), source="listener")
        store.append(event(5, "spark-prod", "sales_etl.load"), source="receiver")
        store.append('{"broken": true', source="receiver")
        ids = {}
        for index, origin in enumerate(
            [
                None,
                RunOrigin(command="snapshot"),
                RunOrigin(dag_id="blindata_sync", run_id="manual__1", task_id="snapshot"),
            ]
        ):
            report = snapshot_report(index)
            report.origin = origin
            record_snapshot(store, report)
            ids[origin.command or origin.dag_id if origin else "unknown"] = index + 1
    monkeypatch.setenv("AIRFLOW__BLINDATA__STORE_URL", url)
    return ids


def _as(client: Any, auth_manager: Any, role: str) -> Any:
    client.headers["Authorization"] = f"Bearer {token(auth_manager, role)}"
    return client


@pytest.mark.parametrize("role", ROLES)
def test_a_user_sees_the_events_of_the_dags_airflow_lets_them_read(
    client: Any, auth_manager: Any, per_dag_store: dict[str, int], role: str
) -> None:
    """Every role may read every DAG in the simple auth manager: the events of the DAGs Airflow
    knows are counted; those of a DAG it does not know, of producers outside Airflow (the
    receiver) and the quarantine are for admin-level users only."""
    page = _as(client, auth_manager, role).get("/").text

    assert "<td>airflow-prod</td><td>listener</td>" in page
    if role in ADMIN_LEVEL:
        assert "<td>spark-prod</td><td>receiver</td>" in page
        assert "Quarantined events (1)" in page
        assert '<th class="n">5</th>' in page
    else:
        assert "receiver" not in page.split('<table id="counts">')[1].split("</table>")[0]
        assert "Quarantined events" not in page and 'id="scope"' in page
        assert '<th class="n">3</th>' in page  # sales_etl (2) and hr.payroll (1); not gone_dag


def test_a_dag_the_auth_manager_does_not_let_a_user_read_is_left_out_of_every_page(
    client: Any, auth_manager: Any, per_dag_store: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decision is the auth manager's (FAB gives per-DAG permissions): its jobs, its events
    and where they land are refused to that user."""
    real = auth_manager.is_authorized_dag

    def is_authorized_dag(
        *, method: str, user: Any, access_entity: Any = None, details: Any = None
    ) -> bool:
        if details is not None and details.id == "hr.payroll":
            return False
        return bool(real(method=method, user=user, access_entity=access_entity, details=details))

    monkeypatch.setattr(auth_manager, "is_authorized_dag", is_authorized_dag)
    viewer = _as(client, auth_manager, "viewer")

    capture = viewer.get("/").text
    chooser = viewer.get("/lands").text
    allowed = viewer.get("/lands", params={"namespace": "airflow-prod", "name": "sales_etl.load"})
    refused = viewer.get(
        "/lands", params={"namespace": "airflow-prod", "name": "hr.payroll.compute"}
    )
    outside = viewer.get("/lands", params={"namespace": "spark-prod", "name": "sales_etl.load"})

    assert '<th class="n">2</th>' in capture  # sales_etl's two events only
    assert "sales_etl.load" in chooser and "hr.payroll" not in chooser
    assert "spark-prod" not in chooser and "gone_dag" not in chooser
    assert allowed.status_code == 200
    assert refused.status_code == 403 and outside.status_code == 403


@pytest.mark.parametrize("role", ROLES)
def test_the_sync_history_as_a_whole_needs_an_admin_level_permission(
    client: Any, auth_manager: Any, per_dag_store: dict[str, int], role: str
) -> None:
    """Other users see the records of the sync DAG's runs (as its runs' Blindata tab shows
    them), not those of the command nor those that do not say who ran them."""
    reader = _as(client, auth_manager, role)

    listing = reader.get("/syncs").text
    answers = {origin: reader.get(f"/syncs/{i}").status_code for origin, i in per_dag_store.items()}

    rows = listing.split('<table id="history">')[1].split("<h2>")[0]
    listed = {origin for origin, i in per_dag_store.items() if f'href="/syncs/{i}">#{i}<' in rows}
    if role in ADMIN_LEVEL:
        assert listed == {"unknown", "snapshot", "blindata_sync"}
        assert set(answers.values()) == {200}
        assert "(3 runs)" in listing
    else:
        assert listed == {"blindata_sync"}
        assert answers == {"unknown": 403, "snapshot": 403, "blindata_sync": 200}
        assert "runs)" not in listing  # not even how many there are


def test_the_page_at_a_glance_shows_a_user_their_dags_last_event_and_sync(
    client: Any, auth_manager: Any, per_dag_store: dict[str, int]
) -> None:
    glance = _as(client, auth_manager, "viewer").get("/").text.split('<section id="glance">')[1]

    assert "spark-prod" not in glance.split("</section>")[0]  # the receiver's came last
    assert f"snapshot #{per_dag_store['blindata_sync']}</a>" in glance
