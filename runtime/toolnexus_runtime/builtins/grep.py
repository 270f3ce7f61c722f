"""grep: lines matching a regular expression (the regex module, re's syntax), bounded in time
and memory whatever the pattern.

Two guards. Before anything runs, the pattern is parsed by the regex module's own parser, so
what is measured is what would be compiled (inline flags, verbose-mode comments, escapes,
classes, nesting all read as the compiler reads them, never by a scan of the text), and refused
when its compiled size, counting each repeat's minimum as the compiler unrolls it, is over
MAX_PATTERN_SIZE. Then the pattern is compiled and matched in a child process (`matcher.py`)
whose memory is capped at MATCH_MEMORY and which is killed at the deadline: the backtracking
memory of a match grows with the text and no static check can bound it.
"""

from __future__ import annotations

import importlib
import json
import os
import selectors
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator
from threading import Event
from typing import Any

from ..datatypes import ToolError
from .files import DEFAULT_MATCHES, candidates, cap, under
from .wildcard import compile_glob
from .workspace import Workspace

MAX_GREP_FILE_BYTES = 5 * 1024 * 1024  # larger files are skipped by grep
MAX_LINE = 2000  # characters of one grep match line shown
GREP_SECONDS = 30.0  # a grep stops at this time limit
MAX_PATTERN = 10_000  # characters of a pattern
MAX_PATTERN_SIZE = 100_000  # compiled size of a pattern, repeats unrolled (about 30 MB)
MATCH_MEMORY = 512 * 1024 * 1024  # the matcher process's address space
GRACE = 2.0  # seconds past the deadline before the matcher is killed (it stops itself first)
MATCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "matcher.py")
_WINDOW = 1 << 20  # bytes written ahead to the matcher


def grep(ws: Workspace, args: dict[str, Any], limit: int, stop: Event) -> str:
    """Lines matching `pattern` in the files under `path`, within GREP_SECONDS."""
    deadline = time.monotonic() + GREP_SECONDS
    pattern = args["pattern"]
    check_pattern(pattern)
    start = ws.locate(args.get("path") or ".")
    include = compile_glob(args["include"]) if args.get("include") else None
    most = args.get("limit") or DEFAULT_MATCHES

    cut = False  # the walk stopped at the time limit

    def files() -> Iterator[tuple[str, bytes]]:
        nonlocal cut
        for fd, name, rel in candidates(ws, start):
            if stop.is_set():
                raise ToolError("grep was stopped.")
            if time.monotonic() >= deadline:
                cut = True
                return
            if include is not None and not include(under(rel, start)):
                continue
            data = _grep_bytes(ws, fd, name, rel, named=rel == start)
            if data is not None and b"\x00" not in data[:8192]:
                yield rel, data

    matches: list[str] = []
    notes: list[str] = []
    too_large: list[str] = []  # files whose search needed more than the matcher's memory
    with _Matcher(pattern, most, deadline) as matcher:
        for rel, found, late, memory in matcher.search(files(), stop):
            matches += [f"{rel}:{number}:{line}" for number, line in found]
            if memory:
                too_large.append(rel)
            if late is not None:
                notes.append(_late(late))
                break
            if len(matches) >= most:
                notes.append(f"stopped at {most} matches; narrow the search or raise limit")
                break
        else:
            if cut:
                notes.append(_late(""))
    if too_large:
        notes.insert(0, _memory(too_large))
    if not matches:
        if notes:
            raise ToolError(". ".join(notes) + ".")
        return "No matches."
    return cap("\n".join([*matches, *(f"[{note}]" for note in notes)]), limit)


def _late(where: str) -> str:
    return (
        f"grep stopped at its time limit ({GREP_SECONDS:g} s){where}, before searching every "
        "file: narrow the search with path or include, or simplify the pattern (nested "
        "repeats such as (a|aa)+ can take exponentially long)"
    )


