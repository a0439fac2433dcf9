"""Table names a statement's SQL writes that several Systems of the query bucket hold.

Seed 001: every statement of a definition is analysed in its one query bucket, which holds every
dataset System the definition uses (``sync.routines``). Blindata's analysis resolves the tables
a statement names within the bucket's Systems (how, when two hold the name, the contract does not
say): ``report_ambiguous_tables`` reports each schema-qualified name a routine's SQL writes that
the plan's entities hold on two Systems or more (``QLP_AMBIGUOUS_TABLE``), such as
``public.orders`` on two PostgreSQL servers. Pure.
"""

from __future__ import annotations

from airflow_blindata.mapper.plan import OPENLINEAGE_JOB, CatalogPlan
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.sql import names_in_sql

__all__ = ["report_ambiguous_tables"]


def report_ambiguous_tables(plan: CatalogPlan) -> None:
    """Report, for each routine of ``plan``, the tables it names that several Systems hold."""
    if not plan.routines:
        return
    held: dict[tuple[str, str], set[str]] = {}
    for entity in plan.entities:
        key = entity.key
        if entity.table_type != OPENLINEAGE_JOB and key.schema_:
            held.setdefault((key.schema_.casefold(), key.name.casefold()), set()).add(key.system)
    if not any(len(systems) > 1 for systems in held.values()):
        return
    for routine in plan.routines:
        for schema, name in sorted(names_in_sql(routine.definition, routine.dialect).qualified):
            systems = held.get((schema, name), set())
            if len(systems) > 1:
                plan.report.gap(
                    GapCode.QLP_AMBIGUOUS_TABLE,
                    f"{routine.catalog}/{routine.name}: {schema}.{name} on "
                    + ", ".join(sorted(systems)),
                )
