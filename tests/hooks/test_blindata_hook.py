"""``BlindataHook``: the BLINDATA connection, from ``AIRFLOW_CONN_BLINDATA_DEFAULT``, against the
emulator served on loopback."""

from __future__ import annotations

import http.server
import importlib.metadata
import ipaddress
import json
import logging
import re
import socket
import ssl
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from packaging.version import Version

from airflow_blindata.blindata import (
    ApiKeyCredentials,
    BearerToken,
    BlindataConfigError,
    LoginCredentials,
)
from airflow_blindata.hooks.blindata import (
    BlindataConnectionSettings,
    BlindataHook,
    check_settings,
)
from tests.blindata.helpers import URL_SECRETS, URL_USER, with_url_credentials
from tests.helpers import API_KEY, HUMAN, OTHER_TENANT, PASSWORD, TENANT, USER, loopback_server

AIRFLOW_RELEASE = Version(importlib.metadata.version("apache-airflow")).release[:2]


def connection(**fields: Any) -> SimpleNamespace:
    defaults: dict[str, Any] = {
        "conn_id": "blindata_default",
        "host": "https://app.blindata.io",
        "port": None,
        "schema": None,
        "login": "etl",
        "password": "secret",
        "extra_dejson": {},
    }
    return SimpleNamespace(**{**defaults, **fields})


@pytest.mark.parametrize(
    ("fields", "url"),
    [
        ({"host": "https://app.blindata.io/"}, "https://app.blindata.io/"),
        ({"host": "blindata.example.com"}, "https://blindata.example.com"),
        ({"host": "blindata.example.com", "port": 8443}, "https://blindata.example.com:8443"),
        ({"host": "http://127.0.0.1:9000"}, "http://127.0.0.1:9000"),
        (
            {"host": "https://u:pw@blindata.example.com", "port": 8443},
            "https://u:pw@blindata.example.com:8443",
        ),
        (
            {"host": "https://u:pw@blindata.example.com:9443", "port": 8443},
            "https://u:pw@blindata.example.com:9443",
        ),
        ({"host": "https://[::1]", "port": 8443}, "https://[::1]:8443"),
        ({"host": "fd00::1", "port": 8443}, "https://[fd00::1]:8443"),
        ({"host": "::1", "schema": "http"}, "http://[::1]"),
        # A path prefix (Blindata behind a reverse proxy): the port goes before it.
        (
            {"host": "https://corp.example.com/blindata", "port": 443},
            "https://corp.example.com:443/blindata",
        ),
        (
            {"host": "corp.example.com/blindata/", "port": 8443},
            "https://corp.example.com:8443/blindata/",
        ),
        (
            {"host": "https://u:pw@corp.example.com/blindata", "port": 443},
            "https://u:pw@corp.example.com:443/blindata",
        ),
        # The schema: the path of the URI form, or the scheme as Airflow's http connection has it.
        ({"host": "corp.example.com", "schema": "blindata"}, "https://corp.example.com/blindata"),
        (
            {"host": "https://corp.example.com", "schema": "/blindata/", "port": 8443},
            "https://corp.example.com:8443/blindata",
        ),
        (
            {"host": "https://corp.example.com/blindata", "schema": "blindata"},
            "https://corp.example.com/blindata",
        ),
        (
            {"host": "blindata.internal", "schema": "http", "port": 8080},
            "http://blindata.internal:8080",
        ),
        ({"host": "https://blindata.internal", "schema": "HTTP"}, "https://blindata.internal"),
    ],
)
def test_host_is_the_blindata_url_https_when_no_scheme_is_given(
    fields: dict[str, Any], url: str
) -> None:
    assert BlindataConnectionSettings.from_connection(connection(**fields)).url == url