def _memory(files: list[str]) -> str:
    shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
    return (
        f"not searched to the end: {shown}, where the pattern needed more than grep's "
        f"{MATCH_MEMORY >> 20} MiB memory limit (a repeat of a group or of alternatives, such "
        "as (a|ab)* or (.)*, keeps a backtracking entry per character it passes): simplify "
        "the pattern, or narrow the search with path or include"
    )


# -- the static guard ----------------------------------------------------------------------


def check_pattern(pattern: str) -> None:
    """A ToolError for a pattern grep will not compile: too long, invalid, or too large once its
    counted repeats are unrolled."""
    import regex  # the [builtins] extra; checked when the Toolkit is made (Builtins.bind)

    if len(pattern) > MAX_PATTERN:
        raise ToolError(
            f"the pattern is {len(pattern)} characters long; grep takes at most {MAX_PATTERN}."
        )
    try:
        size = compiled_size(pattern, regex.VERSION0 | regex.MULTILINE)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
    if size is not None and size > MAX_PATTERN_SIZE:
        raise ToolError(
            f"the pattern is too large to compile: its counted repeats ({{n}}, {{n,}}, {{n,m}}) "
            f"unroll to more than {MAX_PATTERN_SIZE} steps (nested counts multiply, and each "
            "copy holds everything inside the repeat). Use + or * instead of large counts."
        )


def compiled_size(pattern: str, flags: int) -> int | None:
    """About how many nodes `pattern` compiles to, each repeat's body counted once more than its
    minimum (`((a{100}){100}){100}`: about a million), read from the regex module's own parse of
    it; capped just above MAX_PATTERN_SIZE. None when this regex version's parser cannot be
    reached (a private API): the matcher's memory limit still holds then."""
    import regex

    try:
        core: Any = importlib.import_module("regex._regex_core")
        parse, source_type, info_type = core._parse_pattern, core.Source, core.Info
        node_type, repeat_type, unscoped = core.RegexBase, core.GreedyRepeat, core._UnscopedFlagSet
        folding, full = (core.SetBase, core.Range), core.FULLIGNORECASE
        expanding = [ord(c) for c in core._regex.get_expand_on_folding()]
    except (ImportError, AttributeError):  # pragma: no cover (another regex layout)
        return None
    while True:  # as regex.compile does: a global flag set mid-pattern restarts the parse
        source = source_type(pattern)
        info = info_type(flags, source.char_type, {})
        info.guess_encoding = regex.UNICODE
        source.ignore_space = bool(info.flags & regex.VERBOSE)
        try:
            parsed = parse(source, info)
            break
        except unscoped:
            flags = info.global_flags
    if not source.at_end():
        raise regex.error("unbalanced parenthesis", pattern, source.pos)
    most = MAX_PATTERN_SIZE + 1
    size = 0
    stack: list[tuple[Any, int]] = [(parsed, 1)]
    while stack and size < most:
        node, times = stack.pop()
        characters = getattr(node, "characters", ())
        own = 1 + (len(characters) if isinstance(characters, tuple) else 0)
        if isinstance(node, folding) and node.positive and node.case_flags & full == full:
            # full case folding adds the string each character it matches folds to (ß: ss)
            own += 4 * sum(1 for c in expanding if _matches(node, c))
        size += times * own
        if isinstance(node, repeat_type):
            times = min(most, times * ((node.min_count or 0) + 1))
        for value in vars(node).values():
            if isinstance(value, node_type):
                stack.append((value, times))
            elif isinstance(value, (list, tuple)):
                stack += [(item, times) for item in value if isinstance(item, node_type)]
    return min(size, most)


def _matches(node: Any, char: int) -> bool:
    try:
        return bool(node.matches(char))
    except Exception:  # noqa: BLE001 (a node this regex version checks otherwise: count it)
        return True


# -- the matcher process -------------------------------------------------------------------


