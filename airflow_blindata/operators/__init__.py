"""Airflow operators of the Blindata provider: the snapshot and cleanup of the sync DAG."""

from airflow_blindata.operators.blindata import BlindataCleanupOperator, BlindataSnapshotOperator

__all__ = ["BlindataCleanupOperator", "BlindataSnapshotOperator"]
