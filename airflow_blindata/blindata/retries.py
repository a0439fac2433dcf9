"""Retries of one operation within one deadline (tenacity, as Airflow's http provider uses it).

``RetryPolicy`` says how long an operation may take and how long to wait between tries;
``within_deadline`` runs the tries. A try returns its result, or a ``Failure``
(``exchange.py``): a retryable one is tried again after the server's ``Retry-After`` or an
exponential backoff with jitter, unless the wait would end past the deadline; then the operation
fails with ``BlindataDeadlineError`` naming the last error. A failure that is not retryable is
raised as it is. Why a deadline and not a count: docs/connection.md#retries-and-the-deadline.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import tenacity

from airflow_blindata.blindata.errors import BlindataDeadlineError
from airflow_blindata.blindata.exchange import Failure

__all__ = ["RetryPolicy", "within_deadline"]

log = logging.getLogger(__name__)

ResultT = TypeVar("ResultT")
_MAX_BACKOFF_EXPONENT = 32


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When and how long to retry one operation.

    The ``deadline`` bounds the whole operation, waits and slow answers included: each exchange
    must be complete by it, and the client gives up with ``BlindataDeadlineError`` rather than
    start an attempt it would have to sleep past it for. The deadline is the bound: attempts are
    not counted unless ``max_attempts`` is given, and then the client also gives up after that
    many. The wait before attempt ``n + 1`` is ``Retry-After`` when the server sent one, otherwise
    ``backoff_initial * 2**(n - 1)`` capped at ``backoff_max``, of which the upper half is random
    ("equal jitter"), so that many workers retrying together spread out.
    """

    deadline: float = 120.0
    max_attempts: int | None = None
    backoff_initial: float = 0.5
    backoff_max: float = 30.0

    def backoff(self, attempt: int) -> float:
        exponent = min(attempt - 1, _MAX_BACKOFF_EXPONENT)
        ceiling = min(self.backoff_max, self.backoff_initial * 2.0**exponent)
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def exhausted(self, attempt: int) -> bool:
        """Whether ``attempt`` was the last one ``max_attempts`` allows."""
        return self.max_attempts is not None and attempt >= self.max_attempts

    def wait(self, state: tenacity.RetryCallState) -> float:
        """tenacity's wait: the server's ``Retry-After``, else the backoff."""
        failure = state.outcome.result() if state.outcome is not None else None
        if isinstance(failure, Failure) and failure.retry_after is not None:
            return failure.retry_after
        return self.backoff(state.attempt_number)

    def stop(self) -> tenacity.stop.stop_base:
        """tenacity's stop: before a wait that would end past the deadline (tenacity's
        ``stop_before_delay``), or after ``max_attempts``."""
        stop: tenacity.stop.stop_base = tenacity.stop_before_delay(self.deadline)
        if self.max_attempts is not None:
            stop = stop | tenacity.stop_after_attempt(self.max_attempts)
        return stop


def within_deadline(
    policy: RetryPolicy, operation: str, attempt: Callable[[float], ResultT | Failure]
) -> ResultT:
    """``attempt(deadline)`` until it gives a result, retrying as ``policy`` allows.

    ``deadline`` is the ``time.monotonic()`` value by which the whole operation must be done;
    ``operation`` (``METHOD /path``) names it in the warnings and the errors.
    """
    deadline = time.monotonic() + policy.deadline

    def give_up(state: tenacity.RetryCallState) -> ResultT:
        failure: Failure = state.outcome.result()  # type: ignore[union-attr]
        raise BlindataDeadlineError(
            f"Gave up on {operation} after {state.attempt_number} attempt(s) in "
            f"{state.seconds_since_start or 0.0:.1f} s (deadline {policy.deadline:g} s, "
            f"next wait {state.upcoming_sleep:.1f} s): {failure.error}",
            operation=operation,
            attempts=state.attempt_number,
            last_error=failure.error,
        ) from failure.error

    def announce(state: tenacity.RetryCallState) -> None:
        failure: Failure = state.outcome.result()  # type: ignore[union-attr]
        elapsed = state.seconds_since_start or 0.0
        log.warning(
            "Blindata %s failed (%s); attempt %d%s in %.1f s (%.0f s of %g s left)",
            operation,
            failure.error,
            state.attempt_number + 1,
            f" of {policy.max_attempts}" if policy.max_attempts is not None else "",
            state.upcoming_sleep,
            policy.deadline - elapsed,
            policy.deadline,
        )

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_result(_is_retryable),
        wait=policy.wait,
        stop=policy.stop(),
        before_sleep=announce,
        retry_error_callback=give_up,
    )
    outcome = retrying(attempt, deadline)
    if isinstance(outcome, Failure):
        raise outcome.error
    result: ResultT = outcome
    return result


def _is_retryable(outcome: object) -> bool:
    return isinstance(outcome, Failure) and outcome.retryable
