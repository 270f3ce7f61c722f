"""A thin Chat Completions client on the standard library, for `run_openai`/`arun_openai`.

An option, not the default: the loops take the official `openai` client, with everything it
brings (typed responses, its errors, proxies, Azure and custom auth). Where the per-request cost
of that client matters more (a local OpenAI-compatible server a few milliseconds away, many
short tool loops), hand the loop one of these instead:

    from toolnexus_runtime.openai_compatible import Client, AsyncClient
    run = tk.run_openai(Client(base_url="http://127.0.0.1:8000/v1"), model=..., messages=...)
    run.response  # the final response's JSON, a dict

It speaks one endpoint, `POST {base_url}/chat/completions`, over HTTP/1.1 keep-alive (idle
connections reused; `http.client`, TLS for https), sends the keyword arguments as the JSON
body (`extra_body`, `extra_headers` and `timeout` as the official client takes them), and
returns the JSON answer as a dict. It retries as the official client does by default: twice,
on a lost connection, 408, 409, 429 and 5xx, waiting `Retry-After` or an exponential backoff.
Any other error status raises `APIError` with the status and the server's message. No proxies,
no streaming. `AsyncClient` runs the same requests in a worker thread (`asyncio.to_thread`).

`timeout` bounds each exchange as a whole once the answer's headers are in (a server that drips
its body a byte at a time cannot hold the call past it; while the headers come in, it bounds each
read), and an answer over `max_response_bytes` (64 MiB by default) is an `APIError` (413), read
no further. An API key (`api_key`, or an Authorization, api-key or x-api-key header in `headers`)
sent over plain `http://` to a host other than this machine is logged as
a WARNING on the `toolnexus_runtime` logger: anyone on the path can read it.
"""

from __future__ import annotations

import asyncio
import http.client
import ipaddress
import json
import logging
import os
import random
import select
import threading
import time
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_KEY_HEADERS = frozenset({"authorization", "api-key", "x-api-key"})
logger = logging.getLogger("toolnexus_runtime")


class APIError(Exception):
    """The server answered with an error status (after any retries)."""

    def __init__(self, status: int, body: str) -> None:
        try:
            message = json.loads(body)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = body[:500]
        super().__init__(f"{status}: {message}")
        self.status = status
        self.body = body


