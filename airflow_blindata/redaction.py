"""Secrets kept out of text: the one place where a URL becomes text for a log or a message.

A URL may carry credentials in its userinfo (``https://user:password@host``,
``postgresql://user:pw@db/x``) or in its query (``postgresql://db/x?password=pw``, as libpq
accepts; ``?token=…``).
A SQL statement may carry them as literals (``CREATE USER u PASSWORD '…'``, Redshift's ``COPY …
CREDENTIALS '…'``): ``redact_sql`` is what of a statement may be catalogued; it reads literals
and comments as the statement's dialect does, with sqlglot's tokenizer. Free text may carry them
as values (``password: …``, ``"api_key": "…"``, ``Authorization: Bearer …``, a PEM private key):
``redact_text`` is what of a producer's text may be catalogued or shown.
Everything that shows a URL — the event store's, the Blindata connection's — shows
``redact_url(url)``, and text that may quote one anyway (a driver's or a library's message) goes
through ``scrub`` with ``url_secrets(url)``.

Plain string handling, none of the package's imports: the store, the Blindata client, the hook and
the commands all use it, whatever else they import; sqlglot is imported on the first statement
that may hold a secret.
"""

from __future__ import annotations

import html
import json
import re
import string
import threading
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any
from urllib.parse import unquote

