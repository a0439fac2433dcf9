"""Fault injection: what a flaky network, an overloaded service or a proxy does to a client.

Two families, switchable per test from Python (`emulator.faults`) or over HTTP
(`POST /_emulator/faults`):

- counters, for deterministic tests: the next `n` matching requests fail in one way
  (`fail_next`: a 5xx with the Spring error body; `rate_limit_next`: 429 with `Retry-After`;
  `drop_next`: the connection is cut in the middle of the response; `html_error_next`: an HTML
  page such as a proxy returns; `truncate_next`: a 200 whose JSON body is cut short). Counters are
  consumed first in, first out.
- rates, for benchmarks: `error_rate` (share of requests answered with a 5xx) and `latency_ms`
  (added to every request), drawn from a generator seeded with `seed` so that a run repeats.

Each switch may carry a `path` regular expression (matched with `re.search` against the URL path)
and a `method` regular expression (matched whole against the HTTP method, e.g. `"POST|PUT|DELETE"`
for every write): the fault then only hits matching requests. Admin requests (`/_emulator/...`) are
never faulted.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["FaultDecision", "FaultKind", "Faults"]


class FaultKind:
    """The kinds of counted faults."""

    FAIL = "fail"
    RATE_LIMIT = "rate_limit"
    DROP = "drop"
    HTML_ERROR = "html_error"
    TRUNCATE = "truncate"


DEFAULT_FAIL_STATUS = 503
DEFAULT_HTML_STATUS = 502
DEFAULT_RETRY_AFTER = 1


@dataclass(frozen=True)
class FaultDecision:
    """What to do to one request: `kind` is None when only latency applies."""

    kind: str | None
    status: int = DEFAULT_FAIL_STATUS
    retry_after: int = DEFAULT_RETRY_AFTER
    processed: bool = False
    """For drops and failures: whether the request is handled (its writes land) first."""
    latency_seconds: float = 0.0


@dataclass
class _Rule:
    kind: str
    remaining: int
    status: int
    retry_after: int
    processed: bool
    pattern: re.Pattern[str] | None
    method: re.Pattern[str] | None = None

    def matches(self, path: str, method: str) -> bool:
        return _hits(self.pattern, self.method, path, method)


def _hits(
    pattern: re.Pattern[str] | None, method_pattern: re.Pattern[str] | None, path: str, method: str
) -> bool:
    return (pattern is None or pattern.search(path) is not None) and (
        method_pattern is None or method_pattern.fullmatch(method) is not None
    )


def _pattern(path: str | None) -> re.Pattern[str] | None:
    if path is None:
        return None
    try:
        return re.compile(path)
    except re.error as err:
        raise ValueError(f"path {path!r} is not a regular expression: {err}") from None


def _method(method: str | None) -> re.Pattern[str] | None:
    if method is None:
        return None
    try:
        return re.compile(method, re.IGNORECASE)
    except re.error as err:
        raise ValueError(f"method {method!r} is not a regular expression: {err}") from None


def _count(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"a fault count must be an integer >= 0, got {n!r}")
    return n


def _status(status: int, low: int = 400) -> int:
    if isinstance(status, bool) or not isinstance(status, int) or not low <= status <= 599:
        raise ValueError(f"a fault status must be an integer in {low}..599, got {status!r}")
    return status


class Faults:
    """The fault switches of one emulator; thread-safe.

    `error_rate`, `error_status`, `latency_ms` and `seed` may also be assigned directly (the
    `set_rates` method checks their values and sets a path filter for them).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[_Rule] = []
        self.error_rate = 0.0
        self.error_status = DEFAULT_FAIL_STATUS
        self.latency_ms = 0.0
        self._seed: int | None = None
        self._rate_pattern: re.Pattern[str] | None = None
        self._rate_method: re.Pattern[str] | None = None
        self._random = random.Random(None)

    @property
    def seed(self) -> int | None:
        """The seed of the error-rate draws (None: unseeded)."""
        return self._seed

    @seed.setter
    def seed(self, value: int | None) -> None:
        with self._lock:
            self._seed = value
            self._random = random.Random(value)

    def _add(
        self,
        kind: str,
        n: int,
        *,
        status: int = DEFAULT_FAIL_STATUS,
        retry_after: int = DEFAULT_RETRY_AFTER,
        processed: bool = False,
        path: str | None = None,
        method: str | None = None,
    ) -> None:
        rule = _Rule(
            kind, _count(n), status, retry_after, processed, _pattern(path), _method(method)
        )
        if rule.remaining:
            with self._lock:
                self._rules.append(rule)

    def fail_next(
        self,
        n: int = 1,
        *,
        status: int = DEFAULT_FAIL_STATUS,
        path: str | None = None,
        method: str | None = None,
        processed: bool = False,
    ) -> None:
        """The next `n` matching requests get `status` with a Spring error body.

        With `processed=True` the request is handled first, its writes landing: a gateway that
        answers 502 or 503 after its upstream did the work (its answer lost on the way)."""
        self._add(
            FaultKind.FAIL,
            n,
            status=_status(status),
            processed=processed,
            path=path,
            method=method,
        )

    def rate_limit_next(
        self,
        n: int = 1,
        *,
        retry_after: int = DEFAULT_RETRY_AFTER,
        path: str | None = None,
        method: str | None = None,
    ) -> None:
        """The next `n` matching requests get 429 with `Retry-After: <retry_after>` (seconds)."""
        if isinstance(retry_after, bool) or not isinstance(retry_after, int) or retry_after < 0:
            raise ValueError(f"retry_after must be an integer >= 0 (seconds), got {retry_after!r}")
        self._add(
            FaultKind.RATE_LIMIT, n, status=429, retry_after=retry_after, path=path, method=method
        )

    def drop_next(
        self,
        n: int = 1,
        *,
        path: str | None = None,
        processed: bool = False,
        method: str | None = None,
    ) -> None:
        """The next `n` matching requests lose their connection mid-response.

        With `processed=True` the request is handled first, so its writes land although the
        client never hears so: the case that needs idempotent retries.
        """
        self._add(FaultKind.DROP, n, processed=processed, path=path, method=method)

    def html_error_next(
        self,
        n: int = 1,
        *,
        status: int = DEFAULT_HTML_STATUS,
        path: str | None = None,
        method: str | None = None,
    ) -> None:
        """The next `n` matching requests get an HTML error page (text/html) with `status`."""
        self._add(FaultKind.HTML_ERROR, n, status=_status(status), path=path, method=method)

    def truncate_next(
        self, n: int = 1, *, path: str | None = None, method: str | None = None
    ) -> None:
        """The next `n` matching requests are handled, then answered 200 with cut JSON."""
        self._add(FaultKind.TRUNCATE, n, processed=True, path=path, method=method)

    def set_rates(
        self,
        *,
        error_rate: float | None = None,
        latency_ms: float | None = None,
        seed: int | None = None,
        error_status: int | None = None,
        path: str | None = None,
        method: str | None = None,
    ) -> None:
        """Set the benchmark rates; arguments left None keep their value (except the filters)."""
        if error_rate is not None and not 0.0 <= error_rate <= 1.0:
            raise ValueError(f"error_rate must be between 0 and 1, got {error_rate!r}")
        if latency_ms is not None and latency_ms < 0:
            raise ValueError(f"latency_ms must be >= 0, got {latency_ms!r}")
        pattern = _pattern(path)
        method_pattern = _method(method)
        with self._lock:
            if error_rate is not None:
                self.error_rate = float(error_rate)
            if latency_ms is not None:
                self.latency_ms = float(latency_ms)
            if error_status is not None:
                self.error_status = _status(error_status, low=500)
            if seed is not None:
                self._seed = seed
                self._random = random.Random(seed)
            self._rate_pattern = pattern
            self._rate_method = method_pattern

    def clear(self) -> None:
        """No fault at all."""
        with self._lock:
            self._rules.clear()
            self.error_rate = 0.0
            self.error_status = DEFAULT_FAIL_STATUS
            self.latency_ms = 0.0
            self._seed = None
            self._rate_pattern = None
            self._rate_method = None
            self._random = random.Random(None)

    def pending(self) -> list[dict[str, Any]]:
        """The counters still to fire, in order."""
        with self._lock:
            return [
                {
                    "kind": rule.kind,
                    "remaining": rule.remaining,
                    "status": rule.status,
                    "path": rule.pattern.pattern if rule.pattern else None,
                    "method": rule.method.pattern if rule.method else None,
                }
                for rule in self._rules
            ]

    def describe(self) -> dict[str, Any]:
        """The current switches, as the admin endpoint shows them."""
        return {
            "pending": self.pending(),
            "error_rate": self.error_rate,
            "error_status": self.error_status,
            "latency_ms": self.latency_ms,
            "seed": self._seed,
            "rates_path": self._rate_pattern.pattern if self._rate_pattern else None,
            "rates_method": self._rate_method.pattern if self._rate_method else None,
        }

    def decide(self, path: str, method: str = "GET") -> FaultDecision:
        """Consume the fault for one `method` request to `path` (FIFO counters, then rates)."""
        with self._lock:
            rate_hit = _hits(self._rate_pattern, self._rate_method, path, method)
            latency = self.latency_ms / 1000.0 if rate_hit else 0.0
            for rule in self._rules:
                if rule.matches(path, method):
                    rule.remaining -= 1
                    if rule.remaining <= 0:
                        self._rules.remove(rule)
                    return FaultDecision(
                        rule.kind, rule.status, rule.retry_after, rule.processed, latency
                    )
            if rate_hit and self.error_rate and self._random.random() < self.error_rate:
                return FaultDecision(FaultKind.FAIL, self.error_status, latency_seconds=latency)
            return FaultDecision(None, latency_seconds=latency)

    def configure(self, spec: Mapping[str, Any]) -> None:
        """Apply the JSON form of the switches (admin endpoint); unknown keys are refused.

        Counters: fail_next, rate_limit_next, drop_next, html_error_next, truncate_next, with
        `status` (for fail_next: default 503; for html_error_next: default 502), `retry_after`
        (rate_limit_next) and `processed` (fail_next, drop_next). Rates: error_rate, error_status,
        latency_ms, seed. `path` and `method` apply to everything in the call.
        """
        unknown = sorted(set(spec) - _SPEC_KEYS)
        if unknown:
            raise ValueError(f"unknown fault switches {unknown}; known: {sorted(_SPEC_KEYS)}")
        where = {"path": spec.get("path"), "method": spec.get("method")}
        if "fail_next" in spec:
            status = spec.get("status", DEFAULT_FAIL_STATUS)
            processed = bool(spec.get("processed", False))
            self.fail_next(spec["fail_next"], status=status, processed=processed, **where)
        if "rate_limit_next" in spec:
            retry_after = spec.get("retry_after", DEFAULT_RETRY_AFTER)
            self.rate_limit_next(spec["rate_limit_next"], retry_after=retry_after, **where)
        if "drop_next" in spec:
            processed = bool(spec.get("processed", False))
            self.drop_next(spec["drop_next"], processed=processed, **where)
        if "html_error_next" in spec:
            status = spec.get("status", DEFAULT_HTML_STATUS)
            self.html_error_next(spec["html_error_next"], status=status, **where)
        if "truncate_next" in spec:
            self.truncate_next(spec["truncate_next"], **where)
        if _SPEC_KEYS_RATES & set(spec):
            self.set_rates(
                error_rate=spec.get("error_rate"),
                latency_ms=spec.get("latency_ms"),
                seed=spec.get("seed"),
                error_status=spec.get("error_status"),
                **where,
            )


_SPEC_KEYS_RATES = frozenset({"error_rate", "latency_ms", "seed", "error_status"})
_SPEC_KEYS = (
    frozenset(
        {
            "fail_next",
            "rate_limit_next",
            "retry_after",
            "drop_next",
            "processed",
            "html_error_next",
            "status",
            "truncate_next",
            "path",
            "method",
        }
    )
    | _SPEC_KEYS_RATES
)
