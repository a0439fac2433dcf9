"""The memory of requests in flight: one budget of body bytes, shared by every request.

``receiver_max_body_bytes`` bounds one request; without more, a hundred producers sending large
batches at once would make the API server hold a hundred bodies, and the events parsed from them,
at the same time. So each request takes a share of one budget, ``receiver_max_bytes_in_flight``,
before it keeps any byte of its body: the declared ``Content-Length`` before reading, then each
chunk beyond it, then each piece that gzip inflates (the compressed body and the inflated one are
held together for a moment). It keeps its share until it is answered, since the events parsed
from the body live that long, and gives it back whole.

When the budget is spent, a request waits up to ``busy_wait`` seconds for others to give theirs
back, then is refused with a 503 and ``Retry-After`` (``BudgetSpentError``), having read no more
of its body. A request alone may go past the budget (a budget smaller than a large gzip body,
inflated): one at a time, it always gets through.

The budget lives in the API server's event loop: requests take and give back shares there, never
from threads, so it needs no lock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from time import monotonic

import anyio

__all__ = ["BodyBudget", "BudgetSpentError", "Share"]


class BudgetSpentError(Exception):
    """No room for this request's body among the bodies in flight, within the wait."""


class Share:
    """One request's part of the budget: ``held`` bytes, grown by ``grow_to``."""

    def __init__(self, budget: BodyBudget) -> None:
        self._budget = budget
        self.held = 0

    async def grow_to(self, total: int) -> None:
        """Hold ``total`` bytes (no less than now), waiting for room up to the budget's wait."""
        await self._budget._grow(self, total)

    def shrink_to(self, total: int) -> None:
        """Hold only ``total`` bytes (the rest of the body was let go)."""
        self._budget._shrink(self, total)


class BodyBudget:
    """``limit`` bytes of request bodies held at once; ``wait`` seconds to wait for room."""

    def __init__(self, limit: int, wait: float) -> None:
        self.limit = limit
        self.wait = wait
        self.in_use = 0
        self._waiters: list[anyio.Event] = []

    @asynccontextmanager
    async def share(self) -> AsyncIterator[Share]:
        """A share for one request, given back whole when the block ends."""
        share = Share(self)
        try:
            yield share
        finally:
            self._shrink(share, 0)

    def _fits(self, share: Share, more: int) -> bool:
        return self.in_use + more <= self.limit or self.in_use == share.held

    async def _grow(self, share: Share, total: int) -> None:
        more = total - share.held
        if more <= 0:
            return
        deadline = monotonic() + self.wait
        while not self._fits(share, more):
            left = deadline - monotonic()
            if left <= 0:
                raise BudgetSpentError(
                    f"the bodies of requests in flight fill the receiver's "
                    f"{self.limit:,} bytes ([blindata] receiver_max_bytes_in_flight)"
                )
            changed = anyio.Event()
            self._waiters.append(changed)
            with anyio.move_on_after(left):
                await changed.wait()
        self.in_use += more
        share.held = total

    def _shrink(self, share: Share, total: int) -> None:
        if total >= share.held:
            return
        self.in_use -= share.held - total
        share.held = total
        waiters, self._waiters = self._waiters, []
        for changed in waiters:
            changed.set()
