"""Errors raised by the Blindata client.

Like httpx's, the hierarchy has base classes to catch and leaves that carry context: under
``BlindataError``, ``BlindataConfigError`` (set up wrongly), ``BlindataRequestError`` (no usable
answer; ``BlindataDeadlineError`` with ``last_error`` when retries gave up at the deadline,
``BlindataUnsentError`` when the request could not be written at all),
``BlindataStatusError`` (``status``, ``body``; one leaf per status, 400, 401, 403, 404, 409,
429 with ``retry_after``, 5xx) and ``BlindataContractError`` (an answer off the contract;
``incomplete`` when cut short). Messages name the operation (method and path) and the server's
own message, never a header, a credential or a token: they end up in task logs and run reports.

The tree: docs/connection.md#the-hierarchy-blindataerrorspy
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from airflow_blindata.blindata.models import ErrorBody

__all__ = [
    "BlindataAuthError",
    "BlindataConfigError",
    "BlindataConflictError",
    "BlindataContractError",
    "BlindataDeadlineError",
    "BlindataError",
    "BlindataNotFoundError",
    "BlindataPermissionError",
    "BlindataRateLimitError",
    "BlindataRequestError",
    "BlindataServerError",
    "BlindataStatusError",
    "BlindataUnsentError",
    "BlindataValidationError",
]


class BlindataError(Exception):
    """Base class of every error of the Blindata client."""


class BlindataConfigError(BlindataError):
    """The client cannot be built from the given settings."""


class BlindataRequestError(BlindataError):
    """A request got no usable answer (network failure of any kind)."""

    def __init__(self, message: str, *, operation: str) -> None:
        super().__init__(message)
        self.operation = operation


class BlindataUnsentError(BlindataRequestError):
    """The request could not be written (a header value with a line break, a blank around it):
    nothing left the worker, no server was asked, and trying again fails the same way. Not a
    network failure: what the client was given cannot go in an HTTP request."""


class BlindataDeadlineError(BlindataRequestError):
    """Retries stopped at the total deadline; ``last_error`` is the last failure."""

    def __init__(
        self, message: str, *, operation: str, attempts: int, last_error: BlindataError
    ) -> None:
        super().__init__(message, operation=operation)
        self.attempts = attempts
        self.last_error = last_error


class BlindataStatusError(BlindataError):
    """An error status; ``body`` is the Spring error body, if the server sent one."""

    def __init__(
        self,
        message: str,
        *,
        operation: str,
        status: int,
        body: ErrorBody | None = None,
        retry_after: float | None = None,
        location: str | None = None,
    ) -> None:
        super().__init__(message)
        self.operation = operation
        self.status = status
        self.body = body
        self.retry_after = retry_after
        self.location = location
        """Where a redirect (3xx) leads, absolute, credentials shown as ``***``: the client
        follows none, so the URL to give is this one's."""

    @property
    def server_message(self) -> str | None:
        """The ``message`` of the error body, when the server sent one."""
        return self.body.message if self.body else None

    @property
    def too_large(self) -> bool:
        """413 Content Too Large: the request's body is over what the server (or the proxy in
        front of it) accepts; the same rows sent in smaller requests may pass."""
        return self.status == 413


class BlindataValidationError(BlindataStatusError):
    """400: the server refused the request as invalid."""


class BlindataAuthError(BlindataStatusError):
    """401: no credentials, wrong credentials, or an expired token."""


class BlindataPermissionError(BlindataStatusError):
    """403: the user lacks a permission, or may not use the requested tenant."""


class BlindataNotFoundError(BlindataStatusError):
    """404: no object with that id, or no such path on this Blindata version."""


class BlindataConflictError(BlindataStatusError):
    """409: an object with the same natural key already exists."""


class BlindataRateLimitError(BlindataStatusError):
    """429: too many requests; ``retry_after`` is the server's advice in seconds."""


class BlindataServerError(BlindataStatusError):
    """5xx: the server (or a proxy in front of it) failed."""


class BlindataContractError(BlindataError):
    """The server's answer does not follow the contract in ``blindata-api.md``.

    ``incomplete``: the answer was JSON cut short (a truncated body), not a wrong answer; the
    client sends an idempotent request again, as after a dropped connection.
    """

    def __init__(
        self, message: str, *, operation: str, status: int | None = None, incomplete: bool = False
    ) -> None:
        super().__init__(message)
        self.operation = operation
        self.status = status
        self.incomplete = incomplete


STATUS_ERRORS: dict[int, type[BlindataStatusError]] = {
    400: BlindataValidationError,
    401: BlindataAuthError,
    403: BlindataPermissionError,
    404: BlindataNotFoundError,
    409: BlindataConflictError,
    429: BlindataRateLimitError,
}


def status_error_class(status: int) -> type[BlindataStatusError]:
    """The exception class for an HTTP error status."""
    if status >= 500:
        return BlindataServerError
    return STATUS_ERRORS.get(status, BlindataStatusError)
