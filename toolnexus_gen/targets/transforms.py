"""Opt-in schema transforms that keep the schema's meaning, per target.

Turned on in pyproject.toml, e.g. `[tool.toolnexus-gen.gemini] transforms = ["const_to_enum",
"nullable"]`. A transform rewrites only what it can rewrite without changing what the schema
accepts; anything else is left as written, so the rule that flags it still reports it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from toolnexus_gen.ir import Located
from toolnexus_gen.spec.bundle import (
    ANNOTATIONS,
    ONE_SCHEMA,
    SCHEMA_LISTS,
    SCHEMA_MAPS,
    has_refs,
    inline,
)
from toolnexus_gen.spec.pointer import join_pointer

NodeFn = Callable[[dict[str, Any], str, Located], dict[str, Any]]


def rewrite(located: Located, fn: NodeFn) -> Located:
    """Apply fn to every schema node, children first; unchanged subtrees are shared, not copied."""
    result = located.derive(located.schema)

    def visit(node: Any, pointer: str) -> Any:
        if not isinstance(node, dict):
            return node
        pointer = located.moved.get(id(node), pointer)
        out = dict(node)
        for keyword in ONE_SCHEMA:
            if keyword in node:
                out[keyword] = visit(node[keyword], f"{pointer}/{keyword}")
        for keyword in SCHEMA_LISTS:
            if isinstance(node.get(keyword), list):
                out[keyword] = [
                    visit(child, f"{pointer}/{keyword}/{i}")
                    for i, child in enumerate(node[keyword])
                ]
        for keyword in SCHEMA_MAPS:
            if isinstance(node.get(keyword), dict):
                out[keyword] = {
                    name: visit(child, join_pointer(f"{pointer}/{keyword}", name))
                    for name, child in node[keyword].items()
                }
        changed = any(out[k] is not node[k] for k in node)
        new = fn(out, pointer, result)
        if new is out and not changed:
            return node  # nothing changed below or here: share the original
        if id(new) not in result.moved:
            result.mark(new, pointer)
        return new

    result.schema = visit(located.schema, "")
    return result


def const_to_enum(node: dict[str, Any], pointer: str, located: Located) -> dict[str, Any]:
    """`const: "x"` -> `enum: ["x"]` (with `type: string` when no type is given)."""
    if "const" not in node or not isinstance(node["const"], str):
        return node
    value = node["const"]
    if isinstance(node.get("enum"), list) and value not in node["enum"]:
        return node  # contradictory const and enum: leave it for the author
    out = {k: v for k, v in node.items() if k != "const"}
    out["enum"] = [value]
    out.setdefault("type", "string")
    return out


def nullable(node: dict[str, Any], pointer: str, located: Located) -> dict[str, Any]:
    """`type: [T, "null"]` or `anyOf: [X, {type: null}]` -> Gemini's `nullable: true`."""
    kind = node.get("type")
    if isinstance(kind, list) and len(kind) == 2 and "null" in kind:
        (other,) = [k for k in kind if k != "null"] or ["null"]
        if other != "null":
            return {**node, "type": other, "nullable": True}
    branches = node.get("anyOf")
    if isinstance(branches, list) and any(_is_null(b) for b in branches):
        rest = [b for b in branches if not _is_null(b)]
        siblings = {k: v for k, v in node.items() if k != "anyOf"}
        if len(rest) == 1 and isinstance(rest[0], dict):
            clash = (set(siblings) - ANNOTATIONS) & set(rest[0])
            if not clash and "$ref" not in rest[0]:
                merged = {**rest[0], **siblings, "nullable": True}
                index = next(i for i, b in enumerate(branches) if b is rest[0])
                located.mark(merged, f"{pointer}/anyOf/{index}")
                return merged
        elif len(rest) > 1:
            return {**siblings, "anyOf": rest, "nullable": True}
    return node


def _is_null(branch: Any) -> bool:
    return (
        isinstance(branch, dict)
        and branch.get("type") == "null"
        and not (set(branch) - {"type", "description", "title"})
    )


META = ("$schema", "$id", "$comment")


def strip_meta(node: dict[str, Any], pointer: str, located: Located) -> dict[str, Any]:
    """Drop `$schema`, `$id` and `$comment`: they describe the schema, they do not constrain."""
    if not any(key in node for key in META):
        return node
    return {k: v for k, v in node.items() if k not in META}


NODE_TRANSFORMS: dict[str, NodeFn] = {
    "strip_meta": strip_meta,
    "const_to_enum": const_to_enum,
    "nullable": nullable,
}
# Which transforms each target offers: see registry.py (inline_refs is done by apply(); describe,
# strictify and the name aliases by pipeline/units.py, since they report what they change).


