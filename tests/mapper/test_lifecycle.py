"""A dataset's ``lifecycleStateChange`` (seed 004 lists it among the dataset facets; Spark sends
it for ``DROP TABLE``, ``ALTER TABLE … RENAME``, ``CREATE``, ``INSERT OVERWRITE``, ``TRUNCATE``):
a table dropped, or renamed, and not mentioned since, is no longer described, so the plan gives
it no entity (seed 000: each run uploads "the entities … which is how the job tells what is
still described"; one the job made goes at the next cleanup, a crawled one is left as it is).
Marquez soft-deletes such a dataset alike."""

from __future__ import annotations

import json
from typing import Any

import pytest

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import GapCode
from tests import builders
from tests.builders import at, dataset, lifecycle_facet, run_cycle, schema_facet

DEFINITION = builders.definition(builders.policy())


def _tables(plan: CatalogPlan) -> set[str]:
    return {e.key.name for e in plan.entities if e.table_type != "OPENLINEAGE_JOB"}


def _flows(plan: CatalogPlan) -> set[tuple[str, str]]:
    return {(f.source.entity.name, f.target.entity.name) for f in plan.flows if f.kind == "table"}


def _write(
    job: str, second: int, *outputs: dict[str, Any], inputs: tuple[Any, ...] = ()
) -> list[Any]:
    return run_cycle(
        job,
        run_id=builders.new_run_id(),
        start_time=at(second),
        end_time=at(second + 1),
        inputs=list(inputs),
        outputs=list(outputs),
    )


def test_a_table_dropped_and_not_mentioned_since_has_no_entity_and_no_flow() -> None:
    events = [
        *_write(
            "etl.load",
            0,
            dataset("db.s.t", facets=schema_facet("id")),
            inputs=(dataset("db.s.src"),),
        ),
        *_write("etl.drop", 10, dataset("db.s.t", facets=lifecycle_facet("DROP"))),
    ]
    plan = build(events, DEFINITION)
    assert "t" not in _tables(plan)
    assert _flows(plan) == set()
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 0
    assert plan.report.counters["datasetsDropped"] == 1


@pytest.mark.parametrize("end", ["FAIL", None], ids=["failed", "only started"])
def test_a_drop_that_failed_or_has_only_started_drops_nothing(end: str | None) -> None:
    """docs/capture.md: a run that has started since, or failed, does not change what a job
    describes. Spark sends the DROP's state on the START too: a DROP TABLE that failed (no
    permission) or was still running removed the table and ended its flows (a probe of Spark's
    lifecycle events)."""
    dropped = dataset("db.s.t", facets=lifecycle_facet("DROP"))
    run_id = builders.new_run_id()
    dropping = [
        builders.run_event(
            "etl.drop", event_type="START", run_id=run_id, time=at(10), outputs=[dropped]
        )
    ]
    if end:
        dropping.append(
            builders.run_event(
                "etl.drop", event_type=end, run_id=run_id, time=at(11), outputs=[dropped]
            )
        )
    events = [*_write("etl.load", 0, dataset("db.s.t"), inputs=(dataset("db.s.src"),)), *dropping]
    plan = build(events, DEFINITION)
    assert "t" in _tables(plan)
    assert _flows(plan) == {("src", "t")}
    assert plan.report.counters.get("datasetsDropped", 0) == 0


def test_a_failed_drop_drops_nothing_after_the_job_completes_another_run() -> None:
    """A run that failed is no longer kept once its job completes another: the DROP it sent
    (on its START and FAIL, as Spark sends it) was then read as completed (a review)."""
    dropped = dataset("db.s.t", facets=lifecycle_facet("DROP"))
    run_id = builders.new_run_id()
    failed = [
        builders.run_event(
            "etl.drop", event_type=kind, run_id=run_id, time=at(second), outputs=[dropped]
        )
        for kind, second in (("START", 10), ("FAIL", 11))
    ]
    events = [
        *_write("etl.load", 0, dataset("db.s.t"), inputs=(dataset("db.s.src"),)),
        *failed,
        *_write("etl.drop", 20, dataset("db.s.other")),
    ]
    plan = build(events, DEFINITION)
    assert "t" in _tables(plan)
    assert plan.report.counters.get("datasetsDropped", 0) == 0


