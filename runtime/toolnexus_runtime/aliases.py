"""The argument maps of a generated package's `schemas/aliases.json` (the format:
toolnexus_gen/targets/argmaps.py), walked over a call's arguments: a provider's file may give a
property another name than the spec (a name the provider rejects), or make an optional property
nullable (strict mode); a call is mapped back to the spec's names and defaults before it is
validated, and a problem's place is named as the provider's file names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _value_map(entry: Sequence[Any], refs: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The map of a property's value: the maps of the definitions it names and its own, merged
    key by key as the generator merges branches (entry: [payload, map] or [payload, map,
    [ref, ...]]; refs: {ref: map})."""
    if len(entry) < 3 or not refs:
        return entry[1]  # type: ignore[no-any-return]
    merged: dict[str, Any] = {}
    for ref in entry[2]:
        _merge(merged, refs.get(ref, {}))
    _merge(merged, entry[1])
    return merged


def _merge(into: dict[str, Any], other: Mapping[str, Any]) -> None:
    """Entries of two maps of one value together: a payload that marks (True) wins, the maps of
    a key both hold merge, the refs they name add up (what anyOf branches' maps do)."""
    for key, entry in other.items():
        mine = into.get(key)
        if mine is None:
            into[key] = entry
            continue
        inner: dict[str, Any] = {}
        _merge(inner, mine[1])
        _merge(inner, entry[1])
        refs = sorted({*(mine[2] if len(mine) > 2 else ()), *(entry[2] if len(entry) > 2 else ())})
        payload = True if entry[0] is True else mine[0]
        into[key] = [payload, inner, refs] if refs else [payload, inner]


def _absent_nulls(
    arguments: Any, mapping: Mapping[str, Any], refs: Mapping[str, Any] | None = None
) -> Any:
    """strictify: a null for a property the spec made optional means "absent" (mapping:
    {name: [made nullable, mapping of its value, refs?]}; refs: the maps of recursive $refs),
    so the model's default applies."""
    if isinstance(arguments, list):
        return [_absent_nulls(item, mapping, refs) for item in arguments]
    if not isinstance(arguments, dict):
        return arguments
    out = {}
    for key, value in arguments.items():
        entry = mapping.get(key)
        if entry is None:
            out[key] = value
        elif value is None and entry[0]:
            continue
        else:
            inner = _value_map(entry, refs)
            out[key] = _absent_nulls(value, inner, refs) if inner else value
    return out


def _unalias(
    arguments: Any, mapping: Mapping[str, Any], refs: Mapping[str, Any] | None = None
) -> Any:
    """Arguments as the model sent them, with every aliased property name back to the spec's
    (mapping: {alias: [name, mapping of its value, refs?]}); lists map element by element."""
    if isinstance(arguments, list):
        return [_unalias(item, mapping, refs) for item in arguments]
    if not isinstance(arguments, dict):
        return arguments
    out = {}
    for key, value in arguments.items():
        entry = mapping.get(key)
        if entry is None:
            out[key] = value
        else:
            inner = _value_map(entry, refs)
            out[entry[0]] = _unalias(value, inner, refs) if inner else value
    return out


def _sent_place(
    loc: tuple[Any, ...], mapping: Mapping[str, Any], refs: Mapping[str, Any] | None = None
) -> tuple[Any, ...]:
    """A place in the spec's names, in the names the provider's file gave (mapping: an
    argument map, {alias: [name, inner, refs?]})."""
    back = {entry[0]: (alias, _value_map(entry, refs)) for alias, entry in mapping.items()}
    out: list[Any] = []
    for part in loc:
        if isinstance(part, str) and part in back:
            alias, inner = back[part]
            out.append(alias)
            back = {e[0]: (a, _value_map(e, refs)) for a, e in inner.items()}
        else:
            out.append(part)
    return tuple(out)
