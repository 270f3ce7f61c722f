"""OpenAI Responses API: flat function tools, with `strict` always explicit.

Responses normalises a tool into strict mode when `strict` is omitted, which silently makes
optional arguments required; writing `strict: false` keeps the author's schema as written.

Deferred tools go into `namespace` tools, as the provider recommends for tool search (its
models were trained to search namespaces and MCP servers; a bare deferred function still shows
its name and description up front, a namespace only its own): one per MCP server the tools
come from, else per group (a tool's first), each described by the names of its tools. A
deferred tool with neither stands alone. Calls come back with the function's own `name` and
the `namespace` beside it, so they dispatch as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.ir import Located, Tool, ToolInfo
from toolnexus_gen.targets.aliases import make_alias
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


def namespace(tool: Tool) -> str | None:
    """The namespace a deferred tool's entry goes in: its MCP server, else its first group (as
    a name the provider takes); None for a loaded tool, or one with neither."""
    if not tool.defer_loading:
        return None
    binding = tool.binding or {}
    binding = binding.get("curated", {}).get("binding", binding)  # overrides: the source's
    server = binding.get("mcp", {}).get("server")
    label = server if isinstance(server, str) else tool.groups[0] if tool.groups else None
    if label is None:
        return None
    return make_alias(label, NAME_RULE.pattern, NAME_RULE.max_length, "-")


def namespace_entry(name: str, tools: Sequence[ToolInfo]) -> dict[str, Any]:
    """A namespace tool without its tools: its description names them (the runtime keeps that
    list right when a toolset takes some of them)."""
    names = ", ".join(tool.sent_name(NAME) for tool in tools)
    return {
        "type": "namespace",
        "name": name,
        "description": f"{name} tools, loaded through tool search: {names}",
        "tools": [],
    }


def search_tool(mode: str) -> dict[str, Any]:
    """The hosted tool search tool that finds deferred functions (gpt-5.4 and later)."""
    return {"type": "tool_search"}


def check(tool: Tool, located: Located | None, options: dict[str, Any]) -> list[Diagnostic]:
    return check_schema(tool, located, NAME, "TN202", NAME_RULE)


def check_all(tools: list[ToolInfo], options: dict[str, Any]) -> list[Diagnostic]:
    return []


# -- import: provider JSON back to specs ------------------------------------------------------


def _functions(data: Any) -> Iterator[tuple[str, Any]]:
    """Each tool entry, and each inside a namespace, with where it stands."""
    for i, entry in enumerate(tool_list(data)):
        if isinstance(entry, dict) and entry.get("type") == "namespace":
            for j, inner in enumerate(entry.get("tools") or []):
                yield f"tools[{i}].tools[{j}]", inner
        else:
            yield f"tools[{i}]", entry


def read(data: Any, out: Imported) -> None:
    """`toolnexus-gen import openai_responses FILE`: the specs a provider file holds."""
    for where, entry in _functions(data):
        if isinstance(entry, dict) and entry.get("type", "function") != "function":
            out.notes.append(f"{where}: a {entry.get('type')!r} tool is not a function; skipped")
            continue
        require(entry, where, "name")
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
    namespace=namespace,
    namespace_entry=namespace_entry,
)