def test_a_rename_from_a_table_s_own_catalog_name_keeps_it() -> None:
    """Spark renames a table whose location does not change (Unity): a RENAME whose previous
    name is the dataset's own TABLE symlink is no rename of another table (a review)."""
    unity = "databricks://host"
    symlink = builders.facet(
        "SymlinksDatasetFacet",
        identifiers=[{"namespace": unity, "name": "main.s.t", "type": "TABLE"}],
    )
    renamed = {"symlinks": symlink, **lifecycle_facet("RENAME", previous=(unity, "main.s.t"))}
    located = dataset("raw/t", "s3://lake", facets=renamed)
    events = _write("spark.rename", 0, located, inputs=(dataset("raw/in", "s3://lake"),))
    plan = build(events, builders.definition(builders.policy("s3://*")))
    assert "t" in _tables(plan)
    assert plan.report.counters.get("datasetsRenamed", 0) == 0


@pytest.mark.parametrize(
    "later",
    [
        pytest.param("written", id="created again by a later run"),
        pytest.param("read", id="read by a later run"),
    ],
)
def test_a_table_dropped_then_mentioned_again_is_described(later: str) -> None:
    again = dataset("db.s.t", facets=lifecycle_facet("CREATE") if later == "written" else {})
    events = [
        *_write("etl.drop", 0, dataset("db.s.t", facets=lifecycle_facet("DROP"))),
        *(
            _write("etl.load", 10, again, inputs=(dataset("db.s.src"),))
            if later == "written"
            else _write("etl.read", 10, dataset("db.s.out"), inputs=(again,))
        ),
    ]
    plan = build(events, DEFINITION)
    assert "t" in _tables(plan)
    assert plan.report.counters.get("datasetsDropped", 0) == 0


def test_a_drop_alone_creates_no_entity() -> None:
    plan = build([builders.dataset_event("db.s.gone", facets=lifecycle_facet("DROP"))], DEFINITION)
    assert "gone" not in _tables(plan)


def test_a_drop_alone_creates_no_empty_system() -> None:
    """A Spark DROP TABLE sent alone (its table's writer long pruned, or under its catalog's
    name only) planned its System's creation with nothing on it: an empty System created in
    Blindata (a probe of Spark's lifecycle events). A System the datasets a job writes land on
    is still planned."""
    events = [
        *_write("spark.drop", 10, dataset("db.s.gone", facets=lifecycle_facet("DROP"))),
        *_write("etl.load", 20, dataset("db.s.kept", "postgres://other:5432")),
    ]
    plan = build(events, builders.definition(builders.policy(nameTemplate="{host}")))
    created = {system.name for system in plan.systems if system.create}
    assert "other" in created
    assert "db" not in created  # the System of postgres://db:5432, by {host}


def test_a_renamed_table_is_described_under_its_new_name_only() -> None:
    renamed = lifecycle_facet("RENAME", previous=(builders.PG, "db.s.old"))
    events = [
        *_write(
            "etl.load",
            0,
            dataset("db.s.old", facets=schema_facet("id")),
            inputs=(dataset("db.s.src"),),
        ),
        *_write("etl.rename", 10, dataset("db.s.new", facets=renamed)),
    ]
    plan = build(events, DEFINITION)
    assert "old" not in _tables(plan)
    (new,) = [e for e in plan.entities if e.key.name == "new"]
    assert ("openLineageRenamedFrom", f"{builders.PG}/db.s.old") in new.properties
    assert plan.report.counters["datasetsRenamed"] == 1
    assert plan.report.gap_count(GapCode.DANGLING_FLOW) == 0


