"""Changes to a build's inputs, in batches: what `build --watch` waits on.

Folders (the spec folder, the skills folder) are watched with watchfiles (inotify, FSEvents or
ReadDirectoryChangesW under one API). Single files (pyproject.toml, mcp.json) are polled by
stat instead: an editor saves by replacing the file, which a watch on the file itself does not
survive, and watching their folder would mean watching the whole project (.venv included).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A burst of saves (a "save all", a checkout, a formatter's run) is one batch when its changes
# come less than STEP_MS apart; changes made while a build runs are the next batch, whole. A
# save is seen STEP_MS to twice that after it is made (watchfiles looks every STEP_MS and
# yields once a look finds nothing new), so this is most of a small edit's wait.
STEP_MS = 5
DEBOUNCE_MS = 1000  # a stream of changes that never pauses is still built once a second
POLL_MS = 200  # how often the single files are looked at
# The idle work (a full garbage collection: tens of milliseconds at 1,000 tools, more on a busy
# machine) waits for a pause a user makes, not the first 200 ms after a build: a save that came
# during it would wait for it.
IDLE_MS = 1000


@dataclass(frozen=True)
class Inputs:
    folders: tuple[Path, ...]  # watched with everything under them
    files: tuple[Path, ...]  # polled
    ignore: tuple[Path, ...] = ()  # the output folder: the build's own writes are no change
    # where the folders really are: a folder swapped for a link (or a link moved) while watched
    # is a new watch, not the old folder's inode watched on
    real: tuple[str, ...] = ()


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns, stat.st_ino


def _under(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == folder or path.startswith(folder + os.sep) for folder in folders)


def changes(inputs: Inputs, idle: Callable[[], None] | None = None) -> Iterator[list[Path]]:
    """Each batch of changed paths, sorted, as they come (forever; Ctrl-C raises
    KeyboardInterrupt, as everywhere else). The first batch comes as soon as the watch is set
    up, empty when nothing changed yet: what changed before that is for the caller to find.
    `idle()` runs once things are quiet after a batch (IDLE_MS without a change)."""
    from watchfiles import DefaultFilter, watch

    ignored = tuple(os.path.abspath(path) for path in inputs.ignore)
    default = DefaultFilter()

    def wanted(change: Any, path: str) -> bool:
        return default(change, path) and not _under(os.path.abspath(path), ignored)

    polled = {path: _stat(path) for path in inputs.files}
    started, busy, since = False, True, time.monotonic()
    for batch in watch(
        *inputs.folders,
        watch_filter=wanted,
        step=STEP_MS,
        debounce=DEBOUNCE_MS,
        rust_timeout=POLL_MS,
        yield_on_timeout=True,
    ):
        found = {Path(path) for _, path in batch}
        for path, before in polled.items():
            now = _stat(path)
            if now != before:
                polled[path] = now
                found.add(path)
        if found or not started:
            started, busy = True, True
            yield sorted(found)
            since = time.monotonic()  # once the batch is built
        elif busy and idle is not None and time.monotonic() - since >= IDLE_MS / 1000:
            busy = False
            idle()
