"""The Blindata sync DAGs: every hour, catalogue the captured OpenLineage events, then clean up;
every five minutes, publish the jobs that ran since (the light sync).

Copy this file and ``blindata_sync.yaml`` (the job definition, read from next to this file) into
your DAGs folder. The tasks use the BLINDATA connection ``blindata_default`` and the event store
configured for the provider (``[blindata] store_url``; by default
``$AIRFLOW_HOME/blindata/events.db``). Nothing is read when the file is parsed: the DAG imports
without a connection.

* ``snapshot`` maps every stored event and brings Blindata in line (creates, refreshes, reports);
  it retries, since Blindata being briefly away is no reason to wait an hour.
* ``cleanup`` removes what this definition owns and the snapshot no longer described. It never
  retries: when a fail-safe refuses it (more than ``cleanup.maxRemovalShare`` of what it owns),
  someone should look at its report, then trigger the DAG with ``force``.

Trigger parameters: ``dry_run`` (the cleanup only reports), ``force`` (lift the share limit).
``max_active_runs=1``: two syncs of one definition must never overlap.

``blindata_light_sync`` runs ``light_sync`` every ``LIGHT_INTERVAL``: the snapshot operator's light
mode publishes only the jobs that received events since the last sync (their entities, fields,
routines, flows, quality results), removes nothing, and is skipped at once when nothing is new.
Lineage is in Blindata at most ``LIGHT_INTERVAL`` plus one light sync after a task ends. A
light sync and the hourly snapshot or cleanup never run at once: they take the definition's
lock in the event store (the light sync is skipped while the hourly sync holds it, and the
hourly sync waits for a light one to end). See docs/operators.md, "The light sync".

The provider's capture leaves this DAG's events out by itself: the sync is not lineage to
catalogue (docs/operators.md, "The sync is not captured").
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pendulum
from airflow.sdk import DAG, Param

from airflow_blindata.operators import BlindataCleanupOperator, BlindataSnapshotOperator

DEFINITION = str(Path(__file__).with_name("blindata_sync.yaml"))
LIGHT_INTERVAL = timedelta(minutes=5)

with DAG(
    dag_id="blindata_sync",
    description="Catalogue captured OpenLineage events in Blindata, then remove what is gone",
    schedule="@hourly",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    dagrun_timeout=timedelta(hours=1),
    default_args={"retries": 2, "retry_delay": timedelta(minutes=5)},
    params={
        "dry_run": Param(False, type="boolean", description="Cleanup reports, removes nothing"),
        "force": Param(False, type="boolean", description="Cleanup may exceed maxRemovalShare"),
    },
    tags=["blindata", "openlineage"],
) as dag:
    snapshot = BlindataSnapshotOperator(task_id="snapshot", definition=DEFINITION)
    cleanup = BlindataCleanupOperator(
        task_id="cleanup",
        definition=DEFINITION,
        dry_run="{{ params.dry_run }}",
        force="{{ params.force }}",
        retries=0,
    )
    snapshot >> cleanup

with DAG(
    dag_id="blindata_light_sync",
    description="Publish in Blindata the OpenLineage jobs that ran since the last sync",
    schedule=LIGHT_INTERVAL,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    dagrun_timeout=timedelta(minutes=30),
    tags=["blindata", "openlineage"],
) as light_dag:
    # No retries: the next run, LIGHT_INTERVAL later, publishes what this one could not.
    BlindataSnapshotOperator(task_id="light_sync", definition=DEFINITION, light=True, retries=0)
