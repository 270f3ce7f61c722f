"""Per-call overhead of two runtimes side by side: `python bench/execute_ab.py OLD [NEW]`.

OLD and NEW are folders that hold a `toolnexus_runtime` package (NEW defaults to this
repository's runtime/); for example the runtime of main, unpacked with
`git archive main runtime | tar -x -C /tmp/base` and passed as /tmp/base/runtime. Both run the
same generated package, one fresh process per runtime per round, the two alternating (and
taking turns at going first) so each round's ratio compares figures taken moments apart on a
shared machine; the summary gives each figure's median and the median of the rounds' ratios.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
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


def measure() -> dict[str, Any]:
    """One process's figures, in microseconds per call (the best of a few repeats)."""
    import benchpkg  # type: ignore[import-not-found]
    import toolnexus_runtime

    class Handlers(benchpkg.ToolHandlers):  # type: ignore[misc]
        def get_weather(self, args: Any, ctx: Any) -> str:
            return str(args.city)

    class AsyncHandlers(benchpkg.ToolHandlers):  # type: ignore[misc]
        async def get_weather(self, args: Any, ctx: Any) -> str:
            return str(args.city)

    tk = benchpkg.Toolkit(Handlers())
    atk = benchpkg.Toolkit(AsyncHandlers())
    args = {"city": "Chennai"}
    bad = {"city": 3}

    def timed(stmt: Any, number: int) -> float:
        return min(timeit.repeat(stmt, number=number, repeat=5)) / number * 1e6

    async def awaited(call: Any, number: int) -> float:
        best = float("inf")
        for _ in range(5):
            began = timeit.default_timer()
            for _ in range(number):
                await call()
            best = min(best, timeit.default_timer() - began)
        return best / number * 1e6

    return {
        "runtime": toolnexus_runtime.__file__,
        "execute_sync": timed(lambda: tk.execute_sync("get_weather", args), 5000),
        "await execute": asyncio.run(awaited(lambda: tk.execute("get_weather", args), 5000)),
        "execute_sync, invalid arguments": timed(lambda: tk.execute_sync("get_weather", bad), 2000),
        "execute_sync, JSON text": timed(
            lambda: tk.execute_sync("get_weather", '{"city": "Chennai"}'), 5000
        ),
        "execute_sync, async handler": timed(lambda: atk.execute_sync("get_weather", args), 1000),
        "openai_tool_messages (1 call)": timed(lambda: tk.openai_tool_messages(MESSAGE), 2000),
        "await aopenai_tool_messages (1 call)": asyncio.run(
            awaited(lambda: tk.aopenai_tool_messages(MESSAGE), 2000)
        ),
    }


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--worker"]:
        print(json.dumps(measure()))
        return
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 9
    folders = [
        a for i, a in enumerate(args) if not a.startswith("--") and args[i - 1] != "--rounds"
    ]
    if not folders:
        raise SystemExit(__doc__)
    old = Path(folders[0]).resolve()
    new = Path(folders[1]).resolve() if len(folders) > 1 else ROOT / "runtime"
    with tempfile.TemporaryDirectory(prefix="tnx-ab-") as tmp:
        specs = Path(tmp) / "specs"
        specs.mkdir()
        (specs / "get_weather.json").write_text(json.dumps(SPEC))
        subprocess.run(
            [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", "benchpkg", "-q"],
            cwd=tmp,
            check=True,
        )
        figures: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
        for i in range(rounds):
            order = [("old", old), ("new", new)]
            for side, folder in order if i % 2 == 0 else order[::-1]:
                env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), tmp])}
                done = subprocess.run(
                    [sys.executable, __file__, "--worker"],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                got = json.loads(done.stdout)
                assert Path(got.pop("runtime")).parent.parent == folder, "wrong runtime imported"
                figures[side].append(got)
            print(f"round {i + 1}/{rounds} done", file=sys.stderr, flush=True)
    print(f"{'figure (us per call)':<40} {'old':>8} {'new':>8}  new/old (median of rounds)")
    for name in figures["old"][0]:
        before = statistics.median(r[name] for r in figures["old"])
        after = statistics.median(r[name] for r in figures["new"])
        ratio = statistics.median(
            n[name] / o[name] for o, n in zip(figures["old"], figures["new"], strict=True)
        )
        print(f"{name:<40} {before:8.2f} {after:8.2f}  {ratio:.3f}")


if __name__ == "__main__":
    main()
