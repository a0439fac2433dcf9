"""SQL hashing: sqlglot compiled (``sqlglotc``) against sqlglot as plain Python, same texts.

``openLineageSqlHash`` hashes every SQL text's sqlglot tokens (``mapper/sql.py``). The
``sqlglotc`` distribution puts mypyc-compiled modules beside sqlglot's sources; Python prefers
them. This script hashes the same texts (the dbt fixtures' SQL and Airflow-shaped statements) in
two fresh processes, one of which is made to load sqlglot from its sources, checks that both give
the same hashes, and prints the time of each and their ratio. A third process times what the
hash was before (a parse and re-rendering of each statement, with ``sqlglotc``), the baseline of
the token hash.

Usage: ``python benchmarks/sql.py [--statements 2000]``.
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


def child(mode: str, count: int) -> None:
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
    args = parser.parse_args()
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
