"""OpenTelemetry spans for tool calls, after the GenAI semantic conventions ("Execute tool span"):
`execute_tool <tool>`, kind INTERNAL, `gen_ai.operation.name`, `gen_ai.tool.name`,
`gen_ai.tool.call.id`, `gen_ai.tool.description`, `gen_ai.tool.type`, and `error.type` with an
ERROR status when the call failed. Arguments, results and error text (the status description)
are recorded only when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` (they may be
sensitive); without it no span carries them, and `error.type` says what went wrong.

`Toolkit(handlers, instrument=True)` uses the global TracerProvider; pass a TracerProvider to use
that one. The traced `execute` and `execute_sync` replace the plain ones on that toolkit only, so
a toolkit without `instrument` runs exactly the code it ran before: tracing off costs nothing.
Needs `opentelemetry-api` (`pip install 'toolnexus-runtime[otel]'`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ._version import __version__
from .core import ToolkitCore
from .datatypes import ToolContext, ToolResult

CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def trace_calls(toolkit: ToolkitCore[Any], provider: Any) -> None:
    try:
        from opentelemetry import trace
        from opentelemetry.trace import SpanKind, Status, StatusCode
    except ImportError as exc:  # pragma: no cover (depends on the environment)
        raise ImportError(
            "instrument= needs OpenTelemetry: pip install 'toolnexus-runtime[otel]'"
        ) from exc
    if provider is True:
        tracer = trace.get_tracer("toolnexus_runtime", __version__)
    else:
        tracer = provider.get_tracer("toolnexus_runtime", __version__)
    descriptions = toolkit.descriptions()
    capture = os.environ.get(CAPTURE, "").strip().lower() == "true"
    execute, execute_sync = toolkit.execute, toolkit.execute_sync

    @contextmanager
    def span(name: str, args: Any, ctx: ToolContext | None) -> Iterator[Any]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function",
        }
        if ctx is not None and ctx.call_id is not None:
            attributes["gen_ai.tool.call.id"] = ctx.call_id
        if descriptions.get(name):
            attributes["gen_ai.tool.description"] = descriptions[name]
        if capture:
            attributes["gen_ai.tool.call.arguments"] = _text(args)
        with tracer.start_as_current_span(
            f"execute_tool {name}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as current:
            yield current

    def finish(current: Any, result: ToolResult) -> ToolResult:
        if result.is_error:
            current.set_attribute("error.type", result.error_type or "tool_error")
            # The error text can hold what the arguments held (or a secret): it is content.
            current.set_status(Status(StatusCode.ERROR, result.output if capture else None))
        if capture:
            current.set_attribute("gen_ai.tool.call.result", result.output)
        return result

    async def traced(
        name: str, args: Any, ctx: ToolContext | None = None, **options: Any
    ) -> ToolResult:
        with span(name, args, ctx) as current:
            return finish(current, await execute(name, args, ctx, **options))

    def traced_sync(
        name: str, args: Any, ctx: ToolContext | None = None, **options: Any
    ) -> ToolResult:
        with span(name, args, ctx) as current:
            return finish(current, execute_sync(name, args, ctx, **options))

    toolkit.execute = traced  # type: ignore[method-assign]
    toolkit.execute_sync = traced_sync  # type: ignore[method-assign]


def _text(args: Any) -> str:
    if isinstance(args, str):
        return args
    try:
        return json.dumps(args, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(args)
