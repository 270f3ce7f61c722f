"""Provider compatibility rules: each schema feature a provider rejects (error) or silently degrades
(warning), found at build time with its place, the provider's own words and a fix.

Rules look at the schema exactly as it will be emitted for a target (bundled, inlined where the
target needs it, and after the transforms the user turned on), and report each finding at the
line and column of the keyword in the file the author wrote. `toolnexus-gen explain CODE` prints
a rule's entry from RULES.
"""

from __future__ import annotations

import re
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


# -- Gemini -------------------------------------------------------------------------------------

GEMINI_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "default",
        "example",
        "items",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "propertyOrdering",
        "anyOf",
    }
)
GEMINI_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
GEMINI_STRING_FORMATS = frozenset({"enum", "date-time"})
GEMINI_PROPERTY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
KEYWORD_TRANSFORMS = {
    "const": "const_to_enum",
    "$schema": "strip_meta",
    "$id": "strip_meta",
    "$comment": "strip_meta",
}


def gemini_parameters(
    located: Located, target: str = "gemini (parameters)"
) -> Iterable[Diagnostic]:
    yield from array_items(located, target)
    for pointer, node, path in walk(located):
        for keyword in node:
            if keyword in GEMINI_KEYWORDS:
                continue
            if keyword == "additionalProperties":
                yield finding(
                    located,
                    pointer,
                    keyword,
                    "TN316",
                    target,
                    '"additionalProperties" is rejected by the Gemini API (Unknown name '
                    '"additionalProperties"); use schema_field = "parametersJsonSchema"',
                )
                continue
            hint = ""
            if keyword in KEYWORD_TRANSFORMS:
                hint = f", or opt in to the {KEYWORD_TRANSFORMS[keyword]} transform"
                if keyword == "const" and not isinstance(node["const"], str):
                    hint = " (a non-string const cannot become a Gemini enum)"
            yield finding(
                located,
                pointer,
                keyword,
                "TN310",
                target,
                f'keyword {keyword!r} is rejected (Unknown name "{keyword}": Cannot find field); '
                f'remove it or use schema_field = "parametersJsonSchema"{hint}',
            )
        kind = node.get("type")
        if isinstance(kind, list):
            yield finding(
                located,
                pointer,
                "type",
                "TN311",
                target,
                "a list of types is rejected (Proto field is not repeating, cannot start list)"
                + (
                    "; opt in to the nullable transform"
                    if len(kind) == 2 and "null" in kind
                    else ""
                ),
            )
        elif isinstance(kind, str) and kind not in GEMINI_TYPES:
            yield finding(located, pointer, "type", "TN311", target, f"unknown type {kind!r}")
        elif (
            kind is None
            and not ({"anyOf", "enum", "const"} & set(node))  # those are reported on their own
            and path
            and path[-1] not in ("$defs", "definitions")
        ):
            yield finding(
                located,
                pointer,
                None,
                "TN306",
                target,
                'schema without "type" is rejected (type: must be specified when not using '
                "one_of, any_of or all_of fields)",
            )
        if "enum" in node and isinstance(node["enum"], list):
            bad = [v for v in node["enum"] if not isinstance(v, str) or v == ""]
            if bad or (isinstance(kind, str) and kind != "string"):
                what = f"value {bad[0]!r}" if bad else f"type {kind!r}"
                yield finding(
                    located,
                    pointer,
                    "enum",
                    "TN312",
                    target,
                    f"enum must hold non-empty strings on a string type; {what} is rejected",
                )
        fmt = node.get("format")
        if isinstance(fmt, str) and kind == "string" and fmt not in GEMINI_STRING_FORMATS:
            yield finding(
                located,
                pointer,
                "format",
                "TN313",
                target,
                f"format {fmt!r} is rejected: only 'enum' and 'date-time' are supported for STRING",
            )
        if is_object(node) and not node.get("properties") and pointer != "":
            yield finding(
                located,
                pointer,
                "properties" if "properties" in node else None,
                "TN314",
                target,
                "an object needs at least one property (should be non-empty for OBJECT type)",
            )
        for name in node.get("properties") or {}:
            if not GEMINI_PROPERTY.fullmatch(name):
                yield finding(
                    located,
                    join_pointer(pointer + "/properties", name),
                    None,
                    "TN319",
                    target,
                    f"property name {name!r} does not match Gemini's "
                    "^[A-Za-z_][A-Za-z0-9_]{0,63}$",
                )


GEMINI_JSON_SUBSET = frozenset(
    {
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "$schema",
        "$comment",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
        "default",
        "examples",
        "definitions",
        "nullable",
    }
)


