"""Benchmarks (`make bench`): build time on synthetic spec sets, and execute() against a direct
call and two peers. Every figure is reported with the baseline measured in the same run, as a
ratio, because the machines are shared and noisy. Usage: python bench/run.py [--quick]
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolnexus_gen.build import BuildOptions, generate, load_all  # noqa: E402
from toolnexus_gen.render import check_targets  # noqa: E402
from toolnexus_gen.targets import TARGETS  # noqa: E402
from toolnexus_gen.targets.base import dump_json  # noqa: E402
from toolnexus_gen.validate import validate  # noqa: E402


def synthetic_spec(i: int) -> dict[str, Any]:
    """A realistic tool: nested object, enum, array of objects, a local $ref, defaults."""
    return {
        "description": f"Synthetic tool number {i}: searches records and returns a page of results",
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Free text", "minLength": 1},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                "order": {"type": "string", "enum": ["asc", "desc"], "default": "asc"},
                "filters": {
                    "type": "array",
                    "items": {"$ref": "#/$defs/Filter"},
                    "description": "All must match",
                },
                "window": {
                    "type": "object",
                    "properties": {
                        "start": {"type": "string", "format": "date-time"},
                        "end": {"type": "string", "format": "date-time"},
                    },
                    "required": ["start"],
                },
            },
            "required": ["query"],
            "$defs": {
                "Filter": {
                    "type": "object",
                    "properties": {
                        "field": {"type": "string"},
                        "op": {"type": "string", "enum": ["eq", "ne", "lt", "gt"]},
                        "value": {"type": ["string", "number", "boolean"]},
                    },
                    "required": ["field", "op", "value"],
                }
            },
        },
        "examples": [{"query": "open invoices", "limit": 5}],
    }


def write_specs(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True)
    for i in range(count):
        (folder / f"tool_{i:05d}.json").write_text(json.dumps(synthetic_spec(i), indent=2))
    return folder


def median_time(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def json_targets_build(specs: Path) -> None:
    """Load, validate, check and render the six provider JSON files (no Python package)."""
    documents, _ = load_all(specs)
    toolset, diagnostics = validate(documents, specs, tuple(TARGETS))
    assert not [d for d in diagnostics if d.is_error]
    check_targets(toolset, {})
    for target in TARGETS.values():
        dump_json(target.render(list(toolset.tools), {}))


def full_build(specs: Path, out: Path) -> None:
    from toolnexus_gen import output

    result = generate(BuildOptions(specs=specs, out=out, root=out.parent))
    assert result.files is not None
    output.write(out, result.files)


def dmcg_baseline(specs: Path) -> Callable[[], None]:
    """datamodel-code-generator's generate(), once per tool, with the options the project uses
    (the specs are loaded before the clock starts: only generate() is timed)."""
    from toolnexus_gen.models import model_source

    documents, _ = load_all(specs)
    toolset, _ = validate(documents, specs, tuple(TARGETS))
    model_source(toolset.tools[0], "# header")  # warm: imports and first-call set-up

    def run() -> None:
        for tool in toolset.tools:
            model_source(tool, "# header")

    return run


def bench_build(sizes: list[int], runs: int) -> list[str]:
    lines = []
    tmp = Path(tempfile.mkdtemp(prefix="tnx-bench-"))
    try:
        for size in sizes:
            specs = write_specs(tmp / f"specs{size}", size)
            json_only = median_time(lambda specs=specs: json_targets_build(specs), runs)
            baseline = median_time(dmcg_baseline(specs), 1)

            def cold(specs: Path = specs) -> None:
                shutil.rmtree(tmp / "out", ignore_errors=True)
                full_build(specs, tmp / "out")

            cold_time = median_time(cold, 1)
            noop = median_time(lambda specs=specs: full_build(specs, tmp / "out"), runs)
            lines.append(
                f"{size:>6} tools: JSON targets only {json_only:7.2f} s ({json_only / size * 1000:.2f} ms/tool); "
                f"full cold build {cold_time:7.2f} s = {cold_time / baseline:.2f}x the per-tool "
                f"datamodel-code-generator baseline ({baseline:.2f} s); no-op rebuild {noop:.2f} s"
            )
            print(lines[-1], flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return lines


def bench_execute() -> list[str]:
    tmp = Path(tempfile.mkdtemp(prefix="tnx-exec-"))
    try:
        specs = tmp / "specs"
        specs.mkdir()
        (specs / "get_weather.json").write_text(
            json.dumps(
                {
                    "description": "Weather",
                    "input_schema": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    },
                }
            )
        )
        full_build(specs, tmp / "benchpkg")
        sys.path.insert(0, str(tmp))
        import benchpkg

        class Handlers(benchpkg.ToolHandlers):
            def get_weather(self, args: Any, ctx: Any) -> str:
                return args.city

        handlers = Handlers()
        tk = benchpkg.Toolkit(handlers)
        args = {"city": "Chennai"}
        model = benchpkg.GetWeatherArgs
        ctx = benchpkg.ToolContext()
        n = 20000

        def per_call(stmt: Callable[[], Any], number: int = n) -> float:
            return min(timeit.repeat(stmt, number=number, repeat=5)) / number * 1e6

        direct = per_call(lambda: handlers.get_weather(model.model_validate(args), ctx))
        sync = per_call(lambda: tk.execute_sync("get_weather", args))

        async def awaited_loop(count: int) -> float:
            best = float("inf")
            for _ in range(5):
                start = time.perf_counter()
                for _ in range(count):
                    await tk.execute("get_weather", args)
                best = min(best, time.perf_counter() - start)
            return best / count * 1e6

        awaited = asyncio.run(awaited_loop(n))
        lines = [
            f"direct call (model_validate + handler): {direct:.2f} us",
            f"execute_sync: {sync:.2f} us = {sync / direct:.2f}x direct (target <= 1.3x)",
            f"await execute (in a running loop): {awaited:.2f} us = {awaited / direct:.2f}x direct (target <= 1.6x)",
        ]
        try:
            from langchain_core.tools import StructuredTool

            lc = StructuredTool.from_function(
                func=lambda city: city, name="get_weather", description="Weather", args_schema=model
            )
            lc_sync = per_call(lambda: lc.invoke(args), 2000)

            async def lc_loop(count: int) -> float:
                start = time.perf_counter()
                for _ in range(count):
                    await lc.ainvoke(args)
                return (time.perf_counter() - start) / count * 1e6

            lc_async = asyncio.run(lc_loop(2000))
            lines.append(
                f"langchain-core StructuredTool.invoke: {lc_sync:.1f} us ({lc_sync / sync:.0f}x execute_sync); "
                f"ainvoke: {lc_async:.1f} us ({lc_async / awaited:.0f}x execute)"
            )
        except ImportError:
            lines.append("langchain-core not installed: peer skipped (pip install langchain-core)")
        try:
            from mcp.server.mcpserver import MCPServer

            server = MCPServer("bench")

            @server.tool()
            def get_weather(city: str) -> str:
                return city

            async def mcp_loop(count: int) -> float:
                start = time.perf_counter()
                for _ in range(count):
                    await server.call_tool("get_weather", args)
                return (time.perf_counter() - start) / count * 1e6

            mcp_time = asyncio.run(mcp_loop(2000))
            lines.append(
                f"MCP SDK in-process call_tool: {mcp_time:.1f} us ({mcp_time / awaited:.0f}x execute)"
            )
        except ImportError:
            lines.append("mcp not installed: peer skipped")
        for line in lines:
            print(line, flush=True)
        return lines
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    quick = "--quick" in sys.argv
    print(f"python {sys.version.split()[0]} on {sys.platform}")
    print("== execute() against a direct call and two peers")
    bench_execute()
    print("== builds of synthetic spec sets (median of runs; cold build once)")
    sizes = [100] if quick else [int(a) for a in sys.argv[1:] if a.isdigit()] or [100, 1000]
    bench_build(sizes, runs=3)


if __name__ == "__main__":
    main()
