"""`ToolkitCore`: a toolkit's parts put together, and its lifecycle.

Each part is one module that builds on the one before: what is registered (registry.py), how
one call runs (execution.py: `execute` and `execute_sync` share `_start` and `_run`, so a fix
lands once), how a batch of calls runs under a policy (batches.py), how a provider's payload
becomes calls and replies (roundtrips.py). The data they share (results, context, errors) is in
datatypes.py, which imports nothing of the runtime; schema loading in schemas.py.

This module also keeps the names code written against the runtime's first layout imports from
it: a generated package's dispatch.py imports `load_schema` from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from .datatypes import (
    EMPTY_CONTEXT,
    ErrorMessage,
    OnToolCall,
    OnToolResult,
    Policy,
    Provider,
    RawCall,
    SourceError,
    ToolCall,
    ToolContext,
    ToolError,
    ToolOutput,
    ToolResult,
    ToolSpec,
    get,
)
from .execution import DEFAULT_THREADS
from .executors import SourceOptions
from .failures import default_error_message, unknown_tool
from .portal import run_sync
from .roundtrips import RoundTrips
from .schemas import load_schema
from .watch import BLOCKING_SECONDS

__all__ = [
    "BLOCKING_SECONDS",
    "DEFAULT_THREADS",
    "EMPTY_CONTEXT",
    "ErrorMessage",
    "OnToolCall",
    "OnToolResult",
    "Policy",
    "Provider",
    "RawCall",
    "SourceError",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "ToolResult",
    "ToolSpec",
    "ToolkitCore",
    "default_error_message",
    "get",
    "load_schema",
    "unknown_tool",
]

T = TypeVar("T")
H = TypeVar("H")


class ToolkitCore(RoundTrips[H]):
    """Routes a tool call by name to a handler method, validating its arguments first.

    A generated package subclasses `toolnexus_runtime.Toolkit` with its table (`TOOLS`) and the
    package that holds its provider schemas (`SCHEMAS`); `tools=` serves without generation.
    """

    def __init__(
        self,
        handlers: H,
        *,
        tools: Mapping[str, ToolSpec] | None = None,
        timeout: float | None = None,
        error_message: ErrorMessage | None = None,
        max_threads: int = DEFAULT_THREADS,
        sources: SourceOptions | None = None,
    ) -> None:
        self._set_limits(timeout, error_message, max_threads)  # checked before any tool binds
        self._register(handlers, tools, sources)
        self._load_aliases()

    # -- lifecycle: what the bound tools hold open (MCP sessions, HTTP clients) ---------------

    async def aclose(self) -> None:
        """Close what the toolkit's bound tools hold open (MCP sessions, HTTP clients); calling
        a bound tool afterwards opens them again."""
        for executor in self._executors.values():
            await executor.aclose()

    def close(self) -> None:
        """Sync twin of `aclose`."""
        if self._executors:
            run_sync(self.aclose())

    async def __aenter__(self: T) -> T:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
