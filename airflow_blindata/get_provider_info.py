"""Provider metadata read by Airflow's ProvidersManager (entry point ``apache_airflow_provider``).

The connection form is declared here as data (``conn-fields`` and ``ui-field-behaviour``), the
Airflow 3.2+ way; the hook methods that used to build it are deprecated.
"""

from __future__ import annotations

from typing import Any

from airflow_blindata import __version__


def get_provider_info() -> dict[str, Any]:
    return {
        "package-name": "airflow-blindata",
        "name": "Blindata",
        "description": "Catalogues OpenLineage lineage in `Blindata <https://blindata.io/>`__.",
        "state": "ready",
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": "Blindata",
                "external-doc-url": "https://help.blindata.io/",
                "tags": ["service"],
            }
        ],
        "hooks": [
            {
                "integration-name": "Blindata",
                "python-modules": ["airflow_blindata.hooks.blindata"],
            }
        ],
        "connection-types": [
            {
                "connection-type": "blindata",
                "hook-class-name": "airflow_blindata.hooks.blindata.BlindataHook",
                "hook-name": "Blindata",
                "ui-field-behaviour": {
                    "hidden-fields": ["port", "schema"],
                    "relabeling": {
                        "host": "Blindata URL",
                        "login": "Username",
                        "password": "API key, password or token",
                    },
                    "placeholders": {
                        "host": "https://app.blindata.io",
                        "login": "etl-user (not used with bearer)",
                        "password": "API key (api_key), password (login) or token (bearer)",
                    },
                },
                "conn-fields": {
                    "tenant": {
                        "label": "Tenant",
                        "description": "Tenant uuid sent as X-BD-Tenant; empty: the user's default",
                        "schema": {"type": ["string", "null"]},
                    },
                    "auth_method": {
                        "label": "Authentication method",
                        "description": "api_key: X-BD-User and X-BD-ApiKey headers; login: "
                        "username and password for a bearer token; bearer: a token from elsewhere",
                        "schema": {
                            "type": "string",
                            "enum": ["api_key", "login", "bearer"],
                            "default": "api_key",
                        },
                    },
                    "verify_ssl": {
                        "label": "Verify TLS certificate",
                        "description": "Turn off only for a test instance with a self-signed cert",
                        "schema": {"type": "boolean", "default": True},
                    },
                    "timeout": {
                        "label": "Timeout (seconds)",
                        "description": "Seconds to wait for one HTTP exchange",
                        "schema": {"type": "number", "minimum": 1, "default": 30},
                    },
                    "deadline": {
                        "label": "Retry deadline (seconds)",
                        "description": "Total seconds for one operation including its retries",
                        "schema": {"type": "number", "minimum": 1, "default": 120},
                    },
                },
            }
        ],
        "plugins": [
            {
                "name": "blindata",
                "plugin-class": "airflow_blindata.openlineage.plugin.BlindataPlugin",
            }
        ],
    }
