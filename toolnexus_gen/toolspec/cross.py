"""Names across specs: duplicates, and names that become the same Python name. Light on purpose
(no schema library): the whole-set stage runs it on reused units too."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.ir import ToolInfo


def cross_tool(tools: Iterable[ToolInfo]) -> list[Diagnostic]:
    """Names across specs: duplicates, and names that become the same Python name."""
    diagnostics: list[Diagnostic] = []
    by_name: dict[str, list[ToolInfo]] = defaultdict(list)
    for tool in tools:
        by_name[tool.name].append(tool)
    for name, same in sorted(by_name.items()):
        for tool in same[1:]:
            first = same[0].display
            diagnostics.append(
                _at_name(tool, "TN115", f"tool name {name!r} is already defined by {first}")
            )
    unique = sorted((same[0] for same in by_name.values()), key=lambda t: t.name)
    owners: dict[tuple[str, str], ToolInfo] = {}
    clashes: dict[tuple[str, str], list[str]] = defaultdict(list)
    for tool in unique:
        for attr, what in (
            ("method", "handler method"),
            ("model", "model class"),
            ("module", "model module"),
        ):
            value = getattr(tool.python, attr)
            key = (attr, value.lower() if attr == "module" else value)
            other = owners.setdefault(key, tool)
            if other is not tool:
                clashes[(other.name, tool.name)].append(f"{what} {value!r}")
    for (first, second), names in clashes.items():
        tool, other = by_name[second][0], by_name[first][0]
        diagnostics.append(
            _at_name(
                tool,
                "TN116",
                f"tools {first!r} ({other.display}) and {second!r} both become the Python "
                f"{', '.join(names)}; rename one of them",
            )
        )
    return diagnostics


def _at_name(tool: ToolInfo, code: str, message: str) -> Diagnostic:
    line, col = tool.place("name")
    return Diagnostic(tool.display, line, col, code, message)
