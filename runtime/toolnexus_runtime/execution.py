"""How one call runs: its arguments prepared and validated, its handler run where it belongs,
under its deadline and the toolkit's thread limit, and whatever comes back made a `ToolResult`.

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
import json
import logging
import threading
import uuid
from collections.abc import Awaitable, Coroutine, Mapping
from inspect import isawaitable
from typing import TYPE_CHECKING, Any, TypeVar, cast
from weakref import WeakKeyDictionary

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from .content import parts_of, text_of
from .datatypes import EMPTY_CONTEXT, ErrorMessage, SourceError, ToolContext, ToolError, ToolResult
from .failures import (
    _busy,
    _invalid,
    _not_json,
    _timed_out,
    default_error_message,
    unknown_tool,
)
from .portal import Started, capacity_limiter, in_thread, on_portal, run_sync, within
from .registry import Registry, _Entry, unknown_arguments_error
from .watch import _late, _watched

if TYPE_CHECKING:
    from anyio import CapacityLimiter

H = TypeVar("H")

logger = logging.getLogger("toolnexus_runtime")

DEFAULT_THREADS = 40
"""How many sync handlers a toolkit runs in worker threads at once on one event loop (anyio's
default thread limit); `Toolkit(..., max_threads=)` changes it."""


class Execution(Registry[H]):
    """`execute` and `execute_sync`: one call of a registered tool, never raising for the
    model's mistakes."""

    timeout: float | None
    error_message: ErrorMessage | None
    max_threads: int
    _limiters: WeakKeyDictionary[asyncio.AbstractEventLoop, CapacityLimiter]
    _limiters_lock: threading.Lock

    def _set_limits(
        self, timeout: float | None, error_message: ErrorMessage | None, max_threads: int
    ) -> None:
        """The toolkit's default deadline, its failure text, and its thread bound (checked)."""
        if isinstance(max_threads, bool) or not isinstance(max_threads, int) or max_threads < 1:
            raise ValueError(f"max_threads must be a positive integer, not {max_threads!r}")
        self.timeout = timeout
        self.error_message = error_message
        self.max_threads = max_threads
        self._limiters = WeakKeyDictionary()
        self._limiters_lock = threading.Lock()

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
            validate, fn, is_async, declared = entry
            if declared is not None and not args.keys() <= declared:
                return _invalid(name, unknown_arguments_error(entry, args))
            try:
                model = validate(args)
            except ValidationError as exc:
                return _invalid(name, exc)
        else:
            prepared = self._prepare(name, args)
            if type(prepared) is ToolResult:
                return prepared
            entry, model = prepared  # type: ignore[misc]
            validate, fn, is_async, declared = entry
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

    def _prepare(self, name: str, args: Any) -> tuple[_Entry, BaseModel] | ToolResult:
        """`_start`'s slow path: an unknown tool, or arguments that are not a dict (None, JSON
        text, another mapping)."""
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
                    return _not_json(name, exc)
            elif isinstance(args, Mapping):
                args = dict(args)
        if type(args) is dict and entry.declared is not None and not args.keys() <= entry.declared:
            return _invalid(name, unknown_arguments_error(entry, args))
        try:
            return entry, entry.validate(args)
        except ValidationError as exc:
            return _invalid(name, exc)

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

    def _failed(self, name: str, exc: Exception, ctx: ToolContext) -> ToolResult:
        """A handler that raised, as a result: a ToolError's own text; anything else logged
        with an error id, and the model told what `error_message` (or the default) says."""
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
        """A handler's value as a result: text as is, data as JSON (a value that cannot be is
        the `invalid_output` error)."""
        if type(out) is str:
            return ToolResult(out)
        if type(out) is ToolResult:  # a bound tool's result with its own output and data
            return out
        try:
            parts = parts_of(out)
            if parts is not None:
                return ToolResult(text_of(parts), False, None, content=parts)
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
