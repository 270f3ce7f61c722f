"""AWS Bedrock Converse: the `toolConfig` value, `{"tools": [{"toolSpec": {...}}]}`."""

from __future__ import annotations

from typing import Any

from .. import targetinfo
from ..bundle import Located
from ..diagnostics import Diagnostic
from ..ir import Tool, ToolInfo
from .base import NameRule, input_schema

NAME = "bedrock"
FILE = "schemas/bedrock.json"
NAME_RULE = NameRule(
    r"[a-zA-Z0-9_-]{1,64}",
    "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+ (1-64 characters)",
)
OPTIONS = targetinfo.OPTIONS[NAME]


def document(entries: list[Any]) -> Any:
    return {"tools": entries}


def entry(tool: Tool, schema: dict[str, Any] | None, options: dict[str, Any]) -> Any:
    spec: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": {"json": input_schema(schema)},
    }
    if tool.strict is not None:
        spec["strict"] = tool.strict
    return {"toolSpec": spec}


def must_inline(options: dict[str, Any]) -> bool:
    return False


def check(tool: Tool, located: Located | None, options: dict[str, Any]) -> list[Diagnostic]:
    found = NAME_RULE.check(tool, NAME, "TN205")
    return found


def check_all(tools: list[ToolInfo], options: dict[str, Any]) -> list[Diagnostic]:
    return []
