"""Headless Chromium driven over its DevTools pipe: set Airflow's ``_token`` cookie, open a page,
take a screenshot and read the rendered DOM. No driver library: a few DevTools commands as
NUL-separated JSON on file descriptors 3 (in) and 4 (out), as ``--remote-debugging-pipe`` wants.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


class Chromium:
    def __init__(self, binary: str) -> None:
        self._to_browser_r, self._to_browser_w = os.pipe()
        self._from_browser_r, self._from_browser_w = os.pipe()
        self._profile = tempfile.TemporaryDirectory(prefix="blindata-chromium-")
        args = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile.name}",
            "--window-size=1280,900",
            "about:blank",
        ]
        to_r, from_w = self._to_browser_r, self._from_browser_w

        def _fds() -> None:  # in the child: high copies first, so that 3 and 4 cannot clash
            high_r, high_w = (
                fcntl.fcntl(to_r, fcntl.F_DUPFD, 10),
                fcntl.fcntl(from_w, fcntl.F_DUPFD, 10),
            )
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.process = subprocess.Popen(
            args,
            preexec_fn=_fds,  # fds 3 and 4 are the pipe, by Chromium's contract
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_r)
        os.close(from_w)
        self._buffer = b""
        self._next_id = 0

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser_w, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return dict(json.loads(message))

    def open(
        self,
        url: str,
        token: str,
        screenshot: Path,
        timeout: float = 30,
        action: str | None = None,
    ) -> str:
        """``url`` signed in with ``token``: the screenshot is written, the DOM returned.
        ``action``, a JavaScript expression, runs on the loaded page first (a click, say)."""
        parts = urlsplit(url)
        self.send(
            "Storage.setCookies",
            cookies=[{"name": "_token", "value": token, "url": f"{parts.scheme}://{parts.netloc}"}],
        )
        target = self.send("Target.createTarget", url=url)["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        deadline = time.monotonic() + timeout
        self._wait_loaded(session, url, deadline)
        if action:
            done = self.send("Runtime.evaluate", session, expression=action, returnByValue=True)
            if "exceptionDetails" in done:
                # Once more on the page loaded again (a run under load once found no element
                # to act on), then the error with what the page said
                self.send("Page.navigate", session, url=url)
                time.sleep(0.5)
                self._wait_loaded(session, url, deadline)
                done = self.send("Runtime.evaluate", session, expression=action, returnByValue=True)
            if "exceptionDetails" in done:
                said = self.send(
                    "Runtime.evaluate",
                    session,
                    expression="document.body ? document.body.innerText.slice(0, 600) : ''",
                    returnByValue=True,
                )
                raise RuntimeError(
                    f"{action}: {done['exceptionDetails']}; the page said: "
                    f"{said['result'].get('value')!r}"
                )
        shot = self.send("Page.captureScreenshot", session, format="png")
        screenshot.write_bytes(base64.b64decode(shot["data"]))
        dom = self.send(
            "Runtime.evaluate",
            session,
            expression="document.documentElement.outerHTML",
            returnByValue=True,
        )
        self.send("Target.closeTarget", targetId=target)
        return str(dom["result"]["value"])

    def _wait_loaded(self, session: str, url: str, deadline: float) -> None:
        while True:
            state = self.send(
                "Runtime.evaluate", session, expression="document.readyState", returnByValue=True
            )
            if state["result"].get("value") == "complete" and self._loaded(session, url):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load")
            time.sleep(0.2)

    def _loaded(self, session: str, url: str) -> bool:
        where = self.send(
            "Runtime.evaluate", session, expression="location.href", returnByValue=True
        )
        return str(where["result"].get("value", "")).startswith(url.split("?")[0])

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        os.close(self._to_browser_w)
        os.close(self._from_browser_r)
        self._profile.cleanup()
