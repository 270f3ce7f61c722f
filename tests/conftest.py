from __future__ import annotations

import importlib
import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from real_mcp import cache_root

from toolnexus_gen.cli import main

ROOT = Path(__file__).resolve().parent.parent
_counter = itertools.count()

# mypy --strict runs in many tests (on generated packages, the generator, the runtime); they
# share one cache, so the standard library, pydantic and the runtime are analysed once, not once
# per run. mypy checks each cached module by its source's hash and writes each file atomically,
# so parallel workers and packages of the same name in other folders are safe.
# Property tests draw new examples on every run, as a developer's `make test` should; CI
# (.ci/run sets TNX_DERANDOMIZE) draws the same ones each time, so that what lands does not
# depend on a lucky draw. What a random draw finds is fixed and kept as an explicit case.
if os.environ.get("TNX_DERANDOMIZE"):
    from hypothesis import settings

    settings.register_profile("ci", derandomize=True, print_blob=True)
    settings.load_profile("ci")

os.environ.setdefault(
    "MYPY_CACHE_DIR", str(cache_root() / f"mypy-{sys.version_info[0]}.{sys.version_info[1]}")
)


def write_specs(folder: Path, specs: dict[str, Any]) -> Path:
    """Write {relative path: data or text} under folder; data is dumped as JSON or YAML by suffix."""
    folder.mkdir(parents=True, exist_ok=True)
    for rel, content in specs.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, (bytes, str)):
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
        elif path.suffix == ".json":
            path.write_text(json.dumps(content, indent=2))
        else:
            path.write_text(yaml.safe_dump(content, sort_keys=False))
    return folder


def cli(*args: str, cwd: Path | None = None) -> Any:
    """Run the CLI in-process (from cwd); returns click's Result with exit_code/stdout/stderr."""
    old = Path.cwd()
    os.chdir(cwd or old)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def cli_process(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    if not folder.exists():
        return {}
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def generated(out: Path) -> dict[str, bytes]:
    """The generated files of an output folder (not its cache, lock or bytecode)."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file()
        and ".toolnexus-gen.cache" not in p.parts
        and "__pycache__" not in p.parts
        and p.name != ".toolnexus-gen.lock"
    }


def reference(project: Path) -> dict[str, bytes]:
    """What a build without any cache writes: the project's specs (and pyproject.toml) copied,
    built from scratch into `out`."""
    copy = project.parent / f"{project.name}_reference"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(project / "specs", copy / "specs")
    if (project / "pyproject.toml").exists():
        shutil.copy(project / "pyproject.toml", copy / "pyproject.toml")
    result = cli("build", "specs", "--out", "out", cwd=copy)
    assert result.exit_code == 0, result.output + result.stderr
    return generated(copy / "out")


def build_in(folder: Path, specs: dict[str, Any], *extra: str) -> Any:
    """Build specs into a uniquely named package under folder, put folder on sys.path, import it."""
    name = f"gen_pkg_{next(_counter)}"
    specs_dir = write_specs(folder / f"{name}_specs", specs)
    out = folder / name
    result = cli("build", str(specs_dir), "--out", str(out), *extra, cwd=folder)
    assert result.exit_code == 0, result.output + result.stderr
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(name)


def build_checked(folder: Path, package: str) -> Any:
    """Build folder's specs/ into `package` in a process of its own (no error), check it with
    mypy --strict and ruff, import it."""
    built = subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", package],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0 and " error[" not in built.stderr, built.stderr[-3000:]
    for command in (
        [sys.executable, "-m", "mypy", "--strict", package],
        [sys.executable, "-m", "ruff", "check", package],
    ):
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(folder))


@pytest.fixture
def build_package(tmp_path: Path) -> Any:
    """Build specs into a uniquely named package under tmp_path and import it."""

    def _build(specs: dict[str, Any], *extra: str) -> Any:
        return build_in(tmp_path, specs, *extra)

    return _build


WEATHER = {
    "get_weather.yaml": {
        "description": "Current weather for a city",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
    "now.yaml": {"description": "Current time"},
}


@pytest.fixture(scope="session")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A third-party MCP server over streamable HTTP behind a bearer token (tests/upstream_mcp.py,
    uvicorn on 127.0.0.1), shared by the tests of MCP sources."""
    from mcp_helpers import http_upstream

    with http_upstream(tmp_path_factory.mktemp("http_upstream")) as server:
        yield server
