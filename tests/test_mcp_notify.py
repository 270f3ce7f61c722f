"""A handler's progress and log messages reach an MCP client of our server (uvicorn on
127.0.0.1, the official `mcp` client): before the result, from any thread, at the level the
session asked for; a tools/call answered as an event stream, everything else as JSON. Before,
the server declared no logging capability (logging/setLevel: method not found) and answered
in JSON only, so nothing but the result could reach a client."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import httpx2
import pytest
from conftest import build_in
from toolnexus_runtime import ToolContext
from toolnexus_runtime.reporting import QUEUE_LIMIT, Relay
from uvicorn_helpers import serving

SPECS = {"chatty.yaml": {"description": "Logs at every level, reports progress"}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Handlers:
    def chatty(self, args: Any, ctx: Any) -> str:  # a sync handler: a worker thread
        for i, level in enumerate(("debug", "info", "warning", "error")):
            ctx.log(level, {"step": i, "thread": threading.current_thread().name}, logger="t")
            ctx.report_progress(i + 1, 4)
        return "done"


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_in(tmp_path_factory.mktemp("notify"), SPECS)


async def session_run(url: str, level: str | None) -> tuple[list[Any], list[float], Any]:
    from mcp import Client

    logs: list[Any] = []
    progress: list[float] = []

    async def on_log(params: Any) -> None:
        logs.append((params.level, params.logger, params.data["step"]))

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    async with Client(url, logging_callback=on_log, mode="legacy") as client:
        if level is not None:
            await client.set_logging_level(level)  # type: ignore[arg-type]
        result = await client.call_tool("chatty", {}, progress_callback=on_progress)
        return logs, progress, result


def test_a_session_gets_the_levels_it_asked_for_before_the_result(pkg: Any) -> None:
    from toolnexus_runtime.mcp import asgi_app

    app = asgi_app(pkg.Toolkit(Handlers()), allow_anonymous=True, stateless=False)
    with serving(app) as url:
        warned, progress, result = asyncio.run(session_run(url, "warning"))
        every, _, _ = asyncio.run(session_run(url, "debug"))
        default, _, _ = asyncio.run(session_run(url, None))
    assert warned == [("warning", "t", 2), ("error", "t", 3)]
    assert every == [("debug", "t", 0), ("info", "t", 1), ("warning", "t", 2), ("error", "t", 3)]
    assert default == every[1:]  # info and above until the session says otherwise
    assert progress == [1, 2, 3, 4]
    assert result.content[0].text == "done"


def test_stateless_calls_stream_and_everything_else_is_json(pkg: Any) -> None:
    from toolnexus_runtime.mcp import asgi_app

    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "chatty"}}
    listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    kinds = {}
    events = ""
    for stream_calls in (True, False):
        app = asgi_app(pkg.Toolkit(Handlers()), allow_anonymous=True, stream_calls=stream_calls)
        with serving(app) as url, httpx2.Client(timeout=30) as http:
            for name, body in (("call", call), ("list", listing)):
                answer = http.post(url, json=body, headers=ACCEPT)
                assert answer.status_code == 200, answer.text
                kinds[stream_calls, name] = answer.headers["content-type"].split(";")[0]
            if stream_calls:
                events = http.post(url, json=call, headers=ACCEPT).text
    assert kinds == {
        (True, "call"): "text/event-stream",
        (True, "list"): "application/json",
        (False, "call"): "application/json",
        (False, "list"): "application/json",
    }
    # in the stream: the info, warning and error messages, then the result
    assert events.count('"method":"notifications/message"') == 3
    assert events.index("notifications/message") < events.index('"result"')


def test_without_a_client_a_log_message_goes_to_python_logging(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ctx = ToolContext(tool_name="chatty", call_id="c1")
    with caplog.at_level(logging.DEBUG, logger="toolnexus_runtime.tools"):
        ctx.log("warning", "disk almost full", logger="fs")
        ctx.report_progress(1, 2)  # nobody listens: nothing happens
    [record] = caplog.records
    assert (record.levelno, record.getMessage()) == (logging.WARNING, "[fs] disk almost full")
    assert record.__dict__["tool_name"] == "chatty"
    with pytest.raises(ValueError, match="log level must be one of debug, info"):
        ctx.log("verbose", "x")


def test_a_client_slower_than_the_handler_costs_memory_bounded_by_the_queue(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sent: list[Any] = []

    async def slow(item: Any) -> None:
        await asyncio.sleep(0.001)
        sent.append(item)

    async def main() -> None:
        relay = Relay(slow, "chatty")
        for i in range(QUEUE_LIMIT + 500):  # all at once, faster than any client reads
            relay.progress(i, None, None)
        await relay.close()
        relay.progress(1, None, None)  # after the call: dropped

    started = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="toolnexus_runtime"):
        asyncio.run(main())
    assert len(sent) == QUEUE_LIMIT and [item[1] for item in sent[:3]] == [0, 1, 2]
    assert time.perf_counter() - started < 10
    assert "sent 500 progress or log messages more than its client read in time" in caplog.text
