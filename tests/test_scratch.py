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

from toolnexus_gen.sources.carry import SCRATCH_PREFIX

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
    assert process.returncode not in (0, -signal.SIGTERM), err  # it ended through its cleanup
    assert "Traceback" not in err
    assert _scratch(tmp) == []
    assert not (project / "specs").exists()  # nothing written


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
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]) as alive:
        try:
            left = tmp / f"{SCRATCH_PREFIX}{dead}-abc"
            (left / "specs").mkdir(parents=True)
            (left / "specs" / "tool.json").write_text("{}")
            running = tmp / f"{SCRATCH_PREFIX}{alive.pid}-def"
            running.mkdir()
            elsewhere = tmp_path / "elsewhere"
            elsewhere.mkdir()
            (elsewhere / "keep.txt").write_text("mine")
            link = tmp / f"{SCRATCH_PREFIX}{dead}-link"
            link.symlink_to(elsewhere, target_is_directory=True)
            process = _import(project, FIXTURE, tmp)
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0, out + err
            assert not left.exists()  # the killed import's folder
            assert running.is_dir()  # a running process's folder stays
            assert link.is_symlink() and (elsewhere / "keep.txt").read_text() == "mine"
            assert _scratch(tmp) == sorted([running.name, link.name])  # its own is gone too
        finally:
            alive.kill()
