"""Reading Blindata's successful answers: a body as a typed model, and a list page by page.

``decode`` reads one answer as a pydantic model, or fails with ``BlindataContractError``;
the error is ``incomplete`` when the JSON was cut short on its way, which the client retries
like a dropped connection. ``walk_pages`` reads every item of a Spring-paged list through a
``fetch`` of one page, in one fixed order, each object once. Neither sends anything itself:
the client (``client.py``) gives them the answers of its exchanges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from airflow_blindata.blindata.errors import BlindataContractError, BlindataValidationError
from airflow_blindata.blindata.exchange import snippet
from airflow_blindata.blindata.models import Page

__all__ = ["DEFAULT_PAGE_SIZE", "LIST_ORDER", "as_is", "decode", "walk_pages"]

DEFAULT_PAGE_SIZE = 500
"""Items per page when listing; the contract caps pages at 1000."""
LIST_ORDER = "uuid,ASC"
"""The ``sort`` of every listing: the contract's ``sort=prop,ASC|DESC`` on the one property every
stored object has, and that never changes."""

ModelT = TypeVar("ModelT", bound=BaseModel)


def _unchanged(text: str) -> str:
    return text


def as_is(response: httpx.Response, operation: str) -> httpx.Response:
    """The answer itself, for callers that read it their own way."""
    return response


def decode(
    response: httpx.Response,
    model: type[ModelT],
    operation: str,
    scrub: Callable[[str], str] = _unchanged,
    *,
    empty: Callable[[httpx.Response], ModelT] | None = None,
    unnamed: Callable[[httpx.Response, Any], ModelT] | None = None,
) -> ModelT:
    """Read a successful answer as ``model``, or fail with ``BlindataContractError``.

    ``unnamed`` gives the result, from the response and its JSON, when the answer does not
    read as ``model`` and the contract names no body for it (a create's ``201``): another
    server may answer with a summary (``{"uuid": …}``) where the emulator gives the object.

    An answer with no body at all (``204``, or ``200`` without content) is complete: it is
    ``empty()`` when the caller knows what it means (a PUT that stored what it was sent), else a
    contract error that is not retried. A body announced as JSON (or not announced at all) that
    does not parse was cut short on its way: the error is ``incomplete``, and the client asks
    again when that is safe. Any other body (an HTML page) is the answer of something that is
    not Blindata: asking again would not help.
    """
    if response.status_code == 204 or not response.content.strip():
        if empty is not None:
            return empty(response)
        raise BlindataContractError(
            f"{operation} answered {response.status_code} with no body, where "
            f"a {model.__name__} was expected",
            operation=operation,
            status=response.status_code,
        )
    try:
        data = response.json()
    except ValueError:
        content_type = response.headers.get("content-type", "")
        raise BlindataContractError(
            f"{operation} answered {response.status_code} with a body that is not valid JSON "
            f"({content_type or 'no content type'}, {len(response.content)} bytes): "
            f"{snippet(response, scrub)!r}",
            operation=operation,
            status=response.status_code,
            incomplete=not content_type or "json" in content_type.lower(),
        ) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        if unnamed is not None:
            return unnamed(response, data)
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(body)"
        raise BlindataContractError(
            f"{operation} answered JSON that is not a {model.__name__}: {where}: {first['msg']} "
            f"({exc.error_count()} error(s))",
            operation=operation,
            status=response.status_code,
        ) from None


def walk_pages(
    fetch: Callable[[Mapping[str, Any]], Page[ModelT]],
    operation: str,
    *,
    params: Mapping[str, Any] | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    order: str | None = LIST_ORDER,
    refused: Callable[[], None] | None = None,
) -> Iterator[ModelT]:
    """Every item of a list, fetching one Spring page (``fetch(query)``) after the other.

    The pages are asked in one order (``order``, unless ``params`` names a ``sort``):
    a server reading its database without one (Spring passes no ``ORDER BY`` then) may serve
    each page from a differently ordered scan, and a walk of the pages would skip some
    objects and repeat others; a cleanup that missed a flow ending on a table would remove
    the table. An object created while the pages are walked may still push one already seen
    onto the next page: it is given once.

    Two pages in a row with nothing new end the walk with ``BlindataContractError`` naming
    ``operation``: the server answers the same page whatever ``page`` says, and the walk would
    never end (one page comes twice from a server that counts pages from 1, then the walk goes
    on).

    A walk that gave fewer objects than its last page's ``totalElements`` (a page served short
    or empty by a server under load, a search index behind its database) is walked once more,
    giving the objects it had missed: a sync that missed an object it looked for created it
    again (a second SQL statement, a crawler's field retyped), or took the flows of a job still
    described for gone. A server whose count stays above what it lists (one that counts what it
    does not show) is believed after that second walk.

    A server that refuses the order (a 400 to the first page that names the sort, an order, a
    property or ``uuid``, or gives no reason: ``_refuses_order``; the contract verifies the
    syntax of ``sort``, not that ``uuid`` is a property every server sorts by) is walked in its
    own order, and
    ``refused()`` told (the client asks no order of it again): every listing failed there, and
    a snapshot wrote nothing below the Systems."""
    asked = {"sort": order, **(params or {})} if order else dict(params or {})
    ordered_by_us = bool(order) and "sort" not in (params or {})
    given: set[str] = set()
    for walk in range(2):
        number, repeats, walked, named = 0, 0, set[str](), True
        while True:
            try:
                page = fetch({**asked, "page": number, "size": page_size})
            except BlindataValidationError as exc:
                if number or walk or not ordered_by_us or not _refuses_order(exc):
                    raise
                asked.pop("sort")
                page = fetch({**asked, "page": number, "size": page_size})
                if refused is not None:
                    refused()
            fresh = 0
            for item in page.content:
                uuid = getattr(item, "uuid", None)
                if not isinstance(uuid, str):
                    named = False  # cannot be told from another: given by the first walk only
                    if not walk:
                        fresh += 1
                        yield item
                    continue
                if uuid in walked:
                    continue
                walked.add(uuid)
                fresh += 1
                if uuid not in given:
                    given.add(uuid)
                    yield item
            if page.is_last(number):
                break
            repeats = repeats + 1 if not fresh else 0
            if repeats == 2:
                raise BlindataContractError(
                    f"{operation} answered the same items for pages {number - 1} "
                    f"and {number} as before them: the server does not read the page parameter",
                    operation=operation,
                )
            number += 1
        total = page.total_elements
        if not named or total is None or len(walked) >= total:
            return


_ORDER_WORDS = ("sort", "order", "propert", "uuid")


def _refuses_order(error: BlindataValidationError) -> bool:
    """Whether a 400 may be the order refused: it says so (Spring's ``No property 'uuid' found
    for type …``, a sort parameter named invalid), or it says nothing of why (Spring Boot hides
    the message by default, ``server.error.include-message=never``: a body with none, or
    only its reason, ``Bad Request``; a review). A 400 that says another reason (a filter
    refused, a fault) is the error it is, not tried again without the order."""
    body = error.body
    if body is None:
        return True
    message = (body.message or "").strip()
    if (
        not message
        or message.lower() == (body.error or "").strip().lower()
        or (message.lower() == "bad request")
    ):
        return True
    said = " ".join(str(part) for part in (message, body.error, body.error_name) if part)
    return any(word in said.lower() for word in _ORDER_WORDS)
