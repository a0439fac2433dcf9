"""The facets of the Airflow OpenLineage provider (``plugins/facets.py``, provider 2.x).

They carry generic schema URLs (``OpenLineage.json#/$defs/RunFacet``), so they are recognised by
key only. The ``airflow`` job facet of a DAG run holds the task graph: each task's
``downstream_task_ids`` gives the task to task orchestration flows of seed 001;
``unknownSourceAttribute`` names operators without lineage extraction (``PRODUCER_NO_LINEAGE``).
The provider's info dicts (dag, dagRun, task, taskInstance) are kept as sent.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .base import BaseFacet, WireModel

__all__ = [
    "AirflowDagRunFacet",
    "AirflowJobFacet",
    "AirflowMappedTaskRunFacet",
    "AirflowRunFacet",
    "AirflowStateRunFacet",
    "AirflowTask",
    "UnknownOperatorAttributeRunFacet",
    "UnknownOperatorInstance",
]


class AirflowTask(WireModel):
    """One task of the DAG's task graph (provider ``_get_tasks_details``)."""

    operator: str | None = None
    task_group: str | None = Field(default=None, alias="task_group")
    emits_ol_events: bool | None = Field(default=None, alias="emits_ol_events")
    downstream_task_ids: list[str] = Field(default_factory=list, alias="downstream_task_ids")


class AirflowJobFacet(BaseFacet):
    """The DAG's structure, sent with the DAG run's START event."""

    KEY = "airflow"

    task_tree: dict[str, Any] = Field(default_factory=dict)
    task_groups: dict[str, Any] = Field(default_factory=dict)
    tasks: dict[str, AirflowTask] = Field(default_factory=dict)


class AirflowRunFacet(BaseFacet):
    """A task run: the DAG, DAG run, task and task instance as the provider encodes them."""

    KEY = "airflow"

    dag: dict[str, Any] = Field(default_factory=dict)
    dag_run: dict[str, Any] = Field(default_factory=dict)
    task: dict[str, Any] = Field(default_factory=dict)
    task_instance: dict[str, Any] = Field(default_factory=dict)
    task_uuid: str | None = None


class AirflowDagRunFacet(BaseFacet):
    KEY = "airflowDagRun"

    dag: dict[str, Any] = Field(default_factory=dict)
    dag_run: dict[str, Any] = Field(default_factory=dict)


class AirflowStateRunFacet(BaseFacet):
    """Sent with the DAG run's terminal event: the final state of the run and of each task."""

    KEY = "airflowState"

    dag_run_state: str
    tasks_state: dict[str, str | None] = Field(default_factory=dict)
    tasks_duration: dict[str, float] = Field(default_factory=dict)


class AirflowMappedTaskRunFacet(BaseFacet):
    KEY = "airflow_mappedTask"

    map_index: int
    operator_class: str


class UnknownOperatorInstance(WireModel):
    name: str
    properties: dict[str, Any] = Field(default_factory=dict)
    type: str = "operator"


class UnknownOperatorAttributeRunFacet(BaseFacet):
    """Operators the provider has no lineage extractor for."""

    KEY = "unknownSourceAttribute"

    unknown_items: list[UnknownOperatorInstance]
