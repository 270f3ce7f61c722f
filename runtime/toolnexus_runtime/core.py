"""The execution core: results, context, errors, and the validated call of one handler.

Errors are results, never exceptions: an unknown tool, invalid arguments, unparsable JSON, a
handler that raises or times out all give `ToolResult(is_error=True)` with a message the model
can act on. A `ToolError` sends exactly its text; any other exception is logged with its
traceback (and an error id) and the model gets `Tool '<name>' failed: <Type>: <message>`, or what
`error_message(name, exc)` returns.

Where a call runs: validation and a sync handler without a timeout run in the caller's thread; an
async handler (or an awaitable a plain `def` returns) on the caller's loop for `execute`, on the
runtime's loop for `execute_sync` (see portal.py); a sync handler with a timeout, or offloaded, in
a worker thread. Both entry points share `_start` and `_run`, so a fix lands once.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import threading
import time
import types
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from inspect import isawaitable, iscoroutinefunction
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeAlias, TypeVar, cast
from weakref import WeakKeyDictionary

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from . import content as _content
from . import reporting
from .content import Part
from .executors import Executor, SourceOptions, binding_kind, make_executor
from .portal import (
    Started,
    capacity_limiter,
    in_thread,
    on_portal,
    run_sync,
    spawn,
    submit,
    within,
)

if TYPE_CHECKING:
    from anyio import CapacityLimiter

    from .reporting import Reporter

T = TypeVar("T")
H = TypeVar("H")

logger = logging.getLogger("toolnexus_runtime")

DEFAULT_THREADS = 40
"""How many sync handlers a toolkit runs in worker threads at once on one event loop (anyio's
default thread limit); `Toolkit(..., max_threads=)` changes it."""
BLOCKING_SECONDS = 1.0
"""An async handler that holds a shared event loop this long in one step is reported."""


@dataclass(frozen=True)
class ToolContext:
    """What a handler knows about the call: its id, the tool, the provider, and your own data."""

    call_id: str | None = None
    tool_name: str | None = None
    provider: str | None = None
    user: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    reporter: Reporter | None = field(default=None, compare=False, repr=False)
    """Who hears the call's progress and log messages (our MCP server sets one per call)."""

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Tell the caller how far the call has got (an MCP client gets notifications/progress
        when it asked for them); nothing happens when nobody listens. Any thread may call it."""
        if self.reporter is not None:
            self.reporter.progress(progress, total, message)

    def log(self, level: str, message: Any, *, logger: str | None = None) -> None:
        """A log message for the caller (`debug`, `info`, `notice`, `warning`, `error`,
        `critical`, `alert`, `emergency`): an MCP client gets notifications/message; without
        one it goes to the `toolnexus_runtime.tools` logger. Any thread may call it."""
        reporting.log(self, level, message, logger)


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
    content: tuple[Part, ...] = field(default=(), repr=False)
    """Images, audio, resources and text parts, when the tool returned more than text or data
    (`toolnexus_runtime.content`); `output` is then their text."""


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
ToolOutput: TypeAlias = str | Part | BaseModel | Mapping[str, Any] | Sequence[Any] | float | None
"""A handler returns text (sent as is), JSON-serialisable data / a pydantic model, or content
parts (an image, or a list of text and parts: `toolnexus_runtime.content`)."""
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


class _Entry(NamedTuple):
    validate: Callable[[Any], BaseModel]
    fn: Callable[..., Any]
    is_async: bool


EMPTY_CONTEXT = ToolContext()


async def _maybe_await(value: T | Awaitable[T]) -> T:
    if isawaitable(value):
        return await value
    return value


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


def _invalid(name: str, exc: ValidationError) -> ToolResult:
    problems = tuple((tuple(e["loc"]), e["msg"]) for e in exc.errors(include_url=False))
    return ToolResult(_invalid_text(name, problems), True, None, "invalid_arguments", problems)


def _invalid_text(name: str, problems: Sequence[tuple[tuple[Any, ...], str]]) -> str:
    listed = "; ".join(
        f"{'.'.join(str(part) for part in loc) or '(arguments)'}: {message}"
        for loc, message in problems
    )
    return f"Invalid arguments for tool '{name}': {listed}. Fix the arguments and call it again."


def _sent_place(
    loc: tuple[Any, ...], mapping: Mapping[str, Any], refs: Mapping[str, Any] | None = None
) -> tuple[Any, ...]:
    """A place in the spec's names, in the names the provider's file gave (mapping: an
    argument map, {alias: [name, inner, refs?]})."""
    back = {entry[0]: (alias, _value_map(entry, refs)) for alias, entry in mapping.items()}
    out: list[Any] = []
    for part in loc:
        if isinstance(part, str) and part in back:
            alias, inner = back[part]
            out.append(alias)
            back = {e[0]: (a, _value_map(e, refs)) for a, e in inner.items()}
        else:
            out.append(part)
    return tuple(out)


def unknown_tool(name: str, available: str) -> ToolResult:
    return ToolResult(
        f"Unknown tool '{name}'. Available tools: {available}.", True, None, "unknown_tool"
    )


def default_error_message(name: str, exc: Exception) -> str:
    return f"Tool '{name}' failed: {type(exc).__name__}: {exc}"


@cache
def _schema_text(package: str, target: str) -> str | None:
    path = resources.files(package) / "schemas" / f"{target}.json"
    return path.read_text("utf-8") if path.is_file() else None


def load_schema(package: str, target: str) -> Any:
    """A generated package's `schemas/<target>.json`, parsed afresh (callers may change it)."""
    text = _schema_text(package, target)
    if text is None:
        raise NotImplementedError(f"{package} was generated without the {target} target")
    return json.loads(text)


