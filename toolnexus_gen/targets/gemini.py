"""Gemini generateContent: ONE `{"functionDeclarations": [...]}` wrapper holding every tool.

Two schema fields (target option `schema_field`): `parameters` (the default; Gemini's OpenAPI
subset, so refs are inlined and the rule set is strict) and `parametersJsonSchema` (JSON Schema,
refs kept).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.ir import Located, Tool, ToolInfo
from toolnexus_gen.targets import rules
from toolnexus_gen.targets.base import NameRule, Target, effective
from toolnexus_gen.targets.reading import (
    Imported,
    ImportError_,
    add_spec,
    leftovers,
    lower_types,
    require,
)
from toolnexus_gen.toolspec.bundle import Cycle, TooLarge, walk
from toolnexus_gen.toolspec.pointer import join_pointer
from toolnexus_gen.toolspec.pointer import resolve as resolve_pointer

NAME = "gemini"
FILE = "schemas/gemini.json"
NAME_RULE = NameRule(
    r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}",
    "must start with a letter or an underscore and contain only a-z, A-Z, 0-9, underscores, dots, colons "
    "and dashes, with a maximum length of 64",
)
MAX_DECLARATIONS = 512  # Gemini API; Vertex allows 128


def json_schema(options: dict[str, Any]) -> bool:
    return bool(options.get("schema_field", "parameters") == "parametersJsonSchema")


def must_inline(options: dict[str, Any]) -> bool:
    return not json_schema(options)


def fallback(options: dict[str, Any]) -> dict[str, Any] | None:
    """Under profile = "reach", a declaration that `parameters` cannot carry (even after
    describe) goes out with `parametersJsonSchema` (and `responseJsonSchema`): each declaration
    takes one field or the other, so the others keep `parameters`."""
    return None if json_schema(options) else {**options, "schema_field": "parametersJsonSchema"}


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
            try:
                response = effective(tool, options, must_inline=True, output=True)
            except (
                Cycle,
                TooLarge,
            ):  # check() reports it; profile "reach" sends responseJsonSchema
                response = None
            if response is not None:
                declaration["response"] = response.schema
    return declaration


def check(tool: Tool, located: Located | None, options: dict[str, Any]) -> list[Diagnostic]:
    return list(findings(tool, located, options))


def findings(tool: Tool, located: Located | None, options: dict[str, Any]) -> Iterator[Diagnostic]:
    """check()'s findings one by one, in its order (describe needs only the first few)."""
    yield from NAME_RULE.check(tool, NAME, "TN201")
    if located is not None:
        if json_schema(options):
            yield from json_schema_findings(located)
        elif not takes_no_arguments(located.schema):  # else no parameters key is written
            yield from parameters_findings(located)
    if tool.output_located is not None and not json_schema(options):
        target = "gemini (response)"
        try:
            response = effective(tool, options, must_inline=True, output=True)
        except Cycle as cycle:
            yield rules.cycle_finding(tool.output_located, cycle, target)
            return
        except TooLarge as big:
            yield rules.too_large_finding(tool.output_located, big, target)
            return
        assert response is not None
        yield from parameters_findings(response, target)


def check_all(tools: list[ToolInfo], options: dict[str, Any]) -> list[Diagnostic]:
    return []


# -- the rules (catalogued in rules.py), on the schema as this target emits it -----------------

