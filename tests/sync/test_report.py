"""``RunReport``, ``Progress`` and the history helpers: pure, no Blindata."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import airflow_blindata.sync as sync
from airflow_blindata.mapper.report import GapCode, Report
from airflow_blindata.store import SyncRecord
from airflow_blindata.sync import Ledger, Progress, RunReport, carried_ledger, store_status
from airflow_blindata.sync.report import MAX_EXAMPLES, SystemUse

UUID = "6b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


def a_report() -> RunReport:
    report = RunReport(kind="snapshot", definition_uuid=UUID)
    plan_report = Report()
    plan_report.count("entities", 3)
    plan_report.gap(GapCode.UNMAPPED_NAMESPACE, "kafka://broker/topic")
    plan_report.unknown_facet("dbt_run")
    report.merge(plan_report)
    report.gap(GapCode.QLP_PENDING, "OpenLineage:ns/job")
    for index in range(MAX_EXAMPLES + 2):
        report.fail("flow", f"ol:ns|job{index} a -> b", "400 Bad Request: bad end")
    with report.timed("flows"):
        pass
    report.scopes = [f"ol:ns|job{index}" for index in range(100)]
    return report.finish()


def test_a_report_with_failures_is_partial_and_keeps_counts_and_a_few_examples() -> None:
    report = a_report()
    assert report.status == "partial"
    assert report.failures["flow"].count == MAX_EXAMPLES + 2
    assert len(report.failures["flow"].examples) == MAX_EXAMPLES
    assert report.counters["entities"] == 3
    assert report.unknown_facets == {"dbt_run": 1}
    assert "flows" in report.timings
    assert report.duration is not None and report.duration >= 0


def test_the_rendered_report_is_a_set_of_tables() -> None:
    text = a_report().render()
    assert text.startswith(f"Blindata snapshot of job definition {UUID}: PARTIAL in ")
    for heading in ("counter", "phase", "gap", "failed", "unknown facet"):
        assert f"\n{heading} " in text
    assert "QLP_PENDING" in text and "Wait one run." in text
    assert "ol:ns|job99" not in text  # the scopes are for cleanup, not for the log


def test_a_hint_the_table_cuts_is_given_whole_below_it() -> None:
    """The task log's table cuts a cell at 100 characters, and a hint's end is what to do: "…
    refused by Blindata this run (see t…" (a probe of what the admin sees)."""
    from airflow_blindata.mapper.report import GAP_HINTS

    report = RunReport(kind="snapshot", definition_uuid=UUID)
    report.gap(GapCode.DANGLING_FLOW, "a -> b (no entity s.b)")
    text = report.finish().render()
    assert "What to do, in full:" in text
    assert f"  DANGLING_FLOW: {GAP_HINTS[GapCode.DANGLING_FLOW]}" in text


def test_facets_the_job_does_not_know_are_counted_by_key_in_unknown_facets() -> None:
    """Seed 000: "Facets the job does not know are counted by key in unknownFacets." — the key of
    the XCom, the sync history's record and a plan's JSON; a record stored before under
    ``unknown_facets`` (the key of earlier versions) is read all the same."""
    report = a_report()
    for data in (report.to_xcom(), report.to_record(), report.model_dump()):
        assert data["unknownFacets"] == {"dbt_run": 1}
        assert "unknown_facets" not in data
    earlier = report.to_record()
    earlier["unknown_facets"] = earlier.pop("unknownFacets")
    assert RunReport.from_record(earlier) == report
    assert Report.model_validate({"unknown_facets": {"x": 2}}).unknown_facets == {"x": 2}


def test_the_xcom_leaves_out_the_ownership_lists_and_the_record_keeps_them() -> None:
    report = a_report()
    report.ledger = Ledger(scopes=["ol:ns|job"])
    xcom = report.to_xcom()
    assert "scopes" not in xcom and "ledger" not in xcom and xcom["scopeCount"] == 100
    json.dumps(xcom)
    again = RunReport.from_record(json.loads(json.dumps(report.to_record())))
    assert again == report


def test_progress_reports_phase_starts_ends_and_at_most_every_interval() -> None:
    now = [0.0]
    seen: list[tuple[str, int, int]] = []
    progress = Progress(lambda *args: seen.append(args), interval=5.0, clock=lambda: now[0])
    progress.start("fields: write", 1000)
    for _ in range(10):
        now[0] += 1.0
        progress.advance(100)
    progress.end()
    assert seen == [
        ("fields: write", 0, 1000),
        ("fields: write", 500, 1000),
        ("fields: write", 1000, 1000),
        ("fields: write", 1000, 1000),
    ]


def _record(report: RunReport) -> SyncRecord:
    return SyncRecord(
        definition_uuid=UUID,
        kind=report.kind,
        started_at=report.started_at,
        finished_at=report.finished_at or report.started_at,
        status=store_status(report),
        report=report.to_record(),
    )


def _snapshot(scopes: list[str], status: str = "success") -> RunReport:
    report = RunReport(kind="snapshot", definition_uuid=UUID, scopes=scopes)
    report.systems = {"OL": SystemUse(uuid="job-system", jobs=True)}
    return report.finish(status)  # type: ignore[arg-type]


def test_the_ledger_is_the_last_cleanups_plus_every_snapshot_since() -> None:
    earlier = _snapshot(["ol:ns|old"])
    cleanup = RunReport(kind="cleanup", definition_uuid=UUID)
    cleanup.ledger = Ledger(scopes=["ol:ns|kept"], job_systems=["js"])
    cleanup.finish("refused")
    # a snapshot that failed may have written its scopes before it stopped: they are owned
    failed = _snapshot(["ol:ns|written-then-failed"], status="failed")
    history = [_record(r) for r in (_snapshot(["ol:ns|new"]), failed, cleanup.finish(), earlier)]
    ledger = carried_ledger(history)
    assert ledger.scopes == ["ol:ns|kept", "ol:ns|new", "ol:ns|written-then-failed"]
    assert ledger.job_systems == ["job-system", "js"]


def test_store_statuses_map_the_report_statuses() -> None:
    assert store_status(_snapshot([], "partial")) == "success"
    dry = RunReport(kind="cleanup", definition_uuid=UUID, dry_run=True).finish()
    assert store_status(dry) == "dry_run"
    assert store_status(RunReport(kind="cleanup", definition_uuid=UUID).finish("skipped")) == (
        "refused"
    )


def test_the_lazy_package_exports_every_name_it_declares() -> None:
    for name in sync.__all__:
        assert getattr(sync, name) is not None
    assert sorted(sync.__all__) == sorted(sync._EXPORTS)


def test_watermarks_compare_as_dates() -> None:
    report = _snapshot([])
    report.watermark = datetime(2026, 1, 1, tzinfo=UTC)
    again = RunReport.from_record(report.to_record())
    assert again.watermark == report.watermark
    assert again.watermark is not None
    assert again.watermark - timedelta(seconds=1) < report.watermark


def test_a_removed_or_kept_objects_name_is_shown_redacted() -> None:
    """A flow or an entity written before a job's name was shown redacted still holds its
    ``?token=…`` in Blindata: the cleanup that removes it named it as Blindata has it."""
    cleanup = RunReport(kind="cleanup", definition_uuid=UUID)
    cleanup.note_removed("flow", "ol:airflow|fetch?token=Hunter2x9 a -> b @fetch?token=Hunter2x9")
    cleanup.note_kept("physical_entity", "OpenLineage/airflow/fetch?token=Hunter2x9", "in use")
    cleanup.fail("flow", "ol:airflow|f?access_token=Hunter2x9 a -> b", "refused")
    shown = cleanup.render() + cleanup.model_dump_json()
    assert "Hunter2x9" not in shown
    assert "fetch?token=***" in shown


def test_a_gap_whose_hint_points_above_comes_after_the_gaps_it_points_at() -> None:
    """``DANGLING_FLOW`` says "Fix the dataset gaps above": in the task log (and on the page),
    the dataset gaps are above it, whatever the alphabet says."""
    report = RunReport(kind="snapshot", definition_uuid="d")
    report.gap(GapCode.DANGLING_FLOW, "flow a -> b")
    report.gap(GapCode.UNMAPPED_NAMESPACE, "mysql://legacy:3306")
    report.gap(GapCode.TARGET_NOT_CATALOGUED, "pg.public.orders")

    text = report.render()

    assert text.index("UNMAPPED_NAMESPACE") < text.index("DANGLING_FLOW")
    assert text.index("TARGET_NOT_CATALOGUED") < text.index("DANGLING_FLOW")


def test_a_refused_cleanup_lists_what_it_would_have_removed_not_what_it_removed() -> None:
    """A cleanup refused over cleanup.maxRemovalShare lists what it would remove, so that the
    admin can decide to force it: headed "removed", the task log said it had deleted them."""
    refused = RunReport(kind="cleanup", definition_uuid=UUID)
    refused.note_removed("entity", "pg:public.gone")
    refused.reason = "share_exceeded"
    text = refused.finish("refused", "it would remove 1 of 2 owned objects").render()
    assert "\nwould remove " in text and "\nremoved " not in text
    done = RunReport(kind="cleanup", definition_uuid=UUID)
    done.note_removed("entity", "pg:public.gone")
    assert "\nremoved " in done.finish().render()


def test_a_light_syncs_text_report_names_the_jobs_it_published() -> None:
    """docs/operators.md: a light sync's "report lists the jobs it published"; the task log and
    ``airflow-blindata report`` showed how many only."""
    light = RunReport(kind="light", definition_uuid=UUID)
    light.jobs = [f"airflow/dag.task{index:02d}" for index in range(12)]
    text = light.finish().render()
    assert "Jobs published: airflow/dag.task00, " in text and "and 2 more" in text
    assert "dag.task11" not in text
