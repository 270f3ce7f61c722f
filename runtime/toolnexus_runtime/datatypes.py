"""The runtime's data: what a call is, what it gives back, how it fails, and what a batch of
calls runs under. It imports nothing of the runtime, so every other module (executors,
providers, the toolkit's parts) can build on it without an import circle.

Errors are results, never exceptions: a `ToolError` a handler raises sends exactly its text to
the model; a `SourceError` (a tool source that failed) is that text too, but logged as a failure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol, TypeAlias

from pydantic import BaseModel


@dataclass(frozen=True)
class ToolContext:
    """What a handler knows about the call: its id, the tool, the provider, and your own data."""

    call_id: str | None = None
    tool_name: str | None = None
    provider: str | None = None
    user: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(slots=True)
class ToolResult:
    """The outcome of one call: `output` is the text for the model; `data` the structured value."""

    output: str
    is_error: bool = False
    data: Any = None
    error_type: str | None = field(default=None, compare=False, repr=False)
    """Why a call failed, in a few words a dashboard can group by: `unknown_tool`,
    `invalid_arguments`, `timeout`, `busy`, `invalid_output`, `ToolError`, or the exception's
    type."""
    problems: tuple[tuple[tuple[Any, ...], str], ...] = field(default=(), compare=False, repr=False)
    """For invalid arguments: (place, message) of each problem, the place in the spec's names."""
    error_id: str | None = field(default=None, compare=False, repr=False)
    """For a handler that raised (not a ToolError), or a source that failed (SourceError): the
    id logged with the details."""


class ToolError(Exception):
    """Raise it in a handler to send exactly its text to the model as an error result.

    Nothing is logged: it is an answer, not a failure (for example "no such order: 42")."""


class SourceError(ToolError):
    """A tool source failed, not the tool: an MCP server out of reach or hanging, an HTTP
    endpoint that cannot be reached. Its text is the error result, as a ToolError's, but it is a
    failure: logged with an error id (and replaced by `error_message` when the toolkit has one),
    so a server that masks errors (`asgi_app`) sends the id, never the text, which can name
    internal hosts, commands and paths."""


class ToolSpec(NamedTuple):
    """One row of a generated dispatch table: a tool runs either as the handler `method`, or,
    for a tool from another source (an MCP server, an HTTP endpoint, a built-in), through its
    `binding` (`{kind: settings}`, see `toolnexus_runtime.executors`), and then `method` is None.
    """

    name: str
    model: type[BaseModel]
    method: str | None
    binding: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call a model made, as hooks see it."""

    name: str
    arguments: Any
    context: ToolContext


OnToolCall = Callable[[ToolCall], "ToolResult | None | Awaitable[ToolResult | None]"]
"""Called before each tool call; return a ToolResult to answer without running the tool."""
OnToolResult = Callable[[ToolCall, ToolResult], "None | Awaitable[None]"]
"""Called after each tool call with its result."""
ToolOutput: TypeAlias = str | BaseModel | Mapping[str, Any] | Sequence[Any] | float | None
"""A handler returns text (sent as is) or JSON-serialisable data / a pydantic model."""
ErrorMessage = Callable[[str, Exception], str]
"""`error_message(tool_name, exc)`: the text the model sees when a handler raises."""


@dataclass(frozen=True, slots=True)
class Policy:
    """How a batch of calls runs: timeout, allowed tools, hooks, where to record results."""

    timeout: float | None = None
    tools: frozenset[str] | None = None
    on_tool_call: OnToolCall | None = None
    on_tool_result: OnToolResult | None = None
    records: list[tuple[ToolCall, ToolResult]] | None = None

    @property
    def plain(self) -> bool:
        return (
            self.tools is None
            and self.on_tool_call is None
            and self.on_tool_result is None
            and self.records is None
        )


class RawCall(NamedTuple):
    """A tool call as a provider sent it."""

    name: str
    arguments: Any
    call_id: Any


class Provider(Protocol):
    """A provider module's round-trip half (see `toolnexus_runtime.providers`)."""

    @property
    def NAME(self) -> str: ...

    def calls(self, payload: Any) -> list[RawCall]: ...

    def replies(self, calls: Sequence[RawCall], results: Sequence[ToolResult]) -> Any: ...


EMPTY_CONTEXT = ToolContext()


def get(obj: Any, *names: str) -> Any:
    """A field of a provider dict or SDK object, trying each spelling (camelCase, snake_case)."""
    for name in names:
        value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
        if value is not None:
            return value
    return None
