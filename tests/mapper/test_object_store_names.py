"""Object keys → schema and entity (seed 000's ``s3://`` row), issue 37 item 4.

Seed 000: "s3:// | The key of the dataset folder | The key up to the parent of the dataset folder
| The dataset folder. Partition segments (key=value) and files (part-…, _SUCCESS, names with an
extension) are dropped from the end." A folder whose name holds a dot (``orders.v2``,
``Events.2024``) is no file: only an extension of a known data format, a writer's ``part-…`` or
``_SUCCESS``, or a dataset its facets call a file, makes the last segment a file; a trailing ``/``
always names a folder; a namespace with a path keeps the path as the key prefix.

The shapes are the producers' own, per the OpenLineage naming specification (spec/Naming.md:
"Namespace: s3://{bucket name} … Unique name: {path}", the same for ``gs://`` and
``hdfs://{namenode host}:{namenode port}``):

* Spark's ``PathUtils`` names a path ``s3a://sales/raw/orders.v2`` as namespace ``s3://sales``
  (``s3a`` normalised) and name ``raw/orders.v2``, the folder it wrote, no leading ``/``;
* Airflow's S3 operators (``S3CreateObjectOperator``, ``S3CopyObjectOperator``,
  ``S3ToRedshiftOperator``…) name ``Dataset(namespace=f"s3://{bucket}", name=key)``: a key that
  is mostly a file (``exports/2026/orders.csv``), sometimes a prefix ending in ``/``;
* Airflow's GCS operators likewise ``gs://{bucket}`` and the object name; Airflow's ``File``
  asset and Hop's spec mode name ``file`` and an absolute path;
* Airflow's ``FileTransferOperator`` (common-io, installed here) is run for its own
  ``get_openlineage_facets_on_start``: ``ObjectStoragePath`` drops a trailing ``/``;
* a producer configured with a base location sends it as the namespace (``s3://sales/raw``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from airflow_blindata.mapper.build import build
from airflow_blindata.mapper.identity import (
    OBJECT_STORE_SCHEMES,
    entity_name,
    is_data_file,
    object_key_entity,
)
from airflow_blindata.mapper.plan import CatalogPlan
from airflow_blindata.mapper.report import GapCode
from airflow_blindata.mapper.systems import NAMESPACE_PROPERTY, KnownSystem
from tests.builders import dataset, dataset_type_facet, definition, policy, run_event
from tests.mapper.helpers import created_as_known

Where = tuple[str | None, str]


def where(namespace: str, name: str, **options: Any) -> Where:
    found = entity_name(namespace, name, **options)
    return found.schema, found.name


# -- "files (part-…, _SUCCESS, names with an extension) are dropped from the end" ---------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # folders with a dot: the dataset folder, as a crawler of the bucket lists it
        ("raw/orders.v2", ("raw", "orders.v2")),
        ("raw/Events.2024", ("raw", "Events.2024")),
        ("raw/v1.2.3", ("raw", "v1.2.3")),
        ("warehouse/sales.db/orders", ("warehouse/sales.db", "orders")),  # Hive's database folder
        ("warehouse/sales.db", ("warehouse", "sales.db")),
        ("raw/orders.backup", ("raw", "orders.backup")),
        # a writer's files in a folder with a dot: dropped, the folder stays
        ("raw/orders.v2/part-00000-1a2b-c000.snappy.parquet", ("raw", "orders.v2")),
        ("raw/orders.v2/_SUCCESS", ("raw", "orders.v2")),
        ("raw/Events.2024/dt=2024-01-01/part-00000.json", ("raw", "Events.2024")),
        # names with the extension of a data format: files (Airflow's S3 operators name keys)
        ("exports/2026/orders.csv", ("exports", "2026")),
        ("exports/orders.CSV", (None, "exports")),  # an extension is read in any case
        ("exports/orders.csv.gz", (None, "exports")),
        ("exports/orders.parquet", (None, "exports")),
        ("exports/orders.jsonl", (None, "exports")),
        # only the last segment can be a file: what holds other objects is a folder
        ("lake/orders.parquet/part-00000.snappy.parquet", ("lake", "orders.parquet")),
        ("lake/orders.csv/year=2026/part-0000", ("lake", "orders.csv")),
    ],
)
def test_a_folder_with_a_dot_is_a_folder_unless_seed_000_makes_it_a_file(
    name: str, expected: Where
) -> None:
    """Seed 000: "files (part-…, _SUCCESS, names with an extension) are dropped from the end" —
    an extension being that of a data format: ``v2`` or ``2024`` is none."""
    assert where("s3://sales", name) == expected


@pytest.mark.parametrize(
    ("segment", "file"),
    [
        ("part-00000", True),
        ("part-00000-1a2b.c000.snappy.parquet", True),
        ("_SUCCESS", True),
        ("_committed_1234", True),
        ("orders.csv", True),
        ("ORDERS.TSV", True),
        ("orders.avro", True),
        ("orders.orc", True),
        ("orders.json.bz2", True),
        ("orders.v2", False),
        ("Events.2024", False),
        ("sales.db", False),
        ("orders", False),
        (".csv", False),  # a hidden name, not an extension
        ("orders.", False),
    ],
)
def test_a_file_is_a_writer_s_file_or_has_the_extension_of_a_data_format(
    segment: str, file: bool
) -> None:
    assert is_data_file(segment) is file


SEGMENT = st.text(alphabet=st.characters(blacklist_characters="/"), min_size=1, max_size=12)
PATH_SEGMENT = st.text(alphabet="abzAZ09.-_=", min_size=1, max_size=12)
"""A segment of a namespace's path: a namespace is trimmed and loses its query and fragment."""


