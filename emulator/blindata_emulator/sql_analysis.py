"""SQL lineage as Blindata's query parser derives it: pure functions over sqlglot.

`analyze_sql(sql, dialect, default_schema)` reads one writing statement (INSERT ... SELECT,
CREATE TABLE|VIEW ... AS SELECT, MERGE, UPDATE ... FROM) and returns the tables it reads, the
table it writes and the pairs (source table, source column) → target column. It knows no catalog:
matching the names to entities and fields is the caller's job.

What stays at table level, as in Blindata: `SELECT *` (noted), and output columns whose source
cannot be traced without a catalog (an unqualified column of a join: listed in
`unresolved_columns`). SQL that does not parse gives `error` and nothing else.

>>> r = analyze_sql("INSERT INTO dw.t (a) SELECT s.x FROM stg.s AS s", "postgres", None)
>>> [str(t) for t in r.tables_in], str(r.table_out), [str(p) for p in r.column_pairs]
(['stg.s'], 'dw.t', ['stg.s.x -> a'])
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError
from sqlglot.lineage import lineage

__all__ = [
    "DIALECTS",
    "AnalysisResult",
    "ColumnPair",
    "TableRef",
    "analyze_script",
    "analyze_sql",
    "sqlglot_dialect",
]

DIALECTS: Mapping[str, str | None] = {
    "ansi": None,
    "generic": None,
    "sql": None,
    "db2": None,
    "postgres": "postgres",
    "postgresql": "postgres",
    "redshift": "redshift",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "mysql": "mysql",
    "mariadb": "mysql",
    "tsql": "tsql",
    "mssql": "tsql",
    "sqlserver": "tsql",
    "spark": "spark",
    "sparksql": "spark",
    "databricks": "databricks",
    "hive": "hive",
    "trino": "trino",
    "presto": "presto",
    "athena": "athena",
    "awsathena": "athena",
    "oracle": "oracle",
    "duckdb": "duckdb",
    "sqlite": "sqlite",
    "teradata": "teradata",
    "clickhouse": "clickhouse",
}
"""OpenLineage / Blindata dialect names → sqlglot dialects (None: generic SQL)."""

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
_MAX_MESSAGE = 300


@dataclass(frozen=True)
class TableRef:
    """A table named in SQL: `schema` is the default schema when the SQL gave none."""

    name: str
    schema: str | None = None
    catalog: str | None = None

    def __str__(self) -> str:
        return ".".join(part for part in (self.catalog, self.schema, self.name) if part)


@dataclass(frozen=True)
class ColumnPair:
    """The target column `target_column` takes values of `source_table.source_column`."""

    source_table: TableRef
    source_column: str
    target_column: str

    def __str__(self) -> str:
        return f"{self.source_table}.{self.source_column} -> {self.target_column}"


@dataclass(frozen=True)
class AnalysisResult:
    """What one statement reads and writes; `error` set means nothing else is."""

    tables_in: tuple[TableRef, ...] = ()
    table_out: TableRef | None = None
    column_pairs: tuple[ColumnPair, ...] = ()
    error: str | None = None
    unresolved_columns: tuple[str, ...] = ()
    """Target columns whose sources could not be traced from the SQL alone."""
    notes: tuple[str, ...] = field(default=())
    """What stayed at table level and why."""


def sqlglot_dialect(name: str | None) -> str | None:
    """The sqlglot dialect for a statement's dialect name; unknown names read as generic SQL."""
    if not name:
        return None
    key = name.strip().lower()
    if key in DIALECTS:
        return DIALECTS[key]
    try:
        Dialect.get_or_raise(key)
    except ValueError:
        return None
    return key


def _error_text(err: SqlglotError) -> str:
    if isinstance(err, ParseError) and err.errors:
        first = err.errors[0]
        text = f"line {first.get('line')}, col {first.get('col')}: {first.get('description')}"
        if first.get("highlight"):
            text += f" near {first['highlight']!r}"
    else:
        text = str(err)
    return _ANSI_ESCAPE.sub("", text)[:_MAX_MESSAGE]


