"""The execution core: results, context, errors, and the validated call of one handler.

Errors are results, never exceptions: an unknown tool, invalid arguments, unparsable JSON, a
handler that raises or times out all give `ToolResult(is_error=True)` with a message the model
can act on. A `ToolError` sends exactly its text; any other exception is logged with its
traceback and the model gets `Tool '<name>' failed: <Type>: <message>`, or what
`error_message(name, exc)` returns.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeoutError
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from inspect import isawaitable, iscoroutinefunction
from types import MappingProxyType
from typing import Any, Generic, NamedTuple, Protocol, TypeAlias, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from .executors import Executor, SourceOptions, binding_kind, make_executor
from .portal import HANDLER_THREADS, run_sync

T = TypeVar("T")
H = TypeVar("H")

logger = logging.getLogger("toolnexus_runtime")


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
    `invalid_arguments`, `timeout`, `invalid_output`, `ToolError`, or the exception's type."""
    problems: tuple[tuple[tuple[Any, ...], str], ...] = field(default=(), compare=False, repr=False)
    """For invalid arguments: (place, message) of each problem, the place in the spec's names."""


class ToolError(Exception):
    """Raise it in a handler to send exactly its text to the model as an error result.

    Nothing is logged: it is an answer, not a failure (for example "no such order: 42")."""


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
    """How a batch of calls runs: timeout, allowed tools, hooks, where to record results, and
    whether sync handlers leave the event loop (always, on the shared portal loop)."""

    timeout: float | None = None
    tools: frozenset[str] | None = None
    on_tool_call: OnToolCall | None = None
    on_tool_result: OnToolResult | None = None
    records: list[tuple[ToolCall, ToolResult]] | None = None
    offload: bool = False

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


