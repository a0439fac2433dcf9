"""Progress of a long run: phase and done/total, passed to a callback at most every few seconds.

A snapshot of a large catalog runs for minutes; the task log must show that it advances (and where
it is when something is slow) without a line per object. ``Progress`` calls its callback when a
phase starts, when it ends, and in between whenever ``interval`` seconds have passed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["DEFAULT_PROGRESS_INTERVAL", "Progress", "ProgressCallback", "as_progress"]

ProgressCallback = Callable[[str, int, int | None], None]
"""``callback(phase, done, total)``; ``total`` is ``None`` while a phase's total is not known
(a listing read page by page): ``done`` counts what it read so far."""

DEFAULT_PROGRESS_INTERVAL = 5.0
"""Seconds between two progress lines within a phase."""


class Progress:
    """Counts work in phases and reports it through ``callback`` (which may be ``None``)."""

    def __init__(
        self,
        callback: ProgressCallback | None = None,
        *,
        interval: float = DEFAULT_PROGRESS_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(interval, bool) or not isinstance(interval, int | float) or not interval >= 0:
            # a "5" failed at the first step, mid-sync, with Python's words (a probe)
            raise ValueError(f"interval must be a number of seconds, got {interval!r}")
        self._callback = callback
        self._interval = interval
        self._clock = clock
        self._phase = ""
        self._done = 0
        self._total: int | None = 0
        self._last = 0.0

    def start(self, phase: str, total: int | None) -> None:
        """A phase of ``total`` steps; ``None``: not known until it ends (see ``end``)."""
        self._phase, self._done, self._total = phase, 0, total
        self._emit()

    def advance(self, amount: int = 1) -> None:
        """Count ``amount`` more done; ``advance(0)`` only says the phase is alive."""
        self._done += amount
        if self._clock() - self._last >= self._interval:
            self._emit()

    def end(self, total: int | None = None) -> None:
        """The phase is over: ``total`` (when given) is what it came to, done and total both;
        a phase whose total was not known comes to what it counted."""
        if total is not None:
            self._done = self._total = total
        elif self._total is None:
            self._total = self._done
        else:
            self._done = max(self._done, self._total)
        self._emit()

    def _emit(self) -> None:
        self._last = self._clock()
        if self._callback is not None:
            self._callback(self._phase, self._done, self._total)


def as_progress(progress: Progress | ProgressCallback | None) -> Progress:
    """A ``Progress``, whether given one, a bare callback, or nothing."""
    return progress if isinstance(progress, Progress) else Progress(progress)
