"""The tool surface of a project: every tool as its consumers meet it, read from a generated
package (the files of a build, in memory, or a package checked in at an earlier revision), or
from spec data (an MCP server's snapshot).

A package is read, never imported, and only through what its consumers rely on: the neutral
tool list (schemas/tools.json: name, description, input and output schema), each provider file's
entry (what a model is shown: strict mode, examples, annotations, its token cost), the dispatch
table, the handler interface and the argument models. So a package made by any generator version
compares with the one a build makes now.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from toolnexus_gen.breaking import python
from toolnexus_gen.targets.registry import NAMES

TOOLS_FILE = "schemas/tools.json"
ALIASES_FILE = "schemas/aliases.json"
PYTHON_FILES = ("dispatch.py", "handlers.py", "models/__init__.py")
# What a tool without arguments takes (a generated model forbids any argument).
NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


class PackageError(Exception):
    """Files that are not a generated package, or a broken one: one line saying why."""


@dataclass(frozen=True)
class ToolSurface:
    name: str
    description: str
    input_schema: Any = None  # None: no arguments
    output_schema: Any = None
    title: str | None = None
    annotations: Any = None
    examples: Any = None  # as a model is shown them (Anthropic's input_examples), or the spec's
    entries: tuple[tuple[str, Any], ...] = ()  # (target, its entry in that target's file)
    model: str | None = None  # its argument model class
    model_source: str | None = None  # the text of the model's module
    method: str | None = None  # its ToolHandlers method (None: a binding runs it)
    binding: Any = None  # how it runs when not a method: {kind: settings}
    deprecated: Any = None  # the spec's `deprecated` (true, or {since, note}), else None
    # the classes models/__init__.py exports (the package's, alike for each of its tools)
    exported: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def targets(self) -> tuple[str, ...]:
        """The provider files that carry it."""
        return tuple(target for target, _ in self.entries)

    @property
    def strict(self) -> dict[str, bool]:
        """Strict mode as each entry that says sends it."""
        return {
            target: entry["strict"]
            for target, entry in self.entries
            if isinstance(entry.get("strict"), bool)
        }

    @property
    def deprecation(self) -> dict[str, Any] | None:
        """Whether the tool is deprecated (its spec says so, or its MCP annotations do), as
        {since?, note?}; None: it is not."""
        if isinstance(self.deprecated, dict):
            return self.deprecated
        if self.deprecated is True:
            return {}
        if isinstance(self.annotations, dict) and self.annotations.get("deprecated") is True:
            return {}
        return None

    @property
    def arguments(self) -> Any:
        return self.input_schema if self.input_schema is not None else NO_ARGUMENTS

    def source(self) -> str:
        """Where the tool comes from, in words: '' for a spec of the project's own."""
        if not isinstance(self.binding, dict) or not self.binding:
            return ""
        kind, settings = next(iter(self.binding.items()))
        if kind == "mcp" and isinstance(settings, dict):
            return f"MCP server {settings.get('server')!r}"
        return {
            "builtin": "the built-in tools",
            "skill": "the skills",
            "http": "an HTTP endpoint",
        }.get(kind, f"its {kind} binding")


@dataclass(frozen=True)
class Surface:
    tools: dict[str, ToolSurface]  # by name
    python: bool  # whether it has a Python side (a package; not a spec snapshot)


def read_package(files: Mapping[str, str], where: str) -> Surface:
    """The surface of a generated package, given its files (relative path -> text).
    `where` names the package in errors."""
    listed = _json(files, TOOLS_FILE, where)
    if not isinstance(listed, list) or not all(
        isinstance(entry, dict) and isinstance(entry.get("name"), str) for entry in listed
    ):
        raise PackageError(f"{where}/{TOOLS_FILE}: not a list of tools with names")
    tools: dict[str, dict[str, Any]] = {}
    for entry in listed:
        tools[entry["name"]] = {
            "name": entry["name"],
            "description": entry.get("description")
            if isinstance(entry.get("description"), str)
            else "",
            "input_schema": entry.get("input_schema"),
            "output_schema": entry.get("output_schema"),
            "deprecated": entry.get("deprecated"),
            "entries": {},
        }
    _read_targets(files, where, tools)
    _read_python(files, where, tools)
    return Surface(
        {
            name: ToolSurface(**{**fields, "entries": tuple(fields["entries"].items())})
            for name, fields in sorted(tools.items())
        },
        True,
    )


