"""`toolnexus-gen init` and `toolnexus-gen scaffold`: files that belong to the user, written once.

Neither ever replaces a file: init only creates what is missing (and appends the config section
to a pyproject.toml that has none); scaffold writes its module once and afterwards only reports
the methods that new tools still need.
"""

from __future__ import annotations

import ast
import json
import keyword
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from toolnexus_gen.codegen.package import RUNTIME_REQUIREMENT, import_sorted
from toolnexus_gen.codegen.pysource import docstring, py_str
from toolnexus_gen.config.pyproject import read_pyproject
from toolnexus_gen.diagnostics import printable
from toolnexus_gen.ir import ToolInfo

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
specs = {specs}
out = {out}
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
        files: '^({specs}/|pyproject\\.toml$)'
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
    required: Path | None = None  # the pyproject.toml whose [project].dependencies got the runtime
    notes: list[str] = field(default_factory=list)


def init(root: Path, specs: str = "specs", out: str = "tools", version: str = "") -> InitReport:
    """A ValueError, with nothing made, when `specs` or `out` is not a plain relative path
    inside `root` (it is written into pyproject.toml and the pre-commit hook's pattern)."""
    for option, value in (("--specs", specs), ("--out", out)):
        _check_inside(option, value)
    report = InitReport()
    root.mkdir(parents=True, exist_ok=True)
    specs_dir = root / specs
    if specs_dir.is_dir() and any(specs_dir.iterdir()):
        report.kept.append(f"{specs_dir.as_posix()} (already holds files; no example added)")
    else:
        specs_dir.mkdir(parents=True, exist_ok=True)
        _create(specs_dir / "get_weather.yaml", EXAMPLE_SPEC, report)
    pyproject = root / "pyproject.toml"
    # TOML basic strings: JSON's escapes are TOML's (the text is printable and UTF-8, checked)
    section = CONFIG_SECTION.format(
        specs=json.dumps(specs, ensure_ascii=False), out=json.dumps(out, ensure_ascii=False)
    )
    if not pyproject.exists():
        _create(pyproject, section.lstrip("\n"), report)
    elif "[tool.toolnexus-gen" in read_pyproject(pyproject):
        report.kept.append(f"{pyproject.as_posix()} (already has [tool.toolnexus-gen])")
    else:
        text = read_pyproject(pyproject)
        with pyproject.open("a", encoding="utf-8") as handle:  # append only: never rewrite
            handle.write(("" if text.endswith("\n") else "\n") + section)
        report.appended.append(pyproject)
    _require_runtime(pyproject, report)
    hooks = root / ".pre-commit-config.yaml"
    pattern = re.escape(Path(specs).as_posix()).replace("'", "''")  # a YAML '...' scalar
    snippet = PRE_COMMIT.format(specs=pattern, version=version)
    if hooks.exists():
        report.kept.append(f"{hooks.as_posix()} (exists; add the hook yourself:\n{snippet})")
    else:
        _create(hooks, snippet, report)
    return report


def _check_inside(option: str, value: str) -> None:
    shown = printable(value)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"{option} '{shown}' is not UTF-8: pyproject.toml cannot name it"
        ) from None
    if not value or not value.isprintable():
        raise ValueError(f"{option} '{shown}' must be a folder name of printable characters")
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts:
        raise ValueError(f"{option} '{shown}' must be a relative path inside the project folder")


