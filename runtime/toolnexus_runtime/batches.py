"""How a batch of calls runs (every call of one provider response): at once, in call order,
under a `Policy` (a deadline, the tools allowed, on_tool_call and on_tool_result hooks, a list
that records each call and its result).

Two entry points, as for one call: `_execute_all` on the caller's event loop, and
`_execute_all_sync` for a caller that is not on one (the sync round trips and loops), which runs
what it can in its own thread and sends only what needs an event loop to the runtime's.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable, Sequence
from inspect import isawaitable
from typing import Any, TypeVar, cast

from .datatypes import Policy, ToolCall, ToolContext, ToolResult
from .execution import Execution
from .failures import unknown_tool
from .portal import run_sync, spawn, submit

T = TypeVar("T")
H = TypeVar("H")


class Batches(Execution[H]):
    """Every call of one response at once, under a policy."""

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


async def _maybe_await(value: T | Awaitable[T]) -> T:
    if isawaitable(value):
        return await value
    return value


def _hook(hook: Callable[..., T | Awaitable[T]], *args: Any) -> T:
    """A hook's value, called from a thread that is not on an event loop."""
    return _sync_value(hook(*args))


def _sync_value(value: T | Awaitable[T]) -> T:
    """A hook's value, from a thread that is not on an event loop (an async hook's coroutine
    runs on the runtime's loop)."""
    if isawaitable(value):
        return run_sync(_maybe_await(value))
    return value