def _table_ref(table: exp.Table, default_schema: str | None) -> TableRef:
    return TableRef(
        name=table.name, schema=table.db or default_schema, catalog=table.catalog or None
    )


def _same_table(table: exp.Table, target: exp.Table, default_schema: str | None = None) -> bool:
    """Whether ``table`` is the statement's target: a name without a schema is in the default
    schema (``INSERT INTO dwh.orders … FROM orders`` on ``shop`` reads ``shop.orders``)."""
    schema = table.db or default_schema or ""
    target_schema = target.db or default_schema or ""
    return table.name.lower() == target.name.lower() and (
        not schema or not target_schema or schema.lower() == target_schema.lower()
    )


def _tables_read(query: exp.Expr, target: exp.Table, default_schema: str | None) -> list[TableRef]:
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    refs: list[TableRef] = []
    for table in query.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier) or _same_table(table, target, default_schema):
            continue
        if not table.db and table.name.lower() in ctes:
            continue
        ref = _table_ref(table, default_schema)
        if ref not in refs:
            refs.append(ref)
    return refs


@dataclass
class _Columns:
    pairs: list[ColumnPair] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _trace(
    query: exp.Query,
    targets: list[str],
    target_table: exp.Table,
    dialect: str | None,
    default_schema: str | None,
) -> _Columns:
    """Trace output column i of `query` into target column `targets[i]`."""
    found = _Columns()
    try:
        nodes = lineage(None, query, schema={}, dialect=dialect)
    except SqlglotError as err:
        found.notes.append(f"column lineage not traced: {_error_text(err)}")
        found.unresolved.extend(targets)
        return found
    assert isinstance(nodes, dict)
    for index, (output, node) in enumerate(nodes.items()):
        if output == "*" or node.name.endswith("*"):
            found.notes.append("SELECT * kept at table level")
            continue
        target = targets[index] if index < len(targets) else None
        if target is None:
            found.unresolved.append(output)
            continue
        for leaf in node.walk():
            if leaf.downstream:
                continue
            if isinstance(leaf.expression, exp.Table):
                column = _unquoted(leaf.name.split(".")[-1])
                if column == "*":
                    found.notes.append(f"{target}: SELECT * kept at table level")
                elif not _same_table(leaf.expression, target_table, default_schema):
                    pair = ColumnPair(_table_ref(leaf.expression, default_schema), column, target)
                    if pair not in found.pairs:
                        found.pairs.append(pair)
            elif isinstance(leaf.expression, exp.Placeholder):
                found.unresolved.append(target)
    return found


def _unquoted(name: str) -> str:
    """A column name as the lineage writes it (``"Amount"``, `` `Amount` ``, ``[Amount]``)
    without its quotes, as the catalog holds it."""
    for opening, closing in ('""', "``", "[]"):
        if len(name) >= 2 and name[0] == opening and name[-1] == closing:
            return name[1:-1]
    return name


def _output_names(query: exp.Query) -> list[str]:
    return [select.alias_or_name for select in query.selects]


def _with_ctes(statement: exp.Expr, query: exp.Query) -> exp.Query:
    """Move a `WITH` written before INSERT onto its SELECT, where lineage looks for it."""
    ctes = statement.args.get("with_")
    if ctes is None or query.args.get("with_") is not None:
        return query
    query = query.copy()
    query.set("with_", ctes.copy())
    return query


def _assignments_query(
    assignments: list[tuple[str, exp.Expr]], sources: list[exp.Expr], target: exp.Table
) -> tuple[exp.Select, list[str]]:
    """`SELECT expr AS __c0, ... FROM sources, target`: lineage then traces each assignment."""
    select = exp.select(*(exp.alias_(e.copy(), f"__c{i}") for i, (_, e) in enumerate(assignments)))
    select = select.from_(sources[0].copy()) if sources else select.from_(target.copy())
    for source in sources[1:]:
        select = select.join(source.copy())
    if sources:
        select = select.join(target.copy())
    return select, [name for name, _ in assignments]


