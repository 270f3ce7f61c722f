"""read, write, edit, grep and glob: the file tools, each confined to the workspace."""

from __future__ import annotations

import os
import re
from typing import Any

from ..core import ToolError
from .workspace import Workspace

MAX_FILE_BYTES = 10 * 1024 * 1024  # read (whole), edit
MAX_GREP_FILE_BYTES = 5 * 1024 * 1024  # larger files are skipped by grep
MAX_LINE = 2000  # characters of one grep match line shown
READ_LINES = 2000  # read's default limit
DEFAULT_MATCHES = 100  # grep and glob's default limit
MAX_VISITED = 100_000  # files a grep or glob looks at, at most


def cap(text: str, limit: int, hint: str = "") -> str:
    """`text` cut to `limit` characters, with a note saying what was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[output cut: {limit} of {len(text)} characters shown{hint}]"


def read(ws: Workspace, args: dict[str, Any], limit: int) -> str:
    rel = ws.locate(args["path"])
    offset = args.get("offset") or 1
    count = args.get("limit") or READ_LINES
    fd = ws.open_file(rel)
    lines: list[str] = []
    more = False
    seen = 0
    with os.fdopen(fd, "rb") as handle:
        if b"\x00" in handle.read(8192):
            raise ToolError(f"{rel} is a binary file; read shows text files only.")
        handle.seek(0)
        for seen, line in enumerate(handle, 1):  # noqa: B007 (seen: the lines read)
            if seen < offset:
                continue
            if len(lines) == count:
                more = True
                break
            lines.append(line.decode("utf-8", "replace"))
    if offset > 1 and not lines and not more:
        raise ToolError(f"offset {offset} is past the end of {rel} ({seen} lines).")
    text = "".join(lines)
    if more:
        last = offset + len(lines) - 1
        text += f"\n[lines {offset}-{last} shown; read on with offset={last + 1}]"
    return cap(text, limit, "; read a smaller window with offset and limit")


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
    content = _text(ws.read_bytes(rel, MAX_FILE_BYTES), rel)
    found = content.count(old)
    if found == 0:
        raise ToolError(f"oldString was not found in {rel}; read the file and copy it exactly.")
    if found > 1 and not args.get("replaceAll"):
        raise ToolError(
            f"oldString occurs {found} times in {rel}; give more surrounding text to make it "
            "unique, or set replaceAll to replace every one."
        )
    ws.write_bytes(rel, content.replace(old, new).encode("utf-8"))
    return f"Edited {rel} ({found} replacement{'s' if found != 1 else ''})"


def _text(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{rel} is not UTF-8 text; it cannot be edited here.") from None


def grep(ws: Workspace, args: dict[str, Any], limit: int) -> str:
    try:
        pattern = re.compile(args["pattern"])
    except re.error as exc:
        raise ToolError(f"invalid regular expression {args['pattern']!r}: {exc}") from None
    start = ws.locate(args.get("path") or ".")
    include = _glob(args["include"]) if args.get("include") else None
    most = args.get("limit") or DEFAULT_MATCHES
    matches: list[str] = []
    for fd, name, rel in _candidates(ws, start):
        if include is not None and not include(_under(rel, start)):
            continue
        try:
            handle = os.fdopen(os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd), "rb")
        except OSError:
            continue
        with handle:
            if os.fstat(handle.fileno()).st_size > MAX_GREP_FILE_BYTES:
                continue
            data = handle.read()
        if b"\x00" in data[:8192]:
            continue
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if pattern.search(line):
                shown = line if len(line) <= MAX_LINE else line[:MAX_LINE] + "…"
                matches.append(f"{rel}:{number}:{shown}")
                if len(matches) >= most:
                    break
        if len(matches) >= most:
            matches.append(f"[stopped at {most} matches; narrow the search or raise limit]")
            break
    if not matches:
        return "No matches."
    return cap("\n".join(matches), limit)


def glob(ws: Workspace, args: dict[str, Any]) -> str:
    start = ws.locate(args.get("path") or ".")
    match = _glob(args["pattern"])
    most = args.get("limit") or DEFAULT_MATCHES
    found = sorted(rel for _, _, rel in _candidates(ws, start) if match(_under(rel, start)))
    if not found:
        return "No files found."
    text = "\n".join(found[:most])
    if len(found) > most:
        text += f"\n[{most} of {len(found)} paths shown; narrow the pattern or raise limit]"
    return text


def _candidates(ws: Workspace, start: str) -> Any:
    """The files a search looks at: the one file `start`, or those under the folder."""
    if start != "." and ws.exists(start):
        parent, name = ws.parent(start)
        try:
            if not os.path.isdir(os.path.join(ws.root, start)):
                yield parent, name, start
                return
        finally:
            os.close(parent)
    for visited, item in enumerate(ws.files(start)):
        if visited >= MAX_VISITED:
            return
        yield item


def _under(rel: str, start: str) -> str:
    """`rel` relative to the folder a search started from (patterns are written so)."""
    if start == "." or rel == start:
        return rel if start == "." else os.path.basename(rel)
    return rel[len(start) + 1 :]


def _glob(pattern: str) -> Any:
    """A matcher for a glob: `**` any folders, `*` and `?` within one name, `[...]` a class,
    `{a,b}` either; a pattern without `/` matches file names at any depth."""
    pattern = pattern.removeprefix("./")
    regex = re.compile(_translate(pattern))
    if "/" not in pattern:
        return lambda rel: regex.fullmatch(rel.rsplit("/", 1)[-1]) is not None
    return lambda rel: regex.fullmatch(rel) is not None


def _translate(pattern: str) -> str:
    out, i, depth = [], 0, 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                body = "^" + body[1:] if body.startswith("!") else body
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end
        elif c == "{":
            out.append("(?:")
            depth += 1
        elif c == "}" and depth:
            out.append(")")
            depth -= 1
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out) + ")" * depth
