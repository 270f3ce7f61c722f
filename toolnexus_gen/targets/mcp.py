"""MCP `tools/list`: `[{name, title?, description, inputSchema, outputSchema?, annotations?}]`."""

from __future__ import annotations

from typing import Any

from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.ir import Located, Tool, ToolInfo
from toolnexus_gen.targets.base import NameRule, Target, input_schema
from toolnexus_gen.targets.reading import Imported, add_spec, leftovers, require, tool_list

NAME = "mcp"
FILE = "schemas/mcp.json"
# The MCP spec says SHOULD, and the SDK only warns: so do we.
NAME_RULE = NameRule(
    r"[A-Za-z0-9._-]{1,128}",
    "SHOULD be 1-128 characters of A-Z, a-z, 0-9, underscore, hyphen and dot",
    Severity.WARNING,
)


def document(entries: list[Any]) -> Any:
    return entries


def entry(tool: Tool, schema: dict[str, Any] | None, options: dict[str, Any]) -> Any:
    result: dict[str, Any] = {"name": tool.name}
    if tool.title is not None:
        result["title"] = tool.title
    result["description"] = tool.description
    result["inputSchema"] = input_schema(schema)
    if tool.output_schema is not None:
        result["outputSchema"] = tool.output_schema
    if tool.annotations is not None:
        result["annotations"] = tool.annotations
    return result


def must_inline(options: dict[str, Any]) -> bool:
    return False


def check(tool: Tool, located: Located | None, options: dict[str, Any]) -> list[Diagnostic]:
    found = NAME_RULE.check(tool, NAME, "TN204")
    output = tool.output_schema
    if output is not None and output.get("type") != "object":
        line, col = tool.source.positions.value("/output_schema")
        found.append(
            Diagnostic(
                tool.source.display,
                line,
                col,
                "TN360",
                'mcp: outputSchema must be an object schema (type: "object"); wrap the result '
                'in {"type": "object", "properties": {"result": ...}}',
                pointer="/output_schema",
                target=NAME,
            )
        )
    return found


def check_all(tools: list[ToolInfo], options: dict[str, Any]) -> list[Diagnostic]:
    return []


# -- import: provider JSON back to specs ------------------------------------------------------


def read(data: Any, out: Imported) -> None:
    """`toolnexus-gen import mcp FILE`: the specs a provider file holds."""
    for i, entry in enumerate(tool_list(data)):
        where = f"tools[{i}]"
        require(entry, where, "name", "inputSchema")
        extra: dict[str, Any] = {}
        if isinstance(entry.get("outputSchema"), dict):
            extra["output_schema"] = entry["outputSchema"]
        if isinstance(entry.get("annotations"), dict):
            extra["annotations"] = entry["annotations"]
        known = {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
        add_spec(
            out,
            where,
            entry["name"],
            entry.get("description"),
            entry["inputSchema"],
            extra,
            leftovers(entry, known),
            title=entry.get("title"),
        )


TARGET = Target(NAME, FILE, document, entry, must_inline, check, check_all, read)
