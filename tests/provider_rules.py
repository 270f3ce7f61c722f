"""Each provider file judged by the providers' documented schema rules (shared/research/providers.md,
section 9), written here apart from the generator's own checks, for the files whose schema an SDK
types as a plain dict. `violations(files)` lists every rule a file breaks (empty: accepted)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

GEMINI_KEYWORDS = {
    "type", "format", "title", "description", "nullable", "enum", "default", "example", "items",
    "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
    "properties", "required", "minProperties", "maxProperties", "propertyOrdering", "anyOf",
}  # fmt: skip
GEMINI_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}
OPENAI_STRICT_FORBIDDEN = {
    "allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
    "propertyNames", "patternProperties",
}  # fmt: skip
OPENAI_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6"}
OPENAI_FORMATS |= {"uuid"}
ANTHROPIC_FORMATS = OPENAI_FORMATS | {"uri"}
ANTHROPIC_STRICT_UNSUPPORTED = {
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
    "maxLength",
}  # fmt: skip
ANTHROPIC_PROPERTY = re.compile(r"[a-zA-Z0-9_.-]{1,64}")
SCHEMA_VALUED = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def nodes(schema: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object under `schema`, with its JSON pointer."""
    if not isinstance(schema, dict):
        return
    yield where, schema
    for key in SCHEMA_VALUED:
        yield from nodes(schema.get(key), f"{where}/{key}")
    for key in SCHEMA_LISTS:
        for i, child in enumerate(schema.get(key) or []):
            yield from nodes(child, f"{where}/{key}/{i}")
    for key in SCHEMA_MAPS:
        value = schema.get(key)
        if isinstance(value, dict):
            for name, child in value.items():
                yield from nodes(child, f"{where}/{key}/{name}")


def _types(node: dict[str, Any]) -> set[str]:
    kind = node.get("type")
    return {kind} if isinstance(kind, str) else set(kind) if isinstance(kind, list) else set()


def _is_object(node: dict[str, Any]) -> bool:
    return "object" in _types(node) or (not _types(node) and "properties" in node)


def _resolve(root: Any, ref: str) -> Any:
    node = root
    for part in ref.removeprefix("#").split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def gemini_parameters(schema: Any, where: str) -> list[str]:
    """Gemini `parameters` (the Developer API's OpenAPI `Schema` subset)."""
    found = []
    for at, node in nodes(schema):
        place = f"{where}{at}"
        found += [f"{place}: keyword {k!r}" for k in node if k not in GEMINI_KEYWORDS]
        kind = node.get("type")
        if kind is None and "anyOf" not in node:
            found.append(f"{place}: no type")
        elif kind is not None and (not isinstance(kind, str) or kind not in GEMINI_TYPES):
            found.append(f"{place}: type {kind!r}")
        if _is_object(node) and not node.get("properties"):
            found.append(f"{place}: OBJECT without properties")
        if kind == "array" and "items" not in node:
            found.append(f"{place}: array without items")
        enum = node.get("enum")
        if enum is not None and not all(isinstance(v, str) and v for v in enum):
            found.append(f"{place}: enum {enum!r}")
        if kind == "string" and node.get("format") not in (None, "enum", "date-time"):
            found.append(f"{place}: format {node['format']!r}")
    return found


def gemini_json_schema(schema: Any, where: str) -> list[str]:
    """Gemini `parametersJsonSchema`: an object; $refs resolve, with only $-keys, description
    and default beside them."""
    found = (
        [] if isinstance(schema, dict) and schema.get("type") == "object" else [f"{where}: root"]
    )
    for at, node in nodes(schema):
        ref = node.get("$ref")
        if ref is None:
            continue
        if not isinstance(ref, str) or _resolve(schema, ref) is None:
            found.append(f"{where}{at}: unresolved $ref {ref!r}")
        extra = [k for k in node if not k.startswith("$") and k not in ("description", "default")]
        if extra:
            found.append(f"{where}{at}: $ref beside {extra}")
    return found


def gemini(value: Any) -> list[str]:
    found = []
    for declaration in value[0]["functionDeclarations"]:
        name = declaration["name"]
        fields = {"parameters", "parametersJsonSchema"} & set(declaration)
        if len(fields) > 1:
            found.append(f"{name}: parameters and parametersJsonSchema together")
        if {"response", "responseJsonSchema"} <= set(declaration):
            found.append(f"{name}: response and responseJsonSchema together")
        if "parameters" in declaration:
            found += gemini_parameters(declaration["parameters"], f"{name}:parameters")
        if "response" in declaration:
            found += gemini_parameters(declaration["response"], f"{name}:response")
        if "parametersJsonSchema" in declaration:
            schema = declaration["parametersJsonSchema"]
            found += gemini_json_schema(schema, f"{name}:parametersJsonSchema")
    return found


