"""`name_aliases = true`: a tool or property name a target rejects gets, in that target's file
only, a deterministic alias the target accepts (`github.create_issue` -> `github_create_issue`,
`$meta` -> `_meta`, `año` -> `ano`; an over-long name is shortened with a stable hash suffix).

schemas/aliases.json carries the maps back (argmaps.py: through `$ref`s at any depth), and the
runtime translates every call before validation, so handlers only ever see the spec's names. Two tools
whose aliases meet in one file are an error naming both (never a silent suffix); two properties
of one object that meet get a hash suffix, since both are in the same spec.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any

from toolnexus_gen.ir import Located
from toolnexus_gen.targets.argmaps import ArgMap, argument_map
from toolnexus_gen.toolspec.bundle import ONE_SCHEMA, SCHEMA_LISTS, SCHEMA_MAPS
from toolnexus_gen.toolspec.pointer import join_pointer

# A property map (argmaps.py): {alias: [original name, map of the property's value], ...}, and
# the maps of recursive refs
ArgumentMap = tuple[ArgMap, dict[str, ArgMap]]


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
    back: dict[int, dict[str, str]] = {}  # id of a renamed object: {alias: name}

    def rename(node: Any, pointer: str) -> Any:
        if isinstance(node, list):
            return [rename(item, f"{pointer}/{i}") for i, item in enumerate(node)]
        if not isinstance(node, dict):
            return node
        pointer = located.moved.get(id(node), pointer)
        out: dict[str, Any] = {}
        changes: dict[str, str] = {}
        properties = node.get("properties")
        new_properties: dict[str, Any] = {}
        if isinstance(properties, dict):
            taken = {name for name in properties if pattern.fullmatch(name)}
            for name, sub in properties.items():
                where = join_pointer(f"{pointer}/properties", name)
                child = rename(sub, where)
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
                    where = result.moved.get(id(child), where)
                    renamed.append((where, name, alias))
                    result.mark(child, where)
                new_properties[alias] = child
        for key, value in node.items():
            if key == "properties" and isinstance(properties, dict):
                out[key] = new_properties
            elif key == "required" and isinstance(value, list) and changes:
                out[key] = [changes.get(item, item) for item in value]
            elif key in ONE_SCHEMA or key in SCHEMA_LISTS:
                out[key] = rename(value, f"{pointer}/{key}")
            elif key in SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {
                    k: rename(v, join_pointer(f"{pointer}/{key}", k)) for k, v in value.items()
                }
            else:
                out[key] = value
        if changes:
            back[id(out)] = {alias: name for name, alias in changes.items()}
        return result.mark(out, pointer)

    result.schema = rename(located.schema, "")

    def entry(node: dict[str, Any], alias: str, child: Any) -> tuple[str, Any] | None:
        name = back.get(id(node), {}).get(alias)
        return None if name is None else (alias, name)

    mapping = argument_map(result.schema, entry, lambda name: name)
    return result, mapping, renamed
