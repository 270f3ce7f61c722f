"""Stage 3: a validated ToolSet becomes a FileMap {relative path: text}. Pure: no disk access.

`prepare` works out, per target, the schema each tool will carry (inlined and transformed as that
target needs and the user configured) and runs the target's rules on exactly that schema;
`render` writes the same schemas out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .bundle import Cycle
from .cache import Memo
from .diagnostics import Diagnostic
from .ir import Tool, ToolSet
from .options import Header
from .package import render_package
from .targets import TARGETS
from .targets.base import dump_json, effective
from .targets.rules import cycle_finding

FileMap = dict[str, str]


@dataclass
class Prepared:
    """Per target: the tools it carries and each tool's effective input schema (by name)."""

    tools: dict[str, list[Tool]] = field(default_factory=dict)
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def prepare(toolset: ToolSet, options: Mapping[str, Mapping[str, Any]]) -> Prepared:
    prepared = Prepared()
    for name in toolset.targets:
        target, target_options = TARGETS[name], dict(options.get(name, {}))
        tools = [tool for tool in toolset.tools if tool.for_target(name)]
        schemas: dict[str, Any] = {}
        for tool in tools:
            try:
                located = effective(
                    tool, target_options, must_inline=target.must_inline(target_options)
                )
            except Cycle as cycle:
                assert tool.located is not None
                prepared.diagnostics.append(cycle_finding(tool.located, cycle, name))
                continue
            schemas[tool.name] = located.schema if located is not None else None
            prepared.diagnostics += target.check(tool, located, target_options)
        prepared.diagnostics += target.check_all(tools, target_options)
        prepared.tools[name], prepared.schemas[name] = tools, schemas
    return prepared


def render(
    toolset: ToolSet,
    prepared: Prepared,
    header: Header,
    options: Mapping[str, Mapping[str, Any]],
    memo: Memo | None = None,
) -> FileMap:
    files: FileMap = {}
    for name in toolset.targets:
        target = TARGETS[name]
        rendered = target.render(
            prepared.tools[name], prepared.schemas[name], dict(options.get(name, {}))
        )
        files[target.FILE] = dump_json(rendered)
    files["schemas/tools.json"] = dump_json([_definition(tool) for tool in toolset.tools])
    # The build's lock file stays in the folder; keep it out of version control.
    files[".gitignore"] = (
        "# Written by toolnexus-gen.\n.toolnexus-gen.lock\n.toolnexus-gen.cache/\n"
    )
    files.update(render_package(toolset, header, memo))
    return dict(sorted(files.items()))


def _definition(tool: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.input_schema,
    }
    if tool.output_schema is not None:
        entry["output_schema"] = tool.output_schema
    return entry
