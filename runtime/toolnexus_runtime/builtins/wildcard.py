"""Glob patterns (glob's `pattern`, grep's `include`), matched without backtracking.

A glob translated to a regular expression (what `fnmatch` does) backtracks: `*a*a*a*a*a*a*b`
against a long name of `a`s takes seconds, and each further `*` multiplies that. Here a pattern
is matched by the classic two-pointer wildcard algorithm, which only ever returns to the last
`*` seen: at most (pattern length x name length) steps, on names within a folder and then,
the same way, on the folders of a path (`**`).

Syntax: `*` any characters within one name, `?` one character, `[abc]`, `[a-z]`, `[!a]` (or
`[^a]`) one character of a class, `{a,b}` either (nested too), `**` as a whole path component
any number of folders (`**/x`, `a/**/x`; `a/**` everything under `a`; elsewhere, as in
gitignore, it is a plain `*`), `\\x` the character x. A pattern without `/` is matched against
file names at any depth. Bad patterns are a `ToolError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..datatypes import ToolError

MAX_PATTERN = 1000  # characters
MAX_ALTERNATIVES = 256  # what `{...}` groups expand to, at most
MAX_NESTING = 16


class _Star:
    """`*` in a name; `**` as a path component (any number of folders)."""


STAR = _Star()


@dataclass(frozen=True)
class _Class:
    negated: bool
    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]

    def __call__(self, c: str) -> bool:
        found = c in self.chars or any(lo <= c <= hi for lo, hi in self.ranges)
        return found != self.negated


_Token = str | _Class | _Star | None  # a character, a class, `*`, or None for `?`
_Name = Callable[[str], bool]  # a matcher for one name
_Path = tuple[_Name | _Star, ...]


def compile_glob(pattern: str) -> Callable[[str], bool]:
    """A matcher for workspace-relative paths (`a/b/c.py`)."""
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"The glob pattern is longer than {MAX_PATTERN} characters.")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    matchers = [_matcher(alt) for alt in _expand(pattern)]
    if len(matchers) == 1:
        return matchers[0]
    return lambda rel: any(match(rel) for match in matchers)


def _matcher(pattern: str) -> Callable[[str], bool]:
    segments = _path(pattern)
    if "/" not in pattern:  # file names at any depth
        only = segments[0]
        if len(segments) == 1 and not isinstance(only, _Star):
            return lambda rel: only(rel[rel.rfind("/") + 1 :])
        return lambda rel: _match(segments, rel.split("/")[-1:], _match_name)
    return lambda rel: _match(segments, rel.split("/"), _match_name)


# -- {a,b} ------------------------------------------------------------------------------------


def _expand(pattern: str) -> list[str]:
    pairs = _braces(pattern)
    return _alternatives(pattern, 0, len(pattern), pairs)


def _braces(p: str) -> dict[int, int]:
    """Where each `{` that has a matching `}` closes (others are plain characters)."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    i = 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "[" and (end := _class_end(p, i)) is not None:
            i = end + 1
            continue
        if c == "{":
            stack.append(i)
            if len(stack) > MAX_NESTING:
                raise ToolError(f"The glob pattern nests {{...}} deeper than {MAX_NESTING}.")
        elif c == "}" and stack:
            pairs[stack.pop()] = i
        i += 1
    return pairs


def _alternatives(p: str, lo: int, hi: int, pairs: dict[int, int]) -> list[str]:
    """What p[lo:hi] expands to."""
    results = [""]
    literal = i = lo
    while i < hi:
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "[" and (end := _class_end(p, i)) is not None and end < hi:
            i = end + 1
            continue
        if c == "{" and i in pairs:
            close = pairs[i]
            options: list[str] = []
            for a, b in _commas(p, i + 1, close, pairs):
                options.extend(_alternatives(p, a, b, pairs))
            prefix = p[literal:i]
            if len(results) * len(options) > MAX_ALTERNATIVES:
                raise ToolError(
                    f"The glob pattern's {{...}} groups expand to more than {MAX_ALTERNATIVES} "
                    "patterns; write fewer alternatives."
                )
            results = [r + prefix + o for r in results for o in options]
            i = literal = close + 1
            continue
        i += 1
    return [r + p[literal:hi] for r in results]


def _commas(p: str, lo: int, hi: int, pairs: dict[int, int]) -> list[tuple[int, int]]:
    """p[lo:hi] split at its top-level commas."""
    spans: list[tuple[int, int]] = []
    start = i = lo
    while i < hi:
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "[" and (end := _class_end(p, i)) is not None and end < hi:
            i = end + 1
            continue
        if c == "{" and i in pairs:
            i = pairs[i] + 1
            continue
        if c == ",":
            spans.append((start, i))
            start = i + 1
        i += 1
    spans.append((start, hi))
    return spans


# -- one pattern: its folders, then the characters of each name --------------------------------


def _path(pattern: str) -> _Path:
    segments: list[_Name | _Star] = []
    for part in pattern.split("/"):
        if part == "**":
            if segments and segments[-1] is STAR:
                continue  # **/** is **
            segments.append(STAR)
        else:
            segments.append(_segment(part))
    if len(segments) > 1 and segments[-1] is STAR:
        segments.insert(-1, _any_name)  # a/** is everything under a: at least one more name
    return tuple(segments)


def _any_name(name: str) -> bool:
    return True


def _segment(part: str) -> _Name:
    """A matcher for one name (no `/`)."""
    tokens: list[_Token] = []
    i = 0
    while i < len(part):
        c = part[i]
        if c == "*":
            while i < len(part) and part[i] == "*":
                i += 1
            tokens.append(STAR)  # ** within a name is *; runs of * are one
            continue
        if c == "?":
            tokens.append(None)
        elif c == "[" and (end := _class_end(part, i)) is not None:
            tokens.append(_class(part, i, end))
            i = end + 1
            continue
        elif c == "\\" and i + 1 < len(part):
            tokens.append(part[i + 1])
            i += 2
            continue
        else:
            tokens.append(c)
        i += 1
    if all(isinstance(token, (str, _Star)) for token in tokens):
        return _literals(tokens)
    pattern = tuple(tokens)
    return lambda name: _match(pattern, name, _match_char)


def _literals(tokens: list[_Token]) -> _Name:
    """A matcher for a name pattern of characters and stars only (the usual `*.py`): its
    literal runs found left to right with str.find, which is what the two-pointer algorithm
    does, at C speed."""
    runs = [""]
    for token in tokens:
        if token is STAR:
            runs.append("")
        else:
            runs[-1] += str(token)
    if len(runs) == 1:
        return runs[0].__eq__
    first, *middle, last = runs

    def match(name: str) -> bool:
        if len(name) < len(first) + len(last):
            return False
        if not (name.startswith(first) and name.endswith(last)):
            return False
        at, end = len(first), len(name) - len(last)
        for run in middle:
            if run:
                found = name.find(run, at, end)
                if found < 0:
                    return False
                at = found + len(run)
        return True

    return match


def _class_end(p: str, i: int) -> int | None:
    """Where the class opened by p[i] == '[' closes; `]` first in it is a member."""
    j = i + 1
    if j < len(p) and p[j] in "!^":
        j += 1
    if j < len(p) and p[j] == "]":
        j += 1
    end = p.find("]", j)
    return end if end >= 0 else None


def _class(p: str, i: int, end: int) -> _Class:
    body = p[i + 1 : end]
    negated = body[:1] in ("!", "^")
    if negated:
        body = body[1:]
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            lo, hi = body[k], body[k + 2]
            if lo > hi:
                raise ToolError(
                    f"The glob pattern has an invalid range {lo}-{hi} in {p[i : end + 1]} (the "
                    "first character must not come after the second)."
                )
            ranges.append((lo, hi))
            k += 3
        else:
            chars.add(body[k])
            k += 1
    return _Class(negated, frozenset(chars), tuple(ranges))


# -- matching, without backtracking further than the last star --------------------------------


def _match_name(segment: _Name, name: str) -> bool:
    return segment(name)


def _match_char(token: _Token, c: str) -> bool:
    if token is None:
        return True
    if isinstance(token, str):
        return token == c
    assert isinstance(token, _Class)
    return token(c)


def _match(pattern: Sequence[Any], items: Sequence[str], one: Callable[[Any, str], bool]) -> bool:
    """Whether `items` (the characters of a name, or the names of a path) match `pattern`, whose
    STAR matches any run of items and whose other tokens each match one item (`one`). The
    two-pointer algorithm: on a mismatch, only the last STAR takes one more item."""
    p = n = 0
    star, taken = -1, 0
    while n < len(items):
        if p < len(pattern) and pattern[p] is STAR:
            star, taken = p, n
            p += 1
        elif p < len(pattern) and one(pattern[p], items[n]):
            p += 1
            n += 1
        elif star >= 0:
            taken += 1
            n = taken
            p = star + 1
        else:
            return False
    while p < len(pattern) and pattern[p] is STAR:
        p += 1
    return p == len(pattern)
