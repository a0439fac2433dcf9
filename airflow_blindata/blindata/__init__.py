"""The Blindata REST client (``blindata-api.md``): httpx, auth, tenant, retries, typed models.

Typical use::

    from airflow_blindata.blindata import ApiKeyCredentials, BlindataClient

    with BlindataClient(
        "https://app.blindata.io",
        credentials=ApiKeyCredentials("etl-user", api_key),
        tenant="6b1f...",
    ) as client:
        for system in client.api.systems.list(name="DWH Redshift"):
            ...
"""

from airflow_blindata.blindata.client import (
    DEFAULT_PAGE_SIZE,
    DEFAULT_TIMEOUT,
    DEFAULT_UPLOAD_BATCH_SIZE,
    BlindataClient,
    RetryPolicy,
    RowError,
    UploadReport,
)
from airflow_blindata.blindata.credentials import (
    ApiKeyCredentials,
    BearerToken,
    Credentials,
    LoginCredentials,
)
from airflow_blindata.blindata.errors import (
    BlindataAuthError,
    BlindataConfigError,
    BlindataConflictError,
    BlindataContractError,
    BlindataDeadlineError,
    BlindataError,
    BlindataNotFoundError,
    BlindataPermissionError,
    BlindataRateLimitError,
    BlindataRequestError,
    BlindataServerError,
    BlindataStatusError,
    BlindataUnsentError,
    BlindataValidationError,
)
from airflow_blindata.blindata.paths import ENDPOINTS, Endpoint, Evidence

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "DEFAULT_TIMEOUT",
    "DEFAULT_UPLOAD_BATCH_SIZE",
    "ENDPOINTS",
    "ApiKeyCredentials",
    "BearerToken",
    "BlindataAuthError",
    "BlindataClient",
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
    "Credentials",
    "Endpoint",
    "Evidence",
    "LoginCredentials",
    "RetryPolicy",
    "RowError",
    "UploadReport",
]
