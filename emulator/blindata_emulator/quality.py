"""Data quality: suites, checks, bulk import, and results with their score and semaphore.

A check's `code` is unique in the tenant (409 on create). A result's identity is
`(qualityCheck, startedAt)`: posting the same pair again updates the result. Every result is
scored by its check's strategy, and the check's `lastRun`, `lastScore` and `lastSemaphore` follow
its latest result by `startedAt` (so a retried old result does not hide a newer run).

PERCENTAGE score: `100 * (totalElements - metric) / totalElements` (100 when there are no
elements); semaphore GREEN if score ≥ successThreshold, YELLOW if ≥ warningThreshold, else RED.
EXTERNAL takes `metric` as the score. The other strategies are not modelled: score and semaphore
stay null.
"""

from __future__ import annotations

from typing import Any

from . import cascade
from .errors import ApiError, RowError
from .fields import BOOL, DATE, NUM, PROPS, REF, REFS, STR, enum
from .model import Doc, Kind, ref_uuid
from .resource import (
    Call,
    Filter,
    Reply,
    Resource,
    by_parent,
    by_search,
    by_value,
    upload_report,
    upsert,
)
from .store import TenantView, child_of, refs_contain

__all__ = [
    "CHECK",
    "CHECK_FILTERS",
    "RESULT",
    "RESULT_FILTERS",
    "SUITE",
    "SUITE_FILTERS",
    "import_objects",
    "post_result",
    "score",
    "semaphore",
]

SCORE_STRATEGIES = (
    "PERCENTAGE",
    "MINIMUM",
    "MAXIMUM",
    "DISTANCE",
    "PERCENTAGE_DEVIATION",
    "EXTERNAL",
)
FULL_SCORE = 100.0
THRESHOLD_RANGE = (0.0, 100.0)

SUITE = Resource(
    kind=Kind.SUITE,
    label="quality suite",
    fields={"code": STR, "name": STR, "description": STR, "published": BOOL},
    required=("code", "name"),
    key=lambda doc: (doc["code"],),
    describe_key=lambda doc: f"with code {doc['code']!r}",
    cascade=cascade.cascade_suite,
)

SUITE_FILTERS: tuple[Filter, ...] = (
    by_search(
        "search",
        "json_extract(data, '$.code') || ' ' || coalesce(json_extract(data, '$.name'), '')",
    ),
)


def _resolve_check(db: TenantView, doc: Doc) -> None:
    suite = ref_uuid(doc, "qualitySuite")
    if suite and db.get(Kind.SUITE, suite) is None:
        raise RowError(f"qualitySuite: no quality suite with uuid {suite}")
    for list_name, kind in (("physicalEntities", Kind.ENTITY), ("physicalFields", Kind.FIELD)):
        for item in doc.get(list_name) or []:
            if db.get(kind, item["uuid"]) is None:
                raise RowError(f"{list_name}: no {kind.replace('_', ' ')} with uuid {item['uuid']}")
    low, high = THRESHOLD_RANGE
    for name in ("successThreshold", "warningThreshold"):
        value = doc.get(name)
        if value is not None and not low <= value <= high:
            raise RowError(f"{name} must be between {low:g} and {high:g}, got {value}")


CHECK = Resource(
    kind=Kind.CHECK,
    label="quality check",
    fields={
        "code": STR,
        "name": STR,
        "description": STR,
        "qualitySuite": REF,
        "physicalEntities": REFS,
        "physicalFields": REFS,
        "enabled": BOOL,
        "manual": BOOL,
        "scoreStrategy": enum(*SCORE_STRATEGIES),
        "successThreshold": NUM,
        "warningThreshold": NUM,
        "scoreExpectedValue": NUM,
        "additionalProperties": PROPS,
    },
    required=("code", "name", "qualitySuite"),
    key=lambda doc: (doc["code"],),
    describe_key=lambda doc: f"with code {doc['code']!r}",
    parent=lambda doc: ref_uuid(doc, "qualitySuite"),
    resolve=_resolve_check,
    cascade=cascade.cascade_check,
    defaults={
        "enabled": True,
        "manual": False,
        "scoreStrategy": "PERCENTAGE",
        "physicalEntities": [],
        "physicalFields": [],
    },
    read_only={"lastRun": None, "lastScore": None, "lastSemaphore": None},
)

CHECK_FILTERS: tuple[Filter, ...] = (
    by_value("code", "$.code"),
    by_parent("suiteUuid"),
    lambda params, tenant: (
        refs_contain("$.physicalEntities", value)
        if (value := params.get("physicalEntityUuid"))
        else None
    ),
)


def score(strategy: str | None, metric: float, total: float | None) -> float | None:
    """The score of a result under `strategy` (None when the strategy is not modelled)."""
    if strategy == "PERCENTAGE":
        if total is None:
            raise RowError("totalElements is required to score a PERCENTAGE check")
        if total < 0 or metric < 0 or metric > total:
            raise RowError(
                f"a PERCENTAGE check needs 0 <= metric <= totalElements, got {metric} of {total}"
            )
        return FULL_SCORE if total == 0 else FULL_SCORE * (total - metric) / total
    if strategy == "EXTERNAL":
        return float(metric)
    return None