def test_a_table_renamed_away_and_written_again_under_its_old_name_is_described() -> None:
    renamed = lifecycle_facet("RENAME", previous=(builders.PG, "db.s.old"))
    events = [
        *_write("etl.rename", 0, dataset("db.s.new", facets=renamed)),
        *_write("etl.load", 10, dataset("db.s.old"), inputs=(dataset("db.s.src"),)),
    ]
    assert {"old", "new"} <= _tables(build(events, DEFINITION))


@pytest.mark.parametrize("then", ["OVERWRITE", "ALTER", None])
def test_a_rename_is_remembered_whatever_state_the_new_name_is_sent_in_after(
    then: str | None,
) -> None:
    """Spark sends OVERWRITE on each ``INSERT OVERWRITE``: read from the latest state alone, the
    rename was forgotten on the next write, and the old name came back (created again after the
    cleanup removed it). Found by a review of this session's work."""
    renamed = lifecycle_facet("RENAME", previous=(builders.PG, "db.s.old"))
    later = lifecycle_facet(then) if then else {}
    events = [
        *_write("etl.load", 0, dataset("db.s.old"), inputs=(dataset("db.s.src"),)),
        *_write("etl.rename", 10, dataset("db.s.new", facets=renamed)),
        *_write("etl.fill", 20, dataset("db.s.new", facets=later), inputs=(dataset("db.s.src"),)),
    ]
    plan = build(events, DEFINITION)
    assert "old" not in _tables(plan)
    (new,) = [e for e in plan.entities if e.key.name == "new"]
    assert ("openLineageRenamedFrom", f"{builders.PG}/db.s.old") in new.properties


@pytest.mark.parametrize("as_text", [False, True], ids=["decoded", "as stored"])
@pytest.mark.parametrize("key", ["lifecycleStateChange", "acme_lifecycle"])
@pytest.mark.parametrize("same_run", [False, True], ids=["its next run", "its COMPLETE"])
def test_a_rename_is_remembered_when_the_renaming_job_itself_overwrites_the_new_name(
    same_run: bool, key: str, as_text: bool
) -> None:
    """docs/facet-support.md: the previous name stays undescribed "whatever state the new name is
    sent in later (Spark's OVERWRITE)". Sent by the job that renamed it (its next run, or the
    COMPLETE of the renaming run), the OVERWRITE made the reading skim the RENAME's event as
    decided, and the old name came back (a probe of lifecycle over several syncs; a kept fold
    extended with the OVERWRITE remembered it, a reading from scratch did not). Under a key of
    its own too, filed as ``lifecycleStateChange`` by its ``_schemaURL`` (a review)."""
    renamed = {key: lifecycle_facet("RENAME", previous=(builders.PG, "db.s.old"))[_STATE]}
    overwrite = dataset("db.s.new", facets=lifecycle_facet("OVERWRITE"))
    if same_run:
        run_id = builders.new_run_id()
        renaming = [
            builders.run_event(
                "etl.rename",
                event_type=kind,
                run_id=run_id,
                time=at(second),
                outputs=[dataset("db.s.new", facets=facets)],
            )
            for kind, second, facets in (
                ("START", 10, renamed),
                ("COMPLETE", 11, overwrite["facets"]),
            )
        ]
    else:
        renaming = [
            *_write("etl.rename", 10, dataset("db.s.new", facets=renamed)),
            *_write("etl.rename", 20, overwrite, inputs=(dataset("db.s.src"),)),
        ]
    events = [*_write("etl.load", 0, dataset("db.s.old"), inputs=(dataset("db.s.src"),)), *renaming]
    plan = build([json.dumps(e) for e in events] if as_text else events, DEFINITION)
    assert "old" not in _tables(plan)
    (new,) = [e for e in plan.entities if e.key.name == "new"]
    assert ("openLineageRenamedFrom", f"{builders.PG}/db.s.old") in new.properties
    assert plan.report.counters["datasetsRenamed"] == 1


_STATE = "lifecycleStateChange"


