"""Stage 3: units become a FileMap {relative path: text}, models apart. Pure: no disk access.

Each provider file is its target's wrapper around the entries the units carry, spliced in as
they were encoded (so the entries of reused units are never encoded again); the package's Python
comes from templates (or, unchanged, from the last build), and each model from the memo or
datamodel-code-generator.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolnexus_gen.codegen.models import Models
from toolnexus_gen.codegen.package import PACKAGE_FILES, model_header, render_package
from toolnexus_gen.config.options import Header
from toolnexus_gen.incremental.cache import Memo
from toolnexus_gen.ir import ToolSet, Unit
from toolnexus_gen.pipeline.units import files_of
from toolnexus_gen.targets.base import assemble

FileMap = dict[str, str]
GITIGNORE = "# Written by toolnexus-gen.\n.toolnexus-gen.lock\n.toolnexus-gen.cache/\n"


@dataclass
class Rendered:
    files: FileMap
    # file -> unit rel -> (start, end) of its entry: what lets the next build reuse it
    layout: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)


def render(
    toolset: ToolSet,
    units: Sequence[Unit],
    header: Header,
    reused: dict[str, str] | None = None,
) -> Rendered:
    """Every file but the models (render_models). `units` in name order, one per tool of
    toolset; `reused` holds the last build's package files that are still what render_package
    would write (the others are rendered)."""
    rendered = Rendered({})
    for file, document in files_of(toolset.targets).items():
        carried = [unit for unit in units if file in unit.entries]
        text, places = assemble(document, [unit.entries[file] for unit in carried])
        rendered.files[file] = text
        rendered.layout[file] = {
            unit.rel: place for unit, place in zip(carried, places, strict=True)
        }
    aliases = alias_file(toolset)
    if aliases is not None:
        rendered.files[ALIASES_FILE] = aliases
    # The build's lock file and cache stay in the folder; keep them out of version control.
    rendered.files[".gitignore"] = GITIGNORE
    reused = reused or {}
    missing = [name for name in PACKAGE_FILES if name not in reused]
    rendered.files.update(reused)
    rendered.files.update(render_package(toolset, header, missing))
    return rendered


ALIASES_FILE = "schemas/aliases.json"


def alias_file(toolset: ToolSet) -> str | None:
    """The name maps of name_aliases, which the runtime reads to send calls back to the spec's
    names: {"tools": {target: {alias: name}}, "arguments": {target: {tool: argument map}}}; and
    strictify's {"nulls": {target: {tool: {property: [made nullable, inner map]}}}}."""
    tools: dict[str, dict[str, str]] = {}
    arguments: dict[str, dict[str, Any]] = {}
    nulls: dict[str, dict[str, Any]] = {}
    for tool in toolset.tools:
        for target, alias in tool.aliases:
            tools.setdefault(target, {})[alias] = tool.name
        for target, mapping in tool.argument_aliases:
            arguments.setdefault(target, {})[tool.name] = json.loads(mapping)
        for target, mapping in tool.null_maps:
            nulls.setdefault(target, {})[tool.name] = json.loads(mapping)
    if not tools and not arguments and not nulls:
        return None
    body = {
        "tools": dict(sorted(tools.items())),
        "arguments": dict(sorted(arguments.items())),
        "nulls": dict(sorted(nulls.items())),
    }
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def model_maker(header: Header, memo: Memo) -> Models:
    """The build's models, from the memo or made on the workers as units ask for them."""
    return Models(memo, lambda: model_header(header))


def render_models(toolset: ToolSet, units: Sequence[Unit], models: Models) -> FileMap:
    """Each tool's model module (the slow part: datamodel-code-generator, on the workers)."""
    keys = [unit.model_key or "" for unit in units]
    jobs = [unit.model_job for unit in units]
    sources = models.sources(keys, jobs)
    return {  # each compiled when generated
        f"models/{tool.python.module}.py": source
        for tool, source in zip(toolset.tools, sources, strict=True)
    }
