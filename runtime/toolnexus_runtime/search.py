"""Deferred loading where the provider has no tool search (OpenAI Chat, Gemini, Bedrock): the
loops send the loaded tools plus a `search_tools` function over the checked-in catalogue
(`schemas/tools.json`: names and descriptions); the tools a search finds join the request from
the next turn on. Ranking is BM25 over each tool's name parts and description.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

NAME = "search_tools"
DESCRIPTION = (
    "Search the catalogue of further tools by keywords (what you want to do). The tools found "
    "are listed with their descriptions and become callable from your next turn."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Keywords describing the tool you need"},
        "limit": {"type": "integer", "description": "At most this many tools (default 5)"},
    },
    "required": ["query"],
    "additionalProperties": False,
}
TARGETS = ("openai", "gemini", "bedrock")  # the others search provider-side, or are no request
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower())


class Catalogue:
    """BM25 (k1 1.2, b 0.75) over deferred tools' names and descriptions."""

    def __init__(self, tools: Mapping[str, str]) -> None:  # name -> description
        self.docs = {name: Counter(_words(name) * 2 + _words(text)) for name, text in tools.items()}
        self.descriptions = dict(tools)
        lengths = [sum(doc.values()) for doc in self.docs.values()]
        self.average = sum(lengths) / len(lengths) if lengths else 1.0
        seen: Counter[str] = Counter()
        for doc in self.docs.values():
            seen.update(doc.keys())
        n = len(self.docs)
        self.idf = {word: math.log(1 + (n - k + 0.5) / (k + 0.5)) for word, k in seen.items()}

    def search(self, query: str, limit: int = 5, among: Sequence[str] | None = None) -> list[str]:
        words = _words(query)
        scored = []
        for name, doc in self.docs.items():
            if among is not None and name not in among:
                continue
            length = sum(doc.values())
            score = 0.0
            for word in words:
                f = doc.get(word, 0)
                if f:
                    score += (
                        self.idf[word] * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length / self.average))
                    )
            if score > 0:
                scored.append((-score, name))
        return [name for _, name in sorted(scored)[: max(1, limit)]]


def arguments(raw: Any) -> tuple[str, int]:
    """(query, limit) of a search_tools call, however the provider sent its arguments."""
    if isinstance(raw, (str, bytes, bytearray)):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            raw = {}
    if not isinstance(raw, Mapping):
        raw = {}
    query = raw.get("query")
    limit = raw.get("limit")
    return (
        query if isinstance(query, str) else "",
        limit if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit <= 20 else 5,
    )


def found_text(found: Sequence[str], descriptions: Mapping[str, str]) -> str:
    if not found:
        return "No tool matched. Try other keywords."
    lines = [f"- {name}: {descriptions.get(name, '')}".rstrip() for name in found]
    return "These tools are now loaded and callable from your next turn:\n" + "\n".join(lines)


def add_search_tool(target: str, schemas: Any) -> Any:
    """The loop's tools (as the provider's Conversation keeps them) with search_tools added."""
    if target == "openai":
        entry = {
            "type": "function",
            "function": {"name": NAME, "description": DESCRIPTION, "parameters": PARAMETERS},
        }
        return [*schemas, entry]
    if target == "bedrock":
        return [
            *schemas,
            {
                "toolSpec": {
                    "name": NAME,
                    "description": DESCRIPTION,
                    "inputSchema": {"json": PARAMETERS},
                }
            },
        ]
    if target == "gemini":
        # Gemini's parameters reject additionalProperties
        parameters = {k: v for k, v in PARAMETERS.items() if k != "additionalProperties"}
        declaration = {"name": NAME, "description": DESCRIPTION, "parameters": parameters}
        out = [dict(wrapper) for wrapper in schemas]
        for wrapper in out:
            if "functionDeclarations" in wrapper:
                wrapper["functionDeclarations"] = [*wrapper["functionDeclarations"], declaration]
                return out
        return [{"functionDeclarations": [declaration]}, *out]
    raise ValueError(f"{target} has no client-side tool search")