@pytest.mark.parametrize(
    ("uri", "url"),
    [
        (
            "blindata://etl:k%2Fy@corp.example.com:443/blindata",
            "https://corp.example.com:443/blindata",
        ),
        (
            "blindata://https://etl:k%40y@corp.example.com:8443/blindata?tenant=t-1",
            "https://corp.example.com:8443/blindata",
        ),
        ("blindata://etl:key@blindata.internal:8080/http", "http://blindata.internal:8080"),
        ("blindata://etl:key@app.blindata.io:443/", "https://app.blindata.io:443"),
        # An IPv6 address: Airflow keeps the URI's host without its brackets.
        ("blindata://etl:key@[fd00::1]:8443/http", "http://[fd00::1]:8443"),
        ("blindata://etl:key@[::1]:8443/blindata", "https://[::1]:8443/blindata"),
        # Airflow's http connection written as a URI: its scheme is the connection's type, the
        # generic one the UI offers, which never sends the key over plain HTTP (a review)
        ("http://etl:key@blindata.internal:8080?tenant=t1", "https://blindata.internal:8080"),
        ("http://etl:key@blindata.internal:8080/http?tenant=t1", "http://blindata.internal:8080"),
    ],
)
def test_the_uri_form_of_the_connection_keeps_the_urls_path(uri: str, url: str) -> None:
    from airflow.models.connection import Connection

    settings = BlindataConnectionSettings.from_connection(Connection(conn_id="c", uri=uri))
    assert settings.url == url
    assert settings.secret in ("k/y", "k@y", "key")


@pytest.mark.parametrize(
    "host", ["http://127.0.0.1:9000/blindata?x=1", "corp.example.com/?token=s3cret#/home"]
)
def test_a_url_with_a_query_is_refused_without_quoting_it(host: str) -> None:
    """Each API path is added after the URL's path: a query there ended every request's path
    (``/blindata?x=1/api/v1/users/me`` asked for ``/blindata``), and the errors named the API's
    path (a probe of deployments)."""
    with pytest.raises(BlindataConfigError, match="has a query") as refused:
        BlindataConnectionSettings.from_connection(connection(host=host))
    assert "s3cret" not in str(refused.value) and "x=1" not in str(refused.value)


@pytest.mark.parametrize("field", ["ca_bundle", "verify_ssl"])
def test_a_ca_bundle_with_no_certificate_is_refused_naming_its_field(
    tmp_path: Path, field: str
) -> None:
    """A file that holds no certificate was accepted: ``check`` then said "SSLError: [X509:
    NO_CERTIFICATE_OR_CRL_FOUND]" and a task's hook raised a bare ``ssl.SSLError``, neither
    naming the field (a probe of deployments)."""
    not_pem = tmp_path / "hostname"
    not_pem.write_text("worker-1\n")
    with pytest.raises(BlindataConfigError, match=f"{field}: .* holds no CA certificate"):
        BlindataConnectionSettings.from_connection(connection(extra_dejson={field: str(not_pem)}))


def test_a_path_given_twice_differently_is_refused() -> None:
    fields = {"host": "https://corp.example.com/blindata", "schema": "other"}
    with pytest.raises(BlindataConfigError, match="path '/blindata' and the schema 'other'"):
        BlindataConnectionSettings.from_connection(connection(**fields))


