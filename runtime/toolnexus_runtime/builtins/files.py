"""read, write, edit, grep and glob: the file tools, each confined to the workspace."""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterator
from threading import Event
from typing import TYPE_CHECKING, Any, BinaryIO

from ..datatypes import ToolError
from .wildcard import compile_glob
from .workspace import Workspace

if TYPE_CHECKING:
    import regex

MAX_FILE_BYTES = 10 * 1024 * 1024  # read (whole), edit
MAX_GREP_FILE_BYTES = 5 * 1024 * 1024  # larger files are skipped by grep
MAX_LINE = 2000  # characters of one grep match line shown
READ_LINES = 2000  # read's default limit
DEFAULT_MATCHES = 100  # grep and glob's default limit
MAX_VISITED = 100_000  # files a grep or glob looks at, at most
GREP_SECONDS = 30.0  # a grep or glob stops at this time limit
MAX_REPEAT_WEIGHT = 100_000  # nested repeat counts in a grep pattern multiply to at most this


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


def grep(ws: Workspace, args: dict[str, Any], limit: int, stop: Event) -> str:
    """Lines matching a regular expression, within GREP_SECONDS.

    Matched by the `regex` module (re's syntax) with a timeout, releasing the GIL while it
    matches: a pattern that backtracks catastrophically (`(a|aa)+$`) fails the call at the time
    limit instead of holding a thread, and the event loop, for minutes as `re` would."""
    import regex  # the [builtins] extra; checked when the Toolkit is made (Builtins.bind)

    deadline = time.monotonic() + GREP_SECONDS
    weight = repeat_weight(args["pattern"])
    if weight > MAX_REPEAT_WEIGHT:
        raise ToolError(
            f"the pattern's counted repeats multiply to {weight} (nested {{n}}); grep takes at "
            f"most {MAX_REPEAT_WEIGHT}. Use + or * instead of large counts."
        )
    try:
        pattern = regex.compile(args["pattern"], regex.VERSION0 | regex.MULTILINE)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise ToolError(f"invalid regular expression {args['pattern']!r}: {exc}") from None
    start = ws.locate(args.get("path") or ".")
    include = compile_glob(args["include"]) if args.get("include") else None
    most = args.get("limit") or DEFAULT_MATCHES
    matches: list[str] = []
    for fd, name, rel in _candidates(ws, start):
        if stop.is_set():
            raise ToolError("grep was stopped.")
        if time.monotonic() >= deadline:
            return _late(matches, "", limit)
        if include is not None and not include(_under(rel, start)):
            continue
        data = _grep_bytes(ws, fd, name, rel, named=rel == start)
        if data is None or b"\x00" in data[:8192]:
            continue
        text = data.decode("utf-8", "replace").replace("\r\n", "\n").removesuffix("\n")
        try:
            for number, line in _matching_lines(pattern, text, deadline, stop):
                shown = line if len(line) <= MAX_LINE else line[:MAX_LINE] + "…"
                matches.append(f"{rel}:{number}:{shown}")
                if len(matches) >= most:
                    break
        except TimeoutError:
            return _late(matches, f" while matching in {rel}", limit)
        if len(matches) >= most:
            matches.append(f"[stopped at {most} matches; narrow the search or raise limit]")
            break
    if not matches:
        return "No matches."
    return cap("\n".join(matches), limit)


def _late(matches: list[str], where: str, limit: int) -> str:
    """What grep found before its time limit, with a note; an error when it found nothing."""
    note = (
        f"grep stopped at its time limit ({GREP_SECONDS:g} s){where}, before searching every "
        "file: narrow the search with path or include, or simplify the pattern (nested "
        "repeats such as (a|aa)+ can take exponentially long)"
    )
    if not matches:
        raise ToolError(note + ".")
    return cap("\n".join([*matches, f"[{note}]"]), limit)


