"""The MCP server for a Toolkit (`mcp_server`), on the official `mcp` package's low-level
`Server`, imported only when used (`pip install 'toolnexus-runtime[mcp]'`). Its transports:
stdio (`serve_mcp`, in toolnexus_runtime.mcp) and streamable HTTP (mcp_http.py).

tools/list answers exactly the generated `schemas/mcp.json` (or, with `toolset=`, that toolset's
part of it); tools/call goes through `Toolkit.execute`, so an unknown tool (one outside the
toolset too), bad arguments or a failing handler come back as `isError` results. A handler's
structured value is sent as `structuredContent` (checked against the tool's outputSchema when it
has one), always with a text copy; images, audio, embedded resources and resource links
(`toolnexus_runtime.content`, a handler's or an upstream MCP server's) as MCP content. Every call
has a deadline (`timeout=`, 60 s unless the toolkit sets its own) and sync handlers share the
toolkit's bounded threads.

While a call runs, `ctx.report_progress(...)` reaches the client as `notifications/progress`
(when its request carried a progress token) and `ctx.log(level, ...)` as `notifications/message`
(the server declares the logging capability: `logging/setLevel` sets the lowest level a session
gets, `info` until it does; on a stateless HTTP server each request is its own session, so
`info`); all of them are sent before the call's result.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib import import_module
from typing import Any

from .content import to_mcp
from .core import ToolkitCore
from .datatypes import ToolContext, ToolResult
from .failures import unknown_tool
from .reporting import LEVELS, Relay
from .toolsets import subset

logger = logging.getLogger("toolnexus_runtime")

DEFAULT_TIMEOUT = 60.0
"""Seconds a call may take on a server when the toolkit sets no timeout of its own (the MCP
clients' own request timeout is typically 60 s too)."""
DEFAULT_LOG_LEVEL = "info"
"""The lowest level of log message a session gets before it sends logging/setLevel."""
LEVEL_KEY = "toolnexus_runtime.log_level"


def _require_mcp() -> tuple[Any, Any]:
    try:
        lowlevel = import_module("mcp.server.lowlevel.server")
        types = import_module("mcp.types")
    except ImportError as exc:  # pragma: no cover (depends on the environment)
        raise ImportError(
            "Serving over MCP needs the official MCP SDK: pip install 'toolnexus-runtime[mcp]'"
        ) from exc
    return lowlevel, types


def _output_validator(schema: Mapping[str, Any] | None) -> Any:
    """A validator for a tool's outputSchema, made once per tool. Its registry is empty, as in
    the mcp SDK's client: a reference resolves within the schema or not at all; nothing is
    fetched (jsonschema's default would open any URL a `$id` or reference names, or a file)."""
    if schema is None:
        return None
    jsonschema = import_module("jsonschema")  # a dependency of the mcp package
    referencing = import_module("referencing")
    return jsonschema.Draft202012Validator(schema, registry=referencing.Registry())


def wraps_result(schema: Any) -> bool:
    """Whether an outputSchema is MCP's wrapper of a result that is no object (a list, a
    string): `{"type": "object", "properties": {"result": ...}, "required": ["result"]}`, as
    the mcp SDK writes one and `toolnexus-gen import openapi` writes an array response."""
    return (
        isinstance(schema, Mapping)
        and isinstance(schema.get("properties"), Mapping)
        and list(schema["properties"]) == ["result"]
        and schema.get("required") == ["result"]
    )


def _structured(name: str, result: ToolResult, validator: Any) -> tuple[ToolResult, Any]:
    """The structuredContent for a result, or an error result when it breaks the outputSchema."""
    data = result.data
    if validator is None:
        return result, data if isinstance(data, dict) else None
    if data is None and not result.content:
        try:
            data = json.loads(result.output)
        except ValueError:
            data = None
    problem = None
    if data is not None and not isinstance(data, dict) and wraps_result(validator.schema):
        data = {"result": data}  # a list (or a scalar) under MCP's wrapper, as the schema says
    if not isinstance(data, dict):
        problem = "it returned no object, but the tool declares an outputSchema"
    else:
        jsonschema = import_module("jsonschema")
        unresolvable = import_module("referencing.exceptions").Unresolvable
        try:
            error = jsonschema.exceptions.best_match(validator.iter_errors(data))
        except unresolvable as exc:
            error = None
            problem = f"its outputSchema has a reference that does not resolve within it ({exc})"
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


def _connection_state(ctx: Any) -> dict[str, Any] | None:
    """The session's scratch state (the SDK keeps it on the connection, across requests)."""
    session = getattr(ctx, "session", None)
    state = getattr(getattr(session, "_connection", None), "state", None)
    return state if isinstance(state, dict) else None


def _log_levels(ctx: Any) -> frozenset[str]:
    """The levels of log message this request's client gets: on 2026-07-28 connections what its
    request opted in to (the SDK's rule), before that what logging/setLevel asked (else info)."""
    try:
        allowed = frozenset(
            import_module("mcp.server.connection").allowed_log_levels(
                getattr(ctx, "protocol_version", ""), getattr(ctx, "meta", None)
            )
        )
    except (ImportError, AttributeError):  # pragma: no cover (an SDK without the rule)
        allowed = frozenset(LEVELS)
    if len(allowed) < len(LEVELS):  # per-request opt-in: it already says which
        return allowed
    state = _connection_state(ctx)
    minimum = (state or {}).get(LEVEL_KEY, DEFAULT_LOG_LEVEL)
    return frozenset(LEVELS[LEVELS.index(minimum) :])


def _notifier(ctx: Any, types: Any) -> Any:
    """Sends one call's progress and log messages on its request's channel (the POST's event
    stream over HTTP)."""
    from pydantic_core import to_jsonable_python

    levels: frozenset[str] | None = None

    async def send(item: tuple[Any, ...]) -> None:
        nonlocal levels
        if item[0] == "progress":
            await ctx.session.report_progress(item[1], item[2], item[3])
            return
        if levels is None:  # read when the call first logs (most calls never do)
            levels = _log_levels(ctx)
        if item[1] in levels:
            params = types.LoggingMessageNotificationParams(
                level=item[1], data=to_jsonable_python(item[2], fallback=str), logger=item[3]
            )
            await ctx.session.send_notification(
                types.LoggingMessageNotification(params=params), related_request_id=ctx.request_id
            )

    return send


def mcp_server(
    toolkit: ToolkitCore[Any],
    *,
    name: str | None = None,
    version: str = "",
    instructions: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    mask_errors: bool = False,
    toolset: str | None = None,
) -> Any:
    """An `mcp` low-level `Server` for `toolkit`, to run on any transport the SDK offers.

    timeout: seconds each call may take when the toolkit sets none (None: no limit). A sync
    handler runs in one of the toolkit's `max_threads` worker threads; a call that finds none
    free within its timeout answers "busy". mask_errors: an unexpected exception's text stays in
    the log, and the client gets `Tool '<name>' failed (error id ...)` (unless the toolkit has
    its own `error_message`), and so does a tool source's failure (`SourceError`: an upstream
    MCP server or HTTP endpoint out of reach, whose text can name internal hosts and commands);
    a ToolError's text is the handler's answer (an upstream's isError result too): it passes.
    toolset: serve only that toolset's tools (the package's `TOOLSETS`): tools/list lists them
    and tools/call answers any other tool as unknown (an unknown toolset is a ValueError)."""
    lowlevel, types = _require_mcp()
    tools = toolkit._provider_schema("mcp")
    allowed = toolkit._tool_subset(None, toolset)  # spec names; None: every tool
    if allowed is not None:
        sent = toolkit.sent_names("mcp")
        tools = subset("mcp", tools, {sent.get(name, name) for name in allowed})
    listed = types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools])
    # by the spec's tool name, which is what execute answers under
    output_schemas = {
        toolkit.unalias("mcp", t["name"], {})[0]: t.get("outputSchema") for t in tools
    }
    validators = {tool: _output_validator(schema) for tool, schema in output_schemas.items()}
    available = ", ".join(sorted(t["name"] for t in tools)) or "(none)"

    async def list_tools(ctx: Any, params: Any) -> Any:
        return listed

    async def call_tool(ctx: Any, params: Any) -> Any:
        tool_name, arguments = toolkit.unalias("mcp", params.name, params.arguments or {})
        relay = Relay(_notifier(ctx, types), tool_name)
        context = ToolContext(
            call_id=None if ctx.request_id is None else str(ctx.request_id),
            tool_name=tool_name,
            provider="mcp",
            reporter=relay,
        )
        deadline = toolkit.timeout if toolkit.timeout is not None else timeout
        try:
            if allowed is not None and tool_name not in allowed:
                result = unknown_tool(params.name, available)
            else:
                with _trace_parent(getattr(params, "meta", None)):
                    result = await toolkit.execute(
                        tool_name, arguments, context, timeout=deadline, offload=True
                    )
        finally:
            await relay.close()  # every message goes before the result
        structured = None
        if result.is_error:
            if mask_errors and result.error_id is not None and toolkit.error_message is None:
                result = _masked(params.name, result)
        else:
            result, structured = _structured(params.name, result, validators.get(tool_name))
        if result.content and not result.is_error:
            content = [to_mcp(part) for part in result.content]
        else:
            content = [{"type": "text", "text": result.output}]
        return types.CallToolResult.model_validate(
            {"content": content, "structuredContent": structured, "isError": result.is_error}
        )

    async def set_level(ctx: Any, params: Any) -> Any:
        state = _connection_state(ctx)
        if state is not None:
            state[LEVEL_KEY] = params.level
        return types.EmptyResult()

    with warnings.catch_warnings():
        # logging/setLevel is deprecated from protocol 2026-07-28 on; clients of the versions
        # before it (all of today's) still send it.
        warnings.simplefilter(
            "ignore", import_module("mcp.shared.exceptions").MCPDeprecationWarning
        )
        return lowlevel.Server(
            name or _default_name(toolkit),
            version=version,
            instructions=instructions,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_set_logging_level=set_level,
        )
