"""MCP over streamable HTTP: `asgi_app(toolkit)`, an ASGI application for uvicorn or any ASGI
server, with the official `mcp` package (imported when the app is made).

Over HTTP the server is reachable by strangers, so by default it refuses what a browser page
could abuse (a foreign `Origin`: DNS rebinding), checks bearer tokens in constant time with the
SDK's bearer-auth middleware, and masks an unexpected exception's text (the client gets an error
id; the log has the traceback under that id).

Stateless by default: no session survives a request, so any worker or replica answers any
request. A tools/call is answered as an event stream when the client accepts one (every MCP
client does), so the call's progress and log messages reach it before the result; every other
request as plain JSON. `stateless=False` keeps sessions in this process instead (one worker):
`logging/setLevel` then lasts for the session, and GET (the session's own event stream) and
DELETE (its end) are served; each bearer token may hold at most `max_sessions_per_token`
sessions, and one idle for `session_idle_timeout` seconds is ended.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Collection
from contextlib import AsyncExitStack, asynccontextmanager
from importlib import import_module
from typing import TYPE_CHECKING, Any

from .mcp_sessions import Sessions, check_sessions

if TYPE_CHECKING:
    from .core import ToolkitCore

logger = logging.getLogger("toolnexus_runtime")

LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
DEFAULT_SESSIONS_PER_TOKEN = 32
DEFAULT_SESSION_IDLE = 1800.0  # seconds (the mcp SDK's own default since 2.x)


def asgi_app(
    toolkit: ToolkitCore[Any],
    *,
    bearer_tokens: Collection[str] | None = None,
    allow_anonymous: bool = False,
    allowed_origins: Collection[str] = (),
    allowed_hosts: Collection[str] | None = None,
    mask_errors: bool = True,
    timeout: float | None = 60.0,
    path: str = "/mcp",
    name: str | None = None,
    version: str = "",
    instructions: str | None = None,
    toolset: str | None = None,
    stateless: bool = True,
    stream_calls: bool = True,
    max_sessions_per_token: int | None = DEFAULT_SESSIONS_PER_TOKEN,
    session_idle_timeout: float | None = DEFAULT_SESSION_IDLE,
) -> Any:
    """An ASGI application serving `toolkit` (or, with `toolset=`, that toolset's tools only)
    over MCP streamable HTTP at `path`.

    Stateless (no session survives a request), so any number of `uvicorn --workers` processes or
    replicas behind a load balancer can answer any request; a tools/call is answered as an event
    stream when the client accepts one (its progress and log messages, then its result), every
    other request as plain JSON, and any method but POST is 405 (no event stream is held open).
    stream_calls=False: every request answered in JSON, the fastest (a stream costs a few
    milliseconds per call), but a call's progress and log messages are not sent.
    stateless=False: sessions kept in this process (serve it with one worker), each answered as
    event streams, with GET (a session's own stream) and DELETE (its end) served too.
    What it refuses by default:
    - bearer_tokens: a collection of accepted tokens; a request without `Authorization: Bearer
      <one of them>` gets 401 and runs nothing. An empty collection (an unset variable) is a
      ValueError unless `allow_anonymous=True`; None serves without a token (logged as a
      warning unless `allow_anonymous=True` says that is meant).
    - a request whose `Origin` (sent by browsers) is not this machine's (http(s)://localhost,
      127.0.0.1 or [::1], any port) nor in `allowed_origins` gets 403 (DNS rebinding);
      `allowed_origins=["*"]` allows any. Clients that send no Origin are not affected.
    - allowed_hosts: when given, a request whose `Host` is not in it gets 421 ("name:*" allows
      any port of name).
    - mask_errors (default True): see `mcp_server`; `timeout` too.
    With sessions (stateless=False):
    - max_sessions_per_token (default 32): how many sessions one bearer token may hold open at
      once; a request that would open one more gets 429 and opens nothing, so one token (a
      leaked one, a client that never ends its sessions) cannot use up the server's sessions
      and lock every other token out. None: no cap per token (the mcp SDK's cap on all
      sessions still holds). Without bearer tokens there is no token to count by.
    - session_idle_timeout (default 1800 seconds): a session with no request in flight for
      this long is ended (its id then answers 404) and no longer counts; None keeps sessions
      until the client ends them."""
    check_sessions(max_sessions_per_token, session_idle_timeout)
    digests = _token_digests(bearer_tokens, allow_anonymous)
    origins = _patterns(allowed_origins, "allowed_origins")
    hosts = None if allowed_hosts is None else _patterns(allowed_hosts, "allowed_hosts")
    from .mcp_server import _default_name, mcp_server

    streamable = import_module("mcp.server.streamable_http_manager")
    starlette_apps = import_module("starlette.applications")
    routing = import_module("starlette.routing")
    server = mcp_server(
        toolkit,
        name=name,
        version=version,
        instructions=instructions,
        timeout=timeout,
        mask_errors=mask_errors,
        toolset=toolset,
    )
    # Stateless: one manager answers in JSON, one in event streams (for a tools/call whose
    # client takes them); with sessions, one manager holds them all and streams.
    managers = [
        streamable.StreamableHTTPSessionManager(
            app=server,
            stateless=stateless,
            json_response=in_json,
            **({} if stateless else {"session_idle_timeout": session_idle_timeout}),
        )
        for in_json in ((True, False) if stateless and stream_calls else (stateless,))
    ]
    sessions = Sessions(max_sessions_per_token, session_idle_timeout)
    if digests is None and not allow_anonymous:
        logger.warning(
            "asgi_app serves %s without bearer tokens: anyone who can reach it can call its "
            "tools. Pass bearer_tokens=[...], or allow_anonymous=True if that is meant.",
            name or _default_name(toolkit),
        )

    async def handle(scope: Any, receive: Any, send: Any) -> None:
        if not stateless:
            await sessions.handle(managers[0].handle_request, scope, receive, send)
            return
        if scope["method"] != "POST":  # stateless: no event stream to open with GET
            body = b"Only POST: this stateless server holds no event stream open."
            await _reply(send, 405, body, [(b"allow", b"POST")])
            return
        message = await receive()  # the whole body (RequestBodyLimitMiddleware read it)
        manager = managers[-1] if _streams(scope, message) else managers[0]
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return message
            return await receive()

        await manager.handle_request(scope, replay, send)

    endpoint: Any = handle
    if stateless:  # the body is read (within the SDK's limit) before a manager is chosen
        limits = import_module("mcp.server.transport_security")
        endpoint = limits.RequestBodyLimitMiddleware(handle, managers[0].max_request_body_size)
    middleware: list[Any] = []
    if digests is not None:
        bearer = import_module("mcp.server.auth.middleware.bearer_auth")
        authentication = import_module("starlette.middleware.authentication")
        starlette_middleware = import_module("starlette.middleware")
        endpoint = bearer.RequireAuthMiddleware(endpoint, required_scopes=[])
        middleware.append(
            starlette_middleware.Middleware(
                authentication.AuthenticationMiddleware,
                backend=bearer.BearerAuthBackend(_TokenVerifier(digests)),
            )
        )
    guarded = _Guard(endpoint, origins, hosts)

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with AsyncExitStack() as stack:
            for manager in managers:
                await stack.enter_async_context(manager.run())
            yield

    return starlette_apps.Starlette(
        routes=[routing.Route(path, endpoint=guarded)], middleware=middleware, lifespan=lifespan
    )


def _streams(scope: Any, message: Any) -> bool:
    """Whether a stateless request is answered as an event stream: a tools/call (the one
    request whose handler sends messages before its result) from a client that takes one."""
    accept = b",".join(value for key, value in scope["headers"] if key == b"accept").lower()
    if b"text/event-stream" not in accept and b"*/*" not in accept:
        return False
    body = message.get("body", b"") if message.get("type") == "http.request" else b""
    if b'"tools/call"' not in body:  # a cheap look first: most requests are not calls
        return False
    try:
        request = json.loads(body)
    except ValueError:
        return False
    return isinstance(request, dict) and request.get("method") == "tools/call"


def _token_digests(tokens: Any, allow_anonymous: bool) -> tuple[bytes, ...] | None:
    if tokens is None:
        return None
    if isinstance(tokens, (str, bytes, bytearray)):
        raise TypeError(
            "bearer_tokens takes a collection of tokens, not one string: a string would make "
            f"each of its characters a valid token. Write bearer_tokens=[{tokens!r}]."
        )
    digests = []
    for token in tokens:
        if not isinstance(token, str) or not token or token != token.strip():
            raise TypeError(
                f"each bearer token must be a non-empty str without surrounding spaces, not "
                f"{type(token).__name__} {token!r}"
            )
        digests.append(hashlib.sha256(token.encode()).digest())
    if not digests and not allow_anonymous:
        raise ValueError(
            "bearer_tokens names no token (is the variable that holds them set?), so every "
            "request would be anonymous: refusing. Pass allow_anonymous=True to serve without "
            "a token on purpose."
        )
    return tuple(digests) or None


class _TokenVerifier:
    """The mcp SDK's TokenVerifier protocol over a fixed set of tokens. Both sides are hashed
    before comparing, so the time taken says nothing about a token's length or contents, and
    every accepted token is compared, whichever matches. Each token is its own client
    (`bearer-<its place in the list>`): the SDK serves a session only to the client that opened
    it."""

    def __init__(self, digests: tuple[bytes, ...]) -> None:
        self.digests = digests

    async def verify_token(self, token: str) -> Any:
        digest = hashlib.sha256(token.encode()).digest()
        found = -1
        for index, accepted in enumerate(self.digests):
            if hmac.compare_digest(digest, accepted):
                found = index
        if found < 0:
            return None
        provider = import_module("mcp.server.auth.provider")
        return provider.AccessToken(token=token, client_id=f"bearer-{found}", scopes=[])


def _patterns(values: Collection[str], option: str) -> tuple[str, ...]:
    if isinstance(values, (str, bytes, bytearray)):
        raise TypeError(f"{option} takes a collection, not one string: write {option}=[{values!r}]")
    return tuple(value.lower() for value in values)


def _matches(value: str, patterns: tuple[str, ...]) -> bool:
    """Exact, `*` (anything), or `name:*` (name with any port), as the mcp SDK's settings."""
    for pattern in patterns:
        if value == pattern or pattern == "*":
            return True
        if (
            pattern.endswith(":*")
            and value.startswith(pattern[:-1])
            and value[len(pattern) - 1 :].isdigit()
        ):
            return True
    return False


def _loopback(origin: str) -> bool:
    scheme, _, rest = origin.partition("://")
    if scheme not in ("http", "https"):
        return False
    host = (
        rest[: rest.index("]") + 1] if rest.startswith("[") and "]" in rest else rest.split(":")[0]
    )
    return host in LOOPBACK


class _Guard:
    """A plain ASGI endpoint (so Starlette hands it the raw request, as the mcp SDK's own
    streamable HTTP app does) that checks Host and Origin before anything else runs."""

    def __init__(self, app: Any, origins: tuple[str, ...], hosts: tuple[str, ...] | None) -> None:
        self.app = app
        self.origins = origins
        self.hosts = hosts

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        origin = host = None
        for key, value in scope["headers"]:
            if key == b"origin":
                origin = value.decode("latin-1").lower()
            elif key == b"host":
                host = value.decode("latin-1").lower()
        if self.hosts is not None and (host is None or not _matches(host, self.hosts)):
            await _reply(send, 421, b"Host not allowed by this server (allowed_hosts).")
            return
        if origin is not None and not (_loopback(origin) or _matches(origin, self.origins)):
            await _reply(send, 403, b"Origin not allowed by this server (allowed_origins).")
            return
        await self.app(scope, receive, send)


async def _reply(
    send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
