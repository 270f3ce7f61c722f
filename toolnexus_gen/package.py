"""The Python package target: models, the handler interface, the dispatch table, the runtime."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from . import models
from .cache import Memo
from .ir import ToolSet
from .options import Header
from .pysource import docstring, py_str

TARGET_TYPES = {
    "gemini": "list[dict[str, Any]]",
    "openai": "list[dict[str, Any]]",
    "openai_responses": "list[dict[str, Any]]",
    "anthropic": "list[dict[str, Any]]",
    "mcp": "list[dict[str, Any]]",
    "bedrock": "dict[str, Any]",
}
TARGET_DOCS = {
    "gemini": "Gemini `tools` (one functionDeclarations wrapper)",
    "openai": "OpenAI Chat Completions `tools`",
    "openai_responses": "OpenAI Responses `tools`",
    "anthropic": "Anthropic Messages `tools`",
    "mcp": "MCP `tools/list` tools",
    "bedrock": "Bedrock Converse `toolConfig`",
}
# The tool-loop mixin the Toolkit gets for each target that has one.
LOOPS = {
    "gemini": "GeminiLoop",
    "openai": "OpenAIChatLoop",
    "openai_responses": "OpenAIResponsesLoop",
    "anthropic": "AnthropicLoop",
    "bedrock": "BedrockLoop",
}
# Templates rendered once each, named after the file they produce.
PACKAGE_TEMPLATES = (
    "__init__.py",
    "_loops.py",
    "_runtime.py",
    "dispatch.py",
    "handlers.py",
    "models/__init__.py",
)


def templates_dir() -> Path:
    here = Path(__file__).parent
    installed = here / "templates"  # inside a wheel
    return installed if installed.is_dir() else here.parent / "templates"


@cache
def environment() -> jinja2.Environment:
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
    return env


def render_package(toolset: ToolSet, header: Header, memo: Memo | None = None) -> dict[str, str]:
    env = environment()
    context: dict[str, Any] = {
        "tools": toolset.tools,
        "targets": toolset.targets,
        "target_types": TARGET_TYPES,
        "target_docs": TARGET_DOCS,
        "specs_rel": header.specs_rel,
        "command": header.command,
        "exports": _exports(toolset),
        "loops": [LOOPS[t] for t in toolset.targets if t in LOOPS],
        "model_names": ruff_sorted([tool.python.model for tool in toolset.tools]),
        "model_modules": sorted((t.python.module, t.python.model) for t in toolset.tools),
        "dispatch_imports": ruff_sorted(
            [
                "TOOLS",
                "Toolkit",
                "tool_definitions",
                *(f"to_{t}" for t in toolset.targets),
                *_mcp_names(toolset),
            ]
        ),
        "dispatch_exports": ruff_sorted(
            [
                "TOOLS",
                "ToolContext",
                "ToolResult",
                "ToolSpec",
                "Toolkit",
                "tool_definitions",
                *(f"to_{t}" for t in toolset.targets),
                *_mcp_names(toolset),
            ]
        ),
    }
    files = {"py.typed": ""}
    templates = [*PACKAGE_TEMPLATES, *(["_mcp.py"] if "mcp" in toolset.targets else [])]
    for name in templates:
        source = env.get_template(f"{name}.jinja").render(context)
        compile(source, name, "exec")  # a template bug must never reach disk
        files[name] = source
    model_header = env.get_template("_header.jinja").render(context).rstrip("\n")
    sources = models.model_sources(toolset.tools, model_header, memo or Memo(None))
    for tool, source in zip(toolset.tools, sources, strict=True):
        files[f"models/{tool.python.module}.py"] = source  # compiled when generated
    return files


def _exports(toolset: ToolSet) -> list[str]:
    names = [
        "TOOLS",
        "MaxTurnsExceeded",
        "RunResult",
        "ToolCall",
        "ToolContext",
        "ToolHandlers",
        "ToolOutput",
        "ToolResult",
        "ToolSpec",
        "Toolkit",
        "tool_definitions",
    ]
    names += [f"to_{target}" for target in toolset.targets]
    names += _mcp_names(toolset)
    names += [tool.python.model for tool in toolset.tools]
    return ruff_sorted(names)


def _mcp_names(toolset: ToolSet) -> list[str]:
    return ["mcp_server", "serve_mcp"] if "mcp" in toolset.targets else []


def ruff_sorted(names: list[str]) -> list[str]:
    """Names in the order ruff's isort and RUF022 want: CONSTANTS, Classes, then the rest."""

    def key(name: str) -> tuple[int, list[tuple[int, int | str]]]:
        kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
        natural = [
            (1, int(part)) if part.isdigit() else (0, part) for part in re.split(r"(\d+)", name)
        ]
        return kind, natural

    return sorted(names, key=key)
