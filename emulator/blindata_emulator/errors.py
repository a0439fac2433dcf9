"""The Spring Boot error body and the exceptions that produce it.

Every error the emulator returns, whatever its status, has the body
`{"status", "timestamp", "error", "message", "path", "errorName"}`, as a Spring Boot service does,
so that the client's error handling is exercised on the real shape. Messages name the problem and
the fix, and never contain a credential.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

__all__ = ["ApiError", "RowError", "error_body"]

ERROR_NAMES: Mapping[int, str] = {
    400: "BadRequestException",
    401: "UnauthorizedException",
    403: "ForbiddenException",
    404: "NotFoundException",
    405: "MethodNotAllowedException",
    409: "ConflictException",
    413: "PayloadTooLargeException",
    429: "TooManyRequestsException",
    500: "InternalServerErrorException",
    502: "BadGatewayException",
    503: "ServiceUnavailableException",
    504: "GatewayTimeoutException",
}


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def error_body(
    status: int, message: str, path: str, timestamp: str, error_name: str | None = None
) -> dict[str, Any]:
    """The Spring Boot error body."""
    return {
        "status": status,
        "timestamp": timestamp,
        "error": _reason(status),
        "message": message,
        "path": path,
        "errorName": error_name or ERROR_NAMES.get(status, "ApiException"),
    }


class ApiError(Exception):
    """Stops a request with `status` and a Spring error body carrying `message`."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        error_name: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_name = error_name
        self.headers = dict(headers or {})


class RowError(ValueError):
    """One object is invalid: a 400 for a single create, a discarded row in an upload."""
