"""Settings for many tools, from `[tool.toolnexus-gen]`: toolsets, token budgets, the tool search
tool and hosted (provider-executed) tools. Read with the rest of the configuration; whatever needs
the specs (an unknown group, a toolset over a limit) is checked by the whole-set stage
(pipeline/toolsets.py), located here in pyproject.toml.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolnexus_gen.targets.registry import NAMES

TOOL_SEARCH = ("bm25", "regex")
TOOLSET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
TOOLSET_KEYS = ("groups", "tools", "max_tool_tokens")
# Targets whose requests carry provider-executed tools beside functions.
HOSTED_TARGETS = ("gemini", "openai_responses", "anthropic")
# Why the others cannot (TN465).
NO_HOSTED = {
    "openai": "Chat Completions takes only function and custom tools (web search there is "
    "web_search_options on search models); use openai_responses",
    "bedrock": "Bedrock Converse takes toolSpec, systemTool (Nova) and cachePoint only, and "
    "no Anthropic server tool",
    "mcp": "an MCP server lists its own tools; provider-executed tools run at the provider",
}
# `name = true`: each provider's own entry for a well-known hosted tool.
KNOWN_HOSTED: dict[str, dict[str, Any]] = {
    "web_search": {
        "anthropic": {"type": "web_search_20250305", "name": "web_search"},
        "openai_responses": {"type": "web_search"},
        "gemini": {"googleSearch": {}},
    },
    "code_execution": {
        "anthropic": {"type": "code_execution_20250825", "name": "code_execution"},
        "openai_responses": {"type": "code_interpreter", "container": {"type": "auto"}},
        "gemini": {"codeExecution": {}},
    },
    "url_context": {
        "anthropic": {"type": "web_fetch_20250910", "name": "web_fetch"},
        "gemini": {"urlContext": {}},
    },
}


@dataclass(frozen=True)
class Toolset:
    """A named subset: the tools of its groups plus the tools it names."""

    name: str
    groups: tuple[str, ...]
    tools: tuple[str, ...]
    max_tool_tokens: int | None
    display: str  # pyproject.toml, as diagnostics show it
    place: tuple[int, int]  # where the toolset is defined
    # (line, col) of each group and tool it names, by ("groups" | "tools", value)
    places: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict, compare=False)

    def at(self, kind: str, value: str) -> tuple[int, int]:
        return self.places.get((kind, value), self.place)


@dataclass(frozen=True)
class Hosted:
    """A provider-executed tool: each target's own entry for it."""

    name: str
    entries: dict[str, Any]  # target -> the provider's entry, as sent
    display: str
    place: tuple[int, int]
    known: bool = False  # `name = true`: meant for every target (those that cannot are errors)
    only: tuple[str, ...] | None = None  # targets = {only = [...]}
    exclude: tuple[str, ...] = ()  # targets = {exclude = [...]}: kept from these targets

    def allows(self, target: str) -> bool:
        """Whether the declaration lets the tool go to `target` (its `targets` table)."""
        return target not in self.exclude and (self.only is None or target in self.only)

    def sent_to(self, target: str) -> bool:
        return target in self.entries and self.allows(target)


@dataclass(frozen=True)
class Many:
    toolsets: tuple[Toolset, ...] = ()
    hosted: tuple[Hosted, ...] = ()
    max_tool_tokens: int | None = None
    tool_search: str = "bm25"
    display: str = "pyproject.toml"
    budget_place: tuple[int, int] = (1, 1)  # of the global max_tool_tokens

    def key(self) -> Any:
        """What the build's outputs and diagnostics depend on (for the build key)."""
        return [
            [[t.name, t.groups, t.tools, t.max_tool_tokens, t.place] for t in self.toolsets],
            [[h.name, h.entries, h.place, h.known, h.only, h.exclude] for h in self.hosted],
            self.max_tool_tokens,
            self.tool_search,
            self.budget_place,
            sorted((k, v) for t in self.toolsets for k, v in t.places.items()),
        ]


Bad = Callable[[tuple[int, int], str, str], None]  # (place, code, message)


