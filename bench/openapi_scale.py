"""`toolnexus-gen import openapi` and `build` on real documents at their full size (GitHub's
13 MB document by default), each step in a process of its own: wall time, and peak memory
(the largest RSS, ru_maxrss, of the step's process and of any process it started).

The baseline, measured in the same run: a process that only reads the document with
`python -m json.tool` (parses it and writes it back: the least any import of it does). The targets for GitHub on a 2-core machine:
import and build under 60 s and 1 GiB.

The documents come from the npm registry (tests/openapi_documents.py: npm pack, cached).
The project builds for all six targets, Gemini through its JSON Schema field.

Usage: python bench/openapi_scale.py [NAME ...]   (github, stripe, box, jira, digitalocean,
       slack, spotify, twilio, openai, kubernetes; default github)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

SETTINGS = (
    '[project]\nname = "bench"\nversion = "0"\n[tool.toolnexus-gen]\n'
    '[tool.toolnexus-gen.gemini]\nschema_field = "parametersJsonSchema"\n'
)
# runs argv[1:] as a module's command line in a process of its own (a build ends with
# os._exit, so nothing can run after it in its own process), then prints the peak resident set
# (KiB) of that process and of the processes it started
MEASURED = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run([sys.executable, '-m', *sys.argv[1:]]).returncode\n"
    "kids = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(f'CPU {kids.ru_utime + kids.ru_stime:.1f}', file=sys.stderr)\n"
    "print(f'PEAK {kids.ru_maxrss}', file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def step(args: list[str], cwd: Path) -> tuple[float, int, str]:
    """(seconds, peak KiB, stderr) of one measured process."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, *args], cwd=cwd, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    peak = next(
        int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("PEAK")
    )
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode})")
    return seconds, peak, done.stderr


def main() -> None:
    from openapi_documents import document

    names = sys.argv[1:] or ["github"]
    for name in names:
        source = document(name)
        with tempfile.TemporaryDirectory() as folder:
            project = Path(folder)
            (project / "pyproject.toml").write_text(SETTINGS)
            base_s, base_kb, _ = step(
                ["json.tool", str(source), str(project / "out.json")], project
            )
            imp_s, imp_kb, _ = step(
                ["toolnexus_gen", "import", "openapi", str(source), "--specs", "specs"], project
            )
            specs = list((project / "specs").glob("*.yaml"))
            shared = [p for p in (project / "specs").rglob("*.json")]
            size = sum(p.stat().st_size for p in [*specs, *shared])
            build_s, build_kb, _ = step(
                ["toolnexus_gen", "build", "specs", "--out", "bench_tools"], project
            )
        mb = source.stat().st_size / 1e6
        print(f"{name}: {mb:.1f} MB document, {len(specs)} tools, {len(shared)} shared schemas")
        print(
            f"  baseline (read and write the document as JSON): {base_s:.1f} s, {base_kb / 1024:.0f} MiB"
        )
        print(
            f"  import: {imp_s:.1f} s ({imp_s / base_s:.1f}x baseline), peak {imp_kb / 1024:.0f} MiB;"
            f" specs written: {size / 1e6:.1f} MB"
        )
        print(
            f"  build (6 targets): {build_s:.1f} s ({build_s / base_s:.1f}x baseline), "
            f"peak {build_kb / 1024:.0f} MiB"
        )
        total = imp_s + build_s
        print(
            f"  import + build: {total:.1f} s, peak {max(imp_kb, build_kb) / 1024:.0f} MiB "
            f"(target: 60 s, 1024 MiB)"
        )


if __name__ == "__main__":
    main()
