"""The six real MCP servers as a user meets them: installed from PyPI (mcp-server-time, -fetch,
-git) and npm (@modelcontextprotocol/server-everything, -filesystem, -memory) at the versions
tests/fixtures/mcp recorded (tests/real_mcp.py caches them outside the repository), synced,
built for all six targets with default settings, the package checked by mypy --strict and
ruff's defaults and imported with only the runtime, and one tool of each called through the
generated Toolkit, proxied to the real server.

`make test` runs one PyPI and one npm server (time, everything); `make test-all` all six (the
soak marker)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from provider_rules import violations
from real_mcp import RealServer, cache_root, servers
from runtime_only import run as run_runtime_only
from sdk_check import assert_accepted

PACKAGE = "real_tools"
TARGETS = {"gemini", "openai", "openai_responses", "anthropic", "mcp", "bedrock"}


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = b"<html><body><p>toolnexus fetch page</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def page() -> Iterator[str]:
    """A page on 127.0.0.1 for mcp-server-fetch to fetch."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/page"
    finally:
        server.shutdown()
        server.server_close()


def run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, timeout=600)


CALLS = """
import asyncio, json, sys
import {package}
calls = json.loads(sys.argv[1])
async def main():
    async with {package}.Toolkit({package}.ToolHandlers(), mcp_config="mcp.json") as tk:
        for tool, arguments in calls:
            r = await tk.execute(tool, arguments)
            print(json.dumps([tool, r.is_error, r.output]))
        if {image!r}:  # a server's image, as the model receives it
            use = {{"type": "tool_use", "id": "toolu_1", "name": {image!r}, "input": {{}}}}
            call = {{"type": "function_call", "call_id": "c1", "name": {image!r}, "arguments": "{{}}"}}
            print(json.dumps(["#image", await tk.aanthropic_tool_results([use]),
                              await tk.aopenai_responses_outputs([call])]))
asyncio.run(main())
"""


def check_real_servers(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    start = time.perf_counter()

    def lap(phase: str) -> None:
        nonlocal start
        timings[phase] = time.perf_counter() - start
        start = time.perf_counter()

    real: list[RealServer] = servers(folder, names)  # installed (or from the cache)
    lap("install")
    (folder / "mcp.json").write_text(
        json.dumps({"mcpServers": {s.name: {**s.entry, "timeout": 60} for s in real}}, indent=2)
    )
    (folder / "pyproject.toml").write_text(
        f'[tool.toolnexus-gen]\nspecs = "specs"\nout = "{PACKAGE}"\nmcp_config = "mcp.json"\n'
    )
    synced = cli("sync", cwd=folder)
    assert synced.exit_code == 0, synced.output + synced.stderr
    for server in real:
        listed = f"{server.tools} tool{'' if server.tools == 1 else 's'}"
        assert f"{server.name}: {listed} (stdio, " in synced.output, synced.output
    assert " error[" not in synced.stderr, synced.stderr
    lap("sync")

    # build with default settings: every target, nothing in pyproject.toml about reach
    built = cli("build", cwd=folder)
    assert built.exit_code == 0, built.stderr
    assert " error[" not in built.stderr
    files = {
        p.stem: json.loads(p.read_text()) for p in (folder / PACKAGE / "schemas").glob("*.json")
    }
    assert TARGETS <= set(files)
    assert_accepted(files)
    assert violations(files) == []
    lap("build")

    # the runtime's part of mypy's cache is reused between runs (it is checked by its hashes)
    cache = cache_root() / f"mypy-{sys.version_info[0]}.{sys.version_info[1]}"
    mypy = run(
        sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), PACKAGE, cwd=folder
    )
    assert mypy.returncode == 0, mypy.stdout
    lap("mypy")
    ruff = str(Path(sysconfig.get_path("scripts")) / "ruff")
    for rules in ([], ["--extend-select", "I"]):
        check = run(ruff, "check", "--isolated", *rules, PACKAGE, cwd=folder)
        assert check.returncode == 0, check.stdout
    imported = run_runtime_only(
        f"import {PACKAGE}\nprint(len({PACKAGE}.TOOLS))", folder, (PACKAGE,)
    )
    assert imported.returncode == 0, imported.stderr
    assert int(imported.stdout) == sum(s.tools for s in real)
    lap("ruff and import")

    # one call each, through the generated Toolkit, to the real server; server-everything's
    # image as an Anthropic image block and an OpenAI Responses input_image
    image = "everything_get-tiny-image" if "everything" in names else ""
    with page() as url:
        calls = [[s.tool, json.loads(json.dumps(s.arguments).replace("{page}", url))] for s in real]
        called = run(
            sys.executable,
            "-c",
            CALLS.format(package=PACKAGE, image=image),
            json.dumps(calls),
            cwd=folder,
        )
    assert called.returncode == 0, called.stderr
    lines = [json.loads(line) for line in called.stdout.splitlines()]
    answers = {tool: (is_error, output) for tool, is_error, output in lines if tool != "#image"}
    if image:
        [(_, anthropic, responses)] = [line for line in lines if line[0] == "#image"]
        check_image(anthropic, responses)
    for server in real:
        is_error, output = answers[server.tool]
        assert not is_error, (server.tool, output)
        assert server.expect in output, (server.tool, output)
    lap("calls")
    print("real servers " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))


def check_image(anthropic: list[dict[str, Any]], responses: list[dict[str, Any]]) -> None:
    from anthropic.types import MessageParam
    from openai.types.responses import ResponseInputItemParam
    from pydantic import TypeAdapter

    [result] = anthropic
    TypeAdapter(MessageParam).validate_python({"role": "user", "content": anthropic})
    [picture] = [block for block in result["content"] if block["type"] == "image"]
    assert picture["source"]["media_type"] == "image/png"
    assert base64.b64decode(picture["source"]["data"]).startswith(b"\x89PNG\r\n")
    [output] = responses
    TypeAdapter(ResponseInputItemParam).validate_python(output)
    [item] = [part for part in output["output"] if part["type"] == "input_image"]
    assert item["image_url"].startswith("data:image/png;base64,")
    assert base64.b64decode(item["image_url"].split(",", 1)[1]) == base64.b64decode(
        picture["source"]["data"]
    )


def test_one_pypi_and_one_npm_server_sync_build_type_check_and_answer(tmp_path: Path) -> None:
    check_real_servers(tmp_path / "real", ["time", "everything"])


@pytest.mark.soak
def test_all_six_real_servers_sync_build_type_check_and_answer(tmp_path: Path) -> None:
    check_real_servers(
        tmp_path / "real", ["time", "fetch", "git", "everything", "filesystem", "memory"]
    )
