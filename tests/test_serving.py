"""Where teams run: MCP over streamable HTTP (a real uvicorn on 127.0.0.1 with two workers, the
official client, bearer tokens) and OpenTelemetry spans after the GenAI conventions."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from conftest import ROOT

WEATHER = ROOT / "examples" / "weather"
TOKEN = "s3cret-token"
APP = textwrap.dedent(
    """
    from toolnexus_runtime.mcp import asgi_app
    from tools import Toolkit, ToolHandlers

    class Handlers(ToolHandlers):
        async def get_weather(self, args, ctx):
            return f"{args.city}: 21C, clear (call {ctx.call_id}, pid {__import__('os').getpid()})"

        def now(self, args, ctx):
            return "12:00"

    app = asgi_app(Toolkit(Handlers()), bearer_tokens={"s3cret-token"})
    """
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("http")
    (folder / "app.py").write_text(APP)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(WEATHER)])}
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(port)]
        + ["--workers", "2", "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx2.post(url, json={}, timeout=1)
            break
        except httpx2.TransportError:
            time.sleep(0.2)
    else:
        process.kill()
        raise AssertionError(process.stderr.read().decode() if process.stderr else "no server")
    yield url
    process.terminate()
    process.wait(10)


async def session_call(url: str, token: str | None, work: Any) -> Any:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await work(session)


def test_the_official_client_lists_and_calls_with_a_token(server: str) -> None:
    async def work(session: Any) -> Any:
        listed = await session.list_tools()
        called = await session.call_tool("get_weather", {"city": "Oslo"})
        bad = await session.call_tool("get_weather", {"town": "Oslo"})
        return listed, called, bad

    listed, called, bad = asyncio.run(session_call(server, TOKEN, work))
    mcp_json = json.loads((WEATHER / "tools/schemas/mcp.json").read_text())
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools] == mcp_json
    assert not called.is_error and called.content[0].text.startswith("Oslo: 21C, clear (call ")
    assert bad.is_error and "city: Field required" in bad.content[0].text


def test_no_token_or_a_wrong_one_is_401_and_runs_nothing(server: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": "now", "arguments": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    for auth in (None, "Bearer wrong", "Basic czNjcmV0LXRva2Vu", f"bearer {TOKEN}x"):
        sent = {**headers, **({"Authorization": auth} if auth else {})}
        response = httpx2.post(server, json=body, headers=sent, timeout=10)
        assert response.status_code == 401, (auth, response.text)
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert "12:00" not in response.text
    with pytest.raises(Exception, match="unhandled errors"):  # the official client is refused
        asyncio.run(session_call(server, None, lambda s: s.list_tools()))


def test_twenty_clients_times_ten_calls_against_two_workers(server: str) -> None:
    async def client(n: int) -> list[str]:
        async def work(session: Any) -> list[str]:
            texts = []
            for i in range(10):
                result = await session.call_tool("get_weather", {"city": f"c{n}-{i}"})
                assert not result.is_error
                texts.append(result.content[0].text)
            return texts

        return list(await session_call(server, TOKEN, work))

    async def all_clients() -> list[list[str]]:
        return list(await asyncio.gather(*(client(n) for n in range(20))))

    answers = asyncio.run(all_clients())
    for n, texts in enumerate(answers):
        assert [t.split(":")[0] for t in texts] == [f"c{n}-{i}" for i in range(10)]
    pids = {t.rsplit("pid ", 1)[1].rstrip(")") for texts in answers for t in texts}
    assert len(pids) >= 1  # both workers usually answer; the kernel decides who accepts


# -- tracing ------------------------------------------------------------------------------------


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Any:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def weather_toolkit(**options: Any) -> Any:
    sys.path.insert(0, str(WEATHER))
    try:
        import tools
    finally:
        sys.path.remove(str(WEATHER))

    class Handlers(tools.ToolHandlers):  # type: ignore[misc]
        async def get_weather(self, args: Any, ctx: Any) -> str:
            return f"{args.city}: 21C, clear"

        def now(self, args: Any, ctx: Any) -> str:
            raise RuntimeError("clock broken")

    return tools, tools.Toolkit(Handlers(), **options)


def test_spans_follow_the_genai_conventions(spans: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.trace import SpanKind, StatusCode

    provider, exporter = spans
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    tools, tk = weather_toolkit(instrument=provider)
    call = {"id": "call_1", "type": "function"}
    call["function"] = {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    tk.openai_tool_messages({"tool_calls": [call]})
    tk.execute_sync("now", {}, tools.ToolContext(call_id="call_2"))
    asyncio.run(tk.execute("get_weather", {"town": "x"}))
    ok, failed, invalid = exporter.get_finished_spans()
    assert ok.name == "execute_tool get_weather" and ok.kind == SpanKind.INTERNAL
    assert dict(ok.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.description": "Current weather for a city",
    }
    assert ok.status.status_code == StatusCode.UNSET
    assert failed.attributes["error.type"] == "RuntimeError"
    assert failed.attributes["gen_ai.tool.call.id"] == "call_2"
    assert failed.status.status_code == StatusCode.ERROR
    assert invalid.attributes["error.type"] == "invalid_arguments"
    assert "gen_ai.tool.call.arguments" not in ok.attributes


def test_content_is_captured_only_when_asked(spans: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    provider, exporter = spans
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    _, tk = weather_toolkit(instrument=provider)
    tk.execute_sync("get_weather", {"city": "Oslo"})
    (span,) = exporter.get_finished_spans()
    assert span.attributes["gen_ai.tool.call.arguments"] == '{"city": "Oslo"}'
    assert span.attributes["gen_ai.tool.call.result"] == "Oslo: 21C, clear"


def test_tracing_off_adds_nothing_to_execute() -> None:
    _, tk = weather_toolkit()
    assert tk.execute.__func__ is type(tk).execute  # the plain method, no wrapper
    assert tk.execute_sync.__func__ is type(tk).execute_sync


def test_mcp_traceparent_becomes_the_span_parent(
    spans: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolnexus_runtime.mcp import mcp_server

    provider, exporter = spans
    _, tk = weather_toolkit(instrument=provider)
    server = mcp_server(tk)
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    params = type("P", (), {})()
    params.name, params.arguments = "get_weather", {"city": "Oslo"}
    params.meta = {"traceparent": f"00-{trace_id}-{parent_id}-01"}
    ctx = type("C", (), {"request_id": 7})()
    entry = server._request_handlers["tools/call"]  # what the SDK dispatches tools/call to
    call_tool = getattr(entry, "handler", None) or entry[1]
    result = asyncio.run(call_tool(ctx, params))
    assert not result.is_error
    (span,) = exporter.get_finished_spans()
    assert span.context.trace_id == int(trace_id, 16)
    assert span.parent is not None and span.parent.span_id == int(parent_id, 16)
    assert span.attributes["gen_ai.tool.call.id"] == "7"


def test_without_capture_no_span_carries_error_text(
    spans: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider, exporter = spans
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    tools, tk = weather_toolkit(instrument=provider)

    class Leaky(tools.ToolHandlers):  # type: ignore[misc]
        async def get_weather(self, args: Any, ctx: Any) -> str:
            raise tools.ToolError(f"no station near {args.city} (key=sk-live-123)")

        def now(self, args: Any, ctx: Any) -> str:
            raise RuntimeError("dsn=postgres://admin:hunter2@db/prod")

    tk = tools.Toolkit(Leaky(), instrument=provider)
    tk.execute_sync("now", {})
    tk.execute_sync("get_weather", {"city": "Secretville"})
    tk.execute_sync("get_weather", {"town": "Secretville"})
    failed, refused, invalid = exporter.get_finished_spans()
    assert [s.attributes["error.type"] for s in (failed, refused, invalid)] == [
        "RuntimeError",
        "ToolError",
        "invalid_arguments",
    ]
    for span in (failed, refused, invalid):
        assert span.status.status_code.name == "ERROR"
        carried = [span.status.description or ""]
        carried += [str(value) for value in span.attributes.values()]
        carried += [str(e.attributes) + e.name for e in span.events]
        for secret in ("hunter2", "sk-live-123", "Secretville", "town"):
            assert not any(secret in text for text in carried), (span.name, carried)
