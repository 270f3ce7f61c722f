"""Real third-party MCP servers for the tests, installed from their registries at test time.

The PyPI servers go into one venv, the npm servers into one folder, each in a cache outside the
repository (`$TOOLNEXUS_TEST_CACHE`, else `$XDG_CACHE_HOME/toolnexus-gen-tests`, else
~/.cache/toolnexus-gen-tests) named after the pinned versions, so a change of pin installs
afresh and a second run reuses what the first installed. An install is made under a lock (test
workers share one) and marked complete at its end; one cut short is made again. A failed
install fails the test that needs it: nothing is ever skipped for want of a server.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the versions tests/fixtures/mcp recorded
PYPI = {
    "mcp-server-time": "2026.10.19",
    "mcp-server-fetch": "2026.10.24",
    "mcp-server-git": "2026.10.19",
}
NPM = {
    "@modelcontextprotocol/server-everything": "2026.8.31",
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
    "@modelcontextprotocol/server-memory": "2026.8.31",
}
INSTALL_TIMEOUT = 900  # seconds: a cold pip or npm install on a slow machine


def cache_root() -> Path:
    given = os.environ.get("TOOLNEXUS_TEST_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolnexus-gen-tests"


def _key(pins: dict[str, str]) -> str:
    text = "\n".join(f"{name}=={version}" for name, version in sorted(pins.items()))
    text += f"\n{sys.version_info[:2]}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(argv: list[str], **extra: Any) -> None:
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False, **extra
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv[:4])} ... failed ({done.returncode}):\n{done.stdout[-2000:]}\n"
            f"{done.stderr[-4000:]}"
        )


def _installed(name: str, pins: dict[str, str], install: Any) -> Path:
    """The cached install of `pins`, made by `install(folder)` the first time."""
    root = cache_root()
    folder = root / f"{name}-{_key(pins)}"
    if (folder / ".complete").exists():
        return folder
    with _locked(root / f".{name}.lock"):
        if (folder / ".complete").exists():
            return folder
        # in place (a venv's scripts name their own path); an install cut short has no marker
        # and is made again
        shutil.rmtree(folder, ignore_errors=True)
        install(folder)
        (folder / ".complete").write_text("\n".join(f"{k}=={v}" for k, v in pins.items()))
    return folder


def pypi_servers() -> Path:
    """The venv holding the PyPI servers; their commands are in its bin/."""

    def install(folder: Path) -> None:
        _run([sys.executable, "-m", "venv", str(folder)])
        pip = [str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        _run([*pip, *(f"{name}=={version}" for name, version in PYPI.items())])

    return _installed("pypi", PYPI, install) / "bin"


def npm_servers() -> Path:
    """The folder holding the npm servers; their commands are in its node_modules/.bin/."""
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH: the npm MCP servers cannot be installed")

    def install(folder: Path) -> None:
        folder.mkdir(parents=True)
        _run(
            [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund"]
            + [f"{name}@{version}" for name, version in NPM.items()]
        )

    return _installed("npm", NPM, install) / "node_modules" / ".bin"


@dataclass
class RealServer:
    """One real server: its mcp.json entry, and a call whose answer says it ran."""

    name: str
    entry: dict[str, Any]
    tool: str  # the spec name of the tool called
    arguments: dict[str, Any]
    expect: str  # a text the result holds
    tools: int  # tools it lists (all of them snapshotted, but a task-only one)
    setup: Any = None  # a function(folder) run before the server starts
    extra: dict[str, Any] = field(default_factory=dict)


def servers(folder: Path, names: list[str]) -> list[RealServer]:
    """The named servers, installed, set up to work inside `folder`."""
    found = []
    pypi = pypi_servers() if {"time", "fetch", "git"} & set(names) else None
    npm = npm_servers() if {"everything", "filesystem", "memory"} & set(names) else None
    work = folder / "work"
    work.mkdir(exist_ok=True)
    for name in names:
        if name == "time":
            assert pypi is not None
            found.append(
                RealServer(
                    name,
                    {"command": str(pypi / "mcp-server-time"), "args": ["--local-timezone", "UTC"]},
                    "time_convert_time",
                    {"source_timezone": "UTC", "time": "12:30", "target_timezone": "Asia/Kolkata"},
                    "18:00",
                    2,
                )
            )
        elif name == "fetch":
            assert pypi is not None
            found.append(
                RealServer(
                    name,
                    {
                        "command": str(pypi / "mcp-server-fetch"),
                        "args": ["--ignore-robots-txt", "--allow-private-ips"],
                    },
                    "fetch_fetch",
                    {"url": "{page}", "raw": True},
                    "toolnexus fetch page",
                    1,
                )
            )
        elif name == "git":
            assert pypi is not None
            repo = work / "repo"
            found.append(
                RealServer(
                    name,
                    {"command": str(pypi / "mcp-server-git"), "args": ["--repository", str(repo)]},
                    "git_git_log",
                    {"repo_path": str(repo), "max_count": 1},
                    "first commit of the test",
                    12,
                    setup=_git_repo,
                )
            )
        elif name == "everything":
            assert npm is not None
            found.append(
                RealServer(
                    name,
                    {"command": str(npm / "mcp-server-everything")},
                    "everything_echo",
                    {"message": "hello from toolnexus"},
                    "hello from toolnexus",
                    12,  # of 13: simulate-research-query runs only as a task
                )
            )
        elif name == "filesystem":
            assert npm is not None
            shared = work / "shared"
            found.append(
                RealServer(
                    name,
                    {"command": str(npm / "mcp-server-filesystem"), "args": [str(shared)]},
                    "filesystem_read_text_file",
                    {"path": str(shared / "note.txt")},
                    "a note the test wrote",
                    14,
                    setup=_note,
                )
            )
        elif name == "memory":
            assert npm is not None
            found.append(
                RealServer(
                    name,
                    {
                        "command": str(npm / "mcp-server-memory"),
                        "env": {"MEMORY_FILE_PATH": str(work / "memory.jsonl")},
                    },
                    "memory_create_entities",
                    {
                        "entities": [
                            {"name": "toolnexus", "entityType": "project", "observations": ["x"]}
                        ]
                    },
                    "toolnexus",
                    9,
                )
            )
        else:
            raise KeyError(name)
    for server in found:
        if server.setup is not None:
            server.setup(work)
    return found


def _git_repo(work: Path) -> None:
    repo = work / "repo"
    repo.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    for argv in (
        ["git", "init", "-q"],
        ["git", "commit", "-q", "--allow-empty", "-m", "first commit of the test"],
    ):
        _run(argv, cwd=repo, env=env)


def _note(work: Path) -> None:
    (work / "shared").mkdir(exist_ok=True)
    (work / "shared" / "note.txt").write_text("a note the test wrote\n")
