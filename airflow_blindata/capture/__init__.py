"""Capture: the OpenLineage transport and listener that write every event to the event store."""
