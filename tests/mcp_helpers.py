"""Helpers for the tests of MCP servers as a tool source: projects with an mcp.json, and the
upstream server (tests/upstream_mcp.py) over stdio or over streamable HTTP behind a token."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conftest import write_specs

UPSTREAM = Path(__file__).parent / "upstream_mcp.py"
sys.path.insert(0, str(UPSTREAM.parent))
import upstream_mcp  # noqa: E402

TOKEN = "tok-7f3a9c2e51"
TOOLS = upstream_mcp.TOOLS


def stdio(*args: str, **extra: Any) -> dict[str, Any]:
    """An mcp.json entry starting the upstream server over stdio."""
    return {"command": sys.executable, "args": [str(UPSTREAM), *args], **extra}


def project(
    folder: Path, servers: dict[str, Any], specs: dict[str, Any] | None = None, out: str = "tools"
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(
        f'[tool.toolnexus-gen]\nspecs = "specs"\nout = "{out}"\nmcp_config = "mcp.json"\n'
    )
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
    write_specs(folder / "specs", specs or {})
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            assert process.poll() is None, "the server exited"
            time.sleep(0.1)
    raise AssertionError("the server did not start")


def sessions(count: Path) -> int:
    """Sessions the upstream server opened (a stdio process, an HTTP handshake)."""
    if not count.exists():
        return 0
    lines = count.read_text().splitlines()
    return sum(not line.startswith(("call ", "cancelled ")) for line in lines)


def calls(count: Path) -> list[str]:
    """The tools the upstream server ran, in order."""
    if not count.exists():
        return []
    return [line[5:] for line in count.read_text().splitlines() if line.startswith("call ")]


class Upstream:
    """The upstream server over streamable HTTP (uvicorn, 127.0.0.1) behind a bearer token; its
    tools are read from `tools` at every listing, its sessions and calls counted in `count`."""

    def __init__(self, url: str, tools: Path, count: Path) -> None:
        self.url = url
        self.tools = tools
        self.count = count

    def entry(self, **extra: Any) -> dict[str, Any]:
        return {"url": self.url, "headers": {"Authorization": f"Bearer {TOKEN}"}, **extra}

    @contextmanager
    def serving(self, tools: list[dict[str, Any]]) -> Iterator[None]:
        self.tools.write_text(json.dumps(tools))
        try:
            yield
        finally:
            self.tools.write_text(json.dumps(TOOLS))


@contextmanager
def http_upstream(folder: Path) -> Iterator[Upstream]:
    tools, count = folder / "tools.json", folder / "count"
    tools.write_text(json.dumps(TOOLS))
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(UPSTREAM), "--http", str(port), "--token", TOKEN]
        + ["--tools", str(tools), "--count", str(count)],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield Upstream(f"http://127.0.0.1:{port}/mcp", tools, count)
    finally:
        process.terminate()
        process.wait(10)


WEATHER = Path(__file__).resolve().parent.parent / "examples" / "weather"
ACCEPT = {"Accept": "application/json, text/event-stream"}  # a streamable HTTP client's


def weather_toolkit() -> Any:
    """The weather example's toolkit, with handlers that answer at once."""
    sys.path.insert(0, str(WEATHER))
    try:
        import tools
    finally:
        sys.path.remove(str(WEATHER))

    class Handlers(tools.ToolHandlers):  # type: ignore[misc]
        async def get_weather(self, args: Any, ctx: Any) -> str:
            return f"{args.city}: 21C, clear"

        def now(self, args: Any, ctx: Any) -> str:
            return "12:00"

    return tools.Toolkit(Handlers())