def _timed_out(name: str, timeout: float) -> ToolResult:
    logger.warning(
        "Tool %r did not finish within %g seconds; a sync handler's thread runs on until it "
        "returns",
        name,
        timeout,
        extra={"tool_name": name},
    )
    return ToolResult(
        f"Tool '{name}' did not finish within {timeout:g} seconds.", True, None, "timeout"
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


def _sent_place(loc: tuple[Any, ...], mapping: Mapping[str, Any]) -> tuple[Any, ...]:
    """A place in the spec's names, in the names the provider's file gave (mapping: an
    argument map, {alias: [name, inner]})."""
    back = {name: (alias, inner) for alias, (name, inner) in mapping.items()}
    out: list[Any] = []
    for part in loc:
        if isinstance(part, str) and part in back:
            alias, inner = back[part]
            out.append(alias)
            back = {name: (a, i) for a, (name, i) in inner.items()}
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


def _absent_nulls(arguments: Any, mapping: Mapping[str, Any]) -> Any:
    """strictify: a null for a property the spec made optional means "absent" (mapping:
    {name: [made nullable, mapping of its value]}), so the model's default applies."""
    if isinstance(arguments, list):
        return [_absent_nulls(item, mapping) for item in arguments]
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
            out[key] = _absent_nulls(value, entry[1]) if entry[1] else value
    return out


def _unalias(arguments: Any, mapping: Mapping[str, Any]) -> Any:
    """Arguments as the model sent them, with every aliased property name back to the spec's
    (mapping: {alias: [name, mapping of its value]}); lists map element by element."""
    if isinstance(arguments, list):
        return [_unalias(item, mapping) for item in arguments]
    if not isinstance(arguments, dict):
        return arguments
    out = {}
    for key, value in arguments.items():
        entry = mapping.get(key)
        if entry is None:
            out[key] = value
        else:
            name, inner = entry
            out[name] = _unalias(value, inner) if inner else value
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
        sources: SourceOptions | None = None,
    ) -> None:
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
                entries[name] = _Entry(validate, executors[kind].bind(spec), True)
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
                arguments = _absent_nulls(arguments, nulls[name])
            if renamed:
                assert maps is not None
                arguments = _unalias(arguments, maps[name])
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
        if isinstance(exc, ToolError):
            return ToolResult(str(exc), True, None, kind)
        logger.error(
            "Tool %r failed (call id %s)",
            name,
            ctx.call_id,
            exc_info=exc,
            extra={"tool_name": name, "call_id": ctx.call_id},
        )
        if self.error_message is None:
            return ToolResult(default_error_message(name, exc), True, None, kind)
        try:
            return ToolResult(self.error_message(name, exc), True, None, kind)
        except Exception as inner:  # noqa: BLE001 (a broken error_message must not lose the call)
            logger.error("error_message failed for tool %r", name, exc_info=inner)
            return ToolResult(f"Tool '{name}' failed.", True, None, kind)

    def _finish(self, name: str, out: Any, ctx: ToolContext) -> ToolResult:
        if type(out) is str:
            return ToolResult(out)
        try:
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

    def execute_sync(
        self,
        name: str,
        args: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
    ) -> ToolResult:
        """Run one tool call and return its result; never raises for the model's mistakes.

        A sync handler runs in the calling thread (in a handler thread when a timeout applies);
        an async one on the runtime's long-lived event loop."""
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
        try:
            if is_async:
                out = run_sync(_await(fn(model, ctx), timeout))
            elif timeout is None:
                out = fn(model, ctx)
            else:
                out = HANDLER_THREADS.submit(fn, model, ctx).result(timeout)
        except (asyncio.TimeoutError, FutureTimeoutError):  # noqa: UP041 (distinct on 3.10)
            return _timed_out(name, timeout or 0)
        except Exception as exc:  # noqa: BLE001 (a failing handler is a result)
            return self._failed(name, exc, ctx)
        if type(out) is str:
            return ToolResult(out)
        return self._finish(name, out, ctx)

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

        A sync handler runs inline on the event loop, or in a handler thread when `offload` is
        true or a timeout applies.
        """
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
        try:
            if is_async:
                out = await _await(fn(model, ctx), timeout)
            elif timeout is None and not offload:
                out = fn(model, ctx)
            else:
                loop = asyncio.get_running_loop()
                out = await _await(loop.run_in_executor(HANDLER_THREADS, fn, model, ctx), timeout)
        except asyncio.TimeoutError:  # noqa: UP041 (distinct on 3.10)
            return _timed_out(name, timeout or 0)
        except Exception as exc:  # noqa: BLE001 (a failing handler is a result)
            return self._failed(name, exc, ctx)
        if type(out) is str:
            return ToolResult(out)
        return self._finish(name, out, ctx)

    async def _execute_all(
        self, calls: Sequence[tuple[str, Any, ToolContext]], policy: Policy
    ) -> list[ToolResult]:
        offload = policy.offload or len(calls) > 1
        if policy.plain:
            return list(
                await asyncio.gather(
                    *(
                        self.execute(name, args, ctx, timeout=policy.timeout, offload=offload)
                        for name, args, ctx in calls
                    )
                )
            )
        tool_calls = [ToolCall(name, args, ctx) for name, args, ctx in calls]
        results = list(
            await asyncio.gather(
                *(self._execute_with_policy(call, policy, offload) for call in tool_calls)
            )
        )
        if policy.records is not None:  # in call order, whatever order they finished in
            policy.records.extend(zip(tool_calls, results, strict=True))
        return results

    async def _execute_with_policy(
        self, call: ToolCall, policy: Policy, offload: bool
    ) -> ToolResult:
        result = None
        if policy.on_tool_call is not None:
            result = await _maybe_await(policy.on_tool_call(call))
            if result is not None and not isinstance(result, ToolResult):
                raise TypeError(
                    "on_tool_call must return None (run the tool) or a ToolResult "
                    f"(answer instead of running it), not {type(result).__name__}"
                )
        if result is None and policy.tools is not None and call.name not in policy.tools:
            result = unknown_tool(call.name, ", ".join(sorted(policy.tools)) or "(none)")
        if result is None:
            result = await self.execute(
                call.name, call.arguments, call.context, timeout=policy.timeout, offload=offload
            )
        if policy.on_tool_result is not None:
            await _maybe_await(policy.on_tool_result(call, result))
        return result

    # -- provider round trips ----------------------------------------------------------------

    async def _round_trip(
        self, provider: Provider, payload: Any, ctx: ToolContext | None, policy: Policy
    ) -> Any:
        """Execute every call of one provider response; the provider's reply to send back."""
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
        results = await self._execute_all(calls, policy)
        for i, (call, result) in enumerate(zip(raw, results, strict=True)):
            name = calls[i][0]
            if result.problems and (
                call.name != name or name in self._argument_aliases.get(provider.NAME, {})
            ):
                # name what the model sent: the tool and argument names of the provider's file
                mapping = self._argument_aliases.get(provider.NAME, {}).get(name, {})
                places = tuple((_sent_place(loc, mapping), msg) for loc, msg in result.problems)
                results[i] = replace(result, output=_invalid_text(call.name, places))
        return provider.replies(raw, results)


async def _await(awaitable: Awaitable[T], timeout: float | None) -> T:
    if timeout is None:
        return await awaitable
    return await asyncio.wait_for(awaitable, timeout)


def get(obj: Any, *names: str) -> Any:
    """A field of a provider dict or SDK object, trying each spelling (camelCase, snake_case)."""
    for name in names:
        value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
        if value is not None:
            return value
    return None
