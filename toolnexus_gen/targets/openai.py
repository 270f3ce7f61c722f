"""OpenAI Chat Completions: `[{"type": "function", "function": {...}}]`."""

from __future__ import annotations

from typing import Any

from .. import targetinfo
from ..bundle import Located
from ..diagnostics import Diagnostic
from ..ir import Tool, ToolInfo
from . import rules
from .base import NameRule, input_schema

NAME = "openai"
FILE = "schemas/openai.json"
NAME_RULE = NameRule(
    r"[a-zA-Z0-9_-]{1,64}",
    "must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64",
)
OPTIONS = targetinfo.OPTIONS[NAME]
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
        found += rules.openai_always(located, target)
        if tool.strict:
            found += rules.openai_strict(located, target)
    return found


def check(tool: Tool, located: Located | None, options: dict[str, Any]) -> list[Diagnostic]:
    return check_schema(tool, located, NAME, "TN202", NAME_RULE)


def check_count(tools: list[ToolInfo], target: str) -> list[Diagnostic]:
    if len(tools) <= MAX_TOOLS:
        return []
    return [
        rules.at_tool(
            tools[MAX_TOOLS],
            "TN330",
            target,
            f"{len(tools)} tools; a request takes at most {MAX_TOOLS} (array too long)",
        )
    ]


def check_all(tools: list[ToolInfo], options: dict[str, Any]) -> list[Diagnostic]:
    return check_count(tools, NAME)
