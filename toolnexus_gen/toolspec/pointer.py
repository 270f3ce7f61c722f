"""JSON pointers (RFC 6901), the one implementation: escaping, joining, resolving."""

from __future__ import annotations

from typing import Any

MISSING: Any = object()  # what resolve() gives for a pointer that leads nowhere


def escape(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def join_pointer(pointer: str, token: str | int) -> str:
    return f"{pointer}/{escape(token)}"


def resolve(data: Any, pointer: str, default: Any = MISSING) -> Any:
    """The value at `pointer` inside `data`, or `default` when there is none."""
    node = data
    for raw in pointer.split("/")[1:] if pointer else ():
        part = unescape(raw)
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return default
    return node


def place_pointer(place: Any) -> str:
    """The JSON pointer of a walk's place: a pointer, or (the parent's place, key) nested down to
    one (a walk builds these instead of a string per node)."""
    keys = []
    while isinstance(place, tuple):
        place, key = place
        keys.append(key)
    pointer: str = place
    for key in reversed(keys):
        pointer = join_pointer(pointer, key)  # an index's digits need no escape
    return pointer
