"""The mapper: OpenLineage events + a job definition + the known Systems → a catalog plan + gaps.

Pure: no IO, no Airflow, no httpx. Every event is accepted; what cannot be mapped becomes a gap
with a code of the seeds and a count (``report.py``), never an exception.
"""
