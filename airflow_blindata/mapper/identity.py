"""Dataset identity: which store a namespace names, and which schema and entity a name names.

Two producers that write the same table land on the same catalog node (seed 002): a namespace is
normalised to the OpenLineage naming conventions' spelling (``normalize_namespace``), its user
info dropped; a name is split into database, schema and entity by the first rule of seed 000
that applies (``entity_name``), its identifiers unquoted and its trailing ``;`` dropped, re-cased
only by a declared ``identifierCase``. Everything here is total: any namespace or name gives an
answer, never an exception; a namespace whose authority cannot be read is named by
``namespace_problem``.

Why and the rules in full: docs/mapping-reference.md#the-rules-of-mapperidentitypy
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from functools import lru_cache
from urllib.parse import unquote

from airflow_blindata.definition import NAME_PROFILES, OBJECT_KEY_LEVELS
from airflow_blindata.redaction import (
    PATH_SCHEMES,
    is_secret_property,
    masked_quoted_values,
    names_a_secret,
    oracle_passwords,
    property_spans,
    redact_properties,
    redact_query,
)

__all__ = [
    "DATA_FILE_EXTENSIONS",
    "DEFAULT_PORTS",
    "INSENSITIVE",
    "NO_MATCHING",
    "NO_READING",
    "OBJECT_STORE_SCHEMES",
    "PLATFORM_CASE_MATCHING",
    "SCHEME_ALIASES",
    "CaseMatching",
    "EntityName",
    "NameReading",
    "NamespaceParts",
    "case_matching",
    "cased_identifier",
    "cased_name",
    "column_case",
    "dataset_uri",
    "entity_name",
    "filled_database",
    "is_data_file",
    "lacks_source_database",
    "lower_scheme",
    "matches_namespace",
    "name_with_source_database",
    "namespace_database",
    "namespace_identity",
    "namespace_parts",
    "namespace_problem",
    "normalize_namespace",
    "normalize_pattern",
    "object_key_entity",
    "quoted_identifiers_fold",
    "same_but_case",
    "server_of",
    "shown_namespace",
    "strip_user_info",
    "without_statement_end",
]

SCHEME_ALIASES: dict[str, str] = {
    "postgresql": "postgres",
    "mariadb": "mysql",
    "sqlserver": "mssql",
    "s3a": "s3",
    "s3n": "s3",
    "gcs": "gs",  # Snowflake's stages name Google Cloud Storage so (``gcs://bucket``)
    # Hadoop's non-TLS spellings of an Azure container, which Spark keeps from a path: the
    # container is one whatever the transport
    "abfs": "abfss",
    "wasb": "wasbs",
}
"""Spellings that name the same kind of store, mapped to the naming conventions' scheme."""

DEFAULT_PORTS: dict[str, int] = {
    "postgres": 5432,
    "mysql": 3306,
    "redshift": 5439,
    "mssql": 1433,
    "oracle": 1521,
    "db2": 50000,
    "teradata": 1025,
    "clickhouse": 8123,
    "trino": 8080,
    "kafka": 9092,
    "hdfs": 8020,  # the NameNode's RPC port, which Hadoop takes for an ``hdfs://`` without one
    "sftp": 22,
    "ftp": 21,
    "cassandra": 9042,
    "mongodb": 27017,
}
"""Ports that a producer may leave out; the normalised namespace always names them."""

# Azure's authority is container@account, not user info (seed 002). Spark keeps the scheme of
# a path, so Hadoop's non-TLS abfs:// and wasb:// arrive as well as abfss:// and wasbs://: read
# as user info, their container was dropped and every container of an account became one store.
# Oracle Cloud's object storage is ``oci://bucket@namespace`` in the same way: read as user info,
# every bucket of a tenancy was one store.
_AUTHORITY_IS_NOT_USER_INFO = frozenset({"wasbs", "abfss", "wasb", "abfs", "oci"})
_BUCKET_SCHEMES = frozenset({"s3", "gs"}) | _AUTHORITY_IS_NOT_USER_INFO
_PATHS_MAY_HOLD_AN_AT = PATH_SCHEMES | _AUTHORITY_IS_NOT_USER_INFO
"""Schemes whose namespaces carry paths of files or objects, where an ``@`` after the host may
be part of one (``s3://bucket/exports@2026``) and ``dt=2026-01-01`` is a partition, not a
connection property (``_properties_start``); in any other scheme's namespace (a database's) an
``@`` before the query ends a user info (``_without_user_info``)."""


@dataclass(frozen=True, slots=True)
class NamespaceParts:
    """The pieces of a namespace that a System ``nameTemplate`` can use."""

    namespace: str
    scheme: str
    host: str
    port: str
    bucket: str

    def template_values(self, database: str | None = None) -> dict[str, str]:
        return {
            "namespace": self.namespace,
            "scheme": self.scheme,
            "host": self.host,
            "port": self.port,
            "bucket": self.bucket,
            "database": database or "",
        }


@dataclass(frozen=True, slots=True)
class EntityName:
    """Where a dataset lands inside its System; ``rule`` says which rule decided it.

    ``database`` is the database (catalog, project) segment the rule found, ``None`` when the
    name has none: it picks the System where the definition selects by database, and tells two
    databases apart that land on one System. Equality is where the dataset lands (schema, name,
    rule), as before the database was read. ``namespace`` is the namespace of the TABLE symlink
    that named it (rule ``symlink``): the catalog the table is registered in, whose System holds
    it when one is had (``catalog.place_dataset``)."""

    schema: str | None
    name: str
    rule: str
    database: str | None = field(default=None, compare=False)
    namespace: str | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class NameReading:
    """How the dataset names of a namespace are read, as its ``systemPolicies`` entries declare.

    ``levels`` is the shape of the declared ``nameProfile`` (``("database", "schema", "table")``,
    ``("database", "table")``: the database is the schema), ``None`` for the seed's profile of
    the scheme; ``default_schema`` the schema of a name with no schema part; ``case``
    ``UPPER``, ``LOWER`` or ``PRESERVE``/``None`` (never re-cased). ``quoted_folds``: the
    platform's catalog stores every name in ``case``, quoted or not (Unity Catalog, Hive's
    metastore, Trino: ``quoted_identifiers_fold``), so ``case`` re-cases quoted identifiers too.
    ``column_case``: ``case`` for column names, ``None`` on a platform whose columns keep the
    case they were created in whatever case its tables fold to (``column_case``)."""

    levels: tuple[str, ...] | None = None
    default_schema: str | None = None
    case: str | None = None
    quoted_folds: bool = False
    column_case: str | None = None


NO_READING = NameReading()


@lru_cache(maxsize=4096)
def normalize_namespace(namespace: str) -> str:
    """The namespace as the naming conventions spell it, without user info.

    ``postgresql://USER:pw@DB.Example.com/`` becomes ``postgres://db.example.com:5432``. A
    namespace that is not a URI (``hop``, ``bigquery``, ``file``) is returned trimmed, and a
    URI with neither host nor path is its scheme (``file://`` and ``file:///`` are ``file``, as
    seed 002 names that scheme; ``bigquery://`` is ``bigquery``). A Redshift endpoint is named by
    its cluster and region (``_redshift_cluster``); Azure's container and account in lower case.
    The host
    and the port are trimmed, a blank port (``db:``) is the default port like an absent one, and
    the query and the fragment are dropped whatever they hold (a ``/`` in ``?password=a/b``
    starts no path). Memoised: a catalog has few namespaces and each dataset, field and flow
    asks again.
    """
    text = namespace.strip()
    if "://" not in text:
        if text.lower() in _SCHEME_NAMESPACES:  # seed 002's ``bigquery`` and ``file``, any case
            return text.lower()
        return strip_user_info(text)  # only an Oracle thin URL has any: ``scott/tiger@db``
    scheme, rest = text.split("://", 1)
    scheme = _spelt_scheme(scheme)
    if scheme == "kafka":
        rest = _first_bootstrap_server(_KAFKA_PROTOCOL.sub("", rest, count=1))
    authority, path = _authority_and_path(scheme, rest)
    host, port = _split_host_port(authority)
    if scheme == "mssql":
        host, instance = _sql_server_instance(host, rest, path)
        if instance:  # the instance names the server on its host, whatever port it listens on
            return f"mssql://{host.lower()}/{instance}"
    if scheme not in _BUCKET_SCHEMES or scheme in _AUTHORITY_IS_NOT_USER_INFO:
        host = host.lower()  # Azure's container and account names are lower case only
    if scheme == "redshift":
        host = _redshift_cluster(host)
    if scheme == "snowflake":
        host, port = _snowflake_account(host), ""
    if scheme == "file" and host in _LOCAL_HOSTS and not port:
        host = ""  # RFC 8089: ``file://localhost/x`` is ``file:///x``
    if not port and host and scheme in DEFAULT_PORTS:
        port = str(DEFAULT_PORTS[scheme])
    authority = f"{host}:{port}" if port else host
    path = path.rstrip("/")
    if not authority and not path:
        # seed 002: the namespace of the ``file://`` scheme is ``file``; BigQuery's is
        # ``bigquery``, whatever follows it
        return scheme
    return f"{scheme}://{authority}/{path}" if path else f"{scheme}://{authority}"


_SCHEME_NAMESPACES = frozenset({"bigquery", "file"})
"""The namespaces that are a scheme alone (seed 002): a producer's ``BigQuery`` is ``bigquery``,
as a URI's scheme is read in any case (a probe of naming)."""


_ORACLE_URL = re.compile(r"(?is)^(?:jdbc:)?oracle:(?:thin|oci8?):(?:.*@)?(?P<address>[^@]*)$")
"""An Oracle JDBC URL, without ``jdbc:`` as openlineage-java sends a JDBC dataset's namespace
when it has no extractor for the driver (``oracle:thin:@//db:1521/ORCLPDB1``): the address
after the last ``@`` (a ``user/password@`` before it)."""
_ORACLE_PROTOCOL = re.compile(r"(?i)^(?:tcps?|ldaps?)://")
_ORACLE_HOST_PORT = re.compile(
    r"^(?P<host>\[[^\]/]+\]|[^:/\s\[\]()]+)(?::(?P<port>[0-9]*))?"
    r"(?:(?P<separator>[:/])(?P<database>[^:/\s]+))?"
)
_ORACLE_DESCRIPTOR = {
    part: re.compile(rf"(?i)\(\s*{part}\s*=\s*([^()\s]+)\s*\)")
    for part in ("HOST", "PORT", "SERVICE_NAME", "SID")
}