def from_spec(spec: Mapping[str, Any]) -> ToolSurface:
    """One tool's surface from spec data (a snapshot file's JSON): no Python, no targets."""
    description = spec.get("description")
    examples = spec.get("examples")
    return ToolSurface(
        name=str(spec.get("name", "")),
        description=description if isinstance(description, str) else "",
        input_schema=spec.get("input_schema"),
        output_schema=spec.get("output_schema"),
        title=spec.get("title") if isinstance(spec.get("title"), str) else None,
        annotations=spec.get("annotations"),
        examples=examples if isinstance(examples, list) else None,
        binding=spec.get("source"),
        deprecated=spec.get("deprecated"),
    )


def _json(files: Mapping[str, str], name: str, where: str) -> Any:
    try:
        return json.loads(files[name])
    except KeyError:
        raise PackageError(f"{where} holds no generated package ({name} is missing)") from None
    except ValueError as exc:
        raise PackageError(f"{where}/{name}: not JSON ({exc})") from None
    except RecursionError:
        raise PackageError(f"{where}/{name}: nested too deeply to read") from None


def _target_files() -> Iterator[tuple[str, str]]:
    """Each target and its provider file."""
    from toolnexus_gen.targets import TARGETS

    for name in NAMES:
        yield name, TARGETS[name].file


@cache
def read_files() -> frozenset[str]:
    """The files a package's surface is read from, but its model modules (models/*.py)."""
    return frozenset({TOOLS_FILE, ALIASES_FILE, *PYTHON_FILES, *(f for _, f in _target_files())})


def _read_targets(files: Mapping[str, str], where: str, tools: dict[str, dict[str, Any]]) -> None:
    """Each provider file's entry of each tool (found by its name, or its alias there)."""
    aliases: dict[str, Any] = {}
    if ALIASES_FILE in files:
        table = _json(files, ALIASES_FILE, where)
        aliases = table.get("tools", {}) if isinstance(table, dict) else {}
    for target, file in _target_files():
        if file not in files:
            continue
        names = aliases.get(target, {}) if isinstance(aliases.get(target), dict) else {}
        for entry in _entries(_json(files, file, where), tools, names):
            tool = tools[names.get(entry["name"], entry["name"])]
            if target in tool["entries"]:
                continue  # a name twice in one file: the first is the tool's
            tool["entries"][target] = entry
            if target == "mcp":
                if isinstance(entry.get("title"), str):
                    tool["title"] = entry["title"]
                if entry.get("annotations") is not None:
                    tool["annotations"] = entry["annotations"]
            if entry.get("input_examples") is not None and "examples" not in tool:
                tool["examples"] = entry["input_examples"]


def _entries(
    data: Any, tools: Mapping[str, Any], aliases: Mapping[str, str]
) -> Iterator[dict[str, Any]]:
    """The tool entries inside a provider file, whatever its wrappers: each object whose string
    `name` is a tool's (or its alias) and that has a description; a namespace's `tools` list is
    walked into, an entry never (its schema or examples may hold such objects too)."""
    if isinstance(data, list):
        for item in data:
            yield from _entries(item, tools, aliases)
    elif isinstance(data, dict):
        name = data.get("name")
        if (
            isinstance(name, str)
            and "description" in data
            and not isinstance(data.get("tools"), list)
            and (name in tools or name in aliases)
        ):
            yield data
            return
        for value in data.values():
            if isinstance(value, (dict, list)):
                yield from _entries(value, tools, aliases)


def _read_python(files: Mapping[str, str], where: str, tools: dict[str, dict[str, Any]]) -> None:
    for name in PYTHON_FILES:
        if name not in files:
            raise PackageError(f"{where} is not a complete generated package ({name} is missing)")
    try:
        methods = python.handler_methods(files["handlers.py"], f"{where}/handlers.py")
        table = python.dispatch_table(files["dispatch.py"], f"{where}/dispatch.py")
        modules = python.model_modules(files["models/__init__.py"], f"{where}/models/__init__.py")
    except python.PythonError as exc:
        raise PackageError(str(exc)) from None
    exported = frozenset(modules)
    for name, tool in tools.items():
        tool["exported"] = exported
        bound = table.get(name) or python.fallback_bound(name, methods, modules)
        tool["method"] = bound.method
        tool["binding"] = bound.binding
        if bound.model is None:
            continue
        tool["model"] = bound.model
        module = modules.get(bound.model)
        if module is None or module not in files:
            raise PackageError(
                f"{where} is not a complete generated package (the module of {bound.model} is "
                "missing)"
            )
        tool["model_source"] = files[module]
