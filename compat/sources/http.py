"""The one HTTP seam of compat: a bounded GET with retries, for the package-index client.

Only this module reaches the network (the `host` contract in pyproject.toml holds it so). It knows
nothing of indexes: `compat/maintain/index.py` asks it for pages, metadata and byte ranges and parses
what comes back. A response is read whole within a size and a time bound (a server that drips a byte
a second never trips a per-read timeout, a gzip bomb is stopped at its limit); connection errors,
429/5xx answers and truncated bodies are retried with exponential backoff.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

import requests
from urllib3.exceptions import HTTPError as TransportError

from compat.errors import IndexBudgetSpent, PackageIndexError
from compat.redact import redact_url

MIB = 1024 * 1024
MAX_BODY = 256 * MIB
"""A body read whole when the caller names no smaller bound (a range, or a wheel from a server that ignores ranges)."""
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_READ = 64 * 1024


@dataclass(frozen=True, kw_only=True)
class HttpResponse:
    """A response read whole, within its bounds."""

    status_code: int
    """HTTP status."""
    headers: Mapping[str, str]
    """Response headers (case-insensitive mapping)."""
    url: str
    """The URL after redirects."""
    content: bytes
    """The decoded body."""


class HttpClient:
    """GETs with bounds and retries; safe to share between threads (one connection pool per thread)."""

    def __init__(
        self,
        *,
        timeout: float = 30.0,
        total_timeout: float | None = None,
        retries: int = 4,
        backoff: float = 0.5,
        session: requests.Session | None = None,
        deadline: float | None = None,
    ) -> None:
        self.timeout = timeout
        """Seconds each read may wait."""
        self.total_timeout = total_timeout if total_timeout is not None else 4 * timeout
        """Seconds one response may take as a whole."""
        self.retries = retries
        self.backoff = backoff
        self.deadline = deadline
        """A `time.monotonic()` instant: no request starts after it and none runs past it (IndexBudgetSpent);
        None: only the per-response bounds."""
        self._local = threading.local()
        self._session = session
        self._lock = threading.Lock()
        self.requests_made = 0
        """HTTP requests sent (retries included)."""

    def _http(self) -> requests.Session:
        if self._session is not None:
            return self._session
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            self._local.session = session
        return session

    def get(
        self, url: str, *, headers: dict[str, str] | None = None, ok: tuple[int, ...] = (200,), limit: int = MAX_BODY,
    ) -> HttpResponse:
        """GET with a timeout and exponential backoff on connection errors, 5xx/429 and truncated bodies.

        The whole response must arrive within `total_timeout` and hold at most `limit` bytes once
        decoded; either is an error at once, not retried. Raises PackageIndexError (the URL named
        without its credentials)."""
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(self.backoff * 2 ** (attempt - 1), max(0.0, self._left(url))))
            timeout = min(self.timeout, self._left(url))
            with self._lock:
                self.requests_made += 1
            try:
                with self._http().get(url, headers=headers, timeout=timeout, stream=True) as raw:
                    if raw.status_code in _RETRY_STATUS:
                        last = f"HTTP {raw.status_code}"
                        continue
                    if raw.status_code not in ok:
                        raise PackageIndexError(f"{redact_url(url)}: HTTP {raw.status_code}")
                    body = self._body(raw, url, limit)
                    return HttpResponse(status_code=raw.status_code, headers=raw.headers, url=raw.url or url, content=body)
            except (requests.ConnectionError, requests.Timeout) as exc:
                if isinstance(exc, requests.Timeout) and timeout < self.timeout:  # cut short by the deadline
                    raise IndexBudgetSpent(f"{redact_url(url)}: not read, the time allowed ran out") from exc
                last = type(exc).__name__
                continue
            except (requests.RequestException, TransportError) as exc:  # truncated or undecodable bodies
                last = type(exc).__name__
                continue
        self._left(url)  # the last attempt timed out at the deadline: say so, not "failed"
        raise PackageIndexError(f"{redact_url(url)}: failed after {self.retries + 1} attempts ({last})")

    def _left(self, url: str) -> float:
        """Seconds left before the deadline (infinite without one); raises IndexBudgetSpent when none are."""
        if self.deadline is None:
            return float("inf")
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise IndexBudgetSpent(f"{redact_url(url)}: not read, the time allowed ran out")
        return left

    def _body(self, raw: requests.Response, url: str, limit: int) -> bytes:
        deadline = time.monotonic() + min(self.total_timeout, self._left(url))
        declared = raw.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit and not raw.headers.get("Content-Encoding"):
            raise PackageIndexError(f"{redact_url(url)}: response of {declared} bytes, more than the {limit // MIB} MiB allowed")
        chunks: list[bytes] = []
        size = 0
        while True:
            # read1 (urllib3 >= 2.2) returns after one receive, so the deadline is checked as bytes come.
            chunk = raw.raw.read1(_READ, decode_content=True)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise PackageIndexError(f"{redact_url(url)}: response larger than the {limit // MIB} MiB allowed")
            if time.monotonic() > deadline:
                self._left(url)
                raise PackageIndexError(
                    f"{redact_url(url)}: response not complete after {self.total_timeout:g} s (server too slow)")
            chunks.append(chunk)
        return b"".join(chunks)
