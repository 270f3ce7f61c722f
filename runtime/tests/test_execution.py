"""How a call runs: which loop, which thread, what a timeout means, what comes back.

Each test here reproduced a fault before it was fixed (issue 20): nested sync calls that
deadlocked, a blocking `async def` that stalled every caller silently, a handler's own
TimeoutError taken for the runtime's, an awaitable returned by a `def` never awaited, a late value
that beat its deadline, and sync handlers with no bound on their threads.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from toolnexus_runtime import ToolContext, Toolkit, ToolResult, ToolSpec

HERE = Path(__file__).resolve().parent


class Empty(BaseModel):
    pass


def tools(*names: str) -> dict[str, ToolSpec]:
    return {name: ToolSpec(name, Empty, name) for name in names}


def run_script(script: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run a script in a fresh interpreter: a deadlock there hangs only that process."""
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# -- nested sync calls (a handler that calls a sync entry point) ---------------------------------

NESTED = """
import asyncio, sys
from pydantic import BaseModel
from toolnexus_runtime import Toolkit, ToolSpec

class Empty(BaseModel):
    pass

class Handlers:
    future = None

    async def outer(self, args, ctx):
        return "outer>" + TK.execute_sync("middle", {}, timeout=20).output

    async def middle(self, args, ctx):
        # A loop-bound object made in the first nested call must work in the next ones.
        loop = asyncio.get_running_loop()
        if self.future is None:
            self.future = loop.create_future()
            loop.call_later(0.01, self.future.set_result, "kept")
            return "middle>made>" + TK.execute_sync("inner", {}).output
        return "middle>" + await self.future + ">" + TK.execute_sync("inner", {}).output

    async def inner(self, args, ctx):
        return "inner>" + TK.execute_sync("leaf", {}).output

    def leaf(self, args, ctx):
        return "leaf"

TK = Toolkit(Handlers(), tools={n: ToolSpec(n, Empty, n) for n in ("outer", "middle", "inner", "leaf")})
for _ in range(3):
    result = TK.execute_sync("outer", {}, timeout=20)
    print(result.output)
    sys.stdout.flush()
"""


def test_nested_sync_calls_at_any_depth_complete_and_keep_their_loop() -> None:
    try:
        done = run_script(NESTED, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("nested execute_sync calls deadlocked")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "outer>middle>made>inner>leaf",
        "outer>middle>kept>inner>leaf",
        "outer>middle>kept>inner>leaf",
    ]


def test_each_entry_point_runs_an_async_handler_where_the_readme_says() -> None:
    seen: dict[str, int] = {}

    class Handlers:
        async def where(self, args: Empty, ctx: ToolContext) -> str:
            return str(id(asyncio.get_running_loop()))

        async def nested(self, args: Empty, ctx: ToolContext) -> str:
            here = id(asyncio.get_running_loop())
            inner = tk.execute_sync("where", {}).output
            return f"{here} {inner}"

    tk = Toolkit(Handlers(), tools=tools("where", "nested"))

    async def awaited() -> tuple[int, str]:
        return id(asyncio.get_running_loop()), (await tk.execute("where", {})).output

    caller, ran = asyncio.run(awaited())
    assert ran == str(caller)  # await execute: the caller's own loop
    seen["portal"] = int(tk.execute_sync("where", {}).output)  # the runtime's shared loop
    assert int(tk.execute_sync("where", {}).output) == seen["portal"]
    outer, inner = map(int, tk.execute_sync("nested", {}).output.split())
    assert outer == seen["portal"] and inner != outer  # a nested sync call: the next loop down
    assert tk.execute_sync("nested", {}).output.split()[1] == str(inner)  # the same one each time


# -- a blocking async handler ----------------------------------------------------------------------


