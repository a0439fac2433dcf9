"""airflow-blindata: catalogue OpenLineage lineage in Blindata from Apache Airflow.

The package is organised in rooms (see ``docs/architecture.md``). Events flow ``capture`` (and
``receiver``) → ``store`` → ``sync`` → Blindata (``blindata``), the sync handing what it reads to
the pure ``mapper``; which room may import which is the table ``tests/test_architecture.py`` holds.
"""

__version__ = "0.1.0"