def test_a_table_renamed_then_dropped_leaves_neither_name() -> None:
    renamed = lifecycle_facet("RENAME", previous=(builders.PG, "db.s.old"))
    events = [
        *_write("etl.load", 0, dataset("db.s.old"), inputs=(dataset("db.s.src"),)),
        *_write("etl.rename", 10, dataset("db.s.new", facets=renamed)),
        *_write("etl.drop", 20, dataset("db.s.new", facets=lifecycle_facet("DROP"))),
    ]
    assert {"old", "new"}.isdisjoint(_tables(build(events, DEFINITION)))


def test_a_drop_sent_in_another_spelling_of_the_namespace_drops_the_table() -> None:
    """``postgresql://`` and ``postgres://`` name one table: the DROP counted it dropped while the
    other spelling still described it, and its flows were counted as ending nowhere."""
    other = builders.PG.replace("postgres://", "postgresql://")
    events = [
        *_write("etl.load", 0, dataset("db.s.t"), inputs=(dataset("db.s.src"),)),
        *_write("etl.drop", 10, dataset("db.s.t", other, facets=lifecycle_facet("DROP"))),
    ]
    plan = build(events, DEFINITION)
    assert "t" not in _tables(plan)
    assert plan.report.counters["datasetsDropped"] == 1  # one table, whatever its spellings


@pytest.mark.parametrize("state", ["DROP", "RENAME"])
def test_a_drop_or_rename_in_the_other_letter_case_of_an_identifier_case_ends_the_table(
    state: str,
) -> None:
    """docs/configure-the-job.md: under ``identifierCase`` unquoted names in either case are one
    table. A DROP (or a RENAME away) sent as ``DB.SCH.T`` of a table written as ``db.sch.t`` left
    the table and its flow planned while the report counted it dropped (a probe of lifecycle
    across producers)."""
    snowflake = "snowflake://acct"
    definition = builders.definition(
        builders.policy("snowflake://*", nameProfile="snowflake", identifierCase="UPPER"),
        builders.policy(),
    )
    ended = (
        dataset("DB.SCH.T", snowflake, facets=lifecycle_facet("DROP"))
        if state == "DROP"
        else dataset(
            "db.sch.t2",
            snowflake,
            facets=lifecycle_facet("RENAME", previous=(snowflake, "DB.SCH.T")),
        )
    )
    events = [
        *_write(
            "etl.load",
            0,
            dataset("db.sch.t", snowflake, facets=schema_facet("id")),
            inputs=(dataset("db.s.src"),),
        ),
        *_write("etl.end", 10, ended),
    ]
    plan = build(events, definition)
    assert "T" not in _tables(plan)
    assert _flows(plan) == set()
    counter = "datasetsDropped" if state == "DROP" else "datasetsRenamed"
    assert plan.report.counters[counter] == 1


def test_a_drop_in_one_database_leaves_the_table_of_another_on_the_same_entity() -> None:
    """Two databases' ``s.t`` on one System land on one entity (DATABASES_MERGED says so); a
    DROP of one is not the other's: the entity and the flow into it stay (a review of the rule
    that a DROP ends a table under any name of it)."""
    events = [
        *_write("etl.one", 0, dataset("db1.s.t"), inputs=(dataset("db1.s.src"),)),
        *_write("etl.two", 5, dataset("db2.s.t")),
        *_write("etl.drop", 10, dataset("db2.s.t", facets=lifecycle_facet("DROP"))),
    ]
    plan = build(events, DEFINITION)
    assert "t" in _tables(plan)
    assert ("src", "t") in _flows(plan)


