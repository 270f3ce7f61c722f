"""apply_patch: the `*** Begin Patch` format (opencode's and Codex's), applied whole or not at all.

```
*** Begin Patch
*** Add File: path           every line of the new file prefixed with +
*** Delete File: path
*** Update File: path
*** Move to: new/path        (optional) the updated file moves there
@@ a line near the change    (optional) where the hunk starts looking
 context line                (space) kept
-removed line
+added line
*** End of File              (optional) the hunk ends at the end of the file
*** End Patch
```
Every operation is worked out in memory first (each path inside the workspace, each hunk found
in its file); only when all of them hold is anything written, and then all of it or none
(`Workspace.change`: paths checked against each other and the folders on their way, temporary
files first, renames undone on a failure, deletes last).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..datatypes import ToolError
from .workspace import Workspace

MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_FILES = 1000  # files one patch changes, at most


@dataclass
class _Hunk:
    header: str
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    at_end: bool = False


@dataclass
class _Op:
    kind: str  # add, delete, update
    path: str
    lines: list[str] = field(default_factory=list)  # add: the new file's lines
    hunks: list[_Hunk] = field(default_factory=list)
    move_to: str | None = None


def parse(text: str) -> list[_Op]:
    lines = text.strip().splitlines()
    if not lines or lines[0].strip() != "*** Begin Patch":
        raise ToolError("The patch must start with the line '*** Begin Patch'.")
    if lines[-1].strip() != "*** End Patch":
        raise ToolError("The patch must end with the line '*** End Patch'.")
    ops: list[_Op] = []
    for number, line in enumerate(lines[1:-1], 2):
        op = ops[-1] if ops else None
        for kind in ("Add", "Delete", "Update"):
            marker = f"*** {kind} File: "
            if line.startswith(marker):
                ops.append(_Op(kind.lower(), line[len(marker) :].strip()))
                break
        else:
            if op is None:
                raise ToolError(f"line {number}: expected '*** Add/Update/Delete File: path'.")
            _body_line(op, line, number)
    if not ops:
        raise ToolError("The patch holds no file operation.")
    return ops


def _body_line(op: _Op, line: str, number: int) -> None:
    if op.kind == "delete":
        if line.strip():
            raise ToolError(f"line {number}: a Delete File operation takes no lines.")
    elif op.kind == "add":
        if not line.startswith("+"):
            raise ToolError(f"line {number}: every line of an added file starts with '+'.")
        op.lines.append(line[1:])
    elif line.startswith("*** Move to: "):
        op.move_to = line[len("*** Move to: ") :].strip()
    elif line.strip() == "*** End of File":
        if not op.hunks:
            raise ToolError(f"line {number}: '*** End of File' before any hunk.")
        op.hunks[-1].at_end = True
    elif line.startswith("@@"):
        op.hunks.append(_Hunk(line[2:].strip()))
    else:
        if not op.hunks:
            op.hunks.append(_Hunk(""))
        hunk = op.hunks[-1]
        sign, rest = (line[0], line[1:]) if line else (" ", "")
        if sign == " ":
            hunk.old.append(rest)
            hunk.new.append(rest)
        elif sign == "-":
            hunk.old.append(rest)
        elif sign == "+":
            hunk.new.append(rest)
        else:
            raise ToolError(
                f"line {number}: a hunk line starts with ' ' (context), '-' or '+', not {sign!r}."
            )


def apply(ws: Workspace, args: dict[str, Any]) -> str:
    ops = parse(args["patchText"])
    writes: dict[str, bytes] = {}
    deletes: list[str] = []
    touched: set[str] = set()
    done: list[str] = []

    def claim(rel: str) -> None:
        if rel in touched:
            raise ToolError(f"{rel} appears in more than one operation of the patch.")
        touched.add(rel)

    for op in ops:
        rel = ws.locate(op.path)
        claim(rel)
        if op.kind == "add":
            if ws.exists(rel):
                raise ToolError(f"Add File: {rel} already exists (use Update File).")
            writes[rel] = ("\n".join(op.lines) + "\n").encode("utf-8")
            done.append(f"A {rel}")
        elif op.kind == "delete":
            ws.read_bytes(rel, MAX_FILE_BYTES)  # it must be a file there
            deletes.append(rel)
            done.append(f"D {rel}")
        else:
            content = _text(ws.read_bytes(rel, MAX_FILE_BYTES), rel)
            updated = _update(content, op.hunks, rel).encode("utf-8")
            if op.move_to:
                target = ws.locate(op.move_to)
                claim(target)
                if ws.exists(target):
                    raise ToolError(f"Move to: {target} already exists.")
                writes[target] = updated
                deletes.append(rel)
                done.append(f"M {rel} -> {target}")
            else:
                writes[rel] = updated
                done.append(f"M {rel}")
    if len(writes) + len(deletes) > MAX_FILES:
        raise ToolError(f"The patch changes more than {MAX_FILES} files; split it.")
    ws.change(writes, deletes)  # everything worked out: now all of it is written, or none
    return "Applied the patch:\n" + "\n".join(done)


def _text(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{rel} is not UTF-8 text; it cannot be patched.") from None


def _update(content: str, hunks: list[_Hunk], rel: str) -> str:
    newline = "\r\n" if "\r\n" in content else "\n"
    ends = content.endswith(("\n", "\r\n"))
    lines = content.splitlines()
    changes: list[tuple[int, int, list[str]]] = []
    cursor = 0
    for index, hunk in enumerate(hunks, 1):
        where = f"Update File: {rel}, hunk {index}"
        if hunk.header:
            found = _seek(lines, [hunk.header], cursor, False)
            if found is not None:
                cursor = found + 1
            elif not hunk.old:
                raise ToolError(f"{where}: the line {hunk.header!r} after @@ was not found.")
        if not hunk.old:  # only additions: at the end (or after the @@ line)
            at = cursor if hunk.header else len(lines)
            changes.append((at, 0, hunk.new))
            continue
        found = _seek(lines, hunk.old, cursor, hunk.at_end)
        if found is None:
            shown = "\n".join(hunk.old)
            raise ToolError(
                f"{where}: these lines were not found in the file (nothing was changed):\n{shown}"
            )
        changes.append((found, len(hunk.old), hunk.new))
        cursor = found + len(hunk.old)
    for start, length, new in reversed(changes):
        lines[start : start + length] = new
    return newline.join(lines) + (newline if lines and (ends or not content) else "")


def _seek(lines: list[str], wanted: list[str], start: int, at_end: bool) -> int | None:
    """Where `wanted` starts in `lines` (from `start`): exactly, else ignoring trailing
    whitespace, else ignoring surrounding whitespace."""
    norms: tuple[Callable[[str], str], ...] = (lambda s: s, str.rstrip, str.strip)
    for norm in norms:
        target = [norm(line) for line in wanted]
        last = len(lines) - len(wanted)
        starts = [last] if at_end else range(start, last + 1)
        for i in starts:
            if i >= start and [norm(line) for line in lines[i : i + len(wanted)]] == target:
                return i
    return None
