"""Injected faults and the admin endpoints, in-process (blindata-api.md §3 "injectable faults")."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from blindata_emulator import DroppedConnection, Emulator, Faults, create_app
from helpers import API_KEY, STEWARD, api_key_headers, in_process, make_settings, ok
from starlette.applications import Starlette

ME = "/api/v1/users/me"


def _statuses(client: httpx.Client, n: int, path: str = ME) -> list[int]:
    return [client.get(path).status_code for _ in range(n)]


def test_fail_next_answers_5xx_with_the_spring_body_then_recovers(
    api: httpx.Client, emulator: Emulator
) -> None:
    emulator.faults.fail_next(2, status=500)
    first = api.get(ME)
    assert first.status_code == 500
    assert set(first.json()) == {"status", "timestamp", "error", "message", "path", "errorName"}
    assert _statuses(api, 2) == [500, 200]
    assert [e["fault"] for e in emulator.requests.entries()] == ["fail", "fail", None]


def test_rate_limit_next_answers_429_with_retry_after_in_seconds(
    api: httpx.Client, emulator: Emulator
) -> None:
    emulator.faults.rate_limit_next(1, retry_after=3)
    response = api.get(ME)
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "3"
    assert response.json()["status"] == 429
    assert api.get(ME).status_code == 200


def test_html_error_next_answers_a_proxy_page(api: httpx.Client, emulator: Emulator) -> None:
    emulator.faults.html_error_next(1)
    response = api.get(ME)
    assert response.status_code == 502
    assert response.headers["content-type"].startswith("text/html")
    with pytest.raises(json.JSONDecodeError):
        response.json()


def test_truncate_next_answers_200_json_with_a_cut_body_after_handling(
    api: httpx.Client, emulator: Emulator
) -> None:
    emulator.faults.truncate_next(1)
    response = api.post("/api/v1/systems", json={"name": "landed"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    with pytest.raises(json.JSONDecodeError):
        response.json()
    assert ok(api.get("/api/v1/systems", params={"name": "landed"}))["totalElements"] == 1


def test_drop_next_raises_a_transport_error_in_process(
    api: httpx.Client, emulator: Emulator
) -> None:
    emulator.faults.drop_next(1)
    with pytest.raises(httpx.RemoteProtocolError) as caught:
        api.post("/api/v1/systems", json={"name": "never"})
    assert isinstance(caught.value, DroppedConnection)
    assert caught.value.request.url.path == "/api/v1/systems"
    assert ok(api.get("/api/v1/systems"))["totalElements"] == 0
    emulator.faults.drop_next(1, processed=True)
    with pytest.raises(httpx.RemoteProtocolError):
        api.post("/api/v1/systems", json={"name": "landed anyway"})
    assert ok(api.get("/api/v1/systems"))["totalElements"] == 1
    assert [e["status"] for e in emulator.requests.entries()] == [None, 200, None, 200]


def test_a_path_filter_limits_a_fault_to_matching_requests(
    api: httpx.Client, emulator: Emulator
) -> None:
    emulator.faults.fail_next(1, path=r"/systems$")
    assert api.get(ME).status_code == 200
    assert api.get("/api/v1/systems").status_code == 503
    assert api.get("/api/v1/systems").status_code == 200


@pytest.mark.parametrize(
    "switch",
    [
        lambda f: f.fail_next(1, method="POST|PUT|DELETE"),
        lambda f: f.configure({"fail_next": 1, "method": "post|put|delete"}),
        lambda f: f.set_rates(error_rate=1.0, method="POST|PUT|DELETE"),
    ],
    ids=["counter", "admin-json", "rate"],
)
def test_a_method_filter_limits_a_fault_to_writes_while_reads_pass(
    api: httpx.Client, emulator: Emulator, switch: object
) -> None:
    switch(emulator.faults)  # type: ignore[operator]
    assert api.get("/api/v1/systems").status_code == 200
    assert api.post("/api/v1/systems", json={"name": "Refused"}).status_code == 503
    assert api.get("/api/v1/systems").json()["totalElements"] == 0


def test_counters_fire_first_in_first_out(api: httpx.Client, emulator: Emulator) -> None:
    emulator.faults.rate_limit_next(1)
    emulator.faults.fail_next(1)
    emulator.faults.html_error_next(1)
    assert _statuses(api, 4) == [429, 503, 502, 200]


def test_an_error_rate_with_a_seed_is_reproducible(app: Starlette) -> None:
    runs = []
    for _ in range(2):
        application = create_app(make_settings())
        application.state.emulator.faults.set_rates(error_rate=0.3, seed=42)
        with in_process(application, **api_key_headers()) as client:
            runs.append(_statuses(client, 40))
    assert runs[0] == runs[1]
    assert 0 < runs[0].count(503) < 40 and set(runs[0]) == {200, 503}


def test_latency_is_added_to_every_matching_request(api: httpx.Client, emulator: Emulator) -> None:
    emulator.faults.set_rates(latency_ms=50)
    started = time.perf_counter()
    api.get(ME)
    assert time.perf_counter() - started >= 0.05
    emulator.faults.set_rates(latency_ms=50, path="^/nothing")
    assert emulator.faults.decide(ME).latency_seconds == 0.0
    assert emulator.faults.decide("/nothing/here").latency_seconds == 0.05


@pytest.mark.parametrize(
    "call",
    [
        lambda f: f.fail_next(-1),
        lambda f: f.fail_next(1, status=200),
        lambda f: f.rate_limit_next(1, retry_after=-1),
        lambda f: f.set_rates(error_rate=1.5),
        lambda f: f.drop_next(1, path="("),
        lambda f: f.configure({"fail_nxt": 1}),
    ],
    ids=["negative", "not-an-error", "negative-retry", "rate-above-1", "bad-regex", "typo"],
)
def test_bad_fault_switches_are_refused(call: object) -> None:
    with pytest.raises(ValueError):
        call(Faults())  # type: ignore[operator]


def test_clear_removes_every_fault(api: httpx.Client, emulator: Emulator) -> None:
    emulator.faults.fail_next(5)
    emulator.faults.set_rates(error_rate=1.0, latency_ms=1)
    emulator.faults.clear()
    assert _statuses(api, 3) == [200, 200, 200]


def test_admin_endpoints_switch_faults_tokens_and_state_over_http(
    app: Starlette, emulator: Emulator
) -> None:
    with in_process(app) as admin, in_process(app, **api_key_headers()) as api:
        shown = ok(
            admin.post("/_emulator/faults", json={"fail_next": 1, "status": 504, "path": "users"})
        )
        assert shown["pending"] == [
            {"kind": "fail", "remaining": 1, "status": 504, "path": "users", "method": None}
        ]
        assert admin.post("/_emulator/faults", json={"fail_nxt": 1}).status_code == 400
        assert api.get(ME).status_code == 504
        ok(admin.post("/_emulator/faults", json={"html_error_next": 1, "status": 503}))
        assert api.get(ME).status_code == 503
        ok(admin.post("/_emulator/faults", json={"rate_limit_next": 2}))
        assert ok(admin.delete("/_emulator/faults"))["pending"] == []
        assert api.get(ME).status_code == 200
        token = ok(admin.post("/_emulator/tokens", json={"username": STEWARD}))["access_token"]
        bearer = {"Authorization": f"Bearer {token}"}
        assert ok(admin.get(ME, headers=bearer))["username"] == STEWARD
        assert admin.post("/_emulator/tokens", json={"username": "nobody"}).status_code == 404
        assert ok(admin.post("/_emulator/expire-tokens"))["expired"] == 1
        api.post("/api/v1/systems", json={"name": "gone after reset"})
        log = ok(admin.get("/_emulator/requests"))["requests"]
        assert all(not entry["path"].startswith("/_emulator") for entry in log)
        assert (
            ok(admin.get("/_emulator/requests", params={"since": log[-1]["id"]}))["requests"] == []
        )
        ok(admin.post("/_emulator/reset"))
        assert ok(api.get("/api/v1/systems"))["totalElements"] == 0
        assert ok(admin.post("/_emulator/clock", json={"advance_seconds": 10}))["now"]
        assert ok(admin.get("/_emulator/health")) == {"status": "UP"}
    assert API_KEY not in str(emulator.requests.entries())


def test_admin_endpoints_are_never_faulted(app: Starlette, emulator: Emulator) -> None:
    emulator.faults.fail_next(10)
    with in_process(app) as admin:
        assert admin.get("/_emulator/health").status_code == 200
    assert len(emulator.faults.pending()) == 1 and emulator.faults.pending()[0]["remaining"] == 10
