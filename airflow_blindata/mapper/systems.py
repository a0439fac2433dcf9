"""Namespace → System, in the five steps of seed 000, and job namespace → job System.

``SystemResolver``: (1) an ignored namespace is skipped (``IGNORED_NAMESPACE``); (2) the first
``namespaceMappings`` entry that matches and whose System exists; (3) the System stamped
``openLineageNamespace``; (4) creation when the first matching ``systemPolicies`` entry says
``IF_MISSING`` (an existing System of the planned name is reused and stamped); (5) otherwise
``UNMAPPED_NAMESPACE``. Namespaces and patterns are matched normalised; the database a name
carries may select a System (``openLineageDatabase``). A bad namespace never creates a System.
The Systems Blindata holds are an input (``KnownSystem``), so this stays pure; only created
Systems are stamped ``openLineageOwner``.

The rules in full: docs/mapping-reference.md#the-rules-of-mappersystemspy
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from airflow_blindata.definition import (
    NAME_PROFILES,
    SCHEME_TECHNOLOGIES,
    JobDefinition,
    NamespaceMapping,
    SystemPolicy,
    SystemRef,
    matches_pattern,
)
from airflow_blindata.mapper.identity import (
    INSENSITIVE,
    NO_READING,
    CaseMatching,
    NameReading,
    NamespaceParts,
    case_matching,
    cased_identifier,
    column_case,
    matches_namespace,
    namespace_parts,
    namespace_problem,
    normalize_namespace,
    normalize_pattern,
    object_store_root,
    quoted_identifiers_fold,
    server_of,
)
from airflow_blindata.mapper.plan import PlannedSystem, Property, SystemOrigin
from airflow_blindata.mapper.report import GapCode, Report
from airflow_blindata.redaction import redact_text

__all__ = [
    "DATABASE_PROPERTY",
    "JOB_SYSTEM_NAME_PROPERTY",
    "JOB_SYSTEM_PROPERTY",
    "NAMESPACE_PROPERTY",
    "OWNER_PROPERTY",
    "KnownSystem",
    "SystemResolver",
    "case_matching_for",
    "name_reading_for",
    "namespace_mappings_for",
    "system_policy_for",
]

NAMESPACE_PROPERTY = "openLineageNamespace"
OWNER_PROPERTY = "openLineageOwner"
DATABASE_PROPERTY = "openLineageDatabase"
"""With ``openLineageNamespace``: the System holds that database of the namespace only."""
JOB_SYSTEM_PROPERTY = "openLineageJobSystem"
"""Marks a System that holds OpenLineage job entities (``jobSystems`` without ``shared``)."""
JOB_SYSTEM_NAME_PROPERTY = "openLineageJobSystemName"
"""On a job System a definition created (with its ``openLineageOwner``): the name the
definition gave it (``openLineageSystem.name`` or a ``jobSystems`` rule's). A steward may rename
the System; the definition finds it again by this stamp (``SystemResolver._created_job_system``).
Once the definition gives it the steward's name, the stamp follows (``_job_system_found``)."""


def _matches(namespace: str, pattern: str) -> bool:
    """``namespace`` (normalised) against a pattern spelt as the producers spell namespaces."""
    return matches_namespace(namespace, normalize_pattern(pattern))


def databases_ignore_case(namespace: str) -> bool:
    """Whether the databases of a normalised namespace are named without case: SQL Server's,
    whose names follow the server's collation (case-insensitive by default), so that Spark's
    ``DWH`` (as typed in a JDBC URL) and Airflow's ``dwh`` name one database; the catalogs of
    Trino, Presto and Athena and the catalogs (databases) of Databricks, Hive and Impala, which
    are lower case whatever a producer types (``Hive.Sales.Orders`` is Trino's ``hive``)."""
    return namespace.partition("://")[0] in _CASE_FREE_DATABASES


_CASE_FREE_DATABASES = frozenset(
    {"mssql", "trino", "presto", "awsathena", "databricks", "hive", "impala"}
)
"""The schemes whose databases (catalogs) are named without case (``databases_ignore_case``)."""


def _database_matches(
    rule: NamespaceMapping | SystemPolicy, namespace: str, database: str | None
) -> bool:
    if database is not None and rule.database is not None and databases_ignore_case(namespace):
        return matches_pattern(database.casefold(), rule.database.casefold())
    return rule.matches_database(database)


def namespace_mappings_for(
    definition: JobDefinition, namespace: str, database: str | None = None
) -> list[NamespaceMapping]:
    """The ``namespaceMappings`` entries that match a normalised namespace (and the database of
    the dataset: ``None`` is a name without one), in order."""
    return [
        m
        for m in definition.namespace_mappings
        if _matches(namespace, m.pattern) and _database_matches(m, namespace, database)
    ]


def system_policy_for(
    definition: JobDefinition, namespace: str, database: str | None = None
) -> SystemPolicy | None:
    """The first ``systemPolicies`` entry that matches a normalised namespace and database."""
    return next(
        (
            p
            for p in definition.system_policies
            if _matches(namespace, p.pattern) and _database_matches(p, namespace, database)
        ),
        None,
    )


def name_reading_for(definition: JobDefinition, namespace: str) -> NameReading:
    """How the dataset names of a normalised namespace are read: the ``nameProfile`` (with its
    ``defaultSchema``) and the ``identifierCase`` of the first ``systemPolicies`` entries whose
    pattern matches and that declare them; nothing declared, the seed's rules as they are."""
    profile: SystemPolicy | None = None
    case: SystemPolicy | None = None
    for policy in definition.system_policies:
        if (profile is None or case is None) and _matches(namespace, policy.pattern):
            if profile is None and policy.name_profile is not None:
                profile = policy
            if case is None and policy.identifier_case is not None:
                case = policy
    if profile is None and case is None:
        return NO_READING
    declared = profile.name_profile if profile else None
    identifier_case = str(case.identifier_case) if case and case.identifier_case else None
    if identifier_case == INSENSITIVE:
        identifier_case = None  # matched without case by the sync (``case_matching_for``)
    return NameReading(
        levels=NAME_PROFILES[declared] if declared else None,
        default_schema=profile.default_schema if profile else None,
        case=identifier_case,
        quoted_folds=identifier_case is not None and quoted_identifiers_fold(namespace, declared),
        column_case=column_case(namespace, identifier_case),
    )


def _cased_stamp(value: str, reading: NameReading) -> str:
    """A person's ``openLineageDatabase`` stamp read as the namespace's names are."""
    return cased_identifier(value, reading.case, quoted_folds=reading.quoted_folds)


def case_matching_for(definition: JobDefinition, namespace: str) -> CaseMatching:
    """How the sync matches the names of a normalised namespace to the stored ones: as its
    platform's identifiers (``identity.PLATFORM_CASE_MATCHING``), or without case wherever
    the first ``systemPolicies`` entry that declares ``identifierCase`` says INSENSITIVE."""
    declared = next(
        (
            str(policy.identifier_case)
            for policy in definition.system_policies
            if policy.identifier_case is not None and _matches(namespace, policy.pattern)
        ),
        None,
    )
    return case_matching(namespace, declared)


def _store_scheme(parts: NamespaceParts) -> str:
    """The scheme that names a namespace's kind of store; a bare namespace (BigQuery's
    ``bigquery``) names it itself."""
    return parts.scheme or parts.namespace.lower()


@dataclass(frozen=True, slots=True)
class KnownSystem:
    """A System that exists in Blindata, as the sync read it."""

    name: str
    uuid: str
    properties: tuple[Property, ...] = ()

    def values(self, property_name: str) -> list[str]:
        return [value for name, value in self.properties if name == property_name]


_SEED_PROFILES = frozenset({"postgres", "redshift", "awsathena"})
"""The schemes whose names seed 000 reads by its own profile, declared or not."""
_NO_DATABASE = (
    "the name gives no database, and the Systems of this namespace are chosen by their "
    "database (openLineageDatabase), and neither a database those Systems are stamped with nor "
    "the dataSource facet's URI names one: send the database in the name (a JDBC URL's "
    "database, databaseName=…) or in the dataSource URI, or stamp the System that holds such "
    "names with the namespace alone"
)


def _missing_systems(mappings: Iterable[NamespaceMapping]) -> str:
    """Why a namespace that ``namespaceMappings`` entries match found no System there."""
    named = ", ".join(
        f"'{m.system.name}'" if m.system.name is not None else f"uuid {m.system.uuid}"
        for m in mappings
    )
    return (
        f"its namespaceMappings entry names the System {named}, which does not exist in the "
        "tenant (a mapping applies only when its System exists): fix the name or the uuid, or "
        "create the System"
    )


def _created_by_openlineage(system: KnownSystem) -> bool:
    """Whether a job definition created ``system`` (it carries an ``openLineageOwner``)."""
    return bool(system.values(OWNER_PROPERTY))


@dataclass
class SystemResolver:
    """Resolves namespaces to planned Systems, remembering each answer and what it plans."""

    definition: JobDefinition
    known: Iterable[KnownSystem]
    report: Report
    _by_name: dict[str, KnownSystem] = field(init=False)
    _by_uuid: dict[str, KnownSystem] = field(init=False)
    _by_stamp: dict[str, list[KnownSystem]] = field(init=False)
    """Namespace → the Systems stamped with it, by name."""
    _resolved: dict[str, PlannedSystem | None] = field(init=False, default_factory=dict)
    _resolved_in: dict[tuple[str, str | None], PlannedSystem | None] = field(
        init=False, default_factory=dict
    )
    """(namespace, database) → its System, where the database picks it."""
    _readings: dict[str, NameReading] = field(init=False, default_factory=dict)
    _spellings: dict[tuple[str, str], str] = field(init=False, default_factory=dict)
    """(namespace, database in lower case) → the spelling its System is chosen by, for the
    namespaces whose databases are named without case (``databases_ignore_case``)."""
    _by_database: bool = field(init=False, default=False)
    """Whether any selector, template or stamp names a database (else it is never looked at)."""
    _databases: dict[str, tuple[str, ...]] = field(init=False, default_factory=dict)
    _problems_in: dict[tuple[str, str | None], str] = field(init=False, default_factory=dict)
    """(namespace, database) → why it found no System there: its mappings' Systems are missing."""
    _problems: dict[str, str] = field(init=False, default_factory=dict)
    _problems_without_database: dict[str, str] = field(init=False, default_factory=dict)
    """Namespace → why a name that gives no database found no System there (``_NO_DATABASE``)."""
    _planned: dict[str, PlannedSystem] = field(init=False, default_factory=dict)
    _stores: dict[str, dict[str, str]] = field(init=False, default_factory=dict)
    """System name → the kind of store of each namespace that lands on it → the first such
    namespace (``report_merged_stores``)."""
    _by_its_name: set[str] = field(init=False, default_factory=set)
    """The Systems a namespace landed on by the name its ``nameTemplate`` gives (step 4)."""
    used_for_jobs: Sequence[str] = ()
    """uuids of the Systems earlier syncs of this definition put its jobs in, the most trusted
    first (the last snapshot's, then the last cleanup's ledger): of several Systems stamped as
    the job System it created (a person's copy stamped alike), the one the jobs are in stays
    theirs (``_created_job_system``)."""
    _ambiguous_jobs: set[str] = field(init=False, default_factory=set)
    """The job System names already reported ``JOB_SYSTEM_AMBIGUOUS``."""
    _ignored: tuple[str, ...] = field(init=False)
    """``ignoredNamespaces`` in the spelling namespaces are matched in (``normalize_pattern``)."""

    def __post_init__(self) -> None:
        self._ignored = tuple(normalize_pattern(p) for p in self.definition.ignored_namespaces)
        ordered = sorted(self.known, key=lambda system: (system.name, system.uuid))
        self._by_name = {}
        self._by_uuid = {}
        self._by_stamp = {}
        exact: set[tuple[str, str]] = set()
        for system in ordered:
            self._by_name.setdefault(system.name, system)
            self._by_uuid[system.uuid] = system
            for value in system.values(NAMESPACE_PROPERTY):
                normalized = normalize_namespace(value)
                stamped = self._by_stamp.setdefault(normalized, [])
                if system not in stamped:
                    stamped.append(system)
                if value == normalized:
                    exact.add((normalized, system.uuid))
        # Of several Systems stamped with one namespace, one that a definition created under
        # another spelling of it last: an upgrade that reads two spellings of a server as one (a
        # Redshift endpoint and its cluster name) keeps the System a fresh tenant would get, not
        # the first by name (a probe of upgrades: a table moved to the other System, its
        # steward's copy left). A System a person stamped keeps its place by name, whatever
        # spelling it carries (seed 000: "the one first by name is used"; a review).
        for normalized, stamped in self._by_stamp.items():
            stamped.sort(
                key=lambda system: (
                    _created_by_openlineage(system) and (normalized, system.uuid) not in exact
                )
            )
        definition = self.definition
        self._by_database = (
            any(m.database is not None for m in definition.namespace_mappings)
            or any(p.per_database for p in definition.system_policies)
            or any(s.values(DATABASE_PROPERTY) for s in ordered)
        )

    def reading(self, namespace: str) -> NameReading:
        """How the dataset names of ``namespace`` are read (``name_reading_for``), memoised."""
        normalized = normalize_namespace(namespace)
        found = self._readings.get(normalized)
        if found is None:
            found = name_reading_for(self.definition, normalized)
            server = server_of(normalized) if found is NO_READING else None
            if server is not None:  # an Oracle URL's names are read as its server's
                found = name_reading_for(self.definition, server[0])
            self._readings[normalized] = found
        return found

    def databases_of(self, namespace: str) -> tuple[str, ...]:
        """The databases of ``namespace`` its Systems are stamped with: the databases a crawler
        (one System per database) found there. Not a ``namespaceMappings`` entry's database,
        which says where a database goes, not that no schema is named so (a review)."""
        normalized = normalize_namespace(namespace)
        found = self._databases.get(normalized)
        if found is None:
            # not those of Systems OpenLineage created: a definition's policy stamps the
            # databases its names gave, so the reading would change at its next snapshot
            reading = self.reading(normalized)  # read as the namespace's names are
            found = self._databases[normalized] = tuple(
                dict.fromkeys(
                    spelling
                    for system in self._by_stamp.get(normalized, ())
                    if not _created_by_openlineage(system)
                    for value in system.values(DATABASE_PROPERTY)
                    for spelling in (value, _cased_stamp(value, reading))
                )
            )
        return found

    @property
    def by_database(self) -> bool:
        """Whether the database of a dataset can change its System under this definition."""
        return self._by_database

    @property
    def systems(self) -> list[PlannedSystem]:
        """Every System the plan uses, by name."""
        return [self._planned[name] for name in sorted(self._planned)]

    def _find(self, ref: SystemRef) -> KnownSystem | None:
        if ref.uuid:
            return self._by_uuid.get(ref.uuid)
        return self._by_name.get(ref.name or "")

    def _plan(self, system: PlannedSystem) -> PlannedSystem:
        existing = self._planned.get(system.name)
        if existing is not None:
            update: dict[str, Any] = {}
            if system.namespaces and not set(system.namespaces) <= set(existing.namespaces):
                update["namespaces"] = tuple(sorted({*existing.namespaces, *system.namespaces}))
            # Each namespace (and database) that lands on it by its name (step 4) is stamped,
            # not only the first: the stamp is how the tenant finds the System of a namespace.
            stamps = [p for p in system.stamp if p[0] in (NAMESPACE_PROPERTY, DATABASE_PROPERTY)]
            if any(stamp not in existing.stamp for stamp in stamps):
                update["stamp"] = (*existing.stamp, *(s for s in stamps if s not in existing.stamp))
            if system.namespaces and not existing.namespaces:
                # Planned first as a job System (a shared rule may choose a crawled one): as the
                # System of datasets, its entityCreation is the datasets' (seed 000). The job
                # entities are created on it whatever this says (``PlannedEntity.may_create``).
                update["entity_creation"] = system.entity_creation
                update["replace_user_documentation"] = system.replace_user_documentation
            if update:
                existing = replace(existing, **update)
                self._planned[system.name] = existing
            return existing
        self._planned[system.name] = system
        return system

    # -- datasets ------------------------------------------------------------------------------

    def ignores(self, namespace: str) -> bool:
        """Whether ``namespace`` matches ``ignoredNamespaces``, the scheme in any case.

        Matched in its normal form (the scheme in lower case, as in ``ELASTICSEARCH://h``), the
        patterns' schemes too, so ``elasticsearch://*`` and ``ELASTICSEARCH://*`` mean the same.
        """
        normalized = normalize_namespace(namespace)
        return any(matches_namespace(normalized, pattern) for pattern in self._ignored)

    def dataset_system(
        self, namespace: str, example: str | None, database: str | None = None
    ) -> PlannedSystem | None:
        """The System of a dataset namespace, or ``None`` with the gap recorded for ``example``.

        ``database`` is the database the name profile read from the dataset name (``None``:
        none); it matters only where the definition or a stamp selects by it.
        ``example=None`` resolves without recording a gap: a flow end names a dataset whose gap
        the catalog pass already counted.
        """
        normalized = normalize_namespace(namespace)
        if self._by_database:
            database = self._spelling(normalized, database)
            key = (normalized, database)
            if key not in self._resolved_in:
                self._resolved_in[key] = self._resolve(normalized, database)
            system = self._resolved_in[key]
        else:
            if normalized not in self._resolved:
                self._resolved[normalized] = self._resolve(normalized)
            system = self._resolved[normalized]
        if system is None and example is not None:
            if self.ignores(normalized):
                self.report.gap(GapCode.IGNORED_NAMESPACE, example)
            else:
                problem = (
                    self._problems.get(normalized)
                    or self._problems_in.get((normalized, database if self._by_database else None))
                    or (
                        self._problems_without_database.get(normalized)
                        if database is None
                        else None
                    )
                )
                self.report.gap(
                    GapCode.UNMAPPED_NAMESPACE, f"{example}: {problem}" if problem else example
                )
        return system

    def chosen_by_person(self, namespace: str, database: str | None = None) -> bool:
        """Whether a ``namespaceMappings`` entry (of a System that exists) or an
        ``openLineageNamespace`` stamp gives ``namespace`` its System: a choice of the
        definition's author or of a steward, not a policy's creation. Plans nothing."""
        normalized = normalize_namespace(namespace)
        if self.ignores(normalized):
            return False
        database = self._spelling(normalized, database)
        policy = system_policy_for(self.definition, normalized, database)
        chosen = self._chosen(normalized, database, policy)
        # the stamp of a System a definition created (this one or another) is its policy's,
        # not a person's: a table named by a TABLE symlink landed on the symlink's System at
        # the first snapshot and moved to its location's (created meanwhile) at the next (a
        # probe of real events; a review for another definition's)
        return chosen is not None and (
            chosen[1] == "mapped" or not _created_by_openlineage(chosen[0])
        )

    def _chosen(
        self, namespace: str, database: str | None, policy: SystemPolicy | None
    ) -> tuple[KnownSystem, SystemOrigin] | None:
        """The System a ``namespaceMappings`` entry (of a System that exists) or a stamp gives
        ``namespace``, and how; for an object store's namespace with a path, else those of its
        bucket (``object_store_root``): ``s3://lake/curated`` + ``totals`` is the key
        ``curated/totals`` of the bucket ``lake``, and missed the System its crawler was stamped
        with (a probe of naming)."""
        for candidate, wanted in self._candidates(namespace, database):
            for mapping in namespace_mappings_for(self.definition, candidate, wanted):
                found = self._find(mapping.system)
                if found is not None:
                    return found, "mapped"
            stamped = self._stamped(candidate, wanted, policy)
            # of the bucket, a person's stamp only: one a policy wrote depends on which
            # namespace came first, and the path's own policy decides (a review)
            if stamped is not None and (
                candidate == namespace or not _created_by_openlineage(stamped)
            ):
                return stamped, "stamped"
        return None

    def _candidates(self, namespace: str, database: str | None) -> Iterator[tuple[str, str | None]]:
        """The namespace, then the one a dataset of it lands in when nothing names it: an
        object store's bucket (``object_store_root``), an Oracle URL's server with its service
        as the database (``server_of``), in the spelling a person's stamp gives the service
        (Oracle's service names have no case)."""
        yield namespace, database
        root = object_store_root(namespace)
        if root is not None:
            yield root, database
            return
        server = server_of(namespace)
        if server is not None:
            root, service = server
            wanted = database or service
            if wanted is not None:
                folded = wanted.casefold()
                wanted = next(
                    (
                        value
                        for system in self._by_stamp.get(root, ())
                        if not _created_by_openlineage(system)
                        for value in system.values(DATABASE_PROPERTY)
                        if value.casefold() == folded
                    ),
                    wanted,
                )
            yield root, wanted

    def _spelling(self, namespace: str, database: str | None) -> str | None:
        """The spelling of ``database`` that picks its System: as sent, but where databases are
        named without case, the one a System stamped with the namespace spells it with, else
        in lower case (one database is one System, whatever its producers type, and its name
        does not depend on which spelling a plan met first)."""
        if database is None or not databases_ignore_case(namespace):
            return database
        key = (namespace, database.casefold())
        found = self._spellings.get(key)
        if found is None:
            theirs: list[str] = []
            ours: list[str] = []
            for system in self._by_stamp.get(namespace, ()):
                spelt = [v for v in system.values(DATABASE_PROPERTY) if v.casefold() == key[1]]
                (ours if _created_by_openlineage(system) else theirs).extend(spelt)
            # a person's stamp first (their System is the database's); of Systems this agent
            # made, the lower-case spelling (a review: an upgrade moved the lineage of
            # ``hive`` from a crawled System to the one an older release made for ``Hive``)
            lower_case = key[1] if key[1] in ours or not ours else ours[0]
            found = self._spellings[key] = theirs[0] if theirs else lower_case
        return found

    def _stamped(
        self, namespace: str, database: str | None, policy: SystemPolicy | None
    ) -> KnownSystem | None:
        """The System stamped with ``namespace``: first by name among those stamped with the
        database too, else among those stamped with no database (they hold every one).

        Under a policy that makes a System per database, one that this definition created for
        the names without a database (``public.src``: no database in its stamp, as none was
        known) holds those only: a named database gets its own, as on a fresh tenant."""
        stamped = self._by_stamp.get(namespace, ())
        if database is not None:
            for system in stamped:
                if database in system.values(DATABASE_PROPERTY):
                    return system
            # then a stamp read as the namespace's names are: under identifierCase UPPER, a
            # person's ``analytics`` is Snowflake's ``ANALYTICS`` (a probe of warehouses); an
            # exact stamp wins (a quoted ``"analytics"`` is its own database, a review)
            # (a person's stamp only: one a definition wrote was taken from a name already in
            # the namespace's case, and a quoted ``"analytics"`` keeps its own System, a review)
            reading = self.reading(namespace)
            for system in stamped:
                if not _created_by_openlineage(system) and any(
                    _cased_stamp(value, reading) == database
                    for value in system.values(DATABASE_PROPERTY)
                ):
                    return system
        per_database = database is not None and policy is not None and policy.per_database
        return next(
            (
                system
                for system in stamped
                if not system.values(DATABASE_PROPERTY)
                and not (per_database and self._owned(system))
            ),
            None,
        )

    def _resolve(self, namespace: str, database: str | None = None) -> PlannedSystem | None:
        if self.ignores(namespace):
            return None
        policy = system_policy_for(self.definition, namespace, database)
        mappings = namespace_mappings_for(self.definition, namespace, database)
        chosen = self._chosen(namespace, database, policy)
        if chosen is not None:
            found, origin = chosen
            return self._landed(self._existing(found, origin, namespace, policy), namespace, policy)
        problem = namespace_problem(namespace)
        if problem is not None:
            self._problems[namespace] = problem
            return None
        if policy is None or policy.creation != "IF_MISSING":
            if mappings:  # seed 000: a mapping applies only if its System exists; say which
                self._problems_in.setdefault((namespace, database), _missing_systems(mappings))
            elif database is None and (only := self._only_database_system(namespace)):
                # A name that gives no database (``sales.orders``, Azure Synapse's names) on a
                # server of which one System is stamped, by a person, with its database, and
                # that no policy gives a System: seed 002 fills a blank segment "from the
                # connection's own catalog", and the tenant knows one (a probe of naming).
                return self._landed(
                    self._existing(only, "stamped", namespace, policy), namespace, policy
                )
            elif database is None and any(
                system.values(DATABASE_PROPERTY) for system in self._by_stamp.get(namespace, ())
            ):
                # the namespace's Systems are chosen by database, and the name gives none (a
                # JDBC URL without its database): stamping another System would not help
                self._problems_without_database[namespace] = _NO_DATABASE + self._no_profile(
                    namespace
                )
            return None
        parts = namespace_parts(namespace)
        name = policy.system_name(**parts.template_values(database)) or namespace
        # A System per database is stamped with its database: the next run finds it by the
        # stamp (step 3) for that database only, not for every database of the namespace.
        by_database: tuple[Property, ...] = (
            ((DATABASE_PROPERTY, database),) if policy.per_database and database else ()
        )
        existing = self._by_name.get(name)
        if existing is not None:
            reused = self._existing(existing, "reused", namespace, policy, by_database)
            return self._landed(reused, namespace, policy, by_its_name=True)
        created = self._plan(
            PlannedSystem(
                name=name,
                origin="created",
                create=True,
                subtype=policy.subtype.value,  # the plain text (validation made it one)
                technology=policy.technology_for(_store_scheme(parts)),
                stamp=(
                    (NAMESPACE_PROPERTY, namespace),
                    *by_database,
                    (OWNER_PROPERTY, self.definition.uuid),
                ),
                namespaces=(namespace,),
                entity_creation=self._entity_creation(policy, created_by_openlineage=True),
                replace_user_documentation=bool(policy.replace_user_documentation),
            )
        )
        return self._landed(created, namespace, policy, by_its_name=True)

    def _only_database_system(self, namespace: str) -> KnownSystem | None:
        """The System of ``namespace`` when a person stamped exactly one with the namespace, and
        with a database: where a name that gives no database lands when nothing else gives it
        one (Systems a definition created are another's policy's, not the tenant's knowledge).
        With several, which is meant is not known."""
        theirs = [s for s in self._by_stamp.get(namespace, ()) if not _created_by_openlineage(s)]
        if len(theirs) != 1 or not theirs[0].values(DATABASE_PROPERTY):
            return None
        return theirs[0]

    def _no_profile(self, namespace: str) -> str:
        """What to add to ``_NO_DATABASE`` where the name may give its database but is read
        whole: no ``nameProfile`` is declared for a platform that has one (BigQuery's
        ``my-proj.raw.orders`` was said to give none, a probe of producers)."""
        scheme = namespace.split("://", 1)[0] if "://" in namespace else namespace
        if (
            self.reading(namespace).levels is not None
            or scheme in _SEED_PROFILES
            or len(NAME_PROFILES.get(scheme, ())) < 3
        ):
            return ""
        return f"; or, if the names do hold it, declare nameProfile: {scheme} to read it"

    def _landed(
        self,
        system: PlannedSystem,
        namespace: str,
        policy: SystemPolicy | None,
        *,
        by_its_name: bool = False,
    ) -> PlannedSystem:
        """``system``, where ``namespace`` lands: the kind of store of the namespace is noted
        for ``report_merged_stores``."""
        scheme = _store_scheme(namespace_parts(namespace))
        kind = (policy.technology_for(scheme) if policy else None) or SCHEME_TECHNOLOGIES.get(
            scheme, scheme
        )
        self._stores.setdefault(system.name, {}).setdefault(kind, namespace)
        if by_its_name:
            self._by_its_name.add(system.name)
        return system

    def report_merged_stores(self) -> None:
        """``STORES_MERGED`` for each System on which namespaces of different kinds of store
        land (their technologies, the scheme's default when the policy names none), where this
        job made them meet: by the name its ``nameTemplate`` gives both (``s3://b`` and ``gs://b``
        under the default ``{bucket}``), or on a System it created. A System that a person
        stamped or mapped with several stores is theirs to shape, and is not reported."""
        for name, stores in sorted(self._stores.items()):
            if len(stores) < 2:
                continue
            if name not in self._by_its_name and not self.created_here(self._planned[name]):
                continue
            kinds = ", ".join(
                f"{redact_text(namespace)} ({kind})"
                for kind, namespace in sorted(stores.items(), key=lambda item: item[1])
            )
            self.report.gap(GapCode.STORES_MERGED, f"{kinds} → {name}")

    def _existing(
        self,
        system: KnownSystem,
        origin: SystemOrigin,
        namespace: str,
        policy: SystemPolicy | None,
        by_database: tuple[Property, ...] = (),
    ) -> PlannedSystem:
        """A System Blindata holds; a reused one is stamped with the namespace (not the owner),
        and with its database when its policy makes a System per database."""
        stamp: tuple[Property, ...] = (
            ((NAMESPACE_PROPERTY, namespace), *by_database) if origin == "reused" else ()
        )
        return self._plan(
            PlannedSystem(
                name=system.name,
                uuid=system.uuid,
                origin=origin,
                stamp=stamp,
                namespaces=(namespace,),
                entity_creation=self._entity_creation(policy, _created_by_openlineage(system)),
                replace_user_documentation=bool(policy and policy.replace_user_documentation),
            )
        )

    def _owned(self, system: KnownSystem) -> bool:
        return self.definition.uuid in system.values(OWNER_PROPERTY)

    def created_here(self, system: PlannedSystem) -> bool:
        """Whether this definition creates or created ``system``: the plan then knows every
        field it will hold (from the schema facets). On any other System (crawled, mapped, or
        another definition's) the fields are someone else's, and only Blindata knows them."""
        if system.create:
            return True
        known = self._by_uuid.get(system.uuid or "")
        return known is not None and self._owned(known)

    @staticmethod
    def _entity_creation(policy: SystemPolicy | None, created_by_openlineage: bool) -> bool:
        """``entityCreation`` of the policy, else true on Systems created by OpenLineage (by
        this definition or another: seed 000's table names no definition)."""
        if policy is None:
            return created_by_openlineage
        return policy.entity_creation_for(created_by_openlineage=created_by_openlineage)

    # -- jobs ----------------------------------------------------------------------------------

    def job_system(self, job_namespace: str) -> PlannedSystem:
        """The System that holds the job entities of ``job_namespace``."""
        key = f"job:{job_namespace}"
        if key not in self._resolved:
            self._resolved[key] = self._resolve_job(job_namespace)
        system = self._resolved[key]
        assert system is not None  # job namespaces always land somewhere
        return system

    def _resolve_job(self, job_namespace: str) -> PlannedSystem:
        rule = self.definition.job_system_rule_for(job_namespace)
        if rule is None:
            return self.openlineage_system()
        if rule.system.name:
            renamed = self._created_job_system(rule.system.name)
            if renamed is not None:
                return self._job_system_found(renamed, rule.system.name, "job")
        found = self._find(rule.system)
        if found is not None:
            if rule.shared or self._holds_jobs(found):
                return self._job_system_found(found, rule.system.name, "job")
            self.report.gap(GapCode.JOB_SYSTEM_NOT_SHARED, f"{job_namespace} → {found.name}")
            return self.openlineage_system()
        if rule.creation == "IF_MISSING" and rule.system.name:
            ol = self.definition.open_lineage_system
            return self._plan(
                PlannedSystem(
                    name=rule.system.name,
                    origin="job",
                    create=True,
                    subtype=ol.subtype.value,
                    technology=ol.technology,
                    stamp=self._job_system_stamp(rule.system.name),
                    entity_creation=True,
                )
            )
        missing = rule.system.name or rule.system.uuid or "?"
        self.report.gap(GapCode.JOB_SYSTEM_NOT_FOUND, f"{job_namespace} → {missing}")
        return self.openlineage_system()

    def _holds_jobs(self, system: KnownSystem) -> bool:
        return "true" in system.values(JOB_SYSTEM_PROPERTY) or self._owned(system)

    def openlineage_system(self) -> PlannedSystem:
        """The System where jobs go when no jobSystems rule applies: the one this definition
        created for it (by its stamp, whatever a steward renamed it to), else the one of that
        name, else created."""
        ol = self.definition.open_lineage_system
        found = self._created_job_system(ol.name) or self._by_name.get(ol.name)
        if found is not None:
            return self._job_system_found(found, ol.name, "openlineage")
        return self._plan(
            PlannedSystem(
                name=ol.name,
                origin="openlineage",
                create=True,
                subtype=ol.subtype.value,
                technology=ol.technology,
                stamp=self._job_system_stamp(ol.name),
                entity_creation=True,
            )
        )

    def _job_system_stamp(self, name: str) -> tuple[Property, ...]:
        return (
            (OWNER_PROPERTY, self.definition.uuid),
            (JOB_SYSTEM_PROPERTY, "true"),
            (JOB_SYSTEM_NAME_PROPERTY, name),
        )

    def _job_system_found(
        self, found: KnownSystem, configured: str | None, origin: SystemOrigin
    ) -> PlannedSystem:
        """The job System Blindata holds. One this definition created for jobs (its owner and
        job-system stamps) written before ``openLineageJobSystemName`` existed gets that stamp
        under the name the definition gives it, so that a later rename finds it again."""
        stamp: tuple[Property, ...] = ()
        if (
            configured
            and self._owned(found)
            and "true" in found.values(JOB_SYSTEM_PROPERTY)
            and found.values(JOB_SYSTEM_NAME_PROPERTY) != [configured]
            and found.name == configured
            and not set(found.values(JOB_SYSTEM_NAME_PROPERTY)) & self._job_system_names()
        ):
            # written before the stamp, or renamed by a steward and the definition now gives it
            # that name: the stamp follows the name the definition gives (a review: the next
            # rename was not followed); ``sync.systems`` replaces the old value
            stamp = ((JOB_SYSTEM_NAME_PROPERTY, configured),)
        return self._plan(
            PlannedSystem(
                name=found.name, uuid=found.uuid, origin=origin, stamp=stamp, entity_creation=True
            )
        )

    def _job_system_names(self) -> set[str]:
        """The names the definition gives job Systems: a System stamped with one of them is
        still that one's, and its stamp is not moved to another name."""
        names = {self.definition.open_lineage_system.name}
        names.update(rule.system.name for rule in self.definition.job_systems if rule.system.name)
        return names

    def _created_job_system(self, name: str) -> KnownSystem | None:
        """The job System this definition created under ``name``, whatever it is called now: it
        carries this definition's ``openLineageOwner``, ``openLineageJobSystem = true`` and
        ``openLineageJobSystemName = name``. Of several (a copy a person stamped alike), the one
        earlier syncs put the jobs in (``used_for_jobs``), else the one of that name, else the
        first by name, with ``JOB_SYSTEM_AMBIGUOUS``."""
        stamped = [
            system
            for system in self._by_uuid.values()
            if self._owned(system)
            and "true" in system.values(JOB_SYSTEM_PROPERTY)
            and name in system.values(JOB_SYSTEM_NAME_PROPERTY)
        ]
        if len(stamped) > 1:
            rank = {uuid.lower(): i for i, uuid in reversed(list(enumerate(self.used_for_jobs)))}
            stamped.sort(
                key=lambda system: (
                    rank.get(system.uuid.lower(), len(self.used_for_jobs)),
                    system.name != name,
                    system.name,
                    system.uuid,
                )
            )
            if name not in self._ambiguous_jobs:
                self._ambiguous_jobs.add(name)
                others = ", ".join(system.name for system in stamped[1:])
                self.report.gap(
                    GapCode.JOB_SYSTEM_AMBIGUOUS, f"{name} → {stamped[0].name} (not {others})"
                )
        return stamped[0] if stamped else None
