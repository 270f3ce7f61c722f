"""Stage 2: each spec on its own, from its file to everything the build makes of it: a Unit.

A unit depends only on its spec file, the files its `$ref`s reach and the build's configuration.
So a later build with the same configuration reuses the units of unchanged specs (cache.py)
instead of loading, checking and encoding them again, and the whole-set stage (build.py) works
on units alone, wherever they came from.

Per spec: load -> validate -> bundle -> for each target: the schema it emits, its rules, and its
entry in the target's file, encoded -> the model's memo key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolnexus_gen.codegen.models import Models, model_job, model_key
from toolnexus_gen.config.options import BuildOptions, Header
from toolnexus_gen.diagnostics import Diagnostic, Severity, has_errors
from toolnexus_gen.incremental.cache import Memo, sha, unit_key
from toolnexus_gen.ir import PLACED_KEYS, Document, Located, Tool, ToolInfo, Unit
from toolnexus_gen.spec.bundle import Cycle, bundle_tool
from toolnexus_gen.spec.digest import model_input
from toolnexus_gen.spec.load import Loader, LoadError, load_document
from toolnexus_gen.spec.refs import ref_closure
from toolnexus_gen.spec.validate import Validator
from toolnexus_gen.targets import TARGETS
from toolnexus_gen.targets.aliases import ArgumentMap, alias_properties, make_alias
from toolnexus_gen.targets.anthropic import optional_and_union_counts
from toolnexus_gen.targets.base import Target, effective, encode_entries, entry_depth
from toolnexus_gen.targets.describe import describe
from toolnexus_gen.targets.rules import cycle_finding
from toolnexus_gen.targets.transforms import strictify

TOOLS_FILE = "schemas/tools.json"  # the neutral form behind tool_definitions()


def files_of(targets: Sequence[str]) -> dict[str, Any]:
    """Each JSON file that carries one entry per tool, with its document function."""
    files: dict[str, Any] = {TARGETS[name].file: TARGETS[name].document for name in targets}
    files[TOOLS_FILE] = _definitions
    return files


def _definitions(entries: list[Any]) -> Any:
    return entries


def _definition(tool: Tool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.input_schema,
    }
    if tool.output_schema is not None:
        entry["output_schema"] = tool.output_schema
    return entry


def make_units(
    paths: Sequence[Path],
    options: BuildOptions,
    header: Header,
    memo: Memo,
    models: Models | None = None,
) -> list[Unit]:
    """The units of these spec files, made afresh; each unit's model is started on `models` as
    soon as the unit is made."""
    load = Loader()  # shared files are read once, however many specs reach them
    validator = Validator(options.specs, options.targets, memo, load)
    documents: list[Document] = []
    units: list[Unit] = []
    for path in paths:
        try:
            documents.append(load_document(path))
        except LoadError as exc:
            units.append(Unit(_rel(path, options.specs), "", (), (exc.diagnostic,), None))
    validator.prevalidate(documents)
    depths = {file: entry_depth(document) for file, document in files_of(options.targets).items()}
    for document in documents:
        unit = _unit(document, validator, options, header, memo, load, depths)
        if models is not None and unit.model_job is not None and unit.model_key is not None:
            models.start(unit.model_key, unit.model_job)
        units.append(unit)
    return units


def _rel(path: Path, specs: Path) -> str:
    return path.relative_to(specs).as_posix()


def _unit(
    document: Document,
    validator: Validator,
    options: BuildOptions,
    header: Header,
    memo: Memo,
    load: Loader,
    depths: dict[str, int],
) -> Unit:
    rel = _rel(document.path, options.specs)
    tool, diagnostics = validator.document(document)
    if tool is None:
        return Unit(rel, "", (), tuple(diagnostics), None)
    reached = sorted(
        {
            *ref_closure(tool.input_schema, document.path, options.specs, load),
            *ref_closure(tool.output_schema, document.path, options.specs, load),
        }
    )
    key = unit_key(rel, sha(document.raw), reached)
    files = tuple(path for path, _ in reached)
    tool, broken = bundle_tool(tool, options.specs, load)
    diagnostics += broken
    if has_errors(diagnostics):
        return Unit(rel, key, files, tuple(diagnostics), None)
    entries = {}
    aliases: list[tuple[str, str]] = []
    argument_aliases: list[tuple[str, str]] = []
    null_maps: list[tuple[str, str]] = []
    for name in options.targets:
        if not tool.for_target(name):
            continue
        target, target_options = TARGETS[name], options.target_options.get(name, {})
        try:
            located = effective(
                tool, target_options, must_inline=target.must_inline(target_options)
            )
        except Cycle as cycle:
            assert tool.located is not None
            diagnostics.append(cycle_finding(tool.located, cycle, name))
            continue
        emitted = tool
        if options.name_aliases:
            emitted, located, mapping, found = _aliased(tool, located, target)
            diagnostics += found
            if emitted.name != tool.name:
                aliases.append((name, emitted.name))
            if mapping:
                argument_aliases.append((name, json.dumps(mapping, sort_keys=True)))
        if "strictify" in target_options.get("transforms", ()):
            if located is not None:
                located, nulls = strictify(located)
                if nulls:
                    null_maps.append((name, json.dumps(nulls, sort_keys=True)))
            emitted = replace(emitted, strict=True)
            line, col = tool.place("strict")
            diagnostics.append(
                Diagnostic(
                    tool.display,
                    line,
                    col,
                    "TN221",
                    f"{name}: sent in strict mode (strictify): every object closed, every optional "
                    "property required and nullable; a null there reaches the handler as absent",
                    Severity.WARNING,
                    target=name,
                )
            )
        if "describe" in target_options.get("transforms", ()):
            if located is not None:
                located, described = describe(emitted, located, target, target_options)
                diagnostics += described
            if emitted.output_located is not None:
                output = effective(
                    emitted,
                    target_options,
                    must_inline=target.must_inline(target_options),
                    output=True,
                )
                assert output is not None
                output, described = describe(emitted, output, target, target_options, output=True)
                diagnostics += described
                emitted = replace(emitted, output_located=output, output_schema=output.schema)
        diagnostics += target.check(emitted, located, target_options)
        schema = located.schema if located is not None else None
        entries[target.file] = target.entry(emitted, schema, target_options)
    entries[TOOLS_FILE] = _definition(tool)
    job = model_job(tool)
    info = replace(
        info_of(tool),
        aliases=tuple(aliases),
        argument_aliases=tuple(argument_aliases),
        null_maps=tuple(null_maps),
    )
    return Unit(
        rel,
        key,
        files,
        tuple(diagnostics),
        info,
        dict(sorted(encode_entries(entries, depths).items())),
        model_key(memo, job, header),
        job,
        model_input(document.data),
    )


def _aliased(
    tool: Tool, located: Located | None, target: Target
) -> tuple[Tool, Located | None, ArgumentMap, list[Diagnostic]]:
    """The tool as `target`'s file names it under name_aliases: a tool name and property names
    the target rejects replaced by aliases it accepts, each reported as a warning."""
    found: list[Diagnostic] = []
    emitted = tool
    rule = target.name_rule
    if rule is not None and not re.fullmatch(rule.pattern, tool.name):
        alias = make_alias(tool.name, rule.pattern, rule.max_length)
        emitted = replace(tool, name=alias)
        line, col = tool.place("name")
        found.append(
            Diagnostic(
                tool.display,
                line,
                col,
                "TN210",
                f"{target.name}: tool name {tool.name!r} is sent as {alias!r} (name_aliases; "
                f"{rule.text}); calls under the alias reach this tool",
                Severity.WARNING,
                target=target.name,
            )
        )
    mapping: ArgumentMap = {}
    prop = target.property_rule
    if prop is not None and located is not None:
        located, mapping, renamed = alias_properties(
            located, re.compile(prop.pattern), prop.max_length, ".-"
        )
        for pointer, name, alias in renamed:
            document, source = located.source(pointer)
            line, col = document.positions.key(source)
            found.append(
                Diagnostic(
                    document.display,
                    line,
                    col,
                    "TN211",
                    f"{target.name}: property {name!r} is sent as {alias!r} (name_aliases; "
                    f"{prop.text}); handlers still see {name!r}",
                    Severity.WARNING,
                    pointer=source,
                    target=target.name,
                )
            )
    return emitted, located, mapping, found


def info_of(tool: Tool) -> ToolInfo:
    counts = optional_and_union_counts(tool.located) if tool.strict and tool.located else (0, 0)
    return ToolInfo(
        name=tool.name,
        description=tool.description,
        python=tool.python,
        display=tool.display,
        places=tuple(tool.place(key) for key in PLACED_KEYS),
        targets=tool.targets,
        strict=tool.strict,
        strict_counts=counts,
    )
