"""Reading an instance's OpenAPI description and matching path templates (``openapi.py``),
and the validation of ``api_paths`` (``api_paths.py``): pure functions, tables of cases."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from airflow_blindata.blindata import ENDPOINTS, BlindataConfigError
from airflow_blindata.blindata.api_paths import ApiPaths, contract_paths
from airflow_blindata.blindata.apicheck import USED_BY
from airflow_blindata.blindata.openapi import OpenApiError, parse_openapi, template_matches
from airflow_blindata.hooks.blindata import BlindataConnectionSettings

# -- template matching ---------------------------------------------------------------------------

MATCHES = [
    (
        "a parameter matches a parameter of another name",
        "/api/v1/systems/{uuid}",
        "/api/v1/systems/{id}",
        True,
    ),
    (
        "a parameter with a regex is a parameter",
        "/api/v1/systems/{uuid}",
        "/api/v1/systems/{uuid:.+}",
        True,
    ),
    (
        "the collection star matches a parameter",
        "/api/v1/dataflows/*/upload",
        "/api/v1/dataflows/{id}/upload",
        True,
    ),
    (
        "the collection star matches a literal star",
        "/api/v1/dataflows/*/upload",
        "/api/v1/dataflows/*/upload",
        True,
    ),
    (
        "the collection star does not match a fixed word",
        "/api/v1/dataflows/*/upload",
        "/api/v1/dataflows/bulk/upload",
        False,
    ),
    (
        "a parameter does not match a fixed word",
        "/api/v1/systems/{uuid}",
        "/api/v1/systems/routines",
        False,
    ),
    (
        "a fixed word does not match a parameter",
        "/api/v1/systems/routines",
        "/api/v1/systems/{uuid}",
        False,
    ),
    ("a trailing slash is ignored", "/api/v1/systems", "/api/v1/systems/", True),
    ("a different depth never matches", "/api/v1/systems", "/api/v1/systems/{uuid}", False),
    ("words are compared exactly", "/api/v1/physical_entities", "/api/v1/physical-entities", False),
]


@pytest.mark.parametrize(
    ("contract", "served", "expected"), [m[1:] for m in MATCHES], ids=[m[0] for m in MATCHES]
)
def test_path_templates_match_segment_by_segment(
    contract: str, served: str, expected: bool
) -> None:
    assert template_matches(contract, served) is expected


# -- descriptions --------------------------------------------------------------------------------

OPENAPI_3 = {
    "openapi": "3.0.1",
    "info": {"title": "Blindata", "version": "v1"},
    "servers": [
        {"url": "https://tenant.example.com/{base}", "variables": {"base": {"default": "blindata"}}}
    ],
    "paths": {
        "/api/v1/systems": {"get": {}, "post": {}},
        "/api/v1/systems/{id}": {"put": {}, "parameters": []},
    },
}
SWAGGER_2 = {
    "swagger": "2.0",
    "basePath": "/blindata",
    "paths": {"/api/v1/systems": {"get": {}}},
}


def test_openapi_3_servers_base_path_with_its_variables_prefixes_every_path() -> None:
    served = parse_openapi(json.dumps(OPENAPI_3))
    assert served.operations == {
        ("GET", "/blindata/api/v1/systems"),
        ("POST", "/blindata/api/v1/systems"),
        ("PUT", "/blindata/api/v1/systems/{id}"),
    }
    assert served.find("PUT", "/blindata/api/v1/systems/{uuid}") == "/blindata/api/v1/systems/{id}"
    assert served.find("DELETE", "/blindata/api/v1/systems/{uuid}") is None
    assert served.methods_at("/blindata/api/v1/systems/{uuid}") == ["PUT"]


def test_a_yaml_description_reads_as_its_json() -> None:
    assert parse_openapi(yaml.safe_dump(OPENAPI_3)) == parse_openapi(json.dumps(OPENAPI_3))


def test_swagger_2_base_path_prefixes_every_path() -> None:
    assert parse_openapi(json.dumps(SWAGGER_2)).operations == {("GET", "/blindata/api/v1/systems")}


def test_a_server_url_without_a_path_adds_no_prefix() -> None:
    document = {**OPENAPI_3, "servers": [{"url": "http://localhost:8080"}]}
    assert ("GET", "/api/v1/systems") in parse_openapi(json.dumps(document)).operations


NOT_DESCRIPTIONS = [
    ("an HTML page", "<html><body>login</body></html>", "object, got str"),
    ("a JSON list", "[1, 2]", "got list"),
    ("JSON without a version", '{"paths": {}}', "version field"),
    ("a description without paths", '{"openapi": "3.0.1"}', "no 'paths'"),
    ("broken YAML", "openapi: [3", "neither JSON nor YAML"),
]


@pytest.mark.parametrize(
    ("text", "says"), [c[1:] for c in NOT_DESCRIPTIONS], ids=[c[0] for c in NOT_DESCRIPTIONS]
)
def test_what_is_not_a_description_is_an_error_that_says_why(text: str, says: str) -> None:
    with pytest.raises(OpenApiError, match=says):
        parse_openapi(text)


# -- api_paths -----------------------------------------------------------------------------------

BAD_API_PATHS = [
    (
        "an unknown key names the known ones",
        {"/api/v1/flows/*/upload": "/x"},
        r"not a path of the contract; known paths: /auth/login, .*/api/v1/dataflows/\*/upload",
    ),
    (
        "a value must be a path",
        {"/api/v1/systems": "api/v2/systems"},
        "must be a path starting with '/'",
    ),
    ("a value must be a string", {"/api/v1/systems": 3}, "must be a path starting with '/'"),
    (
        "a value keeps the placeholders",
        {"/api/v1/systems/{uuid}": "/api/v2/systems/{id}"},
        r"must keep the placeholders .*\{uuid\}.*has \{id\}",
    ),
    ("a value has no query", {"/api/v1/systems": "/api/v1/systems?x=1"}, "without query"),
    ("not an object", ["/api/v1/systems"], "must be a JSON object"),
    ("not JSON", "{oops", "not valid JSON"),
]


@pytest.mark.parametrize(
    ("value", "says"), [c[1:] for c in BAD_API_PATHS], ids=[c[0] for c in BAD_API_PATHS]
)
def test_a_bad_api_paths_is_an_error_naming_what_to_fix(value: Any, says: str) -> None:
    with pytest.raises(BlindataConfigError, match=says):
        ApiPaths.parse(value)


def test_api_paths_moves_every_method_of_a_path_and_keeps_the_others() -> None:
    paths = ApiPaths.parse('{"/api/v1/systems/{uuid}": "/api/v2/systems/{uuid}"}')
    for name in ("systems.get", "systems.update", "systems.delete"):
        moved = paths.resolve(ENDPOINTS[name])
        assert moved.path(uuid="a b") == "/api/v2/systems/a%20b"
        assert (moved.name, moved.method) == (name, ENDPOINTS[name].method)
    assert paths.resolve(ENDPOINTS["systems.list"]) is ENDPOINTS["systems.list"]


def test_every_contract_path_is_a_key_api_paths_accepts() -> None:
    assert ApiPaths({path: path for path in contract_paths()})
    assert len(contract_paths()) == len({e.template for e in ENDPOINTS.values()})


def connection(extra: dict[str, Any]) -> Any:
    return SimpleNamespace(
        conn_id="blindata_test",
        host="https://b.example",
        port=None,
        login="u",
        password="secret",
        extra_dejson=extra,
    )


def test_the_connection_reads_api_paths_and_names_itself_in_errors() -> None:
    moved = {"/api/v1/dataflows/*/upload": "/api/v1/lineage/*/upload"}
    settings = BlindataConnectionSettings.from_connection(connection({"api_paths": moved}))
    assert dict(settings.api_paths.moved) == moved
    with settings.client() as client:
        assert client.api_paths.served("/api/v1/dataflows/*/upload") == "/api/v1/lineage/*/upload"
    as_text = BlindataConnectionSettings.from_connection(
        connection({"api_paths": json.dumps(moved)})
    )
    assert as_text.api_paths == settings.api_paths  # a form may keep the object as text
    with pytest.raises(BlindataConfigError, match=r"^blindata_test: api_paths: '/nope'"):
        BlindataConnectionSettings.from_connection(connection({"api_paths": {"/nope": "/x"}}))


def test_every_operation_says_what_uses_it() -> None:
    assert set(USED_BY) == set(ENDPOINTS)
