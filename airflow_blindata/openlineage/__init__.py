"""The transport's first dotted path, kept for deployments that configured it (see ``transport``).

Capture lives in ``airflow_blindata.capture``; nothing else is here.
"""
