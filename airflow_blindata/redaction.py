"""Secrets kept out of text: the one place where a URL becomes text for a log or a message.

A URL may carry credentials in its userinfo (``https://user:password@host``,
``postgresql://user:pw@db/x``) or in its query (``postgresql://db/x?password=pw``, as libpq
accepts; ``?token=…``).
A SQL statement may carry them as literals (``CREATE USER u PASSWORD '…'``, Redshift's ``COPY …
CREDENTIALS '…'``): ``redact_sql`` is what of a statement may be catalogued.
Everything that shows a URL — the event store's, the Blindata connection's — shows
``redact_url(url)``, and text that may quote one anyway (a driver's or a library's message) goes
through ``scrub`` with ``url_secrets(url)``.

Plain string handling, no imports: the store, the Blindata client, the hook and the commands all
use it, whatever else they import.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable, Iterator
from urllib.parse import unquote

__all__ = [
    "ORACLE_CREDENTIALS",
    "REDACTED",
    "redact_query",
    "redact_sql",
    "redact_text",
    "redact_url",
    "scrub",
    "url_secrets",
    "without_credentials",
]

REDACTED = "***"

# Query parameters whose value is a secret: libpq's ``password`` and ``sslpassword``, the
# usual spellings of tokens and keys, and the signatures of pre-signed URLs (Azure's SAS
# ``sig``, AWS's ``X-Amz-Signature`` and ``X-Amz-Security-Token``, Google's
# ``X-Goog-Signature``), and the keys of Azure's connection strings (``AccountKey``,
# ``SharedAccessSignature``). Matched on the whole name, case-insensitively.
_SECRET_NAMES = (
    r"(?:ssl)?(?:password|passwd|pwd|secret|client_secret|token|access_token|"
    r"refresh_token|session_token|api_?key|api_?token|private_key|signature|sig|"
    r"secret_?key|access_?key|sas_?token|account_?key|shared_?access_?signature|"
    r"x-(?:amz|goog)-(?:signature|security-token|credential))"
)
_SECRET_PARAMETER = re.compile(rf"(?i)^{_SECRET_NAMES}$")
# A name stops at a ``?`` too: ``?a?a?a…`` is no pair, and a name that ran on over every ``?``
# was scanned again from each one (a time growing with the square of the text's length).
_QUERY_PAIR = re.compile(r"(?P<lead>[?&;])(?P<name>[^=&;#?]*)=(?P<value>[^&;#]*)")


def _query_secrets(url: str) -> list[tuple[int, int]]:
    """Spans of the secret values in ``url``'s parameters: its query string (after the first
    ``?``), or the properties that follow the first ``;`` (SQL Server's JDBC URLs,
    ``jdbc:sqlserver://db:1433;user=etl;password=…``)."""
    starts = [index for index in (url.find("?"), url.find(";")) if index >= 0]
    if not starts:
        return []
    start = min(starts)
    spans = []
    for match in _QUERY_PAIR.finditer(url, start):
        value = match.group("value")
        if value.startswith(REDACTED):
            continue  # already shown redacted: what follows (a dataset's name) is not the secret
        if value and _SECRET_PARAMETER.match(unquote(match.group("name"))):
            spans.append(match.span("value"))
    return spans


def redact_query(url: str) -> str:
    """``url`` with the values of its secret query parameters (``?password=``) replaced."""
    for begin, end in reversed(_query_secrets(url)):
        url = url[:begin] + REDACTED + url[end:]
    return url


def _userinfo(url: str) -> tuple[str, str, str] | None:
    """``(prefix, userinfo, rest)`` of a URL with ``user[:password]@`` in it, else None.

    The userinfo ends at the last ``@`` of the URL: a password with an unencoded ``@``, ``/``,
    ``?`` or ``#`` is still all hidden, wherever they are in it (``p@ss#w0rd``, ``p@ss/w0rd``:
    a parser that ends the password at its first ``@`` takes the rest for the host or the path,
    and a driver's message then quotes it). An ``@`` in the path or the query is taken for the
    end of a userinfo: too much hidden, never too little.
    """
    scheme, separator, rest = url.partition("://")
    if not separator:
        scheme, rest = "", url
    if rest.startswith("/"):  # no authority (``sqlite:///path``): nothing to hide
        return None
    last = rest.rfind("@")
    if last < 0:
        return None
    return scheme + separator, rest[:last], rest[last + 1 :]


# Azure storage URLs name ``container@account``: what is before the ``@`` is no credential.
_CONTAINER_BEFORE_AT = frozenset(f"{scheme}://" for scheme in ("wasb", "wasbs", "abfs", "abfss"))


def redact_url(url: str) -> str:
    """``url`` with its password replaced by ``***``: the only form that may reach a log.

    ``user:password@`` becomes ``user:***@``; a userinfo without a colon (often a token, as in
    ``https://<token>@host``) becomes ``***@``, except Azure's container
    (``abfss://container@account``); ``?password=pw`` (and the other secret query parameters)
    becomes ``?password=***``.
    """
    parts = _userinfo(url)
    if parts is None:
        return redact_query(url)
    prefix, userinfo, rest = parts
    user, colon, _ = userinfo.partition(":")
    if not colon and prefix.lower() in _CONTAINER_BEFORE_AT:
        return f"{prefix}{userinfo}@{redact_query(rest)}"
    shown = f"{user}:{REDACTED}" if colon else REDACTED
    return f"{prefix}{shown}@{redact_query(rest)}"


def without_credentials(url: str) -> str:
    """``url`` without its ``user:password@``: for a client that sends credentials otherwise."""
    parts = _userinfo(url)
    return url if parts is None else parts[0] + parts[2]


def url_secrets(url: str) -> tuple[str, ...]:
    """What ``redact_url`` hides, as written and percent-decoded: for ``scrub``."""
    secrets = [url[begin:end] for begin, end in _query_secrets(url)]
    parts = _userinfo(url)
    if parts is not None:
        user, colon, password = parts[1].partition(":")
        secrets.append(password if colon else user)
    decoded = [unquote(secret) for secret in secrets]
    return tuple(dict.fromkeys(value for value in (*secrets, *decoded) if value))


# A URL in free text: from its scheme to the first blank, quote or angle bracket. Found from its
# ``://`` (``_urls_in``): a pattern that starts with the scheme tries every letter of a long word
# and scans it to its end, a time that grows with the square of the word's length.
_SCHEME_CHARACTERS = frozenset(string.ascii_letters + string.digits + "+.-")
_URL_REST = re.compile(r"[^\s\"'<>]+")


def _urls_in(text: str) -> Iterator[tuple[int, int]]:
    r"""The (start, end) of each URL in ``text``, left to right, as the pattern
    ``[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`` finds them, in time linear in the text."""
    done = 0
    at = text.find("://")
    while at != -1:
        start = at
        while start > done and text[start - 1] in _SCHEME_CHARACTERS:
            start -= 1
        while start < at and not ("a" <= text[start].lower() <= "z"):
            start += 1  # a scheme starts with a letter
        rest = _URL_REST.match(text, at + 3)
        if start == at or rest is None:
            at = text.find("://", at + 1)
            continue
        yield start, rest.end()
        done = rest.end()
        at = text.find("://", done)


def redact_text(text: str) -> str:
    """``text`` with every URL in it as ``redact_url`` shows it, every secret setting
    (``password=…``, Azure's ``AccountKey=…``, ``token=…``) as ``password=***``, and the
    password of an Oracle thin URL (``jdbc:oracle:thin:scott/…@db``): for text that quotes
    what a producer sent (a namespace, a dataset's name, a facet's value) on its way to a
    report, a log or the catalog."""
    if "://" not in text and "=" not in text and "@" not in text:
        return text
    if "://" in text:
        parts: list[str] = []
        done = 0
        for start, end in _urls_in(text):
            parts += (text[done:start], redact_url(text[start:end]))
            done = end
        parts.append(text[done:])
        text = "".join(parts)
    text = ORACLE_CREDENTIALS.sub(lambda match: f"{match.group('lead')}{REDACTED}@", text)
    return _SECRET_SETTING_IN_TEXT.sub(lambda match: f"{match.group('lead')}{REDACTED}", text)


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every non-empty secret replaced by ``***`` (the longest first), also as a
    JSON string writes it (a server's answer that quotes the request quotes ``"`` and ``\\``)."""
    spelled = set()
    for secret in secrets:
        if secret:
            spelled.add(secret)
            spelled.add(json.dumps(secret, ensure_ascii=False)[1:-1])
            spelled.add(json.dumps(secret)[1:-1])
    for secret in sorted(spelled, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


# A string literal that a keyword says is a secret: PostgreSQL's and Snowflake's ``PASSWORD '…'``
# (``PASSWORD = '…'``, ``OPTIONS (password '…')``), MySQL's ``IDENTIFIED [WITH plugin] BY '…'``,
# Redshift's ``CREDENTIALS '…'``, ``ACCESS_KEY_ID '…'``, ``SECRET_ACCESS_KEY '…'`` and
# ``SESSION_TOKEN '…'``, Snowflake's ``AWS_KEY_ID = '…'``, ``AWS_SECRET_KEY``, ``AWS_TOKEN``,
# ``AZURE_SAS_TOKEN`` and ``MASTER_KEY``, and a column compared with one (``WHERE password =
# '…'``): the code before the literal ends with one of these keywords.
_SECRET_KEYWORD_BEFORE = re.compile(
    r"""(?ix)
    \b(?:
        (?:ssl)?password | passwd | pwd
      | identified \s+ (?:with \s+ \S+ \s+)? (?:by|as)
      | credentials | secret | client_secret | token | api_?key | private_key
      | access_key_id | secret_access_key | session_token
      | aws_key_id | aws_secret_key | aws_token | aws_access_key_id | aws_secret_access_key
      | aws_session_token | azure_sas_token | master_key | sas_token
    )
    \s* (?: = \s* )? (?: [enbx] | u& )? \Z
    """
)
# ``password=…`` in a connection string (``dblink('host=db password=…')``, a JDBC URL's
# ``;password=…``), unquoted; in free text too (a driver's message). One already shown ``***``
# is left as it is.
_SECRET_SETTING = re.compile(
    r"(?i)\b(?P<lead>(?:ssl)?(?:password|passwd|pwd)\s*=\s*)(?!\*\*\*)[^\s;'\",)&]+"
)
# Free text names more secrets than SQL literals may (where a broader pattern would change the
# hash of statements that name a column ``token``): the secret names of query parameters, which
# include the settings of Azure's connection strings (``AccountKey=…``,
# ``SharedAccessSignature=…``).
_SECRET_SETTING_IN_TEXT = re.compile(
    rf"(?i)(?<![A-Za-z0-9_.-])(?P<lead>{_SECRET_NAMES}\s*=\s*)(?!\*\*\*)[^\s;'\",)&]+"
)
# An Oracle thin (or OCI) URL names its user and password before the ``@``, with no ``://``:
# ``jdbc:oracle:thin:scott/tiger@db:1521/orcl`` (``lead`` ends after ``scott/``); the password
# runs to the last ``@`` (one with an ``@`` in it is hidden whole).
ORACLE_CREDENTIALS = re.compile(
    r"(?i)(?P<lead>\bjdbc:oracle:[a-z0-9]+:[^\s/@:]+/)(?P<password>\S+)@"
)
# Oracle's password is no literal: ``IDENTIFIED BY s3cret`` or ``IDENTIFIED BY "s3cret"`` (and
# its hash, ``IDENTIFIED BY VALUES '…'``, a literal that the keyword before it does not name).
_IDENTIFIED_BY_WORD = re.compile(
    r"""(?ix)
    (?P<lead> \b identified \s+ (?: with \s+ \S+ \s+ )? (?: by | as ) \s+ )
    (?: (?P<values> values \s* ' (?: [^'\\] | \\. | '' )* ' )
      | (?P<quoted> " (?: [^"] | "" )* " )
      | (?P<word> [^\s'";,()]+ ) )
    """
)
# A URL's password (``postgresql://user:…@db``, ``s3://key:…@bucket``), found from its ``://``
# after a scheme's character: a pattern that starts with the scheme scans every word of
# ``a.a.a…`` to the end (a time growing with the square of the text's length).
_URL_PASSWORD = re.compile(r"(?<=[a-z0-9+.-])(?P<lead>://[^\s:/@'\"]*:)[^\s@'\"/]+(?=@)")


def _identified_by(match: re.Match[str]) -> str:
    if match.group("values"):
        return f"{match.group('lead')}VALUES '{REDACTED}'"
    if match.group("quoted"):
        return f'{match.group("lead")}"{REDACTED}"'
    return f"{match.group('lead')}{REDACTED}"


# A comment of SQL (``-- …`` to the end of its line, ``/* … */``), a quoted name (``"…"``,
# ``\`…\```) or a string literal, whichever starts first: a quote in a comment (``-- the
# customer's orders``) or in a name (``"o'brien"``) starts no literal, and ``--`` in a literal
# starts no comment. Read as literals first, such an apostrophe paired with the next literal's
# opening quote, and the literal after it (``PASSWORD '…'``) was read as code and catalogued as
# written. Literals in single quotes only: a double-quoted text is a name in SQL, and names make
# lineage. A quote is escaped doubled, or after a backslash (MySQL, PostgreSQL's E'…'). A literal
# that is never closed runs to the end, as a SQL lexer reads it: tried again from each quote
# after it, an unclosed ``'\'\'…`` was scanned to the end once per quote (a time growing with the
# square of its length: seconds for 20,000 characters).
_SQL_COMMENT_NAME_OR_LITERAL = re.compile(
    r"(?=[-/\"`'])"  # the characters that may start one: the others are passed over at once
    r"(?:(?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))"
    r'|(?P<name>"[^"]*"|`[^`]*`)'
    r"|'(?:[^'\\]|\\(?:.|\Z)|'')*(?:'|\Z))",
    re.DOTALL,
)


def redact_sql(sql: str) -> str:
    """``sql`` with the secrets it holds as literals replaced by ``***``: a literal that a
    keyword names a password, key or token, and a password in a connection string or a URL
    within a literal or a comment. Names and other literals (what makes lineage) stay as written,
    so that a statement reads the same to Blindata's analysis, and its hash, made from this text,
    is the same at every run."""
    sql = _IDENTIFIED_BY_WORD.sub(_identified_by, sql)
    parts: list[str] = []
    done = 0  # the end of the last comment or literal
    code = 0  # the end of the last literal: what follows it is the code before the next one
    for token in _SQL_COMMENT_NAME_OR_LITERAL.finditer(sql):
        if token.group("name") is not None:
            continue  # part of the code, as it is
        parts.append(sql[done : token.start()])
        done = token.end()
        if token.group("comment") is not None:
            parts.append(redact_text(token.group()))
        elif _SECRET_KEYWORD_BEFORE.search(sql[max(code, token.start() - 80) : token.start()]):
            parts.append(f"'{REDACTED}'")
        else:
            text = _SECRET_SETTING.sub(lambda m: f"{m.group('lead')}{REDACTED}", token.group())
            parts.append(_URL_PASSWORD.sub(lambda m: f"{m.group('lead')}{REDACTED}", text))
        if token.group("comment") is None:
            code = done
    parts.append(sql[done:])
    return "".join(parts)
