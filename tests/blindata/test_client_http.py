"""The Blindata client against the emulator served over real HTTP on loopback.

Each test is named after the sentence of ``blindata-api.md`` (or of the foundation issue) it checks.
"""

from __future__ import annotations

import logging
import re
import socket
import time
from typing import Any

import httpx
import pytest

from airflow_blindata.blindata import (
    ApiKeyCredentials,
    BearerToken,
    BlindataAuthError,
    BlindataClient,
    BlindataConfigError,
    BlindataConflictError,
    BlindataContractError,
    BlindataDeadlineError,
    BlindataPermissionError,
    BlindataRequestError,
    BlindataServerError,
    BlindataUnsentError,
    LoginCredentials,
    RetryPolicy,
)
from airflow_blindata.blindata.models import AdditionalProperty, PhysicalEntity, Ref, System
from tests.blindata.helpers import (
    URL_PASSWORD,
    URL_SECRETS,
    URL_USER,
    set_faults,
    with_url_credentials,
)
from tests.helpers import API_KEY, HUMAN, OTHER_TENANT, PASSWORD, TENANT, USER

pytestmark = pytest.mark.integration

FAST_RETRY = RetryPolicy(deadline=10.0, max_attempts=5, backoff_initial=0.05, backoff_max=0.2)


def client_for(emulator: Any, **options: Any) -> BlindataClient:
    options.setdefault("credentials", ApiKeyCredentials(USER, API_KEY))
    options.setdefault("tenant", TENANT)
    options.setdefault("retry", FAST_RETRY)
    return BlindataClient(emulator.base_url, **options)


def request_log(emulator: Any) -> list[dict[str, Any]]:
    answer = httpx.get(f"{emulator.base_url}/_emulator/requests")
    answer.raise_for_status()
    data = answer.json()
    return list(data["requests"] if isinstance(data, dict) else data)


def requests_to(emulator: Any, method: str, path: str) -> int:
    return sum(1 for r in request_log(emulator) if r["method"] == method and r["path"] == path)


# -- authentication and tenant -------------------------------------------------------------------


def test_api_key_headers_authenticate_an_application_user(emulator: Any) -> None:
    with client_for(emulator) as client:
        assert client.api.me().username == USER


def test_login_gets_a_bearer_token_and_logs_in_again_once_on_a_401(emulator: Any) -> None:
    with client_for(emulator, credentials=LoginCredentials(HUMAN, PASSWORD)) as client:
        assert client.api.me().username == HUMAN
        assert requests_to(emulator, "POST", "/auth/login") == 1
        client.api.me()
        assert requests_to(emulator, "POST", "/auth/login") == 1  # the token is reused
        emulator.emulator.expire_tokens()
        assert client.api.me().username == HUMAN  # transparently logged in again
        assert requests_to(emulator, "POST", "/auth/login") == 2


def test_a_create_whose_login_failed_with_a_gateway_error_is_sent_once_the_login_works(
    emulator: Any,
) -> None:
    """A login answered 502 (a gateway in front of Blindata) comes before the create is sent:
    nothing was created, so the operation is tried again. It failed at once, as a create that
    may have reached the server does, and a snapshot lost a write it could have made."""
    emulator.emulator.faults.fail_next(1, status=502, path="/auth/login")
    with client_for(emulator, credentials=LoginCredentials(HUMAN, PASSWORD)) as client:
        created = client.api.systems.create(System(name="after-a-502-login"))
    assert created.name == "after-a-502-login"
    assert requests_to(emulator, "POST", "/api/v1/systems") == 1


def test_the_login_request_carries_x_bd_tenant_as_every_request_does(emulator: Any) -> None:
    """Contract: "header X-BD-Tenant on every request"; the login is one."""
    with client_for(emulator, credentials=LoginCredentials(HUMAN, PASSWORD)) as client:
        client.api.me()
    logins = [r for r in request_log(emulator) if r["path"] == "/auth/login"]
    assert [r["tenantHeader"] for r in logins] == [TENANT]


def test_a_bearer_token_obtained_elsewhere_is_sent_as_is(emulator: Any) -> None:
    token = emulator.emulator.issue_token(HUMAN)
    with client_for(emulator, credentials=BearerToken(token)) as client:
        assert client.api.me().username == HUMAN
        emulator.emulator.expire_tokens()
        with pytest.raises(BlindataAuthError) as caught:
            client.api.me()
    assert caught.value.status == 401
    assert token not in str(caught.value)


