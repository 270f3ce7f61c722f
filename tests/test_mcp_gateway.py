"""MCP tools proxied through the Toolkit and served again by our MCP server (the gateway), with
real servers: the conformance server (examples/conformance, toolnexus-gen's own) as the upstream
over stdio, synced and built as a user would; our server on 127.0.0.1 under uvicorn, reached with
the official `mcp` client. Each test failed before its fix: images and resources became
"[image image/png]" with their bytes dropped, the upstream's progress and log messages were
lost, URL arguments were sent as the typed model normalised them, a dead server cost more than
its timeout on every call and was started again each time, one huge line from a local server
took time quadratic in its length, and a task-only tool was called as any other."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, cli_process, write_specs
from mcp_helpers import calls, stdio
from pydantic import BaseModel
from toolnexus_runtime import Toolkit, ToolSpec
from toolnexus_runtime.content import Image, Resource, Text
from uvicorn_helpers import serving

CONFORMANCE = ROOT / "examples" / "conformance"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


class Empty(BaseModel):
    pass


def sync_and_build(folder: Path, servers: dict[str, Any], package: str) -> Any:
    """A project syncing `servers` (mcp.json), built into `package` and imported."""
    (folder / "pyproject.toml").write_text(
        f'[tool.toolnexus-gen]\nspecs = "specs"\nout = "{package}"\nmcp_config = "mcp.json"\n'
        'targets = ["mcp", "anthropic"]\n'
    )
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    write_specs(folder / "specs", {})
    synced = cli_process("sync", cwd=folder)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    built = cli_process("build", cwd=folder)
    assert built.returncode == 0, built.stdout + built.stderr
    sys.path.insert(0, str(folder))
    try:
        return __import__(package)
    finally:
        sys.path.remove(str(folder))


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("gateway")
    server = {"command": sys.executable, "args": [str(CONFORMANCE / "serve.py"), "--stdio"]}
    pkg = sync_and_build(folder, {"up": server}, "gateway_tools")
    return pkg, folder / "mcp.json"


def test_an_upstream_image_and_resource_reach_the_result_and_a_provider(gateway: Any) -> None:
    pkg, config = gateway
    with pkg.Toolkit(object(), mcp_config=config) as tk:
        result = tk.execute_sync("up_test_multiple_content_types", {})
        call = {"type": "tool_use", "id": "t", "name": "up_test_multiple_content_types"}
        [reply] = tk.anthropic_tool_results([{**call, "input": {}}])
    assert result.content == (
        Text("Multiple content types test:"),
        Image(PNG, "image/png"),
        Resource(
            "test://mixed-content-resource",
            text='{"test":"data","value":123}',
            mime_type="application/json",
        ),
    )
    assert [block["type"] for block in reply["content"]] == ["text", "image", "text"]
    assert base64.b64decode(reply["content"][1]["source"]["data"]) == PNG


def test_the_gateway_serves_content_progress_and_logs_to_its_own_client(gateway: Any) -> None:
    from mcp import Client
    from toolnexus_runtime.mcp import asgi_app

    pkg, config = gateway
    toolkit = pkg.Toolkit(object(), mcp_config=config)
    progress: list[tuple[float, float | None]] = []
    logs: list[Any] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async def main(url: str) -> tuple[Any, Any, Any]:
        async with Client(url, logging_callback=on_log, mode="legacy") as client:
            mixed = await client.call_tool("up_test_multiple_content_types", {})
            slow = await client.call_tool(
                "up_test_tool_with_progress", {}, progress_callback=on_progress
            )
            assert len(progress) == 3  # every notification came before the result
            logged = await client.call_tool("up_test_tool_with_logging", {})
            assert len(logs) == 3
            return mixed, slow, logged

    with serving(asgi_app(toolkit, allow_anonymous=True)) as url:
        mixed, slow, logged = asyncio.run(main(url))
    toolkit.close()
    assert [block.type for block in mixed.content] == ["text", "image", "resource"]
    assert base64.b64decode(mixed.content[1].data) == PNG
    assert mixed.content[2].resource.text == '{"test":"data","value":123}'
    assert progress == [(0, 100), (50, 100), (100, 100)]
    assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]
    assert not slow.is_error and not logged.is_error


def test_arguments_reach_the_server_as_the_model_wrote_them(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps(
            [
                {
                    "name": "fetch",
                    "description": "Fetch a page",
                    "inputSchema": {
                        "type": "object",
                        "properties": {
                            "url": {"type": "string", "format": "uri"},
                            "depth": {"type": "number"},
                            "tags": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["url"],
                    },
                }
            ]
        )
    )
    count = tmp_path / "count"
    server = stdio("--tools", str(tools), "--count", str(count))
    pkg = sync_and_build(tmp_path, {"up": server}, "argument_tools")
    sent = {"url": "HTTP://Example.COM", "depth": 2, "tags": ["a"]}
    with pkg.Toolkit(object(), mcp_config=tmp_path / "mcp.json") as tk:
        assert not tk.execute_sync("up_fetch", json.dumps(sent)).is_error
        refused = tk.execute_sync("up_fetch", {"url": 7})  # the model's mistake: never sent
    # not "http://example.com/" (the typed model's AnyUrl), nor 2.0
    assert calls(count) == [f"fetch {json.dumps(sent, sort_keys=True)}"]
    assert refused.is_error and "url" in refused.output


def counting_server(folder: Path, body: str) -> dict[str, Any]:
    """An mcp.json entry for a local server that notes each start in `starts`, then runs body."""
    script = folder / "server.py"
    script.write_text(
        f"import pathlib, sys, time\n"
        f"with open({str(folder / 'starts')!r}, 'a') as f: f.write('start\\n')\n"
        + textwrap.dedent(body)
    )
    return {"command": sys.executable, "args": [str(script)]}


def starts(folder: Path) -> int:
    path = folder / "starts"
    return len(path.read_text().splitlines()) if path.exists() else 0


def proxied(server: dict[str, Any], tool: str = "t") -> Toolkit[Any]:
    table = {"x_t": ToolSpec("x_t", Empty, None, {"mcp": {"server": "x", "tool": tool}})}
    return Toolkit(object(), tools=table, mcp_config={"mcpServers": {"x": server}})


def test_a_server_that_exits_is_marked_down_and_not_started_again_at_once(tmp_path: Path) -> None:
    server = counting_server(tmp_path, "sys.exit(3)\n")
    with proxied({**server, "timeout": 10}) as tk:
        first = tk.execute_sync("x_t", {})
        took = time.perf_counter()
        again = [tk.execute_sync("x_t", {}) for _ in range(5)]
        took = time.perf_counter() - took
        assert starts(tmp_path) == 1  # once, not six times
        assert took < 1.0, took
        time.sleep(1.2)  # the first backoff: then it is tried again
        tk.execute_sync("x_t", {})
        assert starts(tmp_path) == 2
    assert first.is_error and "unavailable" in first.output
    assert all("it is down; the next try in" in result.output for result in again)


def test_a_server_that_never_answers_costs_its_timeout_per_call_not_more(tmp_path: Path) -> None:
    import mcp  # noqa: F401 (imported before the clock starts: a first import takes seconds)

    # It reads nothing and answers nothing, and ignores its closed stdin.
    server = counting_server(tmp_path, "time.sleep(120)\n")
    timeout = 3.0
    with proxied({**server, "timeout": timeout}) as tk:
        start = time.perf_counter()
        first = tk.execute_sync("x_t", {})
        first_took = time.perf_counter() - start
        start = time.perf_counter()
        second = tk.execute_sync("x_t", {})
        second_took = time.perf_counter() - start
    assert (
        first.output
        == f"MCP server 'x' did not answer within {timeout:g} s (its set-up had not finished)"
    )
    assert timeout - 0.2 < first_took < timeout + 0.8, first_took
    assert "it is down" in second.output and second_took < 0.5, second_took
    assert starts(tmp_path) == 1


def raw_server(tools: list[dict[str, Any]], answer: str) -> str:
    """The body of a local server speaking JSON-RPC lines by hand, as of protocol 2025-11-25
    (it refuses server/discover, so the client falls back to initialize): it lists `tools` and
    answers each call with `answer` (Python code; `ident` is the call's id, `request` the
    call)."""
    return f"""