def test_an_async_handler_that_blocks_the_shared_loop_is_named_in_a_warning(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolnexus_runtime import watch

    monkeypatch.setattr(watch, "BLOCKING_SECONDS", 0.05)

    class Handlers:
        async def sleepy(self, args: Empty, ctx: ToolContext) -> str:
            time.sleep(0.15)  # the mistake: a blocking call in a coroutine
            return "woke"

        async def polite(self, args: Empty, ctx: ToolContext) -> str:
            await asyncio.sleep(0.15)
            return "woke"

    tk = Toolkit(Handlers(), tools=tools("sleepy", "polite"))
    with caplog.at_level(logging.WARNING, logger="toolnexus_runtime"):
        assert tk.execute_sync("polite", {}).output == "woke"
        assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
        assert tk.execute_sync("sleepy", {}).output == "woke"
    (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert record.name == "toolnexus_runtime" and record.__dict__["tool_name"] == "sleepy"
    text = record.getMessage()
    assert "'sleepy'" in text and "blocked" in text and "def" in text


# -- timeouts --------------------------------------------------------------------------------------


class OwnTimeouts:
    def sync_own(self, args: Empty, ctx: ToolContext) -> str:
        raise TimeoutError("read from db.internal:5432 timed out")

    async def async_own(self, args: Empty, ctx: ToolContext) -> str:
        raise TimeoutError("read from db.internal:5432 timed out")


@pytest.mark.parametrize("name", ["sync_own", "async_own"])
@pytest.mark.parametrize("timeout", [None, 5.0])
def test_a_handlers_own_timeout_error_is_a_handler_failure(
    name: str, timeout: float | None, caplog: pytest.LogCaptureFixture
) -> None:
    tk = Toolkit(OwnTimeouts(), tools=tools("sync_own", "async_own"))
    with caplog.at_level(logging.ERROR, logger="toolnexus_runtime"):
        results = [
            tk.execute_sync(name, {}, timeout=timeout),
            asyncio.run(tk.execute(name, {}, timeout=timeout)),
            asyncio.run(tk.execute(name, {}, timeout=timeout, offload=True)),
        ]
    for result in results:
        assert result.is_error and result.error_type == "TimeoutError", result
        assert result.output == (
            f"Tool '{name}' failed: TimeoutError: read from db.internal:5432 timed out"
        )
    assert len(caplog.records) == 3
    assert all(r.exc_info and r.exc_info[0] is TimeoutError for r in caplog.records)


def test_a_late_value_is_still_a_timeout_whatever_the_handler_does() -> None:
    class Stubborn:
        finished = threading.Event()

        async def stubborn(self, args: Empty, ctx: ToolContext) -> str:
            try:
                await asyncio.sleep(0.5)
            except asyncio.CancelledError:
                pass  # swallowed: the handler runs on past its deadline
            await asyncio.sleep(0.3)
            self.finished.set()
            return "late"

    handlers = Stubborn()
    tk = Toolkit(handlers, tools=tools("stubborn"))

    async def awaited() -> tuple[ToolResult, float]:
        started = time.perf_counter()
        result = await tk.execute("stubborn", {}, timeout=0.1)
        return result, time.perf_counter() - started

    def synced() -> tuple[ToolResult, float]:
        started = time.perf_counter()
        result = tk.execute_sync("stubborn", {}, timeout=0.1)
        return result, time.perf_counter() - started

    runs: list[Callable[[], tuple[ToolResult, float]]] = [lambda: asyncio.run(awaited()), synced]
    for run in runs:
        handlers.finished.clear()
        result, elapsed = run()
        assert result.is_error and result.error_type == "timeout", result
        assert result.output == "Tool 'stubborn' did not finish within 0.1 seconds."
        assert elapsed < 0.35, elapsed  # answered at the deadline, not when the handler gave up


# -- awaitables from a plain def -------------------------------------------------------------------


def logged(fn: Callable[..., Awaitable[str]]) -> Callable[..., Awaitable[str]]:
    """A decorator as many are written: a plain def around a coroutine function."""

    @functools.wraps(fn)
    def wrapper(*args: Any) -> Awaitable[str]:
        return fn(*args)

    return wrapper


class Decorated:
    @logged
    async def wrapped(self, args: Empty, ctx: ToolContext) -> str:
        await asyncio.sleep(0)
        return "awaited"


def test_an_awaitable_returned_by_a_def_handler_is_awaited() -> None:
    tk = Toolkit(Decorated(), tools=tools("wrapped"))
    expected = ToolResult("awaited")
    assert tk.execute_sync("wrapped", {}) == expected
    assert tk.execute_sync("wrapped", {}, timeout=5) == expected
    assert asyncio.run(tk.execute("wrapped", {})) == expected
    assert asyncio.run(tk.execute("wrapped", {}, offload=True, timeout=5)) == expected


# -- bounded worker threads ------------------------------------------------------------------------


class Blocking:
    def __init__(self) -> None:
        self.release = threading.Event()

    def hang(self, args: Empty, ctx: ToolContext) -> str:
        self.release.wait(20)
        return "released"

    def fast(self, args: Empty, ctx: ToolContext) -> str:
        return "fast"


def test_offloaded_sync_handlers_share_a_bounded_set_of_threads() -> None:
    handlers = Blocking()
    tk = Toolkit(handlers, tools=tools("hang", "fast"), max_threads=8)
    before = threading.active_count()
    peak = 0

    async def main() -> list[ToolResult]:
        nonlocal peak
        calls = [
            asyncio.ensure_future(tk.execute("hang", {}, offload=True, timeout=10))
            for _ in range(100)
        ]
        await asyncio.sleep(0.5)
        peak = threading.active_count() - before
        handlers.release.set()
        return list(await asyncio.gather(*calls))

    try:
        results = asyncio.run(main())
    finally:
        handlers.release.set()
    assert peak <= 8, peak  # 100 calls in flight, never more than 8 threads
    assert results == [ToolResult("released")] * 100


def test_at_the_limit_a_call_is_busy_after_its_timeout_and_hung_handlers_give_up_their_slot() -> (
    None
):
    handlers = Blocking()
    tk = Toolkit(handlers, tools=tools("hang", "fast"), max_threads=2)

    async def main() -> tuple[list[ToolResult], ToolResult, float, ToolResult, float]:
        hung = [asyncio.ensure_future(tk.execute("hang", {}, offload=True, timeout=0.6))]
        hung.append(asyncio.ensure_future(tk.execute("hang", {}, offload=True, timeout=0.6)))
        await asyncio.sleep(0.1)
        started = time.perf_counter()
        busy = await tk.execute("fast", {}, offload=True, timeout=0.2)
        busy_after = time.perf_counter() - started
        timed_out = list(await asyncio.gather(*hung))
        started = time.perf_counter()  # both hung handlers still hold a thread, not a slot
        fast = await tk.execute("fast", {}, offload=True, timeout=5)
        return timed_out, busy, busy_after, fast, time.perf_counter() - started

    try:
        timed_out, busy, busy_after, fast, fast_after = asyncio.run(main())
    finally:
        handlers.release.set()
    assert busy.is_error and busy.error_type == "busy"
    assert busy.output == (
        "Tool 'fast' could not start within 0.2 seconds: all 2 threads for sync handlers are "
        "busy. Try again later."
    )
    assert 0.15 < busy_after < 1.0
    assert [r.error_type for r in timed_out] == ["timeout", "timeout"]
    assert fast == ToolResult("fast") and fast_after < 0.5


def test_max_threads_must_be_a_positive_integer() -> None:
    with pytest.raises(ValueError, match="max_threads"):
        Toolkit(Blocking(), tools=tools("hang", "fast"), max_threads=0)


# -- where the calls of one response run --------------------------------------------------------


class Meeting:
    """Handlers that each wait for all the others: they return only if every call of the
    response runs at the same time. Each records its thread, and a context variable's value."""

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties, timeout=10)
        self.threads: dict[str, int] = {}
        self.values: dict[str, str] = {}

    def _meet(self, ctx: ToolContext) -> str:
        self.threads[str(ctx.call_id)] = threading.get_ident()
        self.values[str(ctx.call_id)] = REQUEST.get()
        self.barrier.wait()
        return "met"

    def a(self, args: Empty, ctx: ToolContext) -> str:
        return self._meet(ctx)

    def b(self, args: Empty, ctx: ToolContext) -> str:
        return self._meet(ctx)

    def c(self, args: Empty, ctx: ToolContext) -> str:
        return self._meet(ctx)


REQUEST: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="none")
THREE_CALLS = {
    "role": "assistant",
    "tool_calls": [
        {"id": name, "type": "function", "function": {"name": name, "arguments": "{}"}}
        for name in ("a", "b", "c")
    ],
}


