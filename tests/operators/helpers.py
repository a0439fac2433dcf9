"""What the operators' tests share: the job definition the sync DAG's operators read, as a dict."""

from __future__ import annotations

from tests.sync.helpers import DEFINITION_UUID

DEFINITION = {
    "uuid": DEFINITION_UUID,
    "systemPolicies": [
        {"pattern": "postgres://*", "creation": "IF_MISSING", "nameTemplate": "{host}"}
    ],
}
