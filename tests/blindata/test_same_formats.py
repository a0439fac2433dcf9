"""The emulator is a distribution of its own (it imports nothing of the provider), so it keeps its
own copy of Blindata's date format; these tests hold the two copies to one answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from blindata_emulator.clock import format_instant

from airflow_blindata.blindata.models import format_timestamp


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 11, 29, 10, 0, tzinfo=UTC),
        datetime(2026, 11, 29, 10, 0, 0, 999_999, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, 6_000, tzinfo=timezone(timedelta(hours=2))),
    ],
)
def test_the_emulator_writes_dates_as_the_client_does(moment: datetime) -> None:
    assert format_instant(moment.timestamp()) == format_timestamp(moment)
