"""Anthropic's Messages API over the standard library's HTTP client: a call that needs no SDK.

``import anthropic`` loads a pydantic model of every type of the API: 1 to 2.7 s of CPU on two cores,
which a project's first ``fix`` waited for before its first critic call (it started in the background,
but the signals of a small project are done sooner). One ``messages.create`` is a JSON POST; this client
sends it with ``http.client``, keeps its connections open between calls, and retries as the SDK does:
connection errors, timeouts, 408, 409, 429 and 5xx, ``x-should-retry`` obeyed, ``retry-after(-ms)``
honoured up to a minute, else 0.5 s doubling up to 8 s, less up to a quarter of jitter. A body that
ends half-way is retried too (the SDK's path does that around its call). What still fails is raised as
coderefine's errors with the same words as the SDK's path (``sdk_errors.ErrorWords``).

The SDK stays where it is needed: Bedrock and Vertex (their signing and credentials), the batch API, a
caller's own ``http_client``, and a proxy in the environment (httpx reads it; this client does not).
"""

from __future__ import annotations

import http.client
import json
import random
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from coderefine.errors import (
    AuthError,
    ConnectionFailedError,
    ModelError,
    ModelTimeoutError,
    OverloadedError,
    RateLimitError,
    ReplyCutShortError,
)
from coderefine.models.ratelimit import retry_after_seconds
from coderefine.models.sdk_errors import ErrorWords
from coderefine.version import __version__

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
_PROXY_VARIABLES = ("https_proxy", "http_proxy", "all_proxy")
_RETRIED = {408, 409, 429}


def proxied(environ: Mapping[str, str]) -> bool:
    """Whether the environment names a proxy (then the SDK's httpx, which honours it, makes the call)."""
    return any(environ.get(name) or environ.get(name.upper()) for name in _PROXY_VARIABLES)


class _Transient(Exception):
    """A failure worth another attempt; ``final`` is what to raise when the attempts are spent."""

    def __init__(self, final: Exception, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(str(final))
        self.final = final
        self.headers = headers or {}


class MessagesClient:
    """POST /v1/messages. Thread-safe: each call takes an idle connection or opens one."""

    def __init__(
        self,
        *,
        base_url: str | None,
        headers: Mapping[str, str],
        timeout: float,
        max_retries: int,
        words: ErrorWords,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        url = urlsplit((base_url or DEFAULT_BASE_URL).rstrip("/"))
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ModelError(f"ANTHROPIC_BASE_URL must be an http(s) URL, not {base_url!r}")
        self._secure = url.scheme == "https"
        self._host = url.hostname
        self._port = url.port
        self._path = (url.path or "") + "/v1/messages"
        self._headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "anthropic-version": API_VERSION,
            "user-agent": f"coderefine/{__version__}",
            **headers,
        }
        self._timeout = timeout
        self._max_retries = max_retries
        self._words = words
        self._sleep = sleep
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._tls: ssl.SSLContext | None = None

    def create(self, params: Mapping[str, Any]) -> dict[str, Any]:
        body = json.dumps(params).encode()
        for attempt in range(self._max_retries + 1):
            try:
                return self._attempt(body)
            except _Transient as failure:
                if attempt == self._max_retries:
                    raise failure.final from failure
                self._sleep(_delay(attempt, failure.headers))
        raise AssertionError("unreachable")

    def _attempt(self, body: bytes) -> dict[str, Any]:
        words = self._words
        connection, reused = self._connection()
        try:
            try:
                connection.request("POST", self._path, body=body, headers=self._headers)
                response = connection.getresponse()
            except (ConnectionError, http.client.RemoteDisconnected):
                if not reused:
                    raise
                # The server closed the idle connection meanwhile: that is no failure of the call.
                connection.close()
                connection, _ = self._connection(fresh=True)
                connection.request("POST", self._path, body=body, headers=self._headers)
                response = connection.getresponse()
            data = response.read()
        except TimeoutError as exc:
            connection.close()
            raise _Transient(ModelTimeoutError(words.timeout)) from exc
        except http.client.IncompleteRead as exc:
            connection.close()
            raise _Transient(ReplyCutShortError(words.cut_short)) from exc
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise _Transient(ConnectionFailedError(words.connection)) from exc
        headers = {k.lower(): v for k, v in response.getheaders()}
        if response.will_close:
            connection.close()
        else:
            with self._lock:
                self._idle.append(connection)
        status = response.status
        if status >= 400:
            self._fail(status, headers, data)
        try:
            parsed = json.loads(data)
        except ValueError as exc:
            raise _Transient(ReplyCutShortError(words.cut_short)) from exc
        if not isinstance(parsed, dict) or not isinstance(parsed.get("content"), list):
            raise _Transient(ReplyCutShortError(words.cut_short))
        return parsed

    def _fail(self, status: int, headers: Mapping[str, str], data: bytes) -> None:
        words = self._words
        message = _message(data)
        should = headers.get("x-should-retry")
        retry = should == "true" or (should != "false" and (status in _RETRIED or status >= 500))
        if status == 401:
            error: Exception = AuthError(words.auth)
        elif status == 403:
            error = AuthError(words.forbidden)
        elif status == 404:
            error = ModelError(words.not_found)
        elif status == 429:
            error = RateLimitError(
                "rate limited (429) after the retries; wait a minute and run again, or lower the number "
                "of files per run",
                retry_after=retry_after_seconds(headers),
            )
        elif status >= 500:
            error = OverloadedError(words.overloaded.format(status=status))
        elif status == 400 or (status == 422 and words.refuse_unprocessable):
            error = words.refused(status, message)
        else:
            error = ModelError(f"{words.answered} answered {status}: {message}")
        if retry:
            raise _Transient(error, headers)
        raise error

    def _connection(self, fresh: bool = False) -> tuple[http.client.HTTPConnection, bool]:
        """An idle connection (and True), or a new one."""
        with self._lock:
            if self._idle and not fresh:
                return self._idle.pop(), True
            if self._secure and self._tls is None:
                self._tls = ssl.create_default_context()
        if self._secure:
            secure = http.client.HTTPSConnection(
                self._host, self._port, timeout=self._timeout, context=self._tls
            )
            return secure, False
        return http.client.HTTPConnection(self._host, self._port, timeout=self._timeout), False

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


def _message(data: bytes) -> str:
    """The API's own words for an error (``{"error": {"message": ...}}``), else the body's start."""
    try:
        parsed = json.loads(data)
    except ValueError:
        return data[:300].decode("utf-8", "replace")
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return json.dumps(parsed)[:300]


def _delay(attempt: int, headers: Mapping[str, str]) -> float:
    asked = retry_after_seconds(headers)
    if asked is not None and 0 <= asked <= 60:
        return float(asked)
    return min(0.5 * 2.0**attempt, 8.0) * (1 - 0.25 * random.random())
