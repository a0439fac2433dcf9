"""Lists walked page by page against a server whose unsorted pages change order between requests.

Spring passes no ``ORDER BY`` to the database when a list is asked without ``sort``, and a
database may then serve each page from a differently ordered scan (PostgreSQL's synchronised
sequential scans start wherever another scan is). The contract offers ``sort=prop,ASC|DESC``:
the client asks every list in one order, so that no object is skipped or given twice (a
cleanup that missed a flow ending on a table would remove the table).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from blindata_emulator import running_emulator

from airflow_blindata.blindata.models import PhysicalEntity, Ref, System
from airflow_blindata.sync import snapshot
from tests.helpers import emulator_settings
from tests.sync.helpers import client_of, counts, dbt_events, definition, plan_for

pytestmark = pytest.mark.integration


@pytest.fixture
def unordered() -> Iterator[Any]:
    """An emulator serving unsorted lists in a new order each time, three objects a page."""
    settings = replace(emulator_settings(), unordered_pages=True, page_size_cap=3)
    with running_emulator(settings) as handle:
        yield handle


def test_a_list_walked_page_by_page_gives_every_object_once(unordered: Any) -> None:
    with client_of(unordered) as client:
        system = client.api.systems.create(System(name="Pages"))
        rows = [
            PhysicalEntity(system=Ref(uuid=system.uuid or ""), schema="s", name=f"t{n:02}")
            for n in range(40)
        ]
        assert client.api.physical_entities.upload(rows).created == 40
        listed = [e.name for e in client.api.physical_entities.list(systemUuid=system.uuid)]
    assert sorted(listed) == [f"t{n:02}" for n in range(40)]


def test_snapshots_against_unordered_pages_land_as_against_ordered_ones(
    unordered: Any, emulator: Any
) -> None:
    """The second snapshot finds by listing what the first created: nothing is created twice."""
    job = definition()
    reports = {}
    for name, handle in (("ordered", emulator), ("unordered", unordered)):
        with client_of(handle) as client:
            first = snapshot(plan_for(client, dbt_events(), job), client, job)
            second = snapshot(plan_for(client, dbt_events(), job), client, job)
        assert (first.status, second.status) == ("success", "success"), second.render()
        reports[name] = (first.counters, second.counters)
    assert counts(unordered) == counts(emulator)
    assert reports["unordered"] == reports["ordered"]
