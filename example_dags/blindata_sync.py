"""The Blindata sync DAG: every hour, catalogue the captured OpenLineage events, then clean up.

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
