"""The error results of a call that fails before, or instead of, running its handler: an unknown
tool, invalid arguments, a deadline missed, no thread to be had. Each is a `ToolResult` whose
text tells the model what to do next, and whose `error_type` a dashboard can group by.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from .datatypes import ToolResult

logger = logging.getLogger("toolnexus_runtime")


def unknown_tool(name: str, available: str) -> ToolResult:
    return ToolResult(
        f"Unknown tool '{name}'. Available tools: {available}.", True, None, "unknown_tool"
    )


def default_error_message(name: str, exc: Exception) -> str:
    return f"Tool '{name}' failed: {type(exc).__name__}: {exc}"


def _invalid(name: str, exc: ValidationError) -> ToolResult:
    problems = tuple((tuple(e["loc"]), e["msg"]) for e in exc.errors(include_url=False))
    return ToolResult(_invalid_text(name, problems), True, None, "invalid_arguments", problems)


def _invalid_text(name: str, problems: Sequence[tuple[tuple[Any, ...], str]]) -> str:
    listed = "; ".join(
        f"{'.'.join(str(part) for part in loc) or '(arguments)'}: {message}"
        for loc, message in problems
    )
    return f"Invalid arguments for tool '{name}': {listed}. Fix the arguments and call it again."


def _not_json(name: str, exc: ValueError) -> ToolResult:
    return ToolResult(
        f"Invalid arguments for tool '{name}': not valid JSON ({exc}). "
        "Send the arguments as a JSON object.",
        True,
        None,
        "invalid_arguments",
    )


def _timed_out(name: str, timeout: float, in_thread: bool) -> ToolResult:
    logger.warning(
        "Tool %r did not finish within %g seconds; %s",
        name,
        timeout,
        "its thread runs on until the handler returns" if in_thread else "it was cancelled",
        extra={"tool_name": name},
    )
    return ToolResult(
        f"Tool '{name}' did not finish within {timeout:g} seconds.", True, None, "timeout"
    )


def _busy(name: str, timeout: float, threads: float) -> ToolResult:
    logger.warning(
        "Tool %r could not start within %g seconds: all %g threads for sync handlers are busy",
        name,
        timeout,
        threads,
        extra={"tool_name": name},
    )
    return ToolResult(
        f"Tool '{name}' could not start within {timeout:g} seconds: all {threads:g} threads for "
        "sync handlers are busy. Try again later.",
        True,
        None,
        "busy",
    )
