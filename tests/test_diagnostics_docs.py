"""Every diagnostic code is documented from the one catalogue: its failing example reports it,
`explain` prints the entry, and the docs' diagnostics page (built by test_docs.py's strict
build) has an anchor per code holding the same text."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import cli, write_specs

from toolnexus_gen.diagnostics.catalogue import BREAKING, CODES, RULES, all_codes, area, entry
from toolnexus_gen.diagnostics.examples import EXAMPLES, Example

RUNNABLE = [code for code in all_codes() if code in EXAMPLES and not EXAMPLES[code].not_run]


def test_every_code_has_an_area_a_fix_and_an_example() -> None:
    for code in all_codes():
        assert area(code)[0] != "Other", f"{code}: add its range to AREAS in catalogue.py"
        found = entry(code)
        assert found is not None and found.title and found.fix, code
        if code in BREAKING:  # proven by case folders and tests/test_breaking.py instead
            assert BREAKING[code].example, code
            continue
        assert code in EXAMPLES, f"{code}: add a failing example to diagnostics/examples.py"
    assert set(EXAMPLES) <= set(CODES) | set(RULES), "an example for a code that does not exist"
    # the few that cannot run say why, and stay few (symbolic links, a whole set's limit)
    assert sorted(c for c in EXAMPLES if EXAMPLES[c].not_run) == [
        "TN119",
        "TN121",
        "TN418",
        "TN490",
        "TN491",
    ]


def _reported(example: Example, lines: list[str], exit_code: int) -> None:
    assert any(line.startswith(example.expect + ":") for line in lines), (example.expect, lines)
    severity = re.search(r"(error|warning)\[", example.expect)
    assert severity and (exit_code != 0) == (severity.group(1) == "error"), (exit_code, lines)


@pytest.mark.parametrize("code", [c for c in RUNNABLE if "sync" not in EXAMPLES[c].command])
def test_each_example_reports_its_code(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = EXAMPLES[code]
    write_specs(tmp_path, example.written())
    for name, value in example.env.items():
        monkeypatch.setenv(name, value)
    argv = shlex.split(example.command)
    assert argv[0] == "toolnexus-gen"
    result = cli(*argv[1:], cwd=tmp_path)
    _reported(example, (result.stdout + result.stderr).splitlines(), result.exit_code)


def test_each_sync_example_reports_its_code(tmp_path: Path) -> None:
    """The examples that start MCP servers run side by side, each in its own process."""
    codes = [c for c in RUNNABLE if "sync" in EXAMPLES[c].command]
    assert len(codes) >= 10

    def run(code: str) -> tuple[str, list[str], int]:
        example = EXAMPLES[code]
        folder = write_specs(tmp_path / code, example.written())
        env = {
            **os.environ,
            **example.env,  # the examples' mcp.json start `python`: this one, with the mcp package
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
        argv = shlex.split(example.command)
        done = subprocess.run(
            [sys.executable, "-m", "toolnexus_gen", *argv[1:]],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return code, (done.stdout + done.stderr).splitlines(), done.returncode

    with ThreadPoolExecutor(4) as pool:
        for code, lines, exit_code in pool.map(run, codes):
            _reported(EXAMPLES[code], lines, exit_code)


def test_explain_prints_the_entry_the_page_renders() -> None:
    for code in all_codes():
        result = cli("explain", code)
        found = entry(code)
        assert result.exit_code == 0 and found is not None
        assert result.stdout == f"{code}: {found.title}\n{found.text()}\n"
