"""Maps over a call's arguments that the runtime follows key by key: strictify's "a null here means
absent" and name_aliases' "this key is that property". Both are built from the schema a target
emits, through `$ref`s at any depth, so a `$defs` object counts exactly as one written inline.

The format (schemas/aliases.json; read by toolnexus_runtime.core):

    MAP   = {key: ENTRY}                      key: a property name as the provider's file sends it
    ENTRY = [payload, MAP]                    MAP: the map of that property's value (of each item,
          | [payload, MAP, [REF, ...]]        for a list), merged over anyOf/oneOf/allOf branches
    REFS  = {REF: MAP}                        definitions several refs name, and recursive ones

`payload` is what the map is for (strictify: whether the property was made nullable; aliases:
the spec's name). A `$ref` to a definition only one ref names is expanded into the map it points
to. A definition several refs name is mapped once, into REFS, and a ref back into a schema being
expanded (a tree of nodes) cannot be expanded: the entry then names it (REF: the JSON pointer of
its target, "" for the root) and the value's map is REFS[REF] for each REF, updated with the
entry's own MAP. So the map grows with the schema, never with the paths through its `$ref`s (a
DAG of definitions that each name the next twice would otherwise double at every level).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from toolnexus_gen.toolspec.pointer import resolve

ArgMap = dict[str, list[Any]]
# (object node, property name, property schema) -> (key in the map, payload) when the property
# itself needs an entry; None when only its value's map might.
EntryFn = Callable[[dict[str, Any], str, Any], "tuple[str, Any] | None"]
BRANCHES = ("anyOf", "oneOf", "allOf", "prefixItems")
DATA = ("enum", "const", "default", "examples")  # values, not schemas


def argument_map(
    schema: dict[str, Any], entry: EntryFn, default: Callable[[str], Any]
) -> tuple[ArgMap, dict[str, ArgMap]]:
    """The map of a call's arguments under `schema`, and the maps of shared or recursive refs by
    pointer.

    `default(name)` is the payload of a property that needs an entry only for its value's map.
    Each definition is mapped once: one that a single `$ref` names is expanded in place; one that
    several name (or that reaches itself) is mapped once into REFS and named by each entry, so the
    work and the map grow with the schema, not with the paths through its `$ref`s."""
    refs: dict[str, ArgMap] = {}
    recursive: set[str] = set()
    uses = _uses(schema)
    # a definition several refs name -> the refs an entry names for it (itself when its own map
    # says anything, and those its value is, as a whole, closed over); [] when it says nothing
    named: dict[str, list[str]] = {}

    def shared(target: str, stack: tuple[str, ...]) -> list[str]:
        if target not in named:
            named[target] = []  # a loop back here while it is mapped is a recursive ref
            inner, more = of(resolve(schema, target, None), (*stack, target))
            if inner:
                refs[target] = inner
            named[target] = sorted(
                {r for r in more if r != target} | ({target} if inner else set())
            )
        return named[target]

    def of(node: Any, stack: tuple[str, ...]) -> tuple[ArgMap, list[str]]:
        """The map of a value matching node, and the shared or recursive refs it holds."""
        if not isinstance(node, dict):
            return {}, []
        found: ArgMap = {}
        pending: list[str] = []
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            target = unquote(ref[1:])
            if target in stack:
                recursive.add(target)
                pending.append(target)
            elif uses.get(target, 0) > 1 and target:
                pending += shared(target, stack)
            else:
                inner, more = of(resolve(schema, target, None), (*stack, target))
                if target in recursive:
                    refs[target] = inner
                _merge(found, inner)
                pending += more
        properties = node.get("properties")
        if isinstance(properties, dict):
            for name, child in properties.items():
                own = entry(node, name, child)
                inner, more = of(child, stack)
                if own is None and not inner and not more:
                    continue
                key, payload = own if own is not None else (name, default(name))
                made: list[Any] = [payload, inner, sorted(set(more))] if more else [payload, inner]
                _merge(found, {key: made})
        for keyword in ("items", *BRANCHES):
            value = node.get(keyword)
            for child in value if isinstance(value, list) else [value]:
                inner, more = of(child, stack)
                _merge(found, inner)
                pending += more
        return found, pending

    root, more = of(schema, ("",))
    if "" in recursive:
        refs[""] = root
    for target in sorted(set(more) - {""}):  # the root's value as a whole is a shared one
        _merge(root, _copied(refs.get(target, {})))
    for target in recursive - set(refs):  # a loop whose map says nothing
        refs[target] = {}
    return root, dict(sorted(refs.items()))


def _uses(schema: Any) -> dict[str, int]:
    """How many `$ref`s name each local target (by unescaped pointer)."""
    count: dict[str, int] = {}
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#"):
                target = unquote(ref[1:])
                count[target] = count.get(target, 0) + 1
            stack.extend(v for k, v in node.items() if k not in DATA)
    return count


def _copied(argmap: ArgMap) -> ArgMap:
    return {key: [e[0], _copied(e[1]), *e[2:]] for key, e in argmap.items()}


def _merge(into: ArgMap, other: ArgMap) -> None:
    """Entries of one value schema's branches together: payloads that mark win (True over False),
    maps merge, refs add up."""
    for key, entry in other.items():
        mine = into.get(key)
        if mine is None:
            into[key] = [entry[0], dict(entry[1]), *entry[2:]]
            continue
        if entry[0] is True:
            mine[0] = True
        _merge(mine[1], entry[1])
        refs = sorted({*(mine[2] if len(mine) > 2 else ()), *(entry[2] if len(entry) > 2 else ())})
        if refs:
            del mine[2:]
            mine.append(refs)
