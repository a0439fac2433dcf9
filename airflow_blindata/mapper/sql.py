"""The identity of a SQL statement: a hash that ignores what does not change its meaning.

The routine of a SQL job is analysed again only when its SQL changed (seed 000), so the hash must
not move with whitespace, comments or keyword case, and must move with any real change. The hash
is taken over sqlglot's tokens, not over a parse: comments and whitespace are not tokens, keywords
and function names are compared upper-case, and every identifier, literal and operator as
written. Tokenizing costs a third of parsing and re-rendering (``benchmarks/sql.py``), and a
statement sqlglot cannot parse still hashes by its tokens. Text that does not even tokenize (an
unterminated string) falls back to the raw text with whitespace collapsed.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Any

import sqlglot
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, Tokenizer, TokenType

from airflow_blindata import __version__

__all__ = [
    "OPENLINEAGE_DIALECTS",
    "SqlHashes",
    "SqlNames",
    "as_written_into",
    "names_in_sql",
    "normalize_sql",
    "sql_hash",
    "sqlglot_dialect",
    "tables_dropped",
    "tables_written",
    "with_final_names",
    "with_placeholders",
]

OPENLINEAGE_DIALECTS: dict[str, str | None] = {
    "postgres": "postgres",
    "postgresql": "postgres",
    "redshift": "redshift",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "mysql": "mysql",
    "mariadb": "mysql",
    "mssql": "tsql",
    "sqlserver": "tsql",
    "tsql": "tsql",
    "oracle": "oracle",
    "spark": "spark",
    "sparksql": "spark",
    "databricks": "databricks",
    "hive": "hive",
    "trino": "trino",
    "presto": "presto",
    "athena": "athena",
    "awsathena": "athena",
    "duckdb": "duckdb",
    "sqlite": "sqlite",
    "teradata": "teradata",
    "clickhouse": "clickhouse",
    "db2": None,
    "ansi": None,
    "generic": None,
    "sql": None,
}
"""OpenLineage ``sql`` facet dialect names → sqlglot dialects (``None``: sqlglot's own).

The emulator, a distribution of its own, keeps Blindata's side of this table; a test holds the
two to the same answer for every name here."""


def sqlglot_dialect(dialect: str | None) -> str | None:
    if not dialect:
        return None
    return OPENLINEAGE_DIALECTS.get(dialect.strip().lower())


_VERBATIM: dict[TokenType, str] = {
    kind: kind.name
    for kind in (
        TokenType.VAR,
        TokenType.IDENTIFIER,
        TokenType.NUMBER,
        TokenType.STRING,
        TokenType.BIT_STRING,
        TokenType.BYTE_STRING,
        TokenType.HEX_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.NATIONAL_STRING,
        TokenType.NATIONAL_RAW_STRING,
        TokenType.RAW_STRING,
        TokenType.UNICODE_STRING,
    )
}
"""Tokens whose text is the user's (names, literals): compared as written, tagged with the
kind's name (looked up here: an enum member's ``name`` is a property, and a statement has a
token per word)."""


_L_PAREN = TokenType.L_PAREN
_R_PAREN = TokenType.R_PAREN

_tokenizers = threading.local()


def _tokenizer(dialect: str | None) -> Tokenizer:
    """The tokenizer of a sqlglot dialect, made once per thread: building one (``Dialect``, then
    its tokenizer's tables) costs a sixth of tokenizing a short statement, and a plan hashes
    thousands. Per thread, because a tokenizer holds the statement it is reading."""
    made: dict[str | None, Tokenizer] = _tokenizers.__dict__.setdefault("by_dialect", {})
    tokenizer = made.get(dialect)
    if tokenizer is None:
        tokenizer = made[dialect] = Dialect.get_or_raise(dialect).tokenizer()
    return tokenizer


def normalize_sql(sql: str, dialect: str | None = None) -> str:
    """A canonical form of the statement's tokens: no comments, no layout, keywords and function
    names upper-case, names and literals as written, tagged with their kind and length (so that
    a string cannot pass for the tokens it spells); trailing semicolons dropped."""
    try:
        tokens = _tokenizer(sqlglot_dialect(dialect)).tokenize(sql)
    except (SqlglotError, ValueError, RecursionError):
        return " ".join(sql.split())
    while tokens and tokens[-1].token_type is TokenType.SEMICOLON:
        tokens.pop()
    if not tokens:
        return ""
    kinds = [token.token_type for token in tokens]
    parts: list[str] = []
    append = parts.append
    # each token with the kind of the next one (a name before "(" is a function): a statement
    # has a token per word, and this loop was a third of the cost of hashing it
    for token, kind, following in zip(tokens, kinds, [*kinds[1:], None], strict=True):
        text = token.text
        tag = _VERBATIM.get(kind)
        if tag is None:
            append(text.upper())
            continue
        if following is _L_PAREN and tag == "VAR":
            text = text.upper()  # a function
        append(f"{tag}:{len(text)}:{text}")
    return " ".join(parts)


@dataclass(frozen=True, slots=True)
class SqlNames:
    """The names a statement writes, case folded: ``bare`` those written alone (a table the
    connection's default schema resolves, a column, an alias...), ``qualified`` the (schema,
    name) of those written after a schema (``sales.orders``, ``dwh.sales.orders``)."""

    bare: frozenset[str]
    qualified: frozenset[tuple[str, str]]


_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER})
_NOT_NAMES = frozenset(_VERBATIM) - _NAME_TOKENS  # literals and numbers: never a name


def names_in_sql(sql: str, dialect: str | None = None) -> SqlNames:
    """The names of ``sql`` as its dialect's tokenizer reads them: runs of words joined by dots,
    quotes removed (nothing when the text does not tokenize). Which of them are tables is not
    known here: a caller compares them with the tables it knows the statement uses. Memoised: a
    snapshot reads each routine's SQL for its default schema, its bucket and its analysis
    context."""
    return _names_in_sql(sql, dialect)


@lru_cache(maxsize=1024)
def _names_in_sql(sql: str, dialect: str | None) -> SqlNames:
    try:
        tokens = _tokenizer(sqlglot_dialect(dialect)).tokenize(sql)
    except (SqlglotError, ValueError, RecursionError):
        return SqlNames(frozenset(), frozenset())
    # BigQuery quotes a whole path in one pair of backticks: `proj.sales.orders` is three names
    whole_paths = sqlglot_dialect(dialect) == "bigquery"
    runs: list[list[str]] = []  # each a name written alone, or names joined by dots
    after_name = joins = False  # the last token was a name; a dot after one
    for token in tokens:
        kind = token.token_type
        if kind is TokenType.DOT:
            joins, after_name = after_name, False
            continue
        after_name = kind not in _NOT_NAMES and (
            kind in _NAME_TOKENS or token.text.replace("_", "a").isalnum()
        )
        parts = [token.text.casefold()]
        if whole_paths and kind is TokenType.IDENTIFIER and "." in token.text:
            parts = token.text.casefold().split(".")
        if after_name and joins:
            runs[-1].extend(parts)
        elif after_name:
            runs.append(parts)
        joins = False
    return SqlNames(
        bare=frozenset(run[0] for run in runs if len(run) == 1),
        qualified=frozenset((run[-2], run[-1]) for run in runs if len(run) > 1),
    )


def tables_dropped(sql: str, dialect: str | None = None) -> frozenset[tuple[str, ...]]:
    """The tables (and views) ``sql`` leaves dropped: a ``DROP TABLE`` of one no later
    statement of the text names again (``DROP TABLE IF EXISTS t; CREATE TABLE t AS …`` leaves
    ``t``), each as the parts of its name, case-folded (``("probe", "c")``). For producers that
    name what a ``DROP`` drops as an output and send no ``lifecycleStateChange`` (Airflow's SQL
    operators). A text that does not parse drops nothing."""
    if "drop" not in sql.casefold():
        return frozenset()
    return _tables_dropped(sql, dialect)


@lru_cache(maxsize=1024)
def _tables_dropped(sql: str, dialect: str | None) -> frozenset[tuple[str, ...]]:
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel

    try:  # read whole or not at all: ignoring errors, sqlglot drops the rest of the text
        # (T-SQL's ``DROP TABLE s.t`` then ``SELECT * INTO s.t …`` without a ``;``)
        statements = sqlglot.parse(sql, read=sqlglot_dialect(dialect), error_level=ErrorLevel.RAISE)
    except (SqlglotError, ValueError, RecursionError):
        return frozenset()
    dropped: dict[str, set[tuple[str, ...]]] = {}  # by the table's own name (its last part)
    named: dict[str, set[tuple[str, ...]]] = {}
    for statement in statements:
        if statement is None:
            continue
        if isinstance(statement, exp.Command | exp.Execute | exp.Transaction):
            # a statement sqlglot does not read, a procedure run, a transaction (rolled back?):
            # any may create it again, or undo the DROP
            return frozenset()
        tables = {
            tuple(part.casefold() for part in (t.catalog, t.db, t.name) if part)
            for t in statement.find_all(exp.Table)
        }
        tables.discard(())
        if dropped and (not tables or statement.find(exp.Anonymous) is not None):
            return frozenset()  # ``SELECT s.build_t()``: a function may create it again
        for table in tables:
            named.setdefault(table[-1], set()).add(table)
        kind = str(statement.args.get("kind") or "").upper()
        if isinstance(statement, exp.Drop) and kind in ("TABLE", "VIEW"):
            for table in tables:
                dropped.setdefault(table[-1], set()).add(table)
            continue
        for table in tables:  # named again, however qualified (``orders``: ``sales.orders``?)
            same = dropped.get(table[-1])
            if same:
                same -= {d for d in same if _same_table(d, table)}
    # ``orders`` beside ``sales.orders`` (a staging table loaded into it, then dropped) may be
    # either: which one the default schema makes it is not known here, so neither is dropped
    return frozenset(
        name
        for last, names in dropped.items()
        for name in names
        if not any(len(t) > len(name) and _same_table(name, t) for t in named.get(last, ()))
    )


NamePart = tuple[str, bool]
"""A part of a table's name as a statement writes it, and whether it is quoted."""


@dataclass(frozen=True, slots=True)
class WrittenTable:
    """A table a statement writes (``tables_written``): the parts of its name, and its columns
    when the statement names them all (``CREATE TABLE … AS SELECT a, b AS c``, ``INSERT INTO t
    (a, b) …``), else ``None`` (``SELECT *``, an expression with no name)."""

    parts: tuple[NamePart, ...]
    columns: tuple[str, ...] | None = None


def tables_written(sql: str, dialect: str | None = None) -> tuple[WrittenTable, ...]:
    """The tables whose rows ``sql`` writes from other tables it reads, in the order it writes
    them: the target of an ``INSERT``, ``MERGE``, ``UPDATE``, ``SELECT … INTO`` and of a
    ``CREATE TABLE | VIEW … AS``; not a temporary table (made so in the text, SQL Server's
    ``#t``, PostgreSQL's ``pg_temp``), nor one the text makes and leaves dropped
    (``tables_dropped``). For a run whose producer named no output (Airflow's MySQL provider
    drops it when it looks the tables up in information_schema). Each as the parts of its name
    (catalog, schema, table: those written). Nothing for a text that does not parse, nor for one
    that changes where its names resolve or renames tables (``SET search_path``, ``USE``,
    ``ALTER … RENAME``, a statement sqlglot does not read): which table is meant is not known."""
    if not sql.strip():
        return ()
    try:
        return _tables_written(sql, dialect)
    except Exception:
        return ()


_WRITES = ("Insert", "Merge", "Update")


@lru_cache(maxsize=256)
def _tables_written(sql: str, dialect: str | None) -> tuple[WrittenTable, ...]:
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel

    try:
        statements = sqlglot.parse(sql, read=sqlglot_dialect(dialect), error_level=ErrorLevel.RAISE)
    except (SqlglotError, ValueError, RecursionError):
        if dialect is None and _REPLACE_STATEMENT.search(sql):  # MySQL's, with no dialect said
            return _tables_written(sql, "mysql")
        return ()
    statements = [_replace_as_insert(statement, dialect) for statement in statements]
    if any(isinstance(s, exp.Set | exp.Use | exp.Command | exp.Alter) for s in statements):
        return ()
    dropped = tables_dropped(sql, dialect)
    temporary: set[tuple[str, ...]] = set()
    written: list[WrittenTable] = []
    for statement in statements:
        target: Any = None
        if type(statement).__name__ in _WRITES:
            target = statement.this
        elif isinstance(statement, exp.Create):
            kind = str(statement.args.get("kind") or "").upper()
            made = statement.this.this if isinstance(statement.this, exp.Schema) else statement.this
            if statement.find(exp.TemporaryProperty) is not None:
                if isinstance(made, exp.Table):
                    temporary.add(_folded(made))
                continue
            if kind in ("TABLE", "VIEW") and statement.expression is not None:
                target = statement.this
        elif isinstance(statement, exp.Select) and isinstance(statement.args.get("into"), exp.Into):
            into = statement.args["into"]
            if not into.args.get("temporary"):
                target = into.this
        columns = _columns_written(statement, target)
        if isinstance(target, exp.Schema):  # ``INSERT INTO t (a, b)``
            target = target.this
        if not isinstance(target, exp.Table) or not isinstance(target.this, exp.Identifier):
            continue  # a table variable (T-SQL's ``@t``), a function: no table of the catalog
        if target.this.args.get("temporary") or target.this.args.get("global_"):
            continue  # SQL Server's ``#t`` and ``##t``
        parts = tuple(
            (part.name, bool(part.args.get("quoted")))
            for part in target.parts
            if isinstance(part, exp.Identifier) and part.name
        )
        folded = _folded(target)
        if not parts or folded in dropped or any(parts == w.parts for w in written):
            continue
        if folded[-1] in {made[-1] for made in temporary} or "pg_temp" in folded[:-1]:
            continue  # a temporary table the text made before, PostgreSQL's temporary schema
        if all(_folded(read) == folded for read in statement.find_all(exp.Table)):
            continue  # ``INSERT … VALUES``, ``UPDATE t SET … (SELECT … FROM t)``: nothing else
        written.append(WrittenTable(parts, columns))
    return tuple(written)


_REPLACE_STATEMENT = re.compile(r"(?im)^\s*replace\s")
"""A statement that starts with ``REPLACE``, which sqlglot's default dialect does not parse."""


def _replace_as_insert(statement: Any, dialect: str | None) -> Any:
    """MySQL's ``REPLACE INTO t …`` (an ``INSERT`` that deletes the rows it collides with), which
    sqlglot reads as a statement it does not know, read as the ``INSERT`` of the same shape: a
    MySQL task writing its table so had no output (the probe of stop 55). Any other statement as
    it is."""
    from sqlglot import exp

    if not isinstance(statement, exp.Command) or str(statement.this).upper() != "REPLACE":
        return statement
    rest = statement.expression.name.lstrip() if statement.expression is not None else ""
    if rest[:4].upper() == "INTO" and rest[4:5].isspace():
        rest = rest[5:]  # ``INTO`` is optional
    try:
        return sqlglot.parse_one(f"INSERT INTO {rest}", read=sqlglot_dialect(dialect))
    except (SqlglotError, ValueError, RecursionError):
        return statement


def _columns_written(statement: Any, target: Any) -> tuple[str, ...] | None:
    """The columns a write names: its column list, else the names of a ``CREATE … AS`` query's
    selections when each is a column or has an alias; ``None`` when they are not all named."""
    from sqlglot import exp

    if isinstance(target, exp.Schema):
        names = [column.name for column in target.expressions if isinstance(column, exp.Identifier)]
        return tuple(names) if names and len(names) == len(target.expressions) else None
    query = statement.expression if isinstance(statement, exp.Create) else None
    if not isinstance(query, exp.Query):
        return None
    selections = query.selects
    if not selections or not all(isinstance(s, exp.Column | exp.Alias) for s in selections):
        return None
    names = [selection.alias_or_name for selection in selections]
    return tuple(names) if all(names) and "*" not in names else None


def _folded(table: Any) -> tuple[str, ...]:
    """A table's name, its parts case-folded (``("sales", "orders")``)."""
    return tuple(part.name.casefold() for part in table.parts if part.name)


def as_written_into(sql: str, dialect: str | None, target: tuple[str, ...]) -> str | None:
    """``sql`` as the statement that writes its result into ``target`` (the parts of its name),
    when ``sql`` is one query that writes nothing (``SELECT``, ``WITH … SELECT``, a ``UNION``):
    dbt's ``sql`` facet is a model's compiled ``SELECT``, which dbt runs as the ``CREATE TABLE …
    AS`` of the model's table. A lone ``SELECT`` has no target, so its analysis would derive no
    column flow. ``CREATE VIEW`` in T-SQL, which has no ``CREATE TABLE … AS``. ``None`` for any
    other text, or one that does not parse."""
    if not target or not _is_lone_query(sql, dialect):
        return None
    from sqlglot import exp

    read = sqlglot_dialect(dialect)
    folds = Dialect.get_or_raise(read).normalize_identifier
    parts = []
    for part in target:  # quoted where the dialect would fold its case (``Orders`` in PostgreSQL)
        identifier = exp.to_identifier(part)
        if folds(identifier.copy()).name != part:
            identifier.set("quoted", True)
        parts.append(identifier.sql(dialect=read))
    name = ".".join(parts)
    kind = "VIEW" if read == "tsql" else "TABLE"
    return f"CREATE {kind} {name} AS\n{sql.strip().rstrip(';').rstrip()}"


def with_placeholders(sql: str, dialect: str | None = None) -> str:
    """``sql`` with the parameters of Python's database drivers (DB-API's ``%s`` and
    ``%(name)s``: psycopg2, PyMySQL) written as a prepared statement's ``?``, which SQL parsers
    read: dbt seeds a table with ``insert into … values (%s,%s),…``, whose analysis failed on
    every seed (``QLP_ANALYSIS_ERROR``). A ``%`` in a literal or a modulo (``a % s``) stays."""
    if "%" not in sql:
        return sql
    try:
        tokens = _tokenizer(sqlglot_dialect(dialect)).tokenize(sql)
    except (SqlglotError, ValueError, RecursionError):
        return sql
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.token_type == TokenType.MOD:
            # ``%s``, or ``%(name)s``: each token right after the one before
            run = tokens[i : i + 2]
            if not _is_s(run):
                run = tokens[i : i + 5]
                if len(run) < 5 or run[1].token_type != _L_PAREN or run[3].token_type != _R_PAREN:
                    run = []
            if run and _is_s(run) and _adjacent(run):
                spans.append((token.start, run[-1].end))
                i += len(run)
                continue
        i += 1
    if not spans:
        return sql
    parts: list[str] = []
    at = 0
    for start, end in spans:
        parts += [sql[at:start], "?"]
        at = end + 1
    parts.append(sql[at:])
    return "".join(parts)


def _is_s(run: list[Token]) -> bool:
    return len(run) > 1 and run[-1].text == "s" and run[-1].token_type == TokenType.VAR


def _adjacent(run: list[Token]) -> bool:
    return all(b.start == a.end + 1 for a, b in pairwise(run))


DBT_TEMPORARY_SUFFIX = "__dbt_tmp"
"""The suffix of the relation dbt builds a model in before it renames it to the model's name
(dbt's ``make_temp_relation``; PostgreSQL, Redshift and others: ``create view x__dbt_tmp as
…``, then ``alter table x__dbt_tmp rename to x``); dbt-postgres adds the time of the run to an
incremental model's (``x__dbt_tmp101512345678``)."""
_DBT_TEMPORARY = re.compile(rf"{DBT_TEMPORARY_SUFFIX}[0-9]{{0,20}}\Z")


def with_final_names(sql: str, dialect: str | None = None) -> str:
    """``sql`` with the relation it makes under dbt's temporary name (``x__dbt_tmp``) named as
    the model it becomes (``x``): dbt-ol sends each statement of a model as a job of its own, and
    the analysis of the one that fills ``x__dbt_tmp`` derived no column flow, as no catalog holds
    a relation renamed away the moment it is made. Any other text is returned as it is."""
    if DBT_TEMPORARY_SUFFIX not in sql:
        return sql
    made = _made_relation(sql, dialect)
    temporary = _DBT_TEMPORARY.search(made) if made is not None else None
    if made is None or temporary is None or temporary.start() == 0:
        return sql
    final = made[: temporary.start()]
    # the name is the replacement as written, never a template (a ``\`` in it raised, a probe)
    return re.sub(rf"(?<![\w$]){re.escape(made)}(?![\w$])", lambda _: final, sql)


def _made_relation(sql: str, dialect: str | None) -> str | None:
    """The name (its last part) of the table or view ``sql``, one ``CREATE … AS``, makes."""
    from sqlglot import exp

    statement = _lone_statement(sql, dialect)
    if not isinstance(statement, exp.Create) or statement.expression is None:
        return None
    table = statement.find(exp.Table)
    return table.name if table is not None else None


@lru_cache(maxsize=1024)
def _lone_statement(sql: str, dialect: str | None) -> Any:
    """The one statement ``sql`` holds, parsed; ``None`` for several, none, a text that does
    not parse, or one nested too deep to parse again (``_too_deep``)."""
    from sqlglot.errors import ErrorLevel

    if _too_deep(sql):
        return None
    try:
        statements = sqlglot.parse(sql, read=sqlglot_dialect(dialect), error_level=ErrorLevel.RAISE)
    except (SqlglotError, ValueError, RecursionError):
        return None
    found = _statements(statements)
    return found[0] if len(found) == 1 else None


def _statements(parsed: list[Any]) -> list[Any]:
    """The statements sqlglot parsed, without the empty ones: ``None``, and the ``;`` that ends
    a text with a comment after it (``select …;\n-- end of model``)."""
    from sqlglot import exp

    return [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]


_MAX_DEPTH = 64
"""Parentheses nested deeper than this: a text not parsed a second time for its shape (some of
sqlglot's dialects parse deep nesting in quadratic time: 1,000 levels took 17 s, a probe)."""


def _too_deep(sql: str) -> bool:
    depth = 0
    for char in sql:
        if char == "(":
            depth += 1
            if depth > _MAX_DEPTH:
                return True
        elif char == ")" and depth:
            depth -= 1
    return False


def _is_lone_query(sql: str, dialect: str | None) -> bool:
    from sqlglot import exp

    statement = _lone_statement(sql, dialect)
    if not isinstance(statement, exp.Query):
        return False
    # T-SQL's ``SELECT … INTO t`` writes; so does a data-modifying CTE (``WITH d AS (DELETE …)``)
    return statement.find(exp.Into, exp.Insert, exp.Update, exp.Delete, exp.Merge) is None


def _same_table(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two names may be one table: the shorter ends the longer."""
    shorter = min(len(a), len(b))
    return a[-shorter:] == b[-shorter:]


def sql_hash(sql: str, dialect: str | None = None) -> str:
    """The ``openLineageSqlHash`` of a statement."""
    return "sha256:" + hashlib.sha256(normalize_sql(sql, dialect).encode()).hexdigest()


_SCHEME = "tokens"
"""How ``sql_hash`` reads a text. Memos kept under another scheme (parsed statements, in
earlier builds) are not used, so that a store never mixes two kinds of hash."""


def _scheme() -> str:
    """What a memo's digests are made under: ``_SCHEME``, and the versions of sqlglot (its
    tokenizer's keywords move between releases, and ``sqlglot>=30.23`` lets an upgrade bring
    another) and of airflow-blindata (``OPENLINEAGE_DIALECTS``, ``normalize_sql``), as kept folds
    are (``mapper.fold.kept.fold_settings``). After an upgrade each text is hashed once more: a memo
    of the old code would answer with its hash for as long as the text stays in use, then the
    new one once it left the memo (a snapshot keeps only the texts it used)."""
    return f"{_SCHEME}|sqlglot {sqlglot.__version__}|airflow-blindata {__version__}"


def _digest(scheme: str, sql: str, dialect: str | None) -> str:
    text = f"{scheme}\n{dialect or ''}\n{sql}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(text).hexdigest()


class SqlHashes:
    """``sql_hash`` memoised by a digest of the raw text and dialect.

    Parsing with sqlglot is most of the cost of mapping SQL jobs, and the same texts come back on
    every run and every snapshot. ``known`` is the memo of an earlier snapshot (the store keeps
    it); ``used`` is what this mapping needed, the memo to keep for the next one.
    """

    def __init__(self, known: Mapping[str, str] | None = None) -> None:
        self._known = known or {}
        self._scheme = _scheme()
        self.used: dict[str, str] = {}
        self.parsed = 0
        """How many texts had to be parsed: the ones neither memo knew."""

    def hash(self, sql: str, dialect: str | None = None) -> str:
        digest = _digest(self._scheme, sql, dialect)
        found = self.used.get(digest) or self._known.get(digest)
        if found is None:
            found = sql_hash(sql, dialect)
            self.parsed += 1
        self.used[digest] = found
        return found

    def __eq__(self, other: object) -> bool:
        """Two plans are equal when they used the same hashes, whatever memo they started from."""
        return isinstance(other, SqlHashes) and self.used == other.used

    __hash__ = None  # type: ignore[assignment]
