"""The operator extra link "View in Blindata": from a task in the Airflow UI to its job entity.

A global operator extra link of the plugin (``global_operator_extra_links``): Airflow 3 asks the
API server for it on a task instance's page (the serialized task's ``get_extra_links``), never
the worker. A task whose job the store holds from Airflow's capture gets the link to its job
entity in Blindata (``links.job_link``); any other task gets none, and the UI shows no button.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk.bases.operatorlink import BaseOperatorLink

from .links import job_link

if TYPE_CHECKING:
    from airflow.sdk.types import TaskInstanceKey

__all__ = ["LINK_NAME", "ViewInBlindata"]

LINK_NAME = "View in Blindata"


class ViewInBlindata(BaseOperatorLink):
    """The link to the task's job entity in Blindata, or none."""

    name = LINK_NAME

    def get_link(self, operator: Any, *, ti_key: TaskInstanceKey) -> str:
        return job_link(ti_key.dag_id, ti_key.task_id) or ""
