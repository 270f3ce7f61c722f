"""`list` after a build answers from the build's record (issue 25: `list --budget` on many
tools): the same answer as a cold `list`, whatever of the record is missing or stale, and without
the per-spec stage, its libraries or the model memo."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli, write_specs

PYPROJECT = """\
[tool.toolnexus-gen.toolsets]
reads = {groups = ["read"]}
writes = {groups = ["write"]}
"""


def tool(number: int, group: str, **more: object) -> dict[str, object]:
    return {
        "description": f"Tool number {number}, in group {group}",
        "groups": [group],
        "input_schema": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["id"],
        },
        **more,
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    tmp_path = tmp_path / "project"
    write_specs(
        tmp_path / "specs",
        {
            "alpha.json": tool(1, "read"),
            "beta.yaml": tool(2, "write"),  # YAML: list after a build does not read it again
            "nested/gamma.yaml": tool(3, "read", targets={"exclude": ["gemini"]}),
            "delta.json": tool(4, "write", defer_loading=True),
        },
    )
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    built = cli("build", "specs", "--out", "tools", "-q", cwd=tmp_path)
    assert built.exit_code == 0, built.stderr
    return tmp_path


def listed(root: Path) -> tuple[int, str, str]:
    result = cli("list", "specs", "--budget", cwd=root)
    return result.exit_code, result.stdout, result.stderr


def cold(root: Path) -> tuple[int, str, str]:
    """The same project listed without any build record."""
    copy = root.parent / "cold"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("tools"))
    return listed(copy)


def test_list_after_a_build_is_a_cold_list(project: Path) -> None:
    answer = listed(project)
    assert answer[0] == 0 and "(all tools)" in answer[1] and "reads" in answer[1]
    assert answer == cold(project)


def test_the_memo_is_not_needed(project: Path) -> None:
    (project / "tools/.toolnexus-gen.cache/memo.json").unlink()
    assert listed(project) == cold(project)


def test_a_changed_spec_is_read_again(project: Path) -> None:
    before = listed(project)
    path = project / "specs/beta.yaml"
    path.write_text(path.read_text().replace("Tool number 2", "Tool number two, now longer"))
    answer = listed(project)
    assert answer[1] != before[1]  # its costs are the edited spec's
    assert answer == cold(project)
    path.write_text("description: [unclosed\n")
    broken = listed(project)
    assert broken[0] != 0 and "specs/beta.yaml:2:1: error[TN101]: invalid YAML" in broken[2]
    assert broken == cold(project)


def test_list_after_a_build_imports_no_stage(project: Path) -> None:
    code = (
        "import sys, runpy\n"
        "sys.argv = ['toolnexus-gen', 'list', 'specs', '--budget']\n"
        "try:\n"
        "    runpy.run_module('toolnexus_gen', run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    assert exit.code in (0, None), exit.code\n"
        "heavy = ('yaml', 'jsonschema', 'jinja2', 'referencing', 'datamodel_code_generator',\n"
        "         'toolnexus_gen.pipeline.units', 'toolnexus_gen.toolspec.validate',\n"
        "         'toolnexus_gen.toolspec.yaml_text', 'toolnexus_gen.codegen.package')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True
    )
    assert "(all tools)" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]"