def _value_map(entry: Sequence[Any], refs: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The map of a property's value: its own, over the maps of the recursive refs it names
    (entry: [payload, map] or [payload, map, [ref, ...]]; refs: {ref: map})."""
    if len(entry) < 3 or not refs:
        return entry[1]  # type: ignore[no-any-return]
    merged: dict[str, Any] = {}
    for ref in entry[2]:
        merged.update(refs.get(ref, {}))
    merged.update(entry[1])
    return merged


def _absent_nulls(
    arguments: Any, mapping: Mapping[str, Any], refs: Mapping[str, Any] | None = None
) -> Any:
    """strictify: a null for a property the spec made optional means "absent" (mapping:
    {name: [made nullable, mapping of its value, refs?]}; refs: the maps of recursive $refs),
    so the model's default applies."""
    if isinstance(arguments, list):
        return [_absent_nulls(item, mapping, refs) for item in arguments]
    if not isinstance(arguments, dict):
        return arguments
    out = {}
    for key, value in arguments.items():
        entry = mapping.get(key)
        if entry is None:
            out[key] = value
        elif value is None and entry[0]:
            continue
        else:
            inner = _value_map(entry, refs)
            out[key] = _absent_nulls(value, inner, refs) if inner else value
    return out


def _unalias(
    arguments: Any, mapping: Mapping[str, Any], refs: Mapping[str, Any] | None = None
) -> Any:
    """Arguments as the model sent them, with every aliased property name back to the spec's
    (mapping: {alias: [name, mapping of its value, refs?]}); lists map element by element."""
    if isinstance(arguments, list):
        return [_unalias(item, mapping, refs) for item in arguments]
    if not isinstance(arguments, dict):
        return arguments
    out = {}
    for key, value in arguments.items():
        entry = mapping.get(key)
        if entry is None:
            out[key] = value
        else:
            inner = _value_map(entry, refs)
            out[entry[0]] = _unalias(value, inner, refs) if inner else value
    return out


class ToolkitCore(Generic[H]):
    """Routes a tool call by name to a handler method, validating its arguments first.

    A generated package subclasses `toolnexus_runtime.Toolkit` with its table (`TOOLS`) and the
    package that holds its provider schemas (`SCHEMAS`); `tools=` serves without generation.
    """

    TOOLS: Mapping[str, ToolSpec] = MappingProxyType({})
    SCHEMAS: str | None = None
    TOOLSETS: Mapping[str, tuple[str, ...]] = MappingProxyType({})  # toolset -> its tools

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
        if isinstance(max_threads, bool) or not isinstance(max_threads, int) or max_threads < 1:
            raise ValueError(f"max_threads must be a positive integer, not {max_threads!r}")
        tools = self.TOOLS if tools is None else tools
        missing = []
        entries: dict[str, _Entry] = {}
        executors: dict[str, Executor] = {}
        sources = sources or SourceOptions()
        for name, spec in tools.items():
            # The model's validator itself: what model_validate calls, without its per-call
            # keyword handling (half the cost of a small model's validation).
            validate = spec.model.__pydantic_validator__.validate_python
            if spec.binding is not None:  # a tool from another source: its executor runs it
                kind = binding_kind(spec.binding)
                if kind not in executors:
                    executors[kind] = make_executor(kind, self, sources)
                bound = executors[kind].bind(spec)
                # A bound tool may validate for itself (and be handed the arguments as sent).
                entries[name] = _Entry(getattr(bound, "validate", validate), bound, True)
                continue
            fn = None if spec.method is None else getattr(handlers, spec.method, None)
            if fn is None or getattr(fn, "__isabstractmethod__", False):
                missing.append(spec.method or name)
                continue
            entries[name] = _Entry(validate, fn, iscoroutinefunction(fn))
        if missing:
            raise TypeError(
                f"{type(handlers).__name__} does not implement the tool method(s): "
                f"{', '.join(missing)}. Add one method per tool (see ToolHandlers)."
            )
        self.handlers = handlers
        self.tools = tools
        self.timeout = timeout
        self.error_message = error_message
        self.max_threads = max_threads
        self._limiters: WeakKeyDictionary[asyncio.AbstractEventLoop, CapacityLimiter] = (
            WeakKeyDictionary()
        )
        self._limiters_lock = threading.Lock()
        self._entries = entries
        self._executors = executors
        self._unknown_hint = ", ".join(tools) or "(none)"
        # name_aliases: what each provider file calls a tool or a property, back to the spec
        aliases = {}
        if self.SCHEMAS is not None and _schema_text(self.SCHEMAS, "aliases") is not None:
            aliases = load_schema(self.SCHEMAS, "aliases")
        self._tool_aliases: dict[str, dict[str, str]] = aliases.get("tools", {})
        self._argument_aliases: dict[str, dict[str, Any]] = aliases.get("arguments", {})
        self._null_maps: dict[str, dict[str, Any]] = aliases.get("nulls", {})
        # the maps of recursive $refs, {target: {tool: {pointer: map}}} (rarely present)
        self._argument_refs: dict[str, dict[str, Any]] = aliases.get("argument_refs", {})
        self._null_refs: dict[str, dict[str, Any]] = aliases.get("null_refs", {})

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

    def descriptions(self) -> dict[str, str]:
        """Each tool's description (from the generated package's schemas/tools.json)."""
        if self.SCHEMAS is None:
            return {}
        return {t["name"]: t.get("description", "") for t in load_schema(self.SCHEMAS, "tools")}

    def unalias(self, target: str, name: str, arguments: Any) -> tuple[str, Any]:
        """A call as `target`'s file named it, back to the spec's tool and argument names."""
        aliases = self._tool_aliases.get(target)
        if aliases:
            name = aliases.get(name, name)
        maps = self._argument_aliases.get(target)
        nulls = self._null_maps.get(target)
        renamed = maps is not None and name in maps
        absent = nulls is not None and name in nulls
        if renamed or absent:
            if isinstance(arguments, (str, bytes, bytearray)):
                try:
                    arguments = json.loads(arguments) if arguments.strip() else {}
                except ValueError:
                    return name, arguments  # execute explains the bad JSON
            if absent:
                assert nulls is not None
                refs = self._null_refs.get(target, {}).get(name)
                arguments = _absent_nulls(arguments, nulls[name], refs)
            if renamed:
                assert maps is not None
                refs = self._argument_refs.get(target, {}).get(name)
                arguments = _unalias(arguments, maps[name], refs)
        return name, arguments

    def sent_names(self, target: str) -> dict[str, str]:
        """Spec tool name -> the name `target`'s file gives it, where they differ."""
        return {name: alias for alias, name in self._tool_aliases.get(target, {}).items()}

    def _provider_schema(self, target: str) -> Any:
        """The tools in one provider's shape (from the generated package's schemas/)."""
        if self.SCHEMAS is None:
            raise NotImplementedError(
                f"{type(self).__name__} has no provider schemas (SCHEMAS names no package)"
            )
        return load_schema(self.SCHEMAS, target)

    def _has_deferred(self) -> bool:
        """Whether a tool has defer_loading (without parsing schemas/tools.json when none has)."""
        text = None if self.SCHEMAS is None else _schema_text(self.SCHEMAS, "tools")
        return text is not None and '"defer_loading": true' in text

    def _tool_subset(self, tools: Any, toolset: str | None = None) -> frozenset[str] | None:
        """Validate a caller's choice of tool names (or of a toolset); None means every tool."""
        if toolset is not None:
            if tools is not None:
                raise ValueError("pass tools= or toolset=, not both")
            from .toolsets import members

            return frozenset(members(self.TOOLSETS, toolset))
        if tools is None:
            return None
        chosen = frozenset([tools] if isinstance(tools, str) else tools)
        unknown = sorted(chosen - self.tools.keys())
        if unknown:
            raise ValueError(
                f"Unknown tool name(s) in tools=: {', '.join(unknown)}. "
                f"Available tools: {self._unknown_hint}."
            )
        if not chosen:
            raise ValueError("tools= names no tool; pass None to offer every tool.")
        return chosen

    # -- execution ---------------------------------------------------------------------------

    def _prepare(self, name: str, args: Any) -> tuple[_Entry, BaseModel] | ToolResult:
        entry = self._entries.get(name)
        if entry is None:
            return unknown_tool(name, self._unknown_hint)
        if type(args) is not dict:
            if args is None:
                args = {}
            elif isinstance(args, (str, bytes, bytearray)):
                try:
                    args = json.loads(args) if args.strip() else {}
                except ValueError as exc:
                    return ToolResult(
                        f"Invalid arguments for tool '{name}': not valid JSON ({exc}). "
                        "Send the arguments as a JSON object.",
                        True,
                        None,
                        "invalid_arguments",
                    )
            elif isinstance(args, Mapping):
                args = dict(args)
        try:
            return entry, entry.validate(args)
        except ValidationError as exc:
            return _invalid(name, exc)

    def _failed(self, name: str, exc: Exception, ctx: ToolContext) -> ToolResult:
        kind = type(exc).__qualname__
        source = isinstance(exc, SourceError)
        if isinstance(exc, ToolError) and not source:
            return ToolResult(str(exc), True, None, kind)
        error_id = uuid.uuid4().hex[:12]
        logger.error(
            "Tool %r failed (call id %s, error id %s)%s",
            name,
            ctx.call_id,
            error_id,
            f": {exc}" if source else "",
            exc_info=None if source else exc,  # a source's text is the whole story
            extra={"tool_name": name, "call_id": ctx.call_id, "error_id": error_id},
        )
        if self.error_message is None:
            text = str(exc) if source else default_error_message(name, exc)
        else:
            try:
                text = self.error_message(name, exc)
            except Exception as inner:  # noqa: BLE001 (a broken error_message must not lose the call)
                logger.error("error_message failed for tool %r", name, exc_info=inner)
                text = f"Tool '{name}' failed."
        return ToolResult(text, True, None, kind, (), error_id)

    def _finish(self, name: str, out: Any, ctx: ToolContext) -> ToolResult:
        if type(out) is str:
            return ToolResult(out)
        if type(out) is ToolResult:  # a bound tool's result with its own output and data
            return out
        try:
            parts = _content.parts_of(out)
            if parts is not None:
                return ToolResult(_content.text_of(parts), False, None, content=parts)
            data = to_jsonable_python(out, by_alias=True)
            text = json.dumps(data, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            logger.error(
                "Tool %r returned a value that is not JSON-serialisable (call id %s)",
                name,
                ctx.call_id,
                exc_info=exc,
                extra={"tool_name": name, "call_id": ctx.call_id},
            )
            return ToolResult(
                f"Tool '{name}' returned a value that is not JSON-serialisable: {exc}",
                True,
                None,
                "invalid_output",
            )
        return ToolResult(text, False, data)

    def _start(
        self,
        name: str,
        args: Any,
        ctx: ToolContext | None,
        timeout: float | None,
        offload: bool,
        shared: bool,
    ) -> ToolResult | Coroutine[Any, Any, ToolResult]:
        """Validate a call and run as much of it as runs without an event loop: the result when
        that is all of it (a sync handler called inline), else a coroutine that finishes it
        (`_run`). `execute` awaits that coroutine, `execute_sync` runs it on the runtime's loop.

        offload: run a sync handler in a worker thread; shared: the loop that will finish the
        call serves others too, so an async handler that blocks it is reported."""
        entry = self._entries.get(name)
        # The fast path: a known tool and a dict of arguments.
        if entry is not None and type(args) is dict:
            validate, fn, is_async = entry
            try:
                model = validate(args)
            except ValidationError as exc:
                return _invalid(name, exc)
        else:
            prepared = self._prepare(name, args)
            if type(prepared) is ToolResult:
                return prepared
            entry, model = prepared  # type: ignore[misc]
            validate, fn, is_async = entry
        if ctx is None:
            ctx = EMPTY_CONTEXT
        if timeout is None:
            timeout = self.timeout
        if is_async or offload or timeout is not None:
            return self._run(name, entry, model, ctx, timeout, shared)
        try:
            out = fn(model, ctx)
        except Exception as exc:  # noqa: BLE001 (a failing handler is a result)
            return self._failed(name, exc, ctx)
        if type(out) is str:
            return ToolResult(out)
        if isawaitable(out):  # a plain def that returned a coroutine (a decorator, say)
            return self._run(name, entry, model, ctx, None, shared, out)
        return self._finish(name, out, ctx)

    async def _run(
        self,
        name: str,
        entry: _Entry,
        model: BaseModel,
        ctx: ToolContext,
        timeout: float | None,
        shared: bool,
        pending: Awaitable[Any] | None = None,
    ) -> ToolResult:
        """The part of a call that needs an event loop, under the call's deadline.

        Past the deadline the call is the timeout error, whatever the handler does afterwards:
        an async handler is cancelled and left to finish alone (one that ignores cancellation
        cannot hold the call), a sync one keeps its thread but gives up its slot. Only the
        runtime's deadline is a timeout; a TimeoutError the handler raises is its failure."""
        started = Started()
        work: Awaitable[Any]
        if pending is None:
            work = self._invoke(name, entry, model, ctx, shared, started)
        else:
            work = _watched(pending, name) if shared else pending
        try:
            if timeout is None:
                out = await work
            elif pending is None and not entry.is_async:
                # A worker thread: cancelling the wait returns at once (the thread runs on).
                finished, out = await within(timeout, work)
                if not finished:
                    threads = self._limiter().total_tokens
                    if not started.started and threads != float("inf"):  # never got a thread
                        return _busy(name, timeout, threads)
                    return _timed_out(name, timeout, True)
            else:
                # A coroutine: its own task, so one that ignores cancellation cannot hold us.
                task = asyncio.ensure_future(work)
                try:
                    await asyncio.wait((task,), timeout=timeout)
                except asyncio.CancelledError:
                    task.cancel()
                    raise
                if not task.done():
                    task.cancel()
                    task.add_done_callback(_late(name))
                    return _timed_out(name, timeout, False)
                out = task.result()
        except Exception as exc:  # noqa: BLE001 (a failing handler is a result)
            return self._failed(name, exc, ctx)
        if type(out) is str:
            return ToolResult(out)
        return self._finish(name, out, ctx)

    async def _invoke(
        self,
        name: str,
        entry: _Entry,
        model: BaseModel,
        ctx: ToolContext,
        shared: bool,
        started: Started,
    ) -> Any:
        """Call the entry's fn where it belongs (a sync one gets here only to run in a worker
        thread) and return its value, awaited if need be."""
        if entry.is_async:
            out = entry.fn(model, ctx)
        else:
            out = await in_thread(entry.fn, (model, ctx), self._limiter(), started)
        if isawaitable(out):
            out = await (_watched(out, name) if shared else out)
        return out

    def _limiter(self) -> CapacityLimiter:
        """This toolkit's thread slots on the running loop. The runtime's own loops have no
        bound: each caller of a sync entry point waits for its own calls, so its threads are
        bounded by the callers', and none ever waits for a slot."""
        loop = asyncio.get_running_loop()
        limiter = self._limiters.get(loop)
        if limiter is None:
            with self._limiters_lock:
                limiter = self._limiters.get(loop)
                if limiter is None:
                    tokens = float("inf") if on_portal() else self.max_threads
                    limiter = self._limiters[loop] = capacity_limiter(tokens)
        return limiter

    def execute_sync(
        self,
        name: str,
        args: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
    ) -> ToolResult:
        """Run one tool call and return its result; never raises for the model's mistakes.

        A sync handler runs in the calling thread (in a worker thread when a timeout applies);
        an async one on the runtime's long-lived event loop."""
        result = self._start(name, args, ctx, timeout, False, True)
        if type(result) is ToolResult:
            return result
        return run_sync(cast("Coroutine[Any, Any, ToolResult]", result))

    async def execute(
        self,
        name: str,
        args: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        offload: bool = False,
    ) -> ToolResult:
        """Run one tool call and return its result; never raises for the model's mistakes.

        A sync handler runs inline on the event loop, or in a worker thread when `offload` is
        true or a timeout applies; an async one on this loop. `offload=True` also says the loop
        is shared (a server's): an async handler that blocks it is reported.
        """
        result = self._start(name, args, ctx, timeout, offload, offload)
        if type(result) is ToolResult:
            return result
        return await cast("Coroutine[Any, Any, ToolResult]", result)

    async def _execute_all(
        self, calls: Sequence[tuple[str, Any, ToolContext]], policy: Policy
    ) -> list[ToolResult]:
        """Every call at once: the first on this loop (a sync handler inline, as a lone call
        runs), each other one alongside it (a sync handler in a worker thread). The others'
        tasks start first, so their threads run while the first call does."""
        first, others = (calls[0], calls[1:]) if calls else (None, ())
        if policy.plain:
            timeout = policy.timeout
            pending = [
                self.execute(name, args, ctx, timeout=timeout, offload=True)
                for name, args, ctx in others
            ]
            if first is not None:
                pending.append(self.execute(*first, timeout=timeout))
            results = list(await asyncio.gather(*pending))
            return results[-1:] + results[:-1]
        tool_calls = [ToolCall(name, args, ctx) for name, args, ctx in calls]
        pending = [self._execute_with_policy(call, policy, True) for call in tool_calls[1:]]
        if tool_calls:
            pending.append(self._execute_with_policy(tool_calls[0], policy, False))
        results = list(await asyncio.gather(*pending))
        results = results[-1:] + results[:-1]
        if policy.records is not None:  # in call order, whatever order they finished in
            policy.records.extend(zip(tool_calls, results, strict=True))
        return results

    async def _execute_with_policy(
        self, call: ToolCall, policy: Policy, offload: bool
    ) -> ToolResult:
        hooked = None
        if policy.on_tool_call is not None:
            hooked = await _maybe_await(policy.on_tool_call(call))
        result = _answered(policy, call, hooked)
        if result is None:
            result = await self.execute(
                call.name, call.arguments, call.context, timeout=policy.timeout, offload=offload
            )
        if policy.on_tool_result is not None:
            await _maybe_await(policy.on_tool_result(call, result))
        return result

    # -- provider round trips ----------------------------------------------------------------

    def _execute_all_sync(
        self, calls: Sequence[tuple[str, Any, ToolContext]], policy: Policy
    ) -> list[ToolResult]:
        """`_execute_all` for a caller that is not on an event loop (the sync round trips and
        loops): no hop to the runtime's loop and back for what runs without one. Hooks run in
        this thread in call order (on_tool_call for every call, then on_tool_result for every
        call); sync handlers run here, the first call in this thread and each other one at the
        same time in a worker thread (at most `max_threads` of them at once); the calls that
        need an event loop (async handlers and bound tools, calls under a deadline) go to the
        runtime's loop together, in one hop, while those run; an async hook runs there too."""
        tool_calls = [ToolCall(name, args, ctx) for name, args, ctx in calls]
        results: list[ToolResult | None] = [None] * len(calls)
        # Each call runs in its own copy of this context, its hooks too, as each call's task in
        # the async twin: what on_tool_call sets (a tracing span) reaches that call's handler
        # and its on_tool_result, not the other calls' nor the caller's.
        contexts = [contextvars.copy_context() for _ in calls]
        on_tool_call = policy.on_tool_call
        for i, call in enumerate(tool_calls):
            hooked = None if on_tool_call is None else contexts[i].run(_hook, on_tool_call, call)
            results[i] = _answered(policy, call, hooked)
        waiting = [i for i, result in enumerate(results) if result is None]
        timeout = policy.timeout
        # What needs an event loop (an async handler, a deadline) goes to the runtime's loop in
        # one batch, started first; the plain sync calls run meanwhile from this thread.
        on_loop = [i for i in waiting if self._needs_loop(calls[i][0], timeout)]
        looped = set(on_loop)
        here = [i for i in waiting if i not in looped] if on_loop else waiting
        batch = None
        if on_loop:
            batch = submit(
                self._execute_batch(
                    [calls[i] for i in on_loop], timeout, [contexts[i] for i in on_loop]
                )
            )
        try:
            if here:
                execute = self.execute_sync
                # at most max_threads in worker threads at once (a response with thousands of
                # calls does not start thousands of threads); the next starts as one finishes
                slots = threading.BoundedSemaphore(self.max_threads)

                def in_a_thread(i: int) -> ToolResult:
                    try:
                        return execute(calls[i][0], calls[i][1], calls[i][2], timeout=timeout)
                    finally:
                        slots.release()

                others = []
                for i in here[1:]:
                    slots.acquire()
                    try:
                        future = contexts[i].run(spawn, in_a_thread, i)
                    except Exception as exc:  # noqa: BLE001 (no thread to be had: that call fails, as in the async twin)
                        slots.release()
                        results[i] = self._failed(calls[i][0], exc, calls[i][2])
                        continue
                    others.append((i, future))
                first = here[0]
                results[first] = contexts[first].run(
                    execute, calls[first][0], calls[first][1], calls[first][2], timeout=timeout
                )
                for i, future in others:
                    results[i] = future.result()
            if batch is not None:
                for i, result in zip(on_loop, batch.result(), strict=True):
                    results[i] = result
        except BaseException:
            if batch is not None:
                batch.cancel()  # KeyboardInterrupt while waiting: do not leave the work running
            raise
        done = cast("list[ToolResult]", results)
        on_tool_result = policy.on_tool_result
        if on_tool_result is not None:
            for i, (call, result) in enumerate(zip(tool_calls, done, strict=True)):
                contexts[i].run(_hook, on_tool_result, call, result)
        if policy.records is not None:
            policy.records.extend(zip(tool_calls, done, strict=True))
        return done

    def _needs_loop(self, name: str, timeout: float | None) -> bool:
        """Whether a call of this tool runs on an event loop (an async handler or a bound
        tool, or under a deadline), not inline in a sync caller's thread."""
        entry = self._entries.get(name)
        if entry is None:  # an unknown tool: its error result needs no loop
            return False
        return entry.is_async or timeout is not None or self.timeout is not None

    async def _execute_batch(
        self,
        calls: Sequence[tuple[str, Any, ToolContext]],
        timeout: float | None,
        contexts: Sequence[contextvars.Context],
    ) -> list[ToolResult]:
        """Calls at once on the runtime's loop, for a sync caller (a sync handler under a
        deadline in a worker thread: the loop is shared), each in a copy of its context."""
        pending = [
            context.run(asyncio.ensure_future, self.execute(n, a, c, timeout=timeout, offload=True))
            for (n, a, c), context in zip(calls, contexts, strict=True)
        ]
        return list(await asyncio.gather(*pending))

    # -- provider round trips ----------------------------------------------------------------

    def _calls(
        self, provider: Provider, payload: Any, ctx: ToolContext | None
    ) -> tuple[list[RawCall], list[tuple[str, Any, ToolContext]]]:
        """A provider response's calls as sent, and as the toolkit runs them (spec names and
        arguments, each with its context)."""
        raw = provider.calls(payload)
        base = ctx or EMPTY_CONTEXT
        calls = []
        for call in raw:
            name, arguments = self.unalias(provider.NAME, call.name, call.arguments)
            context = replace(
                base,
                provider=provider.NAME,
                tool_name=name,
                call_id=None if call.call_id is None else str(call.call_id),
            )
            calls.append((name, arguments, context))
        return raw, calls

    def _replies(
        self,
        provider: Provider,
        raw: Sequence[RawCall],
        calls: Sequence[tuple[str, Any, ToolContext]],
        results: list[ToolResult],
    ) -> Any:
        for i, (call, result) in enumerate(zip(raw, results, strict=True)):
            name = calls[i][0]
            if result.problems and (
                call.name != name or name in self._argument_aliases.get(provider.NAME, {})
            ):
                # name what the model sent: the tool and argument names of the provider's file
                mapping = self._argument_aliases.get(provider.NAME, {}).get(name, {})
                refs = self._argument_refs.get(provider.NAME, {}).get(name)
                places = tuple(
                    (_sent_place(loc, mapping, refs), msg) for loc, msg in result.problems
                )
                results[i] = replace(result, output=_invalid_text(call.name, places))
        return provider.replies(raw, results)

    async def _round_trip(
        self, provider: Provider, payload: Any, ctx: ToolContext | None, policy: Policy
    ) -> Any:
        """Execute every call of one provider response; the provider's reply to send back."""
        raw, calls = self._calls(provider, payload, ctx)
        results = await self._execute_all(calls, policy)
        return self._replies(provider, raw, calls, results)

    def _round_trip_sync(
        self, provider: Provider, payload: Any, ctx: ToolContext | None, policy: Policy
    ) -> Any:
        """`_round_trip` from a thread that is not on an event loop (see _execute_all_sync)."""
        raw, calls = self._calls(provider, payload, ctx)
        results = self._execute_all_sync(calls, policy)
        return self._replies(provider, raw, calls, results)


def _answered(policy: Policy, call: ToolCall, hooked: Any) -> ToolResult | None:
    """The result a call has before it runs: what on_tool_call answered instead of running it
    (its value checked), or the unknown-tool error for a tool outside `policy.tools`; None:
    run it."""
    if hooked is not None:
        if not isinstance(hooked, ToolResult):
            raise TypeError(
                "on_tool_call must return None (run the tool) or a ToolResult "
                f"(answer instead of running it), not {type(hooked).__name__}"
            )
        return hooked
    if policy.tools is not None and call.name not in policy.tools:
        return unknown_tool(call.name, ", ".join(sorted(policy.tools)) or "(none)")
    return None


def _hook(hook: Callable[..., T | Awaitable[T]], *args: Any) -> T:
    """A hook's value, called from a thread that is not on an event loop."""
    return _sync_value(hook(*args))


def _sync_value(value: T | Awaitable[T]) -> T:
    """A hook's value, from a thread that is not on an event loop (an async hook's coroutine
    runs on the runtime's loop)."""
    if isawaitable(value):
        return run_sync(_maybe_await(value))
    return value


@types.coroutine
def _watched(awaitable: Awaitable[T], name: str) -> Generator[Any, Any, T]:
    """Await `awaitable`, timing each step it runs on the loop (asyncio's slow-callback idea,
    for one handler): a step of BLOCKING_SECONDS or more blocked every other call on a shared
    loop, so it is logged, naming the tool and what to do."""
    steps = awaitable.__await__()
    message: Any = None
    error: BaseException | None = None
    while True:
        began = time.perf_counter()
        try:
            yielded = steps.send(message) if error is None else steps.throw(error)
        except StopIteration as stop:
            _check_step(name, began)
            return stop.value  # type: ignore[no-any-return]
        except BaseException:
            _check_step(name, began)
            raise
        _check_step(name, began)
        message = error = None
        try:
            message = yield yielded
        except GeneratorExit:
            close = getattr(steps, "close", None)
            if close is not None:
                close()
            raise
        except BaseException as exc:  # noqa: BLE001 (handed to the handler, as await would)
            error = exc


def _check_step(name: str, began: float) -> None:
    held = time.perf_counter() - began
    if held >= BLOCKING_SECONDS:
        logger.warning(
            "Tool %r blocked the event loop for %.1f seconds in one step: every other call on "
            "that loop waited. An async handler must not call blocking code: make it a plain "
            "def (it then runs in a worker thread) or move the blocking call off the loop "
            "(await asyncio.to_thread(...))",
            name,
            held,
            extra={"tool_name": name},
        )


def _late(name: str) -> Callable[[asyncio.Future[Any]], None]:
    """What becomes of a call given up at its deadline: its outcome is logged, never sent."""

    def done(task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            logger.warning("Tool %r failed after its timeout", name, exc_info=exc)
        else:
            logger.warning(
                "Tool %r returned after its timeout (it ignored cancellation); the value was "
                "dropped",
                name,
                extra={"tool_name": name},
            )

    return done


def get(obj: Any, *names: str) -> Any:
    """A field of a provider dict or SDK object, trying each spelling (camelCase, snake_case)."""
    for name in names:
        value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
        if value is not None:
            return value
    return None
