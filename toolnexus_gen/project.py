"""`toolnexus-gen init` and `toolnexus-gen scaffold`: files that belong to the user, written once.

Neither ever replaces a file: init only creates what is missing (and appends the config section
to a pyproject.toml that has none); scaffold writes its module once and afterwards only reports
the methods that new tools still need.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from .ir import ToolInfo
from .package import ruff_sorted
from .pysource import docstring, py_str

EXAMPLE_SPEC = """\
# One tool per file: the name is the file stem. Build with `toolnexus-gen build`.
description: Current weather for a city
input_schema:
  type: object
  properties:
    city:
      type: string
      description: City name, e.g. "Chennai"
    units:
      type: string
      enum: [celsius, fahrenheit]
      default: celsius
  required: [city]
examples:
  - city: Chennai
"""

CONFIG_SECTION = """
[tool.toolnexus-gen]
specs = "{specs}"
out = "{out}"
# targets = ["gemini", "openai", "openai_responses", "anthropic", "mcp", "bedrock"]
# ignore = []

# [tool.toolnexus-gen.gemini]
# schema_field = "parametersJsonSchema"
# transforms = ["strip_meta", "const_to_enum", "nullable"]
"""

PRE_COMMIT = """\
repos:
  - repo: local
    hooks:
      # Regenerate on commit (fails the commit when files changed, so you can stage them):
      - id: toolnexus-gen
        name: toolnexus-gen build
        entry: toolnexus-gen build
        language: system
        pass_filenames: false
        files: ^({specs}/|pyproject\\.toml$)
      # Or only verify, as CI does:
      # - id: toolnexus-gen-check
      #   name: toolnexus-gen build --check
      #   entry: toolnexus-gen build --check
      #   language: system
      #   pass_filenames: false
  # With the hooks this repository publishes (.pre-commit-hooks.yaml) instead:
  # - repo: https://github.com/toolnexus/toolnexus-gen
  #   rev: v{version}
  #   hooks:
  #     - id: toolnexus-gen-check
"""


@dataclass
class InitReport:
    created: list[Path] = field(default_factory=list)
    appended: list[Path] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # what already existed and was left alone


def init(root: Path, specs: str = "specs", out: str = "tools", version: str = "") -> InitReport:
    report = InitReport()
    root.mkdir(parents=True, exist_ok=True)
    specs_dir = root / specs
    if specs_dir.is_dir() and any(specs_dir.iterdir()):
        report.kept.append(f"{specs_dir.as_posix()} (already holds files; no example added)")
    else:
        specs_dir.mkdir(parents=True, exist_ok=True)
        _create(specs_dir / "get_weather.yaml", EXAMPLE_SPEC, report)
    pyproject = root / "pyproject.toml"
    section = CONFIG_SECTION.format(specs=specs, out=out)
    if not pyproject.exists():
        _create(pyproject, section.lstrip("\n"), report)
    elif "[tool.toolnexus-gen" in pyproject.read_text("utf-8"):
        report.kept.append(f"{pyproject.as_posix()} (already has [tool.toolnexus-gen])")
    else:
        text = pyproject.read_text("utf-8")
        with pyproject.open("a", encoding="utf-8") as handle:  # append only: never rewrite
            handle.write(("" if text.endswith("\n") else "\n") + section)
        report.appended.append(pyproject)
    hooks = root / ".pre-commit-config.yaml"
    snippet = PRE_COMMIT.format(specs=specs, version=version)
    if hooks.exists():
        report.kept.append(f"{hooks.as_posix()} (exists; add the hook yourself:\n{snippet})")
    else:
        _create(hooks, snippet, report)
    return report


def _create(path: Path, text: str, report: InitReport) -> None:
    with path.open("x", encoding="utf-8") as handle:  # "x": fails rather than replace a file
        handle.write(text)
    report.created.append(path)


# -- scaffold -----------------------------------------------------------------------------------


def package_import(out: Path) -> str:
    """The import name of the generated package: its folder, plus parent packages."""
    parts = [out.resolve().name]
    parent = out.resolve().parent
    while (parent / "__init__.py").is_file():
        parts.insert(0, parent.name)
        parent = parent.parent
    return ".".join(parts)


def scaffold_source(tools: tuple[ToolInfo, ...], package: str, class_name: str) -> str:
    names = ruff_sorted(
        ["ToolContext", "ToolHandlers", "ToolOutput", *(t.python.model for t in tools)]
    )
    lines = [
        f'"""Handlers for the tools in {package} (yours to edit: toolnexus-gen writes this file once)."""',
        "",
        "from __future__ import annotations",
        "",
        *_import_lines(package, names),
        "",
        "",
        f"class {class_name}(ToolHandlers):",
    ]
    for index, tool in enumerate(tools):
        if index:
            lines.append("")
        lines += _stub(tool)
    if not tools:
        lines.append("    pass")
    return "\n".join(lines) + "\n"


def _import_lines(package: str, names: list[str]) -> list[str]:
    line = f"from {package} import {', '.join(names)}"
    if len(line) <= 88:
        return [line]
    return [f"from {package} import (", *(f"    {name}," for name in names), ")"]


def _stub(tool: ToolInfo) -> list[str]:
    first = tool.description.strip().splitlines()[0] if tool.description.strip() else tool.name
    signature = f"    async def {tool.python.method}(self, args: {tool.python.model}, ctx: ToolContext) -> ToolOutput:"
    if len(signature) > 88:  # as ruff format would wrap it
        signature = (
            f"    async def {tool.python.method}(\n"
            f"        self, args: {tool.python.model}, ctx: ToolContext\n"
            "    ) -> ToolOutput:"
        )
    return [
        *signature.split("\n"),
        f"        {docstring(first, 8)}",
        f"        raise NotImplementedError({py_str(tool.name)})",
    ]


def missing_methods(source: str, tools: tuple[ToolInfo, ...]) -> list[ToolInfo]:
    """The tools whose method no class in source defines."""
    defined: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            defined |= {
                item.name
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
    return [tool for tool in tools if tool.python.method not in defined]


def stubs_for(tools: list[ToolInfo]) -> str:
    lines: list[str] = []
    for tool in tools:
        lines += [*_stub(tool), ""]
    return "\n".join(lines)
