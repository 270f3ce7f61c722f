"""Case folders: tests/cases/errors/<case>/specs -> expected.txt (exit code and every diagnostic).

Each bad-input case runs against an output folder that already holds a good build, and asserts
that nothing in it changed. Regenerate the expectations with `TNX_UPDATE_CASES=1 make test`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import WEATHER, cli, snapshot, write_specs

CASES = Path(__file__).parent / "cases" / "errors"
UPDATE = os.environ.get("TNX_UPDATE_CASES") == "1"


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_error_case(case: str, tmp_path: Path) -> None:
    work = tmp_path / case
    shutil.copytree(CASES / case, work)
    good = write_specs(tmp_path / "good_specs", WEATHER)
    out = work / "out"
    assert cli("build", str(good), "--out", str(out)).exit_code == 0
    before = snapshot(out)

    result = cli("build", "specs", "--out", "out", cwd=work)

    actual = f"exit: {result.exit_code}\n" + result.stderr
    expected_file = CASES / case / "expected.txt"
    if UPDATE:
        expected_file.write_text(actual)
    assert actual == expected_file.read_text()
    assert "Traceback" not in result.output
    assert snapshot(out) == before, "a failed build must leave the output folder untouched"
