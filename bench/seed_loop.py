"""The seed project's headline benchmark: one question through a whole tool loop, client side.

A scripted OpenAI-compatible server on 127.0.0.1 (its own process, asyncio, keep-alive, no
delayed ACK: every response leaves in one write with TCP_NODELAY): turn 1 asks for two tools in
parallel, `get_weather(city="Paris")` and `add(a=2, b=2)`; turn 2, once both `tool` messages are
in the history, answers. One question is timed end to end, client side; p50 of 30 after
5 warm-up questions, as the seed's own runner (`benchmarks/run_toolnexus.py`) does.

Side by side, each in its own process (so none shares a GIL or an event loop with another):
- `seed`: toolnexus 0.21, the seed project's Python port from PyPI, installed in a separate venv
  (bench/.venv-seed, made on first use; never a dependency of ours), builtins off, its own
  client loop: `create_client(base_url=..., style="openai", model=...)` and `client.run(...)`.
- `arun_openai` and `run_openai` of a package generated here, on the official `openai` client
  (`AsyncOpenAI` / `OpenAI` with `base_url` pointing at the scripted server, defaults otherwise).
- The same two loops on the runtime's optional standard-library client
  (`toolnexus_runtime.openai_compatible`), and, as references, the official client alone sending
  the loop's two requests (what no loop on that client can go below).

Rounds interleave the contenders (each round: every contender warms up, then times 30 questions;
the order turns each round), so each ratio compares p50s taken moments apart on a shared machine;
the figure is the median over rounds. The server checks every request (both tools offered, each
reply's `tool_call_id`), so a contender that skips work fails instead of looking fast.

Configurations: `native` (tools in process: plain sync functions on both sides). A new one (the
MCP configuration, once MCP sources land) is one entry in CONFIGS: how each side builds its tools.

Usage: python bench/seed_loop.py [--rounds N] [--runs 30] [--warmup 5] [--config native]
Run from bench/run.py (`make bench`) too. Only the standard library is imported at the top: the
same file runs as the seed's worker inside its own venv.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEED_VENV = Path(os.environ.get("TOOLNEXUS_SEED_VENV", ROOT / "bench" / ".venv-seed"))
SEED_REQUIREMENT = "toolnexus==0.21.*"
QUESTION = "What's the weather in Paris and what is 2+2?"
FINAL_TEXT = "The weather in Paris is Sunny, 22C. And 2 + 2 = 4."
MODEL = "mock-model"


# -- the scripted server --------------------------------------------------------------------------


def _named(tools: list[Any], suffix: str) -> str:
    """The one offered tool named `suffix` or `<prefix>_suffix` (the MCP configuration's tools
    carry their server's prefix)."""
    names = [t.get("function", {}).get("name", "") for t in tools if isinstance(t, dict)]
    found = [n for n in names if n == suffix or n.endswith("_" + suffix)]
    if len(found) != 1:
        raise ValueError(f"tool {suffix!r} not offered once (offered: {names})")
    return found[0]


def _turn_one(tools: list[Any]) -> dict[str, Any]:
    calls = [
        ("call_weather_1", _named(tools, "get_weather"), {"city": "Paris"}),
        ("call_add_1", _named(tools, "add"), {"a": 2, "b": 2}),
    ]
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in calls
        ],
    }


def _check_replies(messages: list[Any]) -> None:
    replies = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    if replies.keys() != {"call_weather_1", "call_add_1"}:
        raise ValueError(f"tool replies for {sorted(map(str, replies))}")
    if "Paris" not in str(replies["call_weather_1"]) or "4" not in str(replies["call_add_1"]):
        raise ValueError(f"unexpected tool outputs: {replies}")


def scripted_reply(body: bytes) -> tuple[int, bytes]:
    """The scripted model: tool calls while the history has no tool reply, then the answer."""
    try:
        request = json.loads(body)
        messages = request["messages"]
        if any(m.get("role") == "tool" for m in messages):
            _check_replies(messages)
            message: dict[str, Any] = {"role": "assistant", "content": FINAL_TEXT}
            finish = "stop"
        else:
            message = _turn_one(request.get("tools") or [])
            finish = "tool_calls"
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        error = {"error": {"message": f"scripted server: {exc}", "type": "invalid_request_error"}}
        return 400, json.dumps(error).encode()
    response = {
        "id": "chatcmpl-mock-0001",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model") or MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
    }
    return 200, json.dumps(response).encode()


