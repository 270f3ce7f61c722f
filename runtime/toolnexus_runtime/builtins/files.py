"""read, write, edit and glob: the file tools, each confined to the workspace (grep, in grep.py,
walks the same way)."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from threading import Event
from typing import Any, BinaryIO

from ..datatypes import ToolError
from .wildcard import compile_glob
from .workspace import Workspace

MAX_FILE_BYTES = 10 * 1024 * 1024  # read (whole), edit
READ_LINES = 2000  # read's default limit
DEFAULT_MATCHES = 100  # grep and glob's default limit
MAX_VISITED = 100_000  # files a grep or glob looks at, at most
GLOB_SECONDS = 30.0  # a glob stops at this time limit


def cap(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, with a note saying what was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[output cut: {limit} of {len(text)} characters shown]"


def read(ws: Workspace, args: dict[str, Any], limit: int, stop: Event) -> str:
    """A window of lines. Memory stays bounded whatever the file holds (a huge file with no
    newline): a line is read up to the bytes the output can show and the rest of it skipped,
    and reading stops once the output is full."""
    rel = ws.locate(args["path"])
    offset = args.get("offset") or 1
    count = args.get("limit") or READ_LINES
    fd = ws.open_file(rel)
    lines: list[str] = []
    shown = 0  # characters in lines
    more = False
    seen = 0
    with os.fdopen(fd, "rb") as handle:
        if b"\x00" in handle.read(8192):
            raise ToolError(f"{rel} is a binary file; read shows text files only.")
        handle.seek(0)
        for seen, line in enumerate(_lines(handle, limit * 4 + 4, stop), 1):  # noqa: B007
            if seen < offset:
                continue
            if len(lines) == count:
                more = True
                break
            text = line.decode("utf-8", "replace")
            lines.append(text)
            shown += len(text)
            if shown > limit:  # the output is full: nothing further is read
                break
    if offset > 1 and not lines and not more:
        raise ToolError(f"offset {offset} is past the end of {rel} ({seen} lines).")
    text = "".join(lines)
    if len(text) > limit:
        whole = text[:limit].count("\n")  # lines shown whole
        where = (
            f"lines {offset}-{offset + whole - 1} shown whole"
            if whole
            else f"line {offset} is longer than that"
        )
        return (
            f"{text[:limit]}\n\n[output cut at {limit} characters: {where}; read on with "
            f"offset={offset + max(whole, 1)}, or read a smaller window with limit]"
        )
    if more:
        last = offset + len(lines) - 1
        text += f"\n[lines {offset}-{last} shown; read on with offset={last + 1}]"
    return text


def _lines(handle: BinaryIO, most: int, stop: Event) -> Iterator[bytes]:
    """The file's lines, each cut to `most` bytes (the rest of a longer line is skipped, never
    held in memory)."""
    while True:
        if stop.is_set():
            raise ToolError("read was stopped.")
        line = handle.readline(most)
        if not line:
            return
        yield line
        if len(line) == most and not line.endswith(b"\n"):
            while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                if stop.is_set():
                    raise ToolError("read was stopped.")


def write(ws: Workspace, args: dict[str, Any]) -> str:
    rel = ws.locate(args["path"])
    data = args["content"].encode("utf-8")
    ws.write_bytes(rel, data)
    return f"Wrote {len(data)} bytes to {rel}"


def edit(ws: Workspace, args: dict[str, Any]) -> str:
    rel = ws.locate(args["path"])
    old, new = args["oldString"], args["newString"]
    if not old:
        raise ToolError("oldString is empty: give the exact text to replace (or use write).")
    if old == new:
        raise ToolError("oldString and newString are the same: nothing would change.")
    data = ws.read_bytes(rel, MAX_FILE_BYTES)
    content = _text(data, rel)
    found = content.count(old)
    if found == 0:
        raise ToolError(f"oldString was not found in {rel}; read the file and copy it exactly.")
    if found > 1 and not args.get("replaceAll"):
        raise ToolError(
            f"oldString occurs {found} times in {rel}; give more surrounding text to make it "
            "unique, or set replaceAll to replace every one."
        )
    size = len(data) + found * (len(new.encode("utf-8")) - len(old.encode("utf-8")))
    if size > MAX_FILE_BYTES:  # known before anything is built in memory
        raise ToolError(
            f"replacing {found} occurrence{'s' if found != 1 else ''} would make {rel} {size} "
            f"bytes, more than edit's limit of {MAX_FILE_BYTES}; nothing was changed."
        )
    ws.write_bytes(rel, content.replace(old, new).encode("utf-8"))
    return f"Edited {rel} ({found} replacement{'s' if found != 1 else ''})"


def _text(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{rel} is not UTF-8 text; it cannot be edited here.") from None


def glob(ws: Workspace, args: dict[str, Any], stop: Event) -> str:
    start = ws.locate(args.get("path") or ".")
    match = compile_glob(args["pattern"])
    most = args.get("limit") or DEFAULT_MATCHES
    deadline = time.monotonic() + GLOB_SECONDS
    found: list[str] = []
    note = ""
    for _, _, rel in candidates(ws, start):
        if stop.is_set():
            raise ToolError("glob was stopped.")
        if time.monotonic() >= deadline:
            note = f"\n[glob stopped at its time limit ({GLOB_SECONDS:g} s); narrow the path]"
            break
        if match(under(rel, start)):
            found.append(rel)
    if not found:
        return "No files found." + note
    found.sort()
    text = "\n".join(found[:most])
    if len(found) > most:
        text += f"\n[{most} of {len(found)} paths shown; narrow the pattern or raise limit]"
    return text + note


def candidates(ws: Workspace, start: str) -> Iterator[tuple[int, str, str]]:
    """The files a search looks at: the one file `start`, or those under the folder."""
    if start != ".":
        parent, name = ws.parent(start)
        try:
            try:
                kind = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
            except FileNotFoundError:
                raise ToolError(f"{start} does not exist.") from None
            if not stat.S_ISDIR(kind):
                yield parent, name, start
                return
        finally:
            os.close(parent)
    for visited, item in enumerate(ws.files(start)):
        if visited >= MAX_VISITED:
            return
        yield item


def under(rel: str, start: str) -> str:
    """`rel` relative to the folder a search started from (patterns are written so)."""
    if start == "." or rel == start:
        return rel if start == "." else os.path.basename(rel)
    return rel[len(start) + 1 :]
