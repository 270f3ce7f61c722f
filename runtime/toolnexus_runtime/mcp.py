"""Serve a Toolkit as an MCP server with the official `mcp` package, imported only when used
(`pip install 'toolnexus-runtime[mcp]'`).

tools/list answers exactly the generated `schemas/mcp.json`; tools/call goes through
`Toolkit.execute`, so an unknown tool, bad arguments or a failing handler come back as `isError`
results. A handler's structured value is sent as `structuredContent` (checked against the tool's
outputSchema when it has one), always with a text copy. Every call has a deadline (`timeout=`,
60 s unless the toolkit sets its own) and sync handlers share the toolkit's bounded threads.

Over HTTP (`asgi_app`) the server is reachable by strangers, so by default it refuses what a
browser page could abuse (a foreign `Origin`: DNS rebinding), answers only POST, checks bearer
tokens in constant time with the SDK's bearer-auth middleware, and masks an unexpected
exception's text (the client gets an error id; the log has the traceback under that id).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
from collections.abc import Collection, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from importlib import import_module
from typing import Any

from .core import ToolContext, ToolkitCore, ToolResult

logger = logging.getLogger("toolnexus_runtime")

DEFAULT_TIMEOUT = 60.0
"""Seconds a call may take on a server when the toolkit sets no timeout of its own (the MCP
clients' own request timeout is typically 60 s too)."""
LOOPBACK = ("localhost", "127.0.0.1", "[::1]")


def _require_mcp() -> tuple[Any, Any]:
    try:
        lowlevel = import_module("mcp.server.lowlevel.server")
        types = import_module("mcp.types")
    except ImportError as exc:  # pragma: no cover (depends on the environment)
        raise ImportError(
            "Serving over MCP needs the official MCP SDK: pip install 'toolnexus-runtime[mcp]'"
        ) from exc
    return lowlevel, types


def _structured(
    name: str, result: ToolResult, schema: Mapping[str, Any] | None
) -> tuple[ToolResult, Any]:
    """The structuredContent for a result, or an error result when it breaks the outputSchema."""
    data = result.data
    if schema is None:
        return result, data if isinstance(data, dict) else None
    if data is None:
        try:
            data = json.loads(result.output)
        except ValueError:
            data = None
    problem = None
    if not isinstance(data, dict):
        problem = "it returned no object, but the tool declares an outputSchema"
    else:
        jsonschema = import_module("jsonschema")  # a dependency of the mcp package
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(schema).iter_errors(data)
        )
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path) or "(root)"
            problem = f"its result does not match the outputSchema at {where}: {error.message}"
    if problem is not None:
        return ToolResult(f"Tool '{name}' failed: {problem}.", True), None
    return result, data


@contextmanager
def _trace_parent(meta: Any) -> Iterator[None]:
    """Make an incoming `params._meta.traceparent` (W3C trace context) the parent of the tool's
    span, when OpenTelemetry is installed (it is a dependency of the mcp package)."""
    if not meta or "traceparent" not in meta:
        yield
        return
    try:
        from opentelemetry import context, propagate
    except ImportError:  # pragma: no cover (depends on the environment)
        yield
        return
    token = context.attach(propagate.extract(dict(meta)))
    try:
        yield
    finally:
        context.detach(token)


def _default_name(toolkit: ToolkitCore[Any]) -> str:
    return toolkit.SCHEMAS or "tools"


def _masked(name: str, result: ToolResult) -> ToolResult:
    return ToolResult(
        f"Tool '{name}' failed (error id {result.error_id}). The details are in the server's log.",
        True,
        None,
        result.error_type,
        (),
        result.error_id,
    )