class _ScriptedHTTP(asyncio.Protocol):
    """HTTP/1.1 with keep-alive (Connection: close and HTTP/1.0 honoured), one write per reply."""

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.buffer = b""
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = self.buffer[:end].decode("latin-1").split("\r\n")
            method, _path, version = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            if method == "POST":
                status, payload = scripted_reply(body)
            else:
                status, payload = 404, b'{"error": {"message": "not found"}}'
            keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
            head = (
                f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
                "Content-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\n"
                f"Connection: {'keep-alive' if keep else 'close'}\r\n\r\n"
            )
            self.transport.write(head.encode() + payload)
            if not keep:
                self.transport.close()
                return


def serve(port_file: str) -> None:
    """The server process: listens on an ephemeral port, writes it to `port_file`, serves."""

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(
            _ScriptedHTTP, "127.0.0.1", 0, backlog=128
        )
        port = server.sockets[0].getsockname()[1]
        Path(port_file + ".tmp").write_text(str(port))
        os.replace(port_file + ".tmp", port_file)
        await server.serve_forever()

    asyncio.run(main())


# -- the contenders (each a worker process that times questions on command) -----------------------


def _get_weather(city: str) -> str:
    return f"Sunny, 22C in {city}"


def _add(a: int, b: int) -> str:
    return str(a + b)


def seed_worker(url: str, config: str) -> Callable[[], Any]:
    """toolnexus 0.21 as its docs and its own benchmark runner use it."""
    from toolnexus import create_client, create_toolkit, define_tool  # the seed's venv only

    async def build() -> Any:
        if config == "native":
            tools = [
                define_tool(_get_weather, name="get_weather", description="Current weather"),
                define_tool(_add, name="add", description="Add two integers"),
            ]
            return await create_toolkit(extra_tools=tools, builtins=False)
        raise SystemExit(f"unknown configuration {config!r}")

    loop = asyncio.new_event_loop()
    toolkit = loop.run_until_complete(build())
    client = create_client(base_url=url, style="openai", model=MODEL, api_key="sk-mock")

    async def question() -> None:
        result = await client.run(QUESTION, toolkit)
        if result.text != FINAL_TEXT or result.tool_call_count != 2:
            raise SystemExit(f"seed: unexpected result {result.text!r}")

    return lambda: loop.run_until_complete(question())


def ours_worker(url: str, config: str, package_dir: str, kind: str) -> Callable[[], Any]:
    """A package generated by toolnexus-gen, on the official openai client (or, for the
    `*_thin` kinds, on the runtime's optional standard-library client)."""
    sys.path.insert(0, package_dir)
    import openai
    from benchtools import ToolHandlers, Toolkit  # type: ignore[import-not-found]

    if config != "native":
        raise SystemExit(f"unknown configuration {config!r}")

    class Handlers(ToolHandlers):  # type: ignore[misc]
        def get_weather(self, args: Any, ctx: Any) -> str:
            return _get_weather(args.city)

        def add(self, args: Any, ctx: Any) -> str:
            return _add(args.a, args.b)

    toolkit = Toolkit(Handlers())

    def check(run: Any) -> None:
        response = run.response
        if isinstance(response, dict):  # the optional client answers JSON
            response = openai.types.chat.ChatCompletion.model_validate(response)
        if response.choices[0].message.content != FINAL_TEXT or len(run.tool_calls) != 2:
            raise SystemExit(f"{kind}: unexpected result {run.response!r}")

    if kind.endswith("_thin"):
        from toolnexus_runtime import openai_compatible
    if kind == "run_thin":
        thin = openai_compatible.Client(base_url=url, api_key="sk-mock")
        return lambda: check(toolkit.run_openai(thin, model=MODEL, messages=QUESTION))
    if kind == "arun_thin":
        athin = openai_compatible.AsyncClient(base_url=url, api_key="sk-mock")
        aloop = asyncio.new_event_loop()

        async def thin_question() -> None:
            check(await toolkit.arun_openai(athin, model=MODEL, messages=QUESTION))

        return lambda: aloop.run_until_complete(thin_question())
    if kind in ("run_openai", "client_sync"):
        sync_client = openai.OpenAI(base_url=url, api_key="sk-mock")
        if kind == "client_sync":
            return _client_alone(sync_client, None)
        return lambda: check(toolkit.run_openai(sync_client, model=MODEL, messages=QUESTION))
    async_client = openai.AsyncOpenAI(base_url=url, api_key="sk-mock")
    loop = asyncio.new_event_loop()
    if kind == "client_async":
        return _client_alone(async_client, loop)

    async def question() -> None:
        check(await toolkit.arun_openai(async_client, model=MODEL, messages=QUESTION))

    return lambda: loop.run_until_complete(question())


