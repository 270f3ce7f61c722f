"""Provider compatibility rules: each schema feature a provider rejects (error) or silently degrades
(warning), found at build time with its place, the provider's own words and a fix.

This module is the catalogue (RULES, which `toolnexus-gen explain CODE` prints) and what the
targets' checks share; each target's own checks live in its module. Rules look at the schema
exactly as it will be emitted for a target (bundled, inlined where the target needs it, and after
the transforms the user turned on), and report each finding at the line and column of the keyword
in the file the author wrote.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..bundle import Cycle, Located, walk
from ..diagnostics import Diagnostic, Severity
from ..ir import Tool, ToolInfo
from ..load import join_pointer

E, W = Severity.ERROR, Severity.WARNING


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    targets: str  # where it applies, in words
    severity: Severity
    provider_error: str  # the provider's own error text, as users have seen it
    fix: str
    transform: str | None = None  # the opt-in transform that removes the problem, if any

    def explain(self) -> str:
        lines = [
            f"Applies to: {self.targets}. Severity: {self.severity.value}.",
            f"Provider says: {self.provider_error}",
            f"Fix: {self.fix}",
        ]
        if self.transform:
            lines.append(f"Transform: {self.transform} (opt in per target: transforms = [...]).")
        return "\n".join(lines)


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule(
            "TN301",
            "property name rejected by Anthropic",
            "anthropic (always)",
            E,
            "tools.0.custom.input_schema.properties: Property keys should match pattern "
            "'^[a-zA-Z0-9_.-]{1,64}$'",
            "rename the property (letters, digits, _ . -; at most 64), or exclude anthropic for "
            "this tool (targets: {exclude: [anthropic]})",
        ),
        Rule(
            "TN302",
            "array schema without items",
            "openai, openai_responses (always); gemini parameters",
            E,
            "OpenAI: In context=('properties', 'paths'), array schema missing items. / Gemini: "
            "...parameters.properties[tags].items: missing field.",
            'add "items" (for example {"type": "string"}, or {} for anything on openai)',
        ),
        Rule(
            "TN303",
            "root object without properties",
            "openai, openai_responses",
            E,
            "In context=(), object schema missing properties.",
            'add "properties" (use {} and "additionalProperties": false for a tool without '
            "arguments, or omit input_schema entirely)",
        ),
        Rule(
            "TN304",
            "description longer than 1024 characters",
            "openai, openai_responses",
            W,
            "Invalid 'tools[6].function.description': string too long. Expected a string with "
            "maximum length 1024 (observed through Azure and relays)",
            "shorten the description; move detail into parameter descriptions",
        ),
        Rule(
            "TN305",
            "combinator at the root of the input schema",
            "openai, openai_responses (anyOf/oneOf/allOf/enum/not); anthropic (anyOf/oneOf/allOf)",
            E,
            "OpenAI: schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/"
            "'not' at the top level. / Anthropic: input_schema does not support oneOf, allOf, or "
            "anyOf at the top level",
            "move the alternatives into a property, or make all properties optional and check the "
            "combination in the handler",
        ),
        Rule(
            "TN306",
            "schema node without a type",
            "gemini parameters; openai strict",
            E,
            "Gemini: ...type: must be specified when not using one_of, any_of or all_of fields / "
            "OpenAI strict: schema must have a 'type' key",
            'add "type" (for example "string")',
        ),
        Rule(
            "TN310",
            "keyword Gemini parameters does not know",
            "gemini (schema_field = parameters)",
            E,
            'Invalid JSON payload received. Unknown name "<keyword>" at \'tools[0].'
            "function_declarations[0].parameters...': Cannot find field.",
            'remove the keyword, use schema_field = "parametersJsonSchema" for gemini, or opt in '
            "to the transform named in the message where one keeps the meaning",
        ),
        Rule(
            "TN311",
            "type array in Gemini parameters",
            "gemini parameters",
            E,
            "Unknown name \"type\" at '...': Proto field is not repeating, cannot start list.",
            'write one type; for [T, "null"] opt in to the nullable transform (type: T, '
            'nullable: true), or use schema_field = "parametersJsonSchema"',
            "nullable",
        ),
        Rule(
            "TN312",
            "enum Gemini parameters cannot carry",
            "gemini parameters",
            E,
            "Invalid value at '...enum[1]' (TYPE_STRING), 2 / ...enum: only allowed for STRING "
            "type / ...enum[1]: cannot be empty",
            'use string values (and type "string"), drop empty strings, or use schema_field = '
            '"parametersJsonSchema"',
        ),
        Rule(
            "TN313",
            "string format Gemini parameters rejects",
            "gemini parameters",
            E,
            "...format: only 'enum' and 'date-time' are supported for STRING type",
            "remove the format (say it in the description), or use schema_field = "
            '"parametersJsonSchema"',
        ),
        Rule(
            "TN314",
            "object without properties in Gemini parameters",
            "gemini parameters",
            E,
            "...parameters.properties: should be non-empty for OBJECT type",
            'give the object at least one property, or use schema_field = "parametersJsonSchema". '
            "(A root with no properties is a tool without arguments: parameters is omitted.)",
        ),
        Rule(
            "TN315",
            "recursive schema that must be inlined",
            "gemini parameters (and the inline_refs transform)",
            E,
            "Gemini parameters has no references: Unknown name \"$ref\" at '...': Cannot find "
            "field.",
            'use schema_field = "parametersJsonSchema" (which allows recursion through optional '
            "properties), or break the cycle",
        ),
        Rule(
            "TN316",
            "additionalProperties in Gemini parameters",
            "gemini parameters",
            E,
            "Invalid JSON payload received. Unknown name \"additionalProperties\" at '...': "
            "Cannot find field.",
            'use schema_field = "parametersJsonSchema" (which keeps it), or remove it',
        ),
        Rule(
            "TN318",
            "too many Gemini function declarations",
            "gemini",
            W,
            "tools[0].function_declarations: [FIELD_INVALID] At most 512 function declarations "
            "can be specified. (Vertex: 128)",
            "send a subset per request (run_gemini(tools=[...])), or exclude some tools from "
            "gemini. A warning: the file may hold more tools than one request sends",
        ),
        Rule(
            "TN319",
            "property name Gemini may reject",
            "gemini",
            W,
            "Gemini parameter names must match ^[A-Za-z_][A-Za-z0-9_]{0,63}$ (documented rule)",
            "rename the property, or exclude gemini for this tool",
        ),
        Rule(
            "TN320",
            "$ref with sibling keywords (Gemini parametersJsonSchema)",
            "gemini (schema_field = parametersJsonSchema)",
            E,
            "$ref 'X' was set alongside unsupported fields. If a schema node has $ref set, then "
            "only description and default can be set alongside it",
            "move the other keywords into the referenced schema, wrap as allOf is not supported "
            "either: or opt in to inline_refs",
            "inline_refs",
        ),
        Rule(
            "TN321",
            "cycle through required properties",
            "gemini parametersJsonSchema",
            E,
            "Cyclic references are unrolled to a limited degree and, as such, may only be used "
            "within non-required properties.",
            "make one property on the cycle optional",
        ),
        Rule(
            "TN322",
            "keyword Gemini parametersJsonSchema ignores",
            "gemini parametersJsonSchema",
            W,
            "(no error: only the documented subset is applied; other keywords are ignored, so "
            "the model is not held to them)",
            "keep the constraint (your handler's model still enforces it) and say it in the "
            "description, so the model knows",
        ),
        Rule(
            "TN330",
            "more than 128 tools for OpenAI",
            "openai, openai_responses",
            W,
            "Invalid 'tools': array too long. Expected an array with maximum length 128",
            "send a subset per request (run_openai(tools=[...])), or exclude some tools from the "
            "openai targets. A warning: the file may hold more tools than one request sends",
        ),
        Rule(
            "TN340",
            "strict object without additionalProperties: false",
            "openai, openai_responses (strict)",
            E,
            "Invalid schema for function 'f': In context=('properties', 'value'), "
            "'additionalProperties' is required to be supplied and to be false.",
            'add "additionalProperties": false to the object, or drop strict',
        ),
        Rule(
            "TN341",
            "strict object with optional properties",
            "openai, openai_responses (strict)",
            E,
            "Invalid schema for function 'f': In context=(), 'required' is required to be "
            "supplied and to be an array including every key in properties. Missing 'params'.",
            'list every property in "required" and make optional ones nullable (type: [T, "null"]), '
            "or drop strict",
        ),
        Rule(
            "TN342",
            "keyword OpenAI strict mode does not permit",
            "openai, openai_responses (strict)",
            E,
            "Invalid schema for function 'f': In context=('properties', 'data'), 'allOf' is not "
            "permitted.",
            "remove the keyword or drop strict",
        ),
        Rule(
            "TN343",
            "default in OpenAI strict mode",
            "openai, openai_responses (strict)",
            W,
            "In context=('properties', 'error'), 'default' is not permitted. (Azure OpenAI, and "
            "api.openai.com until 2025)",
            "state the default in the description",
        ),
        Rule(
            "TN344",
            "format OpenAI strict mode rejects",
            "openai, openai_responses (strict)",
            E,
            "In context=('properties', 'url'), 'uri' is not a valid format.",
            "use one of date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid, or "
            "remove the format",
        ),
        Rule(
            "TN345",
            "$ref with sibling keywords (OpenAI strict)",
            "openai, openai_responses (strict)",
            E,
            "context=('properties', 'labels'), $ref cannot have keywords {'description'}",
            "move the keywords into the referenced schema, or opt in to inline_refs",
            "inline_refs",
        ),
        Rule(
            "TN346",
            "schema over OpenAI strict-mode limits",
            "openai, openai_responses (strict)",
            E,
            "A schema may have up to 5000 object properties total, with up to 10 levels of "
            "nesting; at most 1000 enum values; 120,000 characters of names and enum values",
            "split the tool, or drop strict",
        ),
        Rule(
            "TN350",
            "strict object without additionalProperties: false",
            "anthropic (strict)",
            E,
            "tools.0.custom: For 'object' type, 'additionalProperties' must be explicitly set to "
            "false",
            'add "additionalProperties": false to the object, or drop strict',
        ),
        Rule(
            "TN351",
            "constraint Anthropic strict mode does not support",
            "anthropic (strict)",
            E,
            "Not supported: minimum, maximum, multipleOf, minLength, maxLength, array constraints "
            "beyond minItems 0 or 1 (a 400 error with details)",
            "remove the constraint (your handler's model still enforces it) or drop strict",
        ),
        Rule(
            "TN352",
            "recursive schema in Anthropic strict mode",
            "anthropic (strict)",
            E,
            "Not supported: recursive schemas (a 400 error with details)",
            "break the cycle or drop strict",
        ),
        Rule(
            "TN353",
            "format Anthropic strict mode rejects",
            "anthropic (strict)",
            E,
            "supported string formats: date-time, time, date, duration, email, hostname, uri, "
            "ipv4, ipv6, uuid",
            "remove the format or drop strict",
        ),
        Rule(
            "TN354",
            "complex enum member in Anthropic strict mode",
            "anthropic (strict)",
            E,
            "enum of primitives only",
            "use primitive enum values or drop strict",
        ),
        Rule(
            "TN355",
            "over Anthropic's per-request strict limits",
            "anthropic (strict)",
            W,
            "Schema is too complex for compilation. (limits: 20 strict tools, 24 optional "
            "parameters, 16 parameters using anyOf or type arrays, across all strict tools)",
            "drop strict from some tools, or send fewer strict tools per request "
            "(run_anthropic(tools=[...])). A warning: the file may hold more than one request sends",
        ),
        Rule(
            "TN356",
            "regex feature Anthropic strict mode rejects",
            "anthropic (strict)",
            E,
            "pattern: no backreferences, lookaround or \\b",
            "simplify the pattern or drop strict",
        ),
        Rule(
            "TN360",
            "MCP outputSchema root not an object",
            "mcp",
            E,
            'outputSchema must be an object schema (type: "object") under MCP 2025-11-25; '
            "clients validate structuredContent against it",
            'wrap the result: {"type": "object", "properties": {"result": ...}}',
        ),
    )
}


def finding(
    located: Located,
    pointer: str,
    keyword: str | None,
    code: str,
    target: str,
    message: str,
) -> Diagnostic:
    """A diagnostic at `keyword` of the node at `pointer` (a bundled pointer), in the author's file."""
    document, source = located.source(pointer)
    place = join_pointer(source, keyword) if keyword else source
    line, col = document.positions.key(place) if keyword else document.positions.value(place)
    rule = RULES[code]
    return Diagnostic(
        document.display,
        line,
        col,
        code,
        f"{target}: {message}",
        rule.severity,
        pointer=place,
        target=target,
    )


