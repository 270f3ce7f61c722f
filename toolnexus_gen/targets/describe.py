"""Transform `describe` (opt in per target): what a target cannot carry leaves that target's schema,
and its meaning goes, briefly and deterministically, into the description of the node that held
it (`format: uri`, `no other properties`, `values: 1, 2, 3`). Where a nearby form keeps more
meaning it is used instead (Gemini: `oneOf` -> `anyOf`, a string `const` -> a one-value enum,
`type: [T, "null"]` -> `nullable`). A property whose schema the target cannot hold at all (no type,
an object without properties, an array without items) is left out of that target's schema and
named in its parent's description, unless it is required (then the error stands).

The target's own checks drive it: each finding of a rule listed here is fixed at its place and the
checks run again, so what comes out passes them. Each removal is a TN220 warning at the line and
column of what was removed. The argument model is made from the spec, not from this: it still
enforces everything, so a call that breaks a removed constraint comes back as a correctable error.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.ir import Located, Tool
from toolnexus_gen.targets.base import Target
from toolnexus_gen.targets.transforms import rewrite

# The rules whose findings describe can fix.
DESCRIBABLE = frozenset(
    {"TN302", "TN306", "TN310", "TN311", "TN312", "TN313", "TN314", "TN316"}  # Gemini
    | {"TN340", "TN350", "TN342", "TN344", "TN351", "TN353", "TN356"}  # strict mode
)
# Strict-mode findings fixed by taking the keyword out (its value goes into the description).
REMOVE_KEYWORD = frozenset({"TN342", "TN344", "TN351", "TN353", "TN356"})
SILENT = frozenset({"$schema", "$id", "$comment"})  # say nothing about the arguments
MAX_ROUNDS = 500


def _text(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= 200 else text[:197] + "..."


def _note(node: dict[str, Any], note: str | None) -> dict[str, Any]:
    if not note:
        return node
    existing = node.get("description")
    text = f"{existing} ({note})" if isinstance(existing, str) and existing else f"({note})"
    return {**node, "description": text}


def _fix(node: dict[str, Any], code: str, keyword: str | None) -> tuple[dict[str, Any], str | None]:
    """The node without what `code` objects to, and what to say about it (None: no change)."""
    if keyword is None or keyword not in node:  # another node standing for the same place
        return node, None
    rest = {k: v for k, v in node.items() if k != keyword}
    if code == "TN310":
        value = node[keyword]
        if keyword == "oneOf" and "anyOf" not in node:
            return {("anyOf" if k == "oneOf" else k): v for k, v in node.items()}, "one of these"
        if keyword == "const" and isinstance(value, str) and "enum" not in node:
            return {**rest, "enum": [value], "type": node.get("type", "string")}, None
        if keyword in SILENT:
            return rest, None
        return rest, f"{keyword}: {_text(value)}"
    if code == "TN316" and keyword == "additionalProperties":
        value = node[keyword]
        if value is False:
            return rest, "no other properties"
        if value is True:
            return rest, "other properties allowed"
        return rest, f"other properties: {_text(value)}"
    if code in REMOVE_KEYWORD:
        return rest, f"{keyword}: {_text(node[keyword])}"
    if code in ("TN340", "TN350") and keyword == "additionalProperties":
        return {**node, "additionalProperties": False}, f"other properties: {_text(node[keyword])}"
    if code == "TN313" and keyword == "format":
        return rest, f"format: {node['format']}"
    if code == "TN312" and keyword == "enum":
        values = ", ".join(_text(v) for v in node["enum"])
        return rest, f"values: {values}"
    if code == "TN311" and keyword == "type" and isinstance(node.get("type"), list):
        kinds = [k for k in node["type"] if k != "null"]
        out = {**node, "type": kinds[0] if kinds else "string"}
        if "null" in node["type"]:
            out["nullable"] = True
        return out, (f"type: one of {', '.join(kinds)}" if len(kinds) > 1 else None)
    return node, None


def describe(
    tool: Tool, located: Located, target: Target, options: dict[str, Any], *, output: bool = False
) -> tuple[Located, list[Diagnostic]]:
    """`located` (the input schema as `target` would emit it; with `output`, the output schema)
    with every describable finding fixed, and one TN220 warning per change."""
    notes: list[Diagnostic] = []
    tried: set[tuple[str, str | None, str]] = set()
    for _ in range(MAX_ROUNDS):
        if output:
            checked = target.check(replace(tool, output_located=located), tool.located, options)
        else:
            checked = target.check(tool, located, options)
        findings = [
            d
            for d in checked
            if d.code in DESCRIBABLE
            and d.at is not None
            and (*d.at, d.code) not in tried
            and (d.pointer or "").startswith("/output_schema") == output
        ]
        if not findings:
            break
        finding = findings[0]
        assert finding.at is not None
        pointer, keyword = finding.at
        tried.add((pointer, keyword, finding.code))
        changed, note = _change(located, pointer, keyword, finding.code)
        if changed is None:
            continue  # not describable here (a required property): the error stands
        located = changed
        what = f"{keyword!r}" if keyword else "the schema"
        said = f"; its description now says ({note})" if note else ""
        notes.append(
            Diagnostic(
                finding.path,
                finding.line,
                finding.col,
                "TN220",
                f"{target.name}: {what} removed by the describe transform "
                f"(was {finding.code}){said}; the argument model still enforces it",
                Severity.WARNING,
                pointer=finding.pointer,
                target=target.name,
            )
        )
    return located, notes


def _change(
    located: Located, pointer: str, keyword: str | None, code: str
) -> tuple[Located | None, str | None]:
    if code in ("TN302", "TN306", "TN314"):
        return _drop_property(located, pointer)
    said: list[str | None] = []

    def fix(node: dict[str, Any], at: str, result: Located) -> dict[str, Any]:
        if at != pointer or said:
            return node
        fixed, note = _fix(node, code, keyword)
        if fixed is node:
            return node
        said.append(note)
        return _note(fixed, note)

    changed = rewrite(located, fix)
    return (changed, said[0]) if said else (None, None)


def _drop_property(located: Located, pointer: str) -> tuple[Located | None, str | None]:
    """Leave out the property whose schema is at `pointer`, naming it in its parent's description."""
    parent, sep, escaped = pointer.rpartition("/properties/")
    if not sep:
        return None, None
    name = escaped.replace("~1", "/").replace("~0", "~")
    said: list[str] = []

    def drop(node: dict[str, Any], at: str, result: Located) -> dict[str, Any]:
        properties = node.get("properties")
        if at != parent or said or not isinstance(properties, dict) or name not in properties:
            return node
        if name in (node.get("required") or []):
            return node
        note = f"property {name}: {_text(properties[name])}"
        said.append(note)
        kept = {k: v for k, v in properties.items() if k != name}
        return _note({**node, "properties": kept}, note)

    changed = rewrite(located, drop)
    return (changed, said[0]) if said else (None, None)
