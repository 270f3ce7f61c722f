"""The Python package target: models, the handler interface, the dispatch table, the runtime."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolnexus_gen.codegen.models import LINE_LENGTH
from toolnexus_gen.codegen.pysource import docstring, py_literal_lines, py_str
from toolnexus_gen.config.options import Header
from toolnexus_gen.ir import ToolInfo, ToolSet
from toolnexus_gen.targets.registry import INFO

if TYPE_CHECKING:
    import jinja2

# Templates rendered once each, named after the file they produce.
PACKAGE_TEMPLATES = ("__init__.py", "dispatch.py", "handlers.py", "models/__init__.py")
# The toolnexus-runtime versions generated packages work with: [minimum, below). A generated
# package checks this when it is imported; `init` adds the same range to the project's
# dependencies. Raise `below` only together with a runtime whose API these templates fit.
RUNTIME_MINIMUM = "0.2.0"
RUNTIME_BELOW = "0.3"
RUNTIME_REQUIREMENT = f"toolnexus-runtime>={RUNTIME_MINIMUM},<{RUNTIME_BELOW}"


def templates_dir() -> Path:
    here = Path(__file__).parent.parent  # the package folder
    installed = here / "templates"  # inside a wheel
    return installed if installed.is_dir() else here.parent / "templates"


@cache
def environment() -> jinja2.Environment:
    import jinja2  # only when templates are rendered: a build that reuses them never needs it

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir() / "python"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["py_str"] = py_str
    env.filters["docstring"] = docstring
    env.filters["handler_method"] = handler_method
    env.filters["binding_literal"] = binding_literal
    env.filters["toolset_entry"] = toolset_entry
    return env


BINDING_INDENT = 12  # where `binding=` stands in dispatch.py.jinja


def binding_literal(binding: str) -> str:
    """A tool's binding (canonical JSON in ToolInfo) as the Python literal dispatch.py holds
    after `binding=` at its indent, split over lines as ruff format would."""
    lines = py_literal_lines(json.loads(binding), BINDING_INDENT, "binding=", ",")
    return lines.removeprefix(" " * BINDING_INDENT + "binding=").removesuffix(",")


def toolset_entry(item: tuple[str, tuple[str, ...]]) -> str:
    """One TOOLSETS entry as ruff format writes it (a one-tool tuple on one line when it fits)."""
    name, members = item
    if len(members) == 1:
        line = f"        {py_str(name)}: ({py_str(members[0])},),"
        if len(line) <= LINE_LENGTH:  # ruff's default, as every generated file
            return line
    inner = "".join(f"            {py_str(member)},\n" for member in members)
    return f"        {py_str(name)}: (\n{inner}        ),"


def model_header(header: Header) -> str:
    """The header every model module starts with."""
    return environment().get_template("_header.jinja").render(_header_context(header)).rstrip("\n")


def _header_context(header: Header) -> dict[str, Any]:
    return {"specs_rel": header.specs_rel, "command": header.command}


# What dispatch.py defines, besides one to_<target> per target.
DISPATCH_NAMES = ["TOOLS", "TOOLSETS", "Toolkit", "allowed_tools", "tool_definitions"]

# The files render_package writes (the models aside), whatever the targets.
PACKAGE_FILES = ("py.typed", *PACKAGE_TEMPLATES)


def render_package(
    toolset: ToolSet,
    header: Header,
    only: Collection[str] | None = None,
    fresh: Collection[str] | None = None,
) -> dict[str, str]:
    """The package's Python files (those named in `only`, or all), models aside. Each depends
    on what package_keys says, so a build reuses a file while its key stays the same. Each is
    compiled before it may reach disk; of handlers.py, when `fresh` names the tools made in
    this build (the others' methods were compiled by the build that made them), its head and
    their methods only."""
    if only is not None and not only:
        return {}
    env = environment()
    context: dict[str, Any] = {
        **_header_context(header),
        "tools": toolset.tools,
        "targets": toolset.targets,
        "toolsets": toolset.toolsets,
        "target_types": {name: info.python_type for name, info in INFO.items()},
        "target_docs": {name: info.python_doc for name, info in INFO.items()},
        "exports": _exports(toolset),
        "runtime_minimum": RUNTIME_MINIMUM,
        "runtime_below": RUNTIME_BELOW,
        "model_names": ruff_sorted([tool.python.model for tool in toolset.tools]),
        "model_imports": import_sorted([tool.python.model for tool in toolset.tools]),
        "handler_models": import_sorted([t.python.model for t in toolset.tools if t.has_method]),
        "bound": any(not tool.has_method for tool in toolset.tools),
        "skills": SKILLS_FILE in toolset.files,
        "model_modules": module_sorted([(t.python.module, t.python.model) for t in toolset.tools]),
        "dispatch_imports": import_sorted(_dispatch_names(toolset)),
        "dispatch_exports": ruff_sorted(_dispatch_names(toolset)),
    }
    files = {"py.typed": ""}
    for name in PACKAGE_TEMPLATES:
        if only is not None and name not in only:
            continue
        source = env.get_template(f"{name}.jinja").render(context)
        if name != "handlers.py" or not _check_handlers(source, toolset, fresh):
            compile(source, name, "exec")  # a template bug must never reach disk
        files[name] = source
    return files


def _check_handlers(source: str, toolset: ToolSet, fresh: Collection[str] | None) -> bool:
    """Compile handlers.py's head and the methods of the `fresh` tools, each on its own (a
    class body of whole methods is valid when each method is); False when the whole file is
    to be compiled instead (no `fresh`, most tools fresh, or no method to tell the head by)."""
    end = source.find(_FIRST_METHOD)
    if fresh is None or end < 0 or 2 * len(fresh) > len(toolset.tools):
        return False
    compile(source[:end] + "\n    pass\n", "handlers.py", "exec")
    for tool in toolset.tools:
        if tool.has_method and tool.name in fresh:
            method = handler_method(tool)
            if method not in source:
                return False
            _compile_method(method)
    return True


def _compile_method(method: str) -> None:
    """Compile one handlers.py method on its own, in a class (SyntaxError when it is not Python)."""
    compile(f"class C:{method}\n", "handlers.py", "exec")


# handlers.py is its head (imports, the class line) and one method per tool, in name order.
_METHOD = """
    @abstractmethod
    def {method}(
        self,
        args: {model},
        ctx: ToolContext,
    ) -> ToolOutput | Awaitable[ToolOutput]:
        {doc}
        raise NotImplementedError"""
_FIRST_METHOD = "\n\n    @abstractmethod\n"


def handler_method(tool: ToolInfo) -> str:
    """One tool's abstract method in handlers.py (the template uses this too)."""
    return _method(tool.python.method, tool.python.model, tool.description)