@lru_cache(maxsize=1024)
def _oracle_address(text: str) -> tuple[str, str, str | None] | None:
    """The host, port and service (or SID) of an Oracle thin or OCI URL: ``//host:port/service``,
    ``host:port/service``, ``host:port:SID``, with ``tcps://`` or not, or a descriptor
    ``(DESCRIPTION=(ADDRESS=(HOST=…)(PORT=…))(CONNECT_DATA=(SERVICE_NAME=…)))``; ``None`` for a
    TNS alias alone (``@orcl``, ``@mydb_high?TNS_ADMIN=/wallet``: its address is in
    tnsnames.ora) and for any other text."""
    found = _ORACLE_URL.match(text)
    if found is None:
        return None
    address = found.group("address").strip().split("?", 1)[0]  # ``?TNS_ADMIN=…``: no address
    if address.startswith("("):
        # each part read where it starts (no ``(`` inside a value): linear in the text
        parts = {
            name: (match.group(1) if (match := pattern.search(address)) else None)
            for name, pattern in _ORACLE_DESCRIPTOR.items()
        }
        host = parts["HOST"]
        if not host:
            return None
        port = parts["PORT"] if parts["PORT"] and parts["PORT"].isdigit() else "1521"
        return host.lower(), str(int(port)), parts["SERVICE_NAME"] or parts["SID"]
    address = _ORACLE_PROTOCOL.sub("", address)
    slashes = address.startswith("//")
    read = _ORACLE_HOST_PORT.match(address.removeprefix("//"))
    if read is None or not (slashes or read.group("port") is not None or read.group("database")):
        return None  # ``@orcl``: a TNS alias, whose address is in tnsnames.ora
    port = str(int(read.group("port"))) if read.group("port") else "1521"
    return read.group("host").lower(), port, read.group("database")


def server_of(namespace: str) -> tuple[str, str | None] | None:
    """The server a namespace that is an Oracle URL names, as the naming conventions spell it
    (``oracle://db:1521``), and its service or SID: the System of a crawler of that server
    (stamped ``oracle://db:1521`` with the service as its database) is the URL's datasets' when
    no entry or stamp names the URL itself (``catalog``), as Airflow's Oracle hook names them
    (a probe of producers). The URL stays the namespace: ``namespaceMappings`` written with it
    keep their services apart (a review). ``None`` for any other namespace."""
    oracle = _oracle_address(namespace.strip())
    if oracle is None:
        return None
    host, port, service = oracle
    return normalize_namespace(f"oracle://{host}:{port}"), service


def namespace_database(namespace: str) -> str | None:
    """The database a namespace names itself, where a producer puts it there rather than in
    the dataset's name: SQL Server's JDBC property ``;databaseName=dwh`` (or ``;database=``), an
    Oracle URL's service or SID (``oracle:thin:@//db:1521/ORCLPDB1``), as openlineage-java sends
    a JDBC dataset without an extractor for its driver (a probe of producers)."""
    text = namespace.strip()
    oracle = _oracle_address(text)
    if oracle is not None or "://" not in text:
        return oracle[2] if oracle is not None else None
    scheme, rest = text.split("://", 1)
    if _spelt_scheme(scheme) != "mssql":
        return None
    return _sql_server_property(rest, _DATABASE_PROPERTIES) or None


_DATABASE_PROPERTIES = frozenset({"databasename", "database"})
_UNQUOTED_VALUE_END = re.compile(r"[/?#]")


def _sql_server_property(rest: str, names: frozenset[str]) -> str:
    """The value of the first of SQL Server's connection properties (``;name=value`` after the
    host, before any ``?`` or ``#``) named one of ``names`` (lower case; any case in ``rest``,
    what follows ``scheme://``), as the driver reads it (``_property``); ``""`` for none."""
    rest = _without_user_info("mssql", rest)
    semicolon = rest.find(";")
    if semicolon < 0 or _QUERY_OR_FRAGMENT.search(rest, 0, semicolon):
        return ""
    return _property(rest[semicolon:], names) or ""


def _property(properties: str, names: frozenset[str]) -> str | None:
    """The value of the first of JDBC connection properties (``;user=etl;…``) named one of
    ``names`` (lower case), read as the driver reads them (``property_spans``): a value in
    braces or quotes is what they hold, whatever that is (``;databaseName={dwh}`` is ``dwh``,
    ``{a;b}}c}`` is ``a;b}c``); any other ends at a ``/``, ``?`` or ``#`` too. A property inside
    another's braces (``;password={x;databaseName=y}``) is none. ``None`` for none."""
    for _, _, name, value_start, value_end in property_spans(properties):
        if name is not None and name.lower() in names:
            value = properties[value_start:value_end].strip()
            if value[:1] == "{":  # SQL Server's quoting: braces only, not quotes (a review)
                return _in_braces(value).strip() or None
            return _UNQUOTED_VALUE_END.split(value, maxsplit=1)[0].strip() or None
    return None


def _in_braces(value: str) -> str:
    """What a braced value holds, to its closing brace (``}}`` a brace in it): ``{dwh}?x=1`` is
    ``dwh``; a brace never closed holds all the rest."""
    held: list[str] = []
    at = 1
    while at < len(value):
        if value[at] == "}":
            if not value.startswith("}}", at):
                break
            at += 1
        held.append(value[at])
        at += 1
    return "".join(held)


@lru_cache(maxsize=4096)
def namespace_identity(namespace: str) -> str:
    """The store a namespace names, down to the database it names: ``normalize_namespace``,
    with the database written back where normalising drops it, as ``;databaseName=<db>``.

    A JDBC URL's properties after the host are no part of the server's spelling
    (``sqlserver://sql01:1433;databaseName=dwh`` is ``mssql://sql01:1433``), but Spark names a
    SQL Server table so, the database in the namespace and ``dbo.Orders`` as the name: the
    normalised namespace alone made ``dwh``'s and ``stage``'s ``dbo.Orders`` one dataset, and a
    copy between them a table read and written (seed 001: "a table flow is always published").
    Two datasets are the same when their identities and names are. The database is read as
    ``namespace_database`` reads it (``;databaseName=`` or ``;database=``), without case on SQL
    Server, whose databases follow the server's collation; a namespace that keeps its database
    (an Oracle URL's service, a path: ``postgres://db:5432/prod``) is its normalised spelling."""
    normalized = normalize_namespace(namespace)
    text = namespace.strip()
    if "://" not in text or _oracle_address(text) is not None:
        return normalized  # an Oracle URL (or any other text) is kept whole, its service too
    scheme, rest = text.split("://", 1)
    rest = _without_user_info(_spelt_scheme(scheme), rest)
    end = _AUTHORITY_END.search(rest)
    semicolon = rest.find(";", 0, len(rest) if end is None else end.start())
    if semicolon < 0:
        return normalized  # no properties after the host: nothing was dropped
    # ``_authority_and_path`` drops all from the authority's first ``;``: the database too
    # read as the driver reads them: ``password={Pa;database=x}`` names no database (a review)
    database = _property(rest[semicolon:], _DATABASE_PROPERTIES)
    if not database:
        return normalized
    if normalized.startswith("mssql://"):
        database = database.casefold()  # ``DWH`` and ``dwh``: one SQL Server database
    return f"{normalized};databaseName={database}"


def _sql_server_instance(host: str, rest: str, path: str) -> tuple[str, str]:
    """The host and the named instance (lower case: SQL Server's names ignore case) of a SQL
    Server namespace, or ``""``: JDBC's ``;instanceName=X`` property, a host written
    ``host\\X`` (Airflow's MsSqlHook names the connection's host so), or the path that
    openlineage-java gives it (``sqlserver://host/X``). Two instances of one host are two
    servers; the default instance has no name."""
    named = _sql_server_property(rest, _INSTANCE_PROPERTIES)
    for separator in ("\\", "%5c", "%5C"):
        if separator in host:
            host, _, from_host = host.partition(separator)
            named = named or from_host
    named = named or path.split("/", 1)[0]
    return host.strip(), named.strip().lower()


_INSTANCE_PROPERTIES = frozenset({"instancename"})


_SQLALCHEMY_DIALECTS = frozenset(
    {*DEFAULT_PORTS, *SCHEME_ALIASES, "sqlite", "snowflake", "bigquery", "databricks"}
    | {"hive", "presto", "duckdb", "awsathena", "sybase", "firebird", "vertica"}
)
"""Schemes a SQLAlchemy URL may add its driver to (``postgresql+psycopg2``), as Great
Expectations and other SQLAlchemy clients name the store: the driver is no part of it."""

_KAFKA_PROTOCOL = re.compile(r"(?i)^\s*(?:PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL)://")
"""A listener's security protocol, which a producer copying ``bootstrap.servers`` verbatim puts
inside a Kafka namespace (``kafka://SASL_SSL://broker:9093``): no part of the cluster's name."""


def _spelt_scheme(scheme: str) -> str:
    """A namespace's scheme as the naming conventions spell it: lower case, its alias's
    spelling, without a SQLAlchemy driver (``postgresql+psycopg2`` is ``postgres``)."""
    lowered = scheme.strip().lower()
    dialect, plus, _ = lowered.partition("+")
    if plus and dialect in _SQLALCHEMY_DIALECTS:
        lowered = dialect
    return SCHEME_ALIASES.get(lowered, lowered)


def _first_bootstrap_server(rest: str) -> str:
    """A Kafka namespace's cluster as the naming conventions name it: by its first bootstrap
    server (``kafka://b1:9092,b2:9092`` is ``kafka://b1:9092``), each listed server possibly
    with its listener's protocol (``SASL_SSL://b1:9093,SASL_SSL://b2:9093``)."""
    comma = rest.find(",")
    query = _QUERY_START.search(rest)
    if comma < 0 or (query is not None and query.start() < comma):
        return rest
    return rest[:comma]


_QUERY_START = re.compile(r"[?#]")
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})


def _snowflake_account(host: str) -> str:
    """A Snowflake account as the naming conventions (and OpenLineage's clients) name it: an
    organisation's account (``myorg-acct``) alone; an account locator with its region and cloud
    (``xy12345.us-east-1`` is AWS's: ``xy12345.us-east-1.aws``; ``xy12345`` alone is in AWS's
    ``us-west-1``, as Airflow and dbt's OpenLineage integration fill it in). A host written as
    Snowflake's URL (``….snowflakecomputing.com``, ``….privatelink``) is its account."""
    host = _SNOWFLAKE_URL_END.sub("", host)
    parts = host.split(".")
    if not parts[0] or "-" in parts[0]:
        return parts[0]
    if len(parts) == 1:
        return f"{parts[0]}.us-west-1.aws"
    if len(parts) == 2:
        return f"{host}.aws"
    return host