@pytest.mark.parametrize(
    "credentials",
    [ApiKeyCredentials(USER, "wrong-key"), LoginCredentials(HUMAN, "wrong-password")],
    ids=["api_key", "login"],
)
def test_bad_credentials_give_401_with_the_servers_message(emulator: Any, credentials: Any) -> None:
    with (
        client_for(emulator, credentials=credentials) as client,
        pytest.raises(BlindataAuthError) as caught,
    ):
        client.api.me()
    error = caught.value
    assert error.status == 401
    assert error.body is not None and error.body.message
    assert "wrong-" not in str(error)


def test_without_x_bd_tenant_the_credentials_default_tenant_applies(emulator: Any) -> None:
    with client_for(emulator, tenant=None) as client:
        created = client.api.systems.create(System(name="Default tenant system"))
    with client_for(emulator, tenant=TENANT) as client:
        assert client.api.systems.get(created.uuid or "").name == "Default tenant system"


def test_a_tenant_the_user_cannot_reach_gives_403(emulator: Any) -> None:
    with (
        client_for(emulator, tenant=OTHER_TENANT) as client,
        pytest.raises(BlindataPermissionError) as caught,
    ):
        client.api.me()
    assert caught.value.status == 403


def test_x_bd_tenant_separates_the_catalogs_of_two_tenants(emulator: Any) -> None:
    human = LoginCredentials(HUMAN, PASSWORD)
    with client_for(emulator, credentials=human, tenant=TENANT) as first:
        first.api.systems.create(System(name="Only in the first tenant"))
    with client_for(emulator, credentials=human, tenant=OTHER_TENANT) as second:
        assert list(second.api.systems.list(name="Only in the first tenant")) == []


# -- pages, conflicts, uploads -------------------------------------------------------------------


def test_lists_are_read_page_by_page_across_spring_pages(emulator: Any) -> None:
    with client_for(emulator) as client:
        for number in range(23):
            client.api.systems.create(System(name=f"system-{number:02d}"))
        before = requests_to(emulator, "GET", "/api/v1/systems")
        names = [system.name for system in client.api.systems.list(page_size=10)]
        assert sorted(names) == [f"system-{number:02d}" for number in range(23)]
        assert len(set(names)) == 23
        assert requests_to(emulator, "GET", "/api/v1/systems") - before == 3


def test_a_page_size_above_the_cap_still_reads_every_item(emulator: Any) -> None:
    with client_for(emulator) as client:
        system = client.api.systems.create(System(name="Big"))
        rows = [
            PhysicalEntity(system=Ref(uuid=system.uuid or ""), schema="s", name=f"t{n:04d}")
            for n in range(1205)
        ]
        report = client.api.physical_entities.upload(rows, batch_size=1000)
        assert report.created == 1205 and report.requests == 2
        listed = list(client.api.physical_entities.list(page_size=5000, systemUuid=system.uuid))
    assert len({entity.uuid for entity in listed}) == 1205


def test_creating_a_duplicate_natural_key_gives_409(emulator: Any) -> None:
    with client_for(emulator) as client:
        client.api.systems.create(System(name="DWH"))
        with pytest.raises(BlindataConflictError) as caught:
            client.api.systems.create(System(name="DWH"))
    assert caught.value.status == 409
    assert caught.value.server_message


def test_an_upload_discards_a_bad_row_reports_it_and_applies_the_others(emulator: Any) -> None:
    with client_for(emulator) as client:
        system = client.api.systems.create(System(name="Lake"))
        good = Ref(uuid=system.uuid or "")
        rows = [
            PhysicalEntity(system=good, schema="sales", name="orders"),
            PhysicalEntity(system=Ref(uuid="no-such-system"), schema="sales", name="lost"),
            PhysicalEntity(system=good, schema="sales", name="customers"),
        ]
        first = client.api.physical_entities.upload(rows, batch_size=2)
        again = client.api.physical_entities.upload(rows, batch_size=2)
        stored = {e.name for e in client.api.physical_entities.list(systemUuid=system.uuid)}
    assert (first.created, first.updated, first.discarded) == (2, 0, 1)
    assert [(error.index, error.row.name) for error in first.errors] == [(1, "lost")]
    assert first.errors[0].message
    assert (again.created, again.updated, again.discarded) == (0, 2, 1)
    assert stored == {"orders", "customers"}


