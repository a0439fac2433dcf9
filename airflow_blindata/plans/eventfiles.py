"""Reading OpenLineage events from files: one JSON event, a JSON array, or JSON lines.

This is the format of the OpenLineage ``FileTransport`` and of events exported from Marquez. The
reader never judges an event, and one bad event never sinks its file: a line (or an element of
an array) that is not JSON, or nested too deeply to decode, is passed on as its text, and one
that is not UTF-8 as its bytes, unaltered, so that the mapper reports it (``UNREADABLE_EVENT``)
and the store quarantines it with the reason, while the other events of the file are read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from airflow_blindata.events import json_array_items

__all__ = ["BOM", "read_event_file", "read_line"]


def read_event_file(path: str | Path) -> Iterator[Any]:
    """The raw events of one file: decoded JSON values, the text of lines or elements that are
    not JSON, or the bytes of those that are not UTF-8 text.

    A JSON lines file (its first line that is not blank is a JSON object on its own) is read a
    line at a time: its memory is a line's, whatever its size. Any other file is read whole."""
    with Path(path).open("rb") as handle:
        # a UTF-8 byte order mark (Windows tools write one) is no part of the first event
        start = len(BOM) if handle.read(len(BOM)) == BOM else 0
        handle.seek(start)
        if _first_line_an_object(handle):
            handle.seek(start)
            for chunk in handle:
                for line in chunk.splitlines():  # as ``bytes.splitlines`` cuts the whole file
                    if line.strip():
                        yield read_line(line)
            return
    data = Path(path).read_bytes()[start:]
    if not data.strip():
        return
    try:
        whole: Any = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        pass
    else:
        if isinstance(whole, list):
            yield from whole
        else:
            yield whole
        return
    # Not one readable document: an array read element by element, one event that is not UTF-8
    # (kept whole, even indented over many lines), else JSON lines.
    text = data.decode("utf-8", "surrogateescape")  # each byte that is not UTF-8 kept apart
    items = json_array_items(text)
    if items is not None:
        for item in items:
            yield read_line(item.encode("utf-8", "surrogateescape"))
        return
    if _one_document(text):
        yield data.strip()
        return
    for line in data.splitlines():
        if line.strip():
            yield read_line(line)


BOM = b"\xef\xbb\xbf"
"""A UTF-8 byte order mark, which Windows tools write before a text file's first line."""


def _first_line_an_object(handle: IO[bytes]) -> bool:
    """Whether the first line that is not blank (as ``bytes.splitlines`` cuts the file) is read
    by ``read_line`` as a JSON object. The file is then JSON lines, or one object on one line
    (with nothing but blanks after it): read line by line, either gives what a reading of the
    whole file gives."""
    for chunk in handle:
        for line in chunk.splitlines():
            if line.strip():
                return isinstance(read_line(line), dict)
    return False


def _one_document(text: str) -> bool:
    """Whether ``text`` (a file not UTF-8, decoded with ``surrogateescape``) is one JSON value:
    its bytes that are not UTF-8 are then inside its strings."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def read_line(line: str | bytes) -> Any:
    """One line of a JSON lines file: its JSON value; its text when it is not JSON (or nested
    too deeply to decode); its bytes, as they are, when they are not UTF-8 text."""
    if isinstance(line, bytes):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            return line.rstrip(b"\r\n")
    else:
        text = line
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text.rstrip("\r\n")
    if isinstance(value, str | int | float) or value is None:
        # JSON but no event: its text, which the reading reports as "not a JSON object: got a
        # string" (the value alone, a string, would be read as JSON text again: "not JSON")
        return text.rstrip("\r\n")
    return value
