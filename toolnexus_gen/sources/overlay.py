"""OpenAPI Overlay 1.0: a project's changes to a document it does not own, kept in files of
its own and applied, in order, before `sync` imports the document.

An overlay holds `overlay: 1.0.x`, `info` (`title`, `version`) and `actions`, each with a
`target` (a JSONPath query, RFC 9535, as the Overlay specification says) and either `update` or
`remove: true`. `update` is merged into each object the target selects (objects merged key by
key, recursively; any other value replaced), appended to each array it selects, and replaces
each other value (a string, a number) it selects; `remove` takes each selected node out of its
parent. A target that selects nothing is a warning (the
document may have changed under the overlay); anything malformed is an error at its place in
the overlay file. JSONPath is read by `jsonpath-rfc9535`, a small, strict implementation of
the RFC with no dependency of its own but `regex`.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.ir import Document
from toolnexus_gen.toolspec.pointer import join_pointer

VERSION = re.compile(r"1\.0\.\d+")
ACTION_KEYS = ("target", "description", "update", "remove")
MAX_ACTIONS = 10_000


@dataclass
class Applied:
    data: Any  # the document with every action applied
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(d.is_error for d in self.diagnostics)


def apply(data: Any, overlays: list[Document]) -> Applied:
    """The document with each overlay applied in order (a copy: `data` is left as it is; no
    overlay, no copy)."""
    out = Applied(copy.deepcopy(data) if overlays else data)
    for overlay in overlays:
        _apply_one(out, overlay)
        if out.failed:
            break
    return out


def _apply_one(out: Applied, overlay: Document) -> None:
    def problem(code: str, message: str, pointer: str, warn: bool = False) -> None:
        line, col = overlay.positions.value(pointer)
        severity = Severity.WARNING if warn else Severity.ERROR
        out.diagnostics.append(
            Diagnostic(overlay.display, line, col, code, message, severity, pointer or "/")
        )

    data = overlay.data
    if not isinstance(data, dict):
        problem("TN484", "an overlay is an object (overlay, info, actions)", "")
        return
    version = data.get("overlay")
    if not isinstance(version, str) or not VERSION.fullmatch(version):
        problem(
            "TN484",
            f"overlay must be a 1.0.x version (OpenAPI Overlay 1.0), not {version!r}",
            "/overlay" if "overlay" in data else "",
        )
        return
    info = data.get("info")
    if not isinstance(info, dict) or not all(
        isinstance(info.get(key), str) for key in ("title", "version")
    ):
        problem("TN484", "info must be an object with a title and a version", "/info")
    actions = data.get("actions")
    if not isinstance(actions, list) or not actions or len(actions) > MAX_ACTIONS:
        problem("TN484", f"actions must be a list of 1 to {MAX_ACTIONS} actions", "/actions")
        return
    if out.failed:
        return
    import jsonpath_rfc9535 as jsonpath

    for index, action in enumerate(actions):
        at = join_pointer("/actions", index)
        if not isinstance(action, dict):
            problem("TN484", "an action is an object (target, update or remove)", at)
            continue
        unknown = [k for k in action if k not in ACTION_KEYS and not k.startswith("x-")]
        if unknown:
            problem(
                "TN484",
                f"unknown key {unknown[0]!r} in an action (known: {', '.join(ACTION_KEYS)})",
                join_pointer(at, unknown[0]),
            )
            continue
        target = action.get("target")
        if not isinstance(target, str) or not target.startswith("$"):
            problem("TN485", "target must be a JSONPath query starting with $", at)
            continue
        remove = action.get("remove", False)
        if not isinstance(remove, bool):
            problem("TN484", "remove must be true or false", join_pointer(at, "remove"))
            continue
        if remove == ("update" in action):
            problem("TN484", "an action has either update or remove: true", at)
            continue
        try:
            nodes = jsonpath.find(target, out.data)
        except jsonpath.JSONPathError as exc:
            problem(
                "TN485",
                f"target {target!r} is not a JSONPath query: {exc}",
                join_pointer(at, "target"),
            )
            continue
        if not nodes:
            problem(
                "TN486",
                f"target {target!r} selects nothing in the document; the action does nothing",
                join_pointer(at, "target"),
                warn=True,
            )
            continue
        if remove:
            _remove(out.data, [node.location for node in nodes])
            continue
        update = action["update"]
        for node in nodes:
            if isinstance(node.value, dict) and isinstance(update, dict):
                _merge(node.value, update)
            elif isinstance(node.value, list):
                node.value.append(copy.deepcopy(update))
            elif node.location and not isinstance(node.value, dict | list):
                # a value (a summary, a flag): replaced, as Overlay 1.1 says and tools do
                _parent(out.data, node.location)[node.location[-1]] = copy.deepcopy(update)
            else:
                problem(
                    "TN485",
                    f"target {target!r} selects {node.path()}, an object, but the update is "
                    "not one: an update merges into an object",
                    join_pointer(at, "target"),
                )
                break


def _parent(data: Any, location: tuple[Any, ...]) -> Any:
    for step in location[:-1]:
        data = data[step]
    return data


def _merge(node: dict[str, Any], update: dict[str, Any]) -> None:
    for key, value in update.items():
        if isinstance(node.get(key), dict) and isinstance(value, dict):
            _merge(node[key], value)
        else:
            node[key] = copy.deepcopy(value)


def _remove(data: Any, locations: list[tuple[Any, ...]]) -> None:
    """Take each node out of its parent: array items from the last, so indexes hold."""
    for location in sorted(locations, key=_order, reverse=True):
        if not location:
            continue  # the root stays: removing it would leave no document
        parent = data
        for step in location[:-1]:
            parent = parent[step]
        last = location[-1]
        if isinstance(parent, list) and isinstance(last, int) and last < len(parent):
            del parent[last]
        elif isinstance(parent, dict):
            parent.pop(last, None)


def _order(location: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((0, step) if isinstance(step, int) else (1, str(step)) for step in location)
