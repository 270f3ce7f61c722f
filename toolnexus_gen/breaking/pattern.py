"""Whether one `pattern` accepts every string another does, where that can be shown.

JSON Schema's `pattern` is a search (unanchored unless written `^...$`). Two patterns are compared
on a small regular subset: literals, character classes (ranges, \\d \\w \\s and their negations,
`.`), bounded or unbounded repeats of one character class, groups, alternations, and `^`/`$`.
A pattern outside it (back-references, look-arounds, flags, a repeated group that is not written
alike) is never guessed at.

- `loosened(old, new)` True: proven. Every string old matches, new matches: each of old's
  parts is taken by the part of new in the same place (a class of more characters, a repeat of
  a wider range, an alternation with the old branch among its own, an anchor dropped).
- False: a witness. A string built from old's parts that old matches and new does not (both
  checked with `re`), so a value valid before is refused now.
- None: neither could be shown (the caller says so as a possible narrowing).

A pattern is run on a string only through `search`: the `regex` engine (re's syntax and
meaning), stopped after SEARCH_SECONDS, because a spec's pattern may backtrack without end
(`^(a+)+$` on forty a's and a dash takes `re` minutes): such a pattern proves nothing.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import regex

if sys.version_info >= (3, 11):
    import re._constants as _c  # type: ignore[import-not-found,unused-ignore]
    import re._parser as _parser  # type: ignore[import-not-found,unused-ignore]
else:  # pragma: no cover
    import sre_constants as _c
    import sre_parse as _parser

UNICODE = 0x10FFFF
INFINITE = 1 << 30
MAX_ITEMS = 64  # parts of one pattern: a longer one is not compared
MAX_WITNESSES = 200
SEARCH_SECONDS = 0.05  # one search of one string (a pattern of a spec takes microseconds)
WITNESS_SECONDS = 1.0  # every search for one witness together
RUN_SECONDS = 30.0  # every search of one `breaking` run together (budget())
MAX_TEXT = 4096  # characters of a string tried (`a{1000000000}` is not spelled out)
MAX_WEIGHT = 100_000  # characters a pattern's counted repeats spell out (`(a{5000}){5000}`)

Ranges = tuple[tuple[int, int], ...]  # sorted, disjoint code point intervals


def _norm(ranges: list[tuple[int, int]]) -> Ranges:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _negate(ranges: Ranges) -> Ranges:
    out, at = [], 0
    for lo, hi in ranges:
        if lo > at:
            out.append((at, lo - 1))
        at = hi + 1
    if at <= UNICODE:
        out.append((at, UNICODE))
    return tuple(out)


def _within(small: Ranges, big: Ranges) -> bool:
    return all(any(b0 <= lo and hi <= b1 for b0, b1 in big) for lo, hi in small)


_DIGIT = _norm([(48, 57)])
_WORD = _norm([(48, 57), (65, 90), (95, 95), (97, 122)])
_SPACE = _norm(
    [(9, 13), (32, 32), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029)]
    + [(0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)]
)
_CATEGORIES = {
    _c.CATEGORY_DIGIT: _DIGIT,
    _c.CATEGORY_NOT_DIGIT: _negate(_DIGIT),
    _c.CATEGORY_WORD: _WORD,
    _c.CATEGORY_NOT_WORD: _negate(_WORD),
    _c.CATEGORY_SPACE: _SPACE,
    _c.CATEGORY_NOT_SPACE: _negate(_SPACE),
}
_ANY = _negate(_norm([(10, 10), (13, 13), (0x2028, 0x2029)]))


@dataclass(frozen=True)
class Chars:
    ranges: Ranges
    lo: int
    hi: int  # INFINITE: unbounded


@dataclass(frozen=True)
class Alt:
    branches: tuple[tuple[Item, ...], ...]


@dataclass(frozen=True)
class Group:
    body: tuple[Item, ...]
    lo: int
    hi: int


@dataclass(frozen=True)
class Anchor:
    end: bool


Item = Chars | Alt | Group | Anchor


class _Unknown(Exception):
    """Outside the subset compared."""


@lru_cache(maxsize=1024)
def _parse(pattern: str) -> tuple[Item, ...] | None:
    try:
        parsed = _parser.parse(pattern)
        if parsed.state.flags & ~(_c.SRE_FLAG_UNICODE | _c.SRE_FLAG_IGNORECASE):
            return None
        items = _items(list(parsed))
        if parsed.state.flags & _c.SRE_FLAG_IGNORECASE:
            items = _folded(items)
    except (re.error, _Unknown, RecursionError, OverflowError, ValueError, TypeError):
        return None
    return items if _size(items) <= MAX_ITEMS else None


def _size(items: tuple[Item, ...]) -> int:
    total = 0
    for item in items:
        total += 1
        if isinstance(item, Alt):
            total += sum(_size(b) for b in item.branches)
        elif isinstance(item, Group):
            total += _size(item.body)
    return total


def _charset(op: Any, av: Any) -> Ranges:
    if op is _c.LITERAL:
        return ((av, av),)
    if op is _c.NOT_LITERAL:
        return _negate(((av, av),))
    if op is _c.ANY:
        return _ANY
    if op is _c.IN:
        ranges: list[tuple[int, int]] = []
        negate = False
        for sub_op, sub_av in av:
            if sub_op is _c.NEGATE:
                negate = True
            elif sub_op is _c.LITERAL:
                ranges.append((sub_av, sub_av))
            elif sub_op is _c.RANGE:
                ranges.append(sub_av)
            elif sub_op is _c.CATEGORY and sub_av in _CATEGORIES:
                ranges += _CATEGORIES[sub_av]
            else:
                raise _Unknown
        found = _norm(ranges)
        return _negate(found) if negate else found
    raise _Unknown


_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT)}


def _items(seq: list[Any]) -> tuple[Item, ...]:
    out: list[Item] = []
    for op, av in seq:
        if op in (_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN):
            out.append(Chars(_charset(op, av), 1, 1))
        elif op is _c.AT:
            if av in (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING):
                out.append(Anchor(False))
            elif av in (_c.AT_END, _c.AT_END_STRING):
                out.append(Anchor(True))
            else:
                raise _Unknown
        elif op is _c.BRANCH:
            out.append(Alt(tuple(_items(list(b)) for b in av[1])))
        elif op is _c.SUBPATTERN:
            group_flags = av[1:3]
            if any(group_flags):
                raise _Unknown
            out += _items(list(av[3]))
        elif op in _REPEATS:
            lo, hi, body = av
            hi = INFINITE if hi == _c.MAXREPEAT else hi
            inner = _items(list(body))
            if len(inner) == 1 and isinstance(inner[0], Chars) and inner[0].lo == inner[0].hi == 1:
                out.append(Chars(inner[0].ranges, lo, hi))
            else:
                out.append(Group(inner, lo, hi))
        else:
            raise _Unknown
    return _merged(out)


def _folded(items: tuple[Item, ...]) -> tuple[Item, ...]:
    """Every class with its ASCII letters in both cases (the `i` flag)."""
    out: list[Item] = []
    for item in items:
        if isinstance(item, Chars):
            out.append(Chars(_fold(item.ranges), item.lo, item.hi))
        elif isinstance(item, Alt):
            out.append(Alt(tuple(_folded(b) for b in item.branches)))
        elif isinstance(item, Group):
            out.append(Group(_folded(item.body), item.lo, item.hi))
        else:
            out.append(item)
    return tuple(out)


def _fold(ranges: Ranges) -> Ranges:
    extra = []
    for lo, hi in ranges:
        for start, other in ((65, 97), (97, 65)):  # A-Z <-> a-z
            a, b = max(lo, start), min(hi, start + 25)
            if a <= b:
                extra.append((a - start + other, b - start + other))
    return _norm([*ranges, *extra])


def _merged(items: list[Item]) -> tuple[Item, ...]:
    """Neighbouring repeats of one class as one: \\d\\d and \\d{2} alike."""
    out: list[Item] = []
    for item in items:
        last = out[-1] if out else None
        if isinstance(item, Chars) and isinstance(last, Chars) and last.ranges == item.ranges:
            out[-1] = Chars(item.ranges, last.lo + item.lo, min(INFINITE, last.hi + item.hi))
        else:
            out.append(item)
    return tuple(out)


# -- proof ----------------------------------------------------------------------------------------


def _strip(items: tuple[Item, ...]) -> tuple[bool, bool, tuple[Item, ...]]:
    start = bool(items) and items[0] == Anchor(False)
    end = len(items) > int(start) and items[-1] == Anchor(True)
    return start, end, items[int(start) : len(items) - int(end)]


def _proven(old: tuple[Item, ...], new: tuple[Item, ...]) -> bool:
    old_start, old_end, old_body = _strip(old)
    new_start, new_end, new_body = _strip(new)
    if (new_start and not old_start) or (new_end and not old_end):
        return False  # new anchors what old did not
    if any(isinstance(i, Anchor) for i in (*old_body, *new_body)):
        return False
    # a search: where new is not anchored, its match may start (or end) at any of old's parts
    # (`^ab` -> `^a`, `abc` -> `bc`): the rest of old's match is text around new's
    starts = range(len(old_body) + 1) if not new_start else range(1)
    return any(_seq(old_body[i:], new_body, free_end=not new_end) for i in starts)


def _seq(old: tuple[Item, ...], new: tuple[Item, ...], free_end: bool = False) -> bool:
    @cache
    def go(i: int, j: int) -> bool:
        if i == len(old):
            return all(_optional(item) for item in new[j:])
        if j == len(new):
            return free_end
        if _item(old[i], new[j]) and go(i + 1, j + 1):
            return True
        return _optional(new[j]) and go(i, j + 1)

    if len(old) == 1 and isinstance(old[0], Alt):
        if all(_seq(branch, new) for branch in old[0].branches):
            return True
    if len(new) == 1 and isinstance(new[0], Alt):
        if any(_seq(old, branch) for branch in new[0].branches):
            return True
    return go(0, 0)


def _optional(item: Item) -> bool:
    return isinstance(item, (Chars, Group)) and item.lo == 0


def _item(old: Item, new: Item) -> bool:
    if isinstance(old, Chars) and isinstance(new, Chars):
        return _within(old.ranges, new.ranges) and new.lo <= old.lo and old.hi <= new.hi
    if isinstance(old, Group) and isinstance(new, Group):
        return _seq(old.body, new.body) and new.lo <= old.lo and old.hi <= new.hi
    if isinstance(new, Alt):
        if isinstance(old, Alt):
            return all(any(_seq(b, n) for n in new.branches) for b in old.branches)
        return any(_seq((old,), n) for n in new.branches)
    if isinstance(old, Alt):
        return all(_seq(b, (new,)) for b in old.branches)
    return old == new


# -- witnesses ------------------------------------------------------------------------------------


def _samples(ranges: Ranges, hints: str = "") -> list[str]:
    """A few characters of a class: those of `hints` it holds (the other pattern's own
    characters, where a difference is likely), then each interval's ends, printable first."""
    found: list[int] = [ord(c) for c in hints if any(lo <= ord(c) <= hi for lo, hi in ranges)][:4]
    for lo, hi in ranges:
        for point in (lo, hi, (lo + hi) // 2):
            if point not in found:
                found.append(point)
    printable = [p for p in found if 32 < p < 127]
    return [chr(p) for p in (printable + [p for p in found if p not in printable])[:8]]


def _counts(lo: int, hi: int, width: int = 1) -> list[int]:
    """How many times a part of `width` characters is repeated in strings tried (none that
    would make a string over MAX_TEXT)."""
    top = hi if hi < INFINITE else lo + 3
    counts = {lo, min(top, lo + 1), min(top, 40), top} - {-1}
    return sorted(n for n in counts if n * width <= MAX_TEXT)


def _options(item: Item, hints: str = "") -> list[str]:
    """Strings one part matches (a few)."""
    if isinstance(item, Anchor):
        return [""]
    if isinstance(item, Chars):
        chars = _samples(item.ranges, hints)
        if not chars:
            return []
        return [c * n for n in _counts(item.lo, item.hi) for c in chars]
    if isinstance(item, Group):
        body = _strings(item.body, hints)[:4]
        return [s * n for s in body for n in _counts(item.lo, item.hi, max(len(s), 1))]
    return [s for branch in item.branches for s in _strings(branch, hints)]


def _strings(items: tuple[Item, ...], hints: str = "") -> list[str]:
    """Strings the parts match together: each part's first option, then one part varied."""
    options = [_options(item, hints) for item in items]
    if any(not o for o in options):
        return []
    base = [o[0] for o in options]
    length = sum(map(len, base))
    if length > MAX_TEXT:
        return []
    found = ["".join(base)]
    for i, opts in enumerate(options):
        for choice in opts[1:]:
            if length - len(base[i]) + len(choice) > MAX_TEXT:
                continue
            found.append("".join([*base[:i], choice, *base[i + 1 :]]))
            if len(found) >= MAX_WITNESSES:
                return found
    return found


class Slow(Exception):
    """A pattern ran past its time on one string (it backtracks without end): nothing is
    concluded from it."""


@lru_cache(maxsize=1024)
def _engine(pattern: str) -> regex.Pattern[str] | None:
    """The pattern for `regex` (None: its counted repeats spell out more than MAX_WEIGHT
    characters, which `regex` unrolls into gigabytes); re.error: `re` refuses it."""
    re.compile(pattern)  # what `re` refuses stays refused
    if _weight(list(_parser.parse(pattern))) > MAX_WEIGHT:
        return None
    try:
        return regex.compile(pattern)
    except regex.error as error:
        raise re.error(str(error)) from None


def _weight(seq: list[Any]) -> int:
    """About how many characters a parsed pattern's repeats spell out (bounded: it stops past
    MAX_WEIGHT)."""
    total = 0
    for op, av in seq:
        if op in _REPEATS:
            lo, hi, body = av
            total += max(1, lo if hi == _c.MAXREPEAT else hi) * _weight(list(body))
        elif op is _c.BRANCH:
            total += sum(_weight(list(b)) for b in av[1])
        elif op is _c.SUBPATTERN:
            total += _weight(list(av[3]))
        elif op in (_c.ASSERT, _c.ASSERT_NOT):
            total += _weight(list(av[1]))
        elif op is getattr(_c, "ATOMIC_GROUP", None):
            total += _weight(list(av))
        elif op is _c.GROUPREF_EXISTS:
            total += sum(_weight(list(b)) for b in av[1:] if b is not None)
        else:
            total += 1
        if total > MAX_WEIGHT:
            return total
    return total


_LEFT: ContextVar[list[float] | None] = ContextVar("pattern_seconds_left", default=None)


@contextmanager
def budget(seconds: float = RUN_SECONDS) -> Iterator[None]:
    """Every search inside shares `seconds`; once spent, each raises Slow. Many patterns that
    each stay just under SEARCH_SECONDS (a oneOf of 24 such branches, in each of many tools)
    still end."""
    token = _LEFT.set([seconds])
    try:
        yield
    finally:
        _LEFT.reset(token)


def search(pattern: str, text: str, seconds: float = SEARCH_SECONDS) -> bool:
    """Whether `pattern` matches somewhere in `text`, as `re.search` says, within `seconds`
    (else Slow). re.error, RecursionError or OverflowError: a pattern that cannot be read."""
    left = _LEFT.get()
    if left is not None:
        if left[0] <= 0:
            raise Slow(pattern)
        seconds = min(seconds, left[0])
    engine = _engine(pattern)
    if engine is None:
        raise Slow(pattern)
    start = time.monotonic()
    try:
        return engine.search(text, timeout=max(seconds, 0.001)) is not None
    except TimeoutError:
        raise Slow(pattern) from None
    finally:
        if left is not None:
            left[0] -= time.monotonic() - start


def _witness(old: str, items: tuple[Item, ...], new: str) -> str | None:
    start, end, _ = _strip(items)
    # the new pattern's letters and digits: a part it refuses often names them (a look-behind,
    # a literal), and the old pattern's class may hold them
    hints = "".join(dict.fromkeys(c for c in new if c.isalnum()))
    deadline = time.monotonic() + WITNESS_SECONDS
    try:
        for core in _strings(items, hints):
            # an unanchored side may have anything around it: a value with more is valid too
            for text in (core, *(f"{'' if start else c}{core}{'' if end else c}" for c in "-a0")):
                left = min(SEARCH_SECONDS, deadline - time.monotonic())
                if left <= 0:
                    return None
                if search(old, text, left) and not search(new, text, left):
                    return text
    except (Slow, re.error, RecursionError, OverflowError):
        return None
    return None


def loosened(old: str, new: str) -> tuple[bool | None, str | None]:
    """(True: new takes every string old does; False: not, with a witness; None: unknown)."""
    before, after = _parse(old), _parse(new)
    if before is None:
        return None, None
    if after is not None and _proven(before, after):
        return True, None
    witness = _witness(old, before, new)
    if witness is not None:
        return False, witness
    return None, None


def strings(pattern: str) -> list[str]:
    """A few strings a pattern matches (none when it is outside the subset read)."""
    items = _parse(pattern)
    return _strings(items) if items is not None else []
