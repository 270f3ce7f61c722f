"""MCP over streamable HTTP: toolnexus_runtime.mcp.asgi_app against FastMCP, side by side.

The same tool (get_weather(city) -> str), the same uvicorn (one worker each, then two workers for
ours), the same official client (`mcp` ClientSession over streamable_http_client), stateless with
JSON responses on both sides. Rounds alternate between the two servers; each figure is a median.
Run from bench/run.py (`make bench`) or alone: `python bench/mcp_http.py`.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = """\
description: Current weather for a city
input_schema:
  type: object
  properties:
    city: {type: string}
  required: [city]
"""
OURS = """
from toolnexus_runtime.mcp import asgi_app
from benchtools import Toolkit, ToolHandlers

class Handlers(ToolHandlers):
    def get_weather(self, args, ctx):
        return f"{args.city}: 21C, clear"

app = asgi_app(Toolkit(Handlers()), stream_calls=False)  # JSON, as FastMCP below
"""
FASTMCP = """
from fastmcp import FastMCP

mcp = FastMCP("bench")

@mcp.tool
def get_weather(city: str) -> str:
    \"\"\"Current weather for a city\"\"\"
    return f"{city}: 21C, clear"

app = mcp.http_app(path="/mcp", stateless_http=True, json_response=True)
"""


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, folder: Path, module: str, workers: int) -> None:
        self.port = _port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        command = [sys.executable, "-m", "uvicorn", f"{module}:app", "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--workers", str(workers), "--log-level", "error"]
        self.process = subprocess.Popen(
            command, cwd=folder, env={**os.environ, "PYTHONPATH": str(folder)}
        )
        import httpx2

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx2.post(self.url, json={}, timeout=1)
                return
            except httpx2.TransportError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{module} did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


async def _calls(url: str, clients: int, calls: int) -> tuple[float, int]:
    """Seconds for `clients` concurrent sessions making `calls` calls each; right answers."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    right = 0

    async def one(n: int) -> None:
        nonlocal right
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for i in range(calls):
                    city = f"c{n}-{i}"
                    result = await session.call_tool("get_weather", {"city": city})
                    right += result.content[0].text == f"{city}: 21C, clear"

    started = time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(clients)))
    return time.perf_counter() - started, right


def bench_http(record: Callable[..., None], rounds: int = 5) -> None:
    import logging

    logging.getLogger("httpx2").setLevel(logging.WARNING)  # one line per request otherwise
    with tempfile.TemporaryDirectory(prefix="tnx-http-") as tmp:
        folder = Path(tmp)
        (folder / "specs").mkdir()
        (folder / "specs" / "get_weather.yaml").write_text(SPEC)
        subprocess.run(
            [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", "benchtools", "-q"],
            cwd=folder,
            check=True,
        )
        (folder / "ours.py").write_text(textwrap.dedent(OURS))
        (folder / "peer.py").write_text(textwrap.dedent(FASTMCP))
        clients, calls = 10, 30
        total = clients * calls
        ours = Server(folder, "ours", 1)
        try:
            peer = Server(folder, "peer", 1)
        except BaseException:
            ours.stop()  # never left serving when the peer cannot start
            raise
        try:
            asyncio.run(_calls(ours.url, 2, 5))  # warm both
            asyncio.run(_calls(peer.url, 2, 5))
            samples: list[tuple[float, float]] = []
            for _ in range(rounds):
                ours_s, ours_right = asyncio.run(_calls(ours.url, clients, calls))
                peer_s, peer_right = asyncio.run(_calls(peer.url, clients, calls))
                assert ours_right == total and peer_right == total
                samples.append((total / ours_s, total / peer_s))
        finally:
            ours.stop()
            peer.stop()
        ours_rate = statistics.median(s[0] for s in samples)
        peer_rate = statistics.median(s[1] for s in samples)
        ratio = statistics.median(s[0] / s[1] for s in samples)
        record(
            "MCP streamable HTTP tools/call, 1 worker",
            f"{ours_rate:.0f} calls/s vs FastMCP {peer_rate:.0f} = {ratio:.2f}x",
            ">= 1.0x",
            ratio >= 1.0,
        )
        two = Server(folder, "ours", 2)
        try:
            asyncio.run(_calls(two.url, 2, 5))
            seconds, right = asyncio.run(_calls(two.url, 20, 10))
        finally:
            two.stop()
        record(
            "20 clients x 10 calls, 2 workers",
            f"{200 / seconds:.0f} calls/s, {right}/200 answers right",
            "200/200",
            right == 200,
        )


if __name__ == "__main__":

    def show(figure: str, value: str, target: str = "", met: bool | None = None) -> None:
        print(f"{figure}: {value} {target} {'' if met is None else ('met' if met else 'MISSED')}")

    bench_http(show)