def at_tool(
    tool: Tool | ToolInfo, code: str, target: str, message: str, key: str = "name"
) -> Diagnostic:
    line, col = tool.place(key)
    return Diagnostic(
        tool.display,
        line,
        col,
        code,
        f"{target}: {message}",
        RULES[code].severity,
        target=target,
    )


def types_of(node: dict[str, Any]) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def required_of(node: dict[str, Any]) -> list[Any]:
    value = node.get("required")
    return value if isinstance(value, list) else []


def is_object(node: dict[str, Any]) -> bool:
    return "object" in types_of(node) or (not types_of(node) and "properties" in node)


# -- shared checks ------------------------------------------------------------------------------


def array_items(located: Located, target: str) -> Iterable[Diagnostic]:
    for pointer, node, _ in walk(located):
        if "array" in types_of(node) and "items" not in node and "prefixItems" not in node:
            yield finding(
                located,
                pointer,
                "type",
                "TN302",
                target,
                'array schema without "items" is rejected ("array schema missing items")',
            )


def root_combinators(
    located: Located, target: str, keywords: tuple[str, ...]
) -> Iterable[Diagnostic]:
    for keyword in keywords:
        if keyword in located.schema:
            yield finding(
                located,
                "",
                keyword,
                "TN305",
                target,
                f"{keyword!r} at the top level of the input schema is rejected",
            )


def place(located: Located, pointer: str) -> str:
    """A bundled-schema pointer as a place in the author's files: `specs/_node.yaml#/x`."""
    document, source = located.source(pointer)
    return f"{document.display}#{source}"


def cycle_text(located: Located, cycle: Cycle) -> str:
    """The loop as places in the author's files: `_node.yaml# -> _node.yaml#`."""
    return " -> ".join(place(located, ref[1:]) for ref in cycle.path)


def cycle_finding(located: Located, cycle: Cycle, target: str) -> Diagnostic:
    return finding(
        located,
        cycle.pointer.removesuffix("/$ref"),
        "$ref",
        "TN315",
        target,
        f"the schema is recursive ({cycle_text(located, cycle)}) and cannot be inlined; use "
        'schema_field = "parametersJsonSchema" or break the cycle',
    )
