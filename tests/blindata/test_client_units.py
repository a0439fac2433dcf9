"""Client behaviour that needs a server doing something the emulator does not: one-off fakes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from airflow_blindata.blindata import (
    ENDPOINTS,
    ApiKeyCredentials,
    BlindataClient,
    BlindataConfigError,
    BlindataContractError,
    BlindataDeadlineError,
    BlindataValidationError,
    Evidence,
    RetryPolicy,
)
from airflow_blindata.blindata.client import http_date
from airflow_blindata.blindata.exchange import environment_proxy
from airflow_blindata.blindata.models import PhysicalEntity, Ref, format_timestamp


def fake_client(handler: httpx.MockTransport, retry: RetryPolicy | None = None) -> BlindataClient:
    return BlindataClient(
        "http://blindata.test",
        credentials=ApiKeyCredentials("u", "k"),
        tenant="t",
        transport=handler,
        retry=retry or RetryPolicy(deadline=2, backoff_initial=0.01),
    )


@pytest.mark.parametrize(
    "status",
    [
        pytest.param(400, id="400 invalid"),
        pytest.param(409, id="409 duplicate natural key"),
        pytest.param(422, id="422 unprocessable"),
    ],
)
def test_a_batch_refused_whole_with_400_is_split_until_the_bad_row_is_alone(status: int) -> None:
    """One bad row never costs the others, even on a server that refuses a whole batch: as
    invalid (400, 422), or for a row whose natural key is taken (409, the contract's status of
    a duplicate natural key, from a server that applies an upload in one transaction)."""
    seen: list[int] = []

    def server(request: httpx.Request) -> httpx.Response:
        rows = json.loads(request.content)
        seen.append(len(rows))
        if any(row["name"] == "bad" for row in rows):
            body = {"status": status, "message": "name 'bad' is invalid"}
            return httpx.Response(status, json=body)
        return httpx.Response(200, json={"rowCreated": len(rows), "errors": []})

    names = ["a", "b", "c", "bad", "e", "f", "g", "h"]
    rows = [PhysicalEntity(system=Ref(uuid="s"), schema="x", name=name) for name in names]
    with fake_client(httpx.MockTransport(server)) as client:
        report = client.api.physical_entities.upload(rows, batch_size=8)
    assert report.created == 7 and report.discarded == 1
    assert [(e.index, e.message) for e in report.errors] == [(3, "name 'bad' is invalid")]
    assert seen == [8, 4, 2, 2, 1, 1, 4]  # halves: abc-bad, ab, c-bad, c, bad, efgh


def test_every_request_carries_the_tenant_and_the_collection_star_is_not_encoded() -> None:
    seen: list[httpx.Request] = []

    def server(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"rowCreated": 1})

    with fake_client(httpx.MockTransport(server)) as client:
        client.api.physical_entities.upload([PhysicalEntity(name="t")])
    assert seen[0].headers["X-BD-Tenant"] == "t"
    assert seen[0].url.raw_path == b"/api/v1/physical_entities/*/upload"


def test_an_unknown_filter_fails_before_any_request() -> None:
    with (
        fake_client(httpx.MockTransport(lambda r: httpx.Response(500))) as client,
        pytest.raises(BlindataConfigError, match="no filter 'sytemUuid'"),
    ):
        list(client.api.physical_entities.list(sytemUuid="x"))


def test_a_url_without_scheme_is_refused() -> None:
    with pytest.raises(BlindataConfigError, match="must start with http"):
        BlindataClient("app.blindata.io", credentials=ApiKeyCredentials("u", "k"))


def test_dates_go_on_the_wire_in_utc_with_milliseconds() -> None:
    from datetime import datetime, timedelta, timezone

    moment = datetime(2026, 11, 29, 11, 0, 0, 123456, tzinfo=timezone(timedelta(hours=1)))
    assert format_timestamp(moment) == "2026-11-29T10:00:00.123Z"


def test_every_endpoint_is_marked_verified_or_inferred_and_has_a_unique_path() -> None:
    keys = {(e.method, e.template) for e in ENDPOINTS.values()}
    assert len(keys) == len(ENDPOINTS)
    assert {e.evidence for e in ENDPOINTS.values()} == set(Evidence)
    # the contract names no bucket read nor update (a strict server of it: "inferred" was untrue)
    beyond = {e.name for e in ENDPOINTS.values() if e.evidence is Evidence.BEYOND}
    assert beyond == {"query_buckets.get", "query_buckets.update"}
    for endpoint in ENDPOINTS.values():
        assert endpoint.template.startswith(("/api/v1/", "/auth/"))


def test_the_endpoint_documentation_matches_the_endpoint_table() -> None:
    script = Path(__file__).resolve().parents[2] / "scripts" / "endpoints_doc.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda number, pages: {"last": number + 1 >= pages}, id="last only"),
        pytest.param(lambda number, pages: {"totalPages": pages}, id="totalPages only"),
        pytest.param(lambda number, pages: {"size": 2}, id="size only"),
        pytest.param(lambda number, pages: {}, id="content only"),
    ],
)
def test_every_page_is_read_whichever_spring_page_fields_are_sent(shape: Any) -> None:
    """The last page is told by ``last``, else ``totalPages``, else a short or empty page:
    a field that is absent never ends the listing early."""
    items = [{"uuid": f"u{n}", "name": f"s{n}"} for n in range(5)]
    asked: list[int] = []

    def server(request: httpx.Request) -> httpx.Response:
        number, size = int(request.url.params["page"]), int(request.url.params["size"])
        asked.append(number)
        content = items[number * 2 : number * 2 + 2]  # the server caps pages at 2
        assert size == 10
        return httpx.Response(200, json={"content": content, **shape(number, 3)})

    with fake_client(httpx.MockTransport(server)) as client:
        names = [system.name for system in client.api.systems.list(page_size=10)]
    assert names == [item["name"] for item in items]
    assert asked[:3] == [0, 1, 2]


@pytest.mark.parametrize(
    "shape",
    [pytest.param({"last": False}, id="last false"), pytest.param({"size": 2}, id="full pages")],
)
def test_a_server_that_ignores_the_page_asked_for_ends_the_list_with_an_error_not_a_loop(
    shape: dict[str, Any],
) -> None:
    """A server (or a gateway) that answers the first page whatever ``page`` says: the client
    asked for the next page for ever, every answer a repeat, and the sync task hung."""
    asked: list[int] = []

    def server(request: httpx.Request) -> httpx.Response:
        asked.append(int(request.url.params["page"]))
        if len(asked) > 50:
            return httpx.Response(200, json={"content": []})  # what a fixed client never sees
        return httpx.Response(
            200,
            json={"content": [{"uuid": "u0", "name": "a"}, {"uuid": "u1", "name": "b"}], **shape},
        )

    with (
        fake_client(httpx.MockTransport(server)) as client,
        pytest.raises(BlindataContractError, match=r"same items .* page"),
    ):
        list(client.api.systems.list(page_size=2))
    assert len(asked) <= 3


@pytest.mark.parametrize("short", ["once", "always"])
def test_a_listing_short_of_its_count_is_read_once_more_each_object_given_once(short: str) -> None:
    """A page served short (the last object left out, ``totalElements`` right): the sync that
    missed it created a second SQL statement for good, retyped a crawler's field, and a cleanup
    removed the flows of a job still described (a probe of a Blindata failing mid-sync). The
    list is walked once more and the missed object given; a server whose count stays above what
    it lists is believed after that walk, with no error and nothing given twice."""
    items = [{"uuid": f"u{n}", "name": f"s{n}"} for n in range(5)]
    walks: list[int] = []

    def server(request: httpx.Request) -> httpx.Response:
        number = int(request.url.params["page"])
        if number == 0:
            walks.append(0)
        shown = items if short == "once" and len(walks) > 1 else items[:4]
        content = shown[number * 2 : number * 2 + 2]
        last = number * 2 + 2 >= len(shown)
        return httpx.Response(200, json={"content": content, "last": last, "totalElements": 5})

    with fake_client(httpx.MockTransport(server)) as client:
        names = [system.name for system in client.api.systems.list(page_size=2)]
    expected = items if short == "once" else items[:4]
    assert names == [item["name"] for item in expected]
    assert len(walks) == 2


def test_a_server_that_refuses_the_uuid_order_is_walked_in_its_own_order(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The contract verifies ``sort=prop,ASC|DESC``, not that ``uuid`` is a property a server
    sorts by: a Spring server answers 400 to a property its entity does not have, and every
    listing failed (a probe: a snapshot wrote the Systems and nothing else). The list is
    walked without ``sort``, with a warning; a filter the server refuses is still an error."""
    items = [{"uuid": f"u{n}", "name": f"s{n}"} for n in range(5)]
    asked: list[str | None] = []

    def server(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.params.get("sort"))
        if "sort" in request.url.params or request.url.params.get("name") == "bad":
            return httpx.Response(400, json={"status": 400, "message": "No property 'uuid'"})
        number = int(request.url.params["page"])
        content = items[number * 2 : number * 2 + 2]
        return httpx.Response(200, json={"content": content, "last": number * 2 + 2 >= 5})

    with fake_client(httpx.MockTransport(server)) as client:
        names = [system.name for system in client.api.systems.list(page_size=2)]
        assert names == [item["name"] for item in items]
        assert asked == ["uuid,ASC", None, None, None]
        assert "refused the order sort=uuid,ASC" in caplog.text
        asked.clear()
        assert len(list(client.api.systems.list(page_size=2))) == 5
        assert asked == [None, None, None]  # not asked again
        with pytest.raises(BlindataValidationError):
            list(client.api.systems.list(name="bad"))


