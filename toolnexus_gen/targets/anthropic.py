"""Anthropic Messages: `[{name, description, input_schema, input_examples?, strict?}]`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.ir import Located, Tool, ToolInfo
from toolnexus_gen.targets import openai, rules
from toolnexus_gen.targets.base import NameRule, Target, input_schema
from toolnexus_gen.targets.reading import Imported, add_spec, leftovers, require, tool_list
from toolnexus_gen.toolspec.bundle import first_cycle, walk
from toolnexus_gen.toolspec.pointer import join_pointer

NAME = "anthropic"
FILE = "schemas/anthropic.json"
NAME_RULE = NameRule(
    r"[a-zA-Z0-9_-]{1,128}", "String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
)
MAX_STRICT_TOOLS, MAX_OPTIONAL, MAX_UNIONS = 20, 24, 16


def document(entries: list[Any]) -> Any:
    return entries


def entry(tool: Tool, schema: dict[str, Any] | None, options: dict[str, Any]) -> Any:
    result: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "input_schema": input_schema(schema),
    }
    if tool.examples:
        result["input_examples"] = list(tool.examples)
    if tool.strict is not None:
        result["strict"] = tool.strict
    if tool.defer_loading:
        result["defer_loading"] = True
    return result


# The tool search tool (tool_search = "bm25" | "regex") the file gains when a tool is deferred.
SEARCH_TOOLS = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}


def search_tool(mode: str) -> dict[str, Any]:
    return dict(SEARCH_TOOLS[mode])


def must_inline(options: dict[str, Any]) -> bool:
    return False


def check(tool: Tool, located: Located | None, options: dict[str, Any]) -> list[Diagnostic]:
    found = NAME_RULE.check(tool, NAME, "TN203")
    if tool.defer_loading and tool.examples:
        found.append(
            rules.at_tool(
                tool,
                "TN464",
                NAME,
                "a deferred tool cannot carry input_examples (tool search does not work with "
                "them); remove examples, drop defer_loading, or exclude anthropic for this tool",
                key="examples",
            )
        )
    if located is not None:
        found += findings(located, NAME)
        if tool.strict:
            found += strict_findings(located, NAME)
            recursive = first_recursive_ref(located)
            if recursive is not None:
                pointer, loop = recursive
                found.append(
                    rules.finding(
                        located,
                        pointer,
                        "$ref",
                        "TN352",
                        NAME,
                        f"recursive schemas are not supported in strict mode ({loop})",
                    )
                )
    return found


def check_all(tools: list[ToolInfo], options: dict[str, Any]) -> list[Diagnostic]:
    """The per-request strict limits over the entries that go out strict (as emitted)."""
    strict = [tool for tool in tools if tool.strict_cost(NAME) is not None]
    found = []
    if len(strict) > MAX_STRICT_TOOLS:
        found.append(
            rules.at_tool(
                strict[MAX_STRICT_TOOLS],
                "TN355",
                NAME,
                f"{len(strict)} strict tools; a request takes at most {MAX_STRICT_TOOLS}",
                key="strict",
            )
        )
    optional = unions = 0
    for tool in strict:
        cost = tool.strict_cost(NAME) or (0, 0)
        optional, unions = optional + cost[0], unions + cost[1]
        if optional > MAX_OPTIONAL or unions > MAX_UNIONS:
            found.append(
                rules.at_tool(
                    tool,
                    "TN355",
                    NAME,
                    f"strict tools up to this one have {optional} optional and {unions} union "
                    f"parameters; a request allows {MAX_OPTIONAL} and {MAX_UNIONS}",
                    key="strict",
                )
            )
            break
    return found


# -- the rules (catalogued in rules.py), on the schema as this target emits it -----------------

PROPERTY = re.compile(r"[a-zA-Z0-9_.-]{1,64}")
PROPERTY_RULE = NameRule(
    PROPERTY.pattern, "Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'"
)
STRICT_FORMATS = openai.STRICT_FORMATS | {"uri"}
UNSUPPORTED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
)
REGEX_FEATURES = re.compile(r"\\[1-9]|\(\?<?[=!]|\\b|\\k<")


def findings(located: Located, target: str) -> Iterable[Diagnostic]:
    yield from rules.root_combinators(located, target, ("anyOf", "oneOf", "allOf"))
    for pointer, node, _ in walk(located):
        for name in node.get("properties") or {}:
            if not PROPERTY.fullmatch(name):
                yield rules.finding(
                    located,
                    join_pointer(pointer + "/properties", name),
                    None,
                    "TN301",
                    target,
                    f"property key {name!r} is rejected (Property keys should match pattern "
                    "'^[a-zA-Z0-9_.-]{1,64}$')",
                )


def strict_findings(located: Located, target: str) -> Iterable[Diagnostic]:
    for pointer, node, _ in walk(located):
        if rules.is_object(node) and node.get("additionalProperties") is not False:
            yield rules.finding(
                located,
                pointer,
                "additionalProperties" if "additionalProperties" in node else None,
                "TN350",
                target,
                "For 'object' type, 'additionalProperties' must be explicitly set to false",
            )
        for keyword in UNSUPPORTED:
            if keyword in node:
                yield rules.finding(
                    located,
                    pointer,
                    keyword,
                    "TN351",
                    target,
                    f"{keyword!r} is not supported in strict mode",
                )
        min_items = node.get("minItems")
        if isinstance(min_items, int) and min_items > 1:
            yield rules.finding(
                located,
                pointer,
                "minItems",
                "TN351",
                target,
                f"minItems {min_items} is not supported in strict mode (only 0 or 1)",
            )
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in STRICT_FORMATS:
            yield rules.finding(
                located,
                pointer,
                "format",
                "TN353",
                target,
                f"format {fmt!r} is not supported in strict mode",
            )
        if isinstance(node.get("enum"), list) and any(
            isinstance(v, (dict, list)) for v in node["enum"]
        ):
            yield rules.finding(
                located,
                pointer,
                "enum",
                "TN354",
                target,
                "enum members must be primitives in strict mode",
            )
        pattern = node.get("pattern")
        if isinstance(pattern, str) and REGEX_FEATURES.search(pattern):
            yield rules.finding(
                located,
                pointer,
                "pattern",
                "TN356",
                target,
                f"pattern {pattern!r} uses a backreference, lookaround or \\b",
            )


def optional_and_union_counts(located: Located) -> tuple[int, int]:
    """What a strict tool adds to the per-request limits: optional parameters (properties
    outside `required`) and union parameters (nodes with `anyOf` or a list of types; strictify's
    nullable properties are such), counted over every node of the schema as sent, `$defs`
    included."""
    optional = unions = 0
    for _, node, _ in walk(located):
        required = rules.required_of(node)
        optional += sum(1 for name in node.get("properties") or {} if name not in required)
        if "anyOf" in node or isinstance(node.get("type"), list):
            unions += 1
    return optional, unions


def first_recursive_ref(located: Located) -> tuple[str, str] | None:
    """The first $ref that closes a loop (pointer, the loop in words), if any."""
    cycle = first_cycle(located)
    if cycle is None:
        return None
    return cycle.pointer.removesuffix("/$ref"), rules.cycle_text(located, cycle)


# -- import: provider JSON back to specs ------------------------------------------------------


def read(data: Any, out: Imported) -> None:
    """`toolnexus-gen import anthropic FILE`: the specs a provider file holds."""
    for i, entry in enumerate(tool_list(data)):
        where = f"tools[{i}]"
        require(entry, where, "name", "input_schema")
        extra: dict[str, Any] = {}
        if isinstance(entry.get("input_examples"), list):
            extra["examples"] = entry["input_examples"]
        if isinstance(entry.get("strict"), bool):
            extra["strict"] = entry["strict"]
        known = {"name", "description", "input_schema", "input_examples", "strict", "type"}
        add_spec(
            out,
            where,
            entry["name"],
            entry.get("description"),
            entry["input_schema"],
            extra,
            leftovers(entry, known),
        )


TARGET = Target(
    NAME,
    FILE,
    document,
    entry,
    must_inline,
    check,
    check_all,
    read,
    NAME_RULE,
    PROPERTY_RULE,
    search_tool=search_tool,
    hosted=True,
    strict_limits=(MAX_STRICT_TOOLS, MAX_OPTIONAL, MAX_UNIONS),
    strict_cost=optional_and_union_counts,
)