def read_many(section: dict[str, Any], text: str, display: str, bad: Bad) -> Many:
    """The many-tools settings of [tool.toolnexus-gen]; each problem reported through `bad`."""
    where = Locator(text)
    budget = section.get("max_tool_tokens")
    if budget is not None and not _count(budget):
        bad(
            where.key("", "max_tool_tokens"),
            "TN802",
            f"max_tool_tokens must be a positive integer, not {budget!r}",
        )
        budget = None
    search = section.get("tool_search", "bm25")
    if search not in TOOL_SEARCH:
        bad(
            where.key("", "tool_search"),
            "TN802",
            f"tool_search must be one of {', '.join(map(repr, TOOL_SEARCH))}, not {search!r}",
        )
        search = "bm25"
    toolsets = _toolsets(section.get("toolsets"), where, display, bad)
    hosted = _hosted(section.get("hosted"), where, display, bad)
    return Many(toolsets, hosted, budget, search, display, where.key("", "max_tool_tokens"))


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _toolsets(value: Any, where: Locator, display: str, bad: Bad) -> tuple[Toolset, ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        bad(where.key("", "toolsets"), "TN802", "toolsets must be a table of toolsets")
        return ()
    found = []
    for name, body in value.items():
        place = where.entry("toolsets", name)
        if not TOOLSET_NAME.fullmatch(name):
            bad(place, "TN802", f"toolset name {name!r}: use letters, digits, _ and - (at most 64)")
            continue
        if not isinstance(body, dict):
            bad(place, "TN802", f"toolset {name!r} must be a table (groups = [...], tools = [...])")
            continue
        unknown = [key for key in body if key not in TOOLSET_KEYS]
        for key in unknown:
            bad(
                where.inside(place, key),
                "TN802",
                f"toolset {name!r}: unknown key {key!r} (known: {', '.join(TOOLSET_KEYS)})",
            )
        groups, tools = body.get("groups", []), body.get("tools", [])
        budget = body.get("max_tool_tokens")
        ok = not unknown
        for key, listed in (("groups", groups), ("tools", tools)):
            if not _strings(listed):
                bad(
                    where.inside(place, key),
                    "TN802",
                    f"toolset {name!r}: {key} must be a list of strings",
                )
                ok = False
        if budget is not None and not _count(budget):
            bad(
                where.inside(place, "max_tool_tokens"),
                "TN802",
                f"toolset {name!r}: max_tool_tokens must be a positive integer, not {budget!r}",
            )
            ok = False
        if ok and not groups and not tools:
            bad(place, "TN802", f"toolset {name!r} names no group and no tool")
            ok = False
        if not ok:
            continue
        places = {}
        if budget is not None:
            places[("max_tool_tokens", "")] = where.inside(place, "max_tool_tokens")
        for key, listed in (("groups", groups), ("tools", tools)):
            start = where.inside(place, key)
            for item in listed:
                places[(key, item)] = where.string(start, item)
        found.append(Toolset(name, tuple(groups), tuple(tools), budget, display, place, places))
    return tuple(found)


def _hosted(value: Any, where: Locator, display: str, bad: Bad) -> tuple[Hosted, ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        bad(where.key("", "hosted"), "TN802", "hosted must be a table of hosted tools")
        return ()
    found = []
    for name, body in value.items():
        place = where.entry("hosted", name)
        if body is True and name in KNOWN_HOSTED:
            found.append(Hosted(name, dict(KNOWN_HOSTED[name]), display, place, known=True))
            continue
        if not isinstance(body, dict) or not body:
            known = ", ".join(KNOWN_HOSTED)
            bad(
                place,
                "TN802",
                f"hosted tool {name!r} must be a table of each provider's own entry "
                f"({{anthropic = {{...}}, openai_responses = {{...}}, gemini = {{...}}}}), or true "
                f"for one of {known}",
            )
            continue
        entries = dict(body)
        chosen = entries.pop("targets", None)
        ok = True
        only: tuple[str, ...] | None = None
        exclude: tuple[str, ...] = ()
        if chosen is not None:
            limits = _targets(chosen, name, where.inside(place, "targets"), bad)
            ok = limits is not None
            only, exclude = limits or (None, ())
        implied = not entries  # only a targets table: the well-known tool's own entries
        if implied and name not in KNOWN_HOSTED:
            bad(
                place,
                "TN802",
                f"hosted tool {name!r} has a targets table but no entry: give each provider's own "
                f"entry, or use one of {', '.join(KNOWN_HOSTED)}",
            )
            continue
        for target, entry in entries.items():
            at = where.inside(place, target)
            if target in NO_HOSTED:
                bad(
                    at,
                    "TN465",
                    f"hosted tool {name!r}: {target} cannot carry it: {NO_HOSTED[target]}",
                )
                ok = False
            elif target not in HOSTED_TARGETS:
                bad(
                    at,
                    "TN802",
                    f"hosted tool {name!r}: unknown target {target!r} (known: {', '.join(NAMES)})",
                )
                ok = False
            else:
                problem = _entry_problem(target, entry)
                if problem:
                    bad(at, "TN802", f"hosted tool {name!r}: {target}: {problem}")
                    ok = False
        if ok:
            given = dict(KNOWN_HOSTED[name]) if implied else entries
            found.append(Hosted(name, given, display, place, implied, only, exclude))
    return tuple(found)


def _targets(
    value: Any, name: str, at: tuple[int, int], bad: Bad
) -> tuple[tuple[str, ...] | None, tuple[str, ...]] | None:
    """(only, exclude) of a hosted tool's `targets = {only = [...], exclude = [...]}`, as a
    spec's `targets` says it; None (reported) when malformed."""
    shape = "targets = {exclude = [...]} or {only = [...]}, lists of target names"
    if not isinstance(value, dict) or not value or set(value) - {"only", "exclude"}:
        bad(at, "TN802", f"hosted tool {name!r}: {shape}")
        return None
    for key, listed in value.items():
        unknown = [t for t in listed if t not in NAMES] if _strings(listed) else None
        if unknown is None or unknown:
            what = f"unknown target {unknown[0]!r}" if unknown else f"{key} must be a list"
            bad(at, "TN802", f"hosted tool {name!r}: targets: {what} (known: {', '.join(NAMES)})")
            return None
    only = value.get("only")
    return (tuple(only) if only is not None else None), tuple(value.get("exclude", ()))


def _entry_problem(target: str, entry: Any) -> str:
    """What is wrong with a provider's hosted-tool entry, in the shape that provider takes."""
    if not isinstance(entry, dict):
        return "the entry must be a table, the provider's own tool object"
    if target == "gemini":
        if len(entry) != 1 or next(iter(entry)) in (
            "functionDeclarations",
            "function_declarations",
        ):
            return "one built-in tool per entry, as Gemini names it (googleSearch = {}, urlContext = {}, codeExecution = {}, ...)"
    elif target == "anthropic":
        if not isinstance(entry.get("type"), str) or not isinstance(entry.get("name"), str):
            return 'an Anthropic server tool has a versioned "type" and its fixed "name" (type = "web_search_20250305", name = "web_search")'
        if entry["type"] == "custom":
            return "a custom tool is a spec, not a hosted tool"
    elif not isinstance(entry.get("type"), str) or entry["type"] in ("function", "namespace"):
        return 'a Responses hosted tool has its "type" (web_search, file_search, code_interpreter, ...); functions are specs'
    return ""


class Locator:
    """Where keys and values of [tool.toolnexus-gen] stand in pyproject.toml (tomllib keeps no
    positions): 1-based (line, col), best effort, never failing."""

    HEADER = re.compile(
        r'^[ \t]*\[[ \t]*tool\.(?:"toolnexus-gen"|toolnexus-gen)((?:\.[\w"\'-]+)*)[ \t]*\]', re.M
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None  # where each line starts, once asked
        self.tables = [
            (m.group(1).replace('"', "").replace("'", ""), m.start(), m.end())
            for m in self.HEADER.finditer(text)
        ]

    def _span(self, table: str) -> tuple[int, int] | None:
        """The text of [tool.toolnexus-gen<table>] (table "" or ".toolsets")."""
        for name, _, end in self.tables:
            if name == table:
                rest = re.compile(r"^[ \t]*\[", re.M).search(self.text, end)
                return end, rest.start() if rest else len(self.text)
        return None

    def _line_starts(self) -> list[int]:
        if self._starts is None:
            starts, at = [0], self.text.find("\n")
            while at >= 0:
                starts.append(at + 1)
                at = self.text.find("\n", at + 1)
            self._starts = starts
        return self._starts

    def position(self, offset: int) -> tuple[int, int]:
        # a line's start found by bisection: a pyproject.toml with toolsets of thousands of
        # tools is asked for each tool's place
        starts = self._line_starts()
        line = bisect_right(starts, max(offset, 0))
        return line, offset - starts[line - 1] + 1

    def _key_offset(self, start: int, end: int, key: str) -> int | None:
        found = re.compile(rf'^[ \t]*["\']?{re.escape(key)}["\']?[ \t]*=', re.M).search(
            self.text, start, end
        )
        return found.start() + len(found.group(0)) - len(found.group(0).lstrip()) if found else None

    def key(self, table: str, key: str) -> tuple[int, int]:
        span = self._span(table)
        at = self._key_offset(*span, key) if span else None
        return self.position(at) if at is not None else (1, 1)

    def entry(self, table: str, name: str) -> tuple[int, int]:
        """An entry of [tool.toolnexus-gen.<table>]: `name = {...}` there, or its own header."""
        span = self._span(f".{table}")
        at = self._key_offset(*span, name) if span else None
        if at is None:
            for header, start, _ in self.tables:
                if header == f".{table}.{name}":
                    return self.position(start)
            return self.key("", table)
        return self.position(at)

    def _offset(self, place: tuple[int, int]) -> int:
        line, col = place
        starts = self._line_starts()
        if 1 <= line <= len(starts):
            return starts[line - 1] + col - 1
        offset = 0
        for _ in range(line - 1):
            offset = self.text.find("\n", offset) + 1
        return offset + col - 1

    def inside(self, place: tuple[int, int], key: str) -> tuple[int, int]:
        """`key` of the table that starts at `place` (inline or under its own header)."""
        start = self._offset(place)
        found = re.compile(rf'(?:^|[{{,])[ \t]*["\']?{re.escape(key)}["\']?[ \t]*=', re.M).search(
            self.text, start
        )
        if found is None:
            return place
        return self.position(
            found.start() + len(found.group(0)) - len(found.group(0).lstrip(" \t{,"))
        )

    def string(self, place: tuple[int, int], value: str) -> tuple[int, int]:
        """The first quoted `value` at or after `place`."""
        start = self._offset(place)
        found = [at for q in "\"'" if (at := self.text.find(f"{q}{value}{q}", start)) >= 0]
        return self.position(min(found)) if found else place
