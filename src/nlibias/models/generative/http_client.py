"""A JSON client on httpx: keep-alive, proxies from the environment, jittered exponential retries
(``Retry-After`` as seconds or an HTTP date) on connection errors, timeouts, 408, 429 and 5xx.

>>> JSONClient("http://127.0.0.1:8080/v1").base_url
'http://127.0.0.1:8080/v1'
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import mktime_tz, parsedate_tz
from typing import Annotated, Any

import httpx
from annotated_types import Predicate

from nlibias.errors import ConfigError, NlibiasError
from nlibias.schema.declared import Allowed, declared
from nlibias.schema.model_ref import ModelRef

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


class ServerError(NlibiasError):
    """The server refused a request, or stayed unreachable after every retry."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class RetryPolicy:
    """``min(backoff_max, backoff * 2**k)`` before retry ``k``, jittered by [0.5, 1]; a
    ``Retry-After`` replaces it, capped at ``backoff_max``.

    >>> RetryPolicy(backoff=1.0, backoff_max=5.0).delay(3, jitter=1.0)
    5.0
    >>> RetryPolicy().delay(0, retry_after="Sun, 06 Nov 1994 08:49:37 GMT")  # a date passed: no wait
    0.0
    """

    max_retries: int = 5
    backoff: float = 0.5
    backoff_max: float = 30.0

    def delay(self, attempt: int, *, retry_after: str | None = None, jitter: float | None = None) -> float:
        wait = _retry_after_seconds(retry_after) if retry_after is not None else None
        if wait is not None:
            return min(wait, self.backoff_max)
        factor = random.uniform(0.5, 1.0) if jitter is None else jitter
        return min(self.backoff_max, self.backoff * 2**attempt) * factor


def _retry_after_seconds(value: str) -> float | None:
    """Seconds a ``Retry-After`` value asks to wait (0 for a past date); None when unreadable."""
    try:
        seconds = float(value)
    except ValueError:
        date = parsedate_tz(value)  # None when it is not a date either
        return None if date is None else max(0.0, mktime_tz(date) - time.time())
    return seconds if 0 <= seconds < float("inf") else None


def _is_server_url(url: str) -> bool:
    try:
        parts = httpx.URL(url.rstrip("/"))
    except httpx.InvalidURL:
        return False
    return parts.scheme in ("http", "https") and bool(parts.host)


ServerURL = Annotated[str, Predicate(_is_server_url), Allowed("a URL that looks like http://HOST:PORT/v1")]
"""An OpenAI-compatible server's base URL."""


class JSONClient:
    """POST JSON to one server with retries; thread-safe. ``sleep`` is injectable for tests."""

    @declared
    def __init__(
        self,
        base_url: ServerURL,
        *,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        api_key_env: str | None = DEFAULT_API_KEY_ENV,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.api_key_env = api_key_env
        self._sleep = sleep
        # trust_env: proxies and CA bundles from the environment; no pool limit (callers bound it)
        self._client = httpx.Client(
            timeout=timeout,
            trust_env=True,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=None),
        )
        self.requests_sent = 0
        self._count_lock = threading.Lock()

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _send(self, path: str, body: bytes | None) -> httpx.Response:
        if body is not None:  # the answers asked for (a GET asks what the server offers)
            with self._count_lock:
                self.requests_sent += 1
        method = "GET" if body is None else "POST"
        return self._client.request(method, self.base_url + path, content=body, headers=self._headers())

    def get_once(self, path: str) -> dict[str, Any] | None:
        """The JSON object a GET of ``path`` answers, or None on any failure (one attempt)."""
        try:
            response = self._send(path, None)
            decoded = json.loads(response.content) if response.is_success else None
        except (httpx.HTTPError, ValueError):
            return None
        return decoded if isinstance(decoded, dict) else None

    def post(self, path: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """The decoded JSON answer; retries transient failures, raises :class:`ServerError`."""
        body = json.dumps(payload).encode()
        url = self.base_url + path
        last = ""
        for attempt in range(self.retry.max_retries + 1):
            retry_after = None
            try:
                response = self._send(path, body)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            else:
                status = response.status_code
                if response.is_success:
                    try:
                        decoded = json.loads(response.content)
                    except json.JSONDecodeError as exc:
                        raise ServerError(f"{url} answered invalid JSON ({exc.msg})", status=status) from exc
                    if not isinstance(decoded, dict):
                        raise ServerError(f"{url} answered {type(decoded).__name__}, not an object")
                    return decoded
                message = _error_message(response.content)
                if status not in (408, 429) and status < 500:  # else transient: retried
                    raise ServerError(_explain(url, status, message, self.api_key_env), status=status)
                last = f"HTTP {status}: {message}"
                retry_after = response.headers.get("Retry-After")
            if attempt < self.retry.max_retries:
                self._sleep(self.retry.delay(attempt, retry_after=retry_after))
        raise ServerError(
            f"{url} failed {self.retry.max_retries + 1} times (last: {last}). Answers finished so far "
            "are cached: start the server again and rerun the same command to resume"
        )


def _error_message(data: bytes) -> str:
    try:
        decoded = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return data[:300].decode("utf-8", "replace").strip() or "(empty body)"
    error = decoded.get("error", decoded) if isinstance(decoded, dict) else decoded
    return str((error.get("message") or error) if isinstance(error, dict) else error)[:300]


def _explain(url: str, status: int, message: str, api_key_env: str | None) -> str:
    text = f"{url} answered HTTP {status}: {message}"
    if status in (401, 403):
        text += (
            f" (set the API key in ${api_key_env or DEFAULT_API_KEY_ENV}; in Python, the backend's "
            "parameter api_key_env names another variable)"
        )
    elif status == 404:
        text += " (check the URL: it should end with /v1, and the model name after '#')"
    return text


def server_address(ref: ModelRef, parameter: str) -> tuple[str, str]:
    """``(base URL, model)`` of ``openai:http://HOST:PORT/v1#MODEL``, else refused."""
    if ref.server is None:
        raise ConfigError(
            f"cannot read {str(ref)!r}: write openai:http://HOST:PORT/v1#MODEL (the model name after '#')",
            parameter=parameter,
        )
    return ref.server
