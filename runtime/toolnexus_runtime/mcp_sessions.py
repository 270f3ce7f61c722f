"""Sessions per bearer token for `asgi_app(..., stateless=False)`: one token (a leaked one, a
client that never ends its sessions) cannot hold every session of the server and lock the other
tokens out (the mcp SDK caps only the sessions of all clients together)."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from typing import Any


def check_sessions(per_token: Any, idle: Any) -> None:
    if per_token is not None and (
        isinstance(per_token, bool) or not isinstance(per_token, int) or per_token < 1
    ):
        raise ValueError(
            f"max_sessions_per_token must be a positive integer or None, not {per_token!r}"
        )
    if idle is not None and (
        isinstance(idle, bool)
        or not isinstance(idle, (int, float))
        or not math.isfinite(idle)
        or idle <= 0
    ):
        raise ValueError(
            f"session_idle_timeout must be a positive number of seconds or None, not {idle!r}"
        )


@dataclass
class _Session:
    busy: int = 0  # requests in flight (an open GET stream is one)
    last: float = 0.0  # when the last one ended (time.monotonic)


class Sessions:
    """The sessions each bearer token holds open, so that one token cannot take them all.

    Told by what passes through: a session is the id in the answer to the request that opened
    it; it ends when a DELETE of it succeeds, when it answers 404 (the SDK ended it), or when it
    has been idle (no request in flight) for the idle timeout, as the SDK then ends it. A
    request that would open a session is counted while it runs, so concurrent ones cannot pass
    the cap together."""

    def __init__(self, per_token: int | None, idle: float | None) -> None:
        self.per_token = per_token
        self.idle = idle
        self.open: dict[str, dict[str, _Session]] = {}  # token's client id -> session id -> state

    async def handle(self, app: Any, scope: Any, receive: Any, send: Any) -> None:
        token = _client_id(scope)
        if token is None or self.per_token is None:
            await app(scope, receive, send)
            return
        held = self.open.setdefault(token, {})
        session_id = _header(scope, b"mcp-session-id")
        if session_id is None:
            await self._opening(held, app, scope, receive, send)
            return
        state = held.get(session_id)
        if state is not None:
            state.busy += 1
        status: list[int] = []
        try:
            await app(scope, receive, _watching(send, status, None))
        finally:
            if state is not None:
                state.busy -= 1
                state.last = time.monotonic()
                ended = status and (
                    status[0] == 404 or (scope["method"] == "DELETE" and status[0] < 300)
                )
                if ended:
                    held.pop(session_id, None)

    async def _opening(
        self, held: dict[str, _Session], app: Any, scope: Any, receive: Any, send: Any
    ) -> None:
        self._forget_idle(held)
        if len(held) >= (self.per_token or 0):
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32600,
                        "message": f"Too many open sessions for this token ({self.per_token}): "
                        "end one (DELETE) or wait for one to expire",
                    },
                }
            ).encode()
            await _too_many(send, body)
            return
        pending = f"pending-{id(scope)}"  # holds a place while the session is opened
        held[pending] = _Session(busy=1)
        status: list[int] = []
        opened: list[str] = []
        try:
            await app(scope, receive, _watching(send, status, opened))
        finally:
            del held[pending]
            if opened and status and status[0] < 400:
                held[opened[0]] = _Session(last=time.monotonic())

    def _forget_idle(self, held: dict[str, _Session]) -> None:
        if self.idle is None:
            return
        now = time.monotonic()
        for session_id, state in list(held.items()):
            if not state.busy and now - state.last >= self.idle:
                del held[session_id]


def _client_id(scope: Any) -> str | None:
    """The bearer token a request authenticated with (its client id), None when anonymous."""
    access = getattr(scope.get("user"), "access_token", None)
    client = getattr(access, "client_id", None)
    return client if isinstance(client, str) else None


def _header(scope: Any, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _watching(send: Any, status: list[int], opened: list[str] | None) -> Any:
    """`send`, noting the response's status (and the session id it gives, into `opened`)."""

    async def watched(message: Any) -> None:
        if message.get("type") == "http.response.start":
            status.append(message["status"])
            if opened is not None:
                for key, value in message.get("headers", []):
                    if key.lower() == b"mcp-session-id":
                        opened.append(value.decode("latin-1"))
        await send(message)

    return watched


async def _too_many(send: Any, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})
