"""bash: a shell command in its own session and process group, inside the workspace, bounded
in time.

Everything the command started is killed (SIGKILL) at the timeout, when the call is cancelled,
and when the shell itself has exited, so no child it left behind outlives the call: its process
group, and on Linux every process of its session too (found in /proc), which also catches a
child that moved to a process group of its own (`setpgid`, as job control does). A child that
starts a session of its own (`setsid`) leaves both and is out of reach; so is a daemon that a
service manager starts for it. A shell is not a sandbox: the command starts in the workspace
but can reach whatever the process can; switch it off with `allow_shell=False` where the model
is not trusted with that.
"""

from __future__ import annotations

import asyncio
import os
import signal
from contextlib import suppress
from typing import Any

from ..datatypes import ToolError
from .worker import in_thread
from .workspace import Workspace

DEFAULT_TIMEOUT_MS = 60_000
_CHUNK = 65536
_DRAIN_SECONDS = 2.0  # waited for the output after the group is killed
_KILL_ROUNDS = 5


async def bash(ws: Workspace, args: dict[str, Any], limit: int) -> str:
    workdir = ws.locate(args.get("workdir") or ".")
    cwd = os.path.join(ws.root, workdir)
    if not os.path.isdir(cwd):
        raise ToolError(f"workdir {workdir} is not a folder in the workspace.")
    timeout_ms = args.get("timeout") or DEFAULT_TIMEOUT_MS
    process = await asyncio.create_subprocess_shell(
        args["command"],
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,  # its own session and process group: killed as a whole
    )
    kept = bytearray()
    dropped = 0

    async def collect() -> None:
        nonlocal dropped
        assert process.stdout is not None
        while chunk := await process.stdout.read(_CHUNK):
            room = limit * 4 - len(kept)  # enough bytes for `limit` characters of UTF-8
            kept.extend(chunk[: max(room, 0)])
            dropped += max(len(chunk) - max(room, 0), 0)

    async def exited() -> int:
        # Not process.wait(): on some Pythons it waits for the pipe to close too, which a
        # child left behind keeps open.
        delay = 0.002
        while process.returncode is None:
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.05)
        return process.returncode

    reader = asyncio.ensure_future(collect())
    waiter = asyncio.ensure_future(exited())
    try:
        done, _ = await asyncio.wait({waiter}, timeout=timeout_ms / 1000)
    except BaseException:  # cancelled (the Toolkit's own timeout, a closed loop)
        _kill_all(process.pid)
        reader.cancel()
        waiter.cancel()
        raise
    # at the timeout all of it, else what it left behind (reading /proc: off the loop)
    await in_thread(lambda stop: _kill_all(process.pid))
    timed_out = not done
    code = await waiter
    try:  # the pipe closes once the group is gone (a child that left it may keep it open)
        await asyncio.wait_for(reader, _DRAIN_SECONDS)
    except asyncio.TimeoutError:  # noqa: UP041 (distinct on 3.10)
        pass
    output = kept.decode("utf-8", "replace")
    if len(output) > limit or dropped:
        shown = output[:limit]
        output = (
            f"{shown}\n\n[output cut: the first {len(shown)} characters shown; about "
            f"{len(output) - len(shown) + dropped} more were not]"
        )
    if timed_out:
        raise ToolError(
            f"{output}\nbash: command timed out after {timeout_ms} ms; its process group and "
            "session (the command and every child still in them) were killed"
        )
    if code != 0:
        raise ToolError(f"{output}\nbash: command exited with code {code}")
    return output


def _kill_all(leader: int) -> None:
    """SIGKILL to the process group and the session that `leader` (the shell) leads."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, signal.SIGKILL)
    for _ in range(_KILL_ROUNDS):  # again while any is left: one may have forked meanwhile
        found = session(leader)
        if not found:
            return
        for pid in found:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def session(sid: int) -> list[int]:
    """The live processes of session `sid` (Linux: read from /proc; elsewhere none known)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    found: list[int] = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # after the command name: state, ppid, pgrp, session
        if len(fields) > 3 and fields[3] == str(sid).encode() and fields[0] != b"Z":
            found.append(int(name))
    return found