def mcp_server(
    toolkit: ToolkitCore[Any],
    *,
    name: str | None = None,
    version: str = "",
    instructions: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    mask_errors: bool = False,
) -> Any:
    """An `mcp` low-level `Server` for `toolkit`, to run on any transport the SDK offers.

    timeout: seconds each call may take when the toolkit sets none (None: no limit). A sync
    handler runs in one of the toolkit's `max_threads` worker threads; a call that finds none
    free within its timeout answers "busy". mask_errors: an unexpected exception's text stays in
    the log, and the client gets `Tool '<name>' failed (error id ...)` (unless the toolkit has
    its own `error_message`); a ToolError's text is the handler's answer and passes as is."""
    lowlevel, types = _require_mcp()
    tools = toolkit._provider_schema("mcp")
    listed = types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools])
    # by the spec's tool name, which is what execute answers under
    output_schemas = {
        toolkit.unalias("mcp", t["name"], {})[0]: t.get("outputSchema") for t in tools
    }

    async def list_tools(ctx: Any, params: Any) -> Any:
        return listed

    async def call_tool(ctx: Any, params: Any) -> Any:
        tool_name, arguments = toolkit.unalias("mcp", params.name, params.arguments or {})
        context = ToolContext(
            call_id=None if ctx.request_id is None else str(ctx.request_id),
            tool_name=tool_name,
            provider="mcp",
        )
        deadline = toolkit.timeout if toolkit.timeout is not None else timeout
        with _trace_parent(getattr(params, "meta", None)):
            result = await toolkit.execute(
                tool_name, arguments, context, timeout=deadline, offload=True
            )
        structured = None
        if result.is_error:
            if mask_errors and result.error_id is not None and toolkit.error_message is None:
                result = _masked(params.name, result)
        else:
            schema = output_schemas.get(tool_name)
            result, structured = _structured(params.name, result, schema)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.output)],
            structured_content=structured,
            is_error=result.is_error,
        )

    return lowlevel.Server(
        name or _default_name(toolkit),
        version=version,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def aserve_mcp(
    toolkit: ToolkitCore[Any],
    *,
    name: str | None = None,
    version: str = "",
    instructions: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> None:
    """Serve `toolkit` over MCP on stdio until the client disconnects."""
    stdio = import_module("mcp.server.stdio")
    server = mcp_server(
        toolkit, name=name, version=version, instructions=instructions, timeout=timeout
    )
    async with stdio.stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_mcp(
    toolkit: ToolkitCore[Any],
    *,
    name: str | None = None,
    version: str = "",
    instructions: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> None:
    """Serve `toolkit` over MCP on stdio until the client disconnects (blocking)."""
    asyncio.run(
        aserve_mcp(toolkit, name=name, version=version, instructions=instructions, timeout=timeout)
    )


def asgi_app(
    toolkit: ToolkitCore[Any],
    *,
    bearer_tokens: Collection[str] | None = None,
    allow_anonymous: bool = False,
    allowed_origins: Collection[str] = (),
    allowed_hosts: Collection[str] | None = None,
    mask_errors: bool = True,
    timeout: float | None = DEFAULT_TIMEOUT,
    path: str = "/mcp",
    name: str | None = None,
    version: str = "",
    instructions: str | None = None,
) -> Any:
    """An ASGI application serving `toolkit` over MCP streamable HTTP at `path`.

    Stateless (no session survives a request), so any number of `uvicorn --workers` processes or
    replicas behind a load balancer can answer any request; responses are plain JSON, and any
    method but POST is 405 (no event stream is held open). What it refuses by default:
    - bearer_tokens: a collection of accepted tokens; a request without `Authorization: Bearer
      <one of them>` gets 401 and runs nothing. An empty collection (an unset variable) is a
      ValueError unless `allow_anonymous=True`; None serves without a token (logged as a
      warning unless `allow_anonymous=True` says that is meant).
    - a request whose `Origin` (sent by browsers) is not this machine's (http(s)://localhost,
      127.0.0.1 or [::1], any port) nor in `allowed_origins` gets 403 (DNS rebinding);
      `allowed_origins=["*"]` allows any. Clients that send no Origin are not affected.
    - allowed_hosts: when given, a request whose `Host` is not in it gets 421 ("name:*" allows
      any port of name).
    - mask_errors (default True): see `mcp_server`; `timeout` too."""
    digests = _token_digests(bearer_tokens, allow_anonymous)
    origins = _patterns(allowed_origins, "allowed_origins")
    hosts = None if allowed_hosts is None else _patterns(allowed_hosts, "allowed_hosts")
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
    )
    manager = streamable.StreamableHTTPSessionManager(
        app=server, stateless=True, json_response=True
    )
    if digests is None and not allow_anonymous:
        logger.warning(
            "asgi_app serves %s without bearer tokens: anyone who can reach it can call its "
            "tools. Pass bearer_tokens=[...], or allow_anonymous=True if that is meant.",
            name or _default_name(toolkit),
        )

    async def handle(scope: Any, receive: Any, send: Any) -> None:
        if scope["method"] != "POST":  # stateless JSON: no event stream to open with GET
            body = b"Only POST: this server answers JSON, with no event stream."
            await _reply(send, 405, body, [(b"allow", b"POST")])
            return
        await manager.handle_request(scope, receive, send)

    endpoint: Any = handle
    middleware: list[Any] = []
    if digests is not None:
        bearer = import_module("mcp.server.auth.middleware.bearer_auth")
        authentication = import_module("starlette.middleware.authentication")
        starlette_middleware = import_module("starlette.middleware")
        endpoint = bearer.RequireAuthMiddleware(handle, required_scopes=[])
        middleware.append(
            starlette_middleware.Middleware(
                authentication.AuthenticationMiddleware,
                backend=bearer.BearerAuthBackend(_TokenVerifier(digests)),
            )
        )
    guarded = _Guard(endpoint, origins, hosts)

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with manager.run():
            yield

    return starlette_apps.Starlette(
        routes=[routing.Route(path, endpoint=guarded)], middleware=middleware, lifespan=lifespan
    )


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
    every accepted token is compared, whichever matches."""

    def __init__(self, digests: tuple[bytes, ...]) -> None:
        self.digests = digests

    async def verify_token(self, token: str) -> Any:
        digest = hashlib.sha256(token.encode()).digest()
        found = False
        for accepted in self.digests:
            found |= hmac.compare_digest(digest, accepted)
        if not found:
            return None
        provider = import_module("mcp.server.auth.provider")
        return provider.AccessToken(token=token, client_id="bearer", scopes=[])


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