def test_every_upsert_refreshes_modification_date_and_never_blanks(emulator: Any) -> None:
    with client_for(emulator) as client:
        system = client.api.systems.create(System(name="Warehouse"))
        row = PhysicalEntity(
            system=Ref(uuid=system.uuid or ""),
            schema="s",
            name="t",
            description="crawled description",
            additional_properties=[AdditionalProperty(name="owner", value="finance")],
        )
        client.api.physical_entities.upload([row])
        (before,) = client.api.physical_entities.list(systemUuid=system.uuid)
        time.sleep(0.01)
        bare = PhysicalEntity(system=row.system, schema="s", name="t")
        client.api.physical_entities.upload([bare])
        (after,) = client.api.physical_entities.list(systemUuid=system.uuid)
    assert after.modification_date and before.modification_date
    assert after.modification_date > before.modification_date
    assert after.description == "crawled description"
    assert after.property("owner") == "finance"


# -- retries, deadline, faults -------------------------------------------------------------------


def test_429_is_retried_after_the_servers_retry_after(emulator: Any) -> None:
    set_faults(emulator, rate_limit_next=2, retry_after=1)
    started = time.monotonic()
    with client_for(emulator) as client:
        assert client.api.me().username == USER
    assert time.monotonic() - started >= 2.0  # two waits of Retry-After: 1
    assert requests_to(emulator, "GET", "/api/v1/users/me") == 3


def test_5xx_is_retried_with_backoff(emulator: Any) -> None:
    set_faults(emulator, fail_next=3, status=503)
    with client_for(emulator) as client:
        assert client.api.me().username == USER
    assert requests_to(emulator, "GET", "/api/v1/users/me") == 4


def test_a_dropped_connection_is_retried_for_an_idempotent_request(emulator: Any) -> None:
    set_faults(emulator, drop_next=1)
    with client_for(emulator) as client:
        assert client.api.me().username == USER


def test_a_dropped_create_is_not_sent_twice(emulator: Any) -> None:
    """A create that may have reached the server is not retried: it could create twice."""
    set_faults(emulator, drop_next=1)
    with client_for(emulator) as client:
        with pytest.raises(BlindataRequestError) as caught:
            client.api.systems.create(System(name="Maybe created"))
        assert not isinstance(caught.value, BlindataDeadlineError)
    assert requests_to(emulator, "POST", "/api/v1/systems") == 1


def test_retries_give_up_at_the_deadline_with_a_clear_error(emulator: Any) -> None:
    set_faults(emulator, fail_next=1000, status=503)
    policy = RetryPolicy(deadline=1.0, max_attempts=50, backoff_initial=0.1, backoff_max=0.3)
    started = time.monotonic()
    with (
        client_for(emulator, retry=policy) as client,
        pytest.raises(BlindataDeadlineError) as caught,
    ):
        client.api.me()
    # gave up because of the deadline, long before 50 attempts (a bound loose enough for a busy CI)
    assert time.monotonic() - started < 10.0
    error = caught.value
    assert 1 < error.attempts < 50
    assert isinstance(error.last_error, BlindataServerError)
    assert "Gave up on GET /api/v1/users/me" in str(error) and "503" in str(error)


def test_a_dead_port_gives_a_request_error_naming_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    policy = RetryPolicy(deadline=1.0, max_attempts=3, backoff_initial=0.05)
    with (
        BlindataClient(
            f"http://127.0.0.1:{port}", credentials=ApiKeyCredentials(USER, API_KEY), retry=policy
        ) as client,
        pytest.raises(BlindataRequestError) as caught,
    ):
        client.api.me()
    assert f"cannot connect to http://127.0.0.1:{port}" in str(caught.value)


