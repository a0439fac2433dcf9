"""What the client's tests and others share: a Blindata URL with credentials in it, and faults.

``with_url_credentials`` puts ``URL_USER`` and ``URL_PASSWORD`` into a URL, as someone may type
the Blindata URL; ``URL_SECRETS`` are the spellings of the password no log or error may carry.
``set_faults`` asks the served emulator for faults over its ``/_emulator/faults`` route.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import httpx

URL_USER = "proxy-user"
URL_PASSWORD = "url-pa55%2Fword-that-must-never-be-logged"
URL_SECRETS = (URL_PASSWORD, unquote(URL_PASSWORD))


def with_url_credentials(url: str) -> str:
    """``url`` with ``user:password@`` in it, as someone may type the Blindata URL."""
    return url.replace("://", f"://{URL_USER}:{URL_PASSWORD}@", 1)


def set_faults(emulator: Any, **faults: Any) -> None:
    httpx.post(f"{emulator.base_url}/_emulator/faults", json=faults).raise_for_status()