import json
def send(message):
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\\n")
    sys.stdout.buffer.flush()
for line in sys.stdin:
    request = json.loads(line)
    method, ident = request.get("method"), request.get("id")
    if method == "initialize":
        send({{"jsonrpc": "2.0", "id": ident, "result": {{
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "raw", "version": "1"}}}}}})
    elif method == "tools/list":
        send({{"jsonrpc": "2.0", "id": ident, "result": {{"tools": {tools!r}}}}})
    elif method == "tools/call":
{textwrap.indent(textwrap.dedent(answer), " " * 8)}
    elif ident is not None:
        send({{"jsonrpc": "2.0", "id": ident, "error": {{"code": -32601, "message": "no"}}}})
"""


TOOL = {"name": "t", "inputSchema": {"type": "object"}}
# The call answered with one line of 50 MB.
HUGE_LINE = raw_server(
    [TOOL],
    """
    head = '{"jsonrpc": "2.0", "id": %s, "result": {"content": [{"type": "text", "text": "'
    sys.stdout.buffer.write((head % json.dumps(ident)).encode() + b"y" * 50_000_000)
    sys.stdout.buffer.write(b'"}]}}\\n')
    sys.stdout.buffer.flush()
    """,
)


def test_a_50_mb_line_is_cut_while_it_is_read_in_bounded_time(tmp_path: Path) -> None:
    server = counting_server(tmp_path, HUGE_LINE)
    with proxied({**server, "timeout": 60}) as tk:
        assert tk.execute_sync("x_t", {}).is_error  # (opens the session: not timed)
        start = time.perf_counter()
        result = tk.execute_sync("x_t", {})
        took = time.perf_counter() - start
    assert result.is_error
    assert result.output.startswith("MCP server 'x': its answer was 5000")
    assert "over the limit of 16777216 bytes" in result.output
    assert took < 15, took  # the SDK's reader took minutes: quadratic in the line's length


def test_a_task_only_tool_gets_a_clear_error_result(tmp_path: Path) -> None:
    render = {**TOOL, "name": "render", "execution": {"taskSupport": "required"}}
    answer = """
    with open("calls", "a") as f: f.write(request["params"]["name"] + "\\n")
    send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": "ok"}]}})
    """
    server = {**counting_server(tmp_path, raw_server([render, TOOL], answer)), "cwd": str(tmp_path)}
    with proxied(server, "render") as tk:
        result = tk.execute_sync("x_t", {})
    with proxied(server, "t") as tk:
        plain = tk.execute_sync("x_t", {})
    assert result.is_error and result.output == (
        "Tool 'render' of MCP server 'x' runs only as an MCP task (execution.taskSupport: "
        "required), which this runtime does not run: it cannot be called here (`toolnexus-gen "
        "sync` leaves such tools out)."
    )
    assert (plain.is_error, plain.output) == (False, "ok")
    assert (tmp_path / "calls").read_text() == "t\n"  # render was never sent
