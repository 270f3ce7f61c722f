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
from toolnexus_gen.toolspec.bundle import (
    ANNOTATIONS,
    ONE_SCHEMA,
    SCHEMA_LISTS,
    SCHEMA_MAPS,
    has_refs,
    inline,
)
from toolnexus_gen.toolspec.pointer import join_pointer, resolve

NodeFn = Callable[[dict[str, Any], str, Located], dict[str, Any]]


def rewrite(located: Located, fn: NodeFn) -> Located:
    """Apply fn to every schema node, children first (fn never changes the node it is given:
    it returns another); unchanged subtrees are shared, not copied.

    Each node that holds a list or a mapping of schemas, and each node made, has its place
    recorded (`moved`): a later rewrite may move it, and it keeps the place it stood at. One such
    node reached at two places of different pointers becomes one object per place."""
    result = located.derive(located.schema)
    kept: dict[int, str] = {}  # nodes kept as they were, by id: the place each is recorded at

    def visit(node: Any, pointer: str) -> Any:
        if not isinstance(node, dict):
            return node
        pointer = located.moved.get(id(node), pointer)
        out: dict[str, Any] | None = None  # the node with its changed children (made once one is)
        for keyword in ONE_SCHEMA:
            if keyword in node:
                child = node[keyword]
                made = visit(child, f"{pointer}/{keyword}")
                if made is not child:
                    out = dict(node) if out is None else out
                    out[keyword] = made
        holds = False  # a list or a mapping of schemas: its place is recorded (below)
        for keyword in SCHEMA_LISTS:
            children = node.get(keyword)
            if isinstance(children, list):
                holds, changed, items = True, False, []
                for i, child in enumerate(children):
                    made = visit(child, f"{pointer}/{keyword}/{i}")
                    changed = changed or made is not child
                    items.append(made)
                if changed:
                    out = dict(node) if out is None else out
                    out[keyword] = items
        for keyword in SCHEMA_MAPS:
            children = node.get(keyword)
            if isinstance(children, dict):
                holds, changed, named = True, False, {}
                for name, child in children.items():
                    made = visit(child, join_pointer(f"{pointer}/{keyword}", name))
                    changed = changed or made is not child
                    named[name] = made
                if changed:
                    out = dict(node) if out is None else out
                    out[keyword] = named
        new = fn(node if out is None else out, pointer, result)
        if new is node:
            if not holds:
                return node  # its place follows from its parent's, wherever that goes
            if kept.setdefault(id(node), pointer) != pointer:
                new = dict(node)  # the same object at another place: a copy of its own
            elif id(node) in result.moved:
                return node
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


# -- rewrites that keep the meaning exactly (used by strictify and describe) ---------------------

# Keywords whose meaning depends on other keywords of the same schema object (the dependents,
# and the group they read): a branch holding a dependent merges only when no other part holds
# anything of its group.
_SIBLING_BOUND = (
    (
        frozenset({"additionalProperties", "unevaluatedProperties"}),
        frozenset({"properties", "patternProperties"}),
    ),
    (frozenset({"items", "unevaluatedItems"}), frozenset({"prefixItems"})),
    (frozenset({"then", "else"}), frozenset({"if"})),
)


MAX_MERGE = 8  # allOfs inside allOfs (through $refs, which may loop)


def merge_all_of(
    node: dict[str, Any], pointer: str, located: Located, depth: int = 0
) -> dict[str, Any] | None:
    """`{"allOf": [A, B], ...}` as one schema, when that keeps the meaning exactly: no keyword
    clashes (equal values, disjoint properties and `required` lists excepted; the node's own
    annotations win), and nothing whose meaning depends on its siblings is split between
    branches. A branch that is only a local `$ref` stands for what it points to (pydantic v1's
    `{"allOf": [{"$ref": ...}], "description": ...}`, an OpenAPI base schema). None when it cannot
    be merged. Values taken from a branch keep their place."""
    branches = node.get("allOf")
    if not isinstance(branches, list) or not all(isinstance(b, dict) for b in branches):
        return None
    places = [f"{pointer}/allOf/{i}" for i in range(len(branches))]
    branches = list(branches)
    for i, branch in enumerate(branches):  # a bare local $ref: what it points to
        ref = branch.get("$ref")
        if isinstance(ref, str) and ref.startswith("#") and not set(branch) - {"$ref"}:
            target = resolve(located.schema, unquote(ref[1:]), None)
            if isinstance(target, dict) and not {"$defs", "definitions"} & set(target):
                branches[i], places[i] = target, located.moved.get(id(target), unquote(ref[1:]))
    parts = [{k: v for k, v in node.items() if k != "allOf"}, *branches]
    for dependents, group in _SIBLING_BOUND:
        holders = [i for i, part in enumerate(parts) if (dependents | group) & set(part)]
        if len(holders) > 1 and any(dependents & set(parts[i]) for i in holders):
            return None
    if any("$id" in branch or "$anchor" in branch for branch in branches):
        return None  # a branch with its own base: its refs mean something else inside it
    merged = dict(parts[0])
    for branch, at in zip(branches, places, strict=True):
        for key, value in branch.items():
            place = f"{at}/{key}"
            if key not in merged:
                merged[key] = _keep_place(located, key, value, place)
            elif key in ANNOTATIONS:
                continue  # annotations do not constrain: the outer one stays
            elif key == "properties" and isinstance(value, dict):
                mine = merged[key]
                if not isinstance(mine, dict) or set(mine) & set(value):
                    return None
                merged[key] = {**mine, **_keep_place(located, key, value, place)}
            elif key == "required" and isinstance(value, list):
                mine = merged[key]
                if not isinstance(mine, list):
                    return None
                merged[key] = [*mine, *(name for name in value if name not in mine)]
            elif merged[key] != value:
                return None
    if "allOf" in merged:  # a branch's own allOf (through a $ref): merged in turn
        return merge_all_of(merged, pointer, located, depth + 1) if depth < MAX_MERGE else None
    return merged


def _keep_place(located: Located, keyword: str, value: Any, place: str) -> Any:
    """Record where the schemas inside a keyword's value came from (they move to another node)."""
    if keyword in ONE_SCHEMA:
        located.mark(value, place)
    elif keyword in SCHEMA_LISTS and isinstance(value, list):
        for i, child in enumerate(value):
            located.mark(child, f"{place}/{i}")
    elif keyword in SCHEMA_MAPS and isinstance(value, dict):
        for name, child in value.items():
            located.mark(child, join_pointer(place, name))
    return value


def wrap_ref(node: dict[str, Any]) -> dict[str, Any] | None:
    """`{"$ref": X, "description": ..., "minLength": 3}` -> `{"description": ..., "minLength": 3,
    "anyOf": [{"$ref": X}]}`: a one-branch anyOf means the same as the $ref beside its siblings,
    and providers that allow nothing beside a $ref take it. None when the node has an anyOf."""
    if not isinstance(node.get("$ref"), str) or "anyOf" in node:
        return None
    return {
        ("anyOf" if k == "$ref" else k): ([{"$ref": v}] if k == "$ref" else v)
        for k, v in node.items()
    }


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
        # Definitions nothing refers to go too: they mean nothing once every ref is inlined.
        schema = located.schema
        if has_refs(schema) or "$defs" in schema or "definitions" in schema:
            located = inline(located, keep_recursive=not must_inline)
    for name in NODE_TRANSFORMS:
        if name in transforms:
            located = rewrite(located, NODE_TRANSFORMS[name])
    return located