@given(
    prefix=st.lists(PATH_SEGMENT, max_size=3),
    segments=st.lists(SEGMENT, min_size=1, max_size=6),
    slash=st.booleans(),
    file=st.booleans(),
)
def test_the_dataset_folder_is_a_folder_of_the_key(
    prefix: list[str], segments: list[str], slash: bool, file: bool
) -> None:
    """Whatever the key, the schema and the entity are its first segments, in order (nothing is
    invented, nothing re-cased), the entity is one segment, and a name ending with ``/`` keeps
    its last segment unless it is a partition."""
    namespace = "s3://sales" + "".join(f"/{part}" for part in prefix)
    name = "/".join(segments) + ("/" if slash else "")
    found = object_key_entity(namespace, name, file=file)
    key = [part for part in f"{namespace.removeprefix('s3://sales')}/{name}".split("/") if part]
    kept = [*(found.schema.split("/") if found.schema else []), found.name]
    assert "/" not in found.name and kept == key[: len(kept)]
    if slash and "=" not in key[-1]:
        assert kept == key


# -- "a trailing / always means a folder" ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("raw/orders.v2/", ("raw", "orders.v2")),
        ("raw/orders.csv/", ("raw", "orders.csv")),  # Spark writes folders named so
        ("raw/orders.parquet/", ("raw", "orders.parquet")),
        ("raw/sales/orders/year=2026/", ("raw/sales", "orders")),  # a partition is still dropped
        ("/raw/Events.2024/", ("raw", "Events.2024")),
    ],
)
def test_a_trailing_slash_always_names_a_folder(name: str, expected: Where) -> None:
    assert where("s3://sales", name) == expected
    assert where("s3://sales", name, file=True) == expected  # even of a dataset called a file


# -- "the last segment of a path whose dataset is a file by its facets" --------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("raw/orders.v2", (None, "raw")),
        ("raw/daily/orders", ("raw", "daily")),
        ("raw/daily/orders_2026_11_29", ("raw", "daily")),
        ("orders.v2", (None, "orders.v2")),  # nothing above it: the name stays
    ],
)
def test_the_last_segment_of_a_dataset_that_its_facets_call_a_file_is_a_file(
    name: str, expected: Where
) -> None:
    assert where("s3://sales", name, file=True) == expected


def test_a_dataset_type_facet_file_makes_the_last_segment_a_file() -> None:
    """``datasetType: FILE`` (the spec's dataset type of a file) on the dataset, as an Airflow S3
    operator's dataset with its facets: the object lands on its folder; without it, on itself."""
    events = [
        run_event(
            "export.upload",
            outputs=[
                dataset("exports/2026/orders.v2", "s3://sales", facets=dataset_type_facet("FILE")),
                dataset("exports/2026/customers.v2", "s3://sales"),
            ],
        )
    ]
    assert entities(build(events, definition(policy("s3://*")))) == {
        ("sales", "exports", "2026"),
        ("sales", "exports/2026", "customers.v2"),
    }


