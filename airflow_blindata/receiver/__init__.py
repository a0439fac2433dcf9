"""The OpenLineage receiver: an HTTP endpoint in the Airflow API server for producers outside
Airflow (``app``), with its keys, body limits and settings."""