@lru_cache(maxsize=4096)  # a process that builds again (build --watch) makes only the new ones
def _method(method: str, model: str, description: str) -> str:
    return _METHOD.format(method=method, model=model, doc=docstring(description, 8))


def update_handlers(previous: str, toolset: ToolSet, fresh: Collection[str]) -> str | None:
    """handlers.py when only descriptions changed since `previous` was written: its head kept,
    its methods made again (None when `previous` has no method to tell its head by). Only the
    methods of the `fresh` tools (made in this build) are new text, and only they are compiled."""
    end = previous.find(_FIRST_METHOD)
    if end < 0 or not toolset.tools:
        return None
    methods = []
    for tool in toolset.tools:
        if not tool.has_method:
            continue
        method = handler_method(tool)
        if tool.name in fresh:
            _compile_method(method)  # never a bad file on disk
        methods.append(method)
    return previous[:end] + "\n" + "\n".join(methods) + "\n"


# A package with skills (sources/skills.py writes this file) exports skills_prompt().
SKILLS_FILE = "schemas/skills.json"


def _dispatch_names(toolset: ToolSet) -> list[str]:
    names = [*DISPATCH_NAMES, *(f"to_{t}" for t in toolset.targets)]
    return names + (["skills_prompt"] if SKILLS_FILE in toolset.files else [])


