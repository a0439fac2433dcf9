"""Gaps and counters: what a run could not map, why, and what to do about it.

Gaps work like a warning level: they are collected, never raised. Each gap code is one of the
seeds' (``001`` "Why is my lineage missing?", ``000`` namespace resolution), with the hint of the
seed's table, a count and a few examples so a steward can find the offending dataset or job. The
codes after ``PRODUCER_PARTIAL_LINEAGE`` name what the seeds do not (an unreadable event, a field
description Blindata cannot hold, a quality code conflict, a dataset with no name, a metric
that is no finite number); they are
documented in docs/facet-support.md and docs/mapping-reference.md.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from airflow_blindata.redaction import redact_text

__all__ = ["GAP_HINTS", "MAX_EXAMPLES", "Gap", "GapCode", "Report", "ordered_gaps"]

MAX_EXAMPLES = 5
"""Examples kept per gap code (the smallest, sorted); the count is always complete."""


class GapCode(StrEnum):
    UNMAPPED_NAMESPACE = "UNMAPPED_NAMESPACE"
    IGNORED_NAMESPACE = "IGNORED_NAMESPACE"
    TARGET_NOT_CATALOGUED = "TARGET_NOT_CATALOGUED"
    FIELD_NOT_CATALOGUED = "FIELD_NOT_CATALOGUED"
    UNCORRELATED_IO = "UNCORRELATED_IO"
    QLP_PENDING = "QLP_PENDING"
    QLP_ANALYSIS_ERROR = "QLP_ANALYSIS_ERROR"
    QLP_PARTIALLY_ANALYZED = "QLP_PARTIALLY_ANALYZED"
    QLP_BUCKET_INCOMPLETE = "QLP_BUCKET_INCOMPLETE"
    QLP_AMBIGUOUS_TABLE = "QLP_AMBIGUOUS_TABLE"
    UNRESOLVED_ORCHESTRATION_TARGET = "UNRESOLVED_ORCHESTRATION_TARGET"
    DANGLING_FLOW = "DANGLING_FLOW"
    JOB_SYSTEM_NOT_FOUND = "JOB_SYSTEM_NOT_FOUND"
    JOB_SYSTEM_NOT_SHARED = "JOB_SYSTEM_NOT_SHARED"
    JOB_SYSTEM_AMBIGUOUS = "JOB_SYSTEM_AMBIGUOUS"
    JOB_SYSTEM_NOT_STAMPED = "JOB_SYSTEM_NOT_STAMPED"
    MALFORMED_FACET = "MALFORMED_FACET"
    PRODUCER_NO_LINEAGE = "PRODUCER_NO_LINEAGE"
    PRODUCER_PARTIAL_LINEAGE = "PRODUCER_PARTIAL_LINEAGE"
    UNREADABLE_EVENT = "UNREADABLE_EVENT"
    FIELD_DESCRIPTION_TOO_LONG = "FIELD_DESCRIPTION_TOO_LONG"
    QUALITY_CODE_CONFLICT = "QUALITY_CODE_CONFLICT"
    EMPTY_DATASET_NAME = "EMPTY_DATASET_NAME"
    EMPTY_FIELD_NAME = "EMPTY_FIELD_NAME"
    NON_FINITE_METRIC = "NON_FINITE_METRIC"
    INVALID_METRIC = "INVALID_METRIC"
    DATABASES_MERGED = "DATABASES_MERGED"
    STORES_MERGED = "STORES_MERGED"
    CASE_AMBIGUOUS = "CASE_AMBIGUOUS"


GAP_HINTS: dict[GapCode, str] = {
    GapCode.QLP_AMBIGUOUS_TABLE: "The statement names a table that several Systems of the "
    "definition hold (the example names them): every statement is analysed in the one query "
    "bucket that holds every dataset System, so Blindata may resolve the name on another "
    "System than the one the job ran on: check the flows the statement's analysis made.",
    GapCode.UNMAPPED_NAMESPACE: "Stamp the System with openLineageNamespace, add a "
    "namespaceMappings entry, or allow creation. See Namespace to System.",
    GapCode.IGNORED_NAMESPACE: "Expected for OpenSearch and Elasticsearch.",
    GapCode.TARGET_NOT_CATALOGUED: "Crawl the store, or allow entityCreation for it.",
    GapCode.FIELD_NOT_CATALOGUED: "Send the schema facet of the dataset, or crawl it.",
    GapCode.UNCORRELATED_IO: "Add the lineage facet.",
    GapCode.QLP_PENDING: "Wait one run.",
    GapCode.QLP_ANALYSIS_ERROR: "See SQL lineage.",
    GapCode.QLP_PARTIALLY_ANALYZED: "Part of the SQL names tables or columns Blindata does not "
    "hold: catalogue them (crawl, or let their producer send a schema facet), or, when they are "
    "catalogued, add their System to the query bucket (QLP_BUCKET_INCOMPLETE). The SQL is "
    "analysed again when the tables it names change in the catalog.",
    GapCode.QLP_BUCKET_INCOMPLETE: "Blindata did not add these Systems to the query bucket (its "
    "API names no bucket update): the SQL is analysed without their tables. Add them to the "
    "bucket in Blindata; the statements are analysed again when the tables they name change.",
    GapCode.UNRESOLVED_ORCHESTRATION_TARGET: "A task that has not run yet (a branch not taken, "
    "a skipped or new task) resolves once it runs; otherwise make sure that job's events reach "
    "a definition with processLayer on.",
    GapCode.DANGLING_FLOW: "Fix the dataset gaps above; where there is none, the entity was "
    "refused by Blindata this run (see the failures) and is sent again next run.",
    GapCode.JOB_SYSTEM_NOT_FOUND: "Fix the uuid or the name, or set creation to IF_MISSING.",
    GapCode.JOB_SYSTEM_NOT_SHARED: "Use a System for the jobs, or set shared on the rule.",
    GapCode.JOB_SYSTEM_AMBIGUOUS: "Several Systems carry the stamps of the job System this "
    "definition created under that name (openLineageOwner, openLineageJobSystem and "
    "openLineageJobSystemName; a copy stamped alike): the jobs stay in the one the last sync put "
    "them in, else go to the one named so, else the first by name (the example names it and the "
    "others). Remove openLineageJobSystemName from the ones that are not the job System.",
    GapCode.JOB_SYSTEM_NOT_STAMPED: "Blindata refused the stamp openLineageJobSystemName on "
    "this job System (a user who may not update Systems): the jobs still go to it, but a rename "
    "of it by a steward is not followed. Let the user update Systems for one snapshot, or add "
    "the property with that value by hand.",
    GapCode.MALFORMED_FACET: "Fix the producer.",
    GapCode.PRODUCER_NO_LINEAGE: "Producer-side limit.",
    GapCode.PRODUCER_PARTIAL_LINEAGE: "Producer-side limit.",
    GapCode.UNREADABLE_EVENT: "The event is not OpenLineage JSON; fix the producer. An event "
    "that came through the store (capture, the receiver, ingest) is kept in its quarantine; "
    "one planned from a file is in that file.",
    GapCode.FIELD_DESCRIPTION_TOO_LONG: "Blindata has no field documentation: shorten the "
    "description to 250 characters or fewer.",
    GapCode.QUALITY_CODE_CONFLICT: "The check code belongs to a check of another suite, which is "
    "never overwritten: its results are not published here. Give the job definitions that assert "
    "the same thing one suite (the same quality.suiteCode), or remove the other check (never an "
    "ol-ledger: one, which records the runs its suite published).",
    GapCode.EMPTY_DATASET_NAME: "The dataset has no name, or a name that gives no entity name "
    "(like 'db.schema.'): fix the producer. Nothing is catalogued for it; flows to it are "
    "dropped.",
    GapCode.EMPTY_FIELD_NAME: "A field of the dataset's schema facet has no name (the example "
    "names the dataset, and the field it is nested in): fix the producer. The field, and what "
    "is nested in it, is not catalogued; the other fields are.",
    GapCode.NON_FINITE_METRIC: "A metric was sent as NaN or Infinity (the example names the "
    "facet, its dataset and the metrics): no profiling record can hold it, so it makes none; the "
    "facet's other metrics make theirs. Fix the producer: leave out a metric it could not "
    "measure.",
    GapCode.INVALID_METRIC: "A metric was sent with a value it cannot have (the example names "
    "the facet, its dataset and the metrics): a count below 0 (dbt adapters send -1 for rows they "
    "did not count, Hive and Spark statistics -1 for unknown), a count that is no number, a "
    "lastUpdated that is no date-time. It makes no record; the facet's other metrics make "
    "theirs. Fix the producer: leave out a metric it could not measure.",
    GapCode.DATABASES_MERGED: "Two databases of one namespace land on one System with the same "
    "schema and entity (the example names both): their tables are merged, and a flow from one "
    "to the other is not published (it would be a flow of the entity into itself). Give each "
    "database its "
    "System: a database selector on a namespaceMappings or systemPolicies entry, {database} in "
    "the nameTemplate, or the property openLineageDatabase beside openLineageNamespace on each "
    "crawled System.",
    GapCode.STORES_MERGED: "Namespaces of different kinds of store land on one System by the "
    "name the nameTemplate gives them (the example names them and their technologies; by "
    "default an S3 and a GCS bucket of one name): their entities land on it together, and a "
    "System created for them has the first one's technology. Give one its own System: a "
    "systemPolicies entry for its scheme with another nameTemplate ('GCS {bucket}'), or a "
    "namespaceMappings entry; a System already created keeps the namespace by its "
    "openLineageNamespace stamp until that is removed. If one System is meant, give the "
    "systemPolicies entry a technology.",
    GapCode.CASE_AMBIGUOUS: "The dataset or column is named in a case no stored entity or field "
    "has, and its System holds two or more spelt so but for case (the example names them), on a "
    "platform that names them without case: none is chosen and none created. Remove the "
    "duplicate from the catalog, or make the producer spell the name as the one meant.",
}


class Gap(BaseModel):
    code: GapCode
    count: int = 0
    examples: list[str] = Field(default_factory=list)
    hint: str = ""


_GAP_POSITION = {code: position for position, code in enumerate(GapCode)}


def ordered_gaps(gaps: Iterable[Gap]) -> list[Gap]:
    """The gaps in the order a steward reads them: by code as declared (namespaces and datasets
    first), and a gap whose hint points to the gaps "above" (``DANGLING_FLOW``: "Fix the dataset
    gaps above") after every gap whose hint does not."""
    return sorted(gaps, key=lambda gap: ("above" in gap.hint, _GAP_POSITION[gap.code]))


class Report(BaseModel):
    """Counters, unknown facets by key, and gaps by code.

    The unknown facets are written under seed 000's key, ``unknownFacets`` ("Facets the job does
    not know are counted by key in unknownFacets"), in every dump: the task log's XCom, the sync
    history, a kept fold, ``plan --json``. A report written before under ``unknown_facets`` (a
    sync history record, a kept fold) is read all the same."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True)

    counters: dict[str, int] = Field(default_factory=dict)
    unknown_facets: dict[str, int] = Field(
        default_factory=dict,
        serialization_alias="unknownFacets",
        validation_alias=AliasChoices("unknownFacets", "unknown_facets"),
    )
    gaps: dict[GapCode, Gap] = Field(default_factory=dict)
    retired: list[str] = Field(default_factory=list)
    """Jobs left out because their DAG's latest run no longer has their task
    (``mapper.retirement``), with why: the first ``MAX_EXAMPLES``, counted in ``jobsRetired``.
    Left out of every dump while empty (``_without_empty_retired``)."""

    @model_serializer(mode="wrap")
    def _without_empty_retired(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Every dump without ``retired`` while no job is retired, as before retirement existed:
        by hand, since pydantic's ``Field(exclude_if=...)`` is 2.12's, and 2.11, which
        pyproject.toml accepts, ignores it (a plan's JSON then changed with the version)."""
        data: dict[str, Any] = handler(self)
        if not self.retired:
            data.pop("retired", None)
        return data

    def count(self, name: str, amount: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + amount

    def unknown_facet(self, key: str) -> None:
        self.unknown_facets[key] = self.unknown_facets.get(key, 0) + 1

    def gap(self, code: GapCode, example: str) -> None:
        """Record one occurrence of ``code``; ``example`` names the dataset or job concerned.

        The example quotes what a producer sent (a namespace may be ``postgres://user:pw@db``
        or a pre-signed URL): it is kept as ``redaction.redact_text`` shows it, since the
        report goes to the task log, the XCom, the sync history and the Blindata page."""
        gap = self.gaps.get(code)
        if gap is None:
            gap = self.gaps[code] = Gap(code=code, hint=GAP_HINTS[code])
        gap.count += 1
        _add_example(gap.examples, redact_text(example))

    def retire(self, job: str, why: str) -> None:
        """Record one job retired (left out of the plan) because of ``why``."""
        self.count("jobsRetired")
        _add_example(self.retired, redact_text(f"{job}: {why}"))

    def gap_count(self, code: GapCode) -> int:
        gap = self.gaps.get(code)
        return gap.count if gap else 0

    def merge(self, other: Report) -> None:
        for name, amount in other.counters.items():
            self.count(name, amount)
        for key, amount in other.unknown_facets.items():
            self.unknown_facets[key] = self.unknown_facets.get(key, 0) + amount
        for code, gap in other.gaps.items():
            mine = self.gaps.get(code)
            if mine is None:
                self.gaps[code] = gap.model_copy(deep=True)
                continue
            mine.count += gap.count
            for example in gap.examples:
                _add_example(mine.examples, example)
        for example in other.retired:
            _add_example(self.retired, example)


def _add_example(examples: list[str], example: str) -> None:
    """Keep the ``MAX_EXAMPLES`` smallest examples, sorted: the same ones whatever order the
    events, the jobs and the reports of kept folds came in (the first ones met would depend on
    it, and a snapshot would not report what reading every stored event at once reports)."""
    if example in examples:
        return
    if len(examples) >= MAX_EXAMPLES:
        if example > examples[-1]:
            return
        examples.pop()
    insort(examples, example)
