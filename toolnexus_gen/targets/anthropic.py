"""Anthropic Messages: `[{name, description, input_schema, input_examples?, strict?}]`."""

from __future__ import annotations

from typing import Any

from .. import targetinfo
from ..bundle import Located
from ..diagnostics import Diagnostic
from ..ir import Tool, ToolInfo
from . import rules
from .base import NameRule, input_schema

NAME = "anthropic"
FILE = "schemas/anthropic.json"
NAME_RULE = NameRule(
    r"[a-zA-Z0-9_-]{1,128}", "String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
)
MAX_STRICT_TOOLS, MAX_OPTIONAL, MAX_UNIONS = 20, 24, 16
OPTIONS = targetinfo.OPTIONS[NAME]


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
    return result


def must_inline(options: dict[str, Any]) -> bool:
    return False


def check(tool: Tool, located: Located | None, options: dict[str, Any]) -> list[Diagnostic]:
    found = NAME_RULE.check(tool, NAME, "TN203")
    if located is not None:
        found += rules.anthropic_always(located, NAME)
        if tool.strict:
            found += rules.anthropic_strict(located, NAME)
            recursive = rules.first_recursive_ref(located)
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
    strict = [tool for tool in tools if tool.strict]
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
        optional, unions = optional + tool.strict_counts[0], unions + tool.strict_counts[1]
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