def _client_alone(client: Any, loop: Any) -> Callable[[], Any]:
    """The official client alone: the two requests a loop sends for one question, sent the way
    arun_openai/run_openai send them (the client's `post` with the body `create` would send,
    answering the SDK's APIResponse), with nothing else (no tools run, no history kept)."""
    import openai
    from benchtools import to_openai  # type: ignore[import-not-found]
    from openai.types.chat import ChatCompletion

    tools = to_openai()
    first = [{"role": "user", "content": QUESTION}]
    second = [
        *first,
        _turn_one(tools),
        {"role": "tool", "tool_call_id": "call_weather_1", "content": _get_weather("Paris")},
        {"role": "tool", "tool_call_id": "call_add_1", "content": _add(2, 2)},
    ]
    options = {"security": {"bearer_auth": True}}

    if loop is None:
        cast_to = openai.APIResponse[ChatCompletion]

        def both() -> None:
            for messages in (first, second):
                body = {"model": MODEL, "messages": messages, "tools": tools}
                answer = client.post(
                    "/chat/completions", body=body, cast_to=cast_to, options=options
                )
                json.loads(answer.http_response.content)

        return both

    async_cast_to = openai.AsyncAPIResponse[ChatCompletion]

    async def both_async() -> None:
        for messages in (first, second):
            body = {"model": MODEL, "messages": messages, "tools": tools}
            answer = await client.post(
                "/chat/completions", body=body, cast_to=async_cast_to, options=options
            )
            json.loads(answer.http_response.content)

    return lambda: loop.run_until_complete(both_async())


def worker(kind: str, url: str, config: str, package_dir: str) -> None:
    """Answer commands on stdin: `warm N` runs N questions; `time N` runs N and prints their
    wall times and this process's CPU time per question (all its threads), in ms."""
    question = (
        seed_worker(url, config) if kind == "seed" else ours_worker(url, config, package_dir, kind)
    )
    print("ready", flush=True)
    for line in sys.stdin:
        command, count = line.split()
        timings = []
        cpu = time.process_time()
        for _ in range(int(count)):
            started = time.perf_counter()
            question()
            timings.append((time.perf_counter() - started) * 1000)
        cpu = (time.process_time() - cpu) * 1000 / int(count)
        print(json.dumps({"wall": timings, "cpu": cpu}), flush=True)


# -- the driver -----------------------------------------------------------------------------------

CONTENDERS = ("seed", "arun_openai", "run_openai")
# The loops on the runtime's optional standard-library client (toolnexus_runtime.openai_compatible)
OPTIONS = ("arun_thin", "run_thin")
# References, not contenders: the official client alone sending the same two requests (async,
# sync), what no loop on that client can go below.
FLOORS = ("client_async", "client_sync")
KINDS = CONTENDERS + OPTIONS + FLOORS
SPECS = {  # the generated side of each configuration
    "native": {
        "get_weather.json": {
            "description": "Current weather",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
        "add.json": {
            "description": "Add two integers",
            "input_schema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    },
}
CONFIGS = tuple(SPECS)


def seed_python() -> Path:
    """The seed's venv (made once; `TOOLNEXUS_SEED_VENV` puts it elsewhere)."""
    python = SEED_VENV / "bin" / "python"
    marker = SEED_VENV / ".installed"
    if not marker.exists() or marker.read_text() != SEED_REQUIREMENT:
        print(f"  installing {SEED_REQUIREMENT} in {SEED_VENV} (first run only)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(SEED_VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", SEED_REQUIREMENT], check=True
        )
        marker.write_text(SEED_REQUIREMENT)
    return python


def build_package(folder: Path, config: str) -> Path:
    specs = folder / "specs"
    specs.mkdir(parents=True)
    for name, spec in SPECS[config].items():
        (specs / name).write_text(json.dumps(spec))
    command = [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", "benchtools"]
    subprocess.run([*command, "-q"], cwd=folder, check=True)
    return folder


class Worker:
    def __init__(self, python: Path | str, kind: str, url: str, config: str, package: Path):
        command = [str(python), __file__, "--worker", kind, "--url", url, "--config", config]
        command += ["--package-dir", str(package)]
        self.kind = kind
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=package
        )
        if self._read() != "ready":
            raise SystemExit(f"{kind} worker did not start")

    def _read(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"{self.kind} worker stopped (exit {self.process.wait()})")
        return line.strip()

    def ask(self, command: str, count: int) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{command} {count}\n")
        self.process.stdin.flush()
        return dict(json.loads(self._read()))

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=10)


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    port_file = folder / "port"
    process = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file)])
    deadline = time.monotonic() + 20
    while not port_file.exists():
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit("the scripted server did not start")
        time.sleep(0.02)
    return process, f"http://127.0.0.1:{port_file.read_text()}/v1"


