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
import json
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote, quote_plus

from pydantic import BaseModel

if TYPE_CHECKING:
    from ..core import ToolContext, ToolkitCore, ToolSpec

# kind -> the module that runs tools of that kind
KINDS: dict[str, str] = {
    "builtin": "toolnexus_runtime.builtins",
    "skill": "toolnexus_runtime.skills",
    "http": "toolnexus_runtime.executors.http",
    "mcp": "toolnexus_runtime.executors.mcp",  # tools snapshotted from MCP servers
}

BoundTool = Callable[[BaseModel, "ToolContext"], Awaitable[Any]]
"""A bound tool: called with the validated arguments and the call's context; returns what a
handler returns (text, data, a pydantic model), a `ToolResult` (kept as it is: its own output
and data), or raises `ToolError` for an error result."""


@dataclass(frozen=True)
class SourceOptions:
    """What `Toolkit(...)` was told about the world its bound tools reach. Each executor reads
    the fields of its kind; see `toolnexus_runtime.Toolkit` for their meaning."""

    mcp_config: str | PathLike[str] | Mapping[str, Any] | None = None
    workspace: str | PathLike[str] | None = None
    allow_shell: bool = True
    fetch_allow: Collection[str] | None = None
    output_limit: int = 30_000
    ask: Callable[..., Any] | None = None
    http_client: Any = None
    base_url: str | Mapping[str, str] | None = None


class Executor(Protocol):
    """One kind of bound tool, for one Toolkit: made once, asked for each tool's function, closed
    by `Toolkit.aclose()`."""

    def bind(self, spec: ToolSpec) -> BoundTool: ...

    async def aclose(self) -> None: ...


def binding_kind(binding: Mapping[str, Any]) -> str:
    """The kind of a binding (its one key)."""
    if len(binding) != 1:
        raise TypeError(f"a tool binding has exactly one kind, not {sorted(binding)}")
    return next(iter(binding))


def make_executor(kind: str, toolkit: ToolkitCore[Any], options: SourceOptions) -> Executor:
    """The executor for `kind`, for this toolkit."""
    module = KINDS.get(kind)
    if module is None:
        raise TypeError(
            f"this toolnexus-runtime cannot run tools of kind {kind!r} (it knows: "
            f"{', '.join(sorted(KINDS)) or 'none'}); upgrade toolnexus-runtime or regenerate the "
            "package with a matching toolnexus-gen"
        )
    factory: Callable[[ToolkitCore[Any], SourceOptions], Executor] = importlib.import_module(
        module
    ).executor
    return factory(toolkit, options)


def secret_forms(secret: str, minimum: int) -> list[str]:
    """A secret as it is and as a message may quote it, each form of `minimum` characters or
    more: JSON-escaped (also with `\\/`, as PHP writes it), escaped as in a str's or a bytes'
    repr (an HTTP library's error shows `b'Bearer sk-...\\n'`), percent-encoded (either case of
    hex). Every source hides all of them from what it reports."""
    escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    encoded = quote(secret, safe="")
    forms = [
        secret,
        escaped,
        escaped.replace("/", "\\/"),
        json.dumps(secret)[1:-1],
        repr(secret)[1:-1],
        repr(secret.encode("utf-8", "surrogateescape"))[2:-1],
        encoded,
        re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded),
        quote_plus(secret),
        quote(secret),
    ]
    return [form for form in dict.fromkeys(forms) if len(form) >= minimum]
