"""The seed project's headline benchmark in its MCP configuration: one question through a whole
tool loop, the two tools served by an MCP stdio server, timed client side.

A scripted OpenAI-compatible server on 127.0.0.1 (its own process, asyncio, keep-alive, every
response in one write with TCP_NODELAY, so no delayed ACK): turn 1 asks for two tools in
parallel, `get_weather(city="Paris")` and `add(a=2, b=2)`; turn 2, once both `tool` messages are
in the history, answers. Both tools live in one MCP server over stdio (`MCP_SERVER` below, on the
official SDK's low-level `Server`), started by each contender from the same mcp.json. One
question is timed end to end; p50 of 30 after 5 warm-up questions, as the seed's own runner does.

Side by side, each in its own process:
- `seed`: toolnexus 0.21, the seed project's Python port from PyPI, in a separate venv
  (bench/.venv-seed, made on first use; never a dependency of ours): `create_toolkit(
  mcp_config=..., builtins=False)` and its client loop, `create_client(base_url=...,
  style="openai")` + `client.run(...)`.
- `arun_openai` and `run_openai` of a package generated here from the server's snapshot
  (`toolnexus-gen sync`, then `build`), with `Toolkit(handlers, mcp_config=...)`, on the
  official `openai` client pointed at the scripted server.
- The MCP part alone: the turn's two calls made in parallel (`asyncio.gather`), through the
  seed's `toolkit.execute` (`seed_calls`) and through our `Toolkit.execute` (`calls`), each on
  its open session: the proxy without the model's loop.

Rounds interleave the contenders (each round: every contender warms up, then times 30
questions; the order turns each round), so each ratio compares p50s taken moments apart on a
shared machine; the figure is the median over rounds. The scripted server checks every request
(both tools offered, each reply's `tool_call_id` and content), so a contender that skips work
fails instead of looking fast. (The same method as bench/seed_loop.py's native configuration.)

Usage: python bench/seed_loop_mcp.py [--rounds N] [--runs 30] [--warmup 5]
Only the standard library (and seed_loop.py, which imports no more) is imported at the top: the
same file runs as the seed's worker inside its own venv.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The scripted model server, the seed's venv and the constants are seed_loop.py's (the native
# configuration of the same benchmark); its server takes the tools' prefixed names too.
from seed_loop import (  # this folder is on sys.path (the script's own)
    FINAL_TEXT,
    MODEL,
    QUESTION,
    seed_python,
    serve,
    start_server,
)

SERVER_NAME = "bench"  # both sides name its tools bench_get_weather, bench_add
MCP_SERVER = """
import anyio
import mcp.types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(name="get_weather", description="Current weather for a city", input_schema={
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    types.Tool(name="add", description="Add two integers", input_schema={
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"]}),
]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    args = params.arguments or {}
    if params.name == "get_weather":
        text = f"Sunny, 22C in {args['city']}"
    else:
        text = str(args["a"] + args["b"])
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server = Server("bench", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""


# -- the contenders (each a worker process that times questions on command) -----------------------


CALLS = (("bench_get_weather", {"city": "Paris"}), ("bench_add", {"a": 2, "b": 2}))


def _check_calls(kind: str, outputs: list[str]) -> None:
    if "Paris" not in outputs[0] or outputs[1] != "4":
        raise SystemExit(f"{kind}: unexpected tool outputs {outputs}")


def seed_worker(url: str, project: str, kind: str) -> Callable[[], Any]:
    """toolnexus 0.21 as its docs and its own benchmark runner use it, tools from MCP."""
    from toolnexus import create_client, create_toolkit  # the seed's venv only

    loop = asyncio.new_event_loop()
    config = json.loads((Path(project) / "mcp.json").read_text())
    toolkit = loop.run_until_complete(create_toolkit(mcp_config=config, builtins=False))
    if sorted(t.name for t in toolkit.tools()) != ["bench_add", "bench_get_weather"]:
        raise SystemExit(f"seed: tools {[t.name for t in toolkit.tools()]}")
    if kind == "seed_calls":  # the two calls alone, in parallel, as its loop makes them

        async def calls() -> None:
            done = await asyncio.gather(*(toolkit.execute(n, a) for n, a in CALLS))
            _check_calls(kind, [r.output for r in done])

        return lambda: loop.run_until_complete(calls())
    client = create_client(base_url=url, style="openai", model=MODEL, api_key="sk-mock")

    async def question() -> None:
        result = await client.run(QUESTION, toolkit)
        if result.text != FINAL_TEXT or result.tool_call_count != 2:
            raise SystemExit(f"seed: unexpected result {result.text!r}")

    return lambda: loop.run_until_complete(question())


def ours_worker(url: str, project: str, kind: str) -> Callable[[], Any]:
    """The package generated from the server's snapshot, on the official openai client."""
    sys.path.insert(0, project)
    import openai
    from benchtools import ToolHandlers, Toolkit  # type: ignore[import-not-found]

    toolkit = Toolkit(ToolHandlers(), mcp_config=Path(project) / "mcp.json")
    if kind == "calls":  # the two calls alone, in parallel, as the loop makes them
        loop = asyncio.new_event_loop()

        async def calls() -> None:
            done = await asyncio.gather(*(toolkit.execute(n, a) for n, a in CALLS))
            _check_calls(kind, [r.output for r in done])

        return lambda: loop.run_until_complete(calls())

    def check(run: Any) -> None:
        if run.response.choices[0].message.content != FINAL_TEXT or len(run.tool_calls) != 2:
            raise SystemExit(f"{kind}: unexpected result {run.response!r}")

    if kind == "run_openai":
        sync_client = openai.OpenAI(base_url=url, api_key="sk-mock")
        return lambda: check(toolkit.run_openai(sync_client, model=MODEL, messages=QUESTION))
    async_client = openai.AsyncOpenAI(base_url=url, api_key="sk-mock")
    loop = asyncio.new_event_loop()

    async def question() -> None:
        check(await toolkit.arun_openai(async_client, model=MODEL, messages=QUESTION))

    return lambda: loop.run_until_complete(question())


def worker(kind: str, url: str, project: str) -> None:
    """Answer commands on stdin: `warm N` runs N questions, `time N` prints N timings (ms)."""
    if kind.startswith("seed"):
        question = seed_worker(url, project, kind)
    else:
        question = ours_worker(url, project, kind)
    print("ready", flush=True)
    for line in sys.stdin:
        command, count = line.split()
        timings = []
        for _ in range(int(count)):
            started = time.perf_counter()
            question()
            timings.append((time.perf_counter() - started) * 1000)
        print(json.dumps(timings if command == "time" else []), flush=True)


# -- the driver -----------------------------------------------------------------------------------

KINDS = ("seed", "arun_openai", "run_openai", "seed_calls", "calls")
# each contender's baseline: the seed's whole question, or the seed's two MCP calls alone
BASELINE = {"arun_openai": "seed", "run_openai": "seed", "calls": "seed_calls"}


def make_project(folder: Path) -> Path:
    """The MCP server, an mcp.json both sides read, and our package: synced, then built."""
    (folder / "server.py").write_text(MCP_SERVER)
    # `command` as one array: the form both the seed (which requires it) and we accept.
    server = {"command": [sys.executable, str(folder / "server.py")]}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {SERVER_NAME: server}}))
    (folder / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\nspecs = "specs"\nout = "benchtools"\nmcp_config = "mcp.json"\n'
    )
    (folder / "specs").mkdir()
    for command in ("sync", "build"):
        subprocess.run([sys.executable, "-m", "toolnexus_gen", command], cwd=folder, check=True)
    return folder


class Worker:
    def __init__(self, python: Path | str, kind: str, url: str, project: Path):
        command = [str(python), __file__, "--worker", kind, "--url", url, "--project", str(project)]
        self.kind = kind
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=project
        )
        if self._read() != "ready":
            raise SystemExit(f"{kind} worker did not start")

    def _read(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"{self.kind} worker stopped (exit {self.process.wait()})")
        return line.strip()

    def ask(self, command: str, count: int) -> list[float]:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{command} {count}\n")
        self.process.stdin.flush()
        return list(json.loads(self._read()))

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def bench_seed_loop_mcp(
    record: Callable[..., None] | None = None,
    *,
    rounds: int = 5,
    runs: int = 30,
    warmup: int = 5,
) -> dict[str, Any]:
    """Run the rounds; report each contender's p50 and its ratio to the seed's (via `record`)."""
    python = seed_python()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="tnx-seed-loop-mcp-") as tmp:
        project = make_project(Path(tmp))
        server, url = start_server(Path(tmp))
        workers: dict[str, Worker] = {}
        try:
            for kind in KINDS:
                workers[kind] = Worker(
                    python if kind.startswith("seed") else sys.executable, kind, url, project
                )
            p50s: dict[str, list[float]] = {kind: [] for kind in KINDS}
            for round_ in range(rounds):
                shift = round_ % len(KINDS)
                for kind in KINDS[shift:] + KINDS[:shift]:
                    workers[kind].ask("warm", warmup)
                    p50s[kind].append(statistics.median(workers[kind].ask("time", runs)))
                print(
                    f"  round {round_ + 1}: "
                    + ", ".join(f"{k} {p50s[k][-1]:.2f} ms" for k in KINDS),
                    flush=True,
                )
        finally:
            for w in workers.values():
                w.close()
            server.terminate()
            server.wait()
    load_after = os.getloadavg()
    figures: dict[str, Any] = {"load": (load_before[0], load_after[0])}
    seed = statistics.median(p50s["seed"])
    figures["seed"] = seed
    report = record or (lambda *a, **k: print(*a))
    report(
        "seed loop (mcp): toolnexus 0.21 create_toolkit(mcp_config) + client.run, p50 (baseline)",
        f"{seed:.2f} ms (median of {rounds} rounds' p50s of {runs})",
    )
    seed_calls = statistics.median(p50s["seed_calls"])
    figures["seed_calls"] = seed_calls
    report(
        "seed loop (mcp): toolnexus 0.21, its two MCP calls alone (gather), p50",
        f"{seed_calls:.2f} ms",
    )
    for kind, base in BASELINE.items():
        ratio = statistics.median(
            ours / theirs for ours, theirs in zip(p50s[kind], p50s[base], strict=True)
        )
        figures[kind] = statistics.median(p50s[kind])
        figures[f"{kind}_ratio"] = ratio
        what = {
            "arun_openai": "arun_openai with Toolkit(mcp_config), official openai client",
            "run_openai": "run_openai with Toolkit(mcp_config), official openai client",
            "calls": "the same two calls through Toolkit.execute (gather)",
        }[kind]
        report(
            f"seed loop (mcp): {what}, p50",
            f"{figures[kind]:.2f} ms = {ratio:.2f}x the seed's",
            "<= 1.0x",
            ratio <= 1.0,
        )
    print(
        f"  (load average {load_before[0]:.2f} before, {load_after[0]:.2f} after, "
        f"{os.cpu_count()} cores)",
        flush=True,
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--project", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
    elif args.worker:
        worker(args.worker, args.url, args.project)
    else:
        bench_seed_loop_mcp(rounds=args.rounds, runs=args.runs, warmup=args.warmup)


if __name__ == "__main__":
    main()