def test_a_sync_round_trip_runs_its_first_call_here_and_the_others_alongside_in_threads() -> None:
    meeting = Meeting(3)
    tk = Toolkit(meeting, tools=tools("a", "b", "c"))
    token = REQUEST.set("req-7")
    try:
        replies = tk.openai_tool_messages(THREE_CALLS)
    finally:
        REQUEST.reset(token)
    assert [r["content"] for r in replies] == ["met"] * 3  # all three at once, or none returns
    here = threading.get_ident()
    assert meeting.threads["a"] == here  # no hop to an event loop for a sync handler
    assert meeting.threads["b"] != here and meeting.threads["c"] not in (here, meeting.threads["b"])
    assert meeting.values == {"a": "req-7", "b": "req-7", "c": "req-7"}  # the caller's context


def test_a_handlers_context_changes_stay_out_of_the_callers_as_in_the_async_twin() -> None:
    class Setting:
        def a(self, args: Empty, ctx: ToolContext) -> str:
            seen = REQUEST.get()
            REQUEST.set("set by a")
            return seen

        def b(self, args: Empty, ctx: ToolContext) -> str:
            seen = REQUEST.get()
            REQUEST.set("set by b")
            return seen

        def c(self, args: Empty, ctx: ToolContext) -> str:
            return REQUEST.get()

    tk = Toolkit(Setting(), tools=tools("a", "b", "c"))

    async def in_the_async_twin() -> tuple[list[str], str]:
        replies = await tk.aopenai_tool_messages(THREE_CALLS)
        return [r["content"] for r in replies], REQUEST.get()

    token = REQUEST.set("req-8")
    try:
        replies = tk.openai_tool_messages(THREE_CALLS)
        after = REQUEST.get()
        asynchronous, after_async = asyncio.run(in_the_async_twin())
    finally:
        REQUEST.reset(token)
    assert [r["content"] for r in replies] == ["req-8"] * 3 == asynchronous
    assert after == after_async == "req-8"


