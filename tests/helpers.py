"""What the provider's tests share beyond the builders: the served emulator's tenants and users.

``emulator_settings`` is what ``served_emulator`` (``tests/conftest.py``) serves: two tenants,
the ETL user ``USER`` (API key ``API_KEY``) reaching only ``TENANT``, the steward ``HUMAN``
logging in with ``PASSWORD``. A test that builds a client or a connection of its own takes the
credentials from here; a test of a refused tenant uses ``OTHER_TENANT``. The secrets are spelled
so that a log or an error that carries one is easy to find.
"""

from __future__ import annotations

from typing import Any

TENANT = "11111111-1111-4111-8111-111111111111"
OTHER_TENANT = "22222222-2222-4222-8222-222222222222"
USER = "etl-user"
API_KEY = "k3y-that-must-never-be-logged"
PASSWORD = "pa55-that-must-never-be-logged"
HUMAN = "steward"


def emulator_settings() -> Any:
    """Two tenants; the ETL user may use only the first, the steward logs in with a password."""
    from blindata_emulator import EmulatorSettings, EmulatorUser

    return EmulatorSettings(
        tenants=[TENANT, OTHER_TENANT],
        users=[
            EmulatorUser(username=USER, password=API_KEY, tenants=[TENANT]),
            EmulatorUser(username=HUMAN, password=PASSWORD),
        ],
    )
