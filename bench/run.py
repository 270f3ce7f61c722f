"""Benchmarks (`make bench`): builds of synthetic spec sets and execute() at run time.

Every figure is a ratio against a baseline measured in the same run, because the machines are
shared and noisy:
- builds against datamodel-code-generator's own generate(), called once per tool on the same
  schemas with the options toolnexus-gen uses (warm, in one process), and against the start-up
  of `python -c "import click"`;
- execute() against a direct call of the model and the handler, and against two peers;
- a whole tool loop (the seed project's benchmark, bench/seed_loop.py) against the seed
  project's own Python port, toolnexus 0.21, in its own venv.
- the seed's headline loop with its tools on an MCP stdio server, against the seed project's own
  Python port (toolnexus 0.21, in a separate venv; bench/seed_loop_mcp.py).

Usage: python bench/run.py [--quick] [--runs N] [SIZES...]     (default sizes: 100 1000 10000)
       python bench/run.py --execute      (only the run-time figures: execute and MCP over HTTP)
       python bench/run.py --builds 1000  (only the build figures, here at 1,000 tools)
       python bench/mcp_http.py           (only MCP over HTTP against FastMCP)
Builds run the installed command line (the venv's `toolnexus-gen`) in a fresh process, as a
pre-commit hook would.
"""

from __future__ import annotations

import asyncio
import compileall
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from synthetic import synthetic_spec  # this folder is on sys.path (the script's own)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RESULTS: list[tuple[str, str, str, bool | None, str]] = []  # (figure, value, target, met, part)
# The parts of a run, in the Performance page's order; record() files each figure under PART.
PARTS = [
    "Builds",
    "The edit loop: build --watch",
    "execute and peers",
    "MCP over streamable HTTP",
    "The tool loop",
    "The tool loop, tools on an MCP server",
    "Many tools",
]
PART = PARTS[0]


def record(figure: str, value: str, target: str = "", met: bool | None = None) -> None:
    RESULTS.append((figure, value, target, met, PART))
    verdict = "" if met is None else ("  MET" if met else "  MISSED")
    print(f"{figure}: {value}" + (f"   [target {target}]{verdict}" if target else ""), flush=True)


# -- synthetic specs ------------------------------------------------------------------------------


def write_specs(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (folder / f"tool_{i:05}.json").write_text(json.dumps(synthetic_spec(i), indent=2))
    # Over 128 (512) tools and no toolsets: every request would send them all, which is an error
    # (TN330, TN318); these builds measure the generator, so the limits are silenced.
    (folder.parent / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\nignore = ["TN318", "TN330"]\n'
    )
    return folder


# -- measuring ------------------------------------------------------------------------------------


# The console script pip installed beside this interpreter, as a user runs it (else the module).
SCRIPT = Path(sys.executable).parent / "toolnexus-gen"
COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "toolnexus_gen"]


def run_cli(project: Path, *args: str) -> tuple[float, int]:
    """Wall time and peak RSS (KB, largest of the build process and its workers) of one build."""
    command = [*COMMAND, "build", "specs", "--out", "out", "-q", *args]
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read().decode() if process.stderr else ""
    if process.returncode not in (0, 1) or " error[" in stderr:
        raise SystemExit(f"build failed ({process.returncode}):\n{stderr[-2000:]}")
    return elapsed, usage.ru_maxrss


def startup_baseline(runs: int = 15) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import click"], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def dmcg_baseline(specs: Path) -> float:
    """datamodel-code-generator's generate(), once per tool, warm, in this process."""
    from datamodel_code_generator import generate

    from toolnexus_gen.codegen.models import _model_schema, _options  # the options the project uses
    from toolnexus_gen.toolspec.naming import python_names

    class _Tool:  # just what _model_schema reads
        def __init__(self, schema: dict[str, Any]) -> None:
            self.input_schema = schema

    jobs = []
    for path in sorted(specs.glob("*.json")):
        data = json.loads(path.read_text())
        jobs.append((_model_schema(_Tool(data["input_schema"])), python_names(path.stem).model))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        generate(jobs[0][0], **_options("# h", "Warm"))  # warm: imports and first-call set-up
        started = time.perf_counter()
        for schema, name in jobs:
            generate(schema, **_options("# h", name))
        return time.perf_counter() - started