__all__ = [
    "PATH_SCHEMES",
    "REDACTED",
    "is_secret_property",
    "masked_quoted_values",
    "names_a_secret",
    "names_hold_properties",
    "oracle_passwords",
    "property_spans",
    "redact_dataset_name",
    "redact_event_text",
    "redact_name",
    "redact_properties",
    "redact_prose",
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
# ``SharedAccessSignature``), and a server session's id (``;jsessionid=``, a bearer of the
# session). Matched on the whole name, case-insensitively.
_SECRET_NAMES = (
    r"(?:ssl)?(?:password|passwd|pwd|secret|client_secret|token|access_token|j?session_?id|"
    r"refresh_token|session_token|api_?key|api_?token|private_key|signature|sig|"
    r"secret_?key|access_?key|sas_?token|account_?key|shared_?access_?signature|"
    r"x-(?:amz|goog)-(?:signature|security-token|credential))"
)
_SECRET_PARAMETER = re.compile(rf"(?i)^{_SECRET_NAMES}$")
_API_KEY_PARAMETER = re.compile(r"(?i)^(?:key|code|jwt|auth)$")
"""An HTTP API's key as its URL names it (Google's ``?key=``, Azure Functions' ``?code=``):
hidden in the HTTP URLs free text quotes, not in a name (``?code=EUR`` of a dataset named by
its URL, Hive's ``;auth=noSasl`` in a job's namespace are no secrets, and hiding them would
merge what they tell apart)."""
# A name stops at a ``?`` too: ``?a?a?a…`` is no pair, and a name that ran on over every ``?``
# was scanned again from each one (a time growing with the square of the text's length).
_QUERY_PAIR = re.compile(r"(?:(?P<lead>[?&;#])|^)(?P<name>[^=&;#?]*)=(?P<value>[^&;#]*)")
"""A parameter (``?password=…``, ``;password=…``), or a connection string's first property
(``^``: ``PWD={…};Server=db``, read from the text's start only)."""
_QUERY_VALUE_REST = re.compile(r"[^&;#]*")


def _query_secrets(url: str, api_keys: bool = False) -> list[tuple[int, int]]:
    """Spans of the secret values in ``url``'s parameters: its query string (after the first
    ``?``), the properties that follow the first ``;`` (SQL Server's JDBC URLs,
    ``jdbc:sqlserver://db:1433;user=etl;password=…``) or make a connection string
    (``_properties_at``: ODBC's ``Driver={…};Server=db;PWD=…``), or its fragment's (an OAuth
    sign-in's ``#access_token=…``, which a browser's address bar shows and an admin pastes).

    A property's value in braces (SQL Server's and ODBC's quoting, ``}}`` a brace in it) runs
    to its closing brace, whatever it holds (``password={Pa;ss@w0rd}``); a property's value to its
    ``;`` too, past a ``#``, a blank or a ``&`` (``property_spans``). Sorted, none overlapping."""
    properties = _properties_at(url, whole="://" not in url)
    starts = [index for index in (url.find("?"), url.find(";"), url.find("#")) if index >= 0]
    if properties is not None:
        starts.append(properties)
    if not starts:
        return []
    start = min(starts)
    spans = []
    closings = _Closings(url) if "{" in url else None
    at = start
    while (match := _QUERY_PAIR.search(url, at)) is not None:
        begin, end = match.span("value")
        name = unquote(match.group("name"))
        secret = bool(
            _SECRET_PARAMETER.match(name)
            or _is_secret_name(name)
            or (api_keys and _API_KEY_PARAMETER.match(name))
        )
        # braces quote the values of ``;`` properties only (SQL Server's, ODBC's): in a query
        # or a fragment a value may open a brace another parameter closes (GraphQL's
        # ``?query={viewer{login}}&access_token=…``), and read so it hid the token (a review)
        braced = match.group("lead") in (";", None)
        if braced and closings is not None and url.startswith("{", begin):
            closed = closings.end(begin)
            if closed >= 0:
                end = _QUERY_VALUE_REST.match(url, closed).end()  # type: ignore[union-attr]
            elif secret:
                end = len(url)  # never closed: all of it may be the secret
        if secret and begin < end and not url.startswith(REDACTED, begin):
            spans.append((begin, end))
        at = max(end, match.end())
    if properties is not None:
        for _, _, key, value_at, value_end, _ in _property_items(url[properties:]):
            begin = _BLANKS.match(url, properties + value_at).end()  # type: ignore[union-attr]
            if (
                key is not None
                and (_SECRET_PARAMETER.match(key) or is_secret_property(key))
                and begin < properties + value_end
                and not url.startswith(REDACTED, begin)
            ):
                spans.append((begin, properties + value_end))
    return _merged(spans)


def _properties_at(url: str, *, whole: bool) -> int | None:
    """Where the connection properties of ``url`` start (at their first ``;``, or with
    ``whole``, at ``0`` for a connection string that starts with ``name=``), or None: SQL
    Server's ``jdbc:sqlserver://db:1433;databaseName=dwh;password=…``, ODBC's and ADO.NET's
    ``Driver={ODBC Driver 18};Server=db;PWD=…;``. Only where the first ``;`` comes before any
    ``?`` or ``#`` (a query's ``;`` is a query's separator)."""
    if whole and _PROPERTY_NAME.match(url):
        return 0
    semicolon = url.find(";")
    if semicolon < 0 or any(url.find(mark, 0, semicolon) >= 0 for mark in "?#"):
        return None
    return semicolon


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, those that overlap or touch joined: each is hidden as one ``***``."""
    merged: list[tuple[int, int]] = []
    for begin, end in sorted(spans):
        if merged and begin <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((begin, end))
    return merged


def _hidden(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of ``spans`` (sorted, none overlapping) as ``***``, an empty one too
    (``user:@db`` as ``user:***@db``)."""
    if not spans:
        return text
    parts: list[str] = []
    done = 0
    for begin, end in spans:
        parts += (text[done:begin], REDACTED)
        done = end
    parts.append(text[done:])
    return "".join(parts)


def redact_query(url: str, *, api_keys: bool = False) -> str:
    """``url`` with the values of its secret query parameters replaced: ``?password=``, and a
    name that ends with a secret word, as free text reads one (``?spark.password=``); with
    ``api_keys``, an HTTP URL's ``key``, ``code``, ``jwt`` and ``auth`` too."""
    return _redact_query(url, api_keys and _is_http(url))


def _is_http(url: str) -> bool:
    return url[:8].lower().startswith(("http://", "https://"))


def _redact_query(url: str, api_keys: bool) -> str:
    return _hidden(url, _query_secrets(url, api_keys))


def _userinfo(url: str) -> tuple[str, str, str] | None:
    """``(prefix, userinfo, rest)`` of a URL with ``user[:password]@`` in it, else None.

    The userinfo ends at the last ``@`` of the URL: a password with an unencoded ``@``, ``/``,
    ``?`` or ``#`` is still all hidden, wherever they are in it (``p@ss#w0rd``, ``p@ss/w0rd``:
    a parser that ends the password at its first ``@`` takes the rest for the host or the path,
    and a driver's message then quotes it). An ``@`` in the path or the query is taken for the
    end of a userinfo: too much hidden, never too little. But an ``@`` in a connection
    property's value in braces or quotes (``;password={Pa:ss@w0rd}``, ``PWD={…@…};``) is the
    value's, never a userinfo's end: read so, the host and the properties were hidden and the
    rest of the password shown (``jdbc:sqlserver://db:***@w0rd}``).
    """
    scheme, separator, rest = url.partition("://")
    if not separator:
        scheme, rest = "", url
    if rest.startswith("/"):  # no authority (``sqlite:///path``): nothing to hide
        return None
    last = _userinfo_end(rest, whole=not separator)
    if last < 0:
        return None
    return scheme + separator, rest[:last], rest[last + 1 :]


def _userinfo_end(rest: str, *, whole: bool) -> int:
    """The ``@`` that ends the userinfo of ``rest`` (what follows ``scheme://``, or a whole
    text), or -1: its last one outside the quoted values of its connection properties
    (``_properties_at``)."""
    last = rest.rfind("@")
    start = _properties_at(rest, whole=whole)
    if last < 0 or start is None or start > last:
        return last
    quoted = [
        (start + item[5][0], start + item[5][1])
        for item in _property_items(rest[start:])
        if item[5] is not None
    ]
    for opened, closed in reversed(quoted):
        if last >= closed:
            break
        if last > opened:
            last = rest.rfind("@", 0, opened)
            if last < 0:
                break
    return last


# Azure storage URLs name ``container@account``: what is before the ``@`` is no credential.
_CONTAINER_BEFORE_AT = frozenset(f"{scheme}://" for scheme in ("wasb", "wasbs", "abfs", "abfss"))


_WEBHOOK = re.compile(
    r"(?i)^(?P<lead>https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"|(?:[a-z0-9-]+\.)?discord(?:app)?\.com/api/webhooks/"
    r"|[a-z0-9-]+\.webhook\.office\.com/webhookb2/))[^\s?#\"'<>]+"
)
"""A chat webhook's URL, whose path is its secret (Slack's ``/services/T…/B…/…``, Discord's
``/api/webhooks/…``, Teams' ``/webhookb2/…``): anyone who has it may post."""


def redact_url(url: str, *, api_keys: bool = True) -> str:
    """``url`` with its password replaced by ``***``: the only form that may reach a log (an
    HTTP URL's API key too, but for ``api_keys=False``: a name, whose ``?code=`` is no secret).

    ``user:password@`` becomes ``user:***@``; a userinfo without a colon (often a token, as in
    ``https://<token>@host``) becomes ``***@``, except Azure's container
    (``abfss://container@account``); ``?password=pw`` (and the other secret query parameters
    and connection properties, a value in braces whole: ``;password={a;b@c}``) becomes
    ``?password=***``. Where an ``@`` may end a userinfo or be a property's value
    (``sqlserver://db:1433;user=etl@tenant;password=p@ss``), what either reading hides is.
    """
    if api_keys and "hook" in url.lower():
        url = _WEBHOOK.sub(rf"\g<lead>{REDACTED}", url)
    return _hidden(url, _url_spans(url, api_keys))


def _url_spans(url: str, api_keys: bool) -> list[tuple[int, int]]:
    """What ``redact_url`` hides of ``url`` (its webhook's path aside): sorted spans, none
    overlapping, a userinfo's empty password an empty one."""
    parts = _userinfo(url)
    if parts is None:
        return _query_secrets(url, api_keys and _is_http(url))
    prefix, userinfo, rest = parts
    user, colon, _ = userinfo.partition(":")
    at = len(prefix) + len(userinfo)
    if not colon and prefix.lower() in _CONTAINER_BEFORE_AT:
        spans = []
        rest_api_keys = False
    else:
        spans = [(len(prefix) + len(user) + 1, at) if colon else (len(prefix), at)]
        rest_api_keys = api_keys and _is_http(prefix)
    spans += [(at + 1 + begin, at + 1 + end) for begin, end in _query_secrets(rest, rest_api_keys)]
    if not prefix or any(mark in userinfo for mark in "?;#"):
        # the userinfo read as parameters and properties too: an ``@`` of a value
        # (``db:1433;user=etl@tenant;password=p@ss``) hides what both readings hide
        spans += [(begin, end) for begin, end in _query_secrets(url, rest_api_keys) if begin <= at]
    return _merged(spans)


def without_credentials(url: str) -> str:
    """``url`` without its ``user:password@``: for a client that sends credentials otherwise."""
    parts = _userinfo(url)
    return url if parts is None else parts[0] + parts[2]


def url_secrets(url: str, *, user_alone: bool = True) -> tuple[str, ...]:
    """What ``redact_url`` hides, as written, percent-decoded and, for a value in braces or
    quotes, as its driver reads it (``{Pa;ss}}w0rd}`` is ``Pa;ss}w0rd``, which a driver's
    message may quote): for ``scrub``. Without ``user_alone``, not the user info of a URL that
    gives no password (``https://TOKEN@host`` is a token; ``postgresql://postgres@db`` a user
    whose password is elsewhere)."""
    values = [url[begin:end] for begin, end in _query_secrets(url, _is_http(url))]
    parts = _userinfo(url)
    secrets = []
    if parts is not None:
        user, colon, password = parts[1].partition(":")
        at = len(parts[0]) + len(parts[1])
        if colon or user_alone:
            secrets.append(password if colon else user)
            # the password and a value that two readings of its ``@`` join, as ``redact_url``
            # hides them (``db:1433;user=etl@tenant;password=p@ss``): replaced first, the longest
            joined = _url_spans(url, _is_http(url))
            secrets += [url[begin:end] for begin, end in joined if begin <= at < end]
        rest = _query_secrets(parts[2], _is_http(parts[0]))
        values += [url[at + 1 + begin : at + 1 + end] for begin, end in rest]
    secrets += [*values, *(_unquoted(value) for value in values)]
    decoded = [unquote(secret) for secret in secrets]
    return tuple(dict.fromkeys(value for value in (*secrets, *decoded) if value))


# A URL in free text: from its scheme to the first blank, quote or angle bracket. Found from its
# ``://`` (``_urls_in``): a pattern that starts with the scheme tries every letter of a long word
# and scans it to its end, a time that grows with the square of the word's length.
_SCHEME_CHARACTERS = frozenset(string.ascii_letters + string.digits + "+.-")
_URL_REST = re.compile(r"[^\s\"'<>]+")


def _urls_in(text: str) -> Iterator[tuple[int, int]]:
    r"""The (start, end) of each URL in ``text``, left to right, as the pattern
    ``[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`` finds them, and past the closing brace of a
    property's value in braces that holds a blank or a quote
    (``jdbc:sqlserver://db;password={Pa ss};databaseName=dwh``: cut at the blank, the rest of
    the password was shown), in time linear in the text."""
    done = 0
    closings = _Closings(text)
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
        end = rest.end()
        if "={" in text[at:end]:
            end = _past_braces(text, at, end, closings)
        yield start, end
        done = end
        at = text.find("://", done)


def _past_braces(text: str, at: int, end: int, closings: _Closings) -> int:
    """Where a URL that runs from ``at`` to ``end`` of ``text`` ends when a value in braces
    (``={…}``) in it runs on past ``end``: after its closing brace and what follows it up to a
    blank, on the same line. A secret's brace never closed on its line runs to the line's end
    (``;password={Pa ss`` of a text cut short); any other leaves the URL as it was."""
    line_end = -1
    while (opened := text.find("={", at, end)) >= 0:
        closed = closings.end(opened + 1)
        if line_end < end:
            line_end = text.find("\n", end)
            line_end = len(text) if line_end < 0 else line_end
        if closed < 0 or closed > line_end:
            lead = max(text.rfind(mark, at, opened) for mark in ";?&#:,/")
            name = unquote(text[lead + 1 : opened].strip())
            secret = _SECRET_PARAMETER.match(name) or is_secret_property(name)
            return line_end if secret else end
        if closed > end:
            more = _URL_REST.match(text, closed)
            end = more.end() if more else closed
        at = closed
    return end


# Free text: a name that a secret follows (``password: …``, ``api_key=…``, ``"token": "…"``),
# by the words it ends with after any prefix (``db_password``, ``X-Amz-Security-Token``,
# ``clientSecret``, ``AccountKey``, Hadoop's ``fs.s3a.secret.key``, ``?access_token=``);
# ``password_hash`` and ``token_count`` end with another word and stay shown, as does the word
# alone (``hash of the password``).
_SECRET_WORDS = (
    r"(?:password|passwd|pwd|passphrase|secret|token|api[_.-]?key|private[_.-]?key|"
    # Simba's JDBC drivers spell a private key ``pvt`` (BigQuery's ``;OAuthPvtKey=…``)
    r"pvt[_.-]?key|secret[_.-]?key|access[_.-]?key|account[_.-]?key|signature|sig|credentials?|"
    # the keys HTTP APIs take in a header (Azure's ``Ocp-Apim-Subscription-Key``, Functions'
    # ``x-functions-key``); not ``client_key`` or ``app_key``, a warehouse's dimension keys
    r"subscription[_.-]?key|functions[_.-]?key|function[_.-]?key)"
)
# A property's or a parameter's whole name that holds a secret though it ends with no secret word:
# MySQL Connector/J's multi-factor ``password1``, ``password2``, ``password3``, and ``pass``
# (only whole: ``bypass`` and ``passenger`` say nothing of a secret; in free text and in a name
# ``pass`` only before ``=``, not ``tests pass: 5``). Each holds ``pass``, as the early exits
# (``_TEXT_SECRET_WORDS``, ``_SQL_SECRET_WORDS``) ask.
_WHOLE_SECRET_NAMES = r"(?:pass|password[0-9])"
# Hadoop's settings of Azure storage name the account (and the container) after the secret word,
# so that they do not end with it: ``fs.azure.account.key.<account>.dfs.core.windows.net``,
# ``fs.azure.sas.<container>.<account>.blob.core.windows.net``,
# ``fs.azure.account.oauth2.client.secret.<account>.dfs.core.windows.net``,
# ``fs.azure.sas.fixed.token.<account>.dfs.core.windows.net`` (each with ``spark.hadoop.``
# before it, as Spark takes them).
# Matched from a name's start only, the rest of the name taken whole (``++``): tried from each
# ``fs.azure.`` of a long name, it would read the name again from each (a square of its length).
_AZURE_SECRET_SETTING = (
    r"(?:spark\.hadoop\.)?fs\.azure\."
    r"(?:account\.key|sas|account\.oauth2\.client\.secret|sas\.fixed\.token)"
    r"(?:\.[A-Za-z0-9_-]+)++"
)
# ``name=value``, ``name: value`` (not ``name::type`` nor ``name://``), the name quoted or not
# (JSON, a dict's repr, JSON quoted again inside a string: ``\"password\": \"…\"``), and the
# value quoted or not; a quoted value ends at its closing quote or the end of its line, and one in
# braces (ODBC's and SQL Server's ``PWD={a;b c}``, ``}}`` a brace in it) at its closing brace. Found
# from the start of a name only (the look-behind), each name read once: linear in the text.
_SECRET_VALUE_IN_TEXT = re.compile(
    rf"""(?ix)
    (?<![A-Za-z0-9_.-])
    (?P<lead>
        (?P<quote> \\?["']? )
        (?: {_AZURE_SECRET_SETTING} | password[0-9] | pass (?= \\?["']? \s* = )
          | [A-Za-z0-9_.-]*? {_SECRET_WORDS} ) (?P=quote)
        \s* (?: = | :(?![:/]) =?+ ) \s*
    )
    (?! \\?["']? \*\*\* )
    (?P<value>
        \{{ (?: [^}}\n] | \}}\}} )*+ \}}?
      | \\" (?: [^"\\\n] | \\[^"\n] )* (?: \\" )?
      | " (?: [^"\\\n] | \\. )* "?
      | ' (?: [^'\\\n] | \\. )* '?
      | [^\s,;'"&)}}]+
    )
    """
)
# An HTTP ``Authorization`` (or ``Proxy-Authorization``) header's credentials, after its
# scheme: ``Authorization: Bearer ***``, ``"Authorization": "Basic ***"``.
_AUTH_SCHEME = r"(?:(?:bearer|basic|digest|token|negotiate|apikey|sharedkey)\s+)"
_AUTHORIZATION = re.compile(
    rf"""(?ix)
    (?<![A-Za-z0-9_.-])
    (?P<lead>
        (?:proxy-)? authorization \\?["']? \s* [:=] \s* \\?["']?
        (?! {_AUTH_SCHEME}? \*\*\* )
        {_AUTH_SCHEME}?
    )
    [^\s,;'"&)}}\\]+
    """
)
# A JSON Web Token (three base64url parts, its header's and claims' JSON starting ``eyJ``)
# anywhere: a secret that comes with no name before it (a description that quotes a request).
# No name looks like one. (An AWS access key id is not hidden so: it says whose key, not the
# key, and a table or a topic may be named as one, ``ASIAPACIFICSALES2024``: a review.)
_BARE_TOKEN = re.compile(
    r"(?:(?<![A-Za-z0-9_-])|(?<=%[0-9A-Fa-f]{2})|(?<=\\[nrt\"/])|(?<=\\u[0-9A-Fa-f]{4}))"
    r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"
    r"(?![A-Za-z0-9_-])"
)
# A service's token that its issuer prefixes so that scanners find it (GitHub's ``ghp_``,
# ``github_pat_``, Slack's ``xoxb-``, GitLab's ``glpat-``, Databricks' ``dapi``, OpenAI's and
# Anthropic's, npm's, SendGrid's, Google's API keys): a secret with no name before it (an
# ``Authorization`` value in a facet under a harmless key, a token pasted in a description).
# Each prefix with the shape its issuer gives, so that a name that starts so stays a name
# (``ghp_table``, the topic ``xoxo-campaign-clicks-raw``, ``sk-admin-user-audit-events-v2``: a
# review; Stripe's ``sk_live_`` and Hugging Face's ``hf_`` are left out, their shapes are names'
# too). Found after a blank or a punctuation mark, and after a URL's or a JSON string's escape
# (``%3Aghp_…``, ``\nghp_…``).
_MIXED_CASE_AND_DIGIT = r"(?=[A-Za-z0-9_-]{0,200}?[0-9])(?=[A-Za-z0-9_-]{0,200}?[A-Z])"
_VENDOR_TOKEN = re.compile(
    rf"""(?x)
    (?: (?<![A-Za-z0-9_-]) | (?<=%[0-9A-Fa-f]{{2}}) | (?<=\\[nrt"/]) | (?<=\\u[0-9A-Fa-f]{{4}}) )
    (?: gh[pousr]_[A-Za-z0-9]{{36}}
      | github_pat_[A-Za-z0-9]{{22}}_[A-Za-z0-9]{{59}}
      | xox[bpoase]-[0-9]+-[0-9A-Za-z-]{{20,}}
      | xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-f0-9]{{16,}}
      | gl(?:pat|dt|rt|ptt|soat)-[A-Za-z0-9_-]{{20,}}
      | dapi[a-f0-9]{{32}}(?:-[0-9]+)?
      | sk-(?:proj|svcacct|admin)-{_MIXED_CASE_AND_DIGIT}[A-Za-z0-9_-]{{40,}}
      | sk-ant-(?:api|admin|oat)[0-9]{{2}}-[A-Za-z0-9_-]{{40,}}
      | sk-[A-Za-z0-9]{{48}}
      | npm_[A-Za-z0-9]{{36}}
      | SG\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43}}
      | AIza[0-9A-Za-z_-]{{35}}
    )
    (?![A-Za-z0-9])
    """
)
_VENDOR_PREFIX = re.compile(r"gh[pousr]_|github_pat_|gl[a-z]+-")
"""What ``_VENDOR_TOKEN``'s GitHub and GitLab tokens need (``_may_hold_a_vendor_token``)."""
_VENDOR_LITERALS = ("xox", "xapp-", "dapi", "sk-", "npm_", "SG.", "AIza")
"""What each of its other tokens starts with."""
_VENDOR_TOKEN_LENGTH = 24


def _may_hold_a_vendor_token(text: str) -> bool:
    """Whether ``text`` holds what ``_VENDOR_TOKEN`` needs, in a text as long as the shortest
    token: a literal prefix, or GitHub's or GitLab's. A search per literal, the pattern only
    after ``gh`` or ``gl``: one pattern of them all read twice as slow (a name of 25 letters)."""
    if len(text) < _VENDOR_TOKEN_LENGTH:
        return False
    for prefix in _VENDOR_LITERALS:
        if prefix in text:
            return True
    if "gh" not in text and "gl" not in text and "github_pat_" not in text:
        return False
    return _VENDOR_PREFIX.search(text) is not None


# ``Bearer <token>`` anywhere: a token of at least 8 characters with a digit or one of ``._~+/``
# (a JWT, an opaque key), not an English word (``bearer tokens are…``).
_BEARER = re.compile(
    r"(?i)(?<![A-Za-z0-9_-])(?P<lead>bearer\s+)(?!\*\*\*)"
    r"(?=[A-Za-z0-9._~+/-]*[0-9._~+/])[A-Za-z0-9._~+/-]{8,}=*"
)
# A PEM private key (``-----BEGIN RSA PRIVATE KEY----- … -----END RSA PRIVATE KEY-----``, an
# OpenSSH or PGP one): its body is hidden, to its END line or, without one, to the end.
_PRIVATE_KEY_BLOCK = re.compile(
    r"(?s)(?P<begin>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)"
    r".*?(?P<end>-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
)


# A command line's long option that a secret follows after a blank: ``--password pw``,
# ``--db-password "pw"``, ``--api-key k`` (``--password=pw`` is a ``name=value``); and the
# password of ``curl -u etl:pw`` (``--user``). A value that starts as an option does not
# (``--password --user etl``), nor a name that ends with another word (``--password-stdin``).
_SECRET_OPTION = re.compile(
    rf"""(?ix)
    (?<![A-Za-z0-9_.-])
    (?P<lead> -- [A-Za-z0-9_.-]*? {_SECRET_WORDS} [ \t]+ )
    (?! \*\*\* | - )
    (?P<value> " (?: [^"\\\n] | \\. )* "? | ' (?: [^'\\\n] | \\. )* '? | [^\s"']+ )
    """
)
_USER_OPTION = re.compile(
    r"(?<![A-Za-z0-9_-])(?P<lead>(?:-u[ \t]+|--user(?:[ \t]+|=))[\"']?"
    r"(?![0-9]+:)"  # ``docker run -u 1000:1000``: a user and a group id, no password
    r"[^\s:\"'@/]+:)(?!\*\*\*)[^\s\"']+"
)


# The password that MySQL's clients take glued to ``-p`` (``mysql -u etl -ps3cret dwh``), the
# one ``sshpass -p`` takes, and SQL Server's ``sqlcmd``/``bcp -P``: only after one of those
# commands on the same line, where ``-p`` does not mean a port (``psql -p 5432``, ``ssh -p 22``,
# ``mysql -P 3306``), within 16 arguments of the command (a text of ``mysql`` words is not read
# to its end from each).
_ARGUMENTS = r"""(?:[ \t]+(?:'[^'\n]*'|"[^"\n]*"|[^\s|;&'"]+)){0,16}?"""
"""Up to 16 arguments of a command, a quoted one whole (``sqlcmd -Q "…; …" -P …``)."""

_PASSWORD_FLAG = re.compile(
    r"(?P<lead>\b(?:(?:mysql|mariadb)(?:dump|admin|import|check|-dump|-admin|-import)?"
    rf"{_ARGUMENTS}[ \t]+-p|sshpass[ \t]+-p[ \t]*"
    rf"|(?:sqlcmd|osql|bcp){_ARGUMENTS}[ \t]+-P[ \t]*))(?!\*\*\*|'\*\*\*|\"\*\*\*)"
    r"(?:'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"|;&]+)"
)