def _redshift_cluster(host: str) -> str:
    """A Redshift endpoint's host as the naming conventions name the cluster: ``{cluster
    identifier}.{region}``. Airflow's Amazon provider sends it so; dbt and other clients send the
    endpoint (``my-dwh.abc123xyz.eu-west-1.redshift.amazonaws.com``, or a serverless workgroup's
    ``wg.123456789012.eu-west-1.redshift-serverless.amazonaws.com``): read as Airflow reads it,
    the first and the third of its six labels."""
    labels = host.split(".")
    if len(labels) == 6 and host.endswith(".amazonaws.com"):
        return f"{labels[0]}.{labels[2]}"
    return host


_AUTHORITY_END = re.compile(r"[/?#]")
_HOST_PORT = re.compile(r"\s*(?:\[[^\[\]]*\]|[^:\[\]]*)\s*(?::\s*[0-9]+\s*)?")
"""An authority that reads as ``host[:port]`` (an IPv6 literal, or a host with no colon)."""


def _without_user_info(scheme: str, rest: str) -> str:
    """``rest`` (what follows ``scheme://``) without the ``user:password@`` of its authority.

    The authority ends at the first ``/``, ``?`` or ``#`` (RFC 3986), and its user info at its
    last ``@``. A password that holds one of those three unencoded (``etl:pa/ss@db``) would end
    the authority early, and what follows would be kept as a path: when the authority so cut
    does not read as ``host[:port]`` and an ``@`` follows, the user info runs to the last ``@``
    of the text, so the secret is dropped whole (too much rather than too little, as
    ``redaction`` does). When it does read so (``etl:2024/pw@db``, ``etl/pw@db``), the user info
    runs to the last ``@`` before the query, except in a scheme whose paths may hold one (an
    object store, a file, HTTP, FTP). Azure's authority is ``container@account``, never a
    credential.

    An ``@`` in a database's connection properties (``;user=etl@tenant``, DB2's
    ``:password=p@ss;``, an account's e-mail) ends no user info: read so, the rest of a value
    was the host (``mssql://ss:1433`` of the password ``p@ss``). They are read as properties
    only where nothing else can be meant, a password may hold ``;k=v`` or ``,k=v`` too
    (``etl:Xy;k=9@db``, ``etl:1234;k=9@db``): in an authority, SQL Server's only
    (``_PROPERTIES_IN_AUTHORITY``), when what precedes them reads as ``host[:port]`` and no
    ``:`` (a ``user:password``) comes before the ``@``; in a path, when what follows the last
    ``@`` does not read as a host (``p@ss;``, ``p@ss,USER=etl``); in a URL nested in the
    namespace (Simba BigQuery's ``bigquery://https://www.googleapis.com/…;…Email=sa@proj…;``),
    as in its path. When in doubt the user info runs to the last ``@``.

    MySQL Connector/J's key-value hosts (``(host=db,port=3306,user=etl,password=…)``,
    ``address=(host=db)(port=3306)(password=…)``) are their first host and port alone: the user
    and the password are among their keys.
    """
    database = scheme not in _PATHS_MAY_HOLD_AN_AT
    kept = _without_user_at(scheme, rest, database)
    if database and kept[:1] in ("(", "a", "A", " ") and (hosts := _KEY_VALUE_HOSTS.match(kept)):
        return f"{_key_value_address(hosts.group('first'))}{kept[hosts.end() :]}"
    return kept


def _without_user_at(scheme: str, rest: str, database: bool) -> str:
    """``rest`` without the ``user:password@`` of its authority (``_without_user_info``), read
    with SQL Server's values in braces masked (``_masked_properties``)."""
    start, end = _user_info_cut(scheme, _masked_properties(scheme, rest), database)
    return rest if start == end else f"{rest[:start]}{rest[end:]}"


def _masked_properties(scheme: str, rest: str) -> str:
    """``rest`` (what follows ``scheme://``) with what SQL Server's connection properties hold
    in braces (or quotes) masked, each offset kept (``redaction.masked_quoted_values``): a
    value in braces is the value's whatever it holds (``;password={Pa:ss@w0rd}``); read as a
    user info's ``@``, the rest of the password was the host (``mssql://w0rd}:1433``), and a
    ``/``, ``?`` or ``#`` in it ended the authority."""
    if scheme.removeprefix("jdbc:") not in _PROPERTIES_IN_AUTHORITY:
        return rest
    semicolon = rest.find(";")
    if semicolon < 0 or not any(quote in rest for quote in "{'\""):
        return rest
    return f"{rest[:semicolon]}{masked_quoted_values(rest[semicolon:])}"


def _user_info_cut(scheme: str, rest: str, database: bool) -> tuple[int, int]:
    """Where the ``user:password@`` of ``rest``'s authority starts and ends (after its ``@``),
    ``(0, 0)`` for none (``_without_user_info``)."""
    if "@" not in rest or scheme in _AUTHORITY_IS_NOT_USER_INFO:
        return 0, 0
    nested = _NESTED_URL.match(rest) if database else None
    if nested is not None and nested.end():
        start, stop = _user_info_cut(scheme, rest[nested.end() :], database)
        return nested.end() + start, nested.end() + stop
    end = _AUTHORITY_END.search(rest)
    authority = rest[: end.start()] if end else rest
    jdbc = scheme.removeprefix("jdbc:")  # ``jdbc:sqlserver://…`` as a namespace
    if jdbc in _PROPERTIES_IN_AUTHORITY and (found := _AUTHORITY_PROPERTY.search(authority)):
        head = authority[: found.start()]  # SQL Server's ``sql01;user=etl@tenant;…``
        properties = authority[found.start() : max(authority.rfind("@"), found.start())]
        if _HOST_PORT.fullmatch(head[head.rfind("@") + 1 :]) and ":" not in properties:
            return 0, head.rfind("@") + 1
    if "@" in authority:
        return 0, authority.rindex("@") + 1
    if _HOST_PORT.fullmatch(authority):
        if not database:
            return 0, 0
        # ``etl:2024/pw@db`` and ``etl/pw@db`` cut at the ``/`` read as a host and a port too: a
        # database's namespace has no path that holds an ``@``, so the user info ends there, or
        # at its properties when the ``@`` is inside them
        searched = _QUERY_OR_FRAGMENT.split(rest, maxsplit=1)[0]
        in_path = jdbc in _PROPERTIES_IN_PATH
        first = _PATH_PROPERTY_FIRST.match(searched, len(authority))
        found = _PATH_PROPERTY.search(searched, len(authority))
        cut = first or found
        if cut is not None and (found is not None or in_path):
            # Teradata's properties are the whole path (``/PASSWORD=p@ss,USER=etl``): a list of
            # them there (another follows the first) holds any ``@`` that follows; so do the
            # properties of a scheme that takes them in its path, the last one's value too
            # (``;password=Pa@ss``, Kerberos' ``;principal=hive/_HOST@CORP``)
            at = searched.rfind("@")
            if first is not None or in_path or not _HOST_PORT_ENDS.match(searched, at + 1):
                searched = searched[: cut.start()]
        return 0, searched.rfind("@") + 1
    return 0, rest.rindex("@") + 1


_KEY_VALUE_HOSTS = re.compile(
    r"""(?ix) \s*+ (?P<first> address \s*+ = \s*+ (?: \( [^()]*+ \) \s*+ )++ | \( [^()]*+ \) )
    (?: \s*+ , \s*+ (?: address \s*+ = \s*+ )? (?: \( [^()]*+ \) \s*+ )++ )*+"""
)
"""MySQL Connector/J's hosts written as keys and values, ``(host=db,port=3306,user=etl)`` or
``address=(host=db)(port=3306)``, one or a list of them."""
_KEY_VALUE = re.compile(
    r"(?i)(?:^|[(,])\s*+(?:(host)\s*+=\s*+([^,()=@;/\s]*+)|(port)\s*+=\s*+([0-9]*+))"
)
"""A host's or a port's key and value (a host of the characters a host has: ``host=db``)."""


def _key_value_address(hosts: str) -> str:
    """``host:port`` of the first of MySQL Connector/J's key-value hosts (``_KEY_VALUE_HOSTS``):
    its other keys (``user``, ``password``, ``protocol``) are no part of the store's name."""
    host = port = ""
    for found in _KEY_VALUE.finditer(hosts):
        host = host or found.group(2) or ""
        port = port or found.group(4) or ""
    return f"{host}:{port}" if port else host


_NESTED_URL = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*+://)*+(?=[A-Za-z0-9\[])")
"""URLs nested in a namespace's (Simba BigQuery's ``bigquery://https://www.googleapis.com/…``),
read as the namespace's own authority and path."""
_HOST_PORT_ENDS = re.compile(
    r"\s*+(?:\[[^\[\]]*+\]|[^:\[\]/;,&=\s]*+)\s*+(?::\s*+[0-9]*+\s*+)?(?:/|\Z)"
)
"""What follows an ``@`` that ends a user info: ``host[:port]``, then a path or nothing (not
``ss;`` nor ``ss,USER=etl``: the rest of a property's value)."""


_PROPERTIES_IN_PATH = frozenset(
    {"db2", "teradata", "hive", "hive2", "impala", "spark", "sparksql", "databricks"}
)
"""Schemes whose JDBC URLs carry connection properties in their path (DB2's ``/SAMPLE:k=v;``,
Teradata's ``/K=V,…``, Hive's and Simba's ``/default;k=v``): an ``@`` after their start is a
value's (``;password=Pa@ssw0rd`` was the host ``ssw0rd``), never the end of a user info."""
_PROPERTIES_IN_AUTHORITY = frozenset({"mssql", "sqlserver"})
"""Schemes whose connection properties follow the host in the authority (SQL Server's
``sqlserver://sql01:1433;user=etl@tenant;…``). In another's authority a ``;`` is a password's
(``mysql://etl:1234;k=v@db1/shop``: read as properties after the host ``etl:1234``, the user
info stayed and the password's start was the System)."""


