"""The receiver's pure parts, without a server: keys and their sources, bodies and their shapes."""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from airflow_blindata.receiver.app import (
    ReceiverSettings,
    fastapi_app,
    plugin_fastapi_apps,
    receiver_settings,
)
from airflow_blindata.receiver.body import (
    BodyError,
    decompress,
    read_body,
    split_events,
)
from airflow_blindata.receiver.keys import (
    MIN_KEY_LENGTH,
    CachedKeys,
    KeySet,
    bearer_token,
    configured_keys,
    key_set,
    split_keys,
)
from airflow_blindata.receiver.log import ThrottledWarnings

from .helpers import API_KEY, OTHER_KEY

LIMIT = 1000
CONN_ENV = "AIRFLOW_CONN_BLINDATA_RECEIVER"
KEY_ENV = "AIRFLOW__BLINDATA__RECEIVER_API_KEY"
CONN_ID_ENV = "AIRFLOW__BLINDATA__RECEIVER_CONN_ID"


# -- keys ----------------------------------------------------------------------------------


def test_a_key_set_matches_each_of_its_keys_and_nothing_else() -> None:
    keys = key_set([API_KEY, OTHER_KEY], source="test")

    assert keys.matches(API_KEY)
    assert keys.matches(OTHER_KEY)
    assert not keys.matches(API_KEY + "x")
    assert not keys.matches("")


def test_a_key_set_keeps_digests_not_keys() -> None:
    keys = key_set([API_KEY], source="test")

    assert API_KEY not in repr(keys)
    assert all(len(digest) == 32 for digest in keys.digests)


def test_keys_shorter_than_the_minimum_are_ignored() -> None:
    keys = key_set(["x" * (MIN_KEY_LENGTH - 1), API_KEY], source="test")

    assert len(keys.digests) == 1
    assert keys.matches(API_KEY)
    assert not key_set(["short"], source="test").digests


@pytest.mark.parametrize(
    ("text", "keys"),
    [("a,b", ["a", "b"]), (" a , b\nc ", ["a", "b", "c"]), ("", []), (" , ", [])],
)
def test_keys_are_separated_by_commas_or_whitespace(text: str, keys: list[str]) -> None:
    assert split_keys(text) == keys


@pytest.mark.parametrize(
    ("header", "token", "problem"),
    [
        (f"Bearer {API_KEY}", API_KEY, None),
        (f"bearer   {API_KEY} ", API_KEY, None),
        (None, None, "missing API key"),
        ("   ", None, "missing API key"),
        (f"Basic {API_KEY}", None, "must use the Bearer scheme"),
        ("Bearer", None, "no key after `Bearer`"),
    ],
)
def test_the_bearer_token_is_read_from_the_authorization_header(
    header: str | None, token: str | None, problem: str | None
) -> None:
    found, why = bearer_token(header)

    assert found == token
    assert (why is None) if problem is None else (problem in (why or ""))


def test_the_option_wins_over_the_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, f"{API_KEY}, {OTHER_KEY}")
    monkeypatch.setenv(
        CONN_ENV, json.dumps({"conn_type": "generic", "password": "connection-key-not-used-here"})
    )

    keys = configured_keys()

    assert keys.source == "[blindata] receiver_api_key"
    assert keys.matches(API_KEY) and keys.matches(OTHER_KEY)
    assert not keys.matches("connection-key-not-used-here")


def test_the_connection_gives_its_password_and_extra_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.setenv(CONN_ID_ENV, "lineage_in")
    monkeypatch.setenv(
        "AIRFLOW_CONN_LINEAGE_IN",
        json.dumps(
            {"conn_type": "generic", "password": API_KEY, "extra": {"api_keys": [OTHER_KEY]}}
        ),
    )

    keys = configured_keys()

    assert keys.source == "the Airflow connection 'lineage_in'"
    assert keys.matches(API_KEY) and keys.matches(OTHER_KEY)


SPARK_KEY = "spark-team-key-0123456789"
DBT_KEY = "dbt-team-key-0123456789ab"


def _namespaces(keys: KeySet, key: str) -> tuple[str, ...] | None:
    scope = keys.scope_of(key)
    assert scope is not None, "not a key"
    return scope.namespaces