_PASSWORD_FLAG_COMMANDS = ("mysql", "mariadb", "sshpass", "sqlcmd", "osql", "bcp")
"""The commands whose ``-p`` (``-P``) ``_PASSWORD_FLAG`` reads a password after."""


def _hidden_value(match: re.Match[str]) -> str:
    """The lead of ``_SECRET_VALUE_IN_TEXT``'s match, and its value as ``***`` in its quotes."""
    value = match.group("value")
    for quote in ('\\"', '"', "'"):
        if value.startswith(quote):
            closed = len(value) >= 2 * len(quote) and value.endswith(quote)
            return f"{match.group('lead')}{quote}{REDACTED}{quote if closed else ''}"
    return f"{match.group('lead')}{REDACTED}"


_MEMO_LENGTH = 512
"""Texts up to this long are redacted once each (``_redacted_short``): a plan redacts the same
producers, namespaces and property values again and again (a tenth of planning dbt's events)."""


def redact_event_text(text: str) -> str:
    """A stored event's JSON text (whole or cut short) as it may be shown: without any URL's
    credentials or secret parameter (``redact_text``) and without the value of a field whose
    name says it holds a secret (``"password": "…"``). JSON's escapes of printable ASCII and of
    ``/`` are read first (``postgres:\\/\\/etl:pw@db``, ``"\\u0070assword"``, ``\\u003A``: a
    quarantined text is kept as sent, and the patterns did not see through them: a probe of the
    page; a review), but ``\\u0022`` and ``\\u005C``, which would end a value early or pair
    with the next backslash; a token found before (``\\u0041ghp_…``) stays hidden."""
    if "\\" in text:
        if "eyJ" in text:
            text = _BARE_TOKEN.sub(REDACTED, text)
        if _may_hold_a_vendor_token(text):  # before a read escape glues a letter to it
            text = _VENDOR_TOKEN.sub(REDACTED, text)
        text = _JSON_ESCAPE.sub(_read_escape, text)
    return _SECRET_FIELD.sub(lambda match: f'{match.group(1)}"{REDACTED}"', redact_text(text))


_JSON_ESCAPE = re.compile(r"\\\\|\\u00([2-7][0-9A-Fa-f])|\\/")
"""An escaped backslash (kept as it is: ``\\\\u0070`` is no escape of ``p``), an escape of a
printable ASCII character, or an escaped ``/``, each read once from its start."""


def _read_escape(match: re.Match[str]) -> str:
    found = match.group(0)
    if found == "\\/":
        return "/"
    if match.group(1) is None:  # an escaped backslash
        return found
    char = chr(int(match.group(1), 16))
    return found if char in '"\\' else char


# The value runs to its closing quote, past escaped ones (``"pa\"ss"``), or to the text's end
# (an event cut short, or an excerpt).
_SECRET_FIELD = re.compile(
    r'("[^"]*(?:password|secret|token|api_?key|authorization|credential)[^"]*"\s*:\s*)'
    r'"(?:[^"\\]|\\.)*\\?(?:"|$)',
    re.IGNORECASE | re.DOTALL,
)


def redact_text(text: str) -> str:
    """``_redact_text(text)``, memoised for short texts (a long one, a description or a
    statement, is rarely met twice and would hold the memo's memory). A text that holds nothing
    any pattern needs (most names of fields and tables) is given back at once, without taking a
    place in the memo: a plan redacts more distinct names than the memo holds, and a memo that
    overflows in the order it is filled keeps nothing it is asked for again."""
    if not _may_hold_a_secret(text):
        return text
    if len(text) <= _MEMO_LENGTH:
        return _redacted_short(text)
    return _redact_text(text)


def _may_hold_a_secret(text: str) -> bool:
    """Whether ``text`` holds what some pattern of ``_redact_text`` needs. (``-----BEGIN``
    holds ``--``; no character but ``B`` lowers to a ``b``: a text without either is not
    lowered.)"""
    return (
        "=" in text
        or ":" in text
        or "@" in text
        or "--" in text
        or " -p" in text
        or " -P" in text
        or "eyJ" in text
        or (("b" in text or "B" in text) and "bearer" in text.lower())
        or _may_hold_a_vendor_token(text)
    )


def _redact_text(text: str, *, name: bool = False) -> str:
    """``text`` with every URL in it as ``redact_url`` shows it, the password of an Oracle thin
    URL (``jdbc:oracle:thin:scott/…@db``), the body of a PEM private key, an ``Authorization``
    header's or a ``Bearer`` token, and the value of every secret name (``password=…``,
    ``api_key: …``, ``"token": "…"``, Azure's ``AccountKey=…``) as ``***``: for text that quotes
    what a producer sent (a namespace, a dataset's or a job's name, a description, a facet's
    value) on its way to a report, a log or the catalog. Linear in the text, and the same text
    once more redacted is the same."""
    # what every pattern needs: a text without any is shown as it is, at once
    if not _may_hold_a_secret(text):
        return text
    if "-----BEGIN" in text:
        text = _PRIVATE_KEY_BLOCK.sub(rf"\g<begin>{REDACTED}\g<end>", text)
    if "eyJ" in text:
        text = _BARE_TOKEN.sub(REDACTED, text)
    if _may_hold_a_vendor_token(text):
        text = _VENDOR_TOKEN.sub(REDACTED, text)
    if "://" in text:
        parts: list[str] = []
        done = 0
        for start, end in _urls_in(text):
            parts += (text[done:start], redact_url(text[start:end], api_keys=not name))
            done = end
        parts.append(text[done:])
        text = "".join(parts)
    # The rest are patterns of words: in an ASCII text, one without any of their words is
    # shown as it is without running them (a namespace or a job's name in each gap of a plan;
    # outside ASCII, a case-insensitive pattern's letters match more than their lower case).
    lowered = text.lower() if text.isascii() else None
    if "@" in text and (lowered is None or "oracle:" in lowered):
        text = _hide_oracle_passwords(text)
    if lowered is None or "authorization" in lowered:
        text = _AUTHORIZATION.sub(lambda match: f"{match.group('lead')}{REDACTED}", text)
    if lowered is None or "bearer" in lowered:
        text = _BEARER.sub(lambda match: f"{match.group('lead')}{REDACTED}", text)
    if "-u" in text or "--user" in text:
        text = _USER_OPTION.sub(lambda match: f"{match.group('lead')}{REDACTED}", text)
    if (" -p" in text or " -P" in text) and (
        lowered is None or any(command in lowered for command in _PASSWORD_FLAG_COMMANDS)
    ):
        text = _PASSWORD_FLAG.sub(lambda match: f"{match.group('lead')}{REDACTED}", text)
    if lowered is not None:
        for word in _TEXT_SECRET_WORDS:  # a loop: ``any`` of a generator costs twice as much
            if word in lowered:
                break
        else:
            return text
    if "--" in text:
        text = _SECRET_OPTION.sub(_hidden_value, text)
    if name:
        return _SECRET_PARAMETER_IN_NAME.sub(_hidden_value, text)
    return _SECRET_VALUE_IN_TEXT.sub(_hidden_value, text)


_TEXT_SECRET_WORDS = ("pass", "pwd", "secret", "token", "key", "sig", "credential", "azure.sas")
"""A word each of ``_SECRET_WORDS``' names (and ``_AZURE_SECRET_SETTING``'s) holds: a text
without any holds no secret name."""


_redacted_short = lru_cache(maxsize=8192)(_redact_text)


def redact_name(name: str, *, properties: bool = True) -> str:
    """A dataset's name as its entity is named: what ``redact_text`` hides, but a ``name=value``
    (or ``name: value``) pair only as a parameter, after ``?``, ``&``, ``;`` or a blank
    (``orders?sig=…``, a JDBC URL's ``;password=…``, libpq's ``host=db password=…``), its
    value ending at its closing quote, or unquoted at the next parameter, ``#`` or a blank; and
    with ``properties`` (a database's dataset: ``PATH_SCHEMES``' and Kafka's names are keys,
    topics and files), the JDBC connection properties of its database part as
    ``redact_properties`` hides them: a list that starts before the name's first ``/`` (DB2's
    ``SAMPLE:apiKey=…;.SCH.T``, Teradata's ``DATABASE=d,PASSWORD=…``), each value whole to its
    own ``;`` (or the ``,`` of the next ``name=``), a ``/`` in it included
    (``password=Ab/cd==;``). A path's ``token=eth`` segment is a partition,
    ``raw,token=eth/x`` an object's key and ``public.secret=1`` a table: hidden, their values
    and all that followed them, two tables were one entity (``raw/token=eth/transfers`` and
    ``raw/device_token=ios/sessions``)."""
    if properties and "=" in name:
        end = name.find("/")
        end = len(name) if end < 0 else end
        if (found := _NAME_PROPERTIES.search(name, 0, end)) is not None:
            name = f"{name[: found.start()]}{redact_properties(name[found.start() :])}"
    if not _may_hold_a_secret(name):
        return name
    if len(name) <= _MEMO_LENGTH:
        return _name_redacted_short(name)
    return _redact_text(name, name=True)


_name_redacted_short = lru_cache(maxsize=8192)(partial(_redact_text, name=True))


PATH_SCHEMES = (
    frozenset({"s3", "s3a", "s3n", "gs", "gcs", "hdfs", "file", "http", "https", "ftp", "ftps"})
    | {"sftp", "webdav", "webdavs", "wasbs", "abfss", "wasb", "abfs"}
    # the file systems Hadoop and Spark name a path with: HDFS's federation and REST gateways,
    # Ozone, Azure Data Lake Gen1, Databricks' DBFS, the object stores of IBM, Oracle, Alibaba,
    # Huawei, Tencent and Cloudflare, MapR, JuiceFS, Alluxio, lakeFS, Hadoop archives
    | {"viewfs", "webhdfs", "swebhdfs", "ofs", "o3fs", "adl", "dbfs", "cos", "cosn", "oci"}
    | {"oss", "obs", "r2", "maprfs", "jfs", "alluxio", "lakefs", "har"}
)
"""Schemes whose namespaces carry paths of files or objects (and whose datasets' names are
paths or keys, not a database's names)."""
_NAMES_WITHOUT_PROPERTIES = PATH_SCHEMES | {"kafka"}


def names_hold_properties(namespace: str) -> bool:
    """Whether the datasets of ``namespace`` may carry a JDBC URL's connection properties in
    their names (DB2's ``SAMPLE:password=…;.SCH.T``): a database's, not an object store's, a
    file system's or Kafka's, whose ``raw,token=eth/x`` is a key or a topic."""
    scheme, sep, _ = namespace.strip().partition("://")
    return not sep or scheme.lower() not in _NAMES_WITHOUT_PROPERTIES


def redact_dataset_name(namespace: str, name: str) -> str:
    """A dataset's name as its entity, its flows and its ``openLineageDataset`` show it:
    ``redact_name``, and where its namespace is an HTTP(S) site, what a URL shown hides (an
    API's ``?key=``, as the dataset's property showed it while its entity's name kept it) and
    a chat webhook's path, which is its secret: ``https://hooks.slack.com`` + ``/services/T…/
    B…/<secret>`` kept it in the entity's name, its property and its flows (a probe of
    secrets)."""
    shown = redact_name(name, properties=names_hold_properties(namespace))
    lead = namespace.lstrip()[:8].lower()
    if not lead.startswith(("http://", "https://")):
        return shown
    shown = _redact_query(shown, True) if "?" in shown else shown  # an HTTP API's query
    site = namespace.strip().rstrip("/")
    joined = f"{site}{'' if shown.startswith('/') else '/'}{shown}"
    found = _WEBHOOK.match(joined)
    if found is None:
        return shown
    offset = len(joined) - len(shown)  # where ``shown`` starts in ``joined``
    start, end = max(found.end("lead") - offset, 0), found.end() - offset
    return f"{shown[:start]}{REDACTED}{shown[end:]}"


# After ``?``, ``&``, ``;`` or a blank, ``name=value`` or ``name: value``. A name starts at a
# non-blank (the blanks after ``?&;`` taken once, possessively): tried from each blank of a run
# with a ``\s*`` before the name, a run of blanks was read again from each of its blanks (a
# square of its length: 20,000 blanks took 47 s).
_SECRET_PARAMETER_IN_NAME = re.compile(
    rf"""(?ix)
    (?P<lead> (?: (?<=[?&;]) \s*+ | (?<=\s) )
        (?: password[0-9] | pass (?= \s* = ) | [A-Za-z0-9_.-]*? {_SECRET_WORDS} ) \s* [=:] \s* )
    (?! \*\*\* | ["']\*\*\* )
    (?P<value>
        \{{ (?: [^}}\n] | \}}\}} )*+ \}}?
      | " (?: [^"\\\n] | \\. )* "?
      | ' (?: [^'\\\n] | \\. )* '?
      | [^\s&;#]+
    )
    """
)
_NAME_PROPERTIES = re.compile(r"[:,](?=\s*+[A-Za-z_][A-Za-z0-9_.-]*+\s*+=)")
"""Where the JDBC properties of a name's database part start: at its first ``:`` or ``,`` that
a ``name=`` follows (DB2's ``SAMPLE:apiKey=…;``, Teradata's ``DATABASE=d,PASSWORD=…``),
searched before its first ``/`` only (an object's key: ``raw/a,token=eth/x``)."""

