"""The receiver's limits, from its ``[blindata]`` options (read by ``airflow_blindata.options``).

``receiver_api_key`` and ``receiver_conn_id`` are used by ``keys``; ``store_url`` by the
store. A bad value does not stop the API server: it becomes the ``problem`` of the settings, and
the receiver answers every request with 503 and that problem.
"""

from __future__ import annotations

from dataclasses import dataclass

from airflow_blindata.options import flag, positive_int, positive_seconds

__all__ = [
    "DEFAULT_BODY_IDLE_TIMEOUT",
    "DEFAULT_MAX_BATCH_EVENTS",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_BYTES_IN_FLIGHT",
    "DEFAULT_STORE_TIMEOUT",
    "ReceiverSettings",
    "receiver_enabled",
    "receiver_settings",
]

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
"""Spark events with schema and column-lineage facets reach a few MB; 16 MiB leaves room."""
DEFAULT_MAX_BATCH_EVENTS = 1000
DEFAULT_MAX_BYTES_IN_FLIGHT = 64 * 1024 * 1024
"""Four bodies of the largest size at once; more wait for their turn, briefly, or get a 503."""
DEFAULT_STORE_TIMEOUT = 4.0
"""Seconds a request waits for the event store before a 503: below the 5 s the producers'
examples give their ``http`` transports, above the stores' own 3 s bound on one append."""
DEFAULT_BUSY_WAIT = 1.0
"""Seconds a request waits for room among the bodies in flight before a 503."""
DEFAULT_BODY_IDLE_TIMEOUT = 30.0
"""Seconds a request body may go without a byte before a 408. The producers' own timeouts are a
few seconds, so only a producer gone for good (a half-open connection) or a hostile one waits
this long, holding its share of ``receiver_max_bytes_in_flight`` meanwhile."""


@dataclass(frozen=True, slots=True)
class ReceiverSettings:
    """The receiver's limits; ``problem`` (a configuration error) makes it refuse everything.

    ``max_bytes_in_flight``: bytes of request bodies held at once, all requests together (as
    read and decompressed), until each is answered. ``store_timeout``: seconds a request waits
    for the store. ``busy_wait``: seconds a request waits for room among the bodies in flight.
    ``body_idle_timeout``: seconds a body may go without a byte before the request is dropped.
    """

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_batch_events: int = DEFAULT_MAX_BATCH_EVENTS
    max_bytes_in_flight: int = DEFAULT_MAX_BYTES_IN_FLIGHT
    store_timeout: float = DEFAULT_STORE_TIMEOUT
    busy_wait: float = DEFAULT_BUSY_WAIT
    body_idle_timeout: float = DEFAULT_BODY_IDLE_TIMEOUT
    problem: str | None = None


def receiver_settings() -> ReceiverSettings:
    """[blindata] receiver_max_body_bytes, receiver_max_batch_events,
    receiver_max_bytes_in_flight and receiver_store_timeout."""
    body, body_problem = positive_int("receiver_max_body_bytes", DEFAULT_MAX_BODY_BYTES)
    batch, batch_problem = positive_int("receiver_max_batch_events", DEFAULT_MAX_BATCH_EVENTS)
    in_flight, in_flight_problem = positive_int(
        "receiver_max_bytes_in_flight", DEFAULT_MAX_BYTES_IN_FLIGHT
    )
    store_timeout, timeout_problem = positive_seconds(
        "receiver_store_timeout", DEFAULT_STORE_TIMEOUT
    )
    return ReceiverSettings(
        max_body_bytes=body,
        max_batch_events=batch,
        max_bytes_in_flight=in_flight,
        store_timeout=store_timeout,
        problem=body_problem or batch_problem or in_flight_problem or timeout_problem,
    )


def receiver_enabled() -> bool:
    """[blindata] receiver_enabled."""
    return flag("receiver_enabled")