def package_keys(toolset: ToolSet, header: Header) -> dict[str, Any]:
    """What each package file is rendered from (its template is in the generator's fingerprint).
    Only handlers.py carries descriptions (as docstrings), so a description edit renders it
    alone."""
    names = [
        [t.name, t.python.method, t.python.model, t.python.module, t.binding] for t in toolset.tools
    ]
    common = [
        header.specs_rel,
        header.command,
        list(toolset.targets),
        names,
        list(toolset.files),
        toolset.toolsets,
    ]
    keys: dict[str, Any] = {name: common for name in PACKAGE_FILES}
    keys["handlers.py"] = [*common, [t.description for t in toolset.tools]]
    keys[HANDLERS_HEAD] = common  # what update_handlers keeps
    return keys


HANDLERS_HEAD = "handlers.py (head)"


def _exports(toolset: ToolSet) -> list[str]:
    names = [
        "TOOLS",
        "TOOLSETS",
        "allowed_tools",
        "MaxTurnsExceeded",
        "RunResult",
        "ToolCall",
        "ToolContext",
        "ToolError",
        "ToolHandlers",
        "ToolOutput",
        "ToolResult",
        "ToolSpec",
        "Toolkit",
        "tool_definitions",
    ]
    names += [f"to_{target}" for target in toolset.targets]
    names += _mcp_names(toolset)
    names += ["skills_prompt"] if SKILLS_FILE in toolset.files else []
    names += [tool.python.model for tool in toolset.tools]
    return ruff_sorted(names)


def _mcp_names(toolset: ToolSet) -> list[str]:
    return ["mcp_server", "serve_mcp"] if "mcp" in toolset.targets else []


def ruff_sorted(names: list[str]) -> list[str]:
    """Names in the order ruff's RUF022 wants in `__all__`: CONSTANTS, Classes, then the rest,
    each group in natural order, case-sensitively (GetAShowArgs before GetAnAlbumArgs)."""
    return sorted(names, key=lambda name: (_member_type(name), natural_key(name)))


def import_sorted(names: list[str]) -> list[str]:
    """Names in the order ruff's isort (I001) wants in one `from m import (...)`: CONSTANTS,
    Classes, then the rest, each group in natural order ignoring case (GetAnAlbumArgs before
    GetAShowArgs), ties broken case-sensitively."""
    return sorted(
        names,
        key=lambda name: (_member_type(name), natural_key(name.lower()), natural_key(name)),
    )


def module_sorted(imports: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(module, name) pairs in the order ruff's isort wants `from .module import name` lines."""
    return sorted(
        imports,
        key=lambda pair: (
            natural_key(pair[0].lower()),
            natural_key(pair[0]),
            natural_key(pair[1].lower()),
            natural_key(pair[1]),
        ),
    )


def _member_type(name: str) -> int:
    """ruff's member type: a CONSTANT is longer than one character and all its cased characters
    are upper case (a lone `A` is a Class), a Class starts upper case, the rest are variables."""
    if len(name) > 1 and name.isupper():
        return 0
    return 1 if name[:1].isupper() else 2


_PIECES = re.compile(r"[0-9]+|[^0-9]")  # ASCII digit runs, and every other character


@lru_cache(maxsize=1 << 16)  # a build sorts each name several times (lower case, and not)
def natural_key(name: str) -> tuple[tuple[Any, ...], ...]:
    """A sort key for natural order as ruff compares names (the natord crate, after Martin
    Pool's strnatcmp): characters by code point; digit runs compare as numbers, or digit by
    digit (left-aligned) when either starts with 0. Every digit run sorts where its first digit
    would against another character (digits are 48-57, and no other character is); a run that
    starts with 0 sorts before one that does not (left-aligned, '0' is the smallest digit), runs
    that start with 0 compare as strings, the others by length, then as strings."""
    key: list[tuple[Any, ...]] = []
    for piece in _PIECES.findall(name):
        if "0" <= piece[0] <= "9":
            key.append((48, 0, piece) if piece[0] == "0" else (48, 1, len(piece), piece))
        else:
            key.append((ord(piece), 0, ""))
    return tuple(key)
