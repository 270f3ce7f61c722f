"""Per-call overhead of two runtimes side by side: `python bench/execute_ab.py OLD [--rounds N]`.

OLD is a folder that holds a `toolnexus_runtime` package, for example the runtime of main,
unpacked with `git archive main runtime | tar -x -C /tmp/base` and passed as /tmp/base/runtime;
it is compared with the runtime this interpreter imports (this repository's, in its venv). Both
are loaded into this one process (OLD under another name: the runtime's own imports are
relative) and serve the same generated package's table. Each round times every figure on both,
one right after the other, taking turns at going first, so each round's ratio compares figures
taken moments apart on a shared machine; the summary gives each figure's median and the median
of the rounds' ratios.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

SPEC = {
    "description": "Weather",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
MESSAGE = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Chennai"}'},
        }
    ],
}
ARGS = {"city": "Chennai"}


def figures(runtime: Any, package: Any) -> dict[str, Callable[[], float]]:
    """Each figure of one runtime, as a function that times it (microseconds per call)."""

    class Handlers:
        def get_weather(self, args: Any, ctx: Any) -> str:
            return str(args.city)

    class AsyncHandlers:
        async def get_weather(self, args: Any, ctx: Any) -> str:
            return str(args.city)

    class Toolkit(runtime.Toolkit):  # type: ignore[misc]
        TOOLS = package.TOOLS
        SCHEMAS = package.__name__
        TOOLSETS = package.TOOLSETS

    tk, atk = Toolkit(Handlers()), Toolkit(AsyncHandlers())
    loop = asyncio.new_event_loop()

    def timed(stmt: Callable[[], Any], number: int) -> Callable[[], float]:
        return lambda: min(timeit.repeat(stmt, number=number, repeat=3)) / number * 1e6

    def awaited(call: Callable[[], Any], number: int) -> Callable[[], float]:
        async def run() -> float:
            began = timeit.default_timer()
            for _ in range(number):
                await call()
            return timeit.default_timer() - began

        return lambda: min(loop.run_until_complete(run()) for _ in range(3)) / number * 1e6

    bad = {"city": 3}
    text = json.dumps(ARGS)
    return {
        "execute_sync": timed(lambda: tk.execute_sync("get_weather", ARGS), 2000),
        "await execute": awaited(lambda: tk.execute("get_weather", ARGS), 2000),
        "execute_sync, invalid arguments": timed(lambda: tk.execute_sync("get_weather", bad), 500),
        "execute_sync, JSON text": timed(lambda: tk.execute_sync("get_weather", text), 2000),
        "execute_sync, async handler": timed(lambda: atk.execute_sync("get_weather", ARGS), 300),
        "openai_tool_messages (1 call)": timed(lambda: tk.openai_tool_messages(MESSAGE), 500),
        "await aopenai_tool_messages (1 call)": awaited(
            lambda: tk.aopenai_tool_messages(MESSAGE), 500
        ),
    }


def main() -> None:
    args = sys.argv[1:]
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 21
    folders = [
        a for i, a in enumerate(args) if not a.startswith("--") and args[i - 1] != "--rounds"
    ]
    if not folders:
        raise SystemExit(__doc__)
    with tempfile.TemporaryDirectory(prefix="tnx-ab-") as tmp:
        specs = Path(tmp) / "specs"
        specs.mkdir()
        (specs / "get_weather.json").write_text(json.dumps(SPEC))
        subprocess.run(
            [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", "benchpkg", "-q"],
            cwd=tmp,
            check=True,
        )
        shutil.copytree(Path(folders[0]) / "toolnexus_runtime", Path(tmp) / "toolnexus_runtime_old")
        sys.path.insert(0, tmp)
        package = importlib.import_module("benchpkg")
        sides = {
            "old": figures(importlib.import_module("toolnexus_runtime_old"), package),
            "new": figures(importlib.import_module("toolnexus_runtime"), package),
        }
        taken: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
        for i in range(rounds):
            order = ["old", "new"] if i % 2 == 0 else ["new", "old"]
            for name in sides["old"]:
                for side in order:
                    taken[side].setdefault(name, []).append(sides[side][name]())
            print(f"round {i + 1}/{rounds} done", file=sys.stderr, flush=True)
    print(f"{'figure (us per call)':<40} {'old':>8} {'new':>8}  new/old (median of rounds)")
    for name, before_runs in taken["old"].items():
        after_runs = taken["new"][name]
        ratio = statistics.median(n / o for o, n in zip(before_runs, after_runs, strict=True))
        before, after = statistics.median(before_runs), statistics.median(after_runs)
        print(f"{name:<40} {before:8.2f} {after:8.2f}  {ratio:.3f}")


if __name__ == "__main__":
    main()