def test_a_server_that_counts_pages_from_one_is_still_read_whole() -> None:
    """Spring's ``one-indexed-parameters`` reads ``page=0`` and ``page=1`` as the first page:
    one page comes twice, then the walk goes on."""
    items = [{"uuid": f"u{n}", "name": f"s{n}"} for n in range(5)]

    def server(request: httpx.Request) -> httpx.Response:
        index = max(int(request.url.params["page"]) - 1, 0)
        content = items[index * 2 : index * 2 + 2]
        return httpx.Response(200, json={"content": content, "last": index * 2 + 2 >= 5})

    with fake_client(httpx.MockTransport(server)) as client:
        names = [system.name for system in client.api.systems.list(page_size=2)]
    assert names == [item["name"] for item in items]


def test_a_date_the_server_sends_without_a_zone_is_read_in_utc() -> None:
    """Blindata's dates are UTC: one without a zone (a Java LocalDateTime) is not naive, so
    cleanup can compare it with its watermark."""
    from datetime import UTC, datetime

    system = {"uuid": "u", "name": "DWH", "modificationDate": "2026-11-29T10:00:00.000"}

    def server(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=system)

    with fake_client(httpx.MockTransport(server)) as client:
        read = client.api.systems.get("u")
    assert read.modification_date == datetime(2026, 11, 29, 10, tzinfo=UTC)
    assert read.to_wire()["modificationDate"] == "2026-11-29T10:00:00.000Z"