def _merge_assignments(merge: exp.Merge) -> list[tuple[str, exp.Expr]]:
    assignments: list[tuple[str, exp.Expr]] = []
    whens = merge.args.get("whens")
    for when in whens.expressions if whens is not None else []:
        then = when.args.get("then")
        if isinstance(then, exp.Update):
            assignments.extend((eq.this.name, eq.expression) for eq in then.expressions)
        elif isinstance(then, exp.Insert) and isinstance(then.this, exp.Tuple):
            values = then.expression.expressions if isinstance(then.expression, exp.Tuple) else []
            assignments.extend(zip((c.name for c in then.this.expressions), values, strict=False))
    return assignments


def _analyze(
    statement: exp.Expr, dialect: str | None, default_schema: str | None
) -> AnalysisResult | None:
    """One parsed statement → its lineage; None for statements that move no data."""
    target: exp.Expr | None = None
    query: exp.Query | None = None
    targets: list[str] = []
    if isinstance(statement, exp.Insert | exp.Create):
        is_create = isinstance(statement, exp.Create)
        if is_create and str(statement.args.get("kind", "")).upper() not in ("TABLE", "VIEW"):
            return None
        target = statement.this
        if isinstance(target, exp.Schema):
            targets = [column.name for column in target.expressions]
            target = target.this
        if isinstance(statement.expression, exp.Query):
            query = _with_ctes(statement, statement.expression)
            targets = targets or _output_names(query)
        elif is_create:
            return None
    elif isinstance(statement, exp.Merge):
        target = statement.this
        source = statement.args.get("using")
        query, targets = _assignments_query(
            _merge_assignments(statement), [source] if source is not None else [], statement.this
        )
    elif isinstance(statement, exp.Update) and statement.args.get("from_") is not None:
        target = statement.this
        sources = [statement.args["from_"].this]
        assignments = [(eq.this.name, eq.expression) for eq in statement.expressions]
        query, targets = _assignments_query(assignments, sources, statement.this)
    else:
        return None
    if not isinstance(target, exp.Table):
        return AnalysisResult(error=f"cannot tell the table that {statement.key} writes")
    out = _table_ref(target, default_schema)
    if query is None:
        return AnalysisResult(table_out=out)
    columns = _trace(query, targets, target, dialect, default_schema)
    return AnalysisResult(
        tables_in=tuple(_tables_read(query, target, default_schema)),
        table_out=out,
        column_pairs=tuple(columns.pairs),
        unresolved_columns=tuple(dict.fromkeys(columns.unresolved)),
        notes=tuple(dict.fromkeys(columns.notes)),
    )


def analyze_script(
    sql: str, dialect: str | None = None, default_schema: str | None = None
) -> list[AnalysisResult]:
    """Every writing statement of a script, in order; one result with `error` if it does not
    parse or holds something that is not a statement."""
    read = sqlglot_dialect(dialect)
    if not sql or not sql.strip():
        return [AnalysisResult(error="the statement has no SQL text")]
    try:
        statements = [s for s in sqlglot.parse(sql, read=read) if s is not None]
    except SqlglotError as err:
        return [AnalysisResult(error=_error_text(err))]
    results: list[AnalysisResult] = []
    for statement in statements:
        if isinstance(statement, exp.Condition):
            return [AnalysisResult(error=f"not a SQL statement: {statement.sql()[:80]!r}")]
        try:
            result = _analyze(statement, read, default_schema)
        except SqlglotError as err:
            result = AnalysisResult(error=_error_text(err))
        if result is not None:
            results.append(result)
    return results


def analyze_sql(
    sql: str, dialect: str | None = None, default_schema: str | None = None
) -> AnalysisResult:
    """The lineage of one writing statement (statements that move no data are skipped)."""
    results = analyze_script(sql, dialect, default_schema)
    if not results:
        return AnalysisResult(notes=("the SQL writes no table",))
    errors = [result.error for result in results if result.error]
    if errors:
        return AnalysisResult(error=errors[0])
    if len(results) > 1:
        return AnalysisResult(
            error=f"the SQL has {len(results)} writing statements; use analyze_script"
        )
    return results[0]
