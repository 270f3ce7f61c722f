"""AWS Bedrock Converse: the `toolConfig` value, `{"tools": [{"toolSpec": {...}}]}`."""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..ir import Tool
from .base import NameRule, input_schema

NAME = "bedrock"
FILE = "schemas/bedrock.json"
NAME_RULE = NameRule(
    r"[a-zA-Z0-9_-]{1,64}",
    "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+ (1-64 characters)",
)
OPTIONS: dict[str, tuple[str, ...]] = {}


def render(tools: list[Tool], options: dict[str, Any]) -> Any:
    specs = []
    for tool in tools:
        spec: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": {"json": input_schema(tool)},
        }
        if tool.strict is not None:
            spec["strict"] = tool.strict
        specs.append({"toolSpec": spec})
    return {"tools": specs}


def check(tool: Tool, options: dict[str, Any]) -> list[Diagnostic]:
    return NAME_RULE.check(tool, NAME, "TN205")
