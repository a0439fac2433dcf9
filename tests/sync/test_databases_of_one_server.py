"""The tables of two databases of one server named alike, read from the store as from files.

Great Expectations names prod's and dev's ``public.orders`` alike, only each event's
``dataSource`` URI names its database (``tests/mapper/test_source_databases.py``): the store's
reading (job by job, superseded events skimmed, folds kept and extended) keys them as the fold of
every event at once does, so the plan does not depend on where the events were read from.
"""

from __future__ import annotations

import json

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.plans.store import plan_from_store
from airflow_blindata.store import open_store
from tests import builders
from tests.mapper.test_source_databases import NOT_NULL, PER_DATABASE, SERVER, _validated
from tests.sync.helpers import assert_read_at_once


@pytest.mark.parametrize("latest", ["dev", "prod"])
def test_two_databases_read_from_the_store_plan_as_read_at_once(
    store_url: str, latest: str
) -> None:
    seconds = {"prod": 1, "dev": 2} if latest == "dev" else {"prod": 2, "dev": 1}
    job = "orders_suite"
    first = [
        _validated(database, nulls, rows, seconds[database], name="public.orders")
        for database, nulls, rows in (("prod", 0, 1000), ("dev", 5, 10))
    ]
    for event in first:  # one job validating both databases, one run each
        event["job"]["name"] = job
    later = _validated("prod", 3, 1001, 3)
    later["job"]["name"] = job
    definition = builders.definition()
    expected_codes = {
        f"ol:{SERVER}/prod.public.orders:{NOT_NULL}:id": "pg prod",
        f"ol:{SERVER}/dev.public.orders:{NOT_NULL}:id": "pg dev",
    }
    with open_store(store_url) as store:
        store.append_many(json.dumps(event) for event in first)
        planned = plan_from_store(store, definition, PER_DATABASE)
        assert_read_at_once(planned, build(first, definition, PER_DATABASE))
        assert {c.code: c.entity.system for c in planned.quality.checks} == expected_codes
        store.append_many([json.dumps(later)])  # the kept fold extended with a newer run
        planned = plan_from_store(store, definition, PER_DATABASE)
        assert planned.report.counters["jobsExtended"] == 1
        assert_read_at_once(planned, build([*first, later], definition, PER_DATABASE))
        assert {c.code: c.entity.system for c in planned.quality.checks} == expected_codes
