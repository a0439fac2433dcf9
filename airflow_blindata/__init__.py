"""airflow-blindata: catalogue OpenLineage lineage in Blindata from Apache Airflow.

The package is organised in rooms (see ``docs/architecture.md``); imports go one way:
``capture`` (and ``receiver``) → ``store`` → ``mapper`` → ``sync`` → Blindata (``blindata``).
"""

__version__ = "0.1.0"