def openai_schema(schema: Any, strict: bool, where: str) -> list[str]:
    found = []
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return [f"{where}: root is not type object"]
    if "properties" not in schema:
        found.append(f"{where}: object schema missing properties")
    found += [
        f"{where}: {k} at the root"
        for k in ("anyOf", "oneOf", "allOf", "enum", "not")
        if k in schema
    ]
    for at, node in nodes(schema):
        place = f"{where}{at}"
        if "array" in _types(node) and "items" not in node:
            found.append(f"{place}: array schema missing items")
        if not strict:
            continue
        if _is_object(node):
            if node.get("additionalProperties") is not False:
                found.append(f"{place}: additionalProperties must be false")
            if set(node.get("properties") or {}) - set(node.get("required") or []):
                found.append(f"{place}: required must list every property")
        found += [f"{place}: {k!r} not permitted" for k in OPENAI_STRICT_FORBIDDEN if k in node]
        if "$ref" in node and len(node) > 1:
            found.append(f"{place}: $ref with siblings")
        if not {"type", "anyOf", "$ref", "enum", "const"} & set(node):
            found.append(f"{place}: schema must have a 'type' key")
        if isinstance(node.get("format"), str) and node["format"] not in OPENAI_FORMATS:
            found.append(f"{place}: format {node['format']!r}")
    return found


def openai(value: Any) -> list[str]:
    found = []
    for entry in value:
        function = entry["function"]
        strict = function.get("strict") is True
        found += openai_schema(function["parameters"], strict, function["name"])
    return found


def openai_responses(value: Any) -> list[str]:
    found = []
    for entry in value:
        found += openai_schema(entry["parameters"], entry["strict"] is True, entry["name"])
    return found


def _recursive(schema: dict[str, Any]) -> bool:
    def visit(node: Any, stack: tuple[str, ...]) -> bool:
        for _, sub in nodes(node):
            ref = sub.get("$ref")
            if isinstance(ref, str):
                if ref in stack or visit(_resolve(schema, ref), (*stack, ref)):
                    return True
        return False

    return visit({k: v for k, v in schema.items() if k not in ("$defs", "definitions")}, ("#",))


def anthropic(value: Any) -> list[str]:
    found = []
    for entry in value:
        name, schema, strict = entry["name"], entry["input_schema"], entry.get("strict") is True
        if schema.get("type") != "object":
            found.append(f"{name}: root is not type object")
        found += [f"{name}: {k} at the root" for k in ("anyOf", "oneOf", "allOf") if k in schema]
        for at, node in nodes(schema):
            place = f"{name}{at}"
            bad = [p for p in node.get("properties") or {} if not ANTHROPIC_PROPERTY.fullmatch(p)]
            found += [f"{place}: property key {p!r}" for p in bad]
            if not strict:
                continue
            if _is_object(node) and node.get("additionalProperties") is not False:
                found.append(f"{place}: additionalProperties must be false")
            found += [
                f"{place}: {k!r} unsupported" for k in ANTHROPIC_STRICT_UNSUPPORTED if k in node
            ]
            if isinstance(node.get("minItems"), int) and node["minItems"] > 1:
                found.append(f"{place}: minItems {node['minItems']}")
            if isinstance(node.get("format"), str) and node["format"] not in ANTHROPIC_FORMATS:
                found.append(f"{place}: format {node['format']!r}")
        if strict and _recursive(schema):
            found.append(f"{name}: recursive schema in strict mode")
    return found


def root_object(schemas: list[Any], where: str) -> list[str]:
    return [
        f"{where}[{i}]: root is not type object"
        for i, s in enumerate(schemas)
        if s.get("type") != "object"
    ]


JUDGES = {
    "gemini": gemini,
    "openai": openai,
    "openai_responses": openai_responses,
    "anthropic": anthropic,
    "mcp": lambda value: root_object([e["inputSchema"] for e in value], "mcp"),
    "bedrock": lambda value: root_object(
        [t["toolSpec"]["inputSchema"]["json"] for t in value["tools"]], "bedrock"
    ),
}


def violations(files: dict[str, Any]) -> list[str]:
    """Every documented rule the provider files in {target: parsed JSON} break."""
    found = []
    for target, value in files.items():
        if target in JUDGES:
            found += [f"{target}: {v}" for v in JUDGES[target](value)]
    return found