def _require_runtime(pyproject: Path, report: InitReport) -> None:
    """Add the runtime that generated packages import to [project].dependencies, when the
    project has that table. The edit is textual (the file keeps its comments and layout) and is
    written only if the file then parses to exactly the old data plus the requirement."""
    import os

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    text = read_pyproject(pyproject)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        report.notes.append(
            f"{pyproject.as_posix()} does not parse; add {RUNTIME_REQUIREMENT} yourself"
        )
        return
    project = data.get("project")
    if not isinstance(project, dict):
        report.notes.append(
            f"your application needs {RUNTIME_REQUIREMENT} at run time (the generated package "
            "imports it); add it to your dependencies"
        )
        return
    dependencies = project.get("dependencies", [])
    if any(re.match(r"toolnexus[-_.]runtime\b", str(d), re.I) for d in dependencies):
        report.kept.append(f"{pyproject.as_posix()} (already requires toolnexus-runtime)")
        return
    entry = f'"{RUNTIME_REQUIREMENT}"'
    table = re.search(r"(?m)^\[project\][ \t]*(#.*)?$", text)
    deps = re.compile(r"(?m)^(dependencies[ \t]*=[ \t]*\[)([ \t]*)(\]?)")
    found = deps.search(text, table.end()) if table else None
    next_table = re.search(r"(?m)^\[", text[table.end() :]) if table else None
    if table and found and (next_table is None or found.start() < table.end() + next_table.start()):
        if found.group(3):  # dependencies = []
            edited = text[: found.end(1)] + entry + text[found.end(1) :]
        elif text[found.end(2) : found.end(2) + 1] in ("\n", "#", "\r"):  # a list over lines
            indent = re.match(r"[^\n]*\n([ \t]*)", text[found.end(1) :])
            pad = indent.group(1) if indent and indent.group(1) else "    "
            edited = text[: found.end(1)] + f"\n{pad}{entry}," + text[found.end(1) :]
        else:  # dependencies = ["a", ...] on one line
            edited = text[: found.end(1)] + entry + ", " + text[found.end(1) :]
    elif table and "dependencies" not in project:
        edited = text[: table.end()] + f"\ndependencies = [{entry}]" + text[table.end() :]
    else:
        edited = ""
    try:
        new = tomllib.loads(edited) if edited else {}
    except tomllib.TOMLDecodeError:
        new = {}
    added = new.get("project", {}).get("dependencies", [])
    ok = (
        RUNTIME_REQUIREMENT in added
        and [d for d in added if d != RUNTIME_REQUIREMENT] == dependencies
        and new == {**data, "project": {**project, "dependencies": added}}
    )
    if not ok:
        report.notes.append(
            f"add {RUNTIME_REQUIREMENT} to [project].dependencies in {pyproject.as_posix()} "
            "(the generated package imports it)"
        )
        return
    temporary = pyproject.with_name(f".{pyproject.name}.{os.getpid()}.tnx-tmp")
    temporary.write_text(edited, "utf-8")
    os.replace(temporary, pyproject)
    report.required = pyproject


def _create(path: Path, text: str, report: InitReport) -> None:
    with path.open("x", encoding="utf-8") as handle:  # "x": fails rather than replace a file
        handle.write(text)
    report.created.append(path)


# -- scaffold -----------------------------------------------------------------------------------


def package_import(out: Path, class_name: str = "Handlers") -> str:
    """The import name of the generated package: its folder, plus parent packages. A
    ValueError when a folder's name cannot be written in an import statement, or when
    `class_name` (the handler class scaffold writes) is not a Python class name."""
    if not is_python_name(class_name):
        raise ValueError(f"--class-name '{printable(class_name)}' is not a Python class name")
    parts = [out.resolve().name]
    parent = out.resolve().parent
    while (parent / "__init__.py").is_file():
        parts.insert(0, parent.name)
        parent = parent.parent
    for part in parts:
        if not is_python_name(part):
            raise ValueError(
                f"the package folder name '{printable(part)}' cannot be imported by name in "
                "Python (letters, digits and underscores, not starting with a digit, not a "
                "keyword): build into such a folder (--out my_tools) to scaffold handlers for it"
            )
    return ".".join(parts)


def is_python_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def scaffold_source(tools: tuple[ToolInfo, ...], package: str, class_name: str) -> str:
    used = ["ToolContext", "ToolHandlers", "ToolOutput"] if tools else ["ToolHandlers"]
    names = import_sorted([*used, *(t.python.model for t in tools)])
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