_PROPERTY = r"\s*(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)\s*="
"""A JDBC URL's connection property, ``name=value``, from its name to its ``=``."""
_AUTHORITY_PROPERTY = re.compile(rf";{_PROPERTY}")
"""A connection property in an authority: SQL Server's ``;name=value``."""
_PATH_PROPERTY = re.compile(rf"[;:,&]{_PROPERTY}")
"""A connection property in a path after ``;``, ``:``, ``,`` or ``&``: DB2's
``/SAMPLE:user=…;``, Teradata's ``,PASSWORD=…``, Simba's ``;OAuthPvtKey=…``."""
_PATH_PROPERTY_FIRST = re.compile(rf"/?{_PROPERTY}")
"""A connection property at a path's start: Teradata's ``/DATABASE=sales,…``."""


_QUERY_OR_FRAGMENT = re.compile(r"[?#]")


def _authority_and_path(scheme: str, rest: str) -> tuple[str, str]:
    """The authority without user info, and the path without query and fragment, of ``rest``."""
    rest = _without_user_info(scheme, rest)
    end = _AUTHORITY_END.search(_masked_properties(scheme, rest))
    authority, rest = (rest, "") if end is None else (rest[: end.start()], rest[end.start() :])
    if ";" in authority:
        # SQL Server's JDBC URL carries its properties after semicolons, ``;password=…`` among
        # them (``jdbc:sqlserver://db:1433;databaseName=dwh;password=…``): like a query, no part
        # of the store's identity, and neither is what follows them
        return authority.split(";", 1)[0], ""
    path = rest.split("?", 1)[0].split("#", 1)[0]
    cut = _properties_start(scheme, path)
    if cut < len(path) and scheme in _PATHS_MAY_HOLD_AN_AT:
        path = path[:cut].rstrip()  # ``warehouse;password=…``
    elif cut < len(path):
        properties, port = _identity_properties(scheme, path[cut:])
        path = f"{path[:cut].rstrip()}{properties}"  # ``SAMPLE ;user=…``
        if port and not _split_host_port(authority)[1]:
            authority = f"{authority.strip()}:{port}"  # Teradata's ``/DBS_PORT=1026``
    return authority, path.removeprefix("/")


def _identity_properties(scheme: str, properties: str) -> tuple[str, str]:
    """A database path's connection properties (``properties``, from the separator before the
    first, ``_properties_start``) without those that are no part of the store's identity, and
    the port Teradata's ``DBS_PORT=`` names (``""`` when none). Dropped: a property whose name
    names a secret (``redaction.is_secret_property``) and those that say how to connect, not to
    what (``_NOT_IDENTITY``: the user, the sign-in, TLS, time-outs); any other is kept as
    written, as it tells databases apart: Teradata's ``DATABASE=sales``, DB2's
    ``currentSchema=SALES``, BigQuery's ``ProjectId=``."""
    kept: list[str] = []
    port = ""
    lead = properties[:1] if properties[:1] in (";", ":", ",", "&", "/") else ""
    for start, end, name, value_start, value_end in property_spans(properties):
        if name is not None and scheme == "teradata" and name.upper() == "DBS_PORT":
            port = properties[value_start:value_end].strip()
            if port.isdigit():
                continue
            port = ""
        if name is not None and (is_secret_property(name) or _NOT_IDENTITY.match(name)):
            continue
        separator = properties[start - 1 : start] if start else ""
        kept.append(f"{separator if kept else lead}{properties[start:end]}")
    if not any(piece.strip(";:,&/ ") for piece in kept):
        return "/" if lead == "/" else "", port
    return "".join(kept), port


_NOT_IDENTITY = re.compile(
    r"""(?ix) (?:
        user(?:name|id)? | uid | logmech | \w*principal\w* | tmode
      | auth\w* | \w*authentication\w* | securitymechanism | oauth\w* | kerberos\w* | krb\w*
      | ssl\w* | \w*ssl | tls\w* | encrypt\w* | trustservercertificate | hostnameincertificate
      | \w*timeout | \w*trust\w*store\w* | \w*key\w*store\w* | charset | characterencoding
      | applicationname | clientprogramname | programname | loglevel | log | trace\w*
      | transportmode | retries | connectretry\w*
    ) \Z"""
)
"""Connection properties that say how to connect, not to which data: the user, how one signs in
(``auth=noSasl``, ``securityMechanism=15``, Simba's ``OAuthType``), TLS, time-outs, a client's
name, logging. Two namespaces that differ only in them name one store."""


def _properties_start(scheme: str, path: str) -> int:
    """Where a JDBC URL's connection properties start in the path of a ``scheme://`` URI (at
    the ``;``, ``:``, ``,`` or ``&`` before them), else the path's length. Like a query and SQL
    Server's ``;props``, they are no part of the store's identity, and may hold a secret: DB2's
    ``/SAMPLE:user=db2inst1;password=…;``, Teradata's ``/DATABASE=sales,PASSWORD=…``, Simba's
    ``;OAuthPvtKey=…``. In a database's path every property, and what follows a ``;``, starts
    them (``_identity_properties`` keeps those that tell databases apart); in a path that names
    files or objects (``_PATHS_MAY_HOLD_AN_AT``: ``dt=2026`` is a partition) only one whose name
    names a secret (``redaction.names_a_secret``), and all that follows it is dropped; after a
    ``,`` or ``:`` (an object key's characters) only in the path's last segment
    (``warehouse,password=…``): a folder ``raw,token=eth/transfers`` is a prefix of keys, cut
    there it was one store with ``raw,token=btc/transfers``."""
    database = scheme not in _PATHS_MAY_HOLD_AN_AT
    end = path.find(";") if database and ";" in path else len(path)
    if "=" not in path:
        return end
    if database and _PATH_PROPERTY_FIRST.match(path):
        return 0
    last_segment = path.rfind("/")
    for found in _PATH_PROPERTY.finditer(path, 0, end):
        if database or (
            names_a_secret(found.group("name"))
            and (path[found.start()] == ";" or found.start() > last_segment)
        ):
            return found.start()
    return end


_GLOB = re.compile(r"[*?\[]")


@lru_cache(maxsize=1024)
def normalize_pattern(pattern: str) -> str:
    """A namespace pattern in the spelling namespaces are matched in (``normalize_namespace``).

    Namespaces are normalised before they are matched, so a pattern written as a producer spells
    its namespace must be too: ``postgresql://DB:5432`` or ``postgres://db`` would otherwise never
    match the namespace ``postgres://db:5432`` they name. A pattern without wildcards is
    normalised whole; in one with wildcards only the scheme (case and alias: ``S3A://*`` is
    ``s3://*``) and the host's case are (``kafka://Broker*`` matches ``kafka://broker1:9092``, a
    host being lower case in every namespace but a bucket's), since a default port cannot be
    added to ``postgres://db*``; a trailing ``/`` is dropped, as from every namespace
    (``s3://raw-*/`` would otherwise match nothing).
    """
    if not _GLOB.search(pattern):
        return normalize_namespace(pattern)
    scheme, sep, rest = pattern.partition("://")
    if not sep or _GLOB.search(scheme):
        return pattern
    scheme = _spelt_scheme(scheme)
    if scheme == "kafka":
        rest = _KAFKA_PROTOCOL.sub("", rest, count=1)
    if scheme not in _BUCKET_SCHEMES or scheme in _AUTHORITY_IS_NOT_USER_INFO:
        authority, slash, path = rest.partition("/")
        if not slash and scheme in _PATHS_MAY_HOLD_AN_AT - _AUTHORITY_IS_NOT_USER_INFO:
            # a ``*`` may run on into a path (``hdfs://*Warehouse*``): the host is what comes
            # before the first wildcard (``hdfs://NameNode*``)
            glob = _GLOB.search(authority)
            at = glob.start() if glob else len(authority)
            authority, path = authority[:at], authority[at:]
        authority = authority.lower()
        if scheme == "snowflake":  # ``*.snowflakecomputing.com``: the account alone
            authority = _SNOWFLAKE_URL_END.sub("", authority)
        rest = f"{authority}{slash}{path}"
    return f"{scheme}://{rest.rstrip('/')}"


_SNOWFLAKE_URL_END = re.compile(r"(?:\.privatelink)?(?:\.snowflakecomputing\.com)?(?=$|:)")
"""What Snowflake's URL adds to an account: ``.snowflakecomputing.com``, with ``.privatelink``
before it for a private endpoint, or ``.privatelink`` alone (a host's or a pattern's end)."""


def matches_namespace(namespace: str, pattern: str) -> bool:
    """Whether a normalised ``namespace`` matches a normalised ``pattern`` (a shell-style glob).

    A namespace at its scheme's default port is matched without it too, when the pattern names
    no port: a producer may leave the port out, so ``hdfs://*.corp`` (or ``postgres://*.corp``)
    is written for ``hdfs://nn.corp``, which is ``hdfs://nn.corp:8020`` once normalised. The
    local file system is matched as ``file://localhost`` too (``file://localhost/*``)."""
    if fnmatchcase(namespace, pattern):
        return True
    if namespace == "file" or namespace.startswith("file:///"):  # ``file://localhost*``
        return fnmatchcase(f"file://localhost{namespace[len('file://') :]}", pattern)
    scheme, sep, rest = namespace.partition("://")
    port = DEFAULT_PORTS.get(scheme)
    if not sep or port is None or not _GLOB.search(pattern):
        return False
    authority, slash, path = rest.partition("/")
    if not authority.endswith(f":{port}") or ":" in pattern.partition("://")[2].partition("/")[0]:
        return False
    return fnmatchcase(f"{scheme}://{authority[: -len(str(port)) - 1]}{slash}{path}", pattern)


def lower_scheme(text: str) -> str:
    """``text`` with the scheme of a URI in lower case (``ELASTICSEARCH://h`` →
    ``elasticsearch://h``): URI schemes are case-insensitive (RFC 3986), hosts and paths are not
    touched. A pattern spells its scheme the same way, so that matching ignores its case."""
    scheme, sep, rest = text.partition("://")
    return f"{scheme.lower()}{sep}{rest}" if sep else text


def strip_user_info(uri: str) -> str:
    """``uri`` without the ``user:password@`` part of its authority (Azure's is kept: seed 002);
    a password with an unencoded ``/``, ``?``, ``#`` or ``@`` is dropped whole too. An Oracle
    thin URL's ``user/password@`` (no ``://``) is dropped as well: ``jdbc:oracle:thin:@db``."""
    if "://" not in uri:
        if "@" not in uri:
            return uri
        return _oracle_without_credentials(uri)
    scheme, rest = uri.split("://", 1)
    kept = _without_user_info(scheme.lower(), rest)
    return uri if kept is rest else f"{scheme}://{kept}"


