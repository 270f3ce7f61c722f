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
    ascii_only = text.isascii() and not _SEPARATORS.search(text)
    total = 0.0
    for piece in (_PIECE_ASCII if ascii_only else _PIECE).findall(text):
        last = piece[-1]
        if last.isalpha():
            letters = len(piece) if piece[0].isalpha() else len(piece) - 1
            total += 1 if letters <= WORD_TOKEN else 1 + (letters - WORD_TOKEN) / WORD_TOKEN
        elif last.isdigit() or last.isspace() or last == "_":
            total += 1
        else:
            marks = len(piece.strip())
            total += 1 if marks <= MARKS_TOKEN else marks / MARKS_TOKEN
    return round(total)


def estimate(entry: Any) -> int:
    """Estimated tokens of one tool entry, sent as compact JSON."""
    return estimate_text(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
