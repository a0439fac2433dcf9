"""A Blindata whose bulk answers do not account for every row sent.

Seen on a real tenant: a quality import of 4 checks answered ``rowCreated 0, rowUpdated 0,
rowDiscarded 0`` fifteen times while every sync reported success and nothing reached Blindata.
An answer whose created + updated + discarded falls short of what was sent fails its batch (or,
for checks, whatever the listing afterwards lacks), is counted in the report, and the next
snapshot sends the rows again.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from blindata_emulator import Kind

from airflow_blindata.sync import snapshot
from tests.sync.helpers import client_of, counts, dbt_events, definition, objects, plan_for

pytestmark = pytest.mark.integration

UPLOADS = ("/upload", "/import-objects")


class AccountsForNothing(httpx.HTTPTransport):
    """Answers the bulk uploads of ``paths`` with zero rows accounted; with ``forward``, the
    rows reach the emulator all the same (only the counts are wrong), else they are dropped."""

    def __init__(self, paths: tuple[str, ...], *, forward: bool) -> None:
        super().__init__()
        self.paths = paths
        self.forward = forward
        self.answered = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method != "POST" or not any(part in path for part in self.paths):
            return super().handle_request(request)
        if self.forward:
            super().handle_request(request).read()
        self.answered += 1
        zero = {"message": "ok", "rowCreated": 0, "rowUpdated": 0, "rowDiscarded": 0}
        return httpx.Response(200, json=zero | {"errors": []})


@pytest.mark.parametrize(
    "paths",
    [
        pytest.param(("/physical_entities/*/upload",), id="entities"),
        pytest.param(("/physical_fields/*/upload",), id="fields"),
        pytest.param(("/dataflows/*/upload",), id="flows"),
        pytest.param(("/routines/*/upload",), id="routines"),
    ],
)
def test_an_upload_answered_with_fewer_rows_than_sent_fails_its_batch_and_the_next_sends_it_again(
    emulator: Any, paths: tuple[str, ...]
) -> None:
    """Issue 38: "Any bulk answer ... whose created + updated + discarded is less than what was
    sent ... must be a failure of that batch ... and the next snapshot tries again. Count it in
    the report." """
    job = definition()
    swallowing = AccountsForNothing(paths, forward=False)
    with client_of(emulator, swallowing) as blindata:
        first = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)

    assert swallowing.answered, "the transport saw no upload of that kind"
    assert first.status == "partial", first.render()
    assert first.counters["rowsUnaccounted"] > 0
    examples = [text for group in first.failures.values() for text in group.examples]
    assert any("accounted for 0 of the" in text for text in examples), first.render()

    with client_of(emulator) as blindata:
        second = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
        again = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
    assert second.status == "success", second.render()
    assert "rowsUnaccounted" not in second.counters
    assert again.status == "success"
    assert counts(emulator) == _clean_counts(emulator.base_url, job)


def test_quality_checks_an_import_did_not_account_for_and_the_listing_lacks_are_failures(
    emulator: Any,
) -> None:
    """The case seen on a real tenant: the import answers zero rows and writes nothing."""
    job = definition()
    swallowing = AccountsForNothing(("/import-objects",), forward=False)
    with client_of(emulator, swallowing) as blindata:
        first = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)

    assert not objects(emulator, Kind.CHECK)
    assert first.status == "partial", first.render()
    assert first.counters["rowsUnaccounted"] > 0
    assert "quality check" in first.failures, first.render()
    assert first.counters.get("qualityResultsPublished", 0) == 0

    with client_of(emulator) as blindata:
        second = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
    assert second.status == "success", second.render()
    assert second.counters["qualityResultsPublished"] == 4


def test_checks_written_under_wrong_counts_are_counted_and_their_results_published(
    emulator: Any,
) -> None:
    """An import whose counts fall short while its checks are listed afterwards wrote them: the
    shortfall is counted and the results go out. The ledger, which no listing confirms, is taken
    as not written (a failure): its runs are published again, which updates the same results."""
    job = definition()
    miscounting = AccountsForNothing(("/import-objects",), forward=True)
    with client_of(emulator, miscounting) as blindata:
        report = snapshot(plan_for(blindata, dbt_events(), job), blindata, job)

    assert set(report.failures) == {"quality ledger"}, report.render()
    assert report.counters["rowsUnaccounted"] > 0
    assert report.counters["qualityResultsPublished"] == 4


def _clean_counts(base_url: str, job: Any) -> dict[str, int]:
    """What two clean snapshots of the dbt events leave in an emulator of their own."""
    from blindata_emulator import running_emulator

    from tests.helpers import emulator_settings

    with running_emulator(emulator_settings()) as other:
        with client_of(other) as blindata:
            snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
            snapshot(plan_for(blindata, dbt_events(), job), blindata, job)
        return counts(other)


def test_the_answer_shape_is_the_contracts() -> None:
    """The zero answer is one the client reads (not a contract error that would fail anyway)."""
    from airflow_blindata.blindata.models import UploadResponse

    answer = UploadResponse.model_validate(
        json.loads('{"rowCreated": 0, "rowUpdated": 0, "rowDiscarded": 0}')
    )
    assert (answer.row_created, answer.row_updated, answer.row_discarded) == (0, 0, 0)