class Client:
    """`Client(base_url=None, api_key=None, *, headers=None, timeout=600.0, max_retries=2,
    max_response_bytes=MAX_RESPONSE_BYTES)`: base_url and api_key default to OPENAI_BASE_URL and
    OPENAI_API_KEY, as the official client's do. `client.chat.completions.create(**params)`
    returns the response's JSON."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        headers: dict[str, str] | None = None,
        timeout: float = 600.0,
        max_retries: int = 2,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        url = urlsplit(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"base_url must be an http(s) URL, not {base_url!r}")
        self._https = url.scheme == "https"
        # The port always given: http.client would read "::1" (an IPv6 host) as "::" port 1.
        self._host, self._port = url.hostname, url.port or (443 if self._https else 80)
        self._path = url.path.rstrip("/") + "/chat/completions"
        api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if api_key and any(c in api_key for c in "\r\n\0"):  # refused here, not at request
            raise ValueError("api_key holds a line break or NUL")  # time with the key shown
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._headers.update(headers or {})
        # the key from api_key, or in headers= (a gateway's own header, Azure's api-key)
        keyed = any(name.lower() in _KEY_HEADERS for name in self._headers)
        if keyed and not self._https and not _this_machine(url.hostname):
            logger.warning(
                "openai_compatible.Client sends its API key over plain http:// to %s: "
                "anyone on the network path can read it; use https:// for a remote server",
                url.hostname,
            )
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_response_bytes = max_response_bytes
        # Idle keep-alive connections: a request takes one (or opens one) and puts it back, so
        # sequential requests share one connection whichever thread makes them.
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, **params: Any) -> Any:
        return self._post(params)

    def _post(self, params: dict[str, Any]) -> Any:
        extra_body = params.pop("extra_body", None) or {}
        headers = {**self._headers, **(params.pop("extra_headers", None) or {})}
        timeout = params.pop("timeout", None) or self.timeout
        body = json.dumps({**params, **extra_body}).encode()
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                status, retry_after, payload = self._send(body, headers, timeout)
            except (ConnectionError, http.client.HTTPException, TimeoutError):
                if last:
                    raise
                time.sleep(_backoff(attempt, None))
                continue
            if status < 300:
                try:
                    return json.loads(payload)
                except ValueError:  # a proxy's or captive portal's page: an answer, not JSON
                    text = payload.decode("utf-8", "replace")
                    raise APIError(status, f"the answer is not JSON: {text[:200]}") from None
            if last or status not in RETRY_STATUSES:
                raise APIError(status, payload.decode("utf-8", "replace"))
            time.sleep(_backoff(attempt, retry_after))
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(
        self, body: bytes, headers: dict[str, str], timeout: float
    ) -> tuple[int, str | None, bytes]:
        connection = self._take()
        if connection is not None:
            try:
                return self._exchange(connection, body, headers, timeout, reused=True)
            except _Unsent:
                pass  # an idle connection the server closed as we reused it: once, on a new one
            connection = None
        return self._exchange(connection, body, headers, timeout)

    def _exchange(
        self,
        connection: http.client.HTTPConnection | None,
        body: bytes,
        headers: dict[str, str],
        timeout: float,
        reused: bool = False,
    ) -> tuple[int, str | None, bytes]:
        if connection is None:
            kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            connection = kind(self._host, self._port, timeout=timeout)
        elif connection.sock is not None:
            connection.sock.settimeout(timeout)
        try:
            try:
                connection.request("POST", self._path, body, headers)
            except (ConnectionResetError, BrokenPipeError) as exc:
                # Refused while sending: the server cannot have read the whole request. Once
                # it is sent, a lost answer proves nothing (the server may have acted on it),
                # so it is retried only as `max_retries` allows, as the official client does.
                if reused:
                    raise _Unsent from exc
                raise
            deadline = time.monotonic() + timeout
            response = connection.getresponse()
            payload = self._read(connection, response, deadline)
        except BaseException:
            connection.close()
            raise
        if payload is None:  # over the cap: the rest is never read, the connection dropped
            connection.close()
            limit = self.max_response_bytes
            return 413, None, f"the answer is larger than max_response_bytes={limit}".encode()
        if response.will_close:
            connection.close()
        else:
            with self._lock:
                self._idle.append(connection)
        return response.status, response.getheader("retry-after"), payload

    def _read(
        self,
        connection: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        deadline: float,
    ) -> bytes | None:
        """The answer's body, read by the deadline; None past max_response_bytes."""
        chunks: list[bytes] = []
        size = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the answer did not arrive within the timeout")
            if connection.sock is not None:
                connection.sock.settimeout(remaining)
            chunk = response.read1(65536)
            if not chunk:
                if response.length:  # read1 does not check what read() does: the server
                    # closed the connection before the Content-Length it announced
                    raise http.client.IncompleteRead(b"".join(chunks), response.length)
                response.read()  # b"" once the body is whole; it closes the answer, so the
                return b"".join(chunks)  # connection can carry the next request
            size += len(chunk)
            if size > self.max_response_bytes:
                return None
            chunks.append(chunk)

    def close(self) -> None:
        """Close the idle connections (a later request opens a new one)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _take(self) -> http.client.HTTPConnection | None:
        """An idle connection the server has not closed meanwhile, if any."""
        while True:
            with self._lock:
                if not self._idle:
                    return None
                connection = self._idle.pop()
            if not _closed_by_server(connection):
                return connection
            connection.close()


class _Unsent(Exception):
    """A reused connection failed before the request went out whole."""


class AsyncClient(Client):
    """The same client for `arun_openai`: `await client.chat.completions.create(**params)`
    runs the request in a worker thread."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._acreate))

    async def _acreate(self, **params: Any) -> Any:
        return await asyncio.to_thread(self._post, params)


def _this_machine(host: str) -> bool:
    """Whether a URL's host is this machine (a key sent there in clear stays on it)."""
    name = host.lower().rstrip(".")  # "localhost." is the same name, fully qualified
    if name in ("localhost", "localhost.localdomain") or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 (not loopback before 3.13)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def _closed_by_server(connection: http.client.HTTPConnection) -> bool:
    sock = connection.sock
    if sock is None:
        return False
    # Nothing is due on an idle connection: readable means closed. poll, not select: select
    # refuses descriptors past FD_SETSIZE (1024), common in a busy server process.
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    readable, _, _ = select.select([sock], [], [], 0)  # Windows: no such limit there
    return bool(readable)


def _backoff(attempt: int, retry_after: str | None) -> float:
    """Seconds to wait before retry `attempt + 1`: the server's Retry-After (in seconds, at
    most a minute; anything else, as negative or nan, is ignored), or 0.5 s doubling per
    attempt (at most 8 s) with some jitter."""
    try:
        seconds = float(retry_after) if retry_after is not None else -1.0
    except ValueError:
        seconds = -1.0
    if 0.0 <= seconds <= 60.0:
        return seconds
    jitter: float = 0.75 + random.random() / 4
    return min(0.5 * 2.0**attempt, 8.0) * jitter
