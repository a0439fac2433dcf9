"""The ``airflow-blindata`` command line, one module per group of commands.

``main``: the parser, ``plan``, ``ingest``, ``store``, ``check`` and ``emulator``; ``sync``:
``snapshot``, ``cleanup`` and ``report``, the sync DAG's work outside Airflow.
"""

from airflow_blindata.cli.main import main

__all__ = ["main"]