def model_floor() -> tuple[float, int]:
    """A fresh process that imports datamodel-code-generator and makes one small model: what any
    build that makes a model waits for, however little else it does."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from toolnexus_gen.codegen.models import warm_up; warm_up()"],
        check=True,
    )
    return time.perf_counter() - started, 0


def median_of(runs: int, fn: Callable[[], tuple[float, int]]) -> tuple[float, int]:
    results = [fn() for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def bench_size(count: int, runs: int, startup: float) -> dict[str, float]:
    project = Path(tempfile.mkdtemp(prefix=f"tnx-bench-{count}-"))
    try:
        specs = write_specs(project / "specs", count)
        # The baseline is measured in every round, just before that round's cold build, and the
        # ratio is the median of the rounds' ratios: a shared host's speed drifts by more than
        # the margin the target leaves.
        baselines: list[float] = []

        # Rounds of cold build, edit one spec, add one spec, so that each rebuild is compared
        # with cold builds made minutes, not a quarter of an hour, apart: the machine's speed
        # drifts on a shared host, and ratios of runs far apart would carry that drift.
        added: list[Path] = []

        def cold() -> tuple[float, int]:
            baselines.append(dmcg_baseline(specs))
            shutil.rmtree(project / "out", ignore_errors=True)
            return run_cli(project)

        def edit() -> tuple[float, int]:
            path = specs / "tool_00003.json"
            data = json.loads(path.read_text())
            props = data["input_schema"]["properties"]
            props["query"]["description"] = f"Free text, edited {time.perf_counter_ns()}"
            props[f"added_{time.perf_counter_ns()}"] = {"type": "integer"}
            path.write_text(json.dumps(data, indent=2))
            return run_cli(project)

        def describe() -> tuple[float, int]:
            # An edit that changes no model: only the tool's description.
            path = specs / "tool_00005.json"
            data = json.loads(path.read_text())
            data["description"] = f"Synthetic tool, described anew {time.perf_counter_ns()}"
            path.write_text(json.dumps(data, indent=2))
            return run_cli(project)

        def add() -> tuple[float, int]:
            path = specs / f"zz_added_{len(added)}.json"
            path.write_text(json.dumps(synthetic_spec(count + len(added)), indent=2))
            added.append(path)
            return run_cli(project)

        rounds = [(cold(), edit(), add(), model_floor(), describe()) for _ in range(runs)]
        cold_time = statistics.median(r[0][0] for r in rounds)
        baseline = statistics.median(baselines)
        cold_ratio = statistics.median(r[0][0] / b for r, b in zip(rounds, baselines, strict=True))
        cold_rss = max(r[0][1] for r in rounds)
        edit_time = statistics.median(r[1][0] for r in rounds)
        add_time = statistics.median(r[2][0] for r in rounds)
        # each rebuild as a share of the cold build of its own round
        edit_share = statistics.median(r[1][0] / r[0][0] for r in rounds)
        add_share = statistics.median(r[2][0] / r[0][0] for r in rounds)
        floor_share = statistics.median(r[3][0] / r[0][0] for r in rounds)
        # One-spec edits (each makes one model) against the floor taken moments apart, in
        # alternating order: what the edit costs beyond what any build making a model pays.
        floors = []
        for i in range(max(runs, 5) * 2):
            if i % 2:
                floors.append((edit()[0], model_floor()[0]))
            else:
                under = model_floor()[0]
                floors.append((edit()[0], under))
        floor_time = statistics.median(f[1] for f in floors)
        over_floor = statistics.median(f[0] - f[1] for f in floors)
        paired_edit = statistics.median(f[0] for f in floors)
        noop_time, noop_rss = median_of(max(runs, 5), lambda: run_cli(project))
        # description edits against no-op builds taken moments apart, round by round
        pairs = [(describe()[0], run_cli(project)[0]) for _ in range(max(runs, 5))]
        describe_time = statistics.median(p[0] for p in pairs)
        describe_ratio = statistics.median(p[0] / p[1] for p in pairs)
        check_time, _ = median_of(max(runs, 5), lambda: run_cli(project, "--check"))
        figures = {
            "count": count,
            "baseline": baseline,
            "cold": cold_time,
            "cold_ratio": cold_ratio,
            "cold_rss_mb": cold_rss / 1024,
            "noop": noop_time,
            "check": check_time,
            "edit": edit_time,
            "add": add_time,
            "edit_share": edit_share,
            "add_share": add_share,
            "floor": floor_time,
            "floor_share": floor_share,
            "edit_paired": paired_edit,
            "edit_over_floor": over_floor,
            "describe": describe_time,
            "describe_ratio": describe_ratio,
        }
        print(
            f"  {count} tools: dmcg baseline {baseline:.2f} s ({baseline / count * 1000:.1f} ms/tool); "
            f"cold {cold_time:.2f} s; no-op {noop_time * 1000:.0f} ms; no-op --check "
            f"{check_time * 1000:.0f} ms; edit one {edit_time:.2f} s; add one {add_time:.2f} s; "
            f"floor {floor_time:.2f} s (edit one {over_floor * 1000:+.0f} ms over it); "
            f"describe one {describe_time:.2f} s ({describe_ratio:.2f}x no-op); "
            f"peak RSS {cold_rss / 1024:.0f} MB; import click {startup * 1000:.0f} ms",
            flush=True,
        )
        return figures
    finally:
        shutil.rmtree(project, ignore_errors=True)


def bench_builds(sizes: list[int], runs: int) -> None:
    startup = startup_baseline()
    record("python -c 'import click' start-up (baseline)", f"{startup * 1000:.0f} ms")
    version_times = []
    for _ in range(15):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "toolnexus_gen", "--version"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        version_times.append(time.perf_counter() - started)
    version = statistics.median(version_times)
    record(
        "toolnexus-gen --version",
        f"{version * 1000:.0f} ms = {version / startup:.2f}x import click",
        "<= 2x",
        version / startup <= 2,
    )
    by_size = {}
    for count in sizes:
        by_size[count] = bench_size(count, runs if count <= 1000 else 1, startup)
    for count, f in by_size.items():
        tag = f"[{count} tools]"
        ratio = f["cold_ratio"]  # the median of the rounds' ratios
        record(
            f"{tag} cold build vs dmcg-per-tool baseline",
            f"{f['cold']:.2f} s / {f['baseline']:.2f} s = {ratio:.2f}x (median of rounds)",
            "<= 0.8x" if count == 1000 else "",
            ratio <= 0.8 if count == 1000 else None,
        )
        for key, label in (("noop", "no-op build"), ("check", "no-op --check")):
            share = f[key] / f["cold"]
            vs_start = f[key] / startup
            target = count == 1000
            record(
                f"{tag} {label}",
                f"{f[key] * 1000:.0f} ms = {share:.1%} of cold, {vs_start:.2f}x import click",
                "<= 5% and <= 4x" if target else "",
                (share <= 0.05 and vs_start <= 4) if target else None,
            )
        record(
            f"{tag} floor of a rebuild that makes a model: python + datamodel-code-generator "
            "start-up and one model",
            f"{f['floor']:.2f} s = {f['floor_share']:.1%} of cold",
        )
        # the excess over the floor, medians of pairs taken moments apart (its first figure in
        # ms is what the chart reads against the target)
        record(
            f"{tag} rebuild after editing one spec, over the floor",
            f"{f['edit_over_floor'] * 1000:+.0f} ms: {f['edit_paired']:.2f} s against "
            f"{f['floor']:.2f} s",
            "<= 0.1 s over the floor" if count == 1000 else "",
            f["edit_over_floor"] <= 0.1 if count == 1000 else None,
        )
        for key, label in (
            ("edit", "rebuild after editing one spec"),
            ("add", "rebuild after adding one spec"),
        ):
            share = f[f"{key}_share"]  # median over rounds of rebuild / that round's cold build
            record(f"{tag} {label}", f"{f[key]:.2f} s = {share:.1%} of cold")
        record(
            f"{tag} rebuild after editing only a description (no model changes)",
            f"{f['describe'] * 1000:.0f} ms = {f['describe_ratio']:.2f}x the no-op build",
            "<= 3x" if count == 1000 else "",
            f["describe_ratio"] <= 3 if count == 1000 else None,
        )
        record(
            f"{tag} peak memory (largest process)",
            f"{f['cold_rss_mb']:.0f} MB",
            "< 1 GB (1000 MB)" if count == 10000 else "",
            f["cold_rss_mb"] < 1000 if count == 10000 else None,
        )
    if 1000 in by_size and 10000 in by_size:
        per_1k = by_size[1000]["cold"] / 1000
        per_10k = by_size[10000]["cold"] / 10000
        record(
            "per-tool cold cost, 10,000 vs 1,000 tools",
            f"{per_10k * 1000:.2f} / {per_1k * 1000:.2f} ms = {per_10k / per_1k:.2f}x",
            "<= 1.25x",
            per_10k / per_1k <= 1.25,
        )


# -- execute ----------------------------------------------------------------------------------------


def bench_execute() -> None:
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
        subprocess.run(
            [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", "benchpkg", "-q"],
            cwd=tmp,
            check=True,
        )
        sys.path.insert(0, str(tmp))
        import benchpkg  # type: ignore[import-not-found]

        class Handlers(benchpkg.ToolHandlers):  # type: ignore[misc]
            def get_weather(self, args: Any, ctx: Any) -> str:
                return str(args.city)

        handlers = Handlers()
        tk = benchpkg.Toolkit(handlers)
        args = {"city": "Chennai"}
        model = benchpkg.GetWeatherArgs
        ctx = benchpkg.ToolContext()
        n = 5000

        def timed(stmt: Callable[[], Any], number: int = n) -> float:
            return min(timeit.repeat(stmt, number=number, repeat=3)) / number * 1e6

        async def awaited_loop(count: int) -> float:
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                for _ in range(count):
                    await tk.execute("get_weather", args)
                best = min(best, time.perf_counter() - start)
            return best / count * 1e6

        # Rounds that time the direct call, execute_sync and execute one after another, so each
        # ratio compares figures taken moments apart (a shared machine's speed drifts); the
        # figure is the median over rounds of each round's ratio.
        rounds = []
        for _ in range(9):
            direct_us = timed(lambda: handlers.get_weather(model.model_validate(args), ctx))
            sync_us = timed(lambda: tk.execute_sync("get_weather", args))
            awaited_us = asyncio.run(awaited_loop(n))
            rounds.append((direct_us, sync_us, awaited_us))
        direct = statistics.median(r[0] for r in rounds)
        sync = statistics.median(r[1] for r in rounds)
        awaited = statistics.median(r[2] for r in rounds)
        sync_ratio = statistics.median(r[1] / r[0] for r in rounds)
        awaited_ratio = statistics.median(r[2] / r[0] for r in rounds)
        record("direct call (model_validate + handler), baseline", f"{direct:.2f} us")
        record(
            "execute_sync vs direct",
            f"{sync:.2f} us = {sync_ratio:.2f}x",
            "<= 1.3x",
            sync_ratio <= 1.3,
        )
        record(
            "await execute vs direct",
            f"{awaited:.2f} us = {awaited_ratio:.2f}x",
            "<= 1.6x",
            awaited_ratio <= 1.6,
        )

        # An async handler called from sync code: the runtime's one long-lived loop against what
        # the generated packages did before it, a new event loop per call (asyncio.run).
        class AsyncHandlers(benchpkg.ToolHandlers):  # type: ignore[misc]
            async def get_weather(self, args: Any, ctx: Any) -> str:
                return str(args.city)

        async_handlers = AsyncHandlers()
        atk = benchpkg.Toolkit(async_handlers)
        portal_rounds = []
        for _ in range(5):
            fresh_us = timed(
                lambda: asyncio.run(async_handlers.get_weather(model.model_validate(args), ctx)),
                1000,
            )
            portal_us = timed(lambda: atk.execute_sync("get_weather", args), 1000)
            portal_rounds.append((fresh_us, portal_us))
        fresh = statistics.median(r[0] for r in portal_rounds)
        portal = statistics.median(r[1] for r in portal_rounds)
        record(
            "execute_sync, async handler (one shared loop)",
            f"{portal:.1f} us = {portal / fresh:.2f}x a new loop per call ({fresh:.1f} us)",
        )
        try:
            from langchain_core.tools import StructuredTool

            lc = StructuredTool.from_function(
                func=lambda city: city, name="get_weather", description="Weather", args_schema=model
            )
            lc_sync = timed(lambda: lc.invoke(args), 2000)

            async def lc_loop(count: int) -> float:
                start = time.perf_counter()
                for _ in range(count):
                    await lc.ainvoke(args)
                return (time.perf_counter() - start) / count * 1e6

            lc_async = asyncio.run(lc_loop(2000))
            record(
                "langchain-core StructuredTool.invoke",
                f"{lc_sync:.1f} us = {lc_sync / sync:.0f}x slower than execute_sync",
            )
            record(
                "langchain-core StructuredTool.ainvoke",
                f"{lc_async:.1f} us = {lc_async / awaited:.0f}x slower than execute",
            )
        except ImportError:
            record("langchain-core", "not installed: peer skipped (pip install -e '.[bench]')")
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
            record(
                "MCP SDK in-process call_tool",
                f"{mcp_time:.1f} us = {mcp_time / awaited:.0f}x slower than execute",
            )
        except ImportError:
            record("mcp", "not installed: peer skipped")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def part(name: str) -> None:
    global PART
    PART = name


def main() -> None:
    args = sys.argv[1:]
    quick = "--quick" in args
    runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 3
    sizes = [
        int(a)
        for a in args
        if a.isdigit() and (args.index(a) == 0 or args[args.index(a) - 1] != "--runs")
    ]
    sizes = sizes or ([100] if quick else [100, 1000, 10000])
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    # A pip install compiles the package's bytecode; an editable install run with
    # PYTHONDONTWRITEBYTECODE set (as on the machines this was written on) would compile every
    # module again in each build process, which no installed hook does.
    compileall.compile_dir(ROOT / "toolnexus_gen", quiet=1)
    print(
        f"python {sys.version.split()[0]} on {sys.platform}, {cpus} cores; sizes {sizes}, {runs} runs",
        flush=True,
    )
    if "--builds" not in args:  # --builds: only the build figures
        missing = [m for m in ("fastmcp", "langchain_core") if importlib.util.find_spec(m) is None]
        if missing:
            sys.exit(
                f"bench/run.py: the peers measured side by side are not installed ({', '.join(missing)}):"
                " run `make bench`, or `pip install -e '.[bench]'` first; `--builds` measures builds only"
            )
        print("== execute() against a direct call and two peers", flush=True)
        part("execute and peers")
        bench_execute()
        print(
            "== MCP over streamable HTTP against FastMCP (real uvicorn, official client)",
            flush=True,
        )
        from mcp_http import bench_http

        part("MCP over streamable HTTP")
        bench_http(record)
        print("== the seed project's benchmark: one question through a tool loop", flush=True)
        from seed_loop import bench_seed_loop

        part("The tool loop")
        bench_seed_loop(record)
        print(
            "== the seed's headline loop, MCP configuration (toolnexus 0.21 side by side)",
            flush=True,
        )
        from seed_loop_mcp import bench_seed_loop_mcp

        part("The tool loop, tools on an MCP server")
        bench_seed_loop_mcp(record)

        print("== many tools: toolsets in a build, list --budget", flush=True)
        from many import bench_many

        part("Many tools")
        bench_many(record, runs)
    if "--execute" in args:  # only the run-time figures
        sizes = []
    if sizes:
        print("== builds (fresh process each, as a pre-commit hook runs it; medians)", flush=True)
        part("Builds")
        bench_builds(sizes, runs)
    if 1000 in sizes:
        print("== the edit loop: build --watch on 1,000 tools (a real watch process)", flush=True)
        from watch import bench_watch

        part("The edit loop: build --watch")
        bench_watch(record)
    print("\n== summary")
    width = max(len(r[0]) for r in RESULTS)
    for figure, value, target, met, _ in RESULTS:
        verdict = "" if met is None else ("met" if met else "MISSED")
        print(f"{figure:<{width}}  {value:<55} {target:<16} {verdict}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"(benchmark process peak RSS {peak:.0f} MB)")
    from report import write

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    header = (
        f"`python bench/run.py {' '.join(args)}`".replace(" `", "`")
        + f": Python {sys.version.split()[0]}, {cpus} cores, load average {load:.1f} at the end"
        + f"; sizes {', '.join(map(str, sizes)) or 'none'}, {runs} rounds"
    )
    write(RESULTS, header, PARTS)


if __name__ == "__main__":
    main()