def bench_seed_loop(
    record: Callable[..., None] | None = None,
    *,
    config: str = "native",
    rounds: int = 5,
    runs: int = 30,
    warmup: int = 5,
) -> dict[str, Any]:
    """Run the rounds; report each contender's p50 and its ratio to the seed's (via `record`)."""
    python = seed_python()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="tnx-seed-loop-") as tmp:
        package = build_package(Path(tmp), config)
        server, url = start_server(Path(tmp))
        workers: dict[str, Worker] = {}
        try:
            for kind in KINDS:
                workers[kind] = Worker(
                    python if kind == "seed" else sys.executable, kind, url, config, package
                )
            p50s: dict[str, list[float]] = {kind: [] for kind in KINDS}
            cpus: dict[str, list[float]] = {kind: [] for kind in KINDS}
            for round_ in range(rounds):
                shift = round_ % len(KINDS)
                for kind in KINDS[shift:] + KINDS[:shift]:
                    workers[kind].ask("warm", warmup)
                    timed = workers[kind].ask("time", runs)
                    p50s[kind].append(statistics.median(timed["wall"]))
                    cpus[kind].append(timed["cpu"])
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
    seed_cpu = statistics.median(cpus["seed"])
    figures["seed"] = seed
    report = record or (lambda *a, **k: print(*a))
    report(
        f"seed loop ({config}): toolnexus 0.21 client.run, p50 (baseline)",
        f"{seed:.2f} ms, CPU {seed_cpu:.2f} ms/question (medians of {rounds} rounds of {runs})",
    )
    for kind in KINDS[1:]:
        # each round's figure against the seed's in the same round, then the median
        ratio = statistics.median(a / b for a, b in zip(p50s[kind], p50s["seed"], strict=True))
        cpu_ratio = statistics.median(a / b for a, b in zip(cpus[kind], cpus["seed"], strict=True))
        figures[kind] = statistics.median(p50s[kind])
        figures[f"{kind}_ratio"] = ratio
        figures[f"{kind}_cpu_ratio"] = cpu_ratio
        measured = (
            f"{figures[kind]:.2f} ms = {ratio:.2f}x the seed's; "
            f"CPU {statistics.median(cpus[kind]):.2f} ms = {cpu_ratio:.2f}x"
        )
        if kind in FLOORS:
            mode = "AsyncOpenAI" if kind == "client_async" else "OpenAI"
            report(
                f"seed loop ({config}): the official {mode} client alone, its 2 requests", measured
            )
            continue
        if kind in OPTIONS:
            loop_name = kind.replace("_thin", "_openai")
            report(
                f"seed loop ({config}): {loop_name} on toolnexus_runtime.openai_compatible, p50",
                measured,
                "option",
            )
            continue
        report(
            f"seed loop ({config}): {kind} on the official openai client, p50",
            measured,
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
    parser.add_argument("--config", choices=CONFIGS, default="native")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--package-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
    elif args.worker:
        worker(args.worker, args.url, args.config, args.package_dir)
    else:
        bench_seed_loop(config=args.config, rounds=args.rounds, runs=args.runs, warmup=args.warmup)


if __name__ == "__main__":
    main()
