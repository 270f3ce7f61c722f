"""grep's matcher: a child process that compiles one pattern and searches the files grep sends
it, under a memory limit of its own.

Why a process: the regex module's backtracking stack and capture history grow with the text
(`((.)*)*x` over a 5 MB line asks for gigabytes), and nothing inside a process can bound that or
stop a compile that has started; the operating system can. A pattern that needs more than the
limit fails this process's allocations (a MemoryError, reported), and grep kills the process at
its deadline whatever it is doing.

Run as a script by `grep.py`, standalone (it imports nothing from toolnexus_runtime, so it
starts in a few tens of milliseconds): `python -I -S matcher.py REGEX_FOLDER MEMORY_BYTES`.

stdin: one JSON line `{"pattern", "seconds", "most", "max_line"}`, then one frame per file (4-byte
big-endian length, then the file's bytes), then EOF.
stdout: one JSON line per message: first `{"ok": true}` (or `{"error": TEXT}` and exit); then one
per file, in order, `{"m": [[line number, line], ...]}` with `"late": true` when the deadline
came while searching it (the last answer), `"memory": true` when the search of that file needed
more than the limit (the next file is searched all the same).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from typing import IO, Any

END = "…"  # marks a line cut at max_line characters


def limit_memory(most: int) -> None:
    """This process's address space (and data segment) capped at `most` bytes, where the
    system has such limits."""
    try:
        import resource
    except ImportError:  # not POSIX: the deadline still bounds the time
        return
    for name in ("RLIMIT_AS", "RLIMIT_DATA"):
        which = getattr(resource, name, None)
        if which is None:
            continue
        try:
            hard = resource.getrlimit(which)[1]
            soft = most if hard == resource.RLIM_INFINITY else min(most, hard)
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):  # a system that does not enforce it (macOS: RLIMIT_AS)
            continue


def matching_lines(
    pattern: Any, text: str, deadline: float, most: int
) -> Iterator[tuple[int, str]]:
    """(number, text) of each line of `text` that `pattern` matches (a match within the line),
    at most `most`.

    The whole text is searched (one call in C, not one per line) with ^ and $ at line ends; a
    match found is checked against its line alone when it spans lines. A TimeoutError at the
    deadline."""
    if not text or most <= 0:
        return
    whole = not ("\\A" in pattern.pattern or "\\Z" in pattern.pattern)  # else line by line
    at = 0  # where the next search starts: the start of a line
    number, counted = 1, 0  # the line number at offset `counted`
    while at <= len(text):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if whole:
            found = pattern.search(text, at, timeout=left)
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
            ok = pattern.search(line, timeout=left) is not None
        else:
            ok = True
        if ok:
            number += text.count("\n", counted, begin)
            counted = begin
            yield number, line
            most -= 1
            if most == 0:
                return
        at = end + 1


def _frames(source: IO[bytes]) -> Iterator[bytes]:
    while len(head := source.read(4)) == 4:
        size = int.from_bytes(head, "big")
        data = source.read(size)
        if len(data) < size:
            return
        yield data


def _say(out: IO[bytes], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")
    out.flush()


def main() -> None:
    sys.path.insert(0, sys.argv[1])  # where the parent found `regex`
    limit_memory(int(sys.argv[2]))
    source, out = sys.stdin.buffer, sys.stdout.buffer
    job = json.loads(source.readline())
    deadline = time.monotonic() + job["seconds"]
    import regex

    try:
        pattern = regex.compile(job["pattern"], regex.VERSION0 | regex.MULTILINE)
    except MemoryError:
        _say(out, {"memory": True})
        return
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        _say(out, {"error": str(exc)})
        return
    _say(out, {"ok": True})
    most, width = job["most"], job["max_line"]
    for data in _frames(source):
        found: list[tuple[int, str]] = []
        text = data.decode("utf-8", "replace").replace("\r\n", "\n").removesuffix("\n")
        del data
        try:
            for number, line in matching_lines(pattern, text, deadline, most):
                found.append((number, line if len(line) <= width else line[:width] + END))
        except TimeoutError:
            _say(out, {"m": found, "late": True})
            return
        except MemoryError:  # what the search held is free again: on to the next file
            _say(out, {"m": found, "memory": True})
            continue
        finally:
            del text
        most -= len(found)
        _say(out, {"m": found})


if __name__ == "__main__":
    main()
