"""Maps over a call's arguments that the runtime follows key by key: strictify's "a null here means
absent" and name_aliases' "this key is that property". Both are built from the schema a target
emits, through `$ref`s at any depth, so a `$defs` object counts exactly as one written inline.

The format (schemas/aliases.json; read by toolnexus_runtime.core):

    MAP   = {key: ENTRY}                      key: a property name as the provider's file sends it
    ENTRY = [payload, MAP]                    MAP: the map of that property's value (of each item,
          | [payload, MAP, [REF, ...]]        for a list), merged over anyOf/oneOf/allOf branches
    REFS  = {REF: MAP}                        only when a schema is recursive

`payload` is what the map is for (strictify: whether the property was made nullable; aliases:
the spec's name). A `$ref` is expanded into the map it points to, so a runtime that knows only
`[payload, MAP]` follows every non-recursive schema. A ref back into a schema being expanded (a
tree of nodes) cannot be expanded: the entry then names it (REF: the JSON pointer of its target,
"" for the root) and the value's map is REFS[REF] for each REF, updated with the entry's own MAP.
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


def argument_map(
    schema: dict[str, Any], entry: EntryFn, default: Callable[[str], Any]
) -> tuple[ArgMap, dict[str, ArgMap]]:
    """The map of a call's arguments under `schema`, and the maps of recursive refs by pointer.

    `default(name)` is the payload of a property that needs an entry only for its value's map."""
    refs: dict[str, ArgMap] = {}
    recursive: set[str] = set()

    def of(node: Any, stack: tuple[str, ...]) -> tuple[ArgMap, list[str]]:
        """The map of a value matching node, and the recursive refs it holds."""
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

    root, _ = of(schema, ("",))
    if "" in recursive:
        refs[""] = root
    return root, dict(sorted(refs.items()))


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
