"""A one-shot build is one process (plus the workers it waits for): nothing outlives it.

The build runs from the installed console script, as a user or a pre-commit hook runs it, in an
environment of its own carrying a mark that every process it starts inherits (detached or not,
whatever its parent becomes); the process table is then read for anything that carries it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import write_specs

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the process table is read from /proc"
)

SCRIPT = Path(sys.executable).parent / "toolnexus-gen"  # what pip installed in this venv


def _spec(i: int, extra: str = "") -> dict[str, object]:
    properties: dict[str, object] = {"query": {"type": "string"}, "limit": {"type": "integer"}}
    if extra:
        properties[extra] = {"type": "boolean"}
    return {
        "description": f"Tool {i}",
        "input_schema": {"type": "object", "properties": properties, "required": ["query"]},
    }


def _marked(mark: bytes) -> dict[int, str]:
    """Every live process whose environment carries `mark`: {pid: its command line}."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()  # empty for a zombie
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:  # gone meanwhile, or another user's
            continue
        if mark in environ.split(b"\0"):
            found[int(entry)] = command.replace(b"\0", b" ").decode(errors="replace")
    return found


def _build_leaves_nothing(project: Path, mark: str) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", str(project)),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "TNX_TEST_MARK": mark,
    }
    result = subprocess.run(
        [str(SCRIPT), "build", "specs", "--out", "out"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # The build has exited; for a moment more (a process it started may be slow to show), no
    # process of it is alive.
    needle = f"TNX_TEST_MARK={mark}".encode()
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        left = _marked(needle)
        assert not left, f"processes outlived `toolnexus-gen build`: {left}"
        time.sleep(0.02)
    return result.stdout


def test_a_one_shot_build_that_makes_models_leaves_no_process(tmp_path: Path) -> None:
    if not SCRIPT.exists():
        pytest.skip(f"no installed console script at {SCRIPT}")
    # the table is read as it must be: a detached process carrying a mark is found by it
    probe = uuid.uuid4().hex
    sleeper = subprocess.Popen(
        ["sleep", "30"], env={"TNX_TEST_MARK": probe}, start_new_session=True
    )
    try:
        # until the child has exec'd, /proc shows the environment it was forked with (no mark)
        deadline = time.monotonic() + 10
        while sleeper.pid not in _marked(f"TNX_TEST_MARK={probe}".encode()):
            assert time.monotonic() < deadline, "the probe was never found in the process table"
            time.sleep(0.02)
    finally:
        sleeper.kill()
        sleeper.wait()
    write_specs(tmp_path / "specs", {f"tool_{i}.json": _spec(i) for i in range(3)})
    mark = uuid.uuid4().hex
    made = _build_leaves_nothing(tmp_path, mark)
    assert "3 tools" in made and (tmp_path / "out/models/tool_1.py").exists()
    # an edit of one spec's schema: a build that makes one model, as an edit loop runs it
    (tmp_path / "specs/tool_1.json").write_text(json.dumps(_spec(1, "verbose")))
    _build_leaves_nothing(tmp_path, mark)
    assert "verbose" in (tmp_path / "out/models/tool_1.py").read_text()
