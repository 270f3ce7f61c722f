"""OpenAI Chat Completions: `[{"type": "function", "function": {...}}]`."""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..ir import Tool
from .base import NameRule, input_schema

NAME = "openai"
FILE = "schemas/openai.json"
NAME_RULE = NameRule(
    r"[a-zA-Z0-9_-]{1,64}",
    "must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64",
)
OPTIONS: dict[str, tuple[str, ...]] = {}


def render(tools: list[Tool], options: dict[str, Any]) -> Any:
    result = []
    for tool in tools:
        function: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "parameters": input_schema(tool),
        }
        if tool.strict is not None:
            function["strict"] = tool.strict
        result.append({"type": "function", "function": function})
    return result


def check(tool: Tool, options: dict[str, Any]) -> list[Diagnostic]:
    return NAME_RULE.check(tool, NAME, "TN202")
