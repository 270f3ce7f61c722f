"""OpenAI Responses API: flat function tools, with `strict` always explicit.

Responses normalises a tool into strict mode when `strict` is omitted, which silently makes
optional arguments required; writing `strict: false` keeps the author's schema as written.
"""

from __future__ import annotations

from typing import Any

from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.ir import Located, Tool, ToolInfo
from toolnexus_gen.targets.base import Target, input_schema
from toolnexus_gen.targets.openai import MAX_TOOLS, NAME_RULE, check_schema
from toolnexus_gen.targets.reading import Imported, add_spec, leftovers, require, tool_list

NAME = "openai_responses"
FILE = "schemas/openai_responses.json"


def must_inline(options: dict[str, Any]) -> bool:
    return False


def document(entries: list[Any]) -> Any:
    return entries


def entry(tool: Tool, schema: dict[str, Any] | None, options: dict[str, Any]) -> Any:
    result = {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": input_schema(schema),
        "strict": bool(tool.strict),
    }
    if tool.defer_loading:
        result["defer_loading"] = True
    return result


def search_tool(mode: str) -> dict[str, Any]:
    """The hosted tool search tool that finds deferred functions (gpt-5.4 and later)."""
    return {"type": "tool_search"}


def check(tool: Tool, located: Located | None, options: dict[str, Any]) -> list[Diagnostic]:
    return check_schema(tool, located, NAME, "TN202", NAME_RULE)


def check_all(tools: list[ToolInfo], options: dict[str, Any]) -> list[Diagnostic]:
    return []


# -- import: provider JSON back to specs ------------------------------------------------------


def read(data: Any, out: Imported) -> None:
    """`toolnexus-gen import openai_responses FILE`: the specs a provider file holds."""
    for i, entry in enumerate(tool_list(data)):
        where = f"tools[{i}]"
        require(entry, where, "name")
        if entry.get("type", "function") != "function":
            out.notes.append(f"{where}: a {entry.get('type')!r} tool is not a function; skipped")
            continue
        # strict: false is what the build writes when a spec says nothing, so leave it unsaid.
        extra = {"strict": True} if entry.get("strict") is True else {}
        known = {"type", "name", "description", "parameters", "strict"}
        add_spec(
            out,
            where,
            entry["name"],
            entry.get("description"),
            entry.get("parameters"),
            extra,
            leftovers(entry, known),
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
    search_tool=search_tool,
    hosted=True,
    max_tools=(MAX_TOOLS, "TN330"),
)
