"""Transform `strictify` (openai, openai_responses, anthropic): the schema made strict-mode valid
(every object closed, every optional property required and nullable) and the tool sent with
`strict: true`; or, when strict mode cannot carry the tool without changing what it accepts, the
reason, so the tool goes out non-strict instead.

The line it draws: strict mode may hold the model to less than the spec (a format or a bound
moved into a description; the argument model still enforces it), never to something the spec
does not ask, so no call the spec allows becomes impossible. A value of any type, an object that
takes properties it does not name, an array of any items cannot be written in strict mode
without forbidding calls the spec allows: such a tool is sent non-strict (TN223).

`$defs`/`definitions` are schemas like any other: objects there are closed, their optional
properties made nullable, and the run-time map of "a null here means absent" follows `$ref`s
into them (argmaps.py).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from toolnexus_gen.ir import Located
from toolnexus_gen.targets.argmaps import ArgMap, argument_map
from toolnexus_gen.targets.rules import is_object, required_of, types_of
from toolnexus_gen.targets.transforms import merge_all_of, rewrite, wrap_ref
from toolnexus_gen.toolspec.bundle import ANNOTATIONS, walk
from toolnexus_gen.toolspec.pointer import join_pointer, resolve

# Keywords strict mode does not take: describe removes them (loosening, never forbidding), so
# what stands under them does not decide whether the tool can be strict.
REMOVED_IN_STRICT = frozenset(
    {"not", "if", "then", "else", "dependentSchemas", "propertyNames", "contains"}
)
TYPED = frozenset({"type", "anyOf", "oneOf", "$ref", "enum", "const"})
# Keywords that say an object without named properties still takes some (free-form, its keys
# or count constrained): at the root too, where an object with none of them is a tool without
# arguments, such an object cannot be closed to no properties at all.
TAKES_PROPERTIES = frozenset(
    {"propertyNames", "minProperties", "dependentRequired", "dependentSchemas"}
    | {"if", "then", "else", "not", "unevaluatedProperties"}
)
SHAPED_ELSEWHERE = frozenset({"anyOf", "oneOf", "$ref", "allOf"})  # an object's shape in branches
_NOTHING = object()


def normalize(located: Located) -> Located:
    """What strict mode needs written differently, rewritten without any change of meaning: an
    `allOf` merged into its node where that is exact (OpenAI's own SDK collapses a single one),
    a `$ref` with siblings wrapped as a one-branch `anyOf` (strict mode takes nothing beside a
    `$ref`)."""

    def fix(node: dict[str, Any], pointer: str, result: Located) -> dict[str, Any]:
        if "allOf" in node:
            node = merge_all_of(node, pointer, result) or node
        ref = node.get("$ref")
        if isinstance(ref, str) and len(node) > 1:
            target = resolve(result.schema, unquote(ref[1:]), None) if ref[:1] == "#" else None
            if isinstance(target, dict):  # what the target says already need not stand beside
                node = {
                    k: v
                    for k, v in node.items()
                    if k in ANNOTATIONS or k == "$ref" or target.get(k, _NOTHING) != v
                }
            if len(node) > 1:
                node = wrap_ref(node) or node
        return node

    return rewrite(located, fix)


def blocker(located: Located) -> tuple[str, str] | None:
    """(bundled pointer, why) of the first node strict mode cannot carry without forbidding
    calls the spec allows; None when the tool can be strict. Run on the normalized schema."""
    for pointer, node, path in walk(located):
        if set(path) & REMOVED_IN_STRICT:
            continue
        if not TYPED & set(node):
            what = "a value of any type (no type)" if "allOf" not in node else "an allOf"
            return pointer, f"{what}: strict mode needs one type per value"
        if is_object(node):
            extra = node.get("additionalProperties")
            for keyword in ("additionalProperties", "unevaluatedProperties"):
                if node.get(keyword) not in (None, False):
                    return pointer, (
                        f"an object that takes other properties ({keyword}: "
                        f"{'true' if node[keyword] is True else 'a schema'}): strict mode "
                        "closes every object"
                    )
            if "patternProperties" in node:
                return pointer, (
                    "an object that takes properties by pattern (patternProperties): strict mode "
                    "closes every object"
                )
            if not node.get("properties") and SHAPED_ELSEWHERE & set(node):
                return pointer, (
                    "an object whose properties are in its branches (anyOf, oneOf, $ref beside "
                    "type): strict mode closes the object itself"
                )
            unnamed = sorted(set(required_of(node)) - set(node.get("properties") or {}), key=str)
            if unnamed:
                return pointer, (
                    f"an object that requires properties it does not name ({unnamed}): strict "
                    "mode closes every object"
                )
            free = sorted(TAKES_PROPERTIES & set(node))
            if not node.get("properties") and extra is None and (pointer or free):
                what = f" ({', '.join(free)})" if free else ""
                return pointer, (
                    f"an object without named properties that takes some (a free-form object"
                    f"{what}): strict mode would close it to no properties at all"
                )
        if "array" in types_of(node) and node.get("items", True) is True:
            return pointer, "an array of any items (no items): strict mode needs a type per item"
    return None


def strictify(located: Located) -> tuple[Located, ArgMap, dict[str, ArgMap]]:
    """The normalized schema made strict: every object closed, every optional property required
    and nullable. Returns it with the map of the properties made nullable (argmaps.py: payload
    True where strictify made the property nullable) and the maps of recursive refs."""
    root = located.schema
    judged: dict[str, bool] = {}  # accepts_null's answer for each $ref, for the whole schema

    def made_nullable(node: dict[str, Any], name: str, child: Any) -> tuple[str, Any] | None:
        if name in required_of(node) or accepts_null(child, root, judged):
            return None
        return name, True

    nulls, refs = argument_map(root, made_nullable, lambda name: False)

    def close(node: dict[str, Any], pointer: str, result: Located) -> dict[str, Any]:
        properties = node.get("properties")
        if isinstance(properties, dict):
            required = required_of(node)
            made = {}
            for name, child in properties.items():
                if name not in required and not accepts_null(child, root, judged):
                    place = join_pointer(f"{pointer}/properties", name)
                    child = result.mark(_nullable(child), result.moved.get(id(child), place))
                made[name] = child
            out = {**node, "properties": made, "required": list(made)}
            out.setdefault("additionalProperties", False)
            return out
        if node.get("type") == "object" and node.get("additionalProperties", False) is False:
            # closed with no properties (a tool without arguments, `{}` only): written out in
            # full, as OpenAI's strict mode wants it ("object schema missing properties")
            return {**node, "properties": {}, "required": [], "additionalProperties": False}
        return node

    return rewrite(located, close), nulls, refs


# Keywords beside an anyOf that a null could fail (the others only annotate, or apply to one type).
_NULL_CAN_FAIL = frozenset({"type", "enum", "const", "$ref", "not", "allOf", "oneOf", "if"})


def _nullable(schema: Any) -> Any:
    """The schema that also takes null, as strict mode writes it: `type: [T, "null"]`, a null
    branch added to an anyOf, or `anyOf: [schema, {type: null}]`."""
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if isinstance(kind, str) and "$ref" not in schema and "enum" not in schema:
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list) and "enum" not in schema:
        return {**schema, "type": [*kind, "null"]}
    branches = schema.get("anyOf")
    if isinstance(branches, list) and not _NULL_CAN_FAIL & set(schema):
        return {**schema, "anyOf": [*branches, {"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def accepts_null(schema: Any, root: Any, refs: dict[str, bool] | None = None) -> bool:
    """Whether `null` is a valid value of the schema: every constraint it states lets null
    through (through $refs, each judged once in `refs`, {ref: answer}, so that a graph of
    definitions costs its size; a ref back into one being judged says nothing; a schema that
    states none takes anything)."""
    refs = {} if refs is None else refs
    if not isinstance(schema, dict):
        return schema is True
    if "type" in schema and "null" not in types_of(schema):
        return False
    if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
        return False
    if "const" in schema and schema["const"] is not None:
        return False
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#"):
        if ref not in refs:
            refs[ref] = True  # a loop back here says nothing
            refs[ref] = accepts_null(resolve(root, unquote(ref[1:]), None), root, refs)
        if not refs[ref]:
            return False
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list) and not any(accepts_null(b, root, refs) for b in branches):
            return False
    branches = schema.get("allOf")
    return not isinstance(branches, list) or all(accepts_null(b, root, refs) for b in branches)
