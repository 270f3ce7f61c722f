"""Token estimates of tool definitions, offline: no tokenizer, no network (docs: Many tools, Token budgets).

The text is split the way OpenAI's o200k_base pre-tokenizer splits it (letter runs with one
leading mark, digits by threes, punctuation runs, whitespace), and each piece is costed by its
length: a letter run of up to 8 letters is one token (most words and JSON Schema keywords are one
token in a 200k vocabulary), a longer one a token more per 8 letters; a punctuation run one token
per 3 marks. Calibrated on this repository's example and synthetic specs; measured on the seven
MCP servers' tools (tests/fixtures/mcp) against o200k_base itself: see tests/test_many_budget.py.

A tool costs what its entry in a target's file costs, as compact JSON (what SDKs send). Providers
render definitions into their own prompt format, so the figure is an estimate of the definitions,
plus each provider's documented fixed overhead (OVERHEAD).
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable
from itertools import accumulate, chain
from typing import Any

_PIECE = re.compile(r"[^\r\n\w]?[^\W\d_]+|\d{1,3}| ?[^\s\w]+[\r\n]*|\s+|_+")
WORD_TOKEN = 8  # letters one token covers
MARKS_TOKEN = 3  # punctuation marks one token covers

# Tokens a request pays once whenever it carries tools, as the provider documents them:
# Anthropic's tool-use system prompt (Claude 4.x, tool_choice auto or none).
OVERHEAD = {"anthropic": 346}


# The same pieces in ASCII text, found faster: \w, \d and \s match the same ASCII characters
# either way but the separators \x1c-\x1f, which only Unicode's \s matches.
_PIECE_ASCII = re.compile(_PIECE.pattern, re.ASCII)
_SEPARATORS = re.compile(r"[\x1c-\x1f]")


def estimate_text(text: str) -> int:
    """Estimated o200k_base tokens of a text."""
    if len(text) > _LONG:
        return round(_streamed(text))
    costs: Iterable[float] = chain.from_iterable(map(_PART_COSTS.__getitem__, _CUT.split(text)))
    # the running sum's last value: the costs added one by one in order, as a loop adds them
    return round(deque(accumulate(costs, initial=0.0), maxlen=1)[0])


# A text's pieces are the pieces of its parts when it is cut right after each `,"` followed by a
# word character: the punctuation run holding that `,` ends there (a letter run takes one mark
# before it only when a letter follows the mark). Compact JSON is cut so at each key: the parts
# a definition shares with another (and with itself at another revision) are cut into pieces and
# costed once, and the pieces' costs are added in the same order as the whole text's. A `,"`
# before anything else (`,"$ref"`, `,"@odata.type"`) is no cut: its run goes on.
_CUT = re.compile(r'(?<=,")(?=\w)')
_MOST_PARTS = 1 << 16


def _costs(text: str) -> tuple[float, ...]:
    """The cost of each piece of a text, in order."""
    ascii_only = text.isascii() and not _SEPARATORS.search(text)
    return tuple(map(_piece_cost, (_PIECE_ASCII if ascii_only else _PIECE).findall(text)))


# A text longer than this is costed piece by piece as its pieces are found, in memory bounded
# by the longest piece (a list of every piece, or the cache of parts, would hold it many times).
_LONG = 1 << 20


def _streamed(text: str) -> float:
    """The sum of a text's pieces' costs, added in order (as estimate_text adds them)."""
    ascii_only = text.isascii() and not _SEPARATORS.search(text)
    total = 0.0
    for found in (_PIECE_ASCII if ascii_only else _PIECE).finditer(text):
        total += _piece_cost(found.group())
    return total


def _piece_cost(piece: str) -> float:
    last = piece[-1]
    if last.isalpha():
        letters = len(piece) if piece[0].isalpha() else len(piece) - 1
        return 1 if letters <= WORD_TOKEN else 1 + (letters - WORD_TOKEN) / WORD_TOKEN
    if last.isdigit() or last.isspace() or last == "_":
        return 1
    marks = len(piece.strip())
    return 1 if marks <= MARKS_TOKEN else marks / MARKS_TOKEN


class _Costs(dict[str, tuple[float, ...]]):
    """The pieces' costs of each part seen (a part ending at a cut, or the last part)."""

    def __missing__(self, part: str) -> tuple[float, ...]:
        if len(self) >= _MOST_PARTS:
            self.clear()
        found = self[part] = _costs(part)
        return found


_PART_COSTS = _Costs()


def estimate(entry: Any) -> int:
    """Estimated tokens of one tool entry, sent as compact JSON."""
    return estimate_text(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