def test_an_async_round_trip_runs_its_first_call_on_the_loop_and_starts_the_others_first() -> None:
    # The first call blocks the loop (a sync handler inline, as a lone call runs) until the
    # others meet it: they can only if their threads were started before it ran.
    meeting = Meeting(3)
    tk = Toolkit(meeting, tools=tools("a", "b", "c"))

    async def main() -> tuple[int, Any]:
        return threading.get_ident(), await tk.aopenai_tool_messages(THREE_CALLS)

    loop_thread, replies = asyncio.run(main())
    assert [r["content"] for r in replies] == ["met"] * 3
    assert meeting.threads["a"] == loop_thread
    assert loop_thread not in (meeting.threads["b"], meeting.threads["c"])


def test_a_sync_round_trip_still_runs_async_handlers_and_timeouts_on_the_runtimes_loop() -> None:
    class Mixed:
        async def a(self, args: Empty, ctx: ToolContext) -> str:
            await asyncio.sleep(0)
            return "async"

        def b(self, args: Empty, ctx: ToolContext) -> str:
            time.sleep(5)
            return "late"

        def c(self, args: Empty, ctx: ToolContext) -> str:
            return "sync"

    tk = Toolkit(Mixed(), tools=tools("a", "b", "c"))
    started = time.monotonic()
    replies = tk.openai_tool_messages(THREE_CALLS, timeout=0.2)
    assert time.monotonic() - started < 3
    assert replies[0]["content"] == "async" and replies[2]["content"] == "sync"
    assert "did not finish within 0.2 seconds" in replies[1]["content"]


def test_a_sync_round_trip_with_many_calls_keeps_to_max_threads_worker_threads() -> None:
    class Counting:
        def __init__(self) -> None:
            self.lock = threading.Lock()
            self.running: set[int] = set()
            self.most = 0

        def a(self, args: Empty, ctx: ToolContext) -> str:
            with self.lock:
                self.running.add(threading.get_ident())
                self.most = max(self.most, len(self.running - {here}))
            time.sleep(0.05)
            with self.lock:
                self.running.discard(threading.get_ident())
            return "done"

    here = threading.get_ident()
    handlers = Counting()
    tk = Toolkit(handlers, tools=tools("a"), max_threads=2)
    many = {
        "role": "assistant",
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "a", "arguments": "{}"}}
            for i in range(12)
        ],
    }
    replies = tk.openai_tool_messages(many)
    assert [r["content"] for r in replies] == ["done"] * 12
    assert handlers.most == 2  # worker threads at once: the limit, reached, never passed


def test_a_call_that_gets_no_thread_fails_alone_in_a_sync_round_trip_as_in_the_async_twin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A process at its thread limit ("can't start new thread"): the async twin answers that call
    # with an error result; the sync round trip raised out of the whole turn (its inline call
    # never ran, the calls already started ran on unheard).
    from toolnexus_runtime import portal

    class Plain:
        def a(self, args: Empty, ctx: ToolContext) -> str:
            return "ran"

        def b(self, args: Empty, ctx: ToolContext) -> str:
            return "ran"

        def c(self, args: Empty, ctx: ToolContext) -> str:
            return "ran"

    def no_thread(*args: Any) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(portal.WORKERS, "submit", no_thread)
    tk = Toolkit(Plain(), tools=tools("a", "b", "c"))
    replies = tk.openai_tool_messages(THREE_CALLS)
    asynchronous = asyncio.run(tk.aopenai_tool_messages(THREE_CALLS))
    assert [r["content"] for r in replies] == [r["content"] for r in asynchronous]
    assert replies[0]["content"] == "ran"
    assert all("can't start new thread" in r["content"] for r in replies[1:])


