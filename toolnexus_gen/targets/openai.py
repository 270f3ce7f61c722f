"""OpenAI Chat Completions: `[{"type": "function", "function": {...}}]`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.ir import Located, Tool, ToolInfo
from toolnexus_gen.targets import rules
from toolnexus_gen.targets.base import NameRule, Target, input_schema
from toolnexus_gen.targets.reading import Imported, add_spec, leftovers, require, tool_list
from toolnexus_gen.toolspec.bundle import walk

NAME = "openai"
FILE = "schemas/openai.json"
NAME_RULE = NameRule(
    r"[a-zA-Z0-9_-]{1,64}",
    "must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64",
)
MAX_TOOLS = 128
MAX_DESCRIPTION = 1024


def must_inline(options: dict[str, Any]) -> bool:
    return False


def document(entries: list[Any]) -> Any:
    return entries


def entry(tool: Tool, schema: dict[str, Any] | None, options: dict[str, Any]) -> Any:
    function: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "parameters": input_schema(schema),
    }
    if tool.strict is not None:
        function["strict"] = tool.strict
    return {"type": "function", "function": function}


def check_schema(
    tool: Tool, located: Located | None, target: str, code: str, rule: NameRule
) -> list[Diagnostic]:
    """The checks Chat Completions and Responses share."""
    found = rule.check(tool, target, code)
    if len(tool.description) > MAX_DESCRIPTION:
        found.append(
            rules.at_tool(
                tool,
                "TN304",
                target,
                f"description is {len(tool.description)} characters; OpenAI has rejected more "
                f"than {MAX_DESCRIPTION}",
                key="description",
            )
        )
    if located is not None:
        found += findings(located, target)
        if tool.strict:
            found += strict_findings(located, target)
    return found


def check(tool: Tool, located: Located | None, options: dict[str, Any]) -> list[Diagnostic]:
    return check_schema(tool, located, NAME, "TN202", NAME_RULE)


def check_all(tools: list[ToolInfo], options: dict[str, Any]) -> list[Diagnostic]:
    return []


# -- the rules (catalogued in rules.py), on the schema as this target emits it -----------------

STRICT_FORBIDDEN = (
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "propertyNames",
    "patternProperties",
    "uniqueItems",
    "contains",
)
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)


def findings(located: Located, target: str) -> Iterable[Diagnostic]:
    yield from rules.array_items(located, target)
    yield from rules.root_combinators(located, target, ("anyOf", "oneOf", "allOf", "enum", "not"))
    if "properties" not in located.schema:
        yield rules.finding(
            located,
            "",
            None,
            "TN303",
            target,
            'the root object has no "properties" (object schema missing properties)',
        )


def strict_findings(located: Located, target: str) -> Iterable[Diagnostic]:
    properties = 0
    enum_values = 0
    for pointer, node, path in walk(located):
        if rules.is_object(node):
            if node.get("additionalProperties") is not False:
                yield rules.finding(
                    located,
                    pointer,
                    "additionalProperties" if "additionalProperties" in node else None,
                    "TN340",
                    target,
                    'strict mode needs "additionalProperties": false on every object',
                )
            if pointer and node.get("additionalProperties") is False and "properties" not in node:
                yield rules.finding(
                    located,
                    pointer,
                    None,
                    "TN303",
                    target,
                    'strict mode needs "properties" on every object (object schema missing '
                    'properties); a closed object that takes no keys is written "properties": {}',
                )
            keys = list(node.get("properties") or {})
            properties += len(keys)
            required = rules.required_of(node)
            missing = [k for k in keys if k not in required]
            if missing:
                yield rules.finding(
                    located,
                    pointer,
                    "required" if "required" in node else None,
                    "TN341",
                    target,
                    f'strict mode needs every property in "required"; missing {missing} (make '
                    'optional ones nullable: type: [T, "null"])',
                )
        for keyword in STRICT_FORBIDDEN:
            if keyword in node:
                yield rules.finding(
                    located,
                    pointer,
                    keyword,
                    "TN342",
                    target,
                    f"{keyword!r} is not permitted in strict mode",
                )
        if "default" in node:
            yield rules.finding(
                located,
                pointer,
                "default",
                "TN343",
                target,
                "'default' is not permitted in strict mode on Azure OpenAI (and was not on "
                "api.openai.com until 2025)",
            )
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in STRICT_FORMATS:
            yield rules.finding(
                located,
                pointer,
                "format",
                "TN344",
                target,
                f"{fmt!r} is not a valid format in strict mode",
            )
        if isinstance(node.get("$ref"), str) and set(node) - {"$ref"}:
            yield rules.finding(
                located,
                pointer,
                "$ref",
                "TN345",
                target,
                f"$ref cannot have keywords {sorted(set(node) - {'$ref'})} in strict mode; opt "
                "in to the inline_refs transform",
            )
        if (
            not ({"type", "anyOf", "$ref", "enum", "const"} & set(node))
            and path
            and path[-1] not in ("$defs", "definitions")
            and not set(path) & set(STRICT_FORBIDDEN)  # inside allOf etc.: reported
        ):
            yield rules.finding(
                located,
                pointer,
                None,
                "TN306",
                target,
                "schema must have a 'type' key in strict mode",
            )
        if isinstance(node.get("enum"), list):
            enum_values += len(node["enum"])
        depth = sum(1 for keyword in path if keyword == "properties")
        if depth > 10:
            yield rules.finding(
                located,
                pointer,
                None,
                "TN346",
                target,
                f"{depth} levels of nesting exceeds the strict-mode limit of 10",
            )
    if properties > 5000 or enum_values > 1000:
        yield rules.finding(
            located,
            "",
            None,
            "TN346",
            target,
            f"{properties} object properties and {enum_values} enum values exceed the "
            "strict-mode limits (5000 properties, 1000 enum values)",
        )


# -- import: provider JSON back to specs ------------------------------------------------------


def read(data: Any, out: Imported) -> None:
    """`toolnexus-gen import openai FILE`: the specs a provider file holds."""
    for i, entry in enumerate(tool_list(data)):
        where = f"tools[{i}]"
        require(entry, where, "function")
        function = entry["function"]
        require(function, f"{where}.function", "name")
        extra = {"strict": function["strict"]} if isinstance(function.get("strict"), bool) else {}
        known = {"name", "description", "parameters", "strict"}
        add_spec(
            out,
            where,
            function["name"],
            function.get("description"),
            function.get("parameters"),
            extra,
            leftovers(function, known),
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
    max_tools=(MAX_TOOLS, "TN330"),
)
