"""Provider compatibility rules: each schema feature a provider rejects (error) or silently degrades
(warning), found at build time with its place, the provider's own words and a fix.

This module is what the targets' checks share (each rule's text is in the catalogue,
diagnostics/catalogue.py); each target's own checks live in its module. Rules look at the schema
exactly as it will be emitted for a target (bundled, inlined where the target needs it, and after
the transforms the user turned on), and report each finding at the line and column of the keyword
in the file the author wrote.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.diagnostics.catalogue import RULES
from toolnexus_gen.ir import Located, Tool, ToolInfo
from toolnexus_gen.toolspec.bundle import Cycle, TooLarge, walk
from toolnexus_gen.toolspec.pointer import join_pointer

E, W = Severity.ERROR, Severity.WARNING


def finding(
    located: Located,
    pointer: str,
    keyword: str | None,
    code: str,
    target: str,
    message: str,
) -> Diagnostic:
    """A diagnostic at `keyword` of the node at `pointer` (a bundled pointer), in the author's file."""
    document, source = located.source(pointer)
    place = join_pointer(source, keyword) if keyword else source
    line, col = document.positions.key(place) if keyword else document.positions.value(place)
    rule = RULES[code]
    return Diagnostic(
        document.display,
        line,
        col,
        code,
        f"{target}: {message}",
        rule.severity,
        pointer=place,
        target=target,
        at=(pointer, keyword),
    )


def at_tool(
    tool: Tool | ToolInfo, code: str, target: str, message: str, key: str = "name"
) -> Diagnostic:
    line, col = tool.place(key)
    return Diagnostic(
        tool.display,
        line,
        col,
        code,
        f"{target}: {message}",
        RULES[code].severity,
        target=target,
    )


def types_of(node: dict[str, Any]) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def required_of(node: dict[str, Any]) -> list[Any]:
    value = node.get("required")
    return value if isinstance(value, list) else []


def is_object(node: dict[str, Any]) -> bool:
    return "object" in types_of(node) or (not types_of(node) and "properties" in node)


# -- shared checks ------------------------------------------------------------------------------


def array_items(located: Located, target: str) -> Iterable[Diagnostic]:
    for pointer, node, _ in walk(located):
        if "array" in types_of(node) and "items" not in node:
            tuple_ = "; a prefixItems tuple needs it too" if "prefixItems" in node else ""
            yield finding(
                located,
                pointer,
                "type",
                "TN302",
                target,
                f'array schema without "items" is rejected ("array schema missing items"){tuple_}',
            )


def root_combinators(
    located: Located, target: str, keywords: tuple[str, ...]
) -> Iterable[Diagnostic]:
    for keyword in keywords:
        if keyword in located.schema:
            yield finding(
                located,
                "",
                keyword,
                "TN305",
                target,
                f"{keyword!r} at the top level of the input schema is rejected",
            )


def place(located: Located, pointer: str) -> str:
    """A bundled-schema pointer as a place in the author's files: `specs/_node.yaml#/x`."""
    document, source = located.source(pointer)
    return f"{document.display}#{source}"


def cycle_text(located: Located, cycle: Cycle) -> str:
    """The loop as places in the author's files: `_node.yaml# -> _node.yaml#`."""
    return " -> ".join(place(located, ref[1:]) for ref in cycle.path)


def too_large_finding(located: Located, big: TooLarge, target: str) -> Diagnostic:
    """TN230 at the $ref that adds the most to an inlined schema over the budget."""
    pointer = big.pointer.removesuffix("/$ref")
    document, source = located.source(pointer)
    place = join_pointer(source, "$ref") if big.pointer else source
    line, col = document.positions.key(place) if big.pointer else document.positions.value(place)
    return Diagnostic(
        document.display,
        line,
        col,
        "TN230",
        f"{target}: the schema would hold {big.size:,} nodes once its $refs are inlined (the budget is "
        f"{big.budget:,}): definitions named more than once at each level multiply; use "
        'schema_field = "parametersJsonSchema" (which keeps $defs), or exclude this target for '
        "the tool",
        E,
        pointer=place,
        target=target,
        at=(pointer, "$ref" if big.pointer else None),
    )


def cycle_finding(located: Located, cycle: Cycle, target: str) -> Diagnostic:
    return finding(
        located,
        cycle.pointer.removesuffix("/$ref"),
        "$ref",
        "TN315",
        target,
        f"the schema is recursive ({cycle_text(located, cycle)}) and cannot be inlined; use "
        'schema_field = "parametersJsonSchema" or break the cycle',
    )