@pytest.mark.parametrize(
    ("namespace", "name"),
    [
        pytest.param("postgres://h1.example.com:5432", "db.s.t", id="a namespace of its System"),
        pytest.param("postgres://h1:5432", "s.t", id="the name without its database"),
    ],
)
def test_a_drop_under_another_name_of_a_table_on_its_entity_drops_it(
    namespace: str, name: str
) -> None:
    """One table on one entity: a DROP sent through another namespace the definition puts on
    its System, or naming it without its database, was counted in ``datasetsDropped`` while the
    table and its flow stayed (a review of the rule that two databases' tables are two)."""
    one_system = builders.definition(builders.policy("postgres://*", nameTemplate="warehouse"))
    src = dataset("db.s.src", "postgres://h1:5432")
    events = [
        *_write("etl.load", 0, dataset("db.s.t", "postgres://h1:5432"), inputs=(src,)),
        *_write("etl.drop", 10, dataset(name, namespace, facets=lifecycle_facet("DROP"))),
    ]
    plan = build(events, one_system)
    assert "t" not in _tables(plan)
    assert _flows(plan) == set()
    assert plan.report.counters["datasetsDropped"] == 1


@pytest.mark.parametrize(
    ("sql", "gone"),
    [
        pytest.param("DROP TABLE s.t", True, id="dropped"),
        pytest.param("drop table if exists t", True, id="dropped, unqualified"),
        pytest.param(
            "DROP TABLE IF EXISTS s.t; CREATE TABLE s.t AS SELECT * FROM s.src",
            False,
            id="dropped, then created again",
        ),
        pytest.param("TRUNCATE TABLE s.t", False, id="truncated"),
        # a staging table of the same name loaded into it, then dropped: which one the default
        # schema makes ``t`` is not known, so neither is dropped
        pytest.param("INSERT INTO s.t SELECT * FROM t; DROP TABLE t", False, id="staging"),
        pytest.param("DROP TABLE other.t; INSERT INTO s.t SELECT 1", False, id="another schema"),
        pytest.param(
            "DROP TABLE IF EXISTS t; CREATE TABLE s.t AS SELECT 1", False, id="created again"
        ),
        pytest.param(
            "SELECT * INTO #t FROM s.src; INSERT INTO s.t SELECT * FROM #t; DROP TABLE #t",
            False,
            id="a SQL Server temp table",
        ),
        # a statement sqlglot does not read (MySQL's swap) may create it again
        pytest.param("DROP TABLE s.t; RENAME TABLE s.t_new TO s.t", False, id="unread after"),
        # so may a procedure or a function, and a transaction may be rolled back (a review)
        pytest.param("DROP TABLE s.t; EXEC sp_rename 's.t_new', 't'", False, id="a procedure"),
        pytest.param("DROP TABLE IF EXISTS s.t; SELECT s.build_t()", False, id="a function"),
        pytest.param("BEGIN; DROP TABLE s.t; ROLLBACK;", False, id="a transaction"),
        pytest.param("DROP TABLE s.t; SELECT * FROM s.build_t()", False, id="a table function"),
        # T-SQL without ``;``: sqlglot, told to ignore errors, read the DROP and dropped the rest
        pytest.param("DROP TABLE s.t\nSELECT * INTO s.t FROM s.src", False, id="no semicolon"),
    ],
)
def test_a_table_an_airflow_sql_task_drops_is_dropped(sql: str, gone: bool) -> None:
    """Airflow's SQL operators send no ``lifecycleStateChange``: their parser names the table a
    ``DROP TABLE`` drops as an output of the run, so the dropped table stayed described, its
    flows too (a probe with real Airflow and PostgreSQL). The job's SQL says it: a table its
    statements leave dropped is dropped when the run ended, as a DROP facet says."""
    dropping = builders.run_cycle(
        "etl.drop",
        run_id=builders.new_run_id(),
        start_time=at(10),
        end_time=at(11),
        outputs=[dataset("db.s.t")],
        job_facets=builders.sql_facet(sql, "postgres"),
    )
    events = [*_write("etl.load", 0, dataset("db.s.t"), inputs=(dataset("db.s.src"),)), *dropping]
    plan = build(events, DEFINITION)
    assert ("t" not in _tables(plan)) is gone
    assert (_flows(plan) == set()) is gone
    assert plan.report.counters.get("datasetsDropped", 0) == int(gone)