def test_the_option_scopes_keys_to_job_namespaces_as_a_json_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        KEY_ENV,
        json.dumps({SPARK_KEY: ["spark-*", "spark://cluster/*"], DBT_KEY: "dbt", API_KEY: "*"}),
    )

    keys = configured_keys()

    assert _namespaces(keys, SPARK_KEY) == ("spark-*", "spark://cluster/*")
    assert _namespaces(keys, DBT_KEY) == ("dbt",)
    assert _namespaces(keys, API_KEY) is None  # "*": any namespace
    assert keys.scope_of(OTHER_KEY) is None


def test_a_scope_that_cannot_be_read_leaves_its_key_out_never_unscoped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(KEY_ENV, json.dumps({SPARK_KEY: {"glob": "spark-*"}, DBT_KEY: ["dbt"]}))
    monkeypatch.setenv(CONN_ENV, json.dumps({"conn_type": "generic", "password": OTHER_KEY}))

    with caplog.at_level(logging.WARNING):
        keys = configured_keys()

    assert not keys.matches(SPARK_KEY) and keys.matches(DBT_KEY)
    assert not keys.matches(OTHER_KEY)  # the option has keys: the connection is not read
    assert "ignored 1 API key(s)" in caplog.text and SPARK_KEY not in caplog.text


def test_the_option_takes_a_json_list_of_keys_as_the_connection_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The connection's ``api_keys`` is a JSON list; pasted into the option, its keys were read
    with their brackets and quotes (a probe with real clients)."""
    monkeypatch.setenv(KEY_ENV, json.dumps([SPARK_KEY, {"key": DBT_KEY, "namespaces": "dbt"}]))

    keys = configured_keys()

    assert _namespaces(keys, SPARK_KEY) is None and _namespaces(keys, DBT_KEY) == ("dbt",)
    assert not keys.matches(f'["{SPARK_KEY}"')


@pytest.mark.parametrize(
    "option",
    [
        json.dumps([{"key": SPARK_KEY, "namespace": "spark-*"}]),  # misspelt: left out
        json.dumps([{"key": SPARK_KEY, "namespaces": 5}]),  # unreadable: left out
        "[]",
    ],
)
def test_a_json_list_option_with_no_readable_key_never_opens_the_connections(
    option: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lower source is not consulted once the option holds JSON: a stale key left in the
    connection opened the door, for every namespace (a review)."""
    monkeypatch.setenv(KEY_ENV, option)
    monkeypatch.setenv(CONN_ENV, json.dumps({"conn_type": "generic", "password": OTHER_KEY}))

    keys = configured_keys()

    assert not keys.matches(OTHER_KEY) and not keys.matches(SPARK_KEY)


def test_a_connections_api_keys_given_as_a_json_text_are_read_as_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    extra = {"api_keys": json.dumps([SPARK_KEY, DBT_KEY])}
    monkeypatch.setenv(CONN_ENV, json.dumps({"conn_type": "generic", "extra": extra}))

    keys = configured_keys()

    assert keys.matches(SPARK_KEY) and keys.matches(DBT_KEY)


def test_an_ordinary_extra_field_leaves_no_key_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beside ``namespaces`` the scope is read, whatever else the extra holds: an OAuth
    ``scope_note``, a shared connection's ``k8s_namespace`` (reviews)."""
    monkeypatch.delenv(KEY_ENV, raising=False)
    extra = {
        "namespaces": ["spark-*"],
        "scope_note": "spark only",
        "k8s_namespace": "airflow",
        "description": "x",
        "api_keys": [{"key": DBT_KEY, "namespaces": ["dbt"], "k8s_namespace": "airflow"}],
    }
    conn = {"conn_type": "generic", "password": SPARK_KEY, "extra": extra}
    monkeypatch.setenv(CONN_ENV, json.dumps(conn))

    keys = configured_keys()
    assert _namespaces(keys, SPARK_KEY) == ("spark-*",)
    assert _namespaces(keys, DBT_KEY) == ("dbt",)