def _oracle_without_credentials(uri: str) -> str:
    """``jdbc:oracle:thin:scott/tiger@db`` as ``jdbc:oracle:thin:@db``: the user and password,
    from the last ``:`` before the user's ``/`` to the ``@``, dropped."""
    parts: list[str] = []
    copied = 0
    for user_end, at in oracle_passwords(uri):
        parts.append(uri[copied : uri.rindex(":", 0, user_end) + 1])
        copied = at
    return "".join(parts) + uri[copied:] if parts else uri


def dataset_uri(namespace: str, name: str) -> str:
    """The dataset a namespace and a name identify, as one text (an entity's
    ``openLineageDataset``): the normalised namespace, then the name after a ``/`` unless the
    name is an absolute path (``hdfs://nn:8020`` + ``/warehouse/t``; ``file`` + ``/data/x`` is
    ``file:///data/x``)."""
    normalized = normalize_namespace(namespace)
    if not name.startswith("/"):
        return f"{normalized}/{name}"
    return f"file://{name}" if normalized == "file" else f"{normalized}{name}"


@lru_cache(maxsize=4096)
def shown_namespace(namespace: str) -> str:
    """``namespace`` as a report, a log or an entity's source may quote it: as the producer
    spelt it, but without user info and with its secret query parameters as ``***``.

    Seed 002: "URI user info (credentials) is dropped from the namespace, so no secret reaches
    the lineage graph" — nor the run report that names the dataset (design §6). The connection
    properties of its path (``_properties_start``: DB2's ``:apiKey=…;``, Teradata's
    ``,PASSWORD=…``) and of a database's authority (SQL Server's ``;password={…}``) show their
    secrets as ``***`` too, each value whole (``redaction.redact_properties``).
    """
    shown = strip_user_info(namespace)
    scheme, separator, rest = shown.partition("://")
    if not separator or "=" not in rest:
        return redact_query(shown)
    spelt = _spelt_scheme(scheme)
    end = _AUTHORITY_END.search(rest)
    semicolon = rest.find(";", 0, end.start() if end else len(rest))
    at = len(rest)
    if semicolon >= 0 and spelt not in _PATHS_MAY_HOLD_AN_AT:
        at = semicolon  # SQL Server's ``;password={a;b}``: a value runs past a ``;`` in braces
    elif end is not None and rest[end.start()] == "/":
        path = _QUERY_OR_FRAGMENT.split(rest[end.start() :], maxsplit=1)[0]
        if (cut := _properties_start(spelt, path)) < len(path):
            at = end.start() + cut  # a ``#`` or a blank ends no value: ``password=a#b;``
    if at < len(rest):
        shown = f"{scheme}://{rest[:at]}{redact_properties(rest[at:])}"
    return redact_query(shown)


def _split_host_port(authority: str) -> tuple[str, str]:
    """Host and port of an authority without user info, trimmed (seed 002: the host is)."""
    authority = authority.strip()
    if authority.startswith("[") and "]" in authority:  # IPv6 literal
        host, _, rest = authority.partition("]")
        return _ipv6(host[1:]), rest.removeprefix(":")
    host, sep, port = authority.rpartition(":")
    port = port.strip()
    if sep and (port.isdigit() or not port):  # ``db:`` has a blank port
        return host.strip(), port
    if sep and port == "-1":  # Java's "no port" (``URI.getPort()``): Spark's Kafka namespaces
        return host.strip(), ""
    return authority.strip(), ""


def _ipv6(address: str) -> str:
    """An IPv6 literal in brackets, in its compressed form (RFC 5952): Java prints
    ``fd00:0:0:0:0:0:0:1`` where Python and people write ``fd00::1``, one server (a probe of
    naming). A zone or anything that is no address is kept as written."""
    try:
        return f"[{ipaddress.IPv6Address(address.strip()).compressed}]"
    except ValueError:
        return f"[{address}]"


def _authority(namespace: str) -> tuple[str, str]:
    """Scheme and authority of a URI namespace: what lies between ``://`` and ``/``, ``?``, ``#``.

    Read by hand, not with ``urllib.parse``: ``urlsplit`` raises ``ValueError`` for a bracket
    outside an IPv6 literal and for some non-ASCII hosts, and no namespace may stop a run.
    """
    scheme, _, rest = namespace.partition("://")
    for end in "/?#":
        rest = rest.split(end, 1)[0]
    return scheme.lower(), rest


_IPV6_LITERAL = re.compile(r"\[([^\[\]]*)\](?::[0-9]*)?")


def namespace_problem(namespace: str) -> str | None:
    """Why ``namespace`` cannot name a store, or None when it can.

    A namespace is bad when it is empty, or when it is a URI whose authority cannot be read: a
    ``[`` or ``]`` anywhere but around an IPv6 address at the start of the host. Such a namespace
    still resolves by an explicit ``namespaceMappings`` entry or an ``openLineageNamespace``
    stamp (plain text comparisons), but no System is created from it. The reason never quotes
    the namespace (the report's example names the dataset).
    """
    if not namespace.strip():
        return "the namespace is empty"
    if "://" not in namespace:
        return None
    scheme, _, rest = namespace.strip().partition("://")
    authority, _ = _authority_and_path(scheme.lower(), rest)
    authority = authority.strip()
    if "[" not in authority and "]" not in authority:
        return None
    literal = _IPV6_LITERAL.fullmatch(authority)
    if literal is None:
        return "the namespace is not a valid URI: a bracket outside an IPv6 address literal"
    try:
        ipaddress.IPv6Address(literal.group(1))
    except ValueError:
        return "the namespace is not a valid URI: its bracketed host is not an IPv6 address"
    return None


def namespace_parts(namespace: str) -> NamespaceParts:
    """Scheme, host, port and bucket of a (normalised) namespace; empty strings when absent.

    Total: any text gives parts (see ``namespace_problem`` for the namespaces that are bad).
    """
    if "://" not in namespace:
        return NamespaceParts(namespace, "", "", "", "")
    scheme, authority = _authority(namespace)
    host, port = _split_host_port(authority.rsplit("@", 1)[-1])
    bucket = host if scheme in _BUCKET_SCHEMES else ""
    if scheme in _AUTHORITY_IS_NOT_USER_INFO:
        bucket = authority.split("@", 1)[0]
    return NamespaceParts(namespace, scheme, host, port, bucket)


# -- dataset name → schema and entity -----------------------------------------------------------

_PARTITION = re.compile(r"^[^=/]+=[^/]*$")
_WRITER_FILE = re.compile(r"^(part-.*|_SUCCESS|_committed_.*|_started_.*)$")
"""The files a writer leaves in a dataset folder (Spark's and Hadoop's ``part-…`` files, the
``_SUCCESS`` marker, Databricks' ``_committed_``/``_started_`` markers), whatever follows."""

DATA_FILE_EXTENSIONS = frozenset(
    {
        # tabular and serialised data
        "parquet", "pq", "orc", "avro", "csv", "tsv", "psv", "txt", "dat", "json", "jsonl",
        "ndjson", "xml", "xls", "xlsx", "arrow", "feather", "ipc", "h5", "hdf5", "npy", "npz",
        "pkl", "pickle", "sas7bdat", "sav", "dta", "seq", "rc", "crc",
        # compressed or archived
        "gz", "gzip", "bz2", "zst", "zstd", "snappy", "lz4", "lzo", "deflate", "xz", "zip", "tar",
        "tgz", "7z",
    }
)  # fmt: skip
"""Extensions of data formats (and of the compressions a data file is written in): a segment
ending in one of them is a file, by seed 000's "names with an extension". Any other dot names a
folder (``orders.v2``, ``Events.2024``, Hive's ``sales.db``), as a crawler of the bucket lists
it. Compared in lower case (``ORDERS.CSV``)."""

OBJECT_STORE_SCHEMES = frozenset({"s3", "gs", "abfss", "abfs", "wasbs", "wasb", "hdfs", "file"})
"""The schemes whose dataset names are paths (seed 002's file table): ``object_key_entity``
splits them into folders. Of these only ``s3://`` has seed 000's profile by default; the others
keep the seed's rule ("Other schemes need the hierarchy facet or a symlinks entry")."""


_QUOTES = {'"': '"', "`": "`", "[": "]"}
"""Opening quote → closing quote: SQL's, MySQL's and BigQuery's, SQL Server's brackets."""


@dataclass(frozen=True, slots=True)
class _Segment:
    """One identifier of a dotted name, without its quotes; ``quoted`` keeps its case."""

    text: str
    quoted: bool


def _segments(name: str) -> list[_Segment]:
    """``name`` split at its dots, but not at a dot inside a quoted identifier, each segment
    trimmed and without its quotes (seed 002: "trimmed", "no surrounding quotes").

    A producer that quotes (``analytics."my.schema"."tbl"``) names the schema ``my.schema``, not
    ``schema"``. A doubled quote inside a quoted identifier (``"a""b"``) is one quote of the
    identifier; an unbalanced quote quotes the rest of the name. A ``[`` quotes only where an
    identifier starts (SQL Server's ``[dbo].[Orders]``). A segment that is only partly quoted
    (``"a"b``) keeps its characters as they are.
    """
    if not any(quote in name for quote in _QUOTES):
        return [_Segment(part.strip(), False) for part in name.split(".")]
    raw: list[str] = []
    start, closing = 0, ""
    for index, char in enumerate(name):
        if closing:
            closing = "" if char == closing else closing
        elif char in _QUOTES and (char != "[" or not name[start:index].strip()):
            closing = _QUOTES[char]
        elif char == ".":
            raw.append(name[start:index])
            start = index + 1
    raw.append(name[start:])
    return [_unquoted(part.strip()) for part in raw]


def _unquoted(text: str) -> _Segment:
    """A trimmed segment without its surrounding quotes (a doubled quote inside is one)."""
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] == _QUOTES[text[0]]:
        closing = _QUOTES[text[0]]
        inner = text[1:-1]
        if closing * 2 in inner or closing not in inner:
            return _Segment(inner.replace(closing * 2, closing).strip(), True)
    return _Segment(text, False)


