"""Serve a Toolkit as an MCP server with the official `mcp` package, imported only when used
(`pip install 'toolnexus-runtime[mcp]'`).

tools/list answers exactly the generated `schemas/mcp.json`; tools/call goes through
`Toolkit.execute`, so an unknown tool, bad arguments or a failing handler come back as `isError`
results. A handler's structured value is sent as `structuredContent` (checked against the tool's
outputSchema when it has one), always with a text copy.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Collection, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from importlib import import_module
from typing import Any

from .core import ToolContext, ToolkitCore, ToolResult


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


def mcp_server(
    toolkit: ToolkitCore[Any],
    *,
    name: str | None = None,
    version: str = "",
    instructions: str | None = None,
) -> Any:
    """An `mcp` low-level `Server` for `toolkit`, to run on any transport the SDK offers."""
    lowlevel, types = _require_mcp()
    tools = toolkit._provider_schema("mcp")
    listed = types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools])
    output_schemas = {t["name"]: t.get("outputSchema") for t in tools}

    async def list_tools(ctx: Any, params: Any) -> Any:
        return listed

    async def call_tool(ctx: Any, params: Any) -> Any:
        tool_name, arguments = toolkit.unalias("mcp", params.name, params.arguments or {})
        context = ToolContext(
            call_id=None if ctx.request_id is None else str(ctx.request_id),
            tool_name=tool_name,
            provider="mcp",
        )
        with _trace_parent(getattr(params, "meta", None)):
            result = await toolkit.execute(tool_name, params.arguments or {}, context, offload=True)
        structured = None
        if not result.is_error:
            result, structured = _structured(tool_name, result, output_schemas.get(tool_name))
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
) -> None:
    """Serve `toolkit` over MCP on stdio until the client disconnects."""
    stdio = import_module("mcp.server.stdio")
    server = mcp_server(toolkit, name=name, version=version, instructions=instructions)
    async with stdio.stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_mcp(
    toolkit: ToolkitCore[Any],
    *,
    name: str | None = None,
    version: str = "",
    instructions: str | None = None,
) -> None:
    """Serve `toolkit` over MCP on stdio until the client disconnects (blocking)."""
    asyncio.run(aserve_mcp(toolkit, name=name, version=version, instructions=instructions))


def asgi_app(
    toolkit: ToolkitCore[Any],
    *,
    bearer_tokens: Collection[str] | None = None,
    path: str = "/mcp",
    name: str | None = None,
    version: str = "",
    instructions: str | None = None,
) -> Any:
    """An ASGI application serving `toolkit` over MCP streamable HTTP at `path`.

    Stateless (no session survives a request), so any number of `uvicorn --workers` processes or
    replicas behind a load balancer can answer any request. With `bearer_tokens`, a request
    without `Authorization: Bearer <one of them>` gets 401 and runs nothing. Responses are plain
    JSON (no server-sent event stream is kept open)."""
    streamable = import_module("mcp.server.streamable_http_manager")
    starlette_apps = import_module("starlette.applications")
    routing = import_module("starlette.routing")
    server = mcp_server(toolkit, name=name, version=version, instructions=instructions)
    manager = streamable.StreamableHTTPSessionManager(
        app=server, stateless=True, json_response=True
    )
    accepted = [token.encode() for token in bearer_tokens or ()]
    if bearer_tokens is not None and not accepted:
        raise ValueError("bearer_tokens names no token; pass None to serve without a token")

    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        if accepted and not _authorized(scope, accepted):
            await _unauthorized(send)
            return
        await manager.handle_request(scope, receive, send)

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with manager.run():
            yield

    return starlette_apps.Starlette(
        routes=[routing.Route(path, endpoint=_Endpoint(endpoint))], lifespan=lifespan
    )


class _Endpoint:
    """A plain ASGI callable, so Starlette hands it the raw request (as the mcp SDK's own
    streamable HTTP app does)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def _authorized(scope: Any, accepted: list[bytes]) -> bool:
    header = next((v for k, v in scope.get("headers", ()) if k == b"authorization"), b"")
    scheme, _, token = header.partition(b" ")
    if scheme.lower() != b"bearer" or not token:
        return False
    token = token.strip()
    # Compare with every accepted token, in constant time, whichever matches.
    return any([hmac.compare_digest(token, candidate) for candidate in accepted])


async def _unauthorized(send: Any) -> None:
    body = b'{"error": "unauthorized", "error_description": "a valid bearer token is required"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer error="invalid_token"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