def test_an_upload_answer_with_null_errors_counts_its_rows() -> None:
    """``"errors": null`` (a Java list left unset) is no error: the rows were applied."""

    def server(request: httpx.Request) -> httpx.Response:
        rows = json.loads(request.content)
        return httpx.Response(200, json={"rowCreated": len(rows), "rowUpdated": 0, "errors": None})

    with fake_client(httpx.MockTransport(server)) as client:
        report = client.api.physical_entities.upload([PhysicalEntity(name="t")])
    assert (report.created, report.discarded, report.errors) == (1, 0, [])


@pytest.mark.usefixtures("worker_west_of_utc")
@pytest.mark.parametrize(
    "header",
    [
        pytest.param("Fri, 04 Dec 2026 03:48:21 GMT", id="IMF-fixdate"),
        pytest.param("Friday, 04-Dec-26 03:48:21 GMT", id="RFC 850"),
        pytest.param("Fri Dec  4 03:48:21 2026", id="asctime"),
        pytest.param("Fri, 04 Dec 2026 03:48:21 -0000", id="zone -0000"),
    ],
)
def test_an_http_date_is_gmt_in_each_format_a_recipient_must_accept(header: str) -> None:
    """RFC 9110 §5.6.7: the three formats are GMT, whatever the worker's own zone."""
    assert http_date(header) == datetime(2026, 12, 4, 3, 48, 21, tzinfo=UTC)


@pytest.mark.parametrize("header", ["", "tomorrow", "Fri, 99 Foo 2026 03:48:21 GMT"])
def test_what_is_not_an_http_date_is_none(header: str) -> None:
    assert http_date(header) is None


