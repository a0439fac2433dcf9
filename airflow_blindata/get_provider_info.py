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
        "operators": [
            {
                "integration-name": "Blindata",
                "python-modules": ["airflow_blindata.operators.blindata"],
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
                # The port stays in the form: Airflow 3.3.2's Test button (connection list) sends
                # port 0 for a connection without one, which the API refuses with 400 ("The host
                # or port to test differs from the stored connection"). A connection saved with
                # its port (443 for https) tests fine. See docs/connection.md.
                "ui-field-behaviour": {
                    "hidden-fields": ["schema"],
                    "relabeling": {
                        "host": "Blindata URL",
                        "port": "Port (443 for https; the Test button needs it)",
                        "login": "Username",
                        "password": "API key, password or token",
                    },
                    "placeholders": {
                        "host": "https://app.blindata.io",
                        "port": "443",
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
                    "ca_bundle": {
                        "label": "CA bundle",
                        "description": "For a Blindata whose certificate a private CA signed: the "
                        "path, on the workers, of a PEM file (or a directory of them) to verify it",
                        "schema": {"type": ["string", "null"]},
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
                    "api_paths": {
                        "label": "API paths",
                        "description": "Only when this instance serves a path elsewhere: a JSON "
                        'object from a contract path (docs/blindata-endpoints.md, e.g. "/api/v1/'
                        'dataflows/*/upload") to the path it serves. Check with airflow-blindata '
                        "check --api",
                        "schema": {"type": ["object", "null"]},
                    },
                },
            }
        ],
        "plugins": [
            {
                "name": "blindata",
                "plugin-class": "airflow_blindata.plugin.BlindataPlugin",
            }
        ],
        "config": {
            "blindata": {
                "description": "Capture of OpenLineage events into the Blindata event store "
                "(see docs/capture.md).\n",
                "options": {
                    "store_url": {
                        "description": "The event store: sqlite:////path/events.db (one "
                        "machine), postgresql://user:password@host/db (workers on several "
                        "machines; needs the postgres extra) or airflow-conn://<conn_id>. "
                        "Empty: SQLite in $AIRFLOW_HOME/blindata/events.db.\n",
                        "version_added": "0.1.0",
                        "type": "string",
                        "sensitive": True,
                        "example": "postgresql://airflow:secret@db:5432/lineage",
                        "default": "",
                    },
                    "listener_enabled": {
                        "description": "Capture with BlindataListener, which runs the "
                        "OpenLineage provider's extraction with a client of its own, whatever "
                        "[openlineage] transport says. It stands down by itself when that "
                        "transport already includes BlindataTransport. Trade-off: when the "
                        "provider's own listener also runs (a transport to Marquez), each task "
                        "event is extracted twice.\n",
                        "version_added": "0.1.0",
                        "type": "boolean",
                        "example": "False",
                        "default": "True",
                    },
                    "lost_events_file": {
                        "description": "Where BlindataTransport keeps the events it could not "
                        "store (JSON lines, one event each; re-ingest with airflow-blindata "
                        "ingest). Empty: $AIRFLOW_HOME/blindata/lost-events.jsonl.\n",
                        "version_added": "0.1.0",
                        "type": "string",
                        "example": "/var/log/airflow/blindata-lost-events.jsonl",
                        "default": "",
                    },
                    "ui_enabled": {
                        "description": "Add the Blindata page to the Airflow UI (a nav entry, "
                        "and a view on DAG runs), served by the API server under /blindata-ui. "
                        "See docs/blindata-page.md.\n",
                        "version_added": "0.1.0",
                        "type": "boolean",
                        "example": "False",
                        "default": "True",
                    },
                    "ui_conn_id": {
                        "description": "Blindata connection whose URL the page links the "
                        "catalogued objects to.\n",
                        "version_added": "0.1.0",
                        "type": "string",
                        "example": None,
                        "default": "blindata_default",
                    },
                    "ui_job_definition": {
                        "description": "Only until a snapshot of this version has run: the "
                        "job definition file (YAML or JSON) the page's Where it lands view maps a "
                        "job with when the sync history records none. Afterwards the view maps "
                        "with the definition the last snapshot recorded. Empty: the seeds' "
                        "defaults.\n",
                        "version_added": "0.1.0",
                        "type": "string",
                        "example": "/opt/airflow/dags/blindata_sync.yaml",
                        "default": "",
                    },
                    "receiver_enabled": {
                        "description": "Mount the OpenLineage receiver (POST "
                        "/blindata/api/v1/lineage) in the Airflow API server, for producers "
                        "outside Airflow (Spark, dbt, Flink, Hop). See "
                        "docs/configure-your-producers.md.\n",
                        "version_added": "0.1.0",
                        "type": "boolean",
                        "example": "False",
                        "default": "True",
                    },
                    "receiver_api_key": {
                        "description": "API key(s) producers send as Authorization: Bearer "
                        "<key>; several separated by commas (rotation) or a JSON list, each "
                        "at least 16 characters. Or a JSON object that scopes each key to "
                        'job-namespace globs: {"<key>": ["spark-*"], "<other key>": "*"}; an '
                        "event outside its key's scope is refused (403). Empty: the keys of the "
                        "connection "
                        "receiver_conn_id. No key anywhere: the receiver refuses every request "
                        "(503).\n",
                        "version_added": "0.1.0",
                        "type": "string",
                        "sensitive": True,
                        "example": None,
                        "default": "",
                    },
                    "receiver_conn_id": {
                        "description": "Connection whose password (and extra api_keys, a "
                        "list) holds the receiver's keys when receiver_api_key is empty. The "
                        "extra's namespaces (job-namespace globs) scopes the password's key; an "
                        'api_keys item {"key": ..., "namespaces": [...]} scopes its own.\n',
                        "version_added": "0.1.0",
                        "type": "string",
                        "example": None,
                        "default": "blindata_receiver",
                    },
                    "receiver_max_body_bytes": {
                        "description": "Largest request body the receiver takes, as sent and "
                        "after gzip decompression (413 beyond).\n",
                        "version_added": "0.1.0",
                        "type": "integer",
                        "example": None,
                        "default": "16777216",
                    },
                    "receiver_max_batch_events": {
                        "description": "Most events in one request (413 beyond).\n",
                        "version_added": "0.1.0",
                        "type": "integer",
                        "example": None,
                        "default": "1000",
                    },
                    "receiver_max_bytes_in_flight": {
                        "description": "Bytes of request bodies the receiver holds at once, all "
                        "requests together (as read and decompressed, until each is answered); "
                        "past it a request waits a second for room, then gets 503 with "
                        "Retry-After.\n",
                        "version_added": "0.1.0",
                        "type": "integer",
                        "example": None,
                        "default": "67108864",
                    },
                    "receiver_store_timeout": {
                        "description": "Seconds a request waits for the event store; then the "
                        "answer is 503 with Retry-After, whatever the store does. Keep it below "
                        "the producers' own HTTP timeouts.\n",
                        "version_added": "0.1.0",
                        "type": "float",
                        "example": None,
                        "default": "4",
                    },
                },
            }
        },
    }
