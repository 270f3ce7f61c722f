"""`name_aliases = true`: a tool or property name a target rejects gets, in that target's file
only, a deterministic alias the target accepts (`github.create_issue` -> `github_create_issue`,
`$meta` -> `_meta`, `año` -> `ano`; an over-long name is shortened with a stable hash suffix).

The generated dispatch table carries the maps back (ALIASES, ARGUMENT_ALIASES), and the runtime
translates every call before validation, so handlers only ever see the spec's names. Two tools
whose aliases meet in one file are an error naming both (never a silent suffix); two properties
of one object that meet get a hash suffix, since both are in the same spec.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any

from toolnexus_gen.ir import Located
from toolnexus_gen.spec.pointer import join_pointer

# A property map: {alias: [original name, map of the property's own properties]}
ArgumentMap = dict[str, list[Any]]


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]


def make_alias(name: str, pattern: str, max_length: int, keep: str = "") -> str:
    """A name matching `pattern`: accents folded, other characters outside [A-Za-z0-9_{keep}]
    become `_`, a leading digit gets `_` before it, too long is cut with a hash suffix."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    alias = re.sub(rf"[^A-Za-z0-9_{re.escape(keep)}]", "_", folded) or "_"
    if alias[0].isdigit():
        alias = "_" + alias
    if len(alias) > max_length:
        alias = alias[: max_length - 9] + "_" + _digest(name)
    if not re.fullmatch(pattern, alias):
        alias = ("t_" + _digest(name))[:max_length]
    return alias


def alias_properties(
    located: Located, pattern: re.Pattern[str], max_length: int, keep: str
) -> tuple[Located, ArgumentMap, list[tuple[str, str, str]]]:
    """The schema with every property name `pattern` rejects renamed (its `required` entries
    too), the map back, and (original pointer, name, alias) of each renaming."""
    renamed: list[tuple[str, str, str]] = []
    result = located.derive(located.schema)

    def rename(node: Any, pointer: str) -> tuple[Any, ArgumentMap]:
        if isinstance(node, list):
            items = [rename(item, f"{pointer}/{i}") for i, item in enumerate(node)]
            merged: ArgumentMap = {}
            for _, found in items:
                merged.update(found)
            return [item for item, _ in items], merged
        if not isinstance(node, dict):
            return node, {}
        pointer = located.moved.get(id(node), pointer)
        out: dict[str, Any] = {}
        mapping: ArgumentMap = {}
        changes: dict[str, str] = {}
        properties = node.get("properties")
        if isinstance(properties, dict):
            taken = {name for name in properties if pattern.fullmatch(name)}
            new_properties: dict[str, Any] = {}
            for name, sub in properties.items():
                where = join_pointer(f"{pointer}/properties", name)
                child, inner = rename(sub, where)
                alias = name
                if not pattern.fullmatch(name):
                    alias = make_alias(name, pattern.pattern, max_length, keep)
                    if alias in taken:
                        alias = make_alias(
                            f"{alias[: max_length - 9]}_{_digest(name)}",
                            pattern.pattern,
                            max_length,
                            keep,
                        )
                    taken.add(alias)
                    changes[name] = alias
                    renamed.append((where, name, alias))
                    result.mark(child, where)
                new_properties[alias] = child
                if alias != name or inner:
                    mapping[alias] = [name, inner]
        for key, value in node.items():
            if key == "properties" and isinstance(properties, dict):
                out[key] = new_properties
            elif key == "required" and isinstance(value, list) and changes:
                out[key] = [changes.get(item, item) for item in value]
            elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties"):
                out[key], inner = rename(value, f"{pointer}/{key}")
                for alias, (name, sub) in inner.items():
                    mapping.setdefault(alias, [name, {}])[1].update(sub)
            elif key in ("$defs", "definitions") and isinstance(value, dict):
                out[key] = {
                    k: rename(v, join_pointer(f"{pointer}/{key}", k))[0] for k, v in value.items()
                }
            else:
                out[key] = value
        return result.mark(out, pointer), mapping

    schema, mapping = rename(located.schema, "")
    result.schema = schema
    return result, mapping, renamed
