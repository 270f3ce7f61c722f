"""OpenAI Responses API: flat function tools, with `strict` always explicit.

Responses normalises a tool into strict mode when `strict` is omitted, which silently makes
optional arguments required; writing `strict: false` keeps the author's schema as written.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..ir import Tool
from .base import input_schema
from .openai import NAME_RULE

NAME = "openai_responses"
FILE = "schemas/openai_responses.json"
OPTIONS: dict[str, tuple[str, ...]] = {}


def render(tools: list[Tool], options: dict[str, Any]) -> Any:
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": input_schema(tool),
            "strict": bool(tool.strict),
        }
        for tool in tools
    ]


def check(tool: Tool, options: dict[str, Any]) -> list[Diagnostic]:
    return NAME_RULE.check(tool, NAME, "TN202")