@pytest.mark.parametrize(
    "options",
    [
        {"credentials": BearerToken("eyJhbGciOiJIUzI1NiJ9\n.eyJzdWIiOiJldGwifQ.c2lnbmF0dXJl")},
        {"credentials": ApiKeyCredentials("etl\nuser", API_KEY)},
    ],
    ids=["token-with-a-line-break", "username-with-a-line-break"],
)
def test_a_request_the_client_cannot_send_is_not_retried_as_a_network_failure(
    emulator: Any, options: dict[str, Any]
) -> None:
    """A header value with a line break fails in the worker, before anything is sent, and the
    same way every time: it was retried until the deadline (two minutes of a sync task) and
    reported as if the server could not be reached."""
    with client_for(emulator, **options) as client, pytest.raises(BlindataRequestError) as caught:
        client.api.me()
    assert not isinstance(caught.value, BlindataDeadlineError), caught.value
    assert isinstance(caught.value, BlindataUnsentError), caught.value  # no network failure
    assert "could not be sent" in str(caught.value)
    assert "c2lnbmF0dXJl" not in str(caught.value)
    assert requests_to(emulator, "GET", "/api/v1/users/me") == 0


def test_a_tenant_that_is_not_ascii_is_a_configuration_error(emulator: Any) -> None:
    with pytest.raises(BlindataConfigError, match=r"tenant .* not ASCII"):
        client_for(emulator, tenant="\u200b" + TENANT)


