"""Case folders, each a small project: `specs/`, an optional `pyproject.toml`, and expectations.

- `errors/<case>`: bad input (an optional `setup_case.py` makes inputs too big or odd to check
  in: a 3 MB file, 10,000 levels of nesting, a symlink out of the folder). `expected.txt` holds the exit code and every diagnostic; the build
  runs against an output folder that already holds a good build and must leave it unchanged.
- `compat/<case>`: one provider-compatibility rule each, with the schema fragment users hit
  (and an optional `setup_case.py`, as above).
  `expected.txt` as above; when the result is an error nothing may change on disk, else every
  provider file is accepted by its SDK and by the providers' documented rules (`reach_*`: the
  profile's answers to what broke providers in real tool sets).
- `clean/<case>`: schemas that every selected target must take without a single diagnostic, and
  whose output files each provider's SDK accepts.

Regenerate expectations with `TNX_UPDATE_CASES=1 make test` and review the diff.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import WEATHER, cli, snapshot, write_specs
from provider_rules import violations
from sdk_check import assert_accepted

CASES = Path(__file__).parent / "cases"
UPDATE = os.environ.get("TNX_UPDATE_CASES") == "1"


def folders(group: str) -> list[str]:
    return sorted(p.name for p in (CASES / group).iterdir() if p.is_dir())


def run_case(group: str, case: str, tmp_path: Path) -> tuple[object, Path, dict]:
    work = tmp_path / case
    shutil.copytree(CASES / group / case, work)
    (work / "specs").mkdir(exist_ok=True)  # git keeps no empty folders
    setup = work / "setup_case.py"
    if setup.exists():  # builds inputs too big or too odd to check in (huge, deep, symlinks)
        subprocess.run([sys.executable, setup.name], cwd=work, check=True)
        setup.unlink()
    good = write_specs(tmp_path / "good_specs", WEATHER)
    out = work / "out"
    assert cli("build", str(good), "--out", str(out), cwd=tmp_path).exit_code == 0
    before = snapshot(out)
    result = cli("build", "specs", "--out", "out", cwd=work)
    return result, out, before


def check_expected(group: str, case: str, result: object) -> None:
    actual = f"exit: {result.exit_code}\n" + result.stderr  # type: ignore[attr-defined]
    expected_file = CASES / group / case / "expected.txt"
    if UPDATE:
        expected_file.write_text(actual)
    assert actual == expected_file.read_text()
    assert "Traceback" not in result.output  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", folders("errors"))
def test_error_case(case: str, tmp_path: Path) -> None:
    result, out, before = run_case("errors", case, tmp_path)
    check_expected("errors", case, result)
    assert snapshot(out) == before, "a failed build must leave the output folder untouched"


@pytest.mark.parametrize("case", folders("compat"))
def test_compat_case(case: str, tmp_path: Path) -> None:
    result, out, before = run_case("compat", case, tmp_path)
    check_expected("compat", case, result)
    if result.exit_code != 0:
        assert snapshot(out) == before, "a failed build must leave the output folder untouched"
    else:
        schemas = {p.stem: json.loads(p.read_text()) for p in (out / "schemas").glob("*.json")}
        if schemas.get("tools"):  # (an empty set is the TN118 case: Bedrock refuses no tools)
            assert_accepted(schemas)
            assert violations(schemas) == []


@pytest.mark.parametrize("case", folders("clean"))
def test_clean_case(case: str, tmp_path: Path) -> None:
    result, out, _ = run_case("clean", case, tmp_path)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "", "a clean case must not produce a single diagnostic"
    schemas = {p.stem: json.loads(p.read_text()) for p in (out / "schemas").glob("*.json")}
    assert_accepted(schemas)
