"""Schema keywords that a code generator reads as instructions, not as a schema.

datamodel-code-generator, which makes the argument models, reads `customTypePath` (the class a
field is typed with), `customBasePath` (a model's base class), `x-python-type` and
`x-python-import` (a type and the module it comes from), and `x-is-base-class` and
`x-is-classvar` (a schema made a base class, a property made a class variable that is never
validated). In a schema they become `from <module> import <name>` lines in the generated package,
so whoever writes the schema chooses code that `import tools` runs. Every `custom...` and
`x-python-...` keyword counts, and its own `x-datamodel-code-generator...` ones: the next version
may read more of them.

A third party's schema (an MCP server's, an OpenAPI document's) is data: the sources strip these
keywords with a note (`strip`), and a build refuses them in any spec (`refusals`, TN122) unless
the project opts in for its own specs (`codegen_keywords = true`); a synced snapshot never may.
"""

from __future__ import annotations

import re
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.ir import Located, Tool
from toolnexus_gen.toolspec.bundle import SCHEMA_MAPS
from toolnexus_gen.toolspec.pointer import join_pointer, place_pointer, unescape

NAMED = frozenset({"customTypePath", "customBasePath", "x-is-base-class", "x-is-classvar"})
PREFIXES = ("x-python-", "x-datamodel-code-generator")
_CUSTOM = re.compile(r"custom[A-Z]")
# Keywords whose value is data (never read for keywords), and those whose keys are names.
DATA = frozenset({"enum", "const", "default", "examples", "example", "discriminator", "xml"})
NAME_MAPS = frozenset({*SCHEMA_MAPS, "dependencies", "dependentRequired"})
SETTING = "codegen_keywords"  # the [tool.toolnexus-gen] key that lets the project's own specs


def is_codegen_keyword(key: str) -> bool:
    return key in NAMED or key.startswith(PREFIXES) or _CUSTOM.match(key) is not None


def found(schema: Any, pointer: str = "") -> list[str]:
    """The pointer of every code-generation keyword in a schema, in document order. Any object
    under a schema is searched (an unknown keyword's too) but data (enum, const, default,
    examples, an extension's value) and property names are not keywords."""
    out: list[str] = []
    # a node's place as (its parent's place, its key), made a pointer only where a keyword is
    # found: a large schema has few, and a pointer for every node made this a build's hot spot
    stack: list[tuple[Any, Any]] = [(schema, pointer)]
    while stack:
        node, here = stack.pop()
        children: list[tuple[Any, Any]] = []
        if isinstance(node, list):
            children = [(item, (here, i)) for i, item in enumerate(node)]
        elif isinstance(node, dict):
            for key, value in node.items():
                if is_codegen_keyword(key):
                    out.append(_pointer((here, key)))
                elif key in DATA or key.startswith("x-"):  # an extension's value is its own
                    continue
                elif key in NAME_MAPS and isinstance(value, dict):
                    children += [(v, ((here, key), name)) for name, v in value.items()]
                elif isinstance(value, (dict, list)):
                    children.append((value, (here, key)))
        stack.extend(reversed(children))
    return out


_pointer = place_pointer  # a place: (the parent's place, key), down to a pointer


def strip(schema: Any) -> tuple[Any, list[str]]:
    """The schema without its code-generation keywords (the same object when it has none), and
    the pointer of each one removed."""
    removed = found(schema)
    if not removed:
        return schema, []
    return _without(schema, "", set(removed)), removed


def strip_spec(spec: dict[str, Any], whose: str) -> list[str]:
    """Strip a source's spec's schemas in place; a note for each keyword removed, naming it and
    where it was (`whose` says whose tool: "server 'x': tool")."""
    notes = []
    for key in ("input_schema", "output_schema"):
        if key not in spec:
            continue
        spec[key], removed = strip(spec[key])
        notes += [
            f"{whose} {spec['name']!r}: {keyword_of(at)!r} removed from {key} at {at or '/'}: "
            "it would name Python code for the generated package to import; a third party's "
            "schema is data"
            for at in removed
        ]
    return notes


def _without(node: Any, here: str, removed: set[str]) -> Any:
    if isinstance(node, list):
        return [_without(item, join_pointer(here, i), removed) for i, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    return {
        key: _without(value, join_pointer(here, key), removed)
        for key, value in node.items()
        if join_pointer(here, key) not in removed
    }


def keyword_of(pointer: str) -> str:
    return unescape(pointer.rpartition("/")[2])


def third_party(tool: Tool) -> bool:
    """Whether the spec is a source's copy of someone else's tool (a synced snapshot)."""
    data = tool.source.data
    return isinstance(data, dict) and "source" in data


def refusals(tool: Tool, allowed: bool) -> list[Diagnostic]:
    """TN122 at each code-generation keyword of a bundled tool's schemas (in the file that holds
    it), unless the project allows them and the spec is its own."""
    if allowed and not third_party(tool):
        return []
    out = []
    for located in (tool.located, tool.output_located):
        if located is not None:
            out += [_refusal(located, pointer, tool) for pointer in found(located.schema)]
    return out


def _refusal(located: Located, pointer: str, tool: Tool) -> Diagnostic:
    document, source = located.source(pointer)
    line, col = document.positions.key(source)
    keyword = keyword_of(pointer)
    if third_party(tool):
        fix = (
            "a synced server's schema never may: sync again (sync strips them), or leave the "
            "tool out with the server's `tools` allowlist"
        )
    else:
        fix = (
            f"remove it, or let the project's own specs use it with {SETTING} = true under "
            "[tool.toolnexus-gen]"
        )
    return Diagnostic(
        document.display,
        line,
        col,
        "TN122",
        f"{keyword!r} is an instruction to the model generator (it names Python code the "
        f"generated package would import), not a schema keyword: {fix}",
        pointer=source,
    )
