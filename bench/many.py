"""Many tools (issue 25): the cost of toolsets in a build, and `list --budget` on 1,000 tools.

- Building 1,000 tools with 20 toolsets against the same build without toolsets (same specs,
  each in one of 20 groups; only [tool.toolnexus-gen.toolsets] differs): cold builds in fresh
  processes, alternated round by round, the figure is the median of each round's ratio.
- `toolnexus-gen list --budget` after the build, in a fresh process (the CLI as a user runs it),
  against the no-op `build --check` of the same project (it answers from the same record
  without reading a unit) and against a bare `python -c "import click"`.

Run alone: python bench/many.py [--runs N]
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from synthetic import synthetic_spec

COUNT, TOOLSETS = 1000, 20


def _project(root: Path, toolsets: bool) -> Path:
    specs = root / "specs"
    specs.mkdir(parents=True)
    for i in range(COUNT):
        spec = synthetic_spec(i)
        spec["groups"] = [f"g{i % TOOLSETS}"]
        (specs / f"tool_{i:05}.json").write_text(json.dumps(spec, indent=2))
    lines = ["[tool.toolnexus-gen]", "max_tool_tokens = 100000"]
    if toolsets:
        lines += ["", "[tool.toolnexus-gen.toolsets]"]
        lines += [f'set{k} = {{groups = ["g{k}"]}}' for k in range(TOOLSETS)]
    else:  # every request would send all 1,000: allowed here, to compare like with like
        lines.insert(1, 'ignore = ["TN318", "TN330"]')
    (root / "pyproject.toml").write_text("\n".join(lines) + "\n")
    return root


def _run(project: Path, *args: str) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one command in a fresh process."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "toolnexus_gen", *args],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    stderr = process.stderr.read().decode() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{stderr[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def _timed(project: Path, *args: str) -> float:
    return _run(project, *args)[0]


def bench_many(record: Callable[..., None], runs: int = 3) -> None:
    root = Path(tempfile.mkdtemp(prefix="tnx-many-"))
    try:
        plain = _project(root / "plain", toolsets=False)
        shaped = _project(root / "toolsets", toolsets=True)
        rounds = []
        for _ in range(runs):
            times = []
            for project in (plain, shaped):
                shutil.rmtree(project / "tools", ignore_errors=True)
                times.append(_timed(project, "build", "specs", "--out", "tools", "-q"))
            rounds.append((times[0], times[1], times[1] / times[0]))
        base = statistics.median(r[0] for r in rounds)
        with_sets = statistics.median(r[1] for r in rounds)
        ratio = statistics.median(r[2] for r in rounds)
        record(
            f"[{COUNT} tools] cold build with {TOOLSETS} toolsets vs without",
            f"{with_sets:.2f} s / {base:.2f} s = {ratio:.2f}x",
            "<= 1.1x",
            ratio <= 1.1,
        )
        # alternated round by round: list, the no-op build --check, a bare `import click`
        check = ("build", "specs", "--out", "tools", "--check", "-q")
        runs_of_list, checks, start = [], [], []
        for _ in range(max(runs, 5)):
            runs_of_list.append(_run(shaped, "list", "specs", "--budget"))
            checks.append(_timed(shaped, *check))
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import click"], check=True)
            start.append(time.perf_counter() - started)
        budget = statistics.median(wall for wall, _ in runs_of_list)
        cpu = statistics.median(cpu for _, cpu in runs_of_list)
        noop, click_start = statistics.median(checks), statistics.median(start)
        record(
            f"[{COUNT} tools, {TOOLSETS} toolsets] toolnexus-gen list --budget (after a build)",
            f"{budget * 1000:.0f} ms = {budget / noop:.1f}x the no-op build --check "
            f"({noop * 1000:.0f} ms) = {budget / click_start:.1f}x import click "
            f"({cpu * 1000:.0f} ms CPU)",
            "< 1 s",
            budget < 1,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    compileall.compile_dir(root / "toolnexus_gen", quiet=1)  # as an installed package has
    arguments = sys.argv[1:]
    count = int(arguments[arguments.index("--runs") + 1]) if "--runs" in arguments else 3

    def show(figure: str, value: str, target: str = "", met: bool | None = None) -> None:
        verdict = "" if met is None else ("  MET" if met else "  MISSED")
        print(f"{figure}: {value}" + (f"   [target {target}]{verdict}" if target else ""))

    bench_many(show, count)
