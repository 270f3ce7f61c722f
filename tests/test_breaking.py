"""`toolnexus-gen breaking` and `changelog`: the tool surface at a git revision against what a
build makes now.

Case folders `cases/breaking/<case>/`, one (at least) per rule: `base/` holds the specs at REF,
`head/` the specs now; `pyproject.toml` (optional) the project's settings now and
`base_pyproject.toml` (optional) those at REF. The test commits base/ and its built package in a
fresh git repository, puts head/ in the working tree, and runs `breaking --against HEAD` (and
`args.txt`'s flags, when there is one). `expected.txt` holds the exit code and what it printed
(text format). Regenerate expectations with `TNX_UPDATE_CASES=1 make test` and review the diff.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, snapshot

CASES = Path(__file__).parent / "cases" / "breaking"
UPDATE = os.environ.get("TNX_UPDATE_CASES") == "1"
CONFIG = (
    '[tool.toolnexus-gen]\nspecs = "specs"\nout = "tools"\n'
    'targets = ["openai", "openai_responses", "anthropic", "mcp", "bedrock"]\n'
)


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def repository(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", cwd=folder)
    git("config", "user.email", "t@example.com", cwd=folder)
    git("config", "user.name", "T", cwd=folder)
    (folder / ".gitignore").write_text(".toolnexus-gen.cache/\n.toolnexus-gen.lock\n")
    return folder


def commit(folder: Path, message: str) -> None:
    git("add", "-A", cwd=folder)
    git("commit", "-q", "-m", message, cwd=folder)


def replace_specs(folder: Path, source: Path) -> None:
    shutil.rmtree(folder / "specs", ignore_errors=True)
    if source.is_dir():
        shutil.copytree(source, folder / "specs")
    else:
        (folder / "specs").mkdir()


def built(folder: Path) -> None:
    result = cli("build", cwd=folder)
    assert result.exit_code == 0, result.output + result.stderr


def case_project(case: str, tmp_path: Path) -> Path:
    source = CASES / case
    folder = repository(tmp_path / case)
    base_config = source / "base_pyproject.toml"
    config = source / "pyproject.toml"
    head_config = config.read_text() if config.exists() else CONFIG
    (folder / "pyproject.toml").write_text(
        base_config.read_text() if base_config.exists() else head_config
    )
    replace_specs(folder, source / "base")
    built(folder)
    commit(folder, "base")
    (folder / "pyproject.toml").write_text(head_config)
    replace_specs(folder, source / "head")
    return folder


def folders() -> list[str]:
    return sorted(p.name for p in CASES.iterdir() if p.is_dir())


@pytest.mark.parametrize("case", folders())
def test_breaking_case(case: str, tmp_path: Path) -> None:
    folder = case_project(case, tmp_path)
    extra_file = CASES / case / "args.txt"
    extra = extra_file.read_text().split() if extra_file.exists() else []
    before = snapshot(folder)
    result = cli("breaking", "--against", "HEAD", *extra, cwd=folder)
    assert snapshot(folder) == before, "breaking writes nothing"
    assert git("status", "--porcelain", "--", "tools", cwd=folder) == ""
    actual = f"exit: {result.exit_code}\n{result.stdout}"
    expected = CASES / case / "expected.txt"
    if UPDATE:
        expected.write_text(actual)
    assert actual == expected.read_text()
    assert "Traceback" not in result.output + result.stderr

    # the same findings, as JSON, with exactly the contract's keys
    as_json = cli("breaking", "--against", "HEAD", "--format", "json", *extra, cwd=folder)
    assert as_json.exit_code == result.exit_code
    findings = json.loads(as_json.stdout)["findings"]
    assert len(findings) == len(result.stdout.splitlines())
    keys = ["tool", "rule", "category", "severity", "message", "path", "line", "col"]
    for finding in findings:
        assert list(finding) == keys
        assert finding["category"] in ("callers", "handlers", "model")
        assert finding["severity"] in ("error", "warning", "info")
        where = f"{finding['path']}:{finding['line']}:{finding['col']}: "
        assert any(
            line.startswith(where if finding["path"] else f"{finding['tool']}: ")
            and f"[{finding['rule']}]" in line
            for line in result.stdout.splitlines()
        )


def test_every_rule_has_a_check_and_a_case() -> None:
    from toolnexus_gen.breaking.rules import CHECKS
    from toolnexus_gen.diagnostics.catalogue import BREAKING

    assert set(CHECKS) | {"TN550"} == set(BREAKING)  # TN550: the version policy (policy.py)
    shown = "".join((CASES / case / "expected.txt").read_text() for case in folders())
    for code in BREAKING:
        assert f"[{code}]" in shown, f"no case folder shows {code}"


def test_explain_prints_a_rule() -> None:
    result = cli("explain", "TN503")
    assert result.exit_code == 0
    assert "required argument added" in result.output
    assert "Category: callers. Severity: error." in result.output


def findings_of(result: Any) -> list[dict[str, Any]]:
    return list(json.loads(result.stdout)["findings"])
