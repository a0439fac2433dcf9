"""The fold and what a snapshot keeps of it: from a job's events to its folded runs and datasets.

Four modules, imported one way (nothing of ``core`` imports the others):

* ``core``: the fold itself (``fold``, ``FoldBuilder``, ``extend_folded``, the events' order);
* ``reading`` → ``core``: a job's events read, the superseded ones skimmed (``read_job_events``);
* ``kept`` → ``core``, ``reading``: a folded job as text, kept between snapshots;
* ``slices`` → ``core``, ``reading``: a long history folded a slice of time at a time.

Pure, as the whole mapper: no IO. The names below are ``core``'s, so that
``from airflow_blindata.mapper.fold import FoldBuilder`` reads the fold where it always did.
"""

from airflow_blindata.mapper.fold.core import (
    AS_WRITTEN,
    OPEN_RUNS_HELD,
    DatasetFold,
    DatasetKey,
    DatasetMentions,
    Fold,
    FoldBuilder,
    FoldedJob,
    InputFold,
    JobFold,
    JobKey,
    Mention,
    OutputFold,
    RunFold,
    RunRetainer,
    dag_run_key,
    extend_folded,
    facet_key_of,
    fold,
    fold_jobs,
    job_of,
    layered_facet,
    open_runs,
    order_key,
    run_digest,
    runs_kept_whole,
    whole_run_ids,
)

__all__ = [
    "AS_WRITTEN",
    "OPEN_RUNS_HELD",
    "DatasetFold",
    "DatasetKey",
    "DatasetMentions",
    "Fold",
    "FoldBuilder",
    "FoldedJob",
    "InputFold",
    "JobFold",
    "JobKey",
    "Mention",
    "OutputFold",
    "RunFold",
    "RunRetainer",
    "dag_run_key",
    "extend_folded",
    "facet_key_of",
    "fold",
    "fold_jobs",
    "job_of",
    "layered_facet",
    "open_runs",
    "order_key",
    "run_digest",
    "runs_kept_whole",
    "whole_run_ids",
]
