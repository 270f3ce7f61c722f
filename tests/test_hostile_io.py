"""Never a traceback: an OSError on any input, output or configuration path is exit 2 with one
line naming the path; a pyproject.toml that is not UTF-8 is a located TN802; a symbolic link
that leaves the spec folder is refused (TN121), never read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import WEATHER, cli_process, snapshot, write_specs


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_specs(tmp_path / "specs", WEATHER)
    return tmp_path


def assert_clean_failure(result: object, *needles: str) -> None:
    code, err = result.returncode, result.stderr  # type: ignore[attr-defined]
    assert code == 2, err
    assert "Traceback" not in err and err.strip(), err
    for needle in needles:
        assert needle in err, err


@pytest.mark.parametrize("command", [["build"], ["build", "--check"], ["list"]])
def test_output_under_a_file_is_exit_2_naming_the_path(project: Path, command: list[str]) -> None:
    (project / "afile").write_text("not a folder")
    before = snapshot(project)
    extra = ["--out", "afile/tools"] if command[0] != "list" else []
    args = [*command, "specs", *extra]
    result = cli_process(*args, cwd=project)
    if command[0] == "list":  # list writes nothing and needs no output folder
        assert result.returncode == 0, result.stderr
        return
    if "--check" in command:  # nothing can be there: every file is missing (exit 1, stale)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert "missing: afile/tools/dispatch.py" in result.stderr
        return
    assert_clean_failure(result, "afile")
    assert snapshot(project) == before


def test_output_that_is_a_file_is_refused(project: Path) -> None:
    (project / "tools").write_text("mine")
    result = cli_process("build", "specs", "--out", "tools", cwd=project)
    assert_clean_failure(result, "tools")
    assert (project / "tools").read_text() == "mine"


@pytest.mark.parametrize("command", [["build"], ["list"], ["init"], ["import", "openai", "t.json"]])
def test_a_pyproject_that_is_not_utf8_is_a_located_tn802(project: Path, command: list[str]) -> None:
    (project / "pyproject.toml").write_bytes(b'[tool.toolnexus-gen]\nspecs = "sp\xe9cs"\n')
    (project / "t.json").write_text(
        '[{"type": "function", "function": {"name": "a", "description": "A"}}]'
    )
    result = cli_process(*command, cwd=project)
    assert_clean_failure(result, "pyproject.toml:2:12: error[TN802]", "not UTF-8")


def test_a_spec_file_linked_from_outside_is_refused_not_read(project: Path, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}_outside"
    outside.mkdir()
    (outside / "evil.yaml").write_text("description: [unclosed\n")  # would be TN101 if read
    os.symlink(outside / "evil.yaml", project / "specs" / "evil.yaml")
    os.symlink(outside, project / "specs" / "linked")
    result = cli_process("build", "specs", "--out", "out", cwd=project)
    assert_clean_failure(
        result, "specs/evil.yaml:1:1: error[TN121]", "specs/linked:1:1: error[TN121]"
    )
    assert "TN101" not in result.stderr  # refused, never parsed
    assert not (project / "out").exists()


def test_a_link_inside_the_spec_folder_is_fine(project: Path) -> None:
    (project / "specs" / "_real").mkdir()
    (project / "specs" / "_real" / "ping.yaml").write_text("description: Ping\n")
    os.symlink(project / "specs" / "_real" / "ping.yaml", project / "specs" / "ping.yaml")
    result = cli_process("build", "specs", "--out", "out", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "ping" in (project / "out" / "dispatch.py").read_text()


def test_a_folder_link_added_after_a_build_is_not_missed_by_the_no_op_path(
    project: Path, tmp_path: Path
) -> None:
    assert cli_process("build", "specs", "--out", "out", cwd=project).returncode == 0
    outside = tmp_path.parent / f"{tmp_path.name}_elsewhere"
    outside.mkdir()
    os.symlink(outside, project / "specs" / "linked")
    result = cli_process("build", "specs", "--out", "out", cwd=project)
    assert_clean_failure(result, "error[TN121]")
