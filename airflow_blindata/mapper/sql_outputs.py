"""The tables a run's SQL writes, where its producer named no output.

Airflow's MySQL provider, when it looks a task's tables up in information_schema, sends the
tables a statement reads and drops the one it writes (``INSERT INTO crm.summary … FROM
sales.orders``: inputs ``sales.orders``, no output). Nothing then carries the write: no table
flow (seed 001: "A table flow is always published"), and Blindata's analysis of the statement
finds the target only once a crawler has catalogued it. ``with_outputs_from_sql`` gives such a
run, of the runs a job's lineage comes from, the tables its SQL writes (``sql.tables_written``)
as outputs, named as the run's inputs are (the namespace, and the parts the statement leaves
out), with the columns the statement makes it with when it names them all, and reports the
producer's limit (``PRODUCER_PARTIAL_LINEAGE``). Pure; the passes then read the fold as if the
producer had named them.
"""

from __future__ import annotations

from dataclasses import replace

from airflow_blindata.events import (
    BaseFacet,
    SchemaDatasetFacet,
    SchemaField,
    SQLJobFacet,
    facet_of,
)
from airflow_blindata.mapper.catalog import PLATFORM_DIALECTS
from airflow_blindata.mapper.fold import DatasetFold, DatasetKey, Fold, JobFold, OutputFold, RunFold
from airflow_blindata.mapper.identity import namespace_identity
from airflow_blindata.mapper.report import GapCode, Report
from airflow_blindata.mapper.sql import NamePart, names_in_sql, sqlglot_dialect, tables_written
from airflow_blindata.redaction import redact_text

__all__ = ["with_outputs_from_sql"]


def with_outputs_from_sql(fold: Fold, report: Report) -> Fold:
    """``fold`` with the output its SQL writes where a completed run of a job's latest
    description read tables and named no output; the same fold when there is none."""
    known = {_case_free(dataset.key): dataset for dataset in fold.datasets}
    added: dict[DatasetKey, DatasetFold] = {}
    jobs: list[JobFold] = []
    for job in fold.jobs:
        described = {id(run) for run in job.latest_completed_group}  # what the job did
        runs: list[RunFold] = []
        for run in job.runs:
            output = _output(run, known) if id(run) in described else None
            if output is None:
                runs.append(run)
                continue
            runs.append(replace(run, outputs=[output]))
            if _case_free(output.key) not in known and output.key not in added:
                added[output.key] = DatasetFold(
                    key=output.key,
                    facets=dict(output.facets),
                    first_event_time=run.first_event_time,
                    last_event_time=run.last_event_time,
                )
            report.gap(
                GapCode.PRODUCER_PARTIAL_LINEAGE,
                f"{job.key.namespace}/{job.key.name}: no output sent for the table its SQL "
                f"writes: {redact_text(output.key.name)} (read from the SQL)",
            )
            report.count("outputsReadFromSql")
        if any(new is not old for new, old in zip(runs, job.runs, strict=True)):
            keys = [output.key for run in runs for output in run.outputs]
            written_keys = list(dict.fromkeys([*job.written, *keys]))
            job = replace(job, runs=runs, written=written_keys)
        jobs.append(job)
    if not added and all(new is old for new, old in zip(jobs, fold.jobs, strict=True)):
        return fold
    datasets = sorted([*fold.datasets, *added.values()], key=lambda d: d.key)
    return Fold(jobs=jobs, datasets=datasets)


def _case_free(key: DatasetKey) -> tuple[str, str]:
    """A dataset's key without case: a table the statement spells otherwise is that dataset (on
    its store and database: ``namespace_identity``)."""
    return namespace_identity(key.namespace), key.name.casefold()


def _output(run: RunFold, known: dict[tuple[str, str], DatasetFold]) -> OutputFold | None:
    """The table the run's SQL writes, as its output, when it read tables and named no output."""
    if run.outputs or not run.inputs or run.snapshot_outputs:
        return None
    sql = facet_of(run.job_facets, SQLJobFacet)
    if sql is None or not sql.query.strip():
        return None
    namespaces = {namespace_identity(item.key.namespace) for item in run.inputs}
    if len(namespaces) != 1:
        # read from several stores (or databases of one, named in the namespace): where the
        # statement writes is not known
        return None
    (namespace,) = namespaces
    dialect = sql.dialect or PLATFORM_DIALECTS.get(namespace.split("://", 1)[0])
    if dialect is None:
        return None  # not a SQL platform (an object store, a file): not a table of its own
    targets = tables_written(sql.query, dialect)
    if len(targets) != 1:
        return None  # several: which input feeds which is the statements', not the run's to say
    (target,) = targets
    bare = names_in_sql(sql.query, dialect).bare
    key = _dataset(target.parts, [item.key for item in run.inputs], bare, dialect, known)
    if key is None:
        return None
    facets: dict[str, BaseFacet] = {}
    if target.columns and _case_free(key) not in known:
        # a table no event describes: its columns as the statement makes them, so that the
        # analysis's column flows have fields to land on
        fields = [SchemaField(name=_cased(name, False, dialect)) for name in target.columns]
        facets[SchemaDatasetFacet.KEY] = SchemaDatasetFacet(fields=fields)
    return OutputFold(key=key, facets=facets, output_facets={})


def _dataset(
    target: tuple[NamePart, ...],
    inputs: list[DatasetKey],
    bare: frozenset[str],
    dialect: str,
    known: dict[tuple[str, str], DatasetFold],
) -> DatasetKey | None:
    """The dataset ``target`` is on the inputs' namespace, its name with as many parts as
    theirs: the parts the statement leaves out are those of the inputs it names bare (the
    connection's default), else those all its inputs share; ``None`` where that is not one."""
    depths = {len(key.name.split(".")) for key in inputs}
    if len(depths) != 1:
        return None
    (depth,) = depths
    missing = depth - len(target)
    if missing < 0:
        return None
    parts = [_cased(text, quoted, dialect) for text, quoted in target]
    if missing:
        named_bare = [key for key in inputs if key.name.split(".")[-1].casefold() in bare]
        prefixes = {tuple(key.name.split(".")[:missing]) for key in named_bare or inputs}
        if len(prefixes) != 1:
            return None
        parts = [*prefixes.pop(), *parts]
    key = DatasetKey(inputs[0].namespace, ".".join(parts))
    found = known.get(_case_free(key))
    return found.key if found is not None else key


_FOLDED_LOWER = frozenset(
    {"postgres", "redshift", "trino", "presto", "hive", "spark", "databricks", "athena"}
)
_FOLDED_UPPER = frozenset({"snowflake", "oracle", "db2"})
"""The dialects whose catalogs hold an unquoted name folded (PostgreSQL's ``mart.daily``,
Snowflake's ``MART.DAILY``); the others keep it as written (MySQL, SQL Server, BigQuery)."""
_QUOTED_FOLDED = frozenset(_FOLDED_LOWER - {"postgres"})
"""The dialects whose catalogs hold a quoted name folded too (Trino's, Hive's metastore, Unity
Catalog, Glue, Redshift's by default: ``identity.QUOTED_CASE_FOLDS``)."""


def _cased(text: str, quoted: bool, dialect: str) -> str:
    """A part of a name as the platform's catalog holds it: unquoted, folded where it folds."""
    read = (sqlglot_dialect(dialect) or dialect).lower()
    if quoted and read not in _QUOTED_FOLDED:
        return text
    if read in _FOLDED_LOWER:
        return text.lower()
    if read in _FOLDED_UPPER:
        return text.upper()
    return text
