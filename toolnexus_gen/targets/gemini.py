"""Gemini generateContent: ONE `{"functionDeclarations": [...]}` wrapper holding every tool.

Two schema fields (target option `schema_field`): `parameters` (the default; Gemini's OpenAPI
subset, so refs are inlined and the rule set is strict) and `parametersJsonSchema` (JSON Schema,
refs kept).
"""

from __future__ import annotations

from typing import Any

from .. import targetinfo
from ..bundle import Cycle, Located
from ..diagnostics import Diagnostic
from ..ir import Tool, ToolInfo
from . import rules
from .base import NameRule, effective

NAME = "gemini"
FILE = "schemas/gemini.json"
NAME_RULE = NameRule(
    r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}",
    "must start with a letter or an underscore and contain only a-z, A-Z, 0-9, underscores, dots, colons "
    "and dashes, with a maximum length of 64",
)
OPTIONS = targetinfo.OPTIONS[NAME]
MAX_DECLARATIONS = 512  # Gemini API; Vertex allows 128


def json_schema(options: dict[str, Any]) -> bool:
    return bool(options.get("schema_field", "parameters") == "parametersJsonSchema")


def must_inline(options: dict[str, Any]) -> bool:
    return not json_schema(options)


def takes_no_arguments(schema: dict[str, Any]) -> bool:
    """A root object with no properties and nothing else that admits keys: no `parameters` key."""
    return (
        not schema.get("properties")
        and schema.get("additionalProperties", False) is False
        and not ({"patternProperties", "anyOf", "oneOf", "allOf", "$ref"} & set(schema))
    )


def document(entries: list[Any]) -> Any:
    return [{"functionDeclarations": entries}]


def entry(tool: Tool, schema: dict[str, Any] | None, options: dict[str, Any]) -> Any:
    as_json = json_schema(options)
    declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
    # A tool without arguments has no parameters key at all.
    if schema is not None and (as_json or not takes_no_arguments(schema)):
        declaration["parametersJsonSchema" if as_json else "parameters"] = schema
    if tool.output_schema is not None:
        if as_json:
            declaration["responseJsonSchema"] = tool.output_schema
        else:
            response = effective(tool, options, must_inline=True, output=True)
            assert response is not None
            declaration["response"] = response.schema
    return declaration


def check(tool: Tool, located: Located | None, options: dict[str, Any]) -> list[Diagnostic]:
    found = NAME_RULE.check(tool, NAME, "TN201")
    if located is not None:
        if json_schema(options):
            found += rules.gemini_json(located)
        elif not takes_no_arguments(located.schema):  # else no parameters key is written
            found += rules.gemini_parameters(located)
    if tool.output_located is not None and not json_schema(options):
        target = "gemini (response)"
        try:
            response = effective(tool, options, must_inline=True, output=True)
        except Cycle as cycle:
            return [*found, rules.cycle_finding(tool.output_located, cycle, target)]
        assert response is not None
        found += rules.gemini_parameters(response, target)
    return found


def check_all(tools: list[ToolInfo], options: dict[str, Any]) -> list[Diagnostic]:
    if len(tools) <= MAX_DECLARATIONS:
        return []
    return [
        rules.at_tool(
            tools[MAX_DECLARATIONS],
            "TN318",
            NAME,
            f"{len(tools)} function declarations; Gemini accepts at most {MAX_DECLARATIONS}",
        )
    ]