@pytest.mark.parametrize(
    ("extra", "credentials"),
    [
        ({}, ApiKeyCredentials("etl", "secret")),
        ({"auth_method": "api_key"}, ApiKeyCredentials("etl", "secret")),
        ({"auth_method": "login"}, LoginCredentials("etl", "secret")),
        ({"auth_method": "BEARER"}, BearerToken("secret")),
    ],
)
def test_the_auth_method_chooses_the_credentials(extra: dict[str, Any], credentials: Any) -> None:
    settings = BlindataConnectionSettings.from_connection(connection(extra_dejson=extra))
    assert settings.credentials == credentials


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"host": ""}, "URL \\(host\\) is empty"),
        ({"password": None}, "password field is empty"),
        ({"login": None}, "needs a username"),
        ({"extra_dejson": {"auth_method": "oauth"}}, "auth_method 'oauth' is not one of"),
        ({"extra_dejson": {"timeout": "soon"}}, "timeout must be a number of seconds"),
        ({"extra_dejson": {"deadline": -1}}, "deadline must be positive"),
        # float() reads them, and a nan or infinite deadline never stops retrying
        ({"extra_dejson": {"timeout": "nan"}}, "timeout must be a positive, finite number"),
        ({"extra_dejson": {"deadline": "inf"}}, "deadline must be a positive, finite number"),
        ({"extra_dejson": {"verify_ssl": "maybe"}}, "verify_ssl: no CA bundle at 'maybe'"),
        ({"extra_dejson": {"ca_bundle": "/nowhere/ca.pem"}}, "ca_bundle: no CA bundle at"),
        # found by a probe of connections as admins set them: each was taken silently
        ({"extra_dejson": {"timeout": True}}, "timeout must be a number of seconds"),
        (
            {"extra_dejson": {"tennant": "t-1"}},
            "'tennant', which is no setting: did you mean 'tenant'",
        ),
        ({"extra_dejson": {"verify_sll": False}}, "did you mean 'verify_ssl'"),
        ({"extra_dejson": {"timout": 1}}, "did you mean 'timeout'"),
        ({"extra_dejson": {"auth-method": "bearer"}}, "did you mean 'auth_method'"),
        # a key holding a setting's words: the tenant left to the user's default (a probe)
        ({"extra_dejson": {"tenant_uuid": "t-1"}}, "did you mean 'tenant'"),
        ({"extra_dejson": {"X-BD-Tenant": "t-1"}}, "did you mean 'tenant'"),
        ({"extra_dejson": {"blindata_tenant": "t-1"}}, "did you mean 'tenant'"),
        ({"extra_dejson": {"ssl_verify": False}}, "did you mean 'verify_ssl'"),
        ({"extra_dejson": {"ca_bundle_path": "/ca.pem"}}, "did you mean 'ca_bundle'"),
        ({"extra_dejson": {"Tenant Name": "t-1"}}, "did you mean 'tenant'"),
        (
            {"extra": "{tenant: t1}", "extra_dejson": {}},
            "extra is not a JSON object",
        ),
        # JSON text of JSON text (json.dumps twice, in a secrets backend or a Helm value):
        # Airflow reads a string, and dict() of it raised a bare ValueError (a probe)
        (
            {"extra": json.dumps(json.dumps({"tenant": "t1"})), "extra_dejson": '{"tenant": "t1"}'},
            "extra is not a JSON object but a JSON string holding one: it was encoded twice",
        ),
        ({"extra": '["t1"]', "extra_dejson": ["t1"]}, "extra is not a JSON object but a list"),
        ({"extra": '"t1"', "extra_dejson": "t1"}, "extra is not a JSON object but a string"),
    ],
)
def test_a_bad_connection_gets_an_error_naming_the_field(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(BlindataConfigError, match=message):
        BlindataConnectionSettings.from_connection(connection(**fields))


@pytest.mark.parametrize("text", ["", "{}", "{ }", "{\n}", '{"tenant": "t-1"}'])
def test_extra_that_is_an_empty_json_object_however_written_is_taken(text: str) -> None:
    extra = json.loads(text) if text.strip() else {}
    settings = BlindataConnectionSettings.from_connection(
        connection(extra=text, extra_dejson=extra)
    )
    assert settings.tenant == extra.get("tenant")


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        (
            {"extra": json.dumps(json.dumps({"tenant": TENANT}))},
            r"bd_unreadable: extra is not a JSON object.*encoded twice",
        ),
        ({"extra": json.dumps(["tenant"])}, "bd_unreadable: extra is not a JSON object"),
        # Airflow itself cannot read it (its error dropped): "isn't defined" though it is
        ({"port": "abc"}, r"bd_unreadable: Airflow cannot read this connection: .*`port`.*'abc'"),
    ],
    ids=["double-encoded-extra", "extra-a-list", "port-not-a-number"],
)
def test_a_connection_airflow_holds_but_cannot_read_is_said_unusable_naming_the_field(
    fields: dict[str, Any],
    says: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The Test button, the operators (``get_conn``) and ``airflow-blindata check`` all say
    what is wrong with it: they said "dictionary update sequence element #0 has length 1", a
    bare ValueError, and "The conn_id isn't defined" (a probe)."""
    from airflow_blindata.cli import main

    conn = {"conn_type": "blindata", "host": "http://127.0.0.1:1", "login": USER}
    conn.update(password="k3y-not-shown", **fields)
    monkeypatch.setenv("AIRFLOW_CONN_BD_UNREADABLE", json.dumps(conn))
    monkeypatch.setenv("_AIRFLOW_PROCESS_CONTEXT", "server")  # as the command sets it

    ok, message = BlindataHook("bd_unreadable").test_connection()
    assert not ok and message.startswith("The connection bd_unreadable is not usable: ")
    assert re.search(says, message), message
    # a task reads the connection leniently (the Task SDK); Airflow 3.1's drops a connection
    # whose extra is no JSON object as undefined before any hook reads it (the floors' run)
    if "port" not in fields and AIRFLOW_RELEASE >= (3, 2):
        with pytest.raises(BlindataConfigError, match=says):
            BlindataHook("bd_unreadable").get_conn()
    assert main(["check", "--conn-id", "bd_unreadable"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("The connection bd_unreadable is not usable: "), out
    assert re.search(says, out) and "isn't defined" not in out, out
    assert "k3y-not-shown" not in message + out


def test_a_key_of_extra_like_no_setting_is_left_to_whoever_wrote_it() -> None:
    """Another tool's keys, a setting's word among others (a review)."""
    extra = {
        "tenant": "t-1",
        "owner_team": "data-platform",
        "azure_tenant_id": "a",
        "multi_tenant": True,
        "connect_timeout": 3,
        "deadline_alert_email": "x@example.com",
    }
    settings = BlindataConnectionSettings.from_connection(connection(extra_dejson=extra))
    assert settings.tenant == "t-1"


def test_a_scheme_in_upper_case_is_a_scheme() -> None:
    settings = BlindataConnectionSettings.from_connection(connection(host="HTTP://127.0.0.1:9"))
    assert settings.url == "http://127.0.0.1:9"


def test_extras_are_read_with_their_types_and_the_old_prefixed_spelling() -> None:
    extra = {"extra__blindata__tenant": "t-1", "verify_ssl": "false", "timeout": "5"}
    settings = BlindataConnectionSettings.from_connection(connection(extra_dejson=extra))
    assert (settings.tenant, settings.verify_ssl, settings.timeout) == ("t-1", False, 5.0)
    assert "secret" not in repr(settings)


@pytest.mark.parametrize(
    "connection_text",
    [
        json.dumps(
            {
                "conn_type": "blindata",
                "host": "https://app.blindata.io",
                "login": "etl",
                "password": "s3cret-key",
                "extra": {
                    "timeout": None,
                    "deadline": "",
                    "verify_ssl": None,
                    "tenant": None,
                    "ca_bundle": "",
                    "auth_method": " ",
                },
            }
        ),
        "blindata://etl:s3cret-key@app.blindata.io/?timeout=&deadline=&verify_ssl=&tenant=",
    ],
    ids=["json-nulls-and-blanks", "uri-blank-parameters"],
)
def test_an_extra_field_left_empty_takes_its_default(
    connection_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A form field cleared, a connection exported with nulls, a URI with ``?timeout=``: empty
    is not given, never "not a number"."""
    monkeypatch.setenv("AIRFLOW_CONN_BLANKS", connection_text)
    settings = BlindataHook("blanks").settings
    assert (settings.timeout, settings.deadline) == (30.0, 120.0)
    assert (settings.verify_ssl, settings.tenant, settings.auth_method) == (True, None, "api_key")


def use_connection(
    monkeypatch: pytest.MonkeyPatch, host: str, *, password: str = API_KEY, **extra: Any
) -> None:
    conn = {
        "conn_type": "blindata",
        "host": host,
        "login": USER,
        "password": password,
        "extra": {"tenant": TENANT, **extra},
    }
    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_DEFAULT", json.dumps(conn))


@pytest.mark.integration
def test_test_connection_passes_when_url_credentials_and_tenant_work(
    emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_connection(monkeypatch, emulator.base_url)
    ok, message = BlindataHook().test_connection()
    assert ok, message
    assert USER in message and TENANT in message


@pytest.mark.integration
def test_get_conn_returns_a_configured_client(
    emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_connection(monkeypatch, emulator.base_url)
    with BlindataHook().get_conn() as client:
        assert client.tenant == TENANT
        assert client.api.me().username == USER


@pytest.mark.integration
def test_login_connection_passes(emulator: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    conn = {
        "conn_type": "blindata",
        "host": emulator.base_url,
        "login": HUMAN,
        "password": PASSWORD,
        "extra": {"tenant": OTHER_TENANT, "auth_method": "login"},
    }
    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_DEFAULT", json.dumps(conn))
    ok, message = BlindataHook().test_connection()
    assert ok, message


@pytest.mark.integration
def test_test_connection_fails_precisely_for_a_wrong_key(
    emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_connection(monkeypatch, emulator.base_url, password="not-the-key")
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert "rejected the credentials (401" in message
    assert "not-the-key" not in message


@pytest.mark.integration
@pytest.mark.parametrize("padded", [f"{API_KEY}\n", f" {API_KEY} ", f"{API_KEY}\r\n"])
def test_a_key_kept_with_a_line_break_or_spaces_around_it_connects(
    emulator: Any, monkeypatch: pytest.MonkeyPatch, padded: str
) -> None:
    """A key read from a file or a secrets backend often ends with a line break: an HTTP header
    cannot carry it, and the test said "Cannot reach Blindata" of a server that answers."""
    use_connection(monkeypatch, emulator.base_url, password=padded)
    ok, message = BlindataHook().test_connection()
    assert ok, message


@pytest.mark.integration
@pytest.mark.parametrize(
    ("login", "password", "auth_method", "tenant"),
    [
        (f"{USER} ", API_KEY, "api_key", TENANT),
        (f" {USER}", API_KEY, "api_key", TENANT),
        (f"{USER}\n", API_KEY, "api_key", TENANT),
        (f"{HUMAN}\t", PASSWORD, "login", OTHER_TENANT),
    ],
    ids=["trailing-blank", "leading-blank", "trailing-line-break", "login-trailing-tab"],
)
def test_a_username_kept_with_blanks_around_it_connects(
    emulator: Any,
    monkeypatch: pytest.MonkeyPatch,
    login: str,
    password: str,
    auth_method: str,
    tenant: str,
) -> None:
    """The username is read without the blanks around it, as the key and the tenant are: with
    them, no request could be written and the Test button said "Cannot reach Blindata" (a
    probe: "etl-user " pasted in the form's Login)."""
    conn = {
        "conn_type": "blindata",
        "host": emulator.base_url,
        "login": login,
        "password": password,
        "extra": {"tenant": tenant, "auth_method": auth_method},
    }
    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_DEFAULT", json.dumps(conn))
    hook = BlindataHook()
    assert hook.settings.username == login.strip()
    ok, message = hook.test_connection()
    assert ok, message


@pytest.mark.integration
@pytest.mark.parametrize(
    ("fields", "names"),
    [
        ({"username": "etl user "}, "(the username, the API key, the tenant)"),
        ({"username": "etl\nuser"}, "(the username, the API key, the tenant)"),
        (
            {"auth_method": "bearer", "username": None, "secret": "tok\nen", "tenant": None},
            "(the token)",
        ),
    ],
    ids=["username-trailing-blank", "username-line-break", "token-line-break"],
)
def test_a_request_that_could_not_be_written_is_said_unsent_not_unreachable(
    emulator: Any, fields: dict[str, Any], names: str
) -> None:
    """Settings built without ``from_connection`` (which refuses such values): the request
    fails in the worker before it is sent, and the message says so and which fields go in a
    header, never that Blindata cannot be reached (a network problem) nor the token."""
    values: dict[str, Any] = {"tenant": TENANT, "auth_method": "api_key", "secret": API_KEY}
    settings = BlindataConnectionSettings(url=emulator.base_url, **{**values, **fields})
    ok, message = check_settings(settings)
    assert not ok
    assert message.startswith(f"No request was sent to Blindata at {emulator.base_url}: "), message
    assert names in message and "Cannot reach" not in message
    assert "tok\nen" not in message and "en'" not in message


@pytest.mark.integration
def test_test_connection_fails_precisely_for_a_wrong_tenant(
    emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_connection(monkeypatch, emulator.base_url, tenant=OTHER_TENANT)
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert "refused access (403) to tenant " + OTHER_TENANT in message


@pytest.mark.integration
def test_test_connection_fails_precisely_for_a_dead_port(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    use_connection(monkeypatch, f"http://127.0.0.1:{port}")
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert f"Cannot reach Blindata at http://127.0.0.1:{port}" in message


@pytest.mark.integration
def test_test_connection_says_a_server_whose_answers_are_always_cut_short_is_not_blindata(
    emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A truncated answer is asked again; one truncated every time is still explained."""
    emulator.emulator.faults.truncate_next(100)
    use_connection(monkeypatch, emulator.base_url)
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert "does not answer like Blindata" in message and "not valid JSON" in message


def test_test_connection_reports_an_unusable_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    use_connection(monkeypatch, "http://127.0.0.1:1", auth_method="kerberos")
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert "auth_method 'kerberos'" in message


@pytest.mark.integration
def test_credentials_in_the_url_are_never_shown(
    emulator: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    texts: list[str] = []
    for url, works in ((emulator.base_url, True), (f"http://127.0.0.1:{port}", False)):
        use_connection(monkeypatch, with_url_credentials(url))
        hook = BlindataHook()
        ok, message = hook.test_connection()
        assert ok is works, message
        shown = url.replace("://", f"://{URL_USER}:***@")
        assert (f"at {shown} as" if works else f"Cannot reach Blindata at {shown}") in message
        texts += [message, repr(hook.settings)]
    texts.append(caplog.text)
    for secret in (*URL_SECRETS, API_KEY):
        assert all(secret not in text for text in texts), secret


@pytest.mark.parametrize(
    ("uri", "link"),
    [
        (
            "blindata://etl:key@corp.example.com:443/blindata",
            "https://corp.example.com:443/blindata",
        ),
        ("blindata://https://etl:key@corp.example.com/x", "https://corp.example.com/x"),
        (
            '{"conn_type": "blindata", "host": "https://u:pw@corp.example.com/bd", "port": 443}',
            "https://corp.example.com:443/bd",
        ),
        # an href shows its query to whoever views the page: the site alone (a probe of secrets)
        ("blindata://https://corp.example.com/bd?token=SEKRET", "https://corp.example.com/bd"),
    ],
)
def test_the_pages_links_go_where_the_hook_sends_requests(
    monkeypatch: pytest.MonkeyPatch, uri: str, link: str
) -> None:
    from airflow_blindata.ui.links import blindata_url

    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_LINKS", uri)
    assert blindata_url("blindata_links") == link


# -- a Blindata whose certificate a private CA signed ---------------------------------------------


def _private_ca(directory: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate it signed for 127.0.0.1: (CA file, certificate, key)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    now = datetime.now(UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .issuer_name(name("test CA"))
        .subject_name(name("test CA"))
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    server = (
        x509.CertificateBuilder()
        .issuer_name(ca.subject)
        .subject_name(name("127.0.0.1"))
        .public_key(key.public_key())
        .serial_number(2)
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = directory / "ca.pem", directory / "server.pem", directory / "server.key"
    files[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files[1].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    files[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


class _Me(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"username": USER, "permissions": []}).encode()
        self.send_response(200 if self.path.startswith("/api/v1/users/me") else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def private_ca_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTPS server on loopback whose certificate a private CA signed: (its URL, the CA)."""
    ca, certificate, key = _private_ca(tmp_path)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Me)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", ca
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("extra", "passes"),
    [
        ({}, False),  # the system's CAs do not know the private one
        ({"ca_bundle": "{ca}"}, True),
        ({"verify_ssl": "{ca}"}, True),  # requests' spelling: verify is the bundle
        ({"ca_bundle": "{directory}"}, False),  # a directory needs c_rehash'ed names
        ({"verify_ssl": False, "ca_bundle": "{ca}"}, True),  # verification off
    ],
)
def test_a_blindata_signed_by_a_private_ca_is_verified_with_its_ca_bundle(
    private_ca_server: tuple[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    extra: dict[str, Any],
    passes: bool,
) -> None:
    url, ca = private_ca_server
    filled = {
        key: value.format(ca=ca, directory=ca.parent) if isinstance(value, str) else value
        for key, value in extra.items()
    }
    use_connection(monkeypatch, url, **filled)
    ok, message = BlindataHook().test_connection()
    assert ok is passes, message
    if not passes:
        assert "certificate" in message.lower() or "ssl" in message.lower(), message


def test_a_certificate_the_client_refuses_fails_at_once_not_at_the_deadline(
    private_ca_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync whose connection lacks the private CA's bundle retried the TLS handshake until the
    deadline (two minutes by default, for every sync) although the same certificate comes back
    at every handshake: it fails at the first, saying so."""
    from airflow_blindata.blindata import BlindataDeadlineError, BlindataRequestError
    from airflow_blindata.blindata.models import CurrentUser
    from airflow_blindata.blindata.paths import ENDPOINTS

    url, _ = private_ca_server
    use_connection(monkeypatch, url, deadline=30)
    with BlindataHook().get_conn() as client, pytest.raises(BlindataRequestError) as raised:
        client.call(ENDPOINTS["users.me"], CurrentUser)
    assert not isinstance(raised.value, BlindataDeadlineError), raised.value
    assert "certificate" in str(raised.value).lower(), raised.value


# -- values an HTTP header cannot carry -----------------------------------------------------------

WRAPPED_TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJldGwifQ\n.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        # A token copied from a terminal that wrapped it, kept with its line break.
        (
            {"login": None, "password": WRAPPED_TOKEN, "extra_dejson": {"auth_method": "bearer"}},
            "the password field .* a line break or another control character",
        ),
        ({"password": "first-half\r\nsecond-half"}, "the password field .* line break"),
        ({"login": "etl\nuser"}, "the username .* line break"),
        # A tenant uuid pasted from a web page with a zero-width space in front.
        ({"extra_dejson": {"tenant": "\u200b" + TENANT}}, "tenant .* not ASCII .*U\\+200B"),
        ({"extra_dejson": {"tenant": "1111\n2222"}}, "tenant .* line break"),
    ],
)
def test_a_value_sent_in_a_header_that_a_header_cannot_carry_is_refused_naming_the_field(
    fields: dict[str, Any], message: str
) -> None:
    """Such a key was sent anyway: every request failed before it left the worker, was retried
    until the deadline as if the network had failed, and the Test button said "Cannot reach
    Blindata"; a tenant that is not ASCII ended the test in an "Unexpected error"."""
    with pytest.raises(BlindataConfigError, match=message) as raised:
        BlindataConnectionSettings.from_connection(connection(**fields))
    for secret in ("first-half", "second-half", WRAPPED_TOKEN.split("\n")[1]):
        assert secret not in str(raised.value)


def test_a_login_password_with_a_line_break_is_sent_in_the_body_and_kept() -> None:
    """The login method sends the password in the JSON body of ``POST /auth/login``, where
    any character goes: it is not a header's value."""
    extra = {"auth_method": "login"}
    settings = BlindataConnectionSettings.from_connection(
        connection(password="pass\nword", extra_dejson=extra)
    )
    assert settings.secret == "pass\nword"


@pytest.mark.integration
def test_the_test_button_names_the_field_of_a_token_with_a_line_break(
    emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_connection(monkeypatch, emulator.base_url, password=WRAPPED_TOKEN, auth_method="bearer")
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert "is not usable" in message and "password field" in message, message
    assert "Cannot reach" not in message


# -- a Blindata behind a proxy that redirects ------------------------------------------------------


class _ToHttps(http.server.BaseHTTPRequestHandler):
    """A reverse proxy that sends every plain-HTTP request to HTTPS, as most do."""

    def do_GET(self) -> None:
        self.send_response(301)
        self.send_header("Location", f"https://blindata.example.com{self.path}")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        self.do_GET()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def redirecting_proxy() -> Iterator[str]:
    with loopback_server(_ToHttps) as url:
        yield url


@pytest.mark.parametrize("auth_method", ["api_key", "login"])
def test_the_test_button_says_where_a_url_that_redirects_leads(
    redirecting_proxy: str, monkeypatch: pytest.MonkeyPatch, auth_method: str
) -> None:
    """The client follows no redirect (a POST redirected may be sent again as a GET, or its
    credentials to another host); the admin who gave ``http://`` for an ``https://`` Blindata
    read "failed with 301 Moved Permanently: (empty body)", and had to guess where to."""
    use_connection(monkeypatch, redirecting_proxy, auth_method=auth_method)
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert "redirects" in message and "https://blindata.example.com" in message, message
    assert "set the connection's URL to https://blindata.example.com " in message, message
    assert API_KEY not in message


# -- a worker behind a proxy -----------------------------------------------------------------------


@pytest.mark.integration
def test_a_proxy_that_cannot_be_reached_is_named_not_blindata(
    emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker whose environment names a proxy (``HTTP_PROXY``/``HTTPS_PROXY``) reaches Blindata
    through it; when the proxy was down the Test button said "cannot connect to <Blindata's
    URL>", and the admin checked Blindata, which answered. ``NO_PROXY`` bypasses it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HTTP_PROXY", f"http://squid:proxy-pa55@127.0.0.1:{port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    use_connection(monkeypatch, emulator.base_url)
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert f"through the proxy http://squid:***@127.0.0.1:{port}" in message, message
    assert "proxy-pa55" not in message
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    ok, message = BlindataHook().test_connection()
    assert ok, message


@pytest.mark.integration
@pytest.mark.parametrize(
    ("fault", "told"),
    [
        (lambda faults: faults.html_error_next(100, status=502), "answered 502"),
        (lambda faults: faults.fail_next(100, status=503), "answered 503"),
        (lambda faults: faults.rate_limit_next(100, retry_after=60), "answered 429"),
    ],
    ids=["gateway-502", "unavailable-503", "rate-limited-429"],
)
def test_the_test_button_says_what_a_server_answering_errors_answered_not_that_it_was_slow(
    emulator: Any, monkeypatch: pytest.MonkeyPatch, fault: Any, told: str
) -> None:
    """A gateway answering 502 (Blindata down behind it) was reported as "Blindata did not
    answer in time", which sent the admin to look at timeouts and the network."""
    fault(emulator.emulator.faults)
    use_connection(monkeypatch, emulator.base_url)
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert "did not answer in time" not in message, message
    assert f"Blindata at {emulator.base_url} {told}" in message, message


def test_the_test_button_says_how_to_trust_a_certificate_a_private_ca_signed(
    private_ca_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TLS failure was "Cannot reach Blindata" and OpenSSL's words; the fix is a field of the
    connection, which the message now names."""
    url, _ = private_ca_server
    use_connection(monkeypatch, url)
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert "certificate" in message and "ca_bundle" in message, message


@pytest.mark.integration
def test_a_login_refused_with_403_is_said_to_be_the_login_not_the_tenant(
    emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token endpoint that refuses bad credentials with 403 was reported as "refused access
    (403) to tenant the default tenant": the admin checked the tenant, not the password."""
    emulator.emulator.faults.fail_next(10, status=403, path="/auth/login")
    conn = {
        "conn_type": "blindata",
        "host": emulator.base_url,
        "login": HUMAN,
        "password": PASSWORD,
        "extra": {"auth_method": "login"},
    }
    monkeypatch.setenv("AIRFLOW_CONN_BLINDATA_DEFAULT", json.dumps(conn))
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert message.startswith("Blindata refused the login (403, POST /auth/login)"), message
    assert "username and password" in message and PASSWORD not in message
    assert emulator.emulator.faults.pending()  # asked once, not in a loop


@pytest.mark.integration
def test_a_tenant_without_the_inferred_who_am_i_path_is_told_how_to_find_where_it_is(
    emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``GET /api/v1/users/me`` is an inferred path: on an instance that serves it elsewhere the
    test said only "No Blindata API at <url>. Check the URL.", and the URL was right."""
    use_connection(
        monkeypatch, emulator.base_url, api_paths={"/api/v1/users/me": "/api/v1/users/current"}
    )
    ok, message = BlindataHook().test_connection()
    assert not ok
    assert message.startswith(f"No Blindata API at {emulator.base_url}"), message
    assert "airflow-blindata check --api" in message and "api_paths" in message, message


def test_an_ipv6_address_without_brackets_is_refused_saying_how_to_write_it() -> None:
    """``http://::1`` read "Invalid port: ':1'" and nothing more (a probe of connections)."""
    settings = BlindataConnectionSettings.from_connection(connection(host="http://::1"))
    with pytest.raises(BlindataConfigError, match=r"IPv6 address goes in brackets: http://\[::1\]"):
        settings.client()
    # in the URL's own scheme and path, the last group offered as the port it may be
    with pytest.raises(BlindataConfigError, match=r"https://\[::1\]:8080/bd if 8080 is the port"):
        BlindataConnectionSettings.from_connection(connection(host="https://::1:8080/bd")).client()


def test_a_server_that_drops_a_plain_http_request_is_asked_about_https() -> None:
    """``http://`` pointed at a TLS port whose server drops the request: "closed the connection"
    and no hint, where the opposite mistake gets one (a probe of connections)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def drop() -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            with client:
                client.recv(65536)

    threading.Thread(target=drop, daemon=True).start()
    try:
        host = f"http://127.0.0.1:{server.getsockname()[1]}"
        conn = connection(host=host, extra_dejson={"deadline": 1})
        ok, message = check_settings(BlindataConnectionSettings.from_connection(conn))
    finally:
        server.close()
    assert not ok
    assert "if it serves TLS on that port, the URL is https://" in message, message
