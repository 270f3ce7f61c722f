"""Stage 2: each spec on its own, from its file to everything the build makes of it: a Unit.

A unit depends only on its spec file, the files its `$ref`s reach and the build's configuration.
So a later build with the same configuration reuses the units of unchanged specs (cache.py)
instead of loading, checking and encoding them again, and the whole-set stage (build.py) works
on units alone, wherever they came from.

Per spec: load -> validate -> bundle -> for each target (emit.py): the schema it emits, its rules,
and its entry in the target's file, encoded -> the model's memo key.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolnexus_gen.codegen.models import Models, model_job, model_key
from toolnexus_gen.config.options import BuildOptions, Header
from toolnexus_gen.diagnostics import has_errors
from toolnexus_gen.ir import PLACED_KEYS, Contributed, Document, Packed, Tool, ToolInfo, Unit
from toolnexus_gen.memo import Memo, canonical, sha, unit_key
from toolnexus_gen.pipeline.emit import emit
from toolnexus_gen.pipeline.overrides import apply as apply_override
from toolnexus_gen.pipeline.overrides import gone_upstream
from toolnexus_gen.pipeline.tokens import estimate
from toolnexus_gen.progress import Progress, unseen
from toolnexus_gen.targets import TARGETS
from toolnexus_gen.targets.base import encode_entries, entry_depth
from toolnexus_gen.toolspec.bundle import bundle_tool
from toolnexus_gen.toolspec.codegen_keywords import refusals
from toolnexus_gen.toolspec.digest import model_input
from toolnexus_gen.toolspec.load import Loader, LoadError, load_document
from toolnexus_gen.toolspec.refs import ref_closure
from toolnexus_gen.toolspec.validate import Validator

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
    if tool.defer_loading:  # the loops' client-side search_tools loads it on demand
        entry["defer_loading"] = True
    if tool.deprecated:  # what `breaking` reads at a later revision
        entry["deprecated"] = tool.deprecated
    return entry


def make_units(
    paths: Sequence[Path],
    options: BuildOptions,
    header: Header,
    memo: Memo,
    contributed: Sequence[Contributed] = (),
    models: Models | None = None,
    progress: Progress = unseen,
    *,
    entries: bool = True,
    pack: bool = False,
) -> list[Unit]:
    """The units of these spec files, and of these specs the sources made, made afresh; each
    unit's model is started on `models` as soon as the unit is made. Without `entries` (a check
    that renders nothing) each unit's encoded provider entries are let go as it is made: they
    are most of what a build holds; with `pack` they are kept compressed (Packed) till rendered."""
    load = Loader()  # shared files are read once, however many specs reach them
    validator = Validator(
        options.specs,
        options.targets,
        memo,
        load,
        options.base_url,
        reach=options.profile == "reach",
    )
    failed: list[Unit] = []  # the files that do not parse, first, as they always were

    def documents() -> Iterator[tuple[Document, Contributed | None]]:
        # Each file read as its turn comes, so the workers have their first models at once, and
        # each let go once its unit is made (the parsed specs of an API of 10,000 operations are
        # hundreds of megabytes).
        for path in paths:
            try:
                yield load_document(path), None
            except LoadError as exc:
                failed.append(Unit(_rel(path, options.specs), "", (), (exc.diagnostic,), None))
        yield from ((spec.document, spec) for spec in contributed)

    depths = {file: entry_depth(document) for file, document in files_of(options.targets).items()}
    gone = gone_upstream(options.specs) if options.curated.overrides else {}
    made: list[Unit] = []
    total = len(paths) + len(contributed)
    for document, spec in documents():
        unit = _unit(document, validator, options, header, memo, load, depths, spec, gone, entries)
        del document
        progress("specs", len(made) + len(failed) + 1, total)
        if models is not None and unit.model_job is not None and unit.model_key is not None:
            models.start(unit.model_key, unit.model_job)
        if not entries:
            unit = replace(unit, entries={})
        elif pack:
            unit.entries = {
                file: Packed(text) if isinstance(text, str) else text
                for file, text in unit.entries.items()
            }
        made.append(unit)
    return failed + made


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
    contributed: Contributed | None = None,
    gone: dict[str, str] | None = None,
    entries_kept: bool = True,
) -> Unit:
    """The unit of one spec; without `entries_kept` (a check: nothing is rendered) its entries
    are neither encoded nor counted in tokens (a check's budgets are none)."""
    rel = contributed.rel if contributed else _rel(document.path, options.specs)
    tool, diagnostics = validator.document(document)
    if tool is None:
        return Unit(rel, "", (), tuple(diagnostics), None)
    if contributed is not None:  # how a source's spec runs is the source's to say
        tool = replace(tool, binding=contributed.binding)
    reached = sorted(
        {
            *ref_closure(tool.input_schema, document.path, options.specs, load),
            *ref_closure(tool.output_schema, document.path, options.specs, load),
        }
    )
    spec_sha = sha(document.raw)
    key = unit_key(rel, spec_sha, reached)
    files = tuple(path for path, _ in reached)
    tool, broken = bundle_tool(tool, options.specs, load)
    diagnostics += broken + refusals(tool, options.codegen_keywords)
    if has_errors(diagnostics):
        return Unit(rel, key, files, tuple(diagnostics), None)
    if options.curated.overrides:  # the project's changes, over the source's pristine spec
        curated, found = apply_override(tool, options.curated, gone or {})
        diagnostics += found
        if curated is None or has_errors(diagnostics):  # exclude = true: no tool
            return Unit(rel, key, files, tuple(diagnostics), None)
        tool = curated
    entries = {}
    aliases: list[tuple[str, str]] = []
    argument_aliases: list[tuple[str, str]] = []
    null_maps: list[tuple[str, str]] = []
    tokens: list[tuple[str, int]] = []
    strict_costs: list[tuple[str, int, int]] = []
    namespace = None
    file_depths = dict(depths)
    for name in options.targets:
        if not tool.for_target(name):
            continue
        target = TARGETS[name]
        made = emit(
            tool,
            target,
            options.target_options.get(name, {}),
            name_aliases=options.name_aliases,
            reach=options.profile == "reach",
        )
        diagnostics += made.diagnostics
        if made.alias is not None:
            aliases.append((name, made.alias))
        if made.argument_map is not None:
            argument_aliases.append((name, made.argument_map))
        if made.null_map is not None:
            null_maps.append((name, made.null_map))
        if made.strict_cost is not None:
            strict_costs.append((name, *made.strict_cost))
        if made.entry is not None:
            if target.namespace is not None and (namespace := target.namespace(tool)):
                # in its namespace's `tools` list (render.py)
                file_depths[target.file] = depths[target.file] + 2
            entries[target.file] = made.entry
            if entries_kept:
                tokens.append((name, estimate(made.entry)))
    entries[TOOLS_FILE] = _definition(tool)
    job = model_job(tool)
    info = replace(
        info_of(tool),
        aliases=tuple(aliases),
        argument_aliases=tuple(argument_aliases),
        null_maps=tuple(null_maps),
        tokens=tuple(tokens),
        strict_costs=tuple(strict_costs),
        namespace=namespace,
    )
    return Unit(
        rel,
        key,
        files,
        tuple(diagnostics),
        info,
        dict(sorted(encode_entries(entries, file_depths).items())) if entries_kept else {},
        model_key(memo, job, header),
        job,
        model_input(document.data),
        validator.passed,
        (rel, spec_sha, *(digest for _, digest in reached)),
    )


def info_of(tool: Tool) -> ToolInfo:
    return ToolInfo(
        name=tool.name,
        description=tool.description,
        python=tool.python,
        display=tool.display,
        places=tuple(tool.place(key) for key in PLACED_KEYS),
        targets=tool.targets,
        strict=tool.strict,
        binding=None if tool.binding is None else canonical(tool.binding),
        groups=tool.groups,
        defer_loading=tool.defer_loading,
        profile=tool.profile,
    )
