"""Anthropic Messages: `[{name, description, input_schema, input_examples?, strict?}]`."""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..ir import Tool
from .base import NameRule, input_schema

NAME = "anthropic"
FILE = "schemas/anthropic.json"
NAME_RULE = NameRule(
    r"[a-zA-Z0-9_-]{1,128}", "String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
)
OPTIONS: dict[str, tuple[str, ...]] = {}


def render(tools: list[Tool], options: dict[str, Any]) -> Any:
    result = []
    for tool in tools:
        entry: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "input_schema": input_schema(tool),
        }
        if tool.examples:
            entry["input_examples"] = list(tool.examples)
        if tool.strict is not None:
            entry["strict"] = tool.strict
        result.append(entry)
    return result


def check(tool: Tool, options: dict[str, Any]) -> list[Diagnostic]:
    return NAME_RULE.check(tool, NAME, "TN203")
