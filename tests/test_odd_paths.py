"""Folder names people (and scripts) really make: every command works with them or says
cleanly why not, never a traceback. Spaces, quotes, newlines, tabs, escape sequences, bidi
overrides, non-UTF-8 bytes, a file where a folder is expected."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import yaml
from conftest import cli

NAMES = {
    "space": "my specs",
    "quotes": 'it\'s "q"',
    "shell": "$HOME`x`;(y)",
    "newline": "sp\nec",
    "carriage return": "sp\rec",
    "tab": "sp\tec",
    "escape sequence": "sp\x1b[31mec",
    "bidi override": "sp\u202eec",
    "line separator": "sp\u2028ec",
    "backslash": "sp\\ec",
    "hash": "#specs",
    "leading dash": "-specs",
    "unicode": "spécs-日本",
}
NOT_UTF8 = os.fsdecode(b"sp\xffec")


def project(root: Path, name: str) -> Path:
    (root / name).mkdir(parents=True)
    (root / name / "now.yaml").write_text("description: Current time\n")
    return root / name


@pytest.mark.parametrize("name", NAMES.values(), ids=NAMES.keys())
def test_build_works_in_folders_with_any_printable_or_control_name(
    tmp_path: Path, name: str
) -> None:
    project(tmp_path, name)
    name, out = f"./{name}", f"./{name}-out"  # ./ so that -specs is no option
    result = cli("build", name, "--out", out, cwd=tmp_path)
    assert result.exit_code == 0, result.output + result.stderr
    for path in (tmp_path / out).rglob("*.py"):
        compile(path.read_text("utf-8"), str(path), "exec")
    header = (tmp_path / out / "__init__.py").read_text("utf-8").splitlines()[:2]
    assert all(line.isprintable() for line in header), header  # nothing breaks or hides a line
    # the command the header gives regenerates the package, run by a shell as written
    command = header[1].removeprefix("#   ")
    toolnexus = Path(sys.executable).with_name("toolnexus-gen")
    again = subprocess.run(
        ["bash", "-c", command.replace("toolnexus-gen", f"'{toolnexus}'", 1) + " --check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, (command, again.stderr)
    for args in (["list", name], ["list", name, "--budget"], ["build", name, "--out", out]):
        assert cli(*args, cwd=tmp_path).exit_code == 0


@pytest.mark.parametrize(
    "args",
    [
        ["build", NOT_UTF8],
        ["build", NOT_UTF8, "--out", "tools"],
        ["build", "specs", "--out", NOT_UTF8],
        ["list", NOT_UTF8],
        ["scaffold", "h.py", "--specs", NOT_UTF8],
    ],
)
def test_a_path_that_is_not_utf8_is_a_clean_error(tmp_path: Path, args: list[str]) -> None:
    project(tmp_path, NOT_UTF8)
    project(tmp_path, "specs")
    result = cli(*args, cwd=tmp_path)
    assert result.exit_code == 2
    assert re.search(
        r"error: (spec folder|--out) '.*sp\\xffec' is not a UTF-8 path \(byte 0xff\)", result.stderr
    ), result.stderr


def test_a_project_under_a_folder_that_is_not_utf8(tmp_path: Path) -> None:
    root = tmp_path / NOT_UTF8
    project(root, "specs")
    result = cli("build", cwd=root)
    assert result.exit_code == 2
    assert "error: the working folder" in result.stderr and "(byte 0xff)" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "my tools"], "the package folder name 'my tools' cannot be imported by name"),
        (["--out", "sp\nec"], "the package folder name 'sp\\nec' cannot be imported by name"),
        (["--class-name", "class"], "--class-name 'class' is not a Python class name"),
        (
            ["--class-name", "H(object): pass\nimport os\nclass G"],
            "--class-name 'H(object): pass\\nimport os\\nclass G' is not a Python class name",
        ),
    ],
)
def test_scaffold_writes_no_module_python_cannot_read(
    tmp_path: Path, args: list[str], message: str
) -> None:
    project(tmp_path, "specs")
    result = cli("scaffold", "handlers.py", "--specs", "specs", *args, cwd=tmp_path)
    assert result.exit_code == 2 and f"error: {message}" in result.stderr, result.stderr
    assert not (tmp_path / "handlers.py").exists()


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--specs", "../elsewhere", "must be a relative path inside the project folder"),
        ("--out", "/tmp/tools", "must be a relative path inside the project folder"),
        ("--specs", "sp\nec", "must be a folder name of printable characters"),
        ("--out", "", "must be a folder name of printable characters"),
        ("--specs", NOT_UTF8, "is not UTF-8: pyproject.toml cannot name it"),
    ],
)
def test_init_refuses_folders_it_cannot_name_or_that_leave_the_project(
    tmp_path: Path, option: str, value: str, message: str
) -> None:
    result = cli("init", "proj", option, value, cwd=tmp_path)
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert not (tmp_path / "proj").exists() and not (tmp_path / "elsewhere").exists()


def test_init_writes_odd_folder_names_as_toml_and_yaml_mean_them(tmp_path: Path) -> None:
    specs, out = 'it\'s "q" # [x]', "out\\put: {y}"
    result = cli("init", "proj", "--specs", specs, "--out", out, cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    config = tomllib.loads((tmp_path / "proj/pyproject.toml").read_text("utf-8"))
    assert config["tool"]["toolnexus-gen"] == {"specs": specs, "out": out}
    hooks = yaml.safe_load((tmp_path / "proj/.pre-commit-config.yaml").read_text("utf-8"))
    pattern = hooks["repos"][0]["hooks"][0]["files"]
    assert re.match(pattern, f"{specs}/get_weather.yaml") and re.match(pattern, "pyproject.toml")
    assert not re.match(pattern, "its/get_weather.yaml")
    assert cli("build", cwd=tmp_path / "proj").exit_code == 0


def test_an_output_folder_inside_the_spec_folder_is_refused(tmp_path: Path) -> None:
    project(tmp_path, "specs")
    result = cli("build", "specs", "--out", "specs/tools", cwd=tmp_path)
    assert result.exit_code == 2
    assert "is inside the spec folder 'specs': the next build would read" in result.stderr
    assert not (tmp_path / "specs/tools").exists()
    # a hidden folder there is not read as specs: allowed
    assert cli("build", "specs", "--out", "specs/_tools", cwd=tmp_path).exit_code == 0
    assert cli("build", "specs", "--out", "specs/_tools", cwd=tmp_path).exit_code == 0


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ('specs = ""', "specs must name a path relative to pyproject.toml, not an empty string"),
        ('out = "  "', "out must name a path relative to pyproject.toml, not an empty string"),
        ('skills = ""', "skills must name a path relative to pyproject.toml, not an empty string"),
        (
            'mcp_config = "a\\u0000b"',
            "mcp_config must name a path relative to pyproject.toml, not a NUL character",
        ),
    ],
)
def test_empty_path_settings_are_located_errors(tmp_path: Path, setting: str, message: str) -> None:
    project(tmp_path, "specs")
    (tmp_path / "pyproject.toml").write_text(f"[tool.toolnexus-gen]\n{setting}\n")
    result = cli("build", cwd=tmp_path)
    assert result.exit_code == 2
    assert f"pyproject.toml:2:1: error[TN802]: {message}" in result.stderr, result.stderr
    assert [p.name for p in tmp_path.parent.iterdir() if p.name == "tools"] == []


@pytest.mark.parametrize(
    "args",
    [
        ["build", "specs/now.yaml"],
        ["build", "specs", "--out", "specs/now.yaml"],
        ["list", "specs/now.yaml"],
        ["scaffold", "specs", "--specs", "specs"],
        ["import", "openai", "specs", "--specs", "x"],
        ["import", "openai", "missing.json"],
        ["import", "openai", "specs/now.yaml", "--specs", "specs/now.yaml"],
    ],
)
def test_a_file_where_a_folder_is_expected_and_the_reverse(tmp_path: Path, args: list[str]) -> None:
    project(tmp_path, "specs")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = cli(*args, cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    shutil.rmtree(tmp_path / "specs")
    assert json.dumps(result.stderr)  # printable text, no traceback (catch_exceptions=False)
