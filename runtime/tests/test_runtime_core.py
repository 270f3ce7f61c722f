"""toolnexus_runtime on its own (no generated package): one event loop, no starvation, errors that
are results and logged, the version check, the quality bar."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

import toolnexus_runtime
from toolnexus_runtime import ToolContext, ToolError, Toolkit, ToolResult, ToolSpec, check_runtime
from toolnexus_runtime.portal import WORKERS, run_sync

RUNTIME = Path(__file__).resolve().parent.parent


class Empty(BaseModel):
    pass


class Item(BaseModel):
    value: int


MODELS: dict[str, type[BaseModel]] = {
    "put": Item,
    "take": Empty,
    "loop_id": Empty,
    "hang": Empty,
    "fast": Empty,
    "boom": Empty,
    "refuse": Empty,
    "nested": Empty,
    "slow_async": Empty,
}
TOOLS = {name: ToolSpec(name, model, name) for name, model in MODELS.items()}


class Handlers:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[int] | None = None
        self.release = threading.Event()

    async def put(self, args: Item, ctx: ToolContext) -> str:
        if self.queue is None:  # created on the first call, bound to the loop that runs it
            self.queue = asyncio.Queue()
        await self.queue.put(args.value)
        return f"queued {args.value}"

    async def take(self, args: Empty, ctx: ToolContext) -> str:
        assert self.queue is not None
        return f"took {await asyncio.wait_for(self.queue.get(), 1)}"

    async def loop_id(self, args: Empty, ctx: ToolContext) -> str:
        return str(id(asyncio.get_running_loop()))

    def hang(self, args: Empty, ctx: ToolContext) -> str:
        self.release.wait(30)
        return "released"

    def fast(self, args: Empty, ctx: ToolContext) -> str:
        return "fast"

    def boom(self, args: Empty, ctx: ToolContext) -> str:
        raise RuntimeError("connect failed: dsn=postgres://admin:hunter2@db/prod")

    def refuse(self, args: Empty, ctx: ToolContext) -> str:
        raise ToolError("No such order: 42. Ask the user for the order number.")

    async def nested(self, args: Empty, ctx: ToolContext) -> str:
        # A handler on the runtime's loop that calls a sync entry point: must not deadlock.
        inner = TOOLKIT.execute_sync("loop_id", {})
        return f"inner {inner.output}"

    async def slow_async(self, args: Empty, ctx: ToolContext) -> str:
        await asyncio.sleep(5)
        return "late"


TOOLKIT: Toolkit[Handlers] = Toolkit(Handlers(), tools=TOOLS)


@pytest.fixture
def tk() -> Toolkit[Handlers]:
    return Toolkit(Handlers(), tools=TOOLS)


def test_sync_entry_points_share_one_event_loop(tk: Toolkit[Handlers]) -> None:
    loops = {tk.execute_sync("loop_id", {}).output for _ in range(6)}
    call = {"id": "c", "type": "function", "function": {"name": "loop_id", "arguments": "{}"}}
    loops |= {tk.openai_tool_messages({"tool_calls": [call]})[0]["content"] for _ in range(3)}
    assert len(loops) == 1


def test_a_loop_bound_queue_survives_across_sync_calls(tk: Toolkit[Handlers]) -> None:
    for value in range(5):
        assert tk.execute_sync("put", {"value": value}).output == f"queued {value}"
        blocks = [{"type": "tool_use", "id": f"t{value}", "name": "take", "input": {}}]
        (reply,) = tk.anthropic_tool_results(blocks)
        assert reply == {
            "type": "tool_result",
            "tool_use_id": f"t{value}",
            "content": f"took {value}",
            "is_error": False,
        }


def test_sync_entry_point_inside_a_running_loop_does_not_deadlock(tk: Toolkit[Handlers]) -> None:
    async def main() -> tuple[str, str]:
        here = str(id(asyncio.get_running_loop()))
        return here, tk.execute_sync("loop_id", {}).output

    here, there = asyncio.run(main())
    assert there != here and there.isdigit()


def test_a_handler_on_the_runtime_loop_may_call_a_sync_entry_point() -> None:
    result = TOOLKIT.execute_sync("nested", {}, timeout=5)
    assert not result.is_error and result.output.startswith("inner ")


def test_hung_sync_handlers_never_starve_a_fast_one(tk: Toolkit[Handlers]) -> None:
    try:
        for _ in range(12):
            hung = tk.execute_sync("hang", {}, timeout=0.05)
            assert hung.is_error and "did not finish within 0.05 seconds" in hung.output
        started = time.perf_counter()
        fast = tk.execute_sync("fast", {}, timeout=1.0)
        elapsed = time.perf_counter() - started
        assert fast == ToolResult("fast")
        assert elapsed < 0.5, elapsed  # in practice well under a millisecond's worth of work

        async def concurrently() -> list[ToolResult]:
            return list(
                await asyncio.gather(
                    *(tk.execute("hang", {}, timeout=0.05) for _ in range(12)),
                    tk.execute("fast", {}, timeout=1.0),
                )
            )

        results = asyncio.run(concurrently())
        assert results[-1] == ToolResult("fast") and all(r.is_error for r in results[:-1])
        # The sync round trips, served from the shared loop, still answer too.
        call = {"id": "c", "type": "function", "function": {"name": "fast", "arguments": "{}"}}
        assert tk.openai_tool_messages({"tool_calls": [call]}, timeout=1.0)[0]["content"] == "fast"
    finally:
        tk.handlers.release.set()


def test_worker_threads_outlive_each_asyncio_run() -> None:
    # Each question in its own asyncio.run (or run_until_complete): the sync handlers of a
    # parallel turn reuse the same worker threads instead of starting new ones every time.
    seen: list[int] = []

    class Threads:
        def fast(self, args: Empty, ctx: ToolContext) -> str:
            seen.append(threading.get_ident())
            return "fast"

    tk = Toolkit(Threads(), tools={"fast": ToolSpec("fast", Empty, "fast")})

    async def turn() -> list[ToolResult]:
        return list(await asyncio.gather(*(tk.execute("fast", {}, offload=True) for _ in range(2))))

    before = threading.active_count()
    idle = len(WORKERS._idle)  # workers earlier tests left idle: any of them may be taken
    for _ in range(10):
        assert asyncio.run(turn()) == [ToolResult("fast")] * 2
    assert threading.get_ident() not in seen  # never on the event loop's thread
    # 20 calls: never a new thread each (at most the two a turn needs, none once idle ones exist)
    assert len(set(seen)) <= idle + 2 and threading.active_count() <= before + 2


def test_tool_error_sends_exactly_its_text_and_logs_nothing(
    tk: Toolkit[Handlers], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="toolnexus_runtime"):
        result = tk.execute_sync("refuse", {})
    assert result == ToolResult("No such order: 42. Ask the user for the order number.", True)
    assert caplog.records == []


def test_a_raising_handler_is_logged_with_traceback_tool_and_call_id(
    tk: Toolkit[Handlers], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="toolnexus_runtime"):
        result = tk.execute_sync("boom", {}, ToolContext(call_id="call_7"))
    assert result.is_error
    assert result.output == (
        "Tool 'boom' failed: RuntimeError: connect failed: dsn=postgres://admin:hunter2@db/prod"
    )
    (record,) = caplog.records
    assert record.levelno == logging.ERROR and record.name == "toolnexus_runtime"
    assert "'boom'" in record.getMessage() and "call_7" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError
    assert "hunter2" in caplog.text  # the traceback is in the log, where it belongs
    assert record.__dict__["tool_name"] == "boom" and record.__dict__["call_id"] == "call_7"


def test_error_message_decides_what_the_model_sees(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tuple[str, str]] = []

    def message(name: str, exc: Exception) -> str:
        seen.append((name, type(exc).__name__))
        return f"{name} is unavailable right now; try again later."

    tk = Toolkit(Handlers(), tools=TOOLS, error_message=message)
    with caplog.at_level(logging.ERROR, logger="toolnexus_runtime"):
        result = asyncio.run(tk.execute("boom", {}))
    assert result == ToolResult("boom is unavailable right now; try again later.", True)
    assert "hunter2" not in result.output and seen == [("boom", "RuntimeError")]
    assert len(caplog.records) == 1  # still logged
    # ToolError is the handler's own answer: error_message is not consulted.
    assert tk.execute_sync("refuse", {}).output.startswith("No such order")

    def broken(name: str, exc: Exception) -> str:
        raise ValueError("oops")

    tk = Toolkit(Handlers(), tools=TOOLS, error_message=broken)
    assert tk.execute_sync("boom", {}) == ToolResult("Tool 'boom' failed.", True)


def test_async_timeout_on_the_shared_loop(tk: Toolkit[Handlers]) -> None:
    started = time.perf_counter()
    result = tk.execute_sync("slow_async", {}, timeout=0.05)
    assert result.is_error and "0.05 seconds" in result.output
    assert time.perf_counter() - started < 2
    assert tk.execute_sync("loop_id", {}).output.isdigit()  # the loop is still serving


def test_missing_handler_methods_and_schemas() -> None:
    with pytest.raises(TypeError, match="does not implement the tool method"):
        Toolkit(object(), tools=TOOLS)
    with pytest.raises(NotImplementedError, match="no provider schemas"):
        Toolkit(Handlers(), tools=TOOLS).to_gemini()


def test_check_runtime_names_both_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    check_runtime("pkg", "0.2.0", "0.3")
    monkeypatch.setattr(toolnexus_runtime._version, "__version__", "0.3.0")
    with pytest.raises(ImportError) as info:
        check_runtime("myapp.tools", "0.2.0", "0.3")
    text = str(info.value)
    assert "myapp.tools" in text and "toolnexus-runtime>=0.2.0,<0.3" in text and "0.3.0" in text
    monkeypatch.setattr(toolnexus_runtime._version, "__version__", "0.1.9")
    with pytest.raises(ImportError, match="0.1.9"):
        check_runtime("pkg", "0.2.0", "0.3")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_gets_a_working_runtime(tk: Toolkit[Handlers]) -> None:
    assert tk.execute_sync("loop_id", {}).output.isdigit()  # the parent's portal is running
    assert tk.execute_sync("fast", {}, timeout=1).output == "fast"  # and a worker thread
    script = (
        "import os, sys\n"
        "from test_runtime_core import TOOLKIT\n"
        "TOOLKIT.execute_sync('loop_id', {})\n"
        "TOOLKIT.execute_sync('fast', {}, timeout=1)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    ok = TOOLKIT.execute_sync('loop_id', {}).output.isdigit()\n"
        "    ok = ok and TOOLKIT.execute_sync('fast', {}, timeout=1).output == 'fast'\n"
        "    os._exit(0 if ok else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "sys.exit(os.waitstatus_to_exitcode(status))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).parent,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_run_sync_propagates_exceptions() -> None:
    async def fail() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        run_sync(fail())


@pytest.mark.parametrize(
    "command",
    [
        ["-m", "mypy", "--strict", "toolnexus_runtime", "tests"],
        ["-m", "ruff", "check", "toolnexus_runtime", "tests"],
        ["-m", "ruff", "format", "--check", "toolnexus_runtime", "tests"],
    ],
    ids=["mypy", "ruff", "ruff-format"],
)
def test_quality(command: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, *command], cwd=RUNTIME, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_nothing_optional_is_imported() -> None:
    script = (
        "import sys, toolnexus_runtime, toolnexus_runtime.mcp\n"
        "print(sorted(m for m in ('mcp', 'anyio', 'httpx', 'opentelemetry', 'jsonschema')"
        " if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("installed", "minimum", "below", "accepted"),
    [
        ("0.2.0rc1", "0.2.0", "0.3", False),  # a pre-release comes before its release
        ("0.2.0.dev3", "0.2.0", "0.3", False),
        ("0.2rc1", "0.2.0", "0.3", False),
        ("0.3.0rc1", "0.2.0", "0.3", False),  # <0.3 excludes 0.3's own pre-releases (PEP 440)
        ("0.2.1rc1", "0.2.0", "0.3", True),
        ("0.2.0.post1", "0.2.0", "0.3", True),
        ("0.2.0+local.7", "0.2.0", "0.3", True),
        ("0.2.10", "0.2.9", "0.3", True),
        ("0.10.0", "0.2.0", "0.3", False),
    ],
)
def test_check_runtime_follows_pep_440(
    installed: str, minimum: str, below: str, accepted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(toolnexus_runtime._version, "__version__", installed)
    if accepted:
        check_runtime("pkg", minimum, below)
    else:
        with pytest.raises(ImportError, match=installed.replace("+", r"\+")):
            check_runtime("pkg", minimum, below)
