"""AWS Bedrock Converse: the `toolConfig` value, `{"tools": [{"toolSpec": {...}}]}`."""

from __future__ import annotations

from typing import Any

from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.ir import Located, Tool, ToolInfo
from toolnexus_gen.targets.base import NameRule, Target, input_schema
from toolnexus_gen.targets.reading import Imported, add_spec, leftovers, require, tool_list

NAME = "bedrock"
FILE = "schemas/bedrock.json"
NAME_RULE = NameRule(
    r"[a-zA-Z0-9_-]{1,64}",
    "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+ (1-64 characters)",
)


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


# -- import: provider JSON back to specs ------------------------------------------------------


def read(data: Any, out: Imported) -> None:
    """`toolnexus-gen import bedrock FILE`: the specs a provider file holds."""
    for i, entry in enumerate(tool_list(data, "toolConfig")):
        where = f"tools[{i}]"
        require(entry, where, "toolSpec")
        spec = entry["toolSpec"]
        require(spec, f"{where}.toolSpec", "name")
        schema = (spec.get("inputSchema") or {}).get("json")
        extra = {"strict": spec["strict"]} if isinstance(spec.get("strict"), bool) else {}
        known = {"name", "description", "inputSchema", "strict"}
        add_spec(
            out,
            where,
            spec["name"],
            spec.get("description"),
            schema,
            extra,
            leftovers(spec, known),
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
    empty_tools="Bedrock rejects a toolConfig without tools: Value at 'toolConfig.tools' failed "
    "to satisfy constraint: Member must have length greater than or equal to 1",
)
