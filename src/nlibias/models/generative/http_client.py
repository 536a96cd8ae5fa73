"""A JSON client for one HTTP server: keep-alive connections per thread, a timeout per socket
operation, retries with exponential backoff (jittered, ``Retry-After`` honoured) on connection
errors, timeouts, 408, 429 and 5xx, and errors that say what to do. The generative backend
(:mod:`nlibias.models.generative.openai_http`), the server fill and the token-probability server
scorer share it.

>>> JSONClient("http://127.0.0.1:8080/v1").base_url
'http://127.0.0.1:8080/v1'
"""

from __future__ import annotations

import http.client
import json
import math
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from nlibias.errors import ConfigError, NlibiasError

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


class ServerError(NlibiasError):
    """The server refused a request, or stayed unreachable after every retry.

    Finished answers are already in the prediction cache: rerunning resumes after them.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before asking again.

    Wait before retry ``k`` (0-based): ``min(backoff_max, backoff * 2**k)`` scaled by a random
    factor in [0.5, 1] (so parallel clients do not retry in lockstep); a ``Retry-After`` header
    in seconds replaces it (capped at ``backoff_max``).

    >>> RetryPolicy(backoff=1.0, backoff_max=5.0).delay(3, jitter=1.0)
    5.0
    """

    max_retries: int = 5
    backoff: float = 0.5
    backoff_max: float = 30.0

    def delay(self, attempt: int, *, retry_after: str | None = None, jitter: float | None = None) -> float:
        if retry_after is not None:
            try:
                value = float(retry_after)
            except ValueError:
                value = math.nan
            if math.isfinite(value) and value >= 0:
                return min(value, self.backoff_max)
        factor = random.uniform(0.5, 1.0) if jitter is None else jitter
        return min(self.backoff_max, self.backoff * 2**attempt) * factor


def _retryable(status: int) -> bool:
    return status == 429 or status == 408 or status >= 500


class JSONClient:
    """POST JSON to one server with retries, keep-alive connections and a per-operation timeout.

    Thread-safe: each thread uses its own connection. ``sleep`` is injectable for tests.
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        api_key_env: str | None = DEFAULT_API_KEY_ENV,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"server URL {base_url!r} must look like http://HOST:PORT/v1", parameter="base_url"
            )
        self.base_url = base_url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.api_key_env = api_key_env
        self._sleep = sleep
        self._local = threading.local()
        self.requests_sent = 0
        self._count_lock = threading.Lock()

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self.timeout)
            self._local.conn = conn
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def _send(self, path: str, body: bytes | None) -> tuple[int, Any, bytes]:
        conn = self._connection()
        if body is not None:  # the answers asked for (a GET asks what the server offers)
            with self._count_lock:
                self.requests_sent += 1
        method = "GET" if body is None else "POST"
        try:
            conn.request(method, self._prefix + path, body=body, headers=self._headers())
            response = conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self._drop_connection()
            raise
        if response.will_close:
            self._drop_connection()
        return response.status, response.headers, data

    def get_once(self, path: str) -> dict[str, Any] | None:
        """The decoded JSON object a GET of ``path`` answers, or None on any failure (one attempt,
        no retry: for what a server may not offer, such as its list of models)."""
        try:
            status, _, data = self._send(path, None)
            decoded = json.loads(data) if 200 <= status < 300 else None
        except (OSError, http.client.HTTPException, ValueError):
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
                status, headers, data = self._send(path, body)
            except (OSError, http.client.HTTPException) as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            else:
                if 200 <= status < 300:
                    try:
                        decoded = json.loads(data)
                    except json.JSONDecodeError as exc:
                        raise ServerError(f"{url} answered invalid JSON ({exc.msg})", status=status) from exc
                    if not isinstance(decoded, dict):
                        raise ServerError(f"{url} answered {type(decoded).__name__}, not an object")
                    return decoded
                message = _error_message(data)
                if not _retryable(status):
                    raise ServerError(_explain(url, status, message, self.api_key_env), status=status)
                last = f"HTTP {status}: {message}"
                retry_after = headers.get("Retry-After")
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
    if isinstance(decoded, dict):
        error = decoded.get("error", decoded)
        if isinstance(error, dict):
            return str(error.get("message") or error)[:300]
        return str(error)[:300]
    return str(decoded)[:300]


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
