"""Capture: OpenLineage transport, listener and Airflow plugin of the provider."""
