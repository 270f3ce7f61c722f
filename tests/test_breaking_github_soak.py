"""`breaking` and `changelog` across three releases of GitHub's own API description (npm
@octokit/openapi 21.0.0 -> 22.0.0 -> 23.0.1; about 1,100 operations each), imported and built as a
project would: a soak test (`make test-all`), minutes long.

The documents are fetched with npm (`npm pack`, the registry's own client) into
~/.cache/toolnexus-gen/octokit (TOOLNEXUS_SOAK_CACHE to move it), never into the repository.
Each release's findings are written to that folder (github-<old>-<new>.txt, and the changelog
as .md) for reading. Checked: the comparison finishes in under 30 s of CPU, the changelog is
under 15 KB for both releases and names every breaking change (its tool and field), and the list
operations whose array results changed are compared (their output schemas are MCP's result
wrapper now).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from toolnexus_gen.breaking import report, revision, rules, surface

CACHE = Path(os.environ.get("TOOLNEXUS_SOAK_CACHE", Path.home() / ".cache/toolnexus-gen/octokit"))
RELEASES = ("21.0.0", "22.0.0", "23.0.1")
MEMBER = "package/generated/api.github.com.json"
SETTINGS = '[project]\nname = "github-tools"\nversion = "{version}"\n[tool.toolnexus-gen]\n'

pytestmark = pytest.mark.soak


def document(version: str) -> Path:
    """GitHub's description at one release (npm pack the first time, then cached)."""
    path = CACHE / f"api.github.com-{version}.json"
    if path.is_file():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    tarball = CACHE / f"octokit-openapi-{version}.tgz"
    if not tarball.is_file():
        npm = shutil.which("npm")
        assert npm is not None, "this soak test fetches GitHub's documents with npm"
        subprocess.run(
            [npm, "pack", f"@octokit/openapi@{version}", "--pack-destination", str(CACHE)],
            check=True,
            capture_output=True,
            timeout=900,
        )
    with tarfile.open(tarball, mode="r|gz") as archive:
        for entry in archive:
            data = archive.extractfile(entry) if entry.name == MEMBER else None
            if data is not None:
                partial = path.with_suffix(".partial")
                partial.write_bytes(data.read())
                partial.replace(path)
                break
    return path


def package(folder: Path) -> dict[str, str]:
    """A generated package's files that the comparison reads."""
    return {
        p.relative_to(folder).as_posix(): p.read_text("utf-8")
        for p in folder.rglob("*")
        if p.is_file() and revision._wanted(p.relative_to(folder).as_posix())
    }


def tool(args: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """A toolnexus-gen command in a process of its own, and the CPU seconds it took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done, cpu


def release(version: str, root: Path) -> Path:
    """A project holding one release's imported tools, built (imported afresh each run: the
    import and the build are what is compared)."""
    project = root / version
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    (project / "pyproject.toml").write_text(SETTINGS.format(version=version))
    done, _ = tool(["import", "openapi", str(document(version)), "--specs", "specs"], project)
    assert done.returncode == 0, done.stderr[-3000:]
    done, _ = tool(["build", "--quiet"], project)
    assert done.returncode in (0, 1), done.stderr[-3000:]  # warnings are fine
    assert (project / "tools" / "schemas" / "tools.json").is_file(), done.stderr[-3000:]
    return project


@pytest.fixture(scope="module")
def projects() -> dict[str, Path]:
    # in the cache folder, kept after the run: the findings can be looked into again
    return {version: release(version, CACHE / "projects") for version in RELEASES}


@pytest.mark.parametrize(("old", "new"), list(zip(RELEASES, RELEASES[1:], strict=False)))
def test_github_releases_compared(projects: dict[str, Path], old: str, new: str) -> None:
    ref = str(projects[old] / "tools")
    done, command_cpu = tool(["breaking", "--against", ref, "--format", "json"], projects[new])
    assert done.returncode in (0, 1), done.stderr[-3000:]
    found: list[dict[str, Any]] = json.loads(done.stdout)["findings"]
    # the comparison itself (both packages read, every rule run), apart from the build of
    # the project now that the command makes first (build's own cost)
    started = time.process_time()
    before = surface.read_package(package(projects[old] / "tools"), "REF")
    after = surface.read_package(package(projects[new] / "tools"), "now")
    compared = rules.findings(rules.pairs(before, after, old, 10.0))
    cpu = time.process_time() - started
    assert cpu < 30, f"{cpu:.1f} s of CPU"
    # and the whole command too, over the last build's units (the project was just built)
    assert command_cpu < 30, f"the command: {command_cpu:.1f} s of CPU"
    assert len(compared) == len(found)
    # the release notes of these findings (what `changelog` prints, without a second build)
    text = report.changelog(compared, old)
    breaking = [
        f
        for f in found
        if f["severity"] == "error" and f["category"] != "model" and f["rule"] != "TN550"
    ]
    # every breaking change is counted, and each names its tool and the field it concerns
    # (Markdown's escapes aside); the notes read in a page or two (under 15 KB), although
    # 23.0.1 changes ten times as much as 22.0.0 did
    assert f"**{len(breaking)} breaking changes**" in text
    plain = text.replace("\\", "")
    for finding in breaking:
        field = re.search(r"'([^']*)'", finding["message"])
        assert f"`{finding['tool']}`" in plain, finding
        assert field is None or field.group(1) in plain, finding
    assert len(text.encode()) < 15_000, f"{len(text.encode())} bytes"
    # the list operations (array results, now under MCP's result wrapper) are compared
    listed = sorted(
        {
            f["tool"]
            for f in found
            if f["rule"] in ("TN512", "TN527", "TN528", "TN533") and "'result" in f["message"]
        }
    )
    by_rule: dict[str, int] = {}
    for finding in found:
        key = f"{finding['rule']} {finding['severity']}"
        by_rule[key] = by_rule.get(key, 0) + 1
    said = [
        f"GitHub {old} -> {new}: {len(found)} findings, comparing {cpu:.1f} s CPU (the whole "
        f"command, with its build: {command_cpu:.1f} s), changelog {len(text.encode())} bytes",
        *(f"  {key}: {count}" for key, count in sorted(by_rule.items())),
        f"list operations whose array results changed ({len(listed)}): {', '.join(listed)}",
        "",
        *(
            f"{f['tool']}: {f['severity']}[{f['rule']}] {f['category']}: {f['message']}"
            for f in found
            if f["severity"] != "info"
        ),
    ]
    (CACHE / f"github-{old}-{new}.txt").write_text("\n".join(said) + "\n")
    (CACHE / f"github-{old}-{new}.md").write_text(text)