def gemini_json(located: Located) -> Iterable[Diagnostic]:
    target = "gemini (parametersJsonSchema)"
    ignored: dict[str, tuple[str, int]] = {}
    for pointer, node, _ in walk(located):
        ref = node.get("$ref")
        if isinstance(ref, str):
            extra = sorted(
                k
                for k in node
                if k != "$ref" and not k.startswith("$") and k not in ("description", "default")
            )
            if extra:
                yield finding(
                    located,
                    pointer,
                    extra[0],
                    "TN320",
                    target,
                    f"$ref {ref!r} was set alongside unsupported fields {extra}: only description "
                    "and default may stand next to $ref",
                )
        for keyword in node:
            if keyword not in GEMINI_JSON_SUBSET:
                first, count = ignored.get(keyword, (pointer, 0))
                ignored[keyword] = (first, count + 1)
    for keyword, (pointer, count) in sorted(ignored.items()):
        more = f" (and {count - 1} more)" if count > 1 else ""
        yield finding(
            located,
            pointer,
            keyword,
            "TN322",
            target,
            f"keyword {keyword!r} is outside the subset Gemini applies and is ignored{more}; the "
            "model is not held to it",
        )
    yield from required_cycles(located, target)


def required_cycles(located: Located, target: str) -> Iterable[Diagnostic]:
    """A $ref loop whose every step is a required property (the schema can never end)."""
    schema = located.schema

    def mandatory_refs(node: Any, pointer: str) -> Iterable[tuple[str, str]]:
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            yield ref[1:], pointer
        required = required_of(node)
        for name, child in (node.get("properties") or {}).items():
            if name in required:
                yield from mandatory_refs(child, join_pointer(pointer + "/properties", name))
        for keyword in ("allOf",):
            for i, child in enumerate(node.get(keyword) or []):
                yield from mandatory_refs(child, f"{pointer}/{keyword}/{i}")

    def resolve(pointer: str) -> Any:
        node: Any = schema
        for part in pointer.split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, dict) else None
        return node

    reported: set[str] = set()

    def visit(target_pointer: str, stack: tuple[str, ...]) -> Iterable[Diagnostic]:
        for ref, at in mandatory_refs(resolve(target_pointer), target_pointer):
            if ref in stack:
                if ref not in reported:
                    reported.add(ref)
                    loop = " -> ".join(place(located, p) for p in (*stack[stack.index(ref) :], ref))
                    yield finding(
                        located,
                        at,
                        "$ref",
                        "TN321",
                        target,
                        f"the cycle {loop} runs only through required properties",
                    )
            else:
                yield from visit(ref, (*stack, ref))

    yield from visit("", ("",))


# -- OpenAI -------------------------------------------------------------------------------------

OPENAI_STRICT_FORBIDDEN = (
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "propertyNames",
    "patternProperties",
    "uniqueItems",
    "contains",
)
OPENAI_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)


def openai_always(located: Located, target: str) -> Iterable[Diagnostic]:
    yield from array_items(located, target)
    yield from root_combinators(located, target, ("anyOf", "oneOf", "allOf", "enum", "not"))
    if "properties" not in located.schema:
        yield finding(
            located,
            "",
            None,
            "TN303",
            target,
            'the root object has no "properties" (object schema missing properties)',
        )


def openai_strict(located: Located, target: str) -> Iterable[Diagnostic]:
    properties = 0
    enum_values = 0
    for pointer, node, path in walk(located):
        if is_object(node):
            if node.get("additionalProperties") is not False:
                yield finding(
                    located,
                    pointer,
                    "additionalProperties" if "additionalProperties" in node else None,
                    "TN340",
                    target,
                    'strict mode needs "additionalProperties": false on every object',
                )
            keys = list(node.get("properties") or {})
            properties += len(keys)
            required = required_of(node)
            missing = [k for k in keys if k not in required]
            if missing:
                yield finding(
                    located,
                    pointer,
                    "required" if "required" in node else None,
                    "TN341",
                    target,
                    f'strict mode needs every property in "required"; missing {missing} (make '
                    'optional ones nullable: type: [T, "null"])',
                )
        for keyword in OPENAI_STRICT_FORBIDDEN:
            if keyword in node:
                yield finding(
                    located,
                    pointer,
                    keyword,
                    "TN342",
                    target,
                    f"{keyword!r} is not permitted in strict mode",
                )
        if "default" in node:
            yield finding(
                located,
                pointer,
                "default",
                "TN343",
                target,
                "'default' is not permitted in strict mode on Azure OpenAI (and was not on "
                "api.openai.com until 2025)",
            )
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in OPENAI_STRICT_FORMATS:
            yield finding(
                located,
                pointer,
                "format",
                "TN344",
                target,
                f"{fmt!r} is not a valid format in strict mode",
            )
        if isinstance(node.get("$ref"), str) and set(node) - {"$ref"}:
            yield finding(
                located,
                pointer,
                "$ref",
                "TN345",
                target,
                f"$ref cannot have keywords {sorted(set(node) - {'$ref'})} in strict mode; opt "
                "in to the inline_refs transform",
            )
        if (
            not ({"type", "anyOf", "$ref", "enum", "const"} & set(node))
            and path
            and path[-1] not in ("$defs", "definitions")
            and not set(path) & set(OPENAI_STRICT_FORBIDDEN)  # inside allOf etc.: reported
        ):
            yield finding(
                located,
                pointer,
                None,
                "TN306",
                target,
                "schema must have a 'type' key in strict mode",
            )
        if isinstance(node.get("enum"), list):
            enum_values += len(node["enum"])
        depth = sum(1 for keyword in path if keyword == "properties")
        if depth > 10:
            yield finding(
                located,
                pointer,
                None,
                "TN346",
                target,
                f"{depth} levels of nesting exceeds the strict-mode limit of 10",
            )
    if properties > 5000 or enum_values > 1000:
        yield finding(
            located,
            "",
            None,
            "TN346",
            target,
            f"{properties} object properties and {enum_values} enum values exceed the "
            "strict-mode limits (5000 properties, 1000 enum values)",
        )


