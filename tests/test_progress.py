"""Progress on long work shows on a terminal and nowhere else: the real command line under a
pseudo-terminal (a bar once the work has taken a second), and the same work with its output in
a pipe or with --quiet (not one extra byte). And the work reports its steps to whoever listens:
a build its stages and specs, `sync` its servers, `import openapi` its operations."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT
from mcp_helpers import project, stdio

sys.path.insert(0, str(ROOT / "bench"))
from synthetic import synthetic_spec  # noqa: E402

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_a_terminal(cwd: Path, *args: str) -> tuple[int, str]:
    """The command under a pseudo-terminal (stdin, stdout and stderr), and all it printed."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "toolnexus_gen", *args],
        cwd=cwd,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    os.close(leader)
    return process.wait(timeout=60), seen.decode("utf-8", "replace")


def in_a_pipe(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def many_specs(folder: Path, count: int = 300) -> Path:
    (folder / "specs").mkdir(parents=True)
    for i in range(count):
        (folder / f"specs/tool_{i:04}.json").write_text(json.dumps(synthetic_spec(i)))
    (folder / "pyproject.toml").write_text('[tool.toolnexus-gen]\nignore = ["TN318", "TN330"]\n')
    return folder


# three builds of 300 tools (about 40 s): soak; make test keeps the pty test of sync and the steps test
@pytest.mark.soak
def test_a_long_build_shows_its_progress_on_a_terminal_only(tmp_path: Path) -> None:
    # 300 tools: several seconds of work, well past the second before a bar shows
    code, seen = on_a_terminal(many_specs(tmp_path / "tty"), "build")
    assert code == 0, seen
    plain = ANSI.sub("", seen)
    assert "building: models" in plain and "/300" in plain, plain[-2000:]
    assert "300 tools, 6 targets: " in plain  # the summary, once the bar is gone

    piped = in_a_pipe(many_specs(tmp_path / "pipe"), "build")
    assert piped.returncode == 0
    assert piped.stderr == ""  # not a byte of progress
    assert piped.stdout.startswith("300 tools, 6 targets: 313 files written")
    assert "\x1b" not in piped.stdout and "building" not in piped.stdout

    code, seen = on_a_terminal(many_specs(tmp_path / "quiet"), "build", "-q")
    assert code == 0 and seen == "", seen  # --quiet: only problems, and there are none


def test_sync_shows_each_server_on_a_terminal_only(tmp_path: Path) -> None:
    servers = {"slow": stdio("--delay", "1.5"), "quick": stdio()}
    folder = project(tmp_path / "tty", servers)
    code, seen = on_a_terminal(folder, "sync")
    assert code == 0, seen
    plain = ANSI.sub("", seen)
    assert "syncing: servers" in plain and "/2" in plain, plain
    assert "slow: listed" in plain and "quick: listed" in plain

    piped = in_a_pipe(project(tmp_path / "pipe", servers), "sync")
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == "" and "syncing" not in piped.stdout and "\x1b" not in piped.stdout
    assert re.search(r"^slow: \d+ tools \(stdio, ", piped.stdout, re.M), piped.stdout


def test_the_work_reports_its_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolnexus_gen import session

    heard: list[tuple[str, int, int | None]] = []

    def listen(step: str, done: int, total: int | None = None) -> None:
        heard.append((step, done, total))

    monkeypatch.chdir(many_specs(tmp_path / "build", 40))
    outcome = session.build(None, None, (), False, None, listen)
    assert outcome.report is not None
    specs = [done for step, done, total in heard if step == "specs" and total == 40]
    assert specs == list(range(1, 41))
    assert ("models", 40, 40) in heard
    assert any(step == "writing" for step, _, _ in heard)

    heard.clear()
    document = {
        "openapi": "3.1.0",
        "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": "https://pets.example"}],
        "paths": {
            f"/pets/{i}": {"get": {"operationId": f"get_pet_{i}", "responses": {}}}
            for i in range(25)
        },
    }
    (tmp_path / "pets.json").write_text(json.dumps(document))
    monkeypatch.chdir(tmp_path)
    done = session.import_specs(
        "openapi", tmp_path / "pets.json", tmp_path / "imported", "json", False, progress=listen
    )
    assert len(done.written) == 25
    assert [done for step, done, _ in heard if step == "operations"] == list(range(1, 26))
    assert ("specs", 25, 25) in heard and ("writing", 25, 25) in heard


def test_the_version_never_imports_rich() -> None:
    code = "import sys, toolnexus_gen.cli\nprint('rich' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
