"""Benchmark of `toolnexus-gen breaking` at 1,000 synthetic tools (bench/synthetic.py).

A project is built and committed (REF), then changed as a release might change it: 50 tools get
a required argument, 50 a new description, 20 are removed, 20 added, 20 get an enum value
removed; and rebuilt. Measured in this process, each the median of several runs:
- reading REF: the package at a git revision (git ls-tree, one git cat-file) and read into its
  surface; and the same from a directory;
- now: what a build makes (in memory, the build state warm, as after `toolnexus-gen build`),
  read into its surface;
- comparing: pairing, every rule, selection and placing the findings in the specs, as a fresh
  command would (nothing parsed before). The target is under a second; the figure is also given
  as a ratio to `build --check` of the same project, up to date (answered from the build's
  record), measured in the same run (the machine is shared and noisy);
- the worst case: every one of the 1,000 tools changed (a new description and a new required
  argument each), compared.
And the whole command, `toolnexus-gen breaking --against HEAD`, in a fresh process.

Usage: python bench/breaking.py [COUNT] [--runs N]
"""

from __future__ import annotations

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
from typing import Any

from synthetic import synthetic_spec  # this folder is on sys.path (the script's own)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CONFIG = '[tool.toolnexus-gen]\nspecs = "specs"\nout = "tools"\nignore = ["TN318", "TN330"]\n'


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