def test_a_sync_round_trip_sends_its_async_calls_to_the_loop_together_before_its_sync_ones() -> (
    None
):
    # b and c (async) meet on the runtime's loop: only if they run there at once; a (sync,
    # inline here) waits for them: only if their batch started before it ran.
    met = threading.Event()

    class Mixed:
        def __init__(self) -> None:
            self.arrived: asyncio.Event | None = None
            self.loops: set[int] = set()

        def a(self, args: Empty, ctx: ToolContext) -> str:
            return "a saw them" if met.wait(10) else "a waited in vain"

        async def b(self, args: Empty, ctx: ToolContext) -> str:
            return await self._meet()

        async def c(self, args: Empty, ctx: ToolContext) -> str:
            return await self._meet()

        async def _meet(self) -> str:
            self.loops.add(id(asyncio.get_running_loop()))
            if self.arrived is None:
                self.arrived = asyncio.Event()
                await asyncio.wait_for(self.arrived.wait(), 10)
            else:
                self.arrived.set()
                met.set()
            return "met"

    handlers = Mixed()
    tk = Toolkit(handlers, tools=tools("a", "b", "c"))
    replies = tk.openai_tool_messages(THREE_CALLS)
    assert [r["content"] for r in replies] == ["a saw them", "met", "met"]
    assert len(handlers.loops) == 1


# -- what a handler raises that is not an Exception, on the runtime's loop ------------------------

STOPPING = """
import asyncio, sys
from pydantic import BaseModel
from toolnexus_runtime import Toolkit, ToolSpec

class Empty(BaseModel):
    pass

class Handlers:
    async def quit(self, args, ctx):
        raise SystemExit(3)

    def interrupt(self, args, ctx):
        raise KeyboardInterrupt

    async def fine(self, args, ctx):
        return "fine"

TK = Toolkit(Handlers(), tools={n: ToolSpec(n, Empty, n) for n in ("quit", "interrupt", "fine")})
for name, timeout in (("quit", None), ("interrupt", 5), ("quit", 5)):
    try:
        TK.execute_sync(name, {}, timeout=timeout)
    except BaseException as exc:
        print(name, type(exc).__name__)
    print(TK.execute_sync("fine", {}).output)
    sys.stdout.flush()
"""


def test_system_exit_or_keyboard_interrupt_on_the_runtimes_loop_leaves_it_serving() -> None:
    # An async handler, or a sync one under a deadline (a worker thread of the runtime's loop):
    # asyncio re-raises such an exception out of the loop, which stopped it for good, so the
    # call and every later one waited forever.
    try:
        done = run_script(STOPPING, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("a call on the runtime's loop never returned")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "quit SystemExit",
        "fine",
        "interrupt KeyboardInterrupt",
        "fine",
        "quit SystemExit",
        "fine",
    ]


NESTED_IN_A_WORKER = """
import sys
from pydantic import BaseModel
from toolnexus_runtime import Toolkit, ToolSpec

class Empty(BaseModel):
    pass

def message(*names):
    return {"role": "assistant", "tool_calls": [
        {"id": n, "type": "function", "function": {"name": n, "arguments": "{}"}} for n in names
    ]}

class Handlers:
    async def round_trip(self, args, ctx):  # on the runtime's loop, blocking it meanwhile
        replies = TK.openai_tool_messages(message("plain", "nested", "leaf"))
        return ",".join(r["content"] for r in replies)

    async def under_deadline(self, args, ctx):
        return TK.execute_sync("nested", {}, timeout=5).output

    def plain(self, args, ctx):
        return "plain"

    def nested(self, args, ctx):  # a worker thread's: it calls a sync entry point
        return "nested>" + TK.execute_sync("leaf", {}).output

    async def leaf(self, args, ctx):
        return "leaf"

names = ("round_trip", "under_deadline", "plain", "nested", "leaf")
TK = Toolkit(Handlers(), tools={n: ToolSpec(n, Empty, n) for n in names})
for name in ("round_trip", "under_deadline"):
    print(TK.execute_sync(name, {}, timeout=10).output)
    sys.stdout.flush()
"""


def test_a_sync_call_from_a_worker_thread_started_on_the_runtimes_loop_completes() -> None:
    # The worker thread's sync call went to the outermost loop, the one its own caller blocks.
    try:
        done = run_script(NESTED_IN_A_WORKER, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("a nested call from a worker thread deadlocked")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["plain,nested>leaf,leaf", "nested>leaf"]