def _cased(segment: _Segment, case: str | None, quoted_folds: bool = False) -> str:
    """The identifier in the declared case; a quoted one, and any when none is declared, as
    it is (seed 002: "never re-cased"; the database "stores it as quoted"). So is one that no
    database takes unquoted (``Order Items``, ``straße``: a blank, a letter outside ASCII, a
    hyphen): the producer named a quoted identifier without its quotes, and a database folds
    the case of an unquoted one's ASCII letters only (``ß`` would become ``SS``). Where the
    platform's catalog stores every name in one case (``quoted_folds``: Unity Catalog, Trino),
    quoted or not, every identifier is re-cased: `` `Orders` `` is stored ``orders``."""
    if case not in ("UPPER", "LOWER"):
        return segment.text
    if not quoted_folds and (segment.quoted or not _UNQUOTED_IDENTIFIER.match(segment.text)):
        return segment.text
    return segment.text.upper() if case == "UPPER" else segment.text.lower()


QUOTED_CASE_FOLDS = frozenset(
    {
        "databricks",  # Unity Catalog (and its hive_metastore) stores every name in lower case
        "spark",  # Spark's session catalog: Hive's metastore
        "hive",  # the metastore lower-cases every database, table and column name
        "impala",  # Hive's metastore
        "trino",  # Trino lower-cases every identifier, quoted or not
        "presto",
        "athena",  # Glue's catalog: lower case only
        "awsathena",
        # Redshift folds a quoted identifier too, unless enable_case_sensitive_identifier is on
        # (declare ``nameProfile: postgres`` on such a cluster's namespace)
        "redshift",
        # quoting does not make a name case-sensitive: ``lower_case_table_names`` (which
        # ``identifierCase: LOWER`` declares) folds every table and database name
        "mysql",
        "mariadb",
    }
)
"""Platforms (a declared ``nameProfile``, else a namespace's scheme) whose catalogs store every
name in one case, quoted or not: a declared ``identifierCase`` re-cases their quoted identifiers
too. On the others a quoted identifier keeps its case: Snowflake, Oracle, Db2, PostgreSQL and
Cassandra fold only unquoted names; SQL Server, BigQuery, Teradata, ClickHouse, DuckDB and SQLite
fold none, keeping each name as it was created (an ``identifierCase`` there re-cases only what a
producer spelt otherwise)."""


def quoted_identifiers_fold(namespace: str, profile: str | None = None) -> bool:
    """Whether the platform of a namespace stores quoted identifiers in its case too
    (``QUOTED_CASE_FOLDS``): the declared ``nameProfile`` names the platform, where it names one
    (not ``DOTTED`` nor ``OBJECT_KEY``), else the namespace's scheme (``trino://``)."""
    platform = profile if profile and not profile.isupper() else _scheme(namespace)
    return platform in QUOTED_CASE_FOLDS


_UNQUOTED_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$#@]*\Z")
"""What Snowflake, Oracle, SQL Server, Db2 and the others take unquoted: a letter or ``_``
first, then letters, digits, ``_``, ``$`` (and Oracle's ``#``, SQL Server's ``@``)."""


def cased_identifier(text: str, case: str | None, *, quoted_folds: bool = False) -> str:
    """A column (or any one identifier) as the database stores it under the declared
    ``identifierCase``: unquoted and re-cased, a quoted one keeping its case unless the
    platform folds quoted ones too (``quoted_folds``); as it is when no case is declared
    (seed 002: "never re-cased")."""
    if case not in ("UPPER", "LOWER"):
        return text
    return _cased(_unquoted(text.strip()), case, quoted_folds)


def cased_name(name: str, case: str | None, *, quoted_folds: bool = False) -> str:
    """A dataset's dotted name as its database stores it under the declared ``identifierCase``:
    each segment re-cased, a quoted one keeping its case (without its quotes) unless the
    platform folds quoted ones too (``quoted_folds``); as it is when no case is declared
    (seed 002: "never re-cased")."""
    if case not in ("UPPER", "LOWER"):
        return name
    return ".".join(_joinable(segment, case, quoted_folds) for segment in _segments(name))


INSENSITIVE = "INSENSITIVE"
"""A stored name that differs from the planned one in case only is the same object."""
UNQUOTED_UPPER = "UPPER"
"""The stored name is the planned one as an unquoted identifier folds: upper case."""
UNQUOTED_LOWER = "LOWER"
"""The stored name is the planned one as an unquoted identifier folds: lower case."""


@dataclass(frozen=True, slots=True)
class CaseMatching:
    """How the sync matches a planned entity (``tables``, its schema and name) and a planned
    field (``columns``) to what its System stores, when nothing is stored spelt exactly as
    planned: ``INSENSITIVE`` (a unique stored name equal but for case), ``UPPER`` / ``LOWER``
    (the stored name the planned one folds to unquoted) or ``None`` (exact only)."""

    tables: str | None = None
    columns: str | None = None


NO_MATCHING = CaseMatching()

PLATFORM_CASE_MATCHING: dict[str, CaseMatching] = {
    # SQL Server (and Synapse): names follow the collation, case-insensitive by default
    "mssql": CaseMatching(INSENSITIVE, INSENSITIVE),
    "sqlserver": CaseMatching(INSENSITIVE, INSENSITIVE),
    "synapse": CaseMatching(INSENSITIVE, INSENSITIVE),
    # MySQL: columns never have case; tables have it under lower_case_table_names=0, Linux's
    # default (``Orders`` and ``orders`` are two tables: a job's new ``orders`` is no crawled
    # ``Orders``, a review), and are stored lower case under 1 (declare identifierCase LOWER)
    "mysql": CaseMatching(None, INSENSITIVE),
    "mariadb": CaseMatching(None, INSENSITIVE),
    # Databricks (Unity folds tables to lower case, keeps the case of columns), Spark and the
    # Hive metastore: resolved without case
    "databricks": CaseMatching(INSENSITIVE, INSENSITIVE),
    "spark": CaseMatching(INSENSITIVE, INSENSITIVE),
    "hive": CaseMatching(INSENSITIVE, INSENSITIVE),
    # Teradata: identifiers are not case-specific
    "teradata": CaseMatching(INSENSITIVE, INSENSITIVE),
    # BigQuery: datasets and tables have case, columns do not
    "bigquery": CaseMatching(None, INSENSITIVE),
    # Snowflake, Oracle, Db2: an unquoted identifier is stored upper case; a column a crawler
    # holds as ``OrderDate`` was created quoted, and a facet's ``ORDERDATE`` or ``orderdate``
    # means it when no other column is spelt so but for case
    "snowflake": CaseMatching(UNQUOTED_UPPER, INSENSITIVE),
    "oracle": CaseMatching(UNQUOTED_UPPER, INSENSITIVE),
    "db2": CaseMatching(UNQUOTED_UPPER, INSENSITIVE),
    # Trino: every identifier is stored lower case
    "trino": CaseMatching(UNQUOTED_LOWER, UNQUOTED_LOWER),
}
"""Scheme → how its stored names are matched (``CaseMatching``): the platforms whose
identifiers are case-insensitive at that level. Any other scheme: exact names only."""


def _platform(namespace: str) -> str:
    """The scheme of a normalised namespace (``bigquery`` of ``bigquery``)."""
    return namespace.split("://", 1)[0] if "://" in namespace else namespace.split("/", 1)[0]


def case_matching(namespace: str, declared: str | None = None) -> CaseMatching:
    """How the names of a normalised namespace are matched to those stored: ``INSENSITIVE``
    when the definition declares ``identifierCase: INSENSITIVE``, exact when it declares
    ``PRESERVE`` (a SQL Server of a case-sensitive collation: ``Orders`` and ``orders`` are two
    tables there), else the platform's."""
    if declared == INSENSITIVE:
        return CaseMatching(INSENSITIVE, INSENSITIVE)
    if declared == "PRESERVE":
        return NO_MATCHING
    return PLATFORM_CASE_MATCHING.get(_platform(namespace).lower(), NO_MATCHING)


def column_case(namespace: str, case: str | None) -> str | None:
    """The ``identifierCase`` that applies to the columns of a normalised namespace: the
    declared one, as for its tables, so that check codes and flow names stay what they were
    (a review: not re-casing them on Databricks, where columns keep the case they were created
    in, changed the codes of every declared deployment); the sync adopts a crawled column's
    spelling where the platform names columns without case (``CaseMatching.columns``)."""
    if case in (None, "PRESERVE", INSENSITIVE):
        return None
    return case


def same_but_case(planned: str, stored: str, rule: str | None) -> bool:
    """Whether ``stored`` names what ``planned`` names under a ``CaseMatching`` rule (equal
    names are; ``None`` takes nothing else)."""
    if planned == stored:
        return True
    if rule == INSENSITIVE:
        return planned.casefold() == stored.casefold()
    if rule in (UNQUOTED_UPPER, UNQUOTED_LOWER) and _UNQUOTED_IDENTIFIER.match(planned):
        return stored == (planned.upper() if rule == UNQUOTED_UPPER else planned.lower())
    return False


def _joinable(segment: _Segment, case: str | None, quoted_folds: bool) -> str:
    """A segment re-cased for a dotted name: a quoted one that holds a dot keeps its quotes
    (``db."My.Table"`` is no ``db."My"."Table"``)."""
    if segment.quoted and "." in segment.text:
        text = _cased(segment, case, quoted_folds)
        return '"' + text.replace('"', '""') + '"'
    return _cased(segment, case, quoted_folds)


def completes(short: str, full: str) -> bool:
    """Whether ``full`` is ``short`` with segments before it filled in: ``shop.orders`` of
    ``orders``, of ``.orders`` and of Airflow's ``None.orders`` (seed 002: blank segments are
    "filled from the connection's own catalog and preferred schema"). Segments compared without
    their quotes, and without case unless quoted."""
    tail = _segments(without_statement_end(short))
    whole = _segments(without_statement_end(full))
    blank = [not part.text or _is_python_none(part) for part in tail[:-1]]
    if len(tail) > len(whole) or (len(tail) == len(whole) and not any(blank)):
        return False
    pairs = zip(reversed(tail), reversed(whole), [False, *reversed(blank)], strict=False)
    return all(unknown or _same_identifier(a, b) for a, b, unknown in pairs)


def _same_identifier(a: _Segment, b: _Segment) -> bool:
    """Two identifiers alike: a quoted one exactly (its case is its own), others without case."""
    if a.quoted or b.quoted:
        return a.text == b.text
    return a.text.casefold() == b.text.casefold()


