"""Secrets never reach logs, reports or the plan, and one event must never stop a sync: the
redaction of a producer's text takes a time linear in its length.

Every free text of a producer that reaches the plan or a report (a description, a property, a
namespace, a statement, a gap's example) goes through ``redaction``. Its patterns of URLs started
from the scheme, and a query's parameter names ran over every ``?``: a long word, a dotted word or
a ``?a?a…`` text was scanned again from each of its characters, a time growing with the square of
its length (a 40,000-character word took seconds, a megabyte hours), and the snapshot mapping it
stalled. They are found from their ``://`` now, the same URLs.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.redaction import _urls_in, redact_sql, redact_text, redact_url

SIZE = 200_000
LONG_TEXTS = {
    "a long word": "a" * SIZE + "=",
    "a long word before a scheme": "a" * SIZE + "://",
    "a dotted word": "a." * (SIZE // 2) + "=",
    "a query of bare names": "http://h/" + "?a" * (SIZE // 2),
    "a query of bare names after &": "http://h/?" + "&a" * (SIZE // 2),
}


@pytest.mark.parametrize("text", list(LONG_TEXTS.values()), ids=list(LONG_TEXTS))
def test_a_long_text_is_redacted_in_linear_time(text: str) -> None:
    """No timed assertion (the project measures time in ``benchmarks/``): milliseconds now,
    about nine minutes each before, which the suite's hang guard (``timeout`` in pyproject)
    stops as a failure."""
    assert redact_text(text) == text  # no secret in them: shown as they are
    assert text in redact_sql(f"SELECT '{text}' -- {text}")


URL_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
PIECES = ["a", "B", "1", "+", ".", "-", ":", "/", "://", " ", '"', "'", "<", "@", "é", "=", "\n"]


@given(st.lists(st.sampled_from(PIECES), max_size=16).map("".join))
def test_the_urls_of_a_text_are_the_ones_the_pattern_finds(text: str) -> None:
    assert list(_urls_in(text)) == [match.span() for match in URL_PATTERN.finditer(text)]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://h/p?a?password=pw&b=1", "https://h/p?a?password=***&b=1"),
        ("https://h/p?token=pw", "https://h/p?token=***"),
        ("postgresql://etl:pw@db/x?a=1", "postgresql://etl:***@db/x?a=1"),
    ],
)
def test_a_secret_parameter_after_a_bare_name_is_redacted(url: str, shown: str) -> None:
    """A bare name (``?a``) ended no pair: the next ``?password=`` was read as the name
    ``a?password`` and shown as sent."""
    assert redact_url(url) == shown


@pytest.mark.parametrize(
    ("sql", "shown"),
    [
        ("SELECT 'postgresql://etl:pw@db/x'", "SELECT 'postgresql://etl:***@db/x'"),
        ("SELECT 'x.s3://key:pw@bucket/p'", "SELECT 'x.s3://key:***@bucket/p'"),
        ("SELECT 'a1b.c://u:pw@h'", "SELECT 'a1b.c://u:***@h'"),
    ],
)
def test_a_urls_password_in_a_literal_is_still_redacted(sql: str, shown: str) -> None:
    assert redact_sql(sql) == shown


@pytest.mark.parametrize(
    ("sql", "shown"),
    [
        (
            "-- today's load\nALTER ROLE etl PASSWORD 'pw'",
            "-- today's load\nALTER ROLE etl PASSWORD '***'",
        ),
        (
            "/* the customer's DSN */ SELECT dblink('host=db password=pw', 'x')",
            "/* the customer's DSN */ SELECT dblink('host=db password=***', 'x')",
        ),
        (
            "SELECT 1 -- it's\n, 'postgresql://etl:pw@db' -- from postgresql://a:pw@b",
            "SELECT 1 -- it's\n, 'postgresql://etl:***@db' -- from postgresql://a:***@b",
        ),
        (
            "SELECT '--', 'it''s' -- x\n, PASSWORD 'pw'",
            "SELECT '--', 'it''s' -- x\n, PASSWORD '***'",
        ),
    ],
)
def test_an_apostrophe_in_a_comment_does_not_hide_the_literals_after_it(
    sql: str, shown: str
) -> None:
    """Literals were found before comments: the apostrophe of ``-- today's`` opened a literal
    that ended at the next literal's opening quote, and that literal (``PASSWORD 'pw'``) was
    read as code and catalogued as written."""
    assert redact_sql(sql) == shown


@pytest.mark.parametrize(
    ("sql", "shown"),
    [
        (
            """CREATE USER "o'brien" PASSWORD 'hunter2'""",
            """CREATE USER "o'brien" PASSWORD '***'""",
        ),
        (
            "SELECT `it's` FROM t WHERE password = 'pw'",
            "SELECT `it's` FROM t WHERE password = '***'",
        ),
        (
            """SELECT "customer's", 'postgresql://etl:pw@db' FROM t""",
            """SELECT "customer's", 'postgresql://etl:***@db' FROM t""",
        ),
    ],
)
def test_an_apostrophe_in_a_quoted_name_does_not_hide_the_literals_after_it(
    sql: str, shown: str
) -> None:
    """A name is not a literal: the apostrophe of ``"o'brien"`` opened a literal that ended at
    the next literal's opening quote, and that literal was read as code and catalogued as
    written."""
    assert redact_sql(sql) == shown


UNCLOSED = "\\'" * 250_000


@pytest.mark.parametrize(
    ("sql", "shown"),
    [
        (f"PASSWORD '{UNCLOSED}", "PASSWORD ***"),  # no dialect reads it: hidden past PASSWORD
        (f"SELECT '{UNCLOSED}", f"SELECT '{UNCLOSED}"),
        (f"SELECT '{UNCLOSED}\\", f"SELECT '{UNCLOSED}\\"),
    ],
    ids=["after-a-secret-keyword", "elsewhere", "ending-with-a-backslash"],
)
def test_a_literal_never_closed_runs_to_the_end_in_linear_time(sql: str, shown: str) -> None:
    """An unclosed literal was tried again from every quote after it, each time to the end of
    the text: about 13 minutes for these half-megabyte statements, which the suite's hang guard
    stops as a failure; milliseconds now. It runs to the end, as a SQL lexer reads it."""
    assert redact_sql(sql) == shown