def median(runs: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def write(
    folder: Path, count: int, changed: Callable[[int, dict[str, Any]], dict[str, Any] | None]
) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for i in range(count):
        spec = changed(i, synthetic_spec(i))
        if spec is not None:
            (folder / f"tool_{i:05}.json").write_text(json.dumps(spec, indent=2))


def release(i: int, spec: dict[str, Any]) -> dict[str, Any] | None:
    """The changes of a release (on top of the 1,000 tools, 20 more are added)."""
    schema = spec["input_schema"]
    if i % 50 == 7:
        return None  # 20 removed
    if i % 20 == 1:  # 50 get a required argument
        schema["properties"]["tenant"] = {"type": "string"}
        schema["required"] = [*schema["required"], "tenant"]
        spec["examples"] = [{**example, "tenant": "acme"} for example in spec["examples"]]
    if i % 20 == 2:  # 50 get a new description
        spec["description"] += " (cached for a minute)"
    if i % 50 == 3:  # 20 lose an enum value
        schema["properties"]["order"]["enum"] = ["asc"]
        schema["properties"]["order"]["default"] = "asc"
    return spec


def everything(i: int, spec: dict[str, Any]) -> dict[str, Any]:
    spec["description"] += " Revised."
    spec["input_schema"]["properties"]["tenant"] = {"type": "string"}
    spec["input_schema"]["required"] = [*spec["input_schema"]["required"], "tenant"]
    spec["examples"] = [{**example, "tenant": "acme"} for example in spec["examples"]]
    return spec


def main() -> None:
    args = sys.argv[1:]
    runs = 5
    if "--runs" in args:
        at = args.index("--runs")
        runs = int(args[at + 1])
        del args[at : at + 2]
    count = int(args[0]) if args else 1000
    project = Path(tempfile.mkdtemp(prefix="tnx-bench-breaking-"))
    os.chdir(project)
    try:
        run(project, count, runs)
    finally:
        os.chdir(ROOT)
        shutil.rmtree(project, ignore_errors=True)
        shutil.rmtree(project.parent / f"{project.name}-ref", ignore_errors=True)  # REF's copy


def run(project: Path, count: int, runs: int) -> None:
    from toolnexus_gen import session
    from toolnexus_gen.breaking import locate, python, revision, rules, surface
    from toolnexus_gen.pipeline import tokens

    (project / "pyproject.toml").write_text(CONFIG)
    write(project / "specs", count, lambda i, spec: spec)
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.email", "bench@example.com")
    git(project, "config", "user.name", "bench")
    (project / ".gitignore").write_text(".toolnexus-gen.cache/\n.toolnexus-gen.lock\n")
    build = [sys.executable, "-m", "toolnexus_gen", "build", "-q"]
    subprocess.run(build, cwd=project, check=True)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "ref")
    saved = project.parent / f"{project.name}-ref"
    shutil.copytree(project / "tools", saved)

    write(project / "specs", count, release)
    for i in range(count, count + 20):
        (project / "specs" / f"tool_{i:05}.json").write_text(json.dumps(synthetic_spec(i)))
    subprocess.run(build, cwd=project, check=True)

    chosen = session.options(None, None, ())

    def read_git() -> surface.Surface:
        ref = revision.read("HEAD", chosen.out, chosen.root)
        assert ref.files is not None
        return surface.read_package(ref.files, ref.where)

    def read_directory() -> surface.Surface:
        ref = revision.read(str(saved), chosen.out, chosen.root)
        assert ref.files is not None
        return surface.read_package(ref.files, ref.where)

    def now() -> tuple[surface.Surface, Any]:
        files, toolset = session._generated(chosen)
        return surface.read_package(files, "tools"), toolset

    def check() -> None:  # what `build --check` does, in this process (its record on disk)
        outcome = session.build(None, None, (), check=True)
        assert not outcome.invalid, outcome.diagnostics

    git_time, old = median(runs, read_git)
    directory_time, _ = median(runs, read_directory)
    now_time, (new, toolset) = median(runs, now)
    check_time, _ = median(runs, check)
    infos = {tool.name: tool for tool in toolset.tools}

    def compare(before: surface.Surface, after: surface.Surface) -> list[Any]:
        for name in ("_block_classes", "_items"):  # as in a fresh command: nothing parsed yet
            cached = getattr(python, name, None)
            if cached is not None:
                cached.cache_clear()
        for costs in ("_CUT_PART_COSTS", "_PART_COSTS"):  # nor a token estimate's parts costed
            remembered = getattr(tokens, costs, None)
            if remembered is not None:
                remembered.clear()
        found = rules.findings(rules.pairs(before, after, "HEAD", 10.0))
        found = rules.selected(found, rules.CATEGORIES, (), ())
        return locate.locate(found, infos)

    compare_time, found = median(runs, lambda: compare(old, new))
    counts = {level: sum(f.severity == level for f in found) for level in rules.LEVELS}

    write(project / "specs", count, everything)
    subprocess.run(build, cwd=project, check=True)
    worst_new, worst_toolset = now()
    infos = {tool.name: tool for tool in worst_toolset.tools}
    worst_time, worst = median(runs, lambda: compare(old, worst_new))

    started = time.perf_counter()
    command = subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", "breaking", "--against", "HEAD"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    whole = time.perf_counter() - started
    assert command.returncode == 1, command.stderr

    print(f"breaking at {count} tools (median of {runs} runs; findings: {len(found)}: {counts})")
    print(f"  read REF from git:        {git_time * 1000:7.0f} ms")
    print(f"  read REF from directory:  {directory_time * 1000:7.0f} ms")
    print(
        f"  now (build in memory):    {now_time * 1000:7.0f} ms   (build --check: {check_time * 1000:.0f} ms)"
    )
    met = "MET" if compare_time < 1 else "MISSED"
    print(
        f"  compare (a release):      {compare_time * 1000:7.0f} ms   [target < 1 s] {met}; "
        f"{compare_time / check_time:.2f}x build --check"
    )
    met = "MET" if worst_time < 1 else "MISSED"
    print(
        f"  compare (every tool changed, {len(worst)} findings): {worst_time * 1000:.0f} ms   "
        f"[target < 1 s] {met}; {worst_time / check_time:.2f}x build --check"
    )
    print(
        f"  the whole command, fresh process (every tool changed): {whole:.2f} s; "
        f"{whole / check_time:.1f}x build --check"
    )


if __name__ == "__main__":
    main()