# -- "a namespace with a path keeps the path as the key prefix" ---------------------------------


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        ("s3://sales/raw", "orders", ("raw", "orders")),
        ("s3://sales/raw/", "orders.v2", ("raw", "orders.v2")),
        ("s3a://sales/raw", "/orders/part-00000.parquet", ("raw", "orders")),
        ("s3://sales/raw/orders", "year=2026/part-0000", ("raw", "orders")),
        ("s3://sales/lake/raw", "sales/orders", ("lake/raw/sales", "orders")),
        ("s3://sales/raw", "orders.csv", (None, "raw")),  # a file in the namespace's folder
    ],
)
def test_a_namespace_with_a_path_keeps_the_path_as_the_key_prefix(
    namespace: str, name: str, expected: Where
) -> None:
    """Spec/Naming.md: "URI = s3://{bucket name}{path}": the namespace and the name together
    name the object, and a crawler of the bucket lists it under its full key."""
    assert where(namespace, name) == expected


# -- the cases, end to end ----------------------------------------------------------------


def entities(plan: CatalogPlan) -> set[tuple[str, str | None, str]]:
    return {
        (e.key.system, e.key.schema_, e.key.name)
        for e in plan.entities
        if e.table_type != "OPENLINEAGE_JOB"
    }


def test_folders_with_a_dot_are_not_merged_into_their_parent_folder() -> None:
    """Spark writing three folders of ``s3a://sales/raw/``: none lands on ``(∅, raw)``.
    ``raw/orders.v2`` and ``raw/orders.v2/`` name one folder (the trailing ``/`` says it is a
    folder, not another object): one entity, as the bucket's crawler lists one folder."""
    events = [
        run_event(
            "spark.ingest",
            namespace="spark",
            inputs=[dataset("landing/orders.v2/part-00000.snappy.parquet", "s3a://sales")],
            outputs=[
                dataset("raw/orders.v2", "s3a://sales"),
                dataset("raw/orders.v2/", "s3://sales"),
                dataset("raw/Events.2024", "s3://sales"),
            ],
        )
    ]
    assert entities(build(events, definition(policy("s3://*")))) == {
        ("sales", "landing", "orders.v2"),
        ("sales", "raw", "orders.v2"),
        ("sales", "raw", "Events.2024"),
    }


def test_a_namespace_with_a_path_lands_with_the_datasets_of_its_bucket() -> None:
    """``s3://sales/raw`` + ``orders`` and ``s3://sales`` + ``raw/orders`` are one object key:
    one entity ``(raw, orders)`` on the bucket's System, the ``raw`` prefix kept."""
    events = [
        run_event(
            "load",
            inputs=[dataset("orders", "s3://sales/raw")],
            outputs=[dataset("raw/orders/", "s3://sales"), dataset("curated", "s3://sales/raw")],
        )
    ]
    assert entities(build(events, definition(policy("s3://*")))) == {
        ("sales", "raw", "orders"),
        ("sales", "raw", "curated"),
    }


@pytest.mark.parametrize(
    ("namespace", "bucket", "how"),
    [
        pytest.param("s3://lake/curated", "s3://lake", "stamp", id="an S3 bucket stamped"),
        pytest.param("s3a://lake/curated/", "s3://lake", "mapping", id="an S3 bucket mapped"),
        pytest.param(
            "abfss://raw@lake.dfs.core.windows.net/curated",
            "abfss://raw@lake.dfs.core.windows.net",
            "stamp",
            id="an Azure container stamped",
        ),
        pytest.param(
            "hdfs://namenode:8020/curated", "hdfs://namenode", "mapping", id="HDFS mapped"
        ),
    ],
)
def test_a_namespace_with_a_path_lands_on_the_system_its_bucket_was_given(
    namespace: str, bucket: str, how: str
) -> None:
    """``s3://lake/curated`` + ``totals`` is the key ``curated/totals`` of the bucket ``lake``:
    it lands on the System a crawler of the bucket was stamped or mapped with. It missed it
    (``UNMAPPED_NAMESPACE``, a probe of naming): stamps and mappings were read for the whole
    namespace only. One of the whole namespace still comes first."""
    known = [
        KnownSystem("Lake (crawled)", "u1", ((NAMESPACE_PROPERTY, bucket),) * (how == "stamp"))
    ]
    mappings = [{"pattern": bucket, "system": {"name": "Lake (crawled)"}}] * (how == "mapping")
    # the folder profile, which only s3:// has by default, without creating Systems
    profile = {"pattern": namespace.split("://")[0] + "://*", "nameProfile": "OBJECT_KEY"}
    job = definition(profile, namespaceMappings=mappings)
    events = [run_event("load", outputs=[dataset("totals", namespace)])]
    plan = build(events, job, known)
    assert entities(plan) == {("Lake (crawled)", "curated", "totals")}
    assert plan.report.gap_count(GapCode.UNMAPPED_NAMESPACE) == 0
    known.append(KnownSystem("Curated", "u2", ((NAMESPACE_PROPERTY, namespace),)))
    plan = build(events, job, known)
    assert entities(plan) == {("Curated", "curated", "totals")} or how == "mapping"


