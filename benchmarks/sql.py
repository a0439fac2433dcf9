"""SQL hashing: sqlglot compiled (``sqlglotc``) against sqlglot as plain Python, same texts.

``openLineageSqlHash`` hashes every SQL text's sqlglot tokens (``mapper/sql.py``). The
``sqlglotc`` distribution puts mypyc-compiled modules beside sqlglot's sources; Python prefers
them. This script hashes the same texts (the dbt fixtures' SQL and Airflow-shaped statements) in
two fresh processes, one of which is made to load sqlglot from its sources, checks that both give
the same hashes, and prints the time of each and their ratio. A third process times what the
hash was before (a parse and re-rendering of each statement, with ``sqlglotc``), the baseline of
the token hash.

With ``--redaction`` it times ``redaction.redact_sql`` instead, over the same texts as they are
(ordinary statements: almost none names a secret) and with a secret planted in each (``ALTER
ROLE … PASSWORD '…'`` after it, in a comment and a literal), so that each is read whole.

Usage: ``python benchmarks/sql.py [--statements 2000] [--redaction [--dialect postgres]]``
(``--dialect ""``: statements of no known dialect, read as each of three dialects reads them).
"""

from __future__ import annotations

import argparse
import importlib.machinery
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load_sqlglot_from_sources() -> None:
    """Make the folders of the sqlglot package find modules by their ``.py`` files only."""
    sources = (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES)

    def hook(entry: str) -> importlib.machinery.FileFinder:
        if f"{Path('/sqlglot')}" not in entry:
            raise ImportError  # the next hook handles every other folder
        return importlib.machinery.FileFinder(entry, sources)

    sys.path_hooks.insert(0, hook)
    sys.path_importer_cache.clear()


def texts(count: int) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from benchmarks.scale import job_events

    found = []
    for path in sorted((ROOT / "tests" / "fixtures" / "openlineage" / "dbt").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            query = json.loads(line).get("job", {}).get("facets", {}).get("sql", {}).get("query")
            if query:
                found.append(query)
    job = 0
    while len(found) < count:
        found.append(next(job_events(job, 1))["job"]["facets"]["sql"]["query"])
        job += 1
    return found[:count]


def _parsed_hash(sql: str, dialect: str) -> str:
    """The hash as it was: each statement parsed and rendered again in a canonical form."""
    import hashlib

    import sqlglot
    from sqlglot.errors import SqlglotError

    try:
        rendered = ";\n".join(
            expression.sql(dialect=dialect, copy=False, comments=False, normalize_functions="upper")
            for expression in sqlglot.parse(sql, read=dialect)
            if expression is not None
        )
    except (SqlglotError, ValueError, RecursionError):
        rendered = " ".join(sql.split())
    return "sha256:" + hashlib.sha256(rendered.encode()).hexdigest()


PLANTED = (
    "\n-- the loader's account: password: hunter2\n"
    "ALTER ROLE etl PASSWORD 'hunter2'; SELECT 'postgresql://etl:hunter2@db/x'"
)
"""A secret of each kind the SQL redaction reads (a keyword's literal, a comment, a URL)."""


def redaction_child(count: int, dialect: str | None) -> None:
    import inspect

    from airflow_blindata.redaction import redact_sql

    statements = texts(count)
    planted = [text + PLANTED for text in statements]
    takes_dialect = "dialect" in inspect.signature(redact_sql).parameters

    def redact(text: str) -> str:
        if takes_dialect:
            return redact_sql(text, dialect)  # type: ignore[call-arg,unused-ignore]
        return redact_sql(text)

    redact(planted[0])  # imports and dialect set-up are not measured
    import sqlglot.parser

    timings: dict[str, object] = {"compiled": not str(sqlglot.parser.__file__).endswith(".py")}
    for name, batch in (("ordinary", statements), ("planted", planted)):
        started = time.perf_counter()
        shown = [redact(text) for text in batch]
        timings[name] = time.perf_counter() - started
        if name == "planted":
            timings["leaked"] = sum("hunter2" in text for text in shown)
    print(json.dumps(timings))


def child(mode: str, count: int) -> None:
    if mode.startswith("redact:"):
        redaction_child(count, mode.removeprefix("redact:") or None)
        return
    if mode == "source":
        _load_sqlglot_from_sources()
    import sqlglot.parser

    from airflow_blindata.mapper.sql import sql_hash

    statements = texts(count)
    hash_of = _parsed_hash if mode == "parse" else sql_hash
    hash_of(statements[0], "postgres")  # imports and dialect set-up are not measured
    started = time.perf_counter()
    hashes = [hash_of(text, "postgres") for text in statements]
    seconds = time.perf_counter() - started
    compiled = not str(sqlglot.parser.__file__).endswith(".py")
    print(json.dumps({"seconds": seconds, "compiled": compiled, "hashes": hashes}))


def run(mode: str, count: int) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(count)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=2_000)
    parser.add_argument("--redaction", action="store_true", help="time redact_sql instead")
    parser.add_argument("--dialect", default="postgres", help="the statements' sqlglot dialect")
    args = parser.parse_args()
    if args.redaction:
        timed = run(f"redact:{args.dialect}", args.statements)
        ordinary, planted = (float(timed[name]) * 1000 for name in ("ordinary", "planted"))  # type: ignore[arg-type]
        print(
            f"redact_sql over {args.statements:,} statements, dialect {args.dialect or 'none'} "
            f"(sqlglotc: {timed['compiled']}): "
            f"as they are {ordinary:.0f} ms; each with a planted secret {planted:.0f} ms, "
            f"{timed['leaked']} of them still showing it"
        )
        return 0
    plain = run("source", args.statements)
    installed = run("installed", args.statements)
    parsed = run("parse", args.statements)
    if not installed["compiled"]:
        print("sqlglotc is not installed here: nothing to compare")
        return 1
    same = plain["hashes"] == installed["hashes"]
    ratio = float(plain["seconds"]) / float(installed["seconds"])  # type: ignore[arg-type]
    print(
        f"{args.statements:,} statements: sqlglot (Python) {plain['seconds']:.2f} s, "
        f"sqlglotc {installed['seconds']:.2f} s: {ratio:.1f}x faster; same hashes: {same}"
    )
    before = float(parsed["seconds"]) / float(installed["seconds"])  # type: ignore[arg-type]
    print(
        f"the hash before, a parse and re-rendering (sqlglotc): {parsed['seconds']:.2f} s, "
        f"{before:.1f}x the token hash"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
