"""The receiver's ``[blindata]`` options, one small function each (read when called).

``receiver_api_key`` and ``receiver_conn_id`` are read by ``receiver_keys``; ``store_url`` by the
store. A bad value does not stop the API server: it becomes the ``problem`` of the settings, and
the receiver answers every request with 503 and that problem.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEFAULT_MAX_BATCH_EVENTS",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_BYTES_IN_FLIGHT",
    "DEFAULT_STORE_TIMEOUT",
    "ReceiverSettings",
    "receiver_enabled",
    "receiver_settings",
]

_SECTION = "blindata"
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


@dataclass(frozen=True, slots=True)
class ReceiverSettings:
    """The receiver's limits; ``problem`` (a configuration error) makes it refuse everything.

    ``max_bytes_in_flight``: bytes of request bodies held at once, all requests together (as
    read and decompressed), until each is answered. ``store_timeout``: seconds a request waits
    for the store. ``busy_wait``: seconds a request waits for room among the bodies in flight.
    """

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_batch_events: int = DEFAULT_MAX_BATCH_EVENTS
    max_bytes_in_flight: int = DEFAULT_MAX_BYTES_IN_FLIGHT
    store_timeout: float = DEFAULT_STORE_TIMEOUT
    busy_wait: float = DEFAULT_BUSY_WAIT
    problem: str | None = None


def _positive_int(option: str, default: int) -> tuple[int, str | None]:
    from airflow.configuration import conf

    raw = conf.get(_SECTION, option, fallback=str(default))
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    if value <= 0:
        return default, f"[{_SECTION}] {option} must be a positive integer, not {raw!r}"
    return value, None


def _positive_seconds(option: str, default: float) -> tuple[float, str | None]:
    from airflow.configuration import conf

    raw = conf.get(_SECTION, option, fallback=str(default))
    try:
        value = float(str(raw).strip())
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        return default, f"[{_SECTION}] {option} must be a positive number of seconds, not {raw!r}"
    return value, None


def receiver_settings() -> ReceiverSettings:
    """[blindata] receiver_max_body_bytes, receiver_max_batch_events,
    receiver_max_bytes_in_flight and receiver_store_timeout."""
    body, body_problem = _positive_int("receiver_max_body_bytes", DEFAULT_MAX_BODY_BYTES)
    batch, batch_problem = _positive_int("receiver_max_batch_events", DEFAULT_MAX_BATCH_EVENTS)
    in_flight, in_flight_problem = _positive_int(
        "receiver_max_bytes_in_flight", DEFAULT_MAX_BYTES_IN_FLIGHT
    )
    store_timeout, timeout_problem = _positive_seconds(
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
    from airflow.configuration import conf

    return bool(conf.getboolean(_SECTION, "receiver_enabled", fallback=True))
