"""A command stopped by SIGTERM (a hook's time limit, a cancelled CI job) cleans up as after
Ctrl-C: the scratch folder `import openapi` checks its specs in is removed. Scratch folders that
processes killed outright (SIGKILL) left behind are removed by the next import: only this
user's, only those of processes that no longer run, never through a symbolic link."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conftest import ROOT

from toolnexus_gen.sources.carry import SCRATCH_LOCK, SCRATCH_PREFIX

FIXTURE = ROOT / "tests" / "fixtures" / "openapi" / "petstore.yaml"


def _document(operations: int) -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {f"field_{i}": {"type": "string", "maxLength": 40} for i in range(12)},
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "Many", "version": "1"},
        "servers": [{"url": "https://many.test"}],
        "paths": {
            f"/things_{n}": {
                "post": {
                    "operationId": f"create_thing_{n}",
                    "summary": f"Create thing {n}",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": item}},
                    },
                    "responses": {"201": {"description": "made"}},
                }
            }
            for n in range(operations)
        },
    }


def _scratch(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith(SCRATCH_PREFIX))


def _import(project: Path, document: Path, tmp: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "toolnexus_gen", "import", "openapi", str(document)],
        cwd=project,
        env={**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sigterm_during_an_import_removes_its_scratch_folder(tmp_path: Path) -> None:
    tmp, project = tmp_path / "tmp", tmp_path / "project"
    tmp.mkdir()
    project.mkdir()
    document = tmp_path / "many.json"
    document.write_text(json.dumps(_document(400)))
    process = _import(project, document, tmp)
    deadline = time.monotonic() + 120
    while not _scratch(tmp):  # the import is checking its specs in its scratch folder
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no scratch folder appeared"
        time.sleep(0.005)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == -signal.SIGTERM, err  # ended by the signal, as its sender expects
    assert "Traceback" not in err
    assert _scratch(tmp) == []  # after its cleanup
    assert not (project / "specs").exists()  # nothing written


def _left(tmp: Path, name: str, *, lock: bool = True, age: float = 3600) -> Path:
    """A scratch folder as a killed import leaves it (its lock file unheld), `age` seconds old."""
    folder = tmp / name
    (folder / "specs").mkdir(parents=True)
    (folder / "specs" / "tool.json").write_text("{}")
    if lock:
        (folder / SCRATCH_LOCK).write_bytes(b"")
    then = time.time() - age
    os.utime(folder, (then, then))
    return folder


def test_scratch_folders_of_killed_processes_are_removed_by_the_next_import(
    tmp_path: Path,
) -> None:
    tmp, project = tmp_path / "tmp", tmp_path / "project"
    tmp.mkdir()
    project.mkdir()
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead = int(ended.stdout)  # a process that ran and no longer does
    left = _left(tmp, f"{SCRATCH_PREFIX}{dead}-abc")
    young = _left(tmp, f"{SCRATCH_PREFIX}{dead}-young", age=0)  # its owner may be locking it
    unlockable = _left(tmp, f"{SCRATCH_PREFIX}{dead}-nolock", lock=False)
    held = _left(tmp, f"{SCRATCH_PREFIX}{dead}-held")  # a process of another PID namespace
    huge = _left(tmp, f"{SCRATCH_PREFIX}9999999999-huge")  # no such pid: kept, no error
    (tmp / f"{SCRATCH_PREFIX}99999999999-file").write_text("not a folder")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    (elsewhere / SCRATCH_LOCK).write_bytes(b"")
    link = tmp / f"{SCRATCH_PREFIX}{dead}-link"
    link.symlink_to(elsewhere, target_is_directory=True)
    holder = (
        "import fcntl, sys, time\n"
        f"f = open({str(held / SCRATCH_LOCK)!r}, 'rb')\n"
        "fcntl.flock(f, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(120)\n"
    )
    with (
        subprocess.Popen(
            [sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True
        ) as holding,
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]) as alive,
    ):
        try:
            assert holding.stdout is not None and holding.stdout.readline() == "held\n"
            running = _left(tmp, f"{SCRATCH_PREFIX}{alive.pid}-def")  # a running process's
            process = _import(project, FIXTURE, tmp)
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0, out + err
            assert not left.exists()  # the killed import's folder
            kept = [young, unlockable, held, huge, running, link]
            assert all(path.exists() for path in kept)
            assert (elsewhere / "keep.txt").read_text() == "mine"
            names = sorted([*(p.name for p in kept), f"{SCRATCH_PREFIX}99999999999-file"])
            assert _scratch(tmp) == names  # the import's own is gone too
        finally:
            holding.kill()
            alive.kill()


def test_a_cleanup_that_hangs_after_sigterm_is_cut_short(tmp_path: Path) -> None:
    """The cleanup a SIGTERM starts has a deadline (an MCP server that ignores being stopped
    must not keep the command alive), and a second SIGTERM ends the process at once."""
    code = (
        "import sys, time\n"
        "from toolnexus_gen import cli\n"
        "cli.SIGTERM_GRACE = 1\n"
        "cli._stop_on_sigterm()\n"
        "try:\n    print('ready', flush=True)\n    time.sleep(60)\n"
        "except KeyboardInterrupt:\n    print('cleaning', flush=True)\n    time.sleep(60)\n"
    )
    for second in (False, True):
        process = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.stdout.readline() == "cleaning\n"
        if second:
            process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        took = time.monotonic() - started
        assert process.returncode == (-signal.SIGTERM if second else -signal.SIGALRM)
        assert took < (0.9 if second else 20)
