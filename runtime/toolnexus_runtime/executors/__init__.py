"""Executors: how a tool runs when it is not a handler method.

A generated dispatch table names, for each tool, either a method of `ToolHandlers` or a
*binding*: `{kind: settings}` written at build time from the tool's source (an MCP server, an
HTTP endpoint, a built-in). `Toolkit` makes one executor per kind its table uses, when it is
made, and asks it for each bound tool's function; `execute` then runs that function exactly as
it runs a handler (arguments validated by the tool's model first, the same errors, timeouts,
hooks and tracing), so every entry point serves every kind of tool through one path.

Adding a kind of source is one module here (`executor(toolkit, options) -> Executor`) and one
line in `KINDS`. Modules are imported only when a table uses their kind.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from .base import BoundTool, Executor, SourceOptions, ToolkitView, secret_forms

__all__ = [
    "KINDS",
    "BoundTool",
    "Executor",
    "SourceOptions",
    "ToolkitView",
    "binding_kind",
    "make_executor",
    "secret_forms",
]

# kind -> the module that runs tools of that kind
KINDS: dict[str, str] = {
    "builtin": "toolnexus_runtime.builtins",
    "skill": "toolnexus_runtime.skills",
    "http": "toolnexus_runtime.executors.http",
    "mcp": "toolnexus_runtime.executors.mcp",  # tools snapshotted from MCP servers
}


def binding_kind(binding: Mapping[str, Any]) -> str:
    """The kind of a binding (its one key)."""
    if len(binding) != 1:
        raise TypeError(f"a tool binding has exactly one kind, not {sorted(binding)}")
    return next(iter(binding))


def make_executor(kind: str, toolkit: ToolkitView[Any], options: SourceOptions) -> Executor:
    """The executor for `kind`, for this toolkit."""
    module = KINDS.get(kind)
    if module is None:
        raise TypeError(
            f"this toolnexus-runtime cannot run tools of kind {kind!r} (it knows: "
            f"{', '.join(sorted(KINDS)) or 'none'}); upgrade toolnexus-runtime or regenerate the "
            "package with a matching toolnexus-gen"
        )
    factory: Callable[[ToolkitView[Any], SourceOptions], Executor] = importlib.import_module(
        module
    ).executor
    return factory(toolkit, options)
