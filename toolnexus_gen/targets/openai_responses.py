"""OpenAI Responses API: flat function tools, with `strict` always explicit.

Responses normalises a tool into strict mode when `strict` is omitted, which silently makes
optional arguments required; writing `strict: false` keeps the author's schema as written.
"""

from __future__ import annotations

from typing import Any

from .. import targetinfo
from ..bundle import Located
from ..diagnostics import Diagnostic
from ..ir import Tool, ToolInfo
from .base import input_schema
from .openai import NAME_RULE, check_count, check_schema

NAME = "openai_responses"
FILE = "schemas/openai_responses.json"
OPTIONS = targetinfo.OPTIONS[NAME]


def must_inline(options: dict[str, Any]) -> bool:
    return False


def document(entries: list[Any]) -> Any:
    return entries


def entry(tool: Tool, schema: dict[str, Any] | None, options: dict[str, Any]) -> Any:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": input_schema(schema),
        "strict": bool(tool.strict),
    }


def check(tool: Tool, located: Located | None, options: dict[str, Any]) -> list[Diagnostic]:
    return check_schema(tool, located, NAME, "TN202", NAME_RULE)


def check_all(tools: list[ToolInfo], options: dict[str, Any]) -> list[Diagnostic]:
    return check_count(tools, NAME)