def _matching_lines(
    pattern: regex.Pattern[str], text: str, deadline: float, stop: Event
) -> Iterator[tuple[int, str]]:
    """(number, text) of each line of `text` that `pattern` matches (a match within the line).

    The whole text is searched (one call in C, not one per line) with ^ and $ at line ends; a
    match found is checked against its line alone when it spans lines. A TimeoutError at the
    deadline; nothing more once `stop` is set."""
    if not text:
        return
    whole = not ("\\A" in pattern.pattern or "\\Z" in pattern.pattern)  # else line by line
    at = 0  # where the next search starts: the start of a line
    number, counted = 1, 0  # the line number at offset `counted`
    while at <= len(text) and not stop.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if whole:
            found = pattern.search(text, at, timeout=left, concurrent=True)
            if found is None:
                return
            begin = text.rfind("\n", 0, found.start()) + 1
        else:
            found, begin = None, at
        end = text.find("\n", begin)
        end = len(text) if end < 0 else end
        line = text[begin:end]
        if found is None or found.end() > end:  # spans lines: does the line alone match?
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ok = pattern.search(line, timeout=left, concurrent=True) is not None
        else:
            ok = True
        if ok:
            number += text.count("\n", counted, begin)
            counted = begin
            yield number, line
        at = end + 1


_COUNT = re.compile(r"\{(\d*)(?:,\d*)?\}")


def repeat_weight(pattern: str) -> int:
    """The largest product of nested minimum repeat counts in a regular expression
    (`((a{100}){100}){100}`: 1,000,000). The regex module unrolls a repeat's minimum when it
    compiles, so this is about how large the compiled pattern gets: three nested {1000}s take
    gigabytes. Read from the text, erring high (whitespace before a count is skipped)."""
    frames = [1]  # the largest weight inside each open group so far
    last = 1  # the weight of the item just passed (a group's, or 1 for an atom)
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            last, i = 1, i + 2
            continue
        if c == "[":  # a class: one atom
            j = i + 1
            if j < len(pattern) and pattern[j] == "^":
                j += 1
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            last, i = 1, j + 1
            continue
        if c == "(":
            frames.append(1)
            i += 1
            continue
        if c == ")" and len(frames) > 1:
            last = frames.pop()
            frames[-1] = max(frames[-1], last)
            i += 1
            continue
        if c == "{":
            count = _COUNT.match(pattern, i)
            if count is not None:
                least = int(count.group(1) or 0)
                frames[-1] = max(frames[-1], last * max(least, 1))
                last, i = 1, count.end()
                continue
        if not c.isspace():
            last = 1
        i += 1
    return max(frames)


def _grep_bytes(ws: Workspace, folder: int, name: str, rel: str, named: bool) -> bytes | None:
    """The bytes of a file grep looks at; None to skip it (too large, or not a regular file:
    opened without blocking and without following links, so a FIFO or a link swapped in
    during the walk is skipped, never waited on). The file the path names is an error."""
    try:
        fd = ws.open_at(folder, name, rel)
    except ToolError:
        if named:
            raise
        return None
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > MAX_GREP_FILE_BYTES:
            if named:
                raise ToolError(
                    f"{rel} is larger than {MAX_GREP_FILE_BYTES} bytes; grep skips such files."
                )
            return None
        return handle.read(MAX_GREP_FILE_BYTES + 1)[:MAX_GREP_FILE_BYTES]


def glob(ws: Workspace, args: dict[str, Any], stop: Event) -> str:
    start = ws.locate(args.get("path") or ".")
    match = compile_glob(args["pattern"])
    most = args.get("limit") or DEFAULT_MATCHES
    deadline = time.monotonic() + GREP_SECONDS
    found: list[str] = []
    note = ""
    for _, _, rel in _candidates(ws, start):
        if stop.is_set():
            raise ToolError("glob was stopped.")
        if time.monotonic() >= deadline:
            note = f"\n[glob stopped at its time limit ({GREP_SECONDS:g} s); narrow the path]"
            break
        if match(_under(rel, start)):
            found.append(rel)
    if not found:
        return "No files found." + note
    found.sort()
    text = "\n".join(found[:most])
    if len(found) > most:
        text += f"\n[{most} of {len(found)} paths shown; narrow the pattern or raise limit]"
    return text + note


def _candidates(ws: Workspace, start: str) -> Iterator[tuple[int, str, str]]:
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


def _under(rel: str, start: str) -> str:
    """`rel` relative to the folder a search started from (patterns are written so)."""
    if start == "." or rel == start:
        return rel if start == "." else os.path.basename(rel)
    return rel[len(start) + 1 :]