KEYWORDS = frozenset(
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
TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
STRING_FORMATS = frozenset({"enum", "date-time"})
PROPERTY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
KEYWORD_TRANSFORMS = {
    "const": "const_to_enum",
    "$schema": "strip_meta",
    "$id": "strip_meta",
    "$comment": "strip_meta",
}


def parameters_findings(
    located: Located, target: str = "gemini (parameters)"
) -> Iterable[Diagnostic]:
    yield from rules.array_items(located, target)
    for pointer, node, path in walk(located):
        for keyword in node:
            if keyword in KEYWORDS:
                continue
            if keyword == "additionalProperties":
                yield rules.finding(
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
            yield rules.finding(
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
            yield rules.finding(
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
        elif isinstance(kind, str) and kind not in TYPES:
            yield rules.finding(located, pointer, "type", "TN311", target, f"unknown type {kind!r}")
        elif (
            kind is None
            and not ({"anyOf", "enum", "const"} & set(node))  # those are reported on their own
            and path
            and path[-1] not in ("$defs", "definitions")
        ):
            yield rules.finding(
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
                yield rules.finding(
                    located,
                    pointer,
                    "enum",
                    "TN312",
                    target,
                    f"enum must hold non-empty strings on a string type; {what} is rejected",
                )
        fmt = node.get("format")
        if isinstance(fmt, str) and kind == "string" and fmt not in STRING_FORMATS:
            yield rules.finding(
                located,
                pointer,
                "format",
                "TN313",
                target,
                f"format {fmt!r} is rejected: only 'enum' and 'date-time' are supported for STRING",
            )
        if rules.is_object(node) and not node.get("properties") and pointer != "":
            yield rules.finding(
                located,
                pointer,
                "properties" if "properties" in node else None,
                "TN314",
                target,
                "an object needs at least one property (should be non-empty for OBJECT type)",
            )
        for name in node.get("properties") or {}:
            if not PROPERTY.fullmatch(name):
                yield rules.finding(
                    located,
                    join_pointer(pointer + "/properties", name),
                    None,
                    "TN319",
                    target,
                    f"property name {name!r} does not match Gemini's "
                    "^[A-Za-z_][A-Za-z0-9_]{0,63}$",
                )


JSON_SUBSET = frozenset(
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


def json_schema_findings(located: Located) -> Iterable[Diagnostic]:
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
                yield rules.finding(
                    located,
                    pointer,
                    extra[0],
                    "TN320",
                    target,
                    f"$ref {ref!r} was set alongside unsupported fields {extra}: only description "
                    "and default may stand next to $ref",
                )
        for keyword in node:
            if keyword not in JSON_SUBSET:
                first, count = ignored.get(keyword, (pointer, 0))
                ignored[keyword] = (first, count + 1)
    for keyword, (pointer, count) in sorted(ignored.items()):
        more = f" (and {count - 1} more)" if count > 1 else ""
        yield rules.finding(
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
        required = rules.required_of(node)
        for name, child in (node.get("properties") or {}).items():
            if name in required:
                yield from mandatory_refs(child, join_pointer(pointer + "/properties", name))
        for keyword in ("allOf",):
            for i, child in enumerate(node.get(keyword) or []):
                yield from mandatory_refs(child, f"{pointer}/{keyword}/{i}")

    def resolve(pointer: str) -> Any:
        return resolve_pointer(schema, pointer, None)

    reported: set[str] = set()

    def visit(target_pointer: str, stack: tuple[str, ...]) -> Iterable[Diagnostic]:
        for ref, at in mandatory_refs(resolve(target_pointer), target_pointer):
            if ref in stack:
                if ref not in reported:
                    reported.add(ref)
                    loop = " -> ".join(
                        rules.place(located, p) for p in (*stack[stack.index(ref) :], ref)
                    )
                    yield rules.finding(
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


# -- import: provider JSON back to specs ------------------------------------------------------


def read(data: Any, out: Imported) -> None:
    """`toolnexus-gen import gemini FILE`: the specs a provider file holds."""
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ImportError_('expected [{"functionDeclarations": [...]}]')
    declarations: list[Any] = []
    for i, wrapper in enumerate(data):
        if isinstance(wrapper, dict) and (
            "functionDeclarations" in wrapper or "function_declarations" in wrapper
        ):
            declarations += (
                wrapper.get("functionDeclarations") or wrapper.get("function_declarations") or []
            )
        elif isinstance(wrapper, dict) and "name" in wrapper:
            declarations.append(wrapper)  # a bare list of declarations
        else:
            out.notes.append(f"tools[{i}]: not a functionDeclarations wrapper; skipped")
    json_schema = False
    for i, entry in enumerate(declarations):
        where = f"functionDeclarations[{i}]"
        require(entry, where, "name")
        schema = entry.get("parametersJsonSchema", entry.get("parameters_json_schema"))
        if schema is not None:
            json_schema = True
        else:
            schema = entry.get("parameters")
            if schema is not None:
                schema = lower_types(schema)
        extra: dict[str, Any] = {}
        output = entry.get("responseJsonSchema", entry.get("response"))
        if output is not None:
            extra["output_schema"] = lower_types(output)
        known = {
            "name",
            "description",
            "parameters",
            "parametersJsonSchema",
            "parameters_json_schema",
            "response",
            "responseJsonSchema",
        }
        add_spec(
            out,
            where,
            entry["name"],
            entry.get("description"),
            schema,
            extra,
            leftovers(entry, known),
        )
    if json_schema:
        out.options["gemini.schema_field"] = "parametersJsonSchema"


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
    fallback=fallback,
    findings=findings,
    hosted=True,
    max_tools=(MAX_DECLARATIONS, "TN318"),
    empty_tools="Gemini rejects a functionDeclarations wrapper without declarations: "
    "tools[0].tool_type: required one_of 'tool_type' must have one initialized field",
)
