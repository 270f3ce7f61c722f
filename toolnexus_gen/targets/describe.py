"""Transform `describe` (opt in per target): what a target cannot carry leaves that target's schema,
and its meaning goes, briefly and deterministically, into the description of the node that held
it (`format: uri`, `no other properties`, `values: 1, 2, 3`). Where a nearby form keeps more
meaning it is used instead (Gemini: `oneOf` -> `anyOf`, a string `const` -> a one-value enum,
`type: [T, "null"]` -> `nullable`). A property whose schema the target cannot hold at all (no type,
an object without properties, an array without items) is left out of that target's schema and
named in its parent's description, unless it is required (then the error stands). With
`keep_arguments` (profile = "reach") nothing is left out: what only leaving out would fix stays a
finding, and the caller sends the tool in a form that carries it (Gemini parametersJsonSchema,
non-strict).

Some findings have a rewrite that keeps the meaning exactly (an `allOf` merged into its node, a
`$ref` with siblings as a one-branch `anyOf`, a list of types as an `anyOf`, `properties: {}` on a
root object without them, `items: {}` on an array without them): those are made first, each a
TN225 warning. A combinator at the root (OpenAI, Anthropic) that cannot be merged is taken out,
the properties its branches name kept on the root.

The target's own checks drive it: each finding of a rule listed here is fixed at its place and the
checks run again, so what comes out passes them. Each removal is a TN220 warning at the line and
column of what was removed. The argument model is made from the spec, not from this: it still
enforces everything, so a call that breaks a removed constraint comes back as a correctable error.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.ir import Located, Tool
from toolnexus_gen.targets.base import Target
from toolnexus_gen.targets.transforms import merge_all_of, rewrite, wrap_ref
from toolnexus_gen.toolspec.bundle import ONE_SCHEMA, SCHEMA_LISTS, SCHEMA_MAPS
from toolnexus_gen.toolspec.formats import ASSERTED_FORMATS
from toolnexus_gen.toolspec.pointer import join_pointer, resolve

# The rules whose findings describe can fix.
DESCRIBABLE = frozenset(
    {"TN302", "TN306", "TN310", "TN311", "TN312", "TN313", "TN314", "TN316"}  # Gemini
    | {"TN340", "TN350", "TN342", "TN344", "TN351", "TN353", "TN356"}  # strict mode
    | {"TN303", "TN320", "TN345"}  # rewritten without loss
    | {"TN305"}  # a combinator at the root (OpenAI, Anthropic)
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


def _exact(
    node: dict[str, Any], code: str, keyword: str | None, pointer: str, located: Located
) -> tuple[dict[str, Any], str] | None:
    """A rewrite of the node that meets `code` and keeps its meaning exactly, and what it did."""
    if code == "TN303" and "properties" not in node:
        return {**node, "properties": {}}, "properties: {} added"
    if code in ("TN320", "TN345") and keyword is not None:
        wrapped = wrap_ref(node)
        if wrapped is not None:
            return wrapped, "$ref with siblings written as a one-branch anyOf"
    if code == "TN311" and isinstance(node.get("type"), list) and "anyOf" not in node:
        kinds = [k for k in node["type"] if k != "null"]
        if len(kinds) > 1 and all(isinstance(k, str) for k in kinds):
            out = {k: v for k, v in node.items() if k != "type"}
            out["anyOf"] = [{"type": k} for k in kinds]
            if "null" in node["type"]:
                out["nullable"] = True
            return out, "a list of types written as anyOf"
    if code in ("TN310", "TN342", "TN305") and keyword == "allOf":
        merged = merge_all_of(node, pointer, located)
        if merged is not None:
            return merged, "allOf merged into its schema"
    return None


def _fix(
    node: dict[str, Any], code: str, keyword: str | None, keep_arguments: bool
) -> tuple[dict[str, Any], str | None]:
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
        if keep_arguments and value is not False and not node.get("properties"):
            return node, None  # taking it out would leave an object that holds nothing
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
    tool: Tool,
    located: Located,
    target: Target,
    options: dict[str, Any],
    *,
    output: bool = False,
    keep_arguments: bool = False,
) -> tuple[Located, list[Diagnostic]]:
    """`located` (the input schema as `target` would emit it; with `output`, the output schema)
    with every describable finding fixed, and one TN220 (TN225: without loss) warning per change.
    With `keep_arguments` no property is left out."""
    notes: list[Diagnostic] = []
    tried: set[tuple[str, str | None, str]] = set()
    rounds = 0
    check = target.findings or target.check  # one by one where the target can
    while rounds < MAX_ROUNDS:
        if output:
            checked = check(replace(tool, output_located=located), tool.located, options)
        else:
            checked = check(tool, located, options)
        before = frozenset(tried)  # what was tried before this check
        findings = (
            d
            for d in checked
            if d.code in DESCRIBABLE
            and d.at is not None
            and (*d.at, d.code) not in before
            and (d.pointer or "").startswith("/output_schema") == output
        )
        first = next(findings, None)
        if first is None:
            break
        # One check serves every finding up to the first fix that may change what the others
        # point at or what the checks would find next (each check walks the whole schema, so a
        # check per finding made large documents quadratic); the fixes come in the order, and
        # to the same schema, as with a check before each one.
        fixed: list[str] = []  # pointers fixed in this round
        for finding in itertools.chain((first,), findings):
            assert finding.at is not None
            pointer, keyword = finding.at
            if rounds >= MAX_ROUNDS or not all(_apart(pointer, done) for done in fixed):
                break
            rounds += 1
            tried.add((pointer, keyword, finding.code))
            changed, note, exact, checked_format = _change(
                located, pointer, keyword, finding.code, keep_arguments
            )
            if changed is None:
                continue  # not describable here (a required property): the error stands
            notes.append(_said(target, finding, pointer, keyword, note, exact, checked_format))
            leaf = not exact and _leaf_fix(keyword, finding.code)
            located = changed
            if not leaf:
                break
            fixed.append(pointer)
    return located, notes


def _said(
    target: Target,
    finding: Diagnostic,
    pointer: str,
    keyword: str | None,
    note: str | None,
    exact: bool,
    checked_format: bool = True,
) -> Diagnostic:
    """The TN220 (TN225: without loss) warning for one change (`checked_format`: a removed
    `format` is one the argument model checks)."""
    what = f"{keyword!r}" if keyword else "the schema"
    if finding.code in ("TN320", "TN345"):
        what = "'$ref'"
    if exact:
        code = "TN225"
        text = f"{what} rewritten by the describe transform (was {finding.code}): {note}"
    else:
        code = "TN220"
        said = f"; its description now says ({note})" if note else ""
        kept = "the argument model still enforces it"
        if keyword == "format" and not checked_format:
            kept = "no check took it before either (the argument model does not check this format)"
        text = f"{what} removed by the describe transform (was {finding.code}){said}; {kept}"
    return Diagnostic(
        finding.path,
        finding.line,
        finding.col,
        code,
        f"{target.name}: {text}",
        Severity.WARNING,
        pointer=finding.pointer,
        target=target.name,
    )


# Fixes that take one keyword holding no schema out of a node (its text into the node's
# description) and touch nothing else: the other findings of the same check, at other places,
# still stand where they were found.
LEAF_CODES = frozenset({"TN310", "TN312", "TN313"}) | REMOVE_KEYWORD
NOT_LEAF = frozenset({*ONE_SCHEMA, *SCHEMA_LISTS, *SCHEMA_MAPS, "const", "type", "required"})


def _leaf_fix(keyword: str | None, code: str) -> bool:
    return keyword is not None and keyword not in NOT_LEAF and code in LEAF_CODES


def _apart(pointer: str, other: str) -> bool:
    """Whether neither place is the other or below it."""
    return not (
        pointer == other or pointer.startswith(other + "/") or other.startswith(pointer + "/")
    )


def _change(
    located: Located, pointer: str, keyword: str | None, code: str, keep_arguments: bool
) -> tuple[Located | None, str | None, bool, bool]:
    """The schema with the finding fixed at every node standing for `pointer`, what to say,
    whether the fix kept the meaning exactly, and whether a `format` it took out is one the
    argument model checks; (None, None, False, True) when it cannot be fixed here."""
    if code in ("TN302", "TN306", "TN314"):  # the whole property, not a keyword of its node
        if not keep_arguments:
            dropped, note = _drop_property(located, pointer)
            if dropped is not None:
                return dropped, note, False, True
        if code == "TN302":
            return (*_any_items(located, pointer), True)
        return None, None, False, True
    said: list[tuple[str | None, bool]] = []
    checked: list[bool] = []  # per node: whether the `format` taken out is one models check

    def fix(node: dict[str, Any], at: str, result: Located) -> dict[str, Any]:
        if at != pointer:
            return node
        exact = _exact(node, code, keyword, pointer, result)
        if exact is not None:
            said.append((exact[1], True))
            return exact[0]
        if code == "TN305" and keyword in ("anyOf", "oneOf", "allOf"):
            fixed, note = _hoist(node, keyword, at, result)
        else:
            fixed, note = _fix(node, code, keyword, keep_arguments)
        if fixed is node:
            return node
        said.append((note, False))
        if keyword == "format":
            checked.append(node.get("format") in ASSERTED_FORMATS)
        return _note(fixed, note)

    changed = rewrite(located, fix)
    if said:
        return changed, said[0][0], said[0][1], all(checked)
    return None, None, False, True


def _hoist(
    node: dict[str, Any], keyword: str, pointer: str, located: Located
) -> tuple[dict[str, Any], str | None]:
    """A root `anyOf`/`oneOf`/`allOf` taken out, the properties its branches name kept in the
    root's own `properties` (where the root names none of the same name), the branches written
    into the description: every call the spec allows still fits."""
    branches = node.get(keyword)
    if not isinstance(branches, list):
        return node, None
    properties = dict(node.get("properties") or {})
    for i, branch in enumerate(branches):
        at = f"{pointer}/{keyword}/{i}"
        ref = branch.get("$ref") if isinstance(branch, dict) else None
        if isinstance(ref, str) and ref.startswith("#"):
            at = unquote(ref[1:])
            branch = resolve(located.schema, at, None)
        if not isinstance(branch, dict) or not isinstance(branch.get("properties"), dict):
            continue
        for name, schema in branch["properties"].items():
            if name not in properties:
                properties[name] = located.mark(schema, join_pointer(f"{at}/properties", name))
    out = {k: v for k, v in node.items() if k != keyword}
    if properties or "properties" in node:
        out["properties"] = properties
    words = {"anyOf": "any of these", "oneOf": "one of these", "allOf": "all of these"}
    return out, f"{words[keyword]}: {_text(branches)}"


def _any_items(located: Located, pointer: str) -> tuple[Located | None, str | None, bool]:
    """`items: {}` on an array without items: the same array, for a target that requires items
    (where a typeless schema is refused too, its own finding follows)."""
    said: list[str] = []

    def fix(node: dict[str, Any], at: str, result: Located) -> dict[str, Any]:
        if at != pointer or "items" in node:
            return node
        said.append("items: {} (any value) added")
        return {**node, "items": {}}

    changed = rewrite(located, fix)
    return (changed, said[0], True) if said else (None, None, False)


def _drop_property(located: Located, pointer: str) -> tuple[Located | None, str | None]:
    """Leave out the property whose schema is at `pointer`, naming it in its parent's description."""
    parent, sep, escaped = pointer.rpartition("/properties/")
    if not sep:
        return None, None
    name = escaped.replace("~1", "/").replace("~0", "~")
    said: list[str] = []

    def drop(node: dict[str, Any], at: str, result: Located) -> dict[str, Any]:
        properties = node.get("properties")
        if at != parent or not isinstance(properties, dict) or name not in properties:
            return node
        if name in (node.get("required") or []):
            return node
        note = f"property {name}: {_text(properties[name])}"
        said.append(note)
        kept = {k: v for k, v in properties.items() if k != name}
        return _note({**node, "properties": kept}, note)

    changed = rewrite(located, drop)
    return (changed, said[0]) if said else (None, None)
