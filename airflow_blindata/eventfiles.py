"""Reading OpenLineage events from files: one JSON event, a JSON array, or JSON lines.

This is the format of the OpenLineage ``FileTransport`` and of events exported from Marquez. The
reader never judges an event: a line that is not JSON is passed on as its text, so that the
mapper reports it (``UNREADABLE_EVENT``) and the store quarantines it, instead of the whole file
failing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["read_event_file", "read_line"]


def read_event_file(path: str | Path) -> Iterator[Any]:
    """The raw events of one file: decoded JSON values, or the text of lines that are not JSON."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    stripped = text.strip()
    if not stripped:
        return
    try:
        whole = json.loads(stripped)
    except ValueError:
        whole = None
    else:
        if isinstance(whole, list):
            yield from whole
        else:
            yield whole
        return
    for line in text.splitlines():
        if line.strip():
            yield read_line(line)


def read_line(line: str) -> Any:
    """One line of a JSON lines file: its JSON value, or its text when it is not JSON."""
    try:
        return json.loads(line)
    except ValueError:
        return line.rstrip("\r\n")