# -- Anthropic ----------------------------------------------------------------------------------

ANTHROPIC_PROPERTY = re.compile(r"[a-zA-Z0-9_.-]{1,64}")
ANTHROPIC_STRICT_FORMATS = OPENAI_STRICT_FORMATS | {"uri"}
ANTHROPIC_UNSUPPORTED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
)
REGEX_FEATURES = re.compile(r"\\[1-9]|\(\?<?[=!]|\\b|\\k<")


def anthropic_always(located: Located, target: str) -> Iterable[Diagnostic]:
    yield from root_combinators(located, target, ("anyOf", "oneOf", "allOf"))
    for pointer, node, _ in walk(located):
        for name in node.get("properties") or {}:
            if not ANTHROPIC_PROPERTY.fullmatch(name):
                yield finding(
                    located,
                    join_pointer(pointer + "/properties", name),
                    None,
                    "TN301",
                    target,
                    f"property key {name!r} is rejected (Property keys should match pattern "
                    "'^[a-zA-Z0-9_.-]{1,64}$')",
                )


def anthropic_strict(located: Located, target: str) -> Iterable[Diagnostic]:
    for pointer, node, _ in walk(located):
        if is_object(node) and node.get("additionalProperties") is not False:
            yield finding(
                located,
                pointer,
                "additionalProperties" if "additionalProperties" in node else None,
                "TN350",
                target,
                "For 'object' type, 'additionalProperties' must be explicitly set to false",
            )
        for keyword in ANTHROPIC_UNSUPPORTED:
            if keyword in node:
                yield finding(
                    located,
                    pointer,
                    keyword,
                    "TN351",
                    target,
                    f"{keyword!r} is not supported in strict mode",
                )
        min_items = node.get("minItems")
        if isinstance(min_items, int) and min_items > 1:
            yield finding(
                located,
                pointer,
                "minItems",
                "TN351",
                target,
                f"minItems {min_items} is not supported in strict mode (only 0 or 1)",
            )
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in ANTHROPIC_STRICT_FORMATS:
            yield finding(
                located,
                pointer,
                "format",
                "TN353",
                target,
                f"format {fmt!r} is not supported in strict mode",
            )
        if isinstance(node.get("enum"), list) and any(
            isinstance(v, (dict, list)) for v in node["enum"]
        ):
            yield finding(
                located,
                pointer,
                "enum",
                "TN354",
                target,
                "enum members must be primitives in strict mode",
            )
        pattern = node.get("pattern")
        if isinstance(pattern, str) and REGEX_FEATURES.search(pattern):
            yield finding(
                located,
                pointer,
                "pattern",
                "TN356",
                target,
                f"pattern {pattern!r} uses a backreference, lookaround or \\b",
            )


def optional_and_union_counts(located: Located) -> tuple[int, int]:
    optional = unions = 0
    for _, node, _ in walk(located):
        required = required_of(node)
        optional += sum(1 for name in node.get("properties") or {} if name not in required)
        if "anyOf" in node or isinstance(node.get("type"), list):
            unions += 1
    return optional, unions


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


def first_recursive_ref(located: Located) -> tuple[str, str] | None:
    from ..bundle import inline

    try:
        inline(located)
    except Cycle as cycle:
        return cycle.pointer.removesuffix("/$ref"), cycle_text(located, cycle)
    return None