@pytest.mark.parametrize(
    "extra",
    [
        {"namespace": ["spark-*"]},  # the password's scope, misspelt
        {"api_keys": [{"key": SPARK_KEY, "namespace": ["spark-*"]}]},
        {"api_keys": [{"key": SPARK_KEY, "Namespaces": ["spark-*"]}]},
        {"scope": "spark-*"},
        # a review: camel case, a job_ prefix, a blank, a word before it
        {"jobNamespaces": ["spark-*"]},
        {"job_ns": "spark-*"},
        {"namespaces ": ["spark-*"]},
        {"allowed_namespaces": ["spark-*"]},
        {"namespaces_allowed": ["spark-*"]},
        {"ns": "spark-*"},
        {"api_keys": [{"key": SPARK_KEY, "jobNamespaces": ["spark-*"]}]},
    ],
)
def test_a_misspelt_scope_leaves_its_key_out_never_unscoped(
    extra: dict[str, Any], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A scope misread must never let a key write more: ``namespace`` (singular) made the key
    write every job namespace (a probe with real clients)."""
    monkeypatch.delenv(KEY_ENV, raising=False)
    conn = {
        "conn_type": "generic",
        "password": SPARK_KEY if "api_keys" not in extra else "",
        "extra": extra,
    }
    monkeypatch.setenv(CONN_ENV, json.dumps(conn))
    configured_keys()  # the first reading of a connection imports Airflow, which sets up logging
    logger = logging.getLogger("airflow_blindata.receiver.keys")
    logger.addHandler(caplog.handler)  # Airflow's set-up replaced the root's handlers

    try:
        with caplog.at_level(logging.WARNING):
            keys = configured_keys()
    finally:
        logger.removeHandler(caplog.handler)

    assert not keys.matches(SPARK_KEY)
    assert "ignored" in caplog.text and SPARK_KEY not in caplog.text


def test_an_option_that_is_not_json_refuses_everything_without_quoting_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(KEY_ENV, "{" + SPARK_KEY + ": spark-*}")
    monkeypatch.setenv(CONN_ENV, json.dumps({"conn_type": "generic", "password": OTHER_KEY}))

    keys = configured_keys()

    assert not keys.digests and keys.problem and SPARK_KEY not in keys.problem
    assert "not a JSON object" in keys.problem


def test_the_connection_scopes_its_password_and_its_extra_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    extra = {
        "namespaces": ["spark-*"],
        "api_keys": [OTHER_KEY, {"key": DBT_KEY, "namespaces": ["dbt://prod/*"]}],
    }
    monkeypatch.setenv(
        CONN_ENV, json.dumps({"conn_type": "generic", "password": SPARK_KEY, "extra": extra})
    )

    keys = configured_keys()

    assert _namespaces(keys, SPARK_KEY) == ("spark-*",)
    assert _namespaces(keys, DBT_KEY) == ("dbt://prod/*",)
    assert _namespaces(keys, OTHER_KEY) is None


def test_without_option_or_connection_there_is_no_key_and_the_message_says_where_to_put_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv(CONN_ENV, raising=False)

    keys = configured_keys()

    assert keys.digests == ()
    assert keys.problem is not None
    assert "[blindata] receiver_api_key" in keys.problem
    assert "'blindata_receiver'" in keys.problem


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_keys_are_cached_and_reloaded_after_the_ttl() -> None:
    clock, loads = _Clock(), []

    def loader() -> KeySet:
        loads.append(clock.now)
        return key_set([API_KEY if len(loads) == 1 else OTHER_KEY], source="test")

    cached = CachedKeys(loader, ttl=30, clock=clock)
    assert cached.get().matches(API_KEY)
    clock.now = 29
    assert cached.fresh() is not None and cached.get().matches(API_KEY)
    clock.now = 31
    assert cached.fresh() is None
    assert cached.get().matches(OTHER_KEY)  # rotated without a restart
    assert loads == [0, 31]


def test_a_failing_key_lookup_refuses_and_retries_soon() -> None:
    clock, calls = _Clock(), []

    def loader() -> KeySet:
        calls.append(clock.now)
        raise RuntimeError(f"secrets backend down, token {API_KEY}")

    cached = CachedKeys(loader, ttl=30, clock=clock)
    keys = cached.get()
    assert keys.digests == ()
    assert keys.problem is not None and API_KEY not in keys.problem
    clock.now = 6
    cached.get()
    assert calls == [0, 6]


def test_repeated_warnings_are_held_back_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    clock = _Clock()
    warnings = ThrottledWarnings(logging.getLogger("throttle-test"), interval=60, clock=clock)
    caplog.set_level(logging.WARNING, logger="throttle-test")

    for second in (0, 1, 2, 30, 61, 62):
        clock.now = second
        warnings.warn("unauthorized", "refused %s", second)
    warnings.warn("store", "store down")

    assert [record.getMessage() for record in caplog.records] == [
        "refused 0",
        "refused 61 (and 3 more like it in the last 60 s)",
        "store down",
    ]


# -- settings -------------------------------------------------------------------------------


def test_settings_come_from_the_blindata_section(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW__BLINDATA__RECEIVER_MAX_BODY_BYTES", "2048")
    monkeypatch.setenv("AIRFLOW__BLINDATA__RECEIVER_MAX_BATCH_EVENTS", "7")

    assert receiver_settings() == ReceiverSettings(2048, 7)


@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_a_bad_limit_is_a_problem_that_names_the_option(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("AIRFLOW__BLINDATA__RECEIVER_MAX_BATCH_EVENTS", value)

    problem = receiver_settings().problem

    assert problem == (
        f"[blindata] receiver_max_batch_events must be a positive integer, not {value!r}"
    )


def test_the_plugin_entry_has_the_shape_airflow_mounts() -> None:
    fastapi_app.cache_clear()
    try:
        entry = fastapi_app()
        assert set(entry) == {"app", "url_prefix", "name"}
        assert entry["url_prefix"] == "/blindata"
        assert fastapi_app() is entry  # built once per process
    finally:
        fastapi_app.cache_clear()


@pytest.mark.parametrize(("enabled", "mounted"), [("True", 1), ("False", 0)])
def test_the_plugin_mounts_the_receiver_unless_disabled(
    monkeypatch: pytest.MonkeyPatch, enabled: str, mounted: int
) -> None:
    monkeypatch.setenv("AIRFLOW__BLINDATA__RECEIVER_ENABLED", enabled)
    fastapi_app.cache_clear()
    try:
        assert len(plugin_fastapi_apps()) == mounted
    finally:
        fastapi_app.cache_clear()


# -- bodies ---------------------------------------------------------------------------------


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


@pytest.mark.parametrize(
    ("parts", "declared", "ok"),
    [
        ((b"a" * 600, b"b" * 400), None, True),
        ((b"a" * 600, b"b" * 401), None, False),
        ((b"a",), str(LIMIT + 1), False),
        ((b"a",), "not-a-number", True),
    ],
    ids=["at the limit", "past the limit", "declared past the limit", "declared nonsense"],
)
def test_a_body_is_read_up_to_the_limit(
    parts: tuple[bytes, ...], declared: str | None, ok: bool
) -> None:
    async def read() -> bytes:
        return await read_body(_chunks(*parts), declared_length=declared, limit=LIMIT)

    if ok:
        assert anyio.run(read) == b"".join(parts)
    else:
        with pytest.raises(BodyError) as raised:
            anyio.run(read)
        assert raised.value.status == 413


def test_gzip_members_are_all_decompressed() -> None:
    body = gzip.compress(b'[{"a": 1},') + gzip.compress(b'{"b": 2}]')

    assert decompress(body, "gzip", limit=LIMIT) == b'[{"a": 1},{"b": 2}]'


@pytest.mark.parametrize(("size", "ok"), [(LIMIT, True), (LIMIT + 1, False), (1000 * LIMIT, False)])
def test_decompression_stops_at_the_limit(size: int, ok: bool) -> None:
    body = gzip.compress(b"x" * size)

    if ok:
        assert len(decompress(body, "x-gzip", limit=LIMIT)) == size
    else:
        with pytest.raises(BodyError, match="decompressed request body exceeds") as raised:
            decompress(body, "gzip", limit=LIMIT)
        assert raised.value.status == 413


@pytest.mark.parametrize("encoding", [None, "", "identity", " IDENTITY "])
def test_an_unencoded_body_is_kept_as_is(encoding: str | None) -> None:
    assert decompress(b"{}", encoding, limit=LIMIT) == b"{}"


@pytest.mark.parametrize(
    ("body", "content_type", "batch", "problems"),
    [
        (b'{"a": 1}', "application/json", False, [None]),
        (b'[{"a": 1}, 2, "x", null]', None, True, [None, "a number", "a string", "null"]),
        (
            b'{"a": 1}\n\n{bad\n[1]\n',
            "application/x-ndjson; charset=utf-8",
            True,
            [None, "not JSON", "an array"],
        ),
        (b"[]", "application/json", True, []),
    ],
    ids=["one object", "an array", "JSON lines", "an empty array"],
)
def test_a_body_splits_into_its_events(
    body: bytes, content_type: str | None, batch: bool, problems: list[str | None]
) -> None:
    split = split_events(body, content_type, max_events=10)

    assert split.batch is batch
    assert len(split.items) == len(problems)
    for item, problem in zip(split.items, problems, strict=True):
        assert (item.problem is None) if problem is None else (problem in (item.problem or ""))


def test_json_lines_items_know_their_line() -> None:
    split = split_events(b'{"a": 1}\n\n{"b": 2}\n', "application/jsonl", max_events=10)

    assert [(item.index, item.line, item.where) for item in split.items] == [
        (0, 1, "event 0 (line 1)"),
        (1, 3, "event 1 (line 3)"),
    ]


def test_concatenated_objects_get_a_hint_about_json_lines() -> None:
    with pytest.raises(BodyError, match="application/x-ndjson"):
        split_events(b'{"a": 1}\n{"b": 2}\n', "application/json", max_events=10)


def test_deep_nesting_is_refused_not_crashed() -> None:
    deep: Any = b'{"a":' * 100_000 + b"1" + b"}" * 100_000

    with pytest.raises(BodyError, match="nested too deeply"):
        split_events(deep, None, max_events=10)


def test_a_batch_behind_a_byte_order_mark_loses_only_its_element_that_is_not_utf8() -> None:
    """docs/capture.md: one bad event never sinks its batch. A UTF-8 byte order mark (which
    ``json.loads`` of bytes reads, and some Windows tools write) before an array with one
    element that is not UTF-8 refused all three events (a probe with real clients)."""
    body = b'\xef\xbb\xbf[{"a": 1}, {"c": "\xff"}, {"b": 2}]'

    split = split_events(body, "application/json", max_events=10)

    assert split.batch
    assert [(item.index, item.data) for item in split.items if item.problem is None] == [
        (0, {"a": 1}),
        (2, {"b": 2}),
    ]
    assert [item.index for item in split.items if item.problem] == [1]


def test_a_batch_with_a_number_python_does_not_read_loses_that_event_only() -> None:
    """An integer of more than 4,300 digits is valid JSON that Python refuses: the whole batch
    was refused, with a hint naming a Python function (a probe with real clients)."""
    body = b'[{"a": 1}, {"n": ' + b"9" * 5000 + b'}, {"b": 2}]'

    split = split_events(body, "application/json", max_events=10)

    assert [(item.index, item.data) for item in split.items if item.problem is None] == [
        (0, {"a": 1}),
        (2, {"b": 2}),
    ]
    (bad,) = [item for item in split.items if item.problem]
    assert bad.problem == "not readable JSON: a number of more than 4,300 digits"


def test_an_array_too_deep_to_read_whole_is_read_element_by_element() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    body = b'[{"a": "],[{"}, ' + deep + b', {"b": 2}, {"c": "\xff"}]'

    split = split_events(body, None, max_events=10)

    assert split.batch
    assert [(item.index, item.data) for item in split.items if item.problem is None] == [
        (0, {"a": "],[{"}),
        (2, {"b": 2}),
    ]
    assert [(item.index, item.problem) for item in split.items if item.problem] == [
        (1, "not readable JSON: nested too deeply"),
        (3, "not JSON: 'utf-8' codec can't decode byte 0xff in position 7: invalid start byte"),
    ]