class _Matcher:
    """One matcher process for one grep: the pattern compiled once, files streamed to it."""

    def __init__(self, pattern: str, most: int, deadline: float) -> None:
        import regex

        self.deadline = deadline
        folder = os.path.dirname(os.path.dirname(os.path.abspath(regex.__file__)))
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", MATCHER, folder, str(MATCH_MEMORY)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
        except OSError as exc:
            raise ToolError(f"grep could not start its matcher process: {exc}") from None
        seconds = max(deadline - time.monotonic(), 0.0)
        job = {"pattern": pattern, "seconds": seconds, "most": most, "max_line": MAX_LINE}
        self.pending = bytearray(json.dumps(job).encode("utf-8", "surrogatepass") + b"\n")

    def __enter__(self) -> _Matcher:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:  # a broken pipe flushed on close
                    pass

    def search(
        self, files: Iterator[tuple[str, bytes]], stop: Event
    ) -> Iterator[tuple[str, list[tuple[int, str]], str | None, bool]]:
        """(file, its matching lines, None, False) per file searched, in order. The third item
        is where the time limit came (" while matching in FILE", or "") on the last one
        yielded; the fourth is True when that file's search ran out of memory."""
        assert self.process.stdin is not None and self.process.stdout is not None
        writer, reader = self.process.stdin.fileno(), self.process.stdout.fileno()
        os.set_blocking(writer, False)
        os.set_blocking(reader, False)
        waiting: deque[str] = deque()  # files sent, not yet answered
        received = bytearray()
        compiled = False
        more = True  # files left to send
        with selectors.DefaultSelector() as selector:
            selector.register(reader, selectors.EVENT_READ)
            writing = False
            while True:
                if stop.is_set():
                    raise ToolError("grep was stopped.")
                now = time.monotonic()
                if now >= self.deadline + GRACE:  # the matcher did not stop by itself
                    yield "", [], f" while matching in {waiting[0]}" if waiting else "", False
                    return
                while more and len(self.pending) < _WINDOW:
                    item = next(files, None)
                    if item is None:
                        more = False
                        break
                    rel, data = item
                    waiting.append(rel)
                    self.pending += len(data).to_bytes(4, "big") + data
                if self.pending and not writing:
                    selector.register(writer, selectors.EVENT_WRITE)
                    writing = True
                elif not self.pending and writing:
                    selector.unregister(writer)
                    writing = False
                if not more and not self.pending and not self.process.stdin.closed:
                    self.process.stdin.close()  # EOF: the matcher answers what it has, then ends
                for key, _ in selector.select(min(0.1, max(self.deadline + GRACE - now, 0))):
                    if key.fd == writer:
                        try:
                            sent = os.write(writer, self.pending[:65536])
                        except BrokenPipeError:
                            sent = len(self.pending)  # it ended; what it said comes next
                        del self.pending[:sent]
                        continue
                    chunk = os.read(reader, 1 << 16)
                    if not chunk:
                        raise self._ended(waiting, compiled)
                    received += chunk
                while (end := received.find(b"\n")) >= 0:
                    answer = json.loads(received[:end])
                    del received[: end + 1]
                    if not compiled:
                        self._check_compiled(answer)
                        compiled = True
                        continue
                    rel = waiting.popleft()
                    found = [(number, line) for number, line in answer["m"]]
                    late = f" while matching in {rel}" if answer.get("late") else None
                    yield rel, found, late, bool(answer.get("memory"))
                if compiled and not more and not waiting:
                    return

    def _check_compiled(self, answer: dict[str, Any]) -> None:
        if answer.get("memory"):
            raise ToolError(
                f"the pattern needs more than grep's {MATCH_MEMORY >> 20} MiB memory limit to "
                "compile: use + or * instead of large counts ({n})."
            )
        if "error" in answer:
            raise ToolError(f"invalid regular expression: {answer['error']}")

    def _ended(self, waiting: deque[str], compiled: bool) -> ToolError:
        """The matcher ended without answering: killed by the system (memory) or crashed."""
        code = self.process.wait()
        where = f" while matching in {waiting[0]}" if waiting else ""
        if not compiled:
            where = " while compiling it"
        return ToolError(
            f"grep's matcher process ended (exit status {code}){where}; the pattern may need "
            f"more than its {MATCH_MEMORY >> 20} MiB memory limit: simplify it."
        )


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