@pytest.mark.usefixtures("worker_west_of_utc")
def test_a_retry_after_date_without_a_zone_is_waited_for_in_gmt() -> None:
    """429 with ``Retry-After`` as an HTTP date (asctime, no zone): a wait of seconds, not of
    the worker's five hours of offset."""
    soon = datetime.now(UTC) + timedelta(seconds=1)
    answers = iter([429, 200])

    def server(request: httpx.Request) -> httpx.Response:
        status = next(answers)
        headers = {"Retry-After": soon.strftime("%a %b %d %H:%M:%S %Y")} if status == 429 else {}
        return httpx.Response(status, json={"content": [], "last": True}, headers=headers)

    started = time.monotonic()
    with fake_client(httpx.MockTransport(server)) as client:
        assert list(client.api.systems.list()) == []
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(
    "retry_after",
    [
        pytest.param("0", id="zero"),
        pytest.param("-5", id="negative"),
        pytest.param("nan", id="not a number"),
        pytest.param("Fri, 04 Dec 2020 03:48:21 GMT", id="a date already past"),
    ],
)
def test_a_retry_after_that_asks_for_no_wait_is_replaced_by_the_backoff(retry_after: str) -> None:
    """A rate limiter that answers 429 with ``Retry-After: 0`` (or a proxy's past date) is not
    tried again at once, a thousand times a second until the deadline: the backoff applies."""
    requests = 0

    def server(request: httpx.Request) -> httpx.Response:
        nonlocal requests
        requests += 1
        return httpx.Response(429, headers={"Retry-After": retry_after})

    client = fake_client(
        httpx.MockTransport(server), RetryPolicy(deadline=1.0, backoff_initial=0.2)
    )
    with client, pytest.raises(BlindataDeadlineError):
        list(client.api.systems.list())
    assert requests <= 6  # waits of 0.1-0.2, 0.2-0.4, 0.4-0.8 s within the second


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        pytest.param("5", "5", id="string"),
        pytest.param(5, "5", id="integer"),
        pytest.param(2.5, "2.5", id="number"),
        pytest.param(True, "true", id="boolean"),
        pytest.param(None, None, id="null"),
    ],
)
def test_an_additional_property_value_a_server_sends_as_a_json_scalar_is_read_as_text(
    sent: Any, read: str | None
) -> None:
    """Contract: "values are strings". A value stored by another client as a number or a
    boolean, and answered so, is its text: one such property on one System of the tenant made
    the listing of Systems, the mapper's input, unreadable."""
    systems = {
        "content": [
            {"uuid": "u", "name": "DWH", "additionalProperties": [{"name": "rows", "value": sent}]}
        ],
        "last": True,
    }

    def server(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=systems)

    with fake_client(httpx.MockTransport(server)) as client:
        (system,) = client.api.systems.list()
    assert [(p.name, p.value) for p in system.additional_properties or ()] == [("rows", read)]


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        pytest.param([2026, 11, 29, 10, 0, 0, 123000000], "2026-11-29T10:00:00.123Z", id="parts"),
        pytest.param([2026, 11, 29, 10, 0], "2026-11-29T10:00:00.000Z", id="no seconds"),
        pytest.param("2026-11-29T10:00:00.000Z", "2026-11-29T10:00:00.000Z", id="ISO-8601"),
    ],
)
def test_a_date_a_spring_server_sends_as_an_array_of_parts_is_read_in_utc(
    sent: Any, read: str
) -> None:
    """The contract verifies the dates of requests only: a Blindata whose Jackson writes a
    ``LocalDateTime`` as its parts made every listing of Systems, the mapper's input, fail."""
    systems = {"content": [{"uuid": "u", "name": "DWH", "modificationDate": sent}], "last": True}

    def server(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=systems)

    with fake_client(httpx.MockTransport(server)) as client:
        (system,) = client.api.systems.list()
    assert system.to_wire()["modificationDate"] == read


@pytest.mark.parametrize(
    ("no_proxy", "url", "through_proxy"),
    [
        pytest.param(".example.com", "http://example.com", True, id="a leading dot: subdomains"),
        pytest.param(".example.com", "http://api.example.com", False, id="a subdomain of it"),
        pytest.param("example.com", "http://example.com", False, id="the host itself"),
        pytest.param("example.com", "http://api.example.com", False, id="and its subdomains"),
        pytest.param("localhost", "http://localhost:8080", False, id="localhost"),
        pytest.param(".localhost", "http://localhost:8080", True, id="not .localhost"),
        pytest.param("*", "http://anything", False, id="every host"),
        pytest.param("", "http://example.com", True, id="none"),
    ],
)
def test_the_proxy_a_message_names_is_the_one_httpx_goes_through(
    monkeypatch: pytest.MonkeyPatch, no_proxy: str, url: str, through_proxy: bool
) -> None:
    """docs/connection.md: a failure "names the proxy it went through". ``urllib`` spares
    ``example.com`` for a ``NO_PROXY`` of ``.example.com``, httpx (which sends the request)
    does not: a dead proxy read as Blindata being down (found by a probe of connections)."""
    for name in (
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    monkeypatch.delenv("no_proxy", raising=False)
    with httpx.Client() as client:  # where httpx itself sends it, the answer to check against
        sent_through = client._transport_for_url(httpx.URL(url)) is not client._transport
    assert sent_through is through_proxy
    assert (environment_proxy(url) is not None) is through_proxy


def test_a_400_that_names_no_order_is_not_asked_again_without_it() -> None:
    """A 400 for another reason (a filter refused, a fault) is the error it is: not tried again
    without the order, and the next list still asks it."""
    asked: list[str | None] = []

    def server(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.params.get("sort"))
        return httpx.Response(400, json={"status": 400, "message": "name is too long"})

    with fake_client(httpx.MockTransport(server)) as client:
        with pytest.raises(BlindataValidationError):
            list(client.api.systems.list(name="x"))
        assert asked == ["uuid,ASC"]
        assert client.list_order == "uuid,ASC"