_PROPERTY_NAME = re.compile(r"\s*+(?P<name>[A-Za-z_][A-Za-z0-9_.-]*+)\s*+=")
_NEXT_LISTED_PROPERTY = re.compile(r"[,&](?=\s*+[A-Za-z_][A-Za-z0-9_.-]*+\s*+=)")
"""A ``,`` or ``&`` that a ``name=`` follows: the end of a value in Teradata's list
(``DATABASE=sales,PASSWORD=…``); any other ``,`` or ``&`` is the value's own."""
_SECRET_PROPERTY_NAMES = frozenset({"logdata"})
"""JDBC properties whose value is a secret that no secret word names: Teradata's ``LOGDATA``
(an LDAP or a Kerberos sign-in's password)."""


def property_spans(properties: str) -> Iterator[tuple[int, int, str | None, int, int]]:
    """The items of a JDBC URL's connection properties (``user=etl;password=…;``, Teradata's
    ``DATABASE=sales,PASSWORD=…``, after one leading ``;``, ``:``, ``,``, ``&`` or ``/``): for
    each, its start, its end, its name (``None`` for an item that is no ``name=value``) and its
    value's start and end. A value ends only at a ``;``, or at a ``,`` or ``&`` that another
    ``name=`` follows; a ``{…}`` (SQL Server's and ODBC's braces, ``}}`` a brace in it) or a
    quoted value at its closing brace or quote, whatever it holds (``password={a;b}``). In time
    linear in the text (``_Closings``)."""
    for start, end, name, value_start, value_end, _ in _property_items(properties):
        yield start, end, name, value_start, value_end


def _property_items(
    properties: str,
) -> Iterator[tuple[int, int, str | None, int, int, tuple[int, int, bool] | None]]:
    """``property_spans``' items, each with the span of its quoted value (from its ``{`` to
    after its ``}``) and whether it is closed, or None for a value that is not quoted.

    A quote never closed is a secret's to the text's end (``password={Pa;ss`` of a text cut
    short: all of it may be the password); any other property's is no quote, its value ends as
    an unquoted one does (``databaseName={dwh;password=…``: the password is still found)."""
    at = 1 if properties[:1] in (";", ":", ",", "&", "/") else 0
    length = len(properties)
    closings = _Closings(properties)
    while at <= length:
        found = _PROPERTY_NAME.match(properties, at)
        name = found.group("name") if found else None
        value = found.end() if found else at
        opened = _BLANKS.match(properties, value).end()  # type: ignore[union-attr]
        quoted: tuple[int, int, bool] | None = None
        end = -1
        if properties[opened : opened + 1] in _CLOSINGS:
            closed = closings.end(opened)
            if closed >= 0:
                quoted, end = (opened, closed, True), _unquoted_end(properties, closed)
            elif name is not None and is_secret_property(name):
                quoted, end = (opened, length, False), length
        if end < 0:
            end = _unquoted_end(properties, value)
        yield at, end, name, value, end, quoted
        at = end + 1


def _unquoted_end(text: str, start: int) -> int:
    """Where a JDBC property's value that goes on at ``start`` ends: its ``;``, or the ``,`` or
    ``&`` before the next ``name=``."""
    semicolon = text.find(";", start)
    semicolon = len(text) if semicolon < 0 else semicolon
    listed = _NEXT_LISTED_PROPERTY.search(text, start, semicolon)
    return listed.start() if listed else semicolon


_CLOSINGS = {"{": "}", "'": "'", '"': '"'}
"""What opens a quoted property's value and what closes it (doubled, it is the character)."""


class _Closings:
    """Where the quoted values of one text close, each search from a quote's opening: a quote
    that no closing follows is known as such for every later opening of its kind, and a ``{``
    inside the last brace's value closes where it does (a ``{`` is in no run of ``}``: the
    runs after it and their ``}}`` pairs are the same), so that a text of unclosed ``={`` is
    read once, not once per ``{``. (A quote after an unclosed one of its kind is taken for
    unclosed too: its value then ends as an unquoted one does, or, a secret's, at the end.)"""

    def __init__(self, text: str) -> None:
        self.text = text
        self.unclosed_after: dict[str, int] = {}  # a closing, and an opening none follows
        self.brace = (-1, -1)  # the last ``{`` searched from, and the end of its value

    def end(self, opened: int) -> int:
        """The end (after its closing) of the value quoted at ``opened``, -1 if never closed."""
        closing = _CLOSINGS[self.text[opened]]
        if self.unclosed_after.get(closing, len(self.text)) < opened:
            return -1
        if closing == "}" and self.brace[0] < opened < self.brace[1]:
            return self.brace[1]  # the same ``}`` closes a ``{`` inside the last one's value
        at = opened + 1
        while (at := self.text.find(closing, at)) >= 0 and self.text.startswith(closing * 2, at):
            at += 2  # ``}}`` or ``''``: the character itself
        if at < 0:
            self.unclosed_after[closing] = opened
            return -1
        if closing == "}":
            self.brace = (opened, at + 1)
        return at + 1


def masked_quoted_values(properties: str) -> str:
    """``properties`` (``property_spans``') with the characters inside each value in braces or
    quotes as ``_``, each offset kept: what is left may be read for a URL's ``@``, ``:``, ``/``
    or ``?`` (``;password={Pa:ss@w0rd}`` holds no user info's end, ``{a/b}`` no path)."""
    parts: list[str] = []
    done = 0
    for *_, quoted in _property_items(properties):
        if quoted is not None:
            opened, end = quoted[0] + 1, quoted[1] - 1 if quoted[2] else quoted[1]
            parts += (properties[done:opened], "_" * (end - opened))
            done = end
    return "".join(parts) + properties[done:] if parts else properties


def _unquoted(value: str) -> str:
    """A property's value as its driver reads it: without its braces or quotes, ``}}`` (or
    ``''``) as one, the opening alone dropped from one never closed (a text cut short); as
    written when it is not quoted."""
    value = value.strip()
    closing = _CLOSINGS.get(value[:1])
    if closing is None:
        return value
    doubled = closing * 2
    inner = value[1:-1]
    if len(value) >= 2 and value.endswith(closing) and closing not in inner.replace(doubled, ""):
        return inner.replace(doubled, closing)
    if closing not in value[1:].replace(doubled, ""):  # never closed
        return value[1:].replace(doubled, closing)
    return value


_BLANKS = re.compile(r"\s*+")


def is_secret_property(name: str) -> bool:
    """Whether a JDBC connection property named ``name`` holds a secret as its value."""
    return names_a_secret(name) or name.strip().lower() in _SECRET_PROPERTY_NAMES