# -- "The same folder rules for gs://, abfss://, wasbs://, hdfs:// and file://" ----------------


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        # gs://{bucket} + object name (Spark, Airflow's GCS operators)
        ("gs://sales", "raw/orders.v2", ("raw", "orders.v2")),
        ("gs://sales", "raw/orders.v2/", ("raw", "orders.v2")),
        ("gs://sales", "raw/Events.2024/part-00000.avro", ("raw", "Events.2024")),
        ("gs://sales/raw", "orders", ("raw", "orders")),
        # {scheme}://{container}@{account} + path (seed 002)
        ("abfss://raw@lake.dfs.core.windows.net", "sales/orders.v2", ("sales", "orders.v2")),
        ("abfss://raw@lake.dfs.core.windows.net/sales", "orders.csv", (None, "sales")),
        (
            "wasbs://raw@lake.blob.core.windows.net",
            "sales/orders.v2/_SUCCESS",
            ("sales", "orders.v2"),
        ),
        # hdfs://{namenode host}:{namenode port} + path
        ("hdfs://namenode:8020", "/warehouse/sales.db/orders", ("warehouse/sales.db", "orders")),
        (
            "hdfs://namenode:8020",
            "/warehouse/sales.db/orders/dt=2026-11-29/",
            ("warehouse/sales.db", "orders"),
        ),
        # file + absolute path (seed 002: "file | absolute path")
        ("file", "/data/exports/orders.v2", ("data/exports", "orders.v2")),
        ("file", "/data/exports/customers.csv", ("data", "exports")),
        ("file:///data", "exports/orders.v2/", ("data/exports", "orders.v2")),
    ],
)
def test_the_same_folder_rules_for_the_other_path_schemes(
    namespace: str, name: str, expected: Where
) -> None:
    found = object_key_entity(namespace, name)
    assert (found.schema, found.name) == expected


def test_only_s3_has_the_folder_profile_by_default() -> None:
    """Seed 000: "Other schemes need the hierarchy facet or a symlinks entry." The folder rules
    are those of every path scheme; seed 000 gives them to ``s3://`` alone, so a ``gs://`` or
    ``hdfs://`` name is kept whole (and a TABLE symlink still names it) until its System's
    policy declares a name profile (issue 37 item 1)."""
    assert {"s3", "gs", "abfss", "wasbs", "hdfs", "file"} <= OBJECT_STORE_SCHEMES
    assert where("gs://sales", "raw/orders.v2") == (None, "raw/orders.v2")
    assert where("s3://sales", "raw/orders.v2") == ("raw", "orders.v2")


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        ("gs://lake/raw", "orders", (None, "raw/orders")),
        ("gs://lake", "raw/orders", (None, "raw/orders")),
        ("gs://lake/raw/", "/orders", (None, "raw/orders")),
        ("abfss://raw@lake.dfs.core.windows.net/curated", "orders", (None, "curated/orders")),
        ("hdfs://nn:8020/warehouse", "sales/orders", (None, "warehouse/sales/orders")),
        ("file:///data", "orders.csv", (None, "data/orders.csv")),
        ("gs://lake", "orders", (None, "orders")),
    ],
)
def test_a_name_kept_whole_keeps_its_namespace_s_path_as_its_key_prefix(
    namespace: str, name: str, expected: Where
) -> None:
    """Seed 000 keeps a ``gs://`` or ``hdfs://`` name whole; the naming specification names
    the object by the namespace's path and the name together. Without the path, ``raw/orders``
    and ``curated/orders`` of one bucket were one entity, and the flow between them a loop."""
    assert where(namespace, name) == expected


def test_a_producer_with_a_base_location_keeps_its_tables_and_their_lineage_apart() -> None:
    """Spark writing ``orders`` under two base locations of one container whose crawler's
    System is stamped: three entities on that System, two flows (a probe: one entity, no flow,
    no gap)."""
    container = "abfss://raw@lake.dfs.core.windows.net"
    events = [
        run_event(
            "land",
            inputs=[dataset("orders", f"{container}/landing")],
            outputs=[dataset("orders", f"{container}/curated")],
        ),
        run_event(
            "publish",
            inputs=[dataset("orders", f"{container}/curated")],
            outputs=[dataset("mart/orders", container)],
        ),
    ]

    crawled = KnownSystem("ADLS raw", "u1", ((NAMESPACE_PROPERTY, container),))

    plan = build(events, definition(), [crawled])

    assert entities(plan) == {
        ("ADLS raw", None, "landing/orders"),
        ("ADLS raw", None, "curated/orders"),
        ("ADLS raw", None, "mart/orders"),
    }
    assert {(f.source.entity.name, f.target.entity.name) for f in plan.flows} == {
        ("landing/orders", "curated/orders"),
        ("curated/orders", "mart/orders"),
    }