def without_statement_end(name: str) -> str:
    """``name`` without the ``;`` (and blanks) a producer left after it: seed 002, "no trailing
    semicolon" (``shop.sales.refunds;`` is the table ``refunds``)."""
    stripped = name.rstrip()
    if not stripped.endswith(";"):
        return name
    while stripped.endswith(";"):
        stripped = stripped[:-1].rstrip()
    return stripped


def _dotted(
    name: str,
    default_schema: str | None,
    *,
    case: str | None = None,
    quoted_folds: bool = False,
    schema_is_database: bool = False,
) -> EntityName:
    """``database.schema.table`` → (schema, table); ``schema.table`` too; ``table`` → default.

    Seed 002: segments are "trimmed, but never re-cased", and a blank one is filled from the
    connection ("so a read of schema.table and a write of catalog.schema.table resolve to one
    identity"): ``analytics..orders`` and `` staging . orders`` name the schema as ``orders``
    and ``staging.orders`` do — a blank schema is the default one (seed 000: "With no schema
    part, public."), never a schema named ``""``. The database is what comes before the schema
    (a BigQuery project ``example.com:proj`` holds a dot), or the schema itself on a platform
    whose names are ``{database}.{table}`` (``schema_is_database``: MySQL, Hive, ...).
    """
    parts = _segments(without_statement_end(name))
    parts[:-1] = [_BLANK if _is_python_none(part) else part for part in parts[:-1]]
    table = _cased(parts[-1], case, quoted_folds)
    if len(parts) == 1:
        return EntityName(default_schema, table, "profile")
    schema = _cased(parts[-2], case, quoted_folds) or default_schema
    if schema_is_database:
        database = _cased(parts[-2], case, quoted_folds) or None
    else:
        database = ".".join(_cased(part, case, quoted_folds) for part in parts[:-2]) or None
    return EntityName(schema, table, "profile", database)


_BLANK = _Segment("", False)


def _is_python_none(segment: _Segment) -> bool:
    """A segment Airflow's SQL parser wrote as Python's ``None`` (``f"{schema}.{table}"`` of a
    table it found no schema of, on MySQL when the database could not be asked): a blank one,
    filled as seed 002 says. A quoted ``"None"`` is a name."""
    return segment.text == "None" and not segment.quoted


def _glue(name: str) -> EntityName:
    """``table/<database>/<table>`` → (database, table)."""
    parts = [part for part in name.split("/") if part]
    if parts and parts[0] == "table":
        parts = parts[1:]
    if len(parts) >= 2:
        return EntityName(parts[-2], parts[-1], "profile")
    return EntityName("default", parts[-1] if parts else name, "profile")


def is_data_file(segment: str) -> bool:
    """Whether the last segment of a key names a file by seed 000's rules: ``part-…``,
    ``_SUCCESS`` (and the other markers of ``_WRITER_FILE``), or an extension of a known data
    format (``DATA_FILE_EXTENSIONS``); ``orders.v2`` and ``Events.2024`` are folders."""
    if _WRITER_FILE.match(segment):
        return True
    stem, dot, extension = segment.rpartition(".")
    return bool(dot and stem.strip(".")) and extension.lower() in DATA_FILE_EXTENSIONS


def _namespace_path(namespace: str) -> str:
    """The path a (normalised) URI namespace carries after its authority: ``raw`` of
    ``s3://sales/raw``, ``data`` of ``file:///data``; ``""`` for most namespaces."""
    _, sep, rest = normalize_namespace(namespace).partition("://")
    return rest.partition("/")[2].strip("/") if sep else ""


def is_object_store(namespace: str) -> bool:
    """Whether ``namespace`` is a URI of an object store or file system
    (``OBJECT_STORE_SCHEMES``, in any of its spellings: ``s3a``, ``gcs``, ``abfs``…)."""
    return _scheme(namespace) in OBJECT_STORE_SCHEMES


def object_store_root(namespace: str) -> str | None:
    """The bucket (or namenode, or local file system) of an object store's namespace that
    carries a path, normalised: ``s3://sales`` of ``s3://sales/raw``, ``file`` of
    ``file:///data``; ``None`` for any other namespace. A producer configured with a base
    location sends it as the namespace, and its datasets land with the bucket's
    (``object_key_entity`` keeps the path as the key prefix): on the System a crawler of the
    bucket was stamped or mapped with, too."""
    if not is_object_store(namespace):
        return None
    scheme, _, rest = normalize_namespace(namespace).partition("://")
    authority, slash, path = rest.partition("/")
    if not slash or not path.strip("/"):
        return None
    return normalize_namespace(f"{scheme}://{authority}")


def object_key_entity(namespace: str, name: str, *, file: bool = False) -> EntityName:
    """The dataset folder of an object key (seed 000's ``s3://`` row; the same rules for the
    other path schemes of ``OBJECT_STORE_SCHEMES``).

    The key is the namespace's own path, if any, then the name (``s3://sales/raw`` +
    ``orders`` is ``raw/orders``: the path is the key prefix, never dropped), without a leading
    ``/`` (seed 002: "object key, no leading slash") nor empty segments. Its last segment is
    dropped when it is a file (``is_data_file``, or any name when ``file`` says the dataset is a
    file by its facets), unless the name ends with ``/``: a trailing ``/`` always names a
    folder. Then partition segments (``key=value``) are dropped from the end. What is left is
    the schema (the folders above, joined by ``/``) and the entity (the dataset folder); a key
    of which nothing would be left keeps its last segment.
    """
    prefix = _namespace_path(namespace)
    key = f"{prefix}/{name}" if prefix else name
    segments = [segment for segment in key.split("/") if segment]
    folder = name.rstrip().endswith("/")
    if len(segments) > 1 and not folder and (file or is_data_file(segments[-1])):
        segments.pop()  # only the last segment can be a file: what holds others is a folder
    while len(segments) > 1 and _PARTITION.match(segments[-1]):
        segments.pop()
    if not segments:
        return EntityName(None, name, "profile")
    schema = "/".join(segments[:-1]) or None
    return EntityName(schema, segments[-1], "profile")


def _profile(
    scheme: str,
    name: str,
    reading: NameReading = NO_READING,
    *,
    namespace: str = "",
    file: bool = False,
) -> EntityName | None:
    """The profile of a (normalised) namespace: the one its ``systemPolicies`` entry declares
    (``reading.levels``), else the seed's profile of its scheme; Glue's namespace is an ARN.
    ``namespace`` gives an object key its prefix, ``file`` says the dataset is a file."""
    case, folds = reading.case, reading.quoted_folds
    # a declared defaultSchema is re-cased as a schema the name gives is: ``Customers`` and
    # ``DWH.dbo.Customers`` are one table under ``identifierCase: UPPER`` (a review); the seed's
    # own ``public`` and ``default`` stay as the seed writes them
    if reading.default_schema and reading.case not in (None, "PRESERVE"):
        reading = replace(reading, default_schema=_declared_default(reading))
    if reading.levels == OBJECT_KEY_LEVELS:
        return object_key_entity(namespace, name, file=file)
    if reading.levels == NAME_PROFILES["bigquery"]:
        found = _dotted(
            _backticked_path(name), reading.default_schema, case=case, quoted_folds=folds
        )
        return replace(found, name=_without_decorator(found.name))
    if reading.levels is not None:
        link = ""
        if scheme == "oracle" and "@" in name and '"' not in name.rpartition("@")[2]:
            # a table through a database link (``HR.EMP@remote.example.com``): the link's
            # dots part no path, and the link stays with the table it names
            name, _, link = name.rpartition("@")
            link = "@" + cased_name(link.strip(), case, quoted_folds=folds)
        found = _dotted(
            name,
            reading.default_schema,
            case=case,
            quoted_folds=folds,
            schema_is_database=len(reading.levels) == 2,
        )
        return replace(found, name=found.name + link) if link else found
    if scheme.startswith("arn:aws:glue"):
        return _glue(name)
    if scheme in ("redshift", "postgres"):
        return _dotted(name, reading.default_schema or "public", case=case, quoted_folds=folds)
    if scheme == "awsathena":
        return _dotted(name, reading.default_schema or "default", case=case, quoted_folds=folds)
    if scheme == "s3":
        return object_key_entity(namespace, name, file=file)
    if scheme == "kafka":
        # the naming conventions' Kafka name is the topic: a TABLE symlink does not rename it
        # (Flink SQL links each topic to its session's in-memory ``default_catalog`` table)
        return _as_it_is(name, case, folds)
    return None


def _backticked_path(name: str) -> str:
    """A BigQuery path quoted whole (`` `project.dataset.table` ``, as BigQuery's SQL quotes a
    path) as the path it quotes: BigQuery's names hold no dot but a project's domain
    (``example.com:proj``), so its dots part the path as unquoted ones do."""
    text = without_statement_end(name).strip()
    if len(text) > 2 and text[0] == text[-1] == "`" and "`" not in text[1:-1] and "." in text:
        return text[1:-1]
    return name


def _without_decorator(table: str) -> str:
    """A BigQuery table without its partition or snapshot decorator (``orders$20261129``,
    ``orders$__UNPARTITIONED__``, legacy SQL's ``orders@-3600000``): a job that writes one
    partition names the table, which holds no ``$`` nor ``@``."""
    bare = table.split("$", 1)[0].split("@", 1)[0]
    return bare or table


def _scheme(namespace: str) -> str:
    """The scheme that picks a profile: a URI's scheme, or the whole of a Glue ARN (``""`` for
    any other namespace that is not a URI)."""
    normalized = normalize_namespace(namespace)
    if normalized.startswith("arn:aws:glue"):
        return normalized
    return normalized.split("://", 1)[0] if "://" in normalized else ""


def _by_hierarchy(levels: Sequence[tuple[str, str]], reading: NameReading) -> EntityName | None:
    """Seed 000: "the last level is the entity, the level before it the schema" — that very
    level: a blank one is no schema, and a blank last level names no entity (the rules after it
    then apply), never the level before it taken for the entity. Levels are trimmed and
    unquoted as the segments of a dotted name are (seed 002), so the same table lands on one
    entity whether its producer sends a hierarchy facet or not; the levels before the schema
    are the database (on a ``{database}.{table}`` platform, or for a level typed DATABASE or
    CATALOG, the schema level is)."""
    table = _unquoted(levels[-1][1].strip()) if levels else _Segment("", False)
    if not table.text:
        return None
    case, folds = reading.case, reading.quoted_folds
    name = _cased(table, case, folds)
    if len(levels) < 2:
        return EntityName(None, name, "hierarchy")
    kind, text = levels[-2]
    schema = _cased(_unquoted(text.strip()), case, folds) or None
    if len(levels) > 2:
        database = ".".join(
            _cased(_unquoted(level.strip()), case, folds) for _, level in levels[:-2]
        )
    elif (reading.levels is not None and len(reading.levels) == 2) or kind.strip().upper() in (
        "DATABASE",
        "CATALOG",
        "PROJECT",
    ):
        database = schema or ""
    else:
        database = ""
    return EntityName(schema, name, "hierarchy", database or None)


