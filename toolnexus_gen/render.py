"""Stage 3: a validated ToolSet becomes a FileMap {relative path: text}. Pure: no disk access."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .diagnostics import Diagnostic
from .ir import ToolSet
from .package import Header, render_package
from .targets import TARGETS
from .targets.base import dump_json

FileMap = dict[str, str]


def check_targets(toolset: ToolSet, options: Mapping[str, Mapping[str, Any]]) -> list[Diagnostic]:
    """Each selected target's own rules (names, schema features) for each tool it will carry."""
    found: list[Diagnostic] = []
    for name in toolset.targets:
        target = TARGETS[name]
        for tool in toolset.tools:
            if tool.for_target(name):
                found.extend(target.check(tool, dict(options.get(name, {}))))
    return found


def render(toolset: ToolSet, header: Header, options: Mapping[str, Mapping[str, Any]]) -> FileMap:
    files: FileMap = {}
    for name in toolset.targets:
        target = TARGETS[name]
        tools = [tool for tool in toolset.tools if tool.for_target(name)]
        files[target.FILE] = dump_json(target.render(tools, dict(options.get(name, {}))))
    files["schemas/tools.json"] = dump_json([_definition(tool) for tool in toolset.tools])
    files.update(render_package(toolset, header))
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