def semaphore(value: float | None, success: float | None, warning: float | None) -> str | None:
    """GREEN at or above the success threshold, YELLOW at or above the warning one, else RED."""
    if value is None:
        return None
    success = FULL_SCORE if success is None else success
    warning = success if warning is None else warning
    if value >= success:
        return "GREEN"
    return "YELLOW" if value >= warning else "RED"


def _resolve_result(db: TenantView, doc: Doc) -> None:
    check = db.get(Kind.CHECK, ref_uuid(doc, "qualityCheck"))
    if check is None:
        raise RowError(f"qualityCheck: no quality check with uuid {ref_uuid(doc, 'qualityCheck')}")
    doc["score"] = score(check.get("scoreStrategy"), doc["metric"], doc.get("totalElements"))
    doc["semaphore"] = semaphore(
        doc["score"], check.get("successThreshold"), check.get("warningThreshold")
    )


RESULT = Resource(
    kind=Kind.RESULT,
    label="quality result",
    fields={
        "qualityCheck": REF,
        "metric": NUM,
        "totalElements": NUM,
        "startedAt": DATE,
        "finishedAt": DATE,
        "notes": STR,
    },
    required=("qualityCheck", "metric", "startedAt"),
    key=lambda doc: (ref_uuid(doc, "qualityCheck"), doc["startedAt"]),
    describe_key=lambda doc: f"started at {doc['startedAt']}",
    parent=lambda doc: ref_uuid(doc, "qualityCheck"),
    resolve=_resolve_result,
    read_only={"score": None, "semaphore": None},
)

RESULT_FILTERS: tuple[Filter, ...] = (by_parent("checkUuid"),)


def _follow_latest_result(db: TenantView, check_uuid: str) -> None:
    check = db.get(Kind.CHECK, check_uuid)
    latest = db.select(Kind.RESULT, [child_of(check_uuid)], sort=[("$.startedAt", False)], limit=1)
    if check is None or not latest:
        return
    check.update(
        lastRun=latest[0]["startedAt"],
        lastScore=latest[0]["score"],
        lastSemaphore=latest[0]["semaphore"],
    )
    db.save_data(Kind.CHECK, check)


def post_result(call: Call) -> Reply:
    """POST results: create, or update the result with the same (check, startedAt); 201."""
    try:
        doc, _ = upsert(call.db, RESULT, call.json_object(), call.now)
    except RowError as err:
        raise ApiError(400, str(err)) from None
    _follow_latest_result(call.db, ref_uuid(doc, "qualityCheck") or "")
    return Reply(201, doc)


def _import_check(db: TenantView, suite: Doc, row: Any, now: str) -> tuple[Doc, bool]:
    if not isinstance(row, dict):
        raise RowError(f"row must be a JSON object, got {type(row).__name__}")
    code = row.get("code")
    owner = db.find(Kind.CHECK, (code,)) if isinstance(code, str) else None
    if owner is not None and ref_uuid(owner, "qualitySuite") != suite["uuid"]:
        raise RowError(
            f"code {code!r} belongs to check {owner['uuid']} of another suite: not overwritten"
        )
    return upsert(db, CHECK, {**row, "qualitySuite": {"uuid": suite["uuid"]}}, now)


def import_objects(call: Call) -> Reply:
    """POST suites/*/import-objects[?cleanup=true]: upsert a suite and its checks by code.

    The answer is the contract's: `{message, rowCreated, rowUpdated, rowDiscarded,
    qualitySuiteUuid, qualityChecksUuids}`, without the per-row `errors` of other uploads.
    With cleanup, the suite's enabled checks whose code the import does not name are disabled.
    """
    body = call.json_object()
    rows = body.get("qualityChecks") or []
    if not isinstance(rows, list):
        raise ApiError(400, "qualityChecks must be a list")
    cleanup = call.params.flag("cleanup")
    try:
        suite, _ = upsert(call.db, SUITE, body.get("qualitySuite"), call.now)
    except RowError as err:
        raise ApiError(400, f"qualitySuite: {err}") from None
    created = updated = 0
    errors: list[dict[str, Any]] = []
    uuids: list[str] = []
    for index, row in enumerate(rows):
        try:
            check, was_created = _import_check(call.db, suite, row, call.now)
        except RowError as err:
            errors.append({"message": str(err), "index": index})
            continue
        uuids.append(check["uuid"])
        created += was_created
        updated += not was_created
    if cleanup:
        named = {row.get("code") for row in rows if isinstance(row, dict)}
        for check in call.db.select(Kind.CHECK, [child_of(suite["uuid"])]):
            if check["code"] not in named and check.get("enabled"):
                check.update(enabled=False, modificationDate=call.now)
                call.db.save_data(Kind.CHECK, check)
    report = upload_report(created, updated, errors)
    # The contract's answer names no per-row errors: a client finds a discarded check by its code.
    del report["errors"]
    report.update(qualitySuiteUuid=suite["uuid"], qualityChecksUuids=uuids)
    return Reply(200, report)