def redact_properties(properties: str) -> str:
    """A JDBC URL's connection properties (``user=db2inst1;password=…;``, Teradata's
    ``DATABASE=sales,PASSWORD=…``, the first after one ``;``, ``:``, ``,``, ``&`` or ``/`` or at
    the text's start), with the value of each whose name names a secret as ``***``, all of it
    (``password=a#b c&d;``, ``password={a;b}``: ``property_spans``)."""
    if "=" not in properties:
        return properties
    parts: list[str] = []
    done = 0
    for _, _, name, start, end in property_spans(properties):
        if name is not None and is_secret_property(name):
            lead = len(properties[start:end]) - len(properties[start:end].lstrip())
            if properties.startswith(REDACTED, start + lead) and start + lead + 3 == end:
                continue
            parts += (properties[done : start + lead], REDACTED)
            done = end
    return "".join(parts) + properties[done:] if parts else properties


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every non-empty secret replaced by ``***`` (the longest first), also as a
    JSON string writes it (a server's answer that quotes the request quotes ``"`` and ``\\``)."""
    spelled: dict[str, int] = {}  # each spelling, and the length of the secret it spells
    for secret in secrets:
        if secret:
            for spelling in (
                secret,
                json.dumps(secret, ensure_ascii=False)[1:-1],
                json.dumps(secret)[1:-1],
                # as a server may quote it back: URL-encoded (a query, a form), with ``/``
                # escaped (JSON in a page), with Gson's escapes of ``<>&='``, as HTML
                urllib.parse.quote(secret, safe=""),
                urllib.parse.quote_plus(secret, safe=""),
                json.dumps(secret)[1:-1].replace("/", "\\/"),
                "".join(_GSON_ESCAPES.get(char, char) for char in secret),
                html.escape(secret),
            ):
                spelled[spelling] = max(spelled.get(spelling, 0), len(secret))
    for secret in sorted(spelled, key=len, reverse=True):
        if len(secret) >= _SHORT_SECRET:
            text = text.replace(secret, REDACTED)
        else:  # a short one only where it stands alone: "unknown" must not read "un***nown"
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", REDACTED, text)
    return _without_cut_secrets(
        text, [(each, length) for each, length in spelled.items() if len(each) >= _SHORT_SECRET]
    )


def _without_cut_secrets(text: str, secrets: list[tuple[str, int]]) -> str:
    """``text`` without the beginning of a secret where a server or a proxy that quotes the
    request cut its quote inside it (``X-BD-ApiKey: SUPERSECRE``), starting a word: each
    spelling of a secret with the length of the secret itself (16 characters or more: a key or
    a token; less: a password). More than two thirds of a secret (and eight characters) are a
    cut whatever follows, and so are eight characters of a key that read as no word (digits,
    symbols, capitals inside). Otherwise, and for less, only before what ends a cut text (its
    end, an ellipsis, a bracket, a tag, the end of a JSON string), and a password's beginning under
    eight characters only at the very end or before an ellipsis: a word of the answer may
    begin a password (``"airflow"`` of ``airflow123``, ``postgres`` of ``postgres_admin``,
    ``blindata.example.com`` of ``blindata2024``). Linear in the text: each beginning is found
    once, and the text is joined once."""
    spans: list[tuple[int, int]] = []
    for spelling, length_of_secret in secrets:
        key = length_of_secret >= _KEY_LENGTH
        most = max(_CUT_LONG, 2 * len(spelling) // 3 + 1)  # more than two thirds
        start = text.find(spelling[:_CUT_PREFIX])
        while start != -1:
            length = _CUT_PREFIX
            while (
                length < len(spelling)
                and text[start + length : start + length + 1] == spelling[length]
            ):
                length += 1
            end = start + length
            if (
                length < len(spelling)
                and (start == 0 or not text[start - 1].isalnum())
                and (
                    length >= most
                    or (key and length >= _CUT_LONG and not _WORD.fullmatch(spelling, 0, length))
                    or _cut_here(text, end, length, key)
                )
            ):
                spans.append((start, end))
            start = text.find(spelling[:_CUT_PREFIX], end)
    if not spans:
        return text
    parts, done = [], 0
    for start, end in sorted(spans):
        if start < done:
            continue
        parts += [text[done:start], REDACTED]
        done = end
    return "".join([*parts, text[done:]])


_WORD = re.compile(r"[a-z][a-z_-]*|[A-Z][a-z][a-z_-]*")
"""A beginning that reads as a word (``postgres``, ``warehouse_``, ``Welcome``): a text may
hold it without quoting the secret."""


def _cut_here(text: str, end: int, length: int, key: bool) -> bool:
    """Whether a beginning of ``length`` characters of a secret that ``text`` has up to ``end``
    was cut there."""
    if key or length >= _CUT_LONG:
        return _CUT_HERE.match(text, end) is not None
    return _CUT_END.match(text, end) is not None


_CUT_PREFIX = 4
"""The shortest beginning of a secret hidden where a text is cut."""

_CUT_LONG = 8
"""A password's beginning this long is a cut before what ends a cut text."""

_KEY_LENGTH = 16
"""Secrets this long are keys and tokens: no word of an answer begins like them."""

_CUT_END = re.compile(r"\s*\Z|\.\.\.|…|\\u2026|&hellip;")
"""Where a short beginning of a password is a cut: the very end of the text, an ellipsis."""

_CUT_HERE = re.compile(
    r"""[\s"'.…]*\Z|\.\.\.|…|\\u2026|&hellip;|&\#|&quot;|\s*[(\[]|</?[A-Za-z]|"\s*[,}\]]"""
)
"""Where a quote was cut: the text's end (but for blanks, a closing quote, an ellipsis), an
ellipsis (as JSON or HTML writes one too), a bracket (``[truncated]``, ``(cut)``), a tag, the
end of a JSON string."""


_GSON_ESCAPES = {char: f"\\u{ord(char):04x}" for char in "<>&='"}
"""The characters Gson writes as a unicode escape in a JSON string, as HTML-safe."""

_SHORT_SECRET = 8
"""Secrets shorter than this are hidden where they stand alone, not inside a longer word."""


# A string literal that a keyword says is a secret: PostgreSQL's and Snowflake's ``PASSWORD '…'``
# (``PASSWORD = '…'``, ``OPTIONS (password '…')``), MySQL's ``IDENTIFIED [WITH plugin] BY '…'``,
# Redshift's ``CREDENTIALS '…'``, ``ACCESS_KEY_ID '…'``, ``SECRET_ACCESS_KEY '…'`` and
# ``SESSION_TOKEN '…'``, Snowflake's ``AWS_KEY_ID = '…'``, ``AWS_SECRET_KEY``, ``AWS_TOKEN``,
# ``AZURE_SAS_TOKEN`` and ``MASTER_KEY``, and a column compared with one (``WHERE password =
# '…'``): the code before the literal ends with one of these keywords, or with a name that ends
# with a secret word of free text, quoted or not (``_SECRET_WORDS``: ``MASTER_PASSWORD = '…'``,
# ``"connection-password" = '…'``, which covers most of the keywords above). An option's key
# written as a literal (``'password' = '…'``) is found by ``_scanned`` from the literal before.
# Used by the scan of a statement that does not tokenize (``_scanned``).
_SECRET_KEYWORD_BEFORE = re.compile(
    rf"""(?ix)
    (?: \b(?:
            identified \s+ (?:with \s+ \S+ \s+)? (?:by|as)
          | access_key_id | aws_key_id | aws_access_key_id | master_key
        )
      | {_SECRET_WORDS} ["`\]]?
    )
    \s* (?: = \s* )? (?: [enbx] | u& )? \Z
    """
)
_KEY_TO_VALUE = re.compile(r"\s*(?:=>?|:=)?\s*")
"""What may come between an option's key and its value."""
# The same keywords, as sqlglot's tokens spell them (upper case): a literal after one of them
# (past an ``=``, ``=>``, ``:=`` or ``(``: ``PASSWORD = PASSWORD('…')``) is a secret.
_SECRET_KEYWORDS = frozenset(
    {
        "PASSWORD",
        "SSLPASSWORD",
        "PASSWD",
        "PWD",
        "CREDENTIALS",
        "SECRET",
        "CLIENT_SECRET",
        "TOKEN",
        "APIKEY",
        "API_KEY",
        "PRIVATE_KEY",
        "ACCESS_KEY_ID",
        "SECRET_ACCESS_KEY",
        "SESSION_TOKEN",
        "AWS_KEY_ID",
        "AWS_SECRET_KEY",
        "AWS_TOKEN",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AZURE_SAS_TOKEN",
        "MASTER_KEY",
        "SAS_TOKEN",
        "SECRET_STRING",  # Snowflake's CREATE SECRET … TYPE = GENERIC_STRING
    }
)
# Functions and procedures that take a secret as a positional argument (0-based): pgcrypto's
# ``pgp_sym_encrypt(data, 'key')`` and ``encrypt(data, 'key', 'aes')``, MySQL's
# ``AES_ENCRYPT(s, 'key')``, Snowflake's ``ENCRYPT(v, 'passphrase')``, Oracle's
# ``DBMS_CLOUD.CREATE_CREDENTIAL('c', 'user', 'password')``, SQL Server's
# ``sp_addlinkedsrvlogin 'srv', 'false', NULL, 'user', 'password'`` (called without parentheses)
# and ``sp_addlogin 'login', 'password'``. A literal in such a place is a secret; the others
# (the data, the algorithm, a server's name) stay as written.
_SECRET_ARGUMENTS: dict[str, frozenset[int]] = {
    **dict.fromkeys(
        (
            *(
                "PGP_SYM_ENCRYPT",
                "PGP_SYM_DECRYPT",
                "PGP_SYM_ENCRYPT_BYTEA",
                "PGP_SYM_DECRYPT_BYTEA",
            ),
            *("ENCRYPT", "DECRYPT", "ENCRYPT_IV", "DECRYPT_IV", "ENCRYPT_RAW", "DECRYPT_RAW"),
            *("AES_ENCRYPT", "AES_DECRYPT", "DES_ENCRYPT", "DES_DECRYPT", "TRY_DECRYPT"),
            *("TRY_DECRYPT_RAW", "SP_ADDLOGIN"),
        ),
        frozenset({1}),
    ),
    "CREATE_CREDENTIAL": frozenset({2}),
    # PostgreSQL's pgcrypto: the password crypt hashes, hmac's key, a private key's passphrase
    "CRYPT": frozenset({0}),
    "HMAC": frozenset({1}),
    "PGP_PUB_DECRYPT": frozenset({2}),
    "PGP_PUB_DECRYPT_BYTEA": frozenset({2}),
    "SP_ADDLINKEDSRVLOGIN": frozenset({4}),
    # ClickHouse's table functions ``postgresql|mysql(host, db, table, user, password)``, and
    # ``remote(host, db, table, user, password)`` or ``remote(host, db.table, user, password)``
    # (the user of the first shown as ``***`` too: no lineage in it); its object stores' keys:
    # ``s3(path, key_id, secret, …)`` (also the S3 engine's), ``s3Cluster(cluster, path, key_id,
    # secret, …)``, ``gcs(path, hmac_key, hmac_secret, …)``, ``azureBlobStorage(url, container,
    # path, account, account_key, …)`` (a probe of secrets)
    **dict.fromkeys(("POSTGRESQL", "MYSQL"), frozenset({4})),
    **dict.fromkeys(("REMOTE", "REMOTESECURE"), frozenset({3, 4})),
    **dict.fromkeys(("S3", "GCS", "COSN", "OSS"), frozenset({2})),
    "S3CLUSTER": frozenset({3}),
    "AZUREBLOBSTORAGE": frozenset({4}),
    # Trino's HMACs (the key), BigQuery's ``KEYS.ADD_KEY_FROM_RAW_BYTES(keyset, type, key)``
    **dict.fromkeys(("HMAC_MD5", "HMAC_SHA1", "HMAC_SHA256", "HMAC_SHA512"), frozenset({1})),
    "ADD_KEY_FROM_RAW_BYTES": frozenset({2}),
    "SP_PASSWORD": frozenset({0, 1}),
}
_PROCEDURE_CALLS = frozenset({"EXEC", "EXECUTE", "CALL"})
"""What may come before a procedure called without parentheses, at a statement's start."""
# A name that ends with a secret word of free text (``_SECRET_WORDS``) names a secret too, as in
# free text ("a name that ends with one, as db_password"): MySQL's ``MASTER_PASSWORD`` and
# ``SOURCE_PASSWORD``, Trino's quoted ``"connection-password"``, a Flink or Spark option
# ``'password' = '…'`` written as a literal, a column ``db_password``. ``password_hash`` ends with
# another word and names no secret.
_SECRET_NAME_END = re.compile(rf"(?i){_SECRET_WORDS}\Z")
_WHOLE_SECRET_NAME = re.compile(rf"(?i){_WHOLE_SECRET_NAMES}")
_AZURE_SECRET_NAME = re.compile(rf"(?i){_AZURE_SECRET_SETTING}\Z")


def _is_secret_name(name: str) -> bool:
    """Whether ``name`` ends with a secret word, or is one of Azure's secret settings."""
    return (
        _SECRET_NAME_END.search(name) is not None
        or _AZURE_SECRET_NAME.match(name) is not None
        or _WHOLE_SECRET_NAME.fullmatch(name) is not None
    )


def _names_a_secret(word: str) -> bool:
    """Whether a keyword, a name or an option's literal key says that the literal after it is
    a secret."""
    return word in _SECRET_KEYWORDS or _is_secret_name(word)


# One of them anywhere, or ``IDENTIFIED``: where a statement that does not tokenize stops being
# shown (``_unread``).
_SECRET_KEYWORD_ANYWHERE = re.compile(
    r"(?i)(?<![A-Za-z0-9_])(?:"
    + "|".join(sorted((*_SECRET_KEYWORDS, "IDENTIFIED"), key=len, reverse=True))
    + r")(?![A-Za-z0-9_])"
)
# What a statement must hold for any part of it to be a secret: a keyword above or a name of
# ``redact_text`` (each holds one of these), a URL, an Oracle thin URL, a header, a PEM key. Most
# statements hold none and are shown as they are without being read (benchmarks/sql.py): a
# dimension's ``customer_key`` or T-SQL's ``@variable`` is no reason to read one.
_KEYS = ("api", "private", "pvt", "access", "account", "subscription", "functions", "function")
_SQL_SECRET_WORDS = (
    *("pass", "pwd", "identified", "credential", "secret", "token", "sig", "authorization"),
    *(f"{name}{joint}key" for name in _KEYS for joint in ("", "_", "-", ".")),
    *("key_id", "master_key", "bearer", "://", "oracle:", "-----begin", "azure.sas"),
    *("crypt", "hmac", "sp_add", "postgresql", "mysql", "remote", "add_key"),  # by position
    *("mariadb", "sshpass", "sqlcmd", "osql", "bcp "),  # a command's ``-p`` in a literal
    *("eyj", "conn"),  # a JSON web token in a literal; SQL*Plus' ``CONNECT user/password@db``
)
_PROSE_SQL_WORDS = tuple(word for word in _SQL_SECRET_WORDS if word != "://")
"""What makes ``redact_prose`` read a text as SQL: a URL's password is ``redact_text``'s, which
it runs anyway (a check's code names its dataset's URL: tokenizing each was ten times the cost)."""


def _any_of(words: Iterable[str]) -> re.Pattern[str]:
    """A pattern that finds any of ``words`` in a text, a branch per first letter: at each
    place of the text only the words that start with its letter are tried (a search per word
    read every statement some 60 times: half the cost of the 3,000 statements of a dbt plan)."""
    by_first: dict[str, set[str]] = {}
    for word in words:
        by_first.setdefault(word[0], set()).add(word[1:])
    return re.compile(
        "|".join(
            re.escape(first) + "(?:" + "|".join(sorted(map(re.escape, rests))) + ")"
            for first, rests in sorted(by_first.items())
        )
    )


_SQL_SECRET_WORD = _any_of(_SQL_SECRET_WORDS)
"""Any of ``_SQL_SECRET_WORDS``, in a lowered text."""
_PROSE_SQL_WORD = _any_of(_PROSE_SQL_WORDS)
"""Any of ``_PROSE_SQL_WORDS``, in a lowered text."""

# ``password=…`` in a connection string (``dblink('host=db password=…')``, a JDBC URL's
# ``;password=…``), unquoted or in ODBC's braces (``PWD={a;b}``, to its closing brace). One
# already shown ``***`` is left as it is.
_SECRET_SETTING = re.compile(
    r"(?i)\b(?P<lead>(?:ssl)?(?:password|passwd|pwd)\s*=\s*)(?!\*\*\*)"
    r"(?:\{(?:[^}\n]|\}\})*+\}?|[^\s;'\",)&]+)"
)
# An Oracle thin (or OCI) URL names its user and password before the ``@``, with no ``://``:
# ``jdbc:oracle:thin:scott/tiger@db:1521/orcl`` (``jdbc:`` or not: openlineage-java drops it;
# ``lead`` ends after ``scott/``); the password runs to the last ``@`` of the URL (one with an
# ``@`` in it is hidden whole). Found by ``oracle_passwords``, not by a pattern that runs to
# that ``@``: tried from each lead of a text of leads, it read the rest again from each (a
# review: 26 s for a 200 KB answer).
_ORACLE_LEAD = re.compile(r"(?i)\b(?:jdbc:)?oracle:[a-z0-9]+:[^\s/@:]+/")
_BLANK = re.compile(r"\s")


def oracle_passwords(text: str) -> Iterator[tuple[int, int]]:
    """Where each Oracle URL's ``user/`` ends and its ``@`` is, in ``text``: its password is
    between them. Each run of text without blanks is read once."""
    done = 0
    for lead in _ORACLE_LEAD.finditer(text):
        if lead.start() < done:
            continue
        blank = _BLANK.search(text, lead.end())
        run_end = blank.start() if blank else len(text)
        at = text.rfind("@", lead.end(), run_end)
        if at < 0:
            done = run_end  # no ``@`` further in this run: no other lead in it has one
            continue
        yield lead.end(), at
        done = at + 1


def _hide_oracle_passwords(text: str) -> str:
    parts: list[str] = []
    copied = 0
    for end, at in oracle_passwords(text):
        parts += (text[copied:end], REDACTED)
        copied = at
    return "".join(parts) + text[copied:] if parts else text


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


# The scan of a statement that does not tokenize in its dialect: a comment of SQL (``-- …`` to
# the end of its line, ``/* … */``), a quoted name (``"…"``, ``\`…\```) or a string literal,
# whichever starts first, a literal never closed running to the end (tried again from each
# quote after it, an unclosed ``'\'\'…`` was scanned to the end once per quote).
_SQL_COMMENT_NAME_OR_LITERAL = re.compile(
    r"(?=[-/\"`'])"  # the characters that may start one: the others are passed over at once
    r"(?:(?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))"
    r'|(?P<name>"[^"]*"|`[^`]*`)'
    r"|'(?:[^'\\]|\\(?:.|\Z)|'')*(?:'|\Z))",
    re.DOTALL,
)


def _scanned(sql: str) -> str:
    """``sql`` with its secret literals as ``***``, its literals and comments read by one
    scanner for every dialect: for a statement that does not tokenize."""
    sql = _IDENTIFIED_BY_WORD.sub(_identified_by, sql)
    parts: list[str] = []
    done = 0  # the end of the last comment or literal
    code = 0  # the end of the last literal: what follows it is the code before the next one
    keyed = False  # the last literal names a secret (an option's key: ``'password' = '…'``)
    for token in _SQL_COMMENT_NAME_OR_LITERAL.finditer(sql):
        if token.group("name") is not None:
            continue  # part of the code, as it is
        parts.append(sql[done : token.start()])
        done = token.end()
        if token.group("comment") is not None:
            parts.append(redact_text(token.group()))
            continue
        before = sql[max(code, token.start() - 80) : token.start()]
        if _SECRET_KEYWORD_BEFORE.search(before) or (
            keyed and _KEY_TO_VALUE.fullmatch(sql[code : token.start()])
        ):
            parts.append(f"'{REDACTED}'")
            keyed = False
        else:
            text = _SECRET_SETTING.sub(lambda m: f"{m.group('lead')}{REDACTED}", token.group())
            parts.append(_URL_PASSWORD.sub(lambda m: f"{m.group('lead')}{REDACTED}", text))
            keyed = _names_a_secret(token.group()[1:].removesuffix("'"))
        code = done
    parts.append(sql[done:])
    return "".join(parts)


def _unread(sql: str) -> str:
    """A statement that no dialect's tokenizer reads (an unclosed literal or comment): redacted
    as scanned, as free text, and not shown at all past its first secret keyword. More hidden
    than needed rather than a secret shown: where its literals start is not known."""
    shown = redact_text(_scanned(sql))
    found = _SECRET_KEYWORD_ANYWHERE.search(shown)
    return shown if found is None else f"{shown[: found.end()]} {REDACTED}"


_tokenizers = threading.local()


def _sql_tokenizer(dialect: str | None) -> Any:
    """sqlglot's tokenizer of ``dialect``, made once per thread (a tokenizer holds the statement
    it reads), sqlglot imported on first use."""
    made: dict[str | None, Any] = _tokenizers.__dict__.setdefault("by_dialect", {})
    tokenizer = made.get(dialect)
    if tokenizer is None:
        from sqlglot.dialects.dialect import Dialect

        tokenizer = made[dialect] = Dialect.get_or_raise(dialect).tokenizer()
    return tokenizer


def redact_prose(text: str) -> str:
    """A producer's free text that may be SQL (a test's assertion, a transformation's
    description, ``aes_encrypt(email, 'k')``) without its secrets: ``redact_sql`` read as prose,
    then ``redact_text``. A text with no secret in it is given back as it is."""
    lowered = text.lower()
    if _PROSE_SQL_WORD.search(lowered) is None:  # a URL's: redact_text's own
        return redact_text(text)
    return redact_text(redact_sql(text, may_be_prose=True))


def names_a_secret(name: str) -> bool:
    """Whether a setting, a tag or a property named ``name`` holds a secret as its value
    (``password``, ``db_password``, ``api_key``, Azure's ``AccountKey``)."""
    return _is_secret_name(name.strip())


_READINGS = ("postgres", "mysql", "tsql")
"""How a statement of no known dialect is read, one after the other: PostgreSQL's (dollar
quotes, ``'C:\\'`` closed by its quote), MySQL's (``#`` comments, backslash escapes, ``"…"``
literals) and SQL Server's (``[it's]`` a name). A reading that does not tokenize is skipped."""


def redact_sql(sql: str, dialect: str | None = None, *, may_be_prose: bool = False) -> str:
    """``sql`` with the secrets it holds replaced by ``***``: a literal that a keyword names a
    password, key or token (``PASSWORD '…'``, ``$$…$$``, ``IDENTIFIED BY '…'``, ``SET PASSWORD
    FOR u = '…'``, Oracle's bare ``IDENTIFIED BY …``), and in every other literal and every
    comment what ``redact_text`` hides (a connection string's ``password=…``, a URL's password,
    ``password: …``, a PEM key). Literals and comments are read as ``dialect`` (a sqlglot
    dialect) reads them, with sqlglot's tokenizer; without one, as each of ``_READINGS`` does.
    Names and other literals (what makes lineage) stay as written, so that a statement reads
    the same to Blindata's analysis, and its hash, made from this text, is the same at every
    run. A statement that does not tokenize is hidden past its first secret keyword; with
    ``may_be_prose`` (a test's description or expected value, prose as often as SQL: ``the
    customer's password is rotated`` tokenizes in no dialect) it is scanned as one SQL lexer
    reads literals and comments, and its free text redacted, but shown whole."""
    lowered = sql.lower()  # a pattern of the words by letter (``_any_of``)
    if _SQL_SECRET_WORD.search(lowered) is None and not _may_hold_a_vendor_token(sql):
        return sql
    if "set" in lowered:
        sql = _set_bare_values(sql)
    if "conn" in lowered:
        sql = _SQLPLUS_CONNECT.sub(rf"\g<lead>{REDACTED}", sql)
    shown: str | None = None
    for reading in (dialect,) if dialect else _READINGS:
        redacted = _redact_tokens(sql if shown is None else shown, reading)
        if redacted is not None:
            shown = redacted
    if shown is not None:
        return shown
    return redact_text(_scanned(sql)) if may_be_prose else _unread(sql)


# Spark's, Hive's and Databricks' ``SET name=value`` takes the value as it is written, unquoted:
# ``SET spark.datasource.password=pw`` holds no literal for a keyword to name. A bare value after
# a name that names a secret (``_names_a_secret``), to the end of the statement or its line, is
# hidden; a quoted one is the tokens' (``SET PASSWORD = '…'``).
_SET_BARE_VALUE = re.compile(
    r"""(?ix)
    (?: \A | ; ) \s*
    (?: ALTER \s+ (?: SYSTEM | (?: DATABASE | ROLE | USER ) \s+ [^\s;]+ ) \s+ )?
    SET \s+ `? (?P<name> [A-Za-z0-9_.:-]+ ) `? \s* (?: = | TO (?=\s) ) \s*
    (?! \*\*\* ) (?P<value> [^\s;'"()]+ ) (?= [ \t]* (?: ; | \n | \Z ) )
    """
)
"""Only where ``SET`` starts a statement (the text's start, or after a ``;``; PostgreSQL's
``ALTER SYSTEM|DATABASE d|ROLE r SET k TO v`` too), read in the text with its comments blanked
(``_without_comments``: ``-- access\nSET spark.datasource.password=…`` was shown whole, a probe
of secrets; a comment read by the pattern itself was read again from every ``;`` before an
unclosed one, a time growing with the square of the text's length, a review). Hive's names hold
a ``:`` (``hivevar:db_pwd``). A line of an ``UPDATE … SET token = s.token`` is no setting, and a
``^`` of each line would be read again from every blank line before it."""

_COMMENT_OR_QUOTED = re.compile(
    r"""'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`[^`]*`?|--[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/)?"""
)
"""A literal or a quoted name (passed over; unclosed, to the end), or a comment (unclosed, to
the end): each read once, from its start."""
_NOT_A_LINE_END = re.compile(r"[^\n]")


def _without_comments(sql: str) -> str:
    """``sql`` with each comment's characters as blanks (its line ends kept): offsets stay."""
    if "--" not in sql and "/*" not in sql:
        return sql
    parts: list[str] = []
    copied = 0
    for found in _COMMENT_OR_QUOTED.finditer(sql):
        text = found.group()
        if text[:2] in ("--", "/*"):
            parts += (sql[copied : found.start()], _NOT_A_LINE_END.sub(" ", text))
            copied = found.end()
    parts.append(sql[copied:])
    return "".join(parts)


_SQLPLUS_CONNECT = re.compile(
    r"""(?im)(?P<lead>^[ \t]*CONN(?:ECT)?[ \t]+[^\s/@;'"]+/)(?!\*\*\*)(?:"[^"\n]*"|[^\s@;'"]+)"""
)
"""SQL*Plus' ``CONNECT user/password[@db]`` (``CONN`` too; a quoted password too) at a line's
start: no literal holds the password, so no token names it (a probe of secrets). ``CONNECT BY``
and ``CONNECT / AS SYSDBA`` name no ``user/``."""


def _set_bare_values(sql: str) -> str:
    """``sql`` with the bare value of each ``SET`` of a secret name as ``***``."""
    parts: list[str] = []
    copied = 0
    for found in _SET_BARE_VALUE.finditer(_without_comments(sql)):
        if _names_a_secret(found.group("name")):
            parts += (sql[copied : found.start("value")], REDACTED)
            copied = found.end("value")
    if not parts:
        return sql
    parts.append(sql[copied:])
    return "".join(parts)


_COMMAND_DEPTH = 3
"""How many commands within commands (``PREPARE p AS EXECUTE …``) are read as SQL; the text of
one deeper is read as an unread statement's."""


def _redact_tokens(sql: str, dialect: str, depth: int = 0) -> str | None:
    """``redact_sql`` as ``dialect`` reads ``sql``; None when it does not tokenize.

    One pass over the tokens, keeping the last four words of code (``IDENTIFIED WITH plugin
    BY``); text is copied only around what changes, each token looked at once. The tokenizer
    gives what follows a command (``PREPARE``, ``CALL``, ``EXECUTE``, BigQuery's ``BEGIN``…) as
    one literal, without its place in the text: that text, up to the next token, is read as a
    statement of its own."""
    try:
        tokenizer = _sql_tokenizer(dialect)
        tokens = tokenizer.tokenize(sql)
    except Exception:  # any failure of the tokenizer: the statement is unread
        return None
    commands = frozenset(getattr(tokenizer, "COMMANDS", ()))
    # a command starts a statement: first, or after one of these (sqlglot's rule)
    prefixes = frozenset(getattr(tokenizer, "COMMAND_PREFIX_TOKENS", ()))
    command_text = False  # the last token was a command's text: it runs to the next token
    kind = None
    command = False  # the last token is a command that starts a statement
    kinds = _token_kinds()
    strings, passed, bare = kinds.strings, kinds.passed, kinds.bare
    semicolon, equals = kinds.semicolon, kinds.equals
    opening, closing, comma = kinds.opening, kinds.closing, kinds.comma
    calls: list[_Call] = []  # the calls of ``_SECRET_ARGUMENTS`` being read, innermost last
    calling = False  # the statement starts with EXEC, EXECUTE or CALL
    nesting = 0  # of parentheses
    parts: list[str] = []
    copied = done = 0  # sql[:copied] is in parts; done: the end of the last token
    w1 = w2 = w3 = w4 = ""  # the last four words of code, upper case, w1 the last
    set_password = assigned = identified = False  # SET PASSWORD [FOR u] =, IDENTIFIED
    keyed = False  # the last code was a literal that names a secret: an option's key
    # the last code was a template that ends with a secret's name (``'… PASSWORD ' || 'pw'``),
    # joined to what follows by ``||``, ``+``, a comma or a call
    template = False
    value_next = False  # after a key and a comma, or a template and its join: a secret value
    keyed_as = 0  # ``('smtp_password' AS name, '…' AS value)``: 1 after the key's AS, 2 its alias
    call_pending = False  # a word where a secret value is expected: a call if ``(`` follows
    secret_at = -1  # the nesting of a call that makes a secret value (``PASSWORD concat(…)``)
    first = ""  # the statement's first word
    # ``EXECUTE 'ALTER ROLE r PASSWORD $1' USING '…'``, ``sp_executesql N'… PASSWORD = @p', …,
    # @p = N'…'``: a template whose placeholder a secret fills, and the placeholders' names
    using = placeholder_filled = False
    placeholders: set[str] = set()
    # ``DECLARE @password varchar(50) = '…'``, BigQuery's ``DECLARE api_key STRING DEFAULT '…'``,
    # PL/SQL's ``v_password VARCHAR2(30) := '…'`` in a DECLARE block: the variable being declared
    declaring = declare_block = False
    declared = ""
    filled_at = -1  # the nesting of a call whose template fills a secret (``PASSWORD %L``)
    in_lists: set[int] = set()  # the nestings of ``IN (…)`` lists: values, not keys and values
    # ``UPDATE t SET value = '…' WHERE name = 'smtp_password'``: the key after the value, so the
    # SET's literals are kept apart in ``parts`` (index, literal) until a literal of the
    # statement names a secret (``named_secret``), which hides them and those after it (MERGE's
    # ``WHEN MATCHED AND k = 'api_key' THEN UPDATE SET``, ``ON CONFLICT DO UPDATE SET``)
    updating = setting = named_secret = False
    set_literals: list[tuple[int, str]] = []
    cases = 0  # CASE … END open at nesting 0: their WHEN is no MERGE's
    maybe_key = False  # a literal naming a secret, compared with what follows it
    row_keyed = False  # a row of VALUES (or an INSERT's SELECT) had a setting's key
    # the literals of the row being read, kept apart: a key listed after them hides them
    row_literals: list[tuple[int, str]] = []
    in_columns: dict[int, str] = {}  # the column an ``IN (…)`` list is compared with
    case_subject = ""  # ``CASE name WHEN 'api_key' …``: what its WHENs are compared with
    param_key = False  # the last literal was a procedure's ``@name = N'smtp_password'``
    # a procedure called with a setting's key by name (SSMS's ``create_environment_variable
    # @variable_name = N'DbPassword', @sensitive = True, …, @value = N'…'``): its ``@…value``
    params_keyed = False
    carried = False  # a secret value due, carried through a procedure's ``@name =``
    between_secret = False  # the first bound of a BETWEEN was a secret: so is the second
    inserting = False  # the statement is an INSERT: its SELECT of constants is a row
    statement = 0  # where the statement being read starts in ``sql``
    # ``INSERT INTO t (service, password) VALUES ('api', '…')``: the columns listed, and where
    # their values are (the position in a row of VALUES)
    into = values = False
    columns: list[str] = []
    column = ""  # the name being read in the list of columns
    listing_at = row_at = -1
    position = 0
    for token in tokens:
        if command and token.token_type in strings:
            command_text = True  # its start and end are not its own: passed over
            command = False
            kind = token.token_type
            continue
        command = token.token_type in commands and (kind is None or kind in prefixes)
        start = token.start
        if command_text:
            command_text = False
            parts += (sql[copied:done], _redact_command(sql[done:start], dialect, depth))
            copied = start
        elif start < done:
            return None  # not where a token of this text can be: read it as unread
        elif start - done > 1:  # more than a blank between two tokens: it may be a comment
            between = sql[done:start]
            if not between.isspace():
                shown = _redact_between(between)
                if shown != between:
                    parts += (sql[copied:done], shown)
                    copied = start
        done = token.end + 1
        previous, kind = kind, token.token_type
        if kind in strings:
            text = token.text
            # ``LIKE '%password%'``, a JSON path's ``'{api_key}'`` too
            named = _names_a_secret(text.strip("%{}"))
            # ``…_pass`` names a secret only under a setting's own column (WordPress'
            # ``option_name``), not a ``name`` of anything (``'season_pass'``)
            passed_key = _PASS_SUFFIX.search(text.strip("%")) is not None
            keyish = named or passed_key
            # listed in a row under a column that names settings (Keycloak's ``(…, value,
            # name)``), or compared with one (``WHERE name = 'smtp_password'``): a setting's key
            listed_key = (
                keyish
                and row_at == nesting
                and position < len(columns)
                and _is_key_column(columns[position], generic=named)
            )
            if w1 in _LISTING and nesting in in_columns:
                compared = in_columns[nesting]  # ``name IN ('a', 'smtp_password')``
            elif w1 == "WHEN" and case_subject:
                compared = case_subject  # ``CASE name WHEN 'smtp_host' … WHEN 'api_key'``
            else:
                compared = _compared_column(w1, w2, w3)
            is_key = listed_key or (
                keyish
                and _is_key_column(compared, generic=named)
                and (_reads_as_a_key(text) or not _is_generic_column(compared))
            )
            key_set = setting and is_key  # MySQL's ``INSERT … SET name = 'smtp_password'``
            secret = (
                _after_secret_keyword(w1, w2, w3, w4, identified)
                # ``SET k TO '…'``, ``ALTER SYSTEM|DATABASE d|ROLE r SET k TO '…'``
                or (w1 == "TO" and first in ("SET", "ALTER") and _names_a_secret(w2))
                or assigned
                or keyed
                or value_next
                or (setting and named_secret and not key_set)
                or (row_keyed and row_at == nesting and not is_key)
                or _names_a_secret(declared)
                or (w1 in _COMPARISONS and _names_a_secret(w2))  # ``token <> '…'``
                or (w1 == "AND" and between_secret)  # ``BETWEEN '…' AND '…'``
                or (params_keyed and w2 in ("@", ":") and w1.endswith("VALUE"))
                or (using and placeholder_filled)
                or (w2 in ("@", ":") and w1 in placeholders)
                or nesting == filled_at
                or (
                    0 <= row_at <= nesting  # the value of a column, or a call that makes it
                    and position < len(columns)
                    and _names_a_secret(columns[position])
                )
                or any(call.at_secret(nesting) for call in calls)
                or 0 <= secret_at <= nesting
            )
            declared = ""
            between_secret = secret and w1 == "BETWEEN"
            secret = secret and token.text != ""  # an empty literal hides nothing
            raw = sql[start:done]
            if secret:
                set_password = assigned = False
                parts += (sql[copied:start], _emptied(raw))
                copied = done
            else:
                shown = (
                    _redact_body(raw, dialect, depth)
                    # a DO block's body (the whole text of the command ``DO``), or a function's
                    # that its statement declares in no other language than SQL
                    if raw.startswith("$")
                    and (
                        w1 == "DO"
                        or previous is None
                        or not _OTHER_LANGUAGE.search(sql, statement, _statement_end(sql, done))
                    )
                    else _redact_literal(raw)
                )
                if setting and not key_set:
                    # kept apart: a key read later may hide it (``SET value = '…' WHERE name =
                    # 'smtp_password'``)
                    parts += (sql[copied:start], shown)
                    set_literals.append((len(parts) - 1, raw))
                    copied = done
                elif row_at == nesting and not is_key:
                    # a row's value, which a key listed after it in the row hides (Keycloak's
                    # ``(realm_id, value, name)``)
                    parts += (sql[copied:start], shown)
                    row_literals.append((len(parts) - 1, raw))
                    copied = done
                elif shown != raw:
                    parts += (sql[copied:start], shown)
                    copied = done
            # ``WITH ('password' = '…')``, ``OPTIONS ('password' '…')``: the key is a literal,
            # as in a list of keys and values (``VALUES ('smtp_password', '…')``,
            # ``set_config('app.api_key', '…')``)
            keyed = not secret and named
            template = not secret and _ENDS_NAMING_A_SECRET.search(token.text) is not None
            value_next, keyed_as = False, 0
            if listed_key:  # the row's other values are the setting's
                row_keyed = True
                for at, literal in row_literals:
                    parts[at] = _emptied(literal)
                row_literals = []
            if is_key or (
                named
                and first == "MERGE"  # ``MERGE … USING (SELECT N'api_key' AS k)``
                and nesting > 0
                and w1 in ("SELECT", ",")
                and nesting not in in_lists
            ):
                # a setting's key (``WHERE path = 'system/smtp/password'``, ``configkey =
                # 'smtp_password'``, a MERGE's ``USING (SELECT N'api_key' AS k)``), not a value
                # compared with another column (``grant_type = 'client_credentials'``,
                # ``event_name = 'UPDATE_PASSWORD'``)
                named_secret = True
                for at, literal in set_literals:
                    parts[at] = _emptied(literal)
                set_literals = []
            # a procedure's ``@name = N'smtp_password'``: the next parameter's value is its
            param_key = calling and w2 in ("@", ":") and keyish and _is_key_column(w1)
            params_keyed = params_keyed or param_key
            maybe_key = named and not is_key  # ``WHERE 'smtp_password' = name``: by what follows
            if not secret and nesting > 0 and _FILLS_A_SECRET.search(token.text):
                filled_at = nesting  # ``format('… PASSWORD %L', …)``: its arguments fill it
            if not secret and "%" not in token.text:
                for placeholder in _FILLED_PLACEHOLDER.finditer(token.text):
                    placeholder_filled = True
                    if placeholder.group("name"):
                        placeholders.add(placeholder.group("name").upper())
            w1, w2, w3, w4 = "", w1, w2, w3
            continue
        word = token.text.upper()
        if (
            w1 in ("BY", "AS")
            and (w2 == "IDENTIFIED" or (w3 == "WITH" and w4 == "IDENTIFIED"))
            and kind in bare
            and word != "VALUES"
        ):
            parts += (sql[copied:start], _emptied(sql[start:done]))  # Oracle's password
            copied = done
        if kind is opening:
            nesting += 1
            if call_pending:
                secret_at, call_pending = nesting, False
            if w1 == "IN":
                in_lists.add(nesting)
                in_columns[nesting] = w3 if w2 == "NOT" else w2
                if _names_a_secret(in_columns[nesting]):  # ``token [NOT] IN ('…')``
                    secret_at = nesting
            if w1 in _SECRET_ARGUMENTS:
                calls.append(_Call(_SECRET_ARGUMENTS[w1], nesting))
            elif into and nesting == 1 and w1 in _BEFORE_OTHER_PARENTHESES:
                into = w1 != "AS"  # ``PARTITION (…)``, ``WITH (TABLOCK)``; a CTE's ``AS (``
            elif into and nesting == 1:
                into, columns, listing_at = False, [], nesting
            elif values and nesting == 1:
                row_at, position = nesting, 0
                row_keyed, row_literals = False, []
        elif kind is closing:
            if calls and calls[-1].nesting == nesting:
                calls.pop()
            if filled_at == nesting:
                filled_at = -1
            if secret_at == nesting:
                secret_at = -1
            if nesting == listing_at:
                columns.append(column)
                column = ""
            if nesting in (listing_at, row_at):
                listing_at = row_at = -1
                row_keyed, row_literals = False, []
            in_lists.discard(nesting)
            in_columns.pop(nesting, None)
            nesting -= 1
        elif kind is comma:
            if calls and calls[-1].nesting == nesting:
                calls[-1].argument += 1
            if nesting == row_at:
                position += 1
            if nesting == listing_at:
                columns.append(column)
                column = ""
        elif nesting == listing_at:
            column = token.text  # any word: ``schema``, ``date``, ``password`` are keywords too
        elif word in _SECRET_ARGUMENTS and (
            previous is None
            or previous is semicolon
            or w1 in _PROCEDURE_CALLS
            or (calling and w1 == ".")  # ``EXEC master.dbo.sp_addlinkedsrvlogin …``
        ):  # a procedure called without parentheses: ``EXEC sp_addlogin 'u', 'pw'``
            calls.append(_Call(_SECRET_ARGUMENTS[word], nesting))
        elif word in _PROCEDURE_CALLS and (previous is None or previous is semicolon):
            calling = True  # a statement that calls a procedure, whose name may be qualified
        if (
            word in _STATEMENT_STARTS
            and nesting == 0
            and w1 not in _CONTINUING
            and previous is not opening
        ):  # a statement of its own, as T-SQL runs them without ``;``: nothing of the last
            updating = setting = named_secret = params_keyed = False
            set_literals = []
        if kind is semicolon:
            statement = done
            set_password = assigned = identified = calling = into = values = False
            updating = setting = inserting = named_secret = using = placeholder_filled = False
            params_keyed = False
            cases = 0
            placeholders = set()
            calls.clear()
            nesting, secret_at = 0, -1
            columns, listing_at, row_at, set_literals = [], -1, -1, []
            first, declared, declaring = "", "", declare_block
        elif word in ("INSERT", "INTO") and nesting == 0:
            into = True  # the next parentheses list the columns (MERGE's ``INSERT (a, b)`` too)
            inserting = inserting or word == "INSERT"
        elif word == "VALUES" and nesting == 0:
            values, into = bool(columns), False
        elif word == "SELECT" and nesting == 0 and inserting and not values:
            into = False  # ``INSERT INTO t (a, b) SELECT 'x', 'y'``: a row of the columns
            row_at, position = (0, 0) if columns else (-1, 0)
            row_keyed, row_literals = False, []
        elif word == "CASE" and nesting == 0:
            cases += 1
        elif word == "END" and nesting == 0 and cases:
            cases -= 1
            case_subject = ""
        elif word == "WHEN" and nesting == 0 and not cases:
            setting = False  # MERGE's next ``WHEN [NOT] MATCHED``
        elif word in _ENDS_A_ROW and nesting == 0:
            into = setting = False  # and an UPDATE's SET; ``UNION ALL SELECT`` is a new row
            row_at = -1 if row_at == 0 else row_at
            row_keyed, row_literals = False, []
        elif word == "USING" and placeholder_filled:
            using = True  # ``EXECUTE '… PASSWORD $1' USING '…'``
        elif word in ("USING", "ON") and nesting == 0:
            into = False
        elif word == "UPDATE" and nesting == 0:
            if w1 not in _CONTINUING:  # an UPDATE of its own, not MERGE's or ON CONFLICT's
                set_literals, named_secret = [], False
            updating = True
            setting = w1 == "KEY"  # MySQL's ``ON DUPLICATE KEY UPDATE v = …`` has no SET
        elif word == "SET" and nesting == 0:
            # MySQL's ``INSERT INTO t SET k = …``; Snowflake's ``SET (a, b) = ('u', '…')``
            # lists its variables as an INSERT its columns
            into, setting = not first or first == "SET", updating or inserting
        elif kind is equals and nesting == 0 and first == "SET" and columns:
            values = True
        elif word == "DECLARE":
            declaring = declare_block = True
        elif word == "BEGIN":
            declaring = declare_block = False
        elif kind is comma and nesting == 0 and first == "DECLARE":
            declaring = True
        elif word == "PASSWORD" and w1 == "SET":
            set_password = True
        elif word == "IDENTIFIED":
            identified = True
        elif set_password and kind is equals:
            assigned = True
        if kind not in passed:
            is_name = word[:1].isalpha() or word[:1] == "_"
            if maybe_key and previous is equals and is_name and _is_key_column(word):
                named_secret = True  # ``WHERE 'smtp_password' = name``
                for at, literal in set_literals:
                    parts[at] = _emptied(literal)
                set_literals = []
            maybe_key = False
            if declaring and is_name and word != "DECLARE":
                declared, declaring = word, False
            first = first or word
            # a call where a secret value stands (``PASSWORD = concat(…)``, a key's value
            # ``CAST(… AS text)``, a template's ``|| quote_literal(…)``), if ``(`` follows
            call_pending = (kind in kinds.names or word in _CALLED_KEYWORDS) and (
                value_next
                or (
                    previous in kinds.assignments
                    and _after_secret_keyword(w1, w2, w3, w4, identified)
                )
            )
            # a key's value is the next in a list of keys and values (not in ``IN (…)``), or in
            # an INSERT's SELECT of constants; a template's, after ``||``, ``+`` or a comma
            value_next = (
                kind is comma
                and (keyed or keyed_as == 2)
                and (nesting > 0 or row_at == 0 or inserting)
                and nesting not in in_lists
            ) or (template and kind in kinds.joins)
            # ``EXEC p @name = N'smtp_password', @value = N'…'``: through the next parameter
            carried = (param_key and kind is comma) or (
                carried and (word == "@" or (w1 == "@" and is_name))
            )
            param_key = False
            if w1 == "CASE" and is_name and word != "WHEN":
                case_subject = word  # the w1 below is still the word before this one
            value_next = value_next or carried
            keyed_as = 1 if keyed and word == "AS" and nesting > 0 else 2 if keyed_as == 1 else 0
            keyed = template = False
            w1, w2, w3, w4 = word, w1, w2, w3
    if done > len(sql):
        return None
    if command_text:
        parts += (sql[copied:done], _redact_command(sql[done:], dialect, depth))
        copied = len(sql)
    elif done < len(sql):
        parts += (sql[copied:done], _redact_between(sql[done:]))
        copied = len(sql)
    parts.append(sql[copied:])
    return "".join(parts)


_ENDS_NAMING_A_SECRET = re.compile(rf"(?i)(?:{_SECRET_WORDS}|identified\s+by)[\s=:'\"]+\Z")
"""A literal that ends with a secret's name and what comes before its value: a statement's
template (``'ALTER ROLE r PASSWORD ' || quote_literal(pw)``, ``concat('password=', pw)``).
The name alone (``'token' || '_count'``) is text."""
_BEFORE_OTHER_PARENTHESES = frozenset({"PARTITION", "WITH", "IDENTIFIER", "AS", "TABLE"})
"""Words after which an INSERT's parentheses are not its columns: Spark's ``PARTITION (…)``,
T-SQL's ``WITH (TABLOCK)``, Snowflake's ``IDENTIFIER('t')``, a CTE's ``AS (…)`` (the columns, if
any, come before it)."""
_ENDS_A_ROW = frozenset(
    {"FROM", "WHERE", "UNION", "EXCEPT", "INTERSECT", "GROUP", "ORDER", "LIMIT"}
)
"""What ends an INSERT's SELECT list (and its column list's reading), and an UPDATE's SET."""
_STATEMENT_STARTS = frozenset(
    {"SELECT", "INSERT", "DELETE", "MERGE", "CREATE", "ALTER", "DROP", "TRUNCATE", "DECLARE"}
    | {"EXEC", "EXECUTE", "PRINT", "BEGIN", "COMMIT", "ROLLBACK", "GO"}
)
"""Words that start a statement at nesting 0 (but after ``_CONTINUING``): T-SQL's batches
separate statements without ``;``."""
_CONTINUING = frozenset(
    {"THEN", "DO", "KEY", "UNION", "ALL", "EXCEPT", "INTERSECT", "DISTINCT", "AS"}
)
"""Words after which a statement's keyword goes on with it (MERGE's ``THEN UPDATE``,
``ON CONFLICT DO UPDATE``, MySQL's ``ON DUPLICATE KEY UPDATE``, ``UNION ALL SELECT``,
``CREATE TABLE t AS SELECT``)."""
_CALLED_KEYWORDS = frozenset({"FORMAT", "LEFT", "RIGHT", "REPLACE"})
"""Functions sqlglot tokenizes as keywords: calls all the same (the others are names)."""
_LISTING = frozenset({"", "(", ",", "SELECT", "VALUES"})
"""The last code before a literal that is listed, not compared: a row's key (``""``: right
after another literal)."""
_KEY_COLUMN = re.compile(
    r"(?i)(?:k|id|ident|identifier|name|key|path|setting|param|parameter|property|prop|option|"
    r"variable|var|config|attribute|attr|field|"
    r"(?:[a-z0-9]+_)?(?:option|setting|param|parameter|property|prop|attribute|attr|variable|"
    r"config|conf|env|key|constance|bandana)_?(?:name|id|path|var|key))s?_?"
)
"""A column that holds the names of settings: ``name``, ``key``, Magento's ``path``, ``k``,
``id``, a name ending with ``key`` (``configkey``, ``config_key``, Activiti's ``KEY_``), or a
setting's word and ``name``/``id``/``path``/``var`` (``option_name``, ``setting_id``,
``env_var``). A literal compared with it that names a secret is the key of the values its
statement sets (``WHERE name = 'smtp_password'``); ``event_name``, ``page_path``,
``provider_id``, ``grant_type`` hold values (``'UPDATE_PASSWORD'``, ``'password'``)."""
_PASS_SUFFIX = re.compile(r"(?i)[_.-]pass\Z")
"""A setting's key that ends with ``_pass`` (WordPress' ``mailserver_pass``): a key only where
it is compared with a key column (``qc_pass = 'Y'``, ``'season_pass'`` are no secrets)."""


def _is_key_column(name: str, *, generic: bool = True) -> bool:
    """Whether ``name`` holds settings' names; without ``generic``, not a bare ``name``,
    ``id``, ``path`` or ``k``, which name anything."""
    if not name or _KEY_COLUMN.fullmatch(name) is None:
        return False
    return generic or name.strip("_").lower() not in _GENERIC_KEY_COLUMNS


def _reads_as_a_key(text: str) -> bool:
    """Whether a literal reads as a setting's key: no phrase (``'Hardware token'``), no URL
    path (``'/reset-password'``), and a compound name joined by ``_ . / -`` or the secret word
    alone (``smtp_password``, ``system/smtp/password``, ``password``), not a display name
    (``'ForgotPassword'``)."""
    name = text.strip("%")
    if not name or name.startswith("/") or any(c.isspace() for c in name):
        return False
    return any(c in name for c in "_./-") or _SECRET_NAME_END.fullmatch(name) is not None


_GENERIC_KEY_COLUMNS = frozenset({"name", "names", "id", "ids", "path", "k", "ident"})


def _is_generic_column(name: str) -> bool:
    return name.strip("_").lower() in _GENERIC_KEY_COLUMNS


def _compared_column(w1: str, w2: str, w3: str) -> str:
    """The column a literal is compared with, from the words of code before it: ``name =``
    (``=`` is passed over), ``name LIKE``, ``name IN (``, ``lower(name) =``, ``CASE name WHEN``."""
    if w1 in ("LIKE", "ILIKE", "IN", ")"):
        return w2
    if w1 == "WHEN" and w3 == "CASE":
        return w2
    return w1


_COMPARISONS = frozenset({"<>", "!=", "LIKE", "ILIKE", "BETWEEN"})
"""Comparisons of a column with a literal besides ``=`` (which ``_after_secret_keyword`` reads
past): ``WHERE token <> '…'`` compares a secret too."""
_FILLED_PLACEHOLDER = re.compile(
    rf"(?i)(?:{_SECRET_WORDS}|identified\s+by)\s*[=:]?\s*'?(?:\$[0-9]+|\?|[@:](?P<name>[A-Za-z_]\w*))"
)
"""A statement's template whose placeholder a secret fills: ``'ALTER ROLE r PASSWORD $1'``
(``EXECUTE … USING '…'``), ``'… PASSWORD = ?'``, T-SQL's ``'… PASSWORD = @p'`` (``@p = N'…'``)."""


_FILLS_A_SECRET = re.compile(
    rf"(?i)(?:{_SECRET_WORDS}|identified\s+by)\s*[=:]?\s*'?%(?:[0-9]+\$)?[A-Za-z]"
)
"""A statement's template that a call fills with a secret: ``format('ALTER ROLE %I PASSWORD
%L', r, pw)``, ``format('… password=%s', pw)``."""


@dataclass
class _Call:
    """A call of one of ``_SECRET_ARGUMENTS`` being read by ``_redact_tokens``."""

    secrets: frozenset[int]  # the positions of its secret arguments
    nesting: int  # the parentheses its arguments are within
    argument: int = 0  # the position of the argument being read

    def at_secret(self, nesting: int) -> bool:
        """Whether a literal read at ``nesting`` is one of its secret arguments, or within one
        (``AES_ENCRYPT(x, CONCAT('k1', 'k2'))``, ``pgp_sym_encrypt(x, ('k'))``)."""
        return nesting >= self.nesting and self.argument in self.secrets


def _redact_command(text: str, dialect: str, depth: int) -> str:
    """What follows a command, read as a statement of ``dialect``, or as an unread one."""
    shown = _redact_tokens(text, dialect, depth + 1) if depth < _COMMAND_DEPTH else None
    return _unread(text) if shown is None else shown


@dataclass(frozen=True)
class _TokenKinds:
    """The kinds of sqlglot's tokens that ``_redact_tokens`` tells apart."""

    strings: frozenset[Any]  # literals
    passed: frozenset[Any]  # between a keyword and its literal: ``=``, ``(``, ``:=``, ``=>``
    bare: frozenset[Any]  # what Oracle's password may be: a word, a quoted name, a number
    semicolon: Any
    equals: Any
    opening: Any  # ``(``
    closing: Any  # ``)``
    comma: Any
    joins: frozenset[Any]  # what joins a template to its value: ``||``, ``+``, a comma
    assignments: frozenset[Any]  # ``=``, ``:=``, ``=>``
    names: frozenset[Any]  # a name, which a call's is


@lru_cache(maxsize=1)
def _token_kinds() -> _TokenKinds:
    from sqlglot.tokens import TokenType

    names = (
        *("STRING", "BIT_STRING", "BYTE_STRING", "HEX_STRING", "HEREDOC_STRING"),
        *("NATIONAL_STRING", "NATIONAL_RAW_STRING", "RAW_STRING", "UNICODE_STRING"),
    )
    return _TokenKinds(
        strings=frozenset(getattr(TokenType, name) for name in names if hasattr(TokenType, name)),
        passed=frozenset((TokenType.EQ, TokenType.L_PAREN, TokenType.COLON_EQ, TokenType.FARROW)),
        bare=frozenset((TokenType.VAR, TokenType.IDENTIFIER, TokenType.NUMBER)),
        semicolon=TokenType.SEMICOLON,
        equals=TokenType.EQ,
        opening=TokenType.L_PAREN,
        closing=TokenType.R_PAREN,
        comma=TokenType.COMMA,
        joins=frozenset((TokenType.DPIPE, TokenType.PLUS, TokenType.COMMA)),
        assignments=frozenset((TokenType.EQ, TokenType.COLON_EQ, TokenType.FARROW)),
        names=frozenset((TokenType.VAR,)),
    )


def _after_secret_keyword(w1: str, w2: str, w3: str, w4: str, identified: bool) -> bool:
    """Whether the last words of code before a literal (``w1`` the last) name it a secret: a
    secret keyword, ``IDENTIFIED [WITH plugin] BY|AS``, Oracle's ``IDENTIFIED BY VALUES`` and
    MySQL's ``REPLACE`` (the current password) after an ``IDENTIFIED``."""
    if _names_a_secret(w1) or (w1 == "REPLACE" and identified):
        return True
    if w1 in ("BY", "AS"):
        return w2 == "IDENTIFIED" or (w3 == "WITH" and w4 == "IDENTIFIED")
    return w1 == "VALUES" and w2 == "BY" and w3 == "IDENTIFIED"


def _delimiters(raw: str) -> tuple[str, str]:
    """The opening (with its prefix: ``E'``, ``N'``, ``$tag$``, ``'''``) and the closing of a
    literal or a quoted name as written; ``("", "")`` for a bare word."""
    if raw.startswith("$"):
        tag = raw[: raw.find("$", 1) + 1]
        if len(tag) > 1 and len(raw) >= 2 * len(tag) and raw.endswith(tag):
            return tag, tag
        return "", ""
    at = next((i for i, c in enumerate(raw) if c in "'\"`["), -1)
    if at < 0:
        return "", ""
    quote = raw[at]
    closing = "]" if quote == "[" else quote
    if raw[at : at + 3] == quote * 3 and len(raw) - at >= 6 and raw.endswith(quote * 3):
        return raw[: at + 3], quote * 3
    return raw[: at + 1], closing if len(raw) > at + 1 and raw.endswith(closing) else ""


def _emptied(raw: str) -> str:
    """A secret literal (or Oracle's password) as ``***`` within its own quotes."""
    opening, closing = _delimiters(raw)
    return f"{opening}{REDACTED}{closing}"


def _redact_body(raw: str, dialect: str, depth: int) -> str:
    """A dollar-quoted literal that holds SQL (a ``DO`` block, a function in ``LANGUAGE sql``
    or ``plpgsql``), read as statements (``EXECUTE format('… PASSWORD %L', …)``, ``CREATE ROLE
    … PASSWORD '…'``) within its own tags; as a literal where it does not tokenize. Each body
    nested in it is shorter: no depth is spent on it."""
    opening, closing = _delimiters(raw)
    body = raw[len(opening) : len(raw) - len(closing)]
    shown = _redact_tokens(body, dialect, depth) if opening else None
    if shown is None:
        return _redact_literal(raw)
    return raw if shown == body else f"{opening}{shown}{closing}"


_OTHER_LANGUAGE = re.compile(r"(?i)\bLANGUAGE\s+'?(?!sql\b|plpgsql\b)[a-z]")
"""A function declared in another language than SQL (JavaScript, Python, plv8, Java): its body
is free text, whose ``"…"`` are its strings, not SQL's quoted names. One with no ``LANGUAGE`` is
SQL (Snowflake's default)."""


def _statement_end(sql: str, start: int) -> int:
    """Where the statement ``start`` is in ends, near enough: the next ``;``."""
    end = sql.find(";", start)
    return len(sql) if end < 0 else end


def _redact_literal(raw: str) -> str:
    """A literal with what ``redact_text`` hides in its text hidden, within its own quotes.

    A value quoted inside it (``'host=db password=''pw'''``, ``E'… password=\\'pw\\''``) is read
    with its quotes unescaped, so that the value ends where its quote does, and written back
    with them doubled."""
    opening, closing = _delimiters(raw)
    text = raw[len(opening) : len(raw) - len(closing)]
    if closing in ("'", '"') and (closing * 2 in text or "\\" + closing in text):
        plain = text.replace(closing * 2, closing).replace("\\" + closing, closing)
        hidden = _redact_statement_text(plain)
        return (
            raw if hidden == plain else f"{opening}{hidden.replace(closing, closing * 2)}{closing}"
        )
    shown = _redact_statement_text(text)
    return raw if shown == text else f"{opening}{shown}{closing}"


def _redact_statement_text(text: str) -> str:
    """A literal's text as free text, and Oracle's bare ``IDENTIFIED BY pw`` of a statement it
    holds (``EXECUTE IMMEDIATE 'ALTER USER u IDENTIFIED BY pw'``)."""
    shown = redact_text(text)
    if "identified" in shown.lower():
        shown = _IDENTIFIED_BY_WORD.sub(_identified_by, shown)
    return shown


def _redact_between(text: str) -> str:
    """What lies between two tokens (blanks and comments), comments being free text: each piece
    between two ``*/`` on its own and its trailing blanks kept, so that no comment loses its end
    (a PEM key's body with no END line is hidden to the end of its piece)."""
    if not text or text.isspace():
        return text
    pieces = []
    for piece in text.split("*/"):
        body = piece.rstrip()
        pieces.append(redact_text(body) + piece[len(body) :])
    return "*/".join(pieces)
