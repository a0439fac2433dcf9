"""The page in a real ``airflow api-server``, seen by headless Chromium.

One API server (a temporary ``AIRFLOW_HOME``, the simple auth manager with an admin and a viewer)
serves a seeded SQLite store. The viewer signs in through the auth manager's own login route;
Chromium gets the token as the ``_token`` cookie the Airflow UI keeps, opens each page, takes a
screenshot, and the rendered DOM is checked. Set
``BLINDATA_UI_SCREENSHOTS`` to a folder to keep the screenshots (the README's comes from here).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest

from .browser import Chromium
from .helpers import CLEANUP_FAILURE, _kept, _serving, _token
from .seed import (
    BLINDATA,
    DEFINITION,
    SECRET,
)

pytestmark = [pytest.mark.integration, pytest.mark.airflow]


@pytest.fixture(scope="module")
def api_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``airflow api-server`` on loopback, with the provider's plugin, on a seeded store."""
    with _serving(tmp_path_factory) as root:
        yield root


@pytest.fixture(scope="module")
def api_server_under_a_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same, with Airflow served under a path (``[api] base_url``), as behind a proxy that
    gives it ``https://host/airflow``: its root URL, path included."""
    with _serving(tmp_path_factory, base_path="/airflow") as root:
        yield root


def test_the_page_refuses_a_request_without_airflow_login(api_server: str) -> None:
    anonymous = httpx.get(f"{api_server}/blindata-ui/")
    token = _token(api_server)
    signed_in = httpx.get(
        f"{api_server}/blindata-ui/", headers={"Authorization": f"Bearer {token}"}
    )

    assert anonymous.status_code == 401
    assert signed_in.status_code == 200 and "Capture" in signed_in.text


def test_airflow_lists_the_nav_entry_and_the_dag_run_view(api_server: str) -> None:
    token = _token(api_server)

    plugins = httpx.get(
        f"{api_server}/api/v2/plugins", headers={"Authorization": f"Bearer {token}"}
    ).json()

    views = [v for p in plugins["plugins"] if p["name"] == "blindata" for v in p["external_views"]]
    assert {(v["name"], v["destination"]) for v in views} == {
        ("Blindata", "nav"),
        ("Blindata report", "dag_run"),
    }


def test_the_views_open_when_airflow_is_served_under_a_path(api_server_under_a_path: str) -> None:
    """The UI loads each view's ``href`` in an iframe, resolved against the ``<base href>`` of its
    page (Airflow's base path): the views must be found there, not at the host's root."""
    root = api_server_under_a_path
    base = re.search(r'<base href="([^"]*)"', httpx.get(f"{root}/").text)
    assert base is not None and base.group(1) == "/airflow/"
    auth = {"Authorization": f"Bearer {_token(root)}"}
    plugins = httpx.get(f"{root}/api/v2/plugins", headers=auth).json()
    views = [v for p in plugins["plugins"] if p["name"] == "blindata" for v in p["external_views"]]
    assert len(views) == 2
    for view in views:
        href = view["href"].replace("{DAG_ID}", "blindata_sync").replace("{RUN_ID}", "manual__1")
        src = urljoin(urljoin(root, base.group(1)), href)  # as the browser resolves the iframe
        response = httpx.get(src, headers=auth)
        assert response.status_code == 200, f"{view['name']}: {src} answered {response.status_code}"
        assert "<nav>" in response.text


@pytest.mark.parametrize(
    ("name", "page", "expected"),
    [
        (
            "blindata-capture",
            "/blindata-ui/",
            ["spark-prod", "receiver", "Quarantined events (1)", CLEANUP_FAILURE],
        ),
        (
            "blindata-syncs",
            "/blindata-ui/syncs",
            [DEFINITION, "UNMAPPED_NAMESPACE", "partial", CLEANUP_FAILURE, "command line"],
        ),
        ("blindata-report", "/blindata-ui/syncs/2", ["Report, as the task log shows it"]),
        (
            "blindata-lands",
            "/blindata-ui/lands?namespace=spark-prod&name=etl.job_1",
            ["Entities (", "analytics.marts.t1"],
        ),
        ("blindata-run", "/blindata-ui/runs/blindata_sync/manual__1", ["No task of this run"]),
    ],
)
def test_a_browser_shows_each_page(
    api_server: str, browser: Chromium, tmp_path: Path, name: str, page: str, expected: list[str]
) -> None:
    out = tmp_path / f"{name}.png"

    dom = browser.open(f"{api_server}{page}", _token(api_server), out)

    _kept(out)
    for text in expected:
        assert text in dom
    assert SECRET not in dom