class PermissionsAsObjects(httpx.HTTPTransport):
    """A Blindata whose ``/users/me`` lists permissions as objects: the contract says
    ``permissions: [...]`` and not what an item is (the emulator sends names)."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if not request.url.path.endswith("/users/me"):
            return response
        response.read()
        body = response.json()
        body["permissions"] = [{"name": name, "area": "ANY"} for name in body["permissions"]]
        return httpx.Response(response.status_code, headers={"Date": "x"}, json=body)


def test_who_am_i_reads_permissions_whatever_their_items_are(emulator: Any) -> None:
    with client_for(emulator, transport=PermissionsAsObjects()) as client:
        me = client.api.me()
    assert me.username == USER
    assert me.permissions and all(isinstance(p, dict) for p in me.permissions)


# -- bad answers ---------------------------------------------------------------------------------


def test_an_html_error_page_gives_a_typed_server_error(emulator: Any) -> None:
    set_faults(emulator, html_error_next=100, status=502)
    policy = RetryPolicy(deadline=0.5, max_attempts=2, backoff_initial=0.05)
    with (
        client_for(emulator, retry=policy) as client,
        pytest.raises(BlindataDeadlineError) as caught,
    ):
        client.api.me()
    last = caught.value.last_error
    assert isinstance(last, BlindataServerError)
    assert last.status == 502 and last.body is None
    assert "502" in str(last)


def _update_a_system(client: BlindataClient) -> str:
    created = client.api.systems.create(System(name="Truncated update"))
    return client.api.systems.update(created.model_copy(update={"description": "new"})).name


def _upload_an_entity(client: BlindataClient) -> int:
    system = client.api.systems.create(System(name="Truncated upload"))
    row = PhysicalEntity(system=Ref(uuid=system.uuid or ""), schema="s", name="t")
    return client.api.physical_entities.upload([row]).accepted


@pytest.mark.parametrize(
    ("call", "method", "path", "answer"),
    [
        pytest.param(lambda c: c.api.me().username, "GET", r"/users/me$", USER, id="GET"),
        pytest.param(
            _update_a_system, "PUT", r"/systems/[^/]+$", "Truncated update", id="PUT-update"
        ),
        pytest.param(_upload_an_entity, "POST", r"/\*/upload$", 1, id="POST-upload-by-key"),
    ],
)
def test_a_truncated_200_is_sent_again_when_the_call_is_idempotent(
    emulator: Any, call: Any, method: str, path: str, answer: Any
) -> None:
    emulator.emulator.faults.truncate_next(1, path=path)
    with client_for(emulator) as client:
        assert call(client) == answer
    sent = [
        r for r in request_log(emulator) if r["method"] == method and re.search(path, r["path"])
    ]
    assert [r["fault"] for r in sent] == ["truncate", None]


def test_a_truncated_answer_to_a_create_is_a_contract_error_and_is_not_sent_twice(
    emulator: Any,
) -> None:
    """The create landed before its answer was cut: sending it again could create twice."""
    set_faults(emulator, truncate_next=1, path=r"/systems$")
    with client_for(emulator) as client, pytest.raises(BlindataContractError) as caught:
        client.api.systems.create(System(name="Created once"))
    assert "not valid JSON" in str(caught.value) and caught.value.incomplete
    assert requests_to(emulator, "POST", "/api/v1/systems") == 1
    assert len(emulator.emulator.objects("system")) == 1


@pytest.mark.parametrize(
    "inject",
    [
        pytest.param(lambda f: f.rate_limit_next(12, retry_after=0), id="429"),
        pytest.param(lambda f: f.fail_next(12, status=503), id="503"),
        pytest.param(lambda f: f.drop_next(12), id="dropped-connection"),
        pytest.param(lambda f: f.truncate_next(12), id="truncated-200"),
    ],
)
def test_retries_go_on_until_the_deadline_not_for_a_count_of_attempts(
    emulator: Any, inject: Any
) -> None:
    """More failures in a row than the 8 attempts the client used to stop at, well within it."""
    inject(emulator.emulator.faults)
    policy = RetryPolicy(deadline=3.0, backoff_initial=0.01, backoff_max=0.02)
    with client_for(emulator, retry=policy) as client:
        assert client.api.me().username == USER
    assert requests_to(emulator, "GET", "/api/v1/users/me") == 13


def test_a_max_attempts_given_explicitly_still_stops_the_retries_early(emulator: Any) -> None:
    set_faults(emulator, fail_next=5, status=503)
    policy = RetryPolicy(deadline=3.0, max_attempts=2, backoff_initial=0.01)
    with (
        client_for(emulator, retry=policy) as client,
        pytest.raises(BlindataDeadlineError) as caught,
    ):
        client.api.me()
    assert caught.value.attempts == 2
    assert requests_to(emulator, "GET", "/api/v1/users/me") == 2


# -- secrets ---------------------------------------------------------------------------------------


def test_secrets_never_reach_logs_reprs_or_exception_messages(
    emulator: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    set_faults(emulator, fail_next=2, status=503)
    texts: list[str] = []
    for credentials in (ApiKeyCredentials(USER, API_KEY), LoginCredentials(HUMAN, PASSWORD)):
        with client_for(emulator, credentials=credentials) as client:
            texts.append(repr(client))
            client.api.me()
    token = emulator.emulator.issue_token(HUMAN)
    with client_for(emulator, credentials=BearerToken(token)) as client:
        texts.append(repr(client))
        emulator.emulator.expire_tokens()
        with pytest.raises(BlindataAuthError) as caught:
            client.api.me()
        texts.append(str(caught.value))
    texts.append(caplog.text)
    texts.append(str(request_log(emulator)))
    for secret in (API_KEY, PASSWORD, token):
        assert all(secret not in text for text in texts)


def test_credentials_in_the_url_are_redacted_like_the_key(
    emulator: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    shown = with_url_credentials(emulator.base_url).replace(URL_PASSWORD, "***")
    set_faults(emulator, fail_next=1, status=503)  # a retry, and its warning
    with BlindataClient(
        with_url_credentials(emulator.base_url),
        credentials=ApiKeyCredentials(USER, API_KEY),
        tenant=TENANT,
        retry=FAST_RETRY,
    ) as client:
        assert client.api.me().username == USER  # the URL works: credentials and all
        assert client.shown_url == shown
        texts += [repr(client), client.shown_url]

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dead = with_url_credentials(f"http://127.0.0.1:{port}")
    policy = RetryPolicy(deadline=2.0, max_attempts=2, backoff_initial=0.05)
    with (
        BlindataClient(dead, credentials=ApiKeyCredentials(USER, API_KEY), retry=policy) as client,
        pytest.raises(BlindataDeadlineError) as caught,
    ):
        client.api.me()
    assert f"cannot connect to http://{URL_USER}:***@127.0.0.1:{port}" in str(caught.value)
    texts += [str(caught.value), str(caught.value.last_error), repr(caught.value)]

    for bad in (with_url_credentials("ftp://blindata"), with_url_credentials("http://h:port")):
        with pytest.raises(BlindataConfigError) as refused:
            BlindataClient(bad, credentials=ApiKeyCredentials(USER, API_KEY))
        assert f"{URL_USER}:***@" in str(refused.value)
        texts.append(str(refused.value))

    texts.append(caplog.text)
    assert "attempt 2 of" in caplog.text  # the warnings were logged ...
    for secret in URL_SECRETS:  # ... and nothing shows the password
        assert all(secret not in text for text in texts), secret