# -- the datasets Airflow's own OpenLineage code names --------------------------------------------


def airflow_file_transfer(src: str, dst: str) -> dict[str, Any]:
    """The COMPLETE event of a ``FileTransferOperator`` (apache-airflow-providers-common-io),
    its datasets named by the operator's own ``get_openlineage_facets_on_start`` — Airflow's
    ``ObjectStoragePath``: ``s3://{bucket}`` + key, a trailing ``/`` dropped; ``file`` + path."""
    module = pytest.importorskip("airflow.providers.common.io.operators.file_transfer")
    lineage = module.FileTransferOperator(task_id="copy", src=src, dst=dst)
    found = lineage.get_openlineage_facets_on_start()
    return run_event(
        "transfer.copy",
        inputs=[dataset(d.name, d.namespace) for d in found.inputs],
        outputs=[dataset(d.name, d.namespace) for d in found.outputs],
    )


@pytest.mark.parametrize(
    ("src", "dst", "expected"),
    [
        (
            "s3://sales/landing/orders.v2/",
            "s3://sales/raw/orders.v2/",
            {("sales", "landing", "orders.v2"), ("sales", "raw", "orders.v2")},
        ),
        (
            "s3://sales/exports/orders.csv",
            "s3://sales/raw/Events.2024",
            {("sales", None, "exports"), ("sales", "raw", "Events.2024")},
        ),
        (
            "s3://sales/raw/Events.2024/part-00000.json",
            "s3://archive/2024/Events.2024/",
            {("sales", "raw", "Events.2024"), ("archive", "2024", "Events.2024")},
        ),
    ],
)
def test_the_datasets_of_airflow_s_file_transfer_land_on_their_folders(
    src: str, dst: str, expected: set[tuple[str, str | None, str]]
) -> None:
    plan = build([airflow_file_transfer(src, dst)], definition(policy("s3://*")))
    assert entities(plan) == expected


def test_a_partition_or_table_named_after_a_secret_word_is_not_merged_with_another() -> None:
    """Seed 002: "Two producers that name the same store land on the same node", and two stores
    on two. A name was redacted before it was split, ``token=…`` hidden with all that followed
    it: ``raw/token=eth/transfers`` and ``raw/device_token=ios/sessions`` were one entity
    ``raw``, ``public.secret=1`` and ``public.secret=2`` one (a probe of names real warehouses
    allow). A ``token=`` segment of a key is a partition, a table's name is a name; a secret
    parameter (``orders?sig=…``) is still hidden."""
    events = [
        run_event(
            "spark.ingest",
            namespace="spark",
            inputs=[
                dataset("raw/token=eth/transfers/part-0.parquet", "s3://lake"),
                dataset("raw/device_token=ios/sessions/part-0.parquet", "s3://lake"),
                dataset("db.public.secret=1", "postgres://db:5432"),
                dataset("db.public.secret=2", "postgres://db:5432"),
            ],
            outputs=[dataset("db.public.orders?sig=Hunter2x9", "postgres://db:5432")],
        )
    ]
    plan = build(events, definition(policy("s3://*"), policy("postgres://*")))
    assert {(schema, name) for _, schema, name in entities(plan)} == {
        ("raw/token=eth", "transfers"),
        ("raw/device_token=ios", "sessions"),
        ("public", "secret=1"),
        ("public", "secret=2"),
        ("public", "orders?sig=***"),
    }


def test_a_path_namespace_with_its_own_policy_keeps_it_whichever_came_first() -> None:
    """Of the bucket, a person's stamp or mapping only: the System a policy made for the bucket
    took the path's datasets when the bucket came first, and its own policy's when it did not
    (a review)."""
    job = definition(policy("s3://lake/curated*", nameTemplate="Curated zone"), policy("s3://*"))
    bucket = [run_event("raw", outputs=[dataset("raw/x", "s3://lake")])]
    path = [run_event("curate", outputs=[dataset("totals", "s3://lake/curated")])]
    fresh = build([*bucket, *path], job)
    later = build(path, job, created_as_known(build(bucket, job)))
    assert ("Curated zone", "curated", "totals") in entities(fresh)
    assert entities(later) == {("Curated zone", "curated", "totals")}
