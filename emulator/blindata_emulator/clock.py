"""Time for the emulator: one clock, the wire date format, and date parsing.

Blindata dates are ISO-8601 UTC with milliseconds (`2026-11-29T10:00:00.000Z`). The clock gives
every API request a stamp (`tick`) strictly later than the previous one, so "every upsert
refreshes `modificationDate`" holds even for two uploads within the same millisecond: a client
that compares dates to tell what it still describes never sees a tie. (Above 1000 requests a
second the stamps run ahead of the wall clock by a little; they never run behind it.) Tests can
`advance` the clock instead of sleeping (token expiry, `modifiedBefore`, the analysis delay).
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

__all__ = ["Clock", "format_instant", "normalize_instant", "parse_instant"]

_MS_PER_SECOND = 1000


def format_instant(seconds: float) -> str:
    """Epoch seconds → `2026-11-29T10:00:00.000Z`."""
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_instant(text: str) -> float:
    """An ISO-8601 date-time → epoch seconds; a date-time without zone is taken as UTC.

    Raises ValueError with the offending text when it is not a date-time.
    """
    try:
        moment = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except (ValueError, AttributeError) as err:
        raise ValueError(f"{text!r} is not an ISO-8601 date-time") from err
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def normalize_instant(text: str) -> str:
    """Any ISO-8601 date-time → the wire form, so that equal instants compare equal as text."""
    return format_instant(parse_instant(text))


class Clock:
    """Wall-clock time plus an offset that tests may advance; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offset = 0.0
        self._last_ms = 0

    def now(self) -> float:
        """Epoch seconds, including the offset."""
        return time.time() + self._offset

    def advance(self, seconds: float) -> None:
        """Move the emulator's time forward (never backward: stamps must keep increasing)."""
        if seconds < 0:
            raise ValueError("the emulator clock only moves forward")
        with self._lock:
            self._offset += seconds

    def stamp(self) -> str:
        """The wire form of now, for messages and logs (may repeat; writes use `tick`)."""
        return format_instant(self.now())

    def tick(self) -> str:
        """A wire stamp strictly later than every stamp given before."""
        with self._lock:
            millis = max(int(self.now() * _MS_PER_SECOND), self._last_ms + 1)
            self._last_ms = millis
        return format_instant(millis / _MS_PER_SECOND)