def test_a_sync_s_links_open_its_run_and_log_in_airflow_served_under_a_path(
    api_server_under_a_path: str, browser: Chromium, tmp_path: Path
) -> None:
    """The links to a sync's DAG run and task log, and the expired session's way back to the
    login, are Airflow UI pages under Airflow's base path, opened in the whole window."""
    root = api_server_under_a_path
    dom = browser.open(f"{root}/blindata-ui/syncs", _token(root), tmp_path / "syncs.png")

    top = re.findall(r'<a href="([^"]+)" target="_top">', dom)
    assert any(href.startswith("/airflow/dags/blindata_sync/runs/") for href in top), top
    assert any(href.endswith("/tasks/snapshot") for href in top), top
    for href in top:
        page = httpx.get(urljoin(root, href))
        assert page.status_code == 200 and '<base href="/airflow/"' in page.text, href
    expired = httpx.get(f"{root}/blindata-ui/syncs", headers={"Accept": "text/html"})
    login = re.search(r'<a href="([^"]+)" target="_top">', expired.text)
    assert expired.status_code == 401 and login is not None
    assert login.group(1).startswith("/airflow/api/v2/auth/login?next=")
    assert httpx.get(urljoin(root, login.group(1).replace("&amp;", "&"))).status_code in (
        200,
        307,
    )


def test_a_viewer_sees_only_what_airflow_lets_them_read(
    api_server: str, browser: Chromium, tmp_path: Path
) -> None:
    """The viewer may read no DAG of this Airflow (it has none): no producer outside Airflow, no
    quarantine, no sync record run from the command line or by an unknown run."""
    out = tmp_path / "blindata-viewer.png"

    dom = browser.open(f"{api_server}/blindata-ui/", _token(api_server, "viewer"), out)
    syncs = browser.open(f"{api_server}/blindata-ui/syncs", _token(api_server, "viewer"), out)

    assert 'id="scope"' in dom and "receiver</td>" not in dom and "Quarantined" not in dom
    assert "command line: " not in syncs and 'href="/blindata-ui/syncs/1"' not in syncs


def test_a_captured_task_has_the_operator_extra_link_view_in_blindata(api_server: str) -> None:
    """Airflow's own API, as its UI asks on a task instance's page: the plugin's global link
    points at the task's job entity in Blindata."""
    auth = {"Authorization": f"Bearer {_token(api_server)}"}
    run = httpx.post(
        f"{api_server}/api/v2/dags/sales/dagRuns", headers=auth, json={"logical_date": None}
    )
    assert run.status_code == 200, run.text
    run_id = run.json()["dag_run_id"]

    links = httpx.get(
        f"{api_server}/api/v2/dags/sales/dagRuns/{run_id}/taskInstances/load/links",
        headers=auth,
    )

    assert links.status_code == 200, links.text
    assert links.json()["extra_links"] == {
        "View in Blindata": f"{BLINDATA}/#/search?query=sales.load"
    }


CLICK_FIRST_SUMMARY = """(() => {
  const details = document.querySelector('#history details');
  const counters = details.querySelector('table.counters');
  const shown = () => details.open && counters.checkVisibility();
  document.body.dataset.before = String(shown());
  details.querySelector('summary').click();
  document.body.dataset.after = String(shown());
})()"""


def test_a_sync_s_counters_are_behind_a_click_on_its_summary(
    api_server: str, browser: Chromium, tmp_path: Path
) -> None:
    out = tmp_path / "blindata-syncs-counters.png"

    dom = browser.open(
        f"{api_server}/blindata-ui/syncs", _token(api_server), out, action=CLICK_FIRST_SUMMARY
    )

    _kept(out)
    body = re.search(r"<body[^>]*>", dom)
    assert body is not None
    assert body.group(0) == '<body data-before="false" data-after="true">'
    assert "<summary>created <strong>" in dom


def test_a_browser_whose_session_is_no_longer_valid_gets_a_way_back_to_the_login(
    api_server: str, browser: Chromium, tmp_path: Path
) -> None:
    """As in the Airflow UI's frame after the token expired (or the key changed): a page, not
    JSON, with a link that opens Airflow's login in the whole window."""
    dom = browser.open(f"{api_server}/blindata-ui/syncs", "not.a.jwt", tmp_path / "signed-out.png")

    assert 'id="refused"' in dom and '"detail"' not in dom
    link = re.search(r'<a href="([^"]+)" target="_top">Sign in to Airflow again</a>', dom)
    assert link is not None
    assert link.group(1) == "/api/v2/auth/login?next=%2Fplugin%2Fblindata"
