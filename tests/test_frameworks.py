"""Google ADK, CrewAI, LlamaIndex, smolagents, Strands Agents and AutoGen, each in the venv of
its own that `make frameworks` makes (their pins exclude each other: see the frameworks guide):
this builds the `kit` package once, then runs tests/frameworks/test_<framework>.py with that
venv's python. Each module drives its framework's own loop (a scripted model) and asserts what
the handler got and what the model got back."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, cli, write_specs

FRAMEWORKS = ["google_adk", "crewai", "llama_index", "smolagents", "strands", "autogen"]
VENVS = ROOT / ".venvs"
# No cache, config or plugins of the main suite: the framework venv has pytest alone.
QUIET = ["-q", "-p", "no:cacheprovider", "-p", "no:warnings", "-c", os.devnull]

KIT_SPECS: dict[str, Any] = {
    "book.yaml": {
        "description": "Book a room",
        "strict": True,
        "groups": ["write"],
        "examples": [{"room": "a", "note": None}],
        "input_schema": {
            "type": "object",
            "properties": {
                "room": {"type": "string", "enum": ["a", "b"], "description": "Room name"},
                "note": {"type": ["string", "null"], "description": "Optional note"},
            },
            "required": ["room", "note"],
            "additionalProperties": False,
        },
    },
    "chart.yaml": {
        "description": "Chart a month's sales",
        "groups": ["read"],
        "input_schema": {
            "type": "object",
            "properties": {"month": {"type": "string", "description": "Month name"}},
            "required": ["month"],
        },
    },
    "stats.yaml": {
        "description": "Sales statistics of a year",
        "groups": ["read"],
        "input_schema": {
            "type": "object",
            "properties": {"year": {"type": "integer", "description": "The year"}},
            "required": ["year"],
        },
        "output_schema": {
            "type": "object",
            "properties": {"count": {"type": "integer"}, "mean": {"type": "number"}},
            "required": ["count", "mean"],
        },
    },
}

PYPROJECT = """
[tool.toolnexus-gen.gemini]
transforms = ["nullable", "describe"]

[tool.toolnexus-gen.toolsets]
read = {groups = ["read"]}
"""


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("frameworks")
    (folder / "pyproject.toml").write_text(PYPROJECT)
    specs = write_specs(folder / "specs", KIT_SPECS)
    result = cli("build", str(specs), "--out", str(folder / "kit"), cwd=folder)
    assert result.exit_code == 0, result.output
    return folder


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_framework_in_its_own_venv(framework: str, packages: Path) -> None:
    python = VENVS / framework / "bin" / "python"
    assert python.exists(), f"no {python}: `make frameworks` makes the framework venvs"
    module = ROOT / "tests" / "frameworks" / f"test_{framework}.py"
    folder = module.parent
    done = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            *QUIET,
            f"--rootdir={folder}",
            f"--confcutdir={folder}",
            str(module),
        ],
        capture_output=True,
        text=True,
        cwd=folder,
        env={
            **os.environ,
            "TNX_FRAMEWORK": framework,
            "TNX_FRAMEWORK_PACKAGES": str(packages),
            "PYTHONPATH": "",
        },
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    # every test of the module ran and passed, none skipped
    tests = module.read_text("utf-8").count("\ndef test_")
    assert re.search(rf"^{tests} passed in [\d.]+s", done.stdout, re.MULTILINE), done.stdout[-3000:]