def test_the_instances_of_a_mapped_task_drop_each_by_its_own_sql_and_time() -> None:
    """A mapped task's SQL is the distinct statements of its instances, sorted: read as one text,
    the DROP of one instance came after the CREATE of a later one, and the table the last one
    created was taken for dropped (a review). Each instance's SQL drops its own outputs, when it
    ended."""
    parent = builders.parent_facet("etl_dag", builders.new_run_id())
    instances = [
        builders.run_cycle(
            "etl.swap",
            run_id=builders.new_run_id(),
            start_time=at(start),
            end_time=at(start + 1),
            outputs=[dataset("db.s.t")],
            job_facets=builders.sql_facet(sql, "postgres"),
            run_facets=parent,
        )
        for start, sql in ((10, "DROP TABLE IF EXISTS s.t"), (20, "CREATE TABLE s.t AS SELECT 1"))
    ]
    events = [*_write("etl.load", 0, dataset("db.s.t")), *instances[0], *instances[1]]
    plan = build(events, DEFINITION)
    assert "t" in _tables(plan)
    assert plan.report.counters.get("datasetsDropped", 0) == 0


def test_a_drop_under_the_catalog_name_of_a_table_on_s3_drops_it() -> None:
    """openlineage-spark names a Hive (or Glue) table on S3 by its location with the catalog's
    name as a TABLE symlink, and seed 000 lands it on the bucket's folder; a DROP sent under the
    catalog's name alone was counted while the folder's entity and its flow stayed (a probe of
    Spark's lifecycle events). A dataset's TABLE symlinks are names of it."""
    hive = "hive://metastore:9083"
    symlink = builders.facet(
        "SymlinksDatasetFacet",
        identifiers=[{"namespace": hive, "name": "db.t", "type": "TABLE"}],
    )
    located = dataset("warehouse/db.db/t", "s3://bucket", facets={"symlinks": symlink})
    events = [
        *_write("spark.ctas", 0, located, inputs=(dataset("raw/in", "s3://bucket"),)),
        *_write("spark.drop", 10, dataset("db.t", hive, facets=lifecycle_facet("DROP"))),
    ]
    definition = builders.definition(builders.policy("s3://*"), builders.policy("hive://*"))
    plan = build(events, definition)
    assert "t" not in _tables(plan)
    assert _flows(plan) == set()
    assert plan.report.counters["datasetsDropped"] == 1


def test_a_table_renamed_to_itself_stays() -> None:
    """A RENAME whose previous identifier is the dataset itself (any spelling) says nothing
    moved: it removed the table (found by a review of this session's work)."""
    itself = lifecycle_facet("RENAME", previous=(builders.PG.upper(), "db.s.t"))
    events = [
        *_write("etl.load", 0, dataset("db.s.t"), inputs=(dataset("db.s.src"),)),
        *_write("etl.alter", 10, dataset("db.s.t", facets=itself)),
    ]
    assert "t" in _tables(build(events, DEFINITION))


def test_assertions_on_a_dropped_table_make_no_check_and_no_gap() -> None:
    """A job's tests on a table dropped since: "not catalogued, crawl the store" was untrue
    advice (found by a probe of removal); flows to it end nowhere without a gap, and so do its
    assertions (counted)."""
    asserted = builders.assertions_facet(builders.assertion("not_null", True, "c"))
    events = [
        *_write("etl.load", 0, dataset("db.s.qt"), inputs=(dataset("db.s.src"),)),
        *_write("etl.q", 5, dataset("db.s.out"), inputs=(dataset("db.s.qt", facets=asserted),)),
        *_write("etl.drop", 10, dataset("db.s.qt", facets=lifecycle_facet("DROP"))),
    ]
    plan = build(events, DEFINITION)
    assert plan.report.gap_count(GapCode.TARGET_NOT_CATALOGUED) == 0
    assert plan.report.counters["assertionsOnDroppedDatasets"] == 1
