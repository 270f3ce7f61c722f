"""Gemini generateContent: ONE `{"functionDeclarations": [...]}` wrapper holding every tool."""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..ir import Tool
from .base import NameRule

NAME = "gemini"
FILE = "schemas/gemini.json"
NAME_RULE = NameRule(
    r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}",
    "must start with a letter or an underscore and contain only a-z, A-Z, 0-9, underscores, dots, colons "
    "and dashes, with a maximum length of 64",
)
OPTIONS = {"schema_field": ("parameters", "parametersJsonSchema")}


def render(tools: list[Tool], options: dict[str, Any]) -> Any:
    json_schema = options.get("schema_field", "parameters") == "parametersJsonSchema"
    declarations = []
    for tool in tools:
        declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
        if tool.input_schema is not None:  # a tool without arguments has no parameters key at all
            declaration["parametersJsonSchema" if json_schema else "parameters"] = tool.input_schema
        if tool.output_schema is not None:
            declaration["responseJsonSchema" if json_schema else "response"] = tool.output_schema
        declarations.append(declaration)
    return [{"functionDeclarations": declarations}]


def check(tool: Tool, options: dict[str, Any]) -> list[Diagnostic]:
    return NAME_RULE.check(tool, NAME, "TN201")
