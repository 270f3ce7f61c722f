"""The published hooks (.pre-commit-hooks.yaml) run by the real pre-commit framework, in a fresh
git repository that uses this repository (at its current commit) as the hook source."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, cli

SPEC = "description: Current weather\ninput_schema:\n  type: object\n  properties:\n    city: {type: string}\n"
CONFIG = '[tool.toolnexus-gen]\nspecs = "specs"\nout = "tools"\n'


def git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def hook_source() -> str:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and this repository's git history")
    head = git("rev-parse", "HEAD", cwd=ROOT)
    assert head.returncode == 0, head.stderr
    committed = git("show", "HEAD:.pre-commit-hooks.yaml", cwd=ROOT)
    assert committed.returncode == 0, ".pre-commit-hooks.yaml must be committed"
    return head.stdout.strip()


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")  # shared: the hook env is built once


def project(tmp_path: Path, rev: str, hook: str) -> Path:
    repo = tmp_path / "repo"
    (repo / "specs").mkdir(parents=True)
    (repo / "specs/get_weather.yaml").write_text(SPEC)
    (repo / "pyproject.toml").write_text(CONFIG)
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT.as_posix()}\n    rev: {rev}\n    hooks:\n      - id: {hook}\n"
    )
    for args in (
        ("init", "-q", "-b", "main"),
        ("config", "user.email", "t@example.com"),
        ("config", "user.name", "T"),
    ):
        assert git(*args, cwd=repo).returncode == 0
    assert cli("build", cwd=repo).exit_code == 0
    return repo


def commit(repo: Path, home: Path, message: str) -> subprocess.CompletedProcess[str]:
    assert git("add", "-A", cwd=repo).returncode == 0
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run(
        ["git", "commit", "-q", "-m", message],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def install(repo: Path, home: Path) -> None:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_hook_stops_a_commit_with_stale_output(
    tmp_path: Path, hook_source: str, pre_commit_home: Path
) -> None:
    repo = project(tmp_path, hook_source, "toolnexus-gen-check")
    install(repo, pre_commit_home)
    first = commit(repo, pre_commit_home, "specs and generated tools")
    assert first.returncode == 0, first.stdout + first.stderr

    spec = repo / "specs/get_weather.yaml"
    spec.write_text(spec.read_text() + "  required: [city]\n")
    stale = commit(repo, pre_commit_home, "spec changed, tools not rebuilt")
    assert stale.returncode != 0
    assert "out of date" in stale.stdout + stale.stderr
    assert "toolnexus-gen build --check" in stale.stdout + stale.stderr

    assert cli("build", cwd=repo).exit_code == 0
    fresh = commit(repo, pre_commit_home, "tools rebuilt")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert git("status", "--porcelain", cwd=repo).stdout == ""


def test_build_hook_regenerates_then_the_commit_passes(
    tmp_path: Path, hook_source: str, pre_commit_home: Path
) -> None:
    repo = project(tmp_path, hook_source, "toolnexus-gen")
    install(repo, pre_commit_home)
    assert commit(repo, pre_commit_home, "start").returncode == 0
    (repo / "specs/now.yaml").write_text("description: Current time\n")
    regenerated = commit(repo, pre_commit_home, "new tool, tools not rebuilt")
    assert regenerated.returncode != 0  # the hook wrote files: pre-commit stops the commit
    assert (repo / "tools/models/now.py").is_file()
    again = commit(repo, pre_commit_home, "with the regenerated tools")
    assert again.returncode == 0, again.stdout + again.stderr


def test_breaking_hook_stops_a_commit_that_removes_a_tool(
    tmp_path: Path, hook_source: str, pre_commit_home: Path
) -> None:
    repo = project(tmp_path, hook_source, "toolnexus-gen-breaking")
    (repo / "specs/now.yaml").write_text("description: Current time\n")
    assert cli("build", cwd=repo).exit_code == 0
    install(repo, pre_commit_home)
    first = commit(repo, pre_commit_home, "two tools")  # no HEAD yet: every tool is new
    assert first.returncode == 0, first.stdout + first.stderr

    (repo / "specs/now.yaml").unlink()
    assert cli("build", cwd=repo).exit_code == 0
    removed = commit(repo, pre_commit_home, "now removed")
    said = removed.stdout + removed.stderr
    assert removed.returncode != 0
    assert "now: error[TN501] callers: tool removed" in said
    assert git("rev-list", "--count", "HEAD", cwd=repo).stdout.strip() == "1"  # not committed

    (repo / "specs/now.yaml").write_text("description: Current time\n")  # kept after all
    spec = repo / "specs/get_weather.yaml"
    spec.write_text(spec.read_text() + "    units: {type: string}\n")  # an optional argument
    assert cli("build", cwd=repo).exit_code == 0
    widened = commit(repo, pre_commit_home, "optional units")
    assert widened.returncode == 0, widened.stdout + widened.stderr
    assert git("status", "--porcelain", cwd=repo).stdout == ""