def apply(
    located: Located, transforms: tuple[str, ...] | list[str], *, must_inline: bool
) -> Located:
    """The schema after inlining (when required or asked for) and the chosen node transforms.

    Raises Cycle when must_inline and the schema is recursive. With inline_refs on other targets,
    recursive refs stay refs.
    """
    if must_inline or "inline_refs" in transforms:
        if has_refs(located.schema):
            located = inline(located, keep_recursive=not must_inline)
    for name in NODE_TRANSFORMS:
        if name in transforms:
            located = rewrite(located, NODE_TRANSFORMS[name])
    return located


def strictify(located: Located) -> tuple[Located, dict[str, list[Any]], dict[str, list[Any]]]:
    """Transform `strictify` (openai, openai_responses, anthropic): every object closed, every
    optional property required and nullable, so the schema is strict-mode valid; the tool goes out
    with `strict: true`. Returns the map of the properties made nullable ({name: [made nullable,
    map of its own properties(, the local $refs its value follows)]}) and the same map for each
    `$defs`/`definitions` entry ({"#/$defs/Name": [map, refs]}): at run time a null there means
    "absent", so the spec's default applies, at any depth and through $refs."""
    result = located.derive(located.schema)
    defs: dict[str, list[Any]] = {}

    def nullable_of(schema: Any) -> Any:
        if not isinstance(schema, dict):
            return schema
        kind = schema.get("type")
        if isinstance(kind, str) and "$ref" not in schema and "enum" not in schema:
            return {**schema, "type": [kind, "null"]}
        if isinstance(kind, list):
            return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
        return {"anyOf": [schema, {"type": "null"}]}

    def merge(nulls: dict[str, list[Any]], refs: list[str], inner: Any, inner_refs: Any) -> None:
        for name, (made, sub, *sub_refs) in inner.items():
            entry = nulls.setdefault(name, [made, {}])
            entry[0] = entry[0] or made
            entry[1].update(sub)
            for ref in sub_refs[0] if sub_refs else ():
                if len(entry) == 2:
                    entry.append([])
                if ref not in entry[2]:
                    entry[2].append(ref)
        refs.extend(ref for ref in inner_refs if ref not in refs)

    def visit(node: Any, pointer: str, here: str) -> tuple[Any, dict[str, list[Any]], list[str]]:
        """(the strict node, the map of properties found at it, the local refs it follows);
        `pointer` places the node in the spec for diagnostics, `here` inside this schema."""
        if isinstance(node, list):
            items = [visit(item, f"{pointer}/{i}", f"{here}/{i}") for i, item in enumerate(node)]
            merged: dict[str, list[Any]] = {}
            merged_refs: list[str] = []
            for _, inner, inner_refs in items:
                merge(merged, merged_refs, inner, inner_refs)
            return [item for item, _, _ in items], merged, merged_refs
        if not isinstance(node, dict):
            return node, {}, []
        pointer = located.moved.get(id(node), pointer)
        out: dict[str, Any] = {}
        nulls: dict[str, list[Any]] = {}
        refs: list[str] = []
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                required = set(node.get("required") or [])
                props = {}
                for name, sub in value.items():
                    child, inner, inner_refs = visit(
                        sub,
                        join_pointer(f"{pointer}/properties", name),
                        join_pointer(f"{here}/properties", name),
                    )
                    made = name not in required and not _accepts_null(child)
                    if made:
                        child = result.mark(
                            nullable_of(child), join_pointer(f"{pointer}/properties", name)
                        )
                    props[name] = child
                    if made or inner or inner_refs:
                        nulls[name] = [made, inner, inner_refs] if inner_refs else [made, inner]
                out[key] = props
            elif key in ("$defs", "definitions") and isinstance(value, dict):
                out[key] = {}
                for name, sub in value.items():
                    where = join_pointer(f"{here}/{key}", name)
                    out[key][name], inner, inner_refs = visit(
                        sub, join_pointer(f"{pointer}/{key}", name), where
                    )
                    defs["#" + where] = [inner, inner_refs]
            elif key in ("items", "anyOf", "oneOf", "allOf"):
                out[key], inner, inner_refs = visit(value, f"{pointer}/{key}", f"{here}/{key}")
                merge(nulls, refs, inner, inner_refs)
            else:
                if key == "$ref" and isinstance(value, str) and value.startswith("#/"):
                    refs.append(unquote(value))
                out[key] = value
        if isinstance(out.get("properties"), dict):
            out["required"] = list(out["properties"])
            out.setdefault("additionalProperties", False)
        elif out.get("type") == "object" and "additionalProperties" not in out:
            out["additionalProperties"] = False
            out.setdefault("properties", {})
            out["required"] = []
        return result.mark(out, pointer), nulls, refs

    schema, nulls, _ = visit(located.schema, "", "")
    result.schema = schema
    # Only the defs some ref reaches matter at run time; keep those that say something.
    return result, nulls, {ref: entry for ref, entry in defs.items() if entry[0] or entry[1]}


def _accepts_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_accepts_null(b) for b in schema.get("anyOf") or [])