def entity_name(
    namespace: str,
    name: str,
    *,
    hierarchy: Sequence[tuple[str, str]] = (),
    symlinks: Sequence[tuple[str, str, str]] = (),
    file: bool = False,
    reading: NameReading = NO_READING,
    reading_of: Callable[[str], NameReading] | None = None,
    profile: bool = True,
) -> EntityName:
    """Schema and entity of a dataset, by the first rule of seed 000 that applies (without the
    scheme's profile for ``profile=False``: ``catalog`` reads a location's TABLE symlink so when
    the location's own namespace has no System).

    ``hierarchy`` is the hierarchy facet as ``(type, name)`` levels, outermost first;
    ``symlinks`` the symlinks facet as ``(namespace, name, type)`` identifiers; ``file`` whether
    the dataset is a file by its facets (``datasetType`` ``FILE``): the last segment of its
    object key is then a file whatever its name. ``reading`` is
    how the definition reads the names of ``namespace`` (a declared ``nameProfile``, its
    ``defaultSchema`` and ``identifierCase``), ``reading_of`` the same for the namespace of a
    symlink; without them the seed's rules apply as they are.
    """
    by_hierarchy = _by_hierarchy(hierarchy, reading) if hierarchy else None
    if by_hierarchy is not None:
        return by_hierarchy
    by_profile = (
        _profile(_scheme(namespace), name, reading, namespace=namespace, file=file)
        if profile
        else None
    )
    if by_profile is not None:
        return by_profile
    for link_namespace, link_name, link_type in symlinks:
        if link_type.upper() != "TABLE":
            continue
        link_reading = reading_of(link_namespace) if reading_of is not None else NO_READING
        linked = _profile(
            _scheme(link_namespace), link_name, link_reading, namespace=link_namespace
        ) or _dotted(
            link_name,
            link_reading.default_schema,
            case=link_reading.case,
            quoted_folds=link_reading.quoted_folds,
        )
        if not linked.name.strip():
            # a TABLE identity that names no table (``""``, ``db.``) is no table identity: the
            # next one, or the dataset's own name, decides; the dataset is not lost for it
            continue
        return EntityName(linked.schema, linked.name, "symlink", linked.database, link_namespace)
    return _as_it_is(_with_key_prefix(namespace, name), reading.case, reading.quoted_folds)


def _with_key_prefix(namespace: str, name: str) -> str:
    """The name of an object store's dataset with the path its namespace carries in front
    (``gs://lake/raw`` + ``orders`` is ``raw/orders``, as ``gs://lake`` + ``raw/orders`` is):
    the dataset lands on the bucket's System (``object_store_root``), where a name without the
    path would merge ``raw/orders`` and ``curated/orders`` into one entity. Any other name as
    it is."""
    prefix = _namespace_path(namespace) if is_object_store(namespace) else ""
    return f"{prefix}/{name.lstrip('/')}" if prefix else name


def filled_database(
    found: EntityName,
    namespace: str,
    name: str,
    reading: NameReading = NO_READING,
    *,
    source_uri: str | None = None,
    databases: Sequence[str] = (),
) -> EntityName:
    """``found`` with the database a name of three levels (``database.schema.table``) left out,
    where something else says it. Seed 002: blank segments "are filled from the connection's own
    catalog", so that one table is one identity whatever its producer writes.

    * The ``dataSource`` facet's URI names the database on the dataset's own server (Great
      Expectations sends ``public.orders`` with ``postgresql+psycopg2://host/prod``).
    * A name of two parts whose first is a database the definition's Systems of the namespace
      are stamped with (``databases``) is ``database.table`` in the default schema (seed 000:
      "With no schema part, public."): Spark names a JDBC table read without a schema (``dbtable
      orders`` of ``jdbc:postgresql://host/prod``) ``prod.orders``. Any other first part is a
      schema, as SQL names a table (``schema.table``)."""
    three = (
        reading.levels == NAME_PROFILES["postgres"]
        if reading.levels is not None
        else _scheme(namespace) in ("postgres", "redshift")
    )
    if found.database is not None or found.rule != "profile":
        return found
    named = namespace_database(namespace)
    if named and (three or reading.levels == NAME_PROFILES["oracle"]):
        # the namespace's own database (``;databaseName=dwh``, an Oracle URL's service): the
        # name's two parts are its schema and table
        return replace(found, database=_cased_database(named, reading))
    if not three:
        return found
    database = _database_of_source(namespace, source_uri) if source_uri else None
    if database:
        return replace(found, database=_cased_database(database, reading))
    default = _declared_default(reading) or (None if reading.levels is not None else "public")
    first = found.schema
    if default is None or first is None or len(_segments(without_statement_end(name))) != 2:
        return found
    folded = first.casefold()
    ignore_case = normalize_namespace(namespace).startswith("mssql://")
    if any(d == first or (ignore_case and d.casefold() == folded) for d in databases):
        return EntityName(default, found.name, found.rule, first)
    return found


SOURCE_DATABASE_SCHEMES = frozenset({"postgres", "redshift"})
"""The schemes whose names are ``{database}.{schema}.{table}`` by seed 000's own profile, where a
name of fewer parts has its database filled from the ``dataSource`` facet (``filled_database``):
what ``name_with_source_database`` completes as the fold reads the events."""


@lru_cache(maxsize=4096)
def name_with_source_database(namespace: str, name: str, source_uri: str) -> str | None:
    """``name`` with the database its ``dataSource`` URI names in front, when the namespace's
    platform names ``{database}.{schema}.{table}`` (``SOURCE_DATABASE_SCHEMES``), the name gives
    no database and the URI is of the namespace's own server; None otherwise.

    Great Expectations names a table of the prod and the dev database of one server alike
    (``postgresql+psycopg2://db`` + ``public.orders``), only the URI tells them apart
    (``…/prod``, ``…/dev``): the fold keys each dataset by this name, so the two are two datasets
    whatever order their events come in, and ``prod.public.orders`` is the one table dbt and the
    SQL operators name so. Read back by ``entity_name``, the name gives the database, schema and
    entity ``filled_database`` gives the name alone (``orders`` is ``prod..orders``: the blank
    schema is the default one)."""
    if not lacks_source_database(namespace, name):
        return None
    database = _database_of_source(namespace, source_uri)
    if not database or database == "None":  # Airflow's ``None`` is a blank segment: no database
        return None
    if any(char in database for char in '."`[') or database != database.strip():
        database = '"' + database.replace('"', '""') + '"'  # read back as the one identifier
    one_part = len(_segments(without_statement_end(name))) == 1
    return f"{database}.{'.' if one_part else ''}{name}"


@lru_cache(maxsize=4096)
def lacks_source_database(namespace: str, name: str) -> bool:
    """Whether a dataset's ``dataSource`` facet may name the database its name lacks
    (``name_with_source_database``): a platform of ``{database}.{schema}.{table}`` names (seed
    000's own profile) and a name of a table with fewer parts."""
    if _scheme(namespace) not in SOURCE_DATABASE_SCHEMES:
        return False
    parts = _segments(without_statement_end(name))
    return len(parts) <= 2 and bool(parts[-1].text)


def _declared_default(reading: NameReading) -> str | None:
    """The declared ``defaultSchema``, re-cased as the namespace's names are."""
    declared = reading.default_schema
    return _cased_database(declared, reading) if declared else declared


def _cased_database(text: str, reading: NameReading) -> str:
    """One identifier (a database, a declared schema) as the namespace's names are cased."""
    return cased_identifier(text, reading.case, quoted_folds=reading.quoted_folds)


def _database_of_source(namespace: str, uri: str) -> str | None:
    """The first segment of a data source URI's path, when the URI is of ``namespace``'s
    server (``postgresql://u:pw@host/prod`` of ``postgres://host:5432``: ``prod``)."""
    text = uri.strip()
    if text[:5].lower() == "jdbc:":  # a JDBC URL: ``jdbc:postgresql://host/prod``
        text = text[5:]
    if "://" not in text:
        return None
    server = normalize_namespace(namespace)
    scheme, _, rest = text.partition("://")
    if scheme.split("+", 1)[0].strip().lower() == "mssql":
        # SQLAlchemy's URL of SQL Server (``mssql+pyodbc://host/dwh``, as Great Expectations
        # names its data source): the path is the database, where a namespace's path is the
        # named instance (openlineage-java's ``sqlserver://host/X``)
        authority, _, path = rest.split("?", 1)[0].partition("/")
        if normalize_namespace(f"mssql://{authority}") != server:
            return None
        database = unquote(path.split("/", 1)[0]).strip()
    else:
        source = normalize_namespace(text)
        if not source.startswith(server + "/"):
            return None
        # a JDBC URL's parameters after ``;`` are no part of it; an encoded ``/`` names none
        database = unquote(source[len(server) + 1 :].split("/", 1)[0].split(";", 1)[0]).strip()
    # a name no database has (an encoded ``/``, a control character, ``..``, bytes not UTF-8)
    unreadable = (
        "/" in database
        or "\ufffd" in database
        or database in (".", "..")
        or any(ord(char) < 32 for char in database)
    )
    return database if database and not unreadable else None


def _as_it_is(name: str, case: str | None, quoted_folds: bool = False) -> EntityName:
    """Rule 4, the name as it is, with no schema: only a trailing ``;`` is dropped, and the
    quotes of a name that is one quoted identifier (seed 002); re-cased when declared, each
    dotted segment as ``cased_name`` does, so that ``analytics.public.orders`` and
    ``"ANALYTICS"."PUBLIC"."ORDERS"`` are the one entity the case says they are (and the one
    a check's code names: ``quality``)."""
    text = without_statement_end(name)
    if case not in (None, "PRESERVE"):
        return EntityName(None, cased_name(text.strip(), case, quoted_folds=quoted_folds), "name")
    segment = _unquoted(text.strip())
    if not segment.quoted:
        return EntityName(None, text, "name")
    return EntityName(None, segment.text, "name")
