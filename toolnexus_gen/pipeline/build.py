"""The pipeline, start to end. No disk writes here.

discover -> units (stage 2, units.py: each spec on its own; reused from the last build where it
still holds, reuse.py) -> the whole set's checks (names across specs, per-request limits)
-> render (stage 3) -> a FileMap.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from toolnexus_gen.config.options import (
    DEFAULT_OUT,
    DEFAULT_SPECS,
    BuildOptions,
    UsageError,
    header_for,
    resolve_options,
)
from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError, Severity, has_errors
from toolnexus_gen.fs.paths import discover, display_path, escaping_links
from toolnexus_gen.ir import Contribution, ToolInfo, ToolSet, Unit
from toolnexus_gen.memo import Memo, digest_each
from toolnexus_gen.progress import Progress, unseen

if TYPE_CHECKING:
    from toolnexus_gen.codegen.models import Models
    from toolnexus_gen.fs.output import Report
    from toolnexus_gen.incremental.plan import Plan, Record
    from toolnexus_gen.pipeline.render import FileMap
    from toolnexus_gen.targets.base import Assembled

NOTHING = Contribution()  # a build of the spec folder alone
PACK_MIN = 2_000  # specs made afresh from which their provider entries are kept compressed

# The stages themselves (units, render, the targets: jsonschema, PyYAML, the rules) are imported
# inside the functions below, once the workers have started: they fork from a small process and
# warm up on the other cores while this one imports.

__all__ = [
    "DEFAULT_OUT",
    "DEFAULT_SPECS",
    "BuildOptions",
    "Generated",
    "UsageError",
    "analyse",
    "generate",
    "save_build",
    "header_for",
    "resolve_options",
]


@dataclass
class Generated:
    files: FileMap | None  # None when any error exists
    toolset: ToolSet | None
    diagnostics: list[Diagnostic]
    reused: int = 0  # specs whose unit came from the last build
    budget: str = ""  # the largest request's estimated tokens, in words (toolsets.summary)
    # what the record of this build keeps (save_build), so the next one can reuse it
    units: list[Unit] = field(default_factory=list)
    layout: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    # each package file's key (codegen.package.package_keys), digested (memo.digest_each)
    package: dict[str, str] = field(default_factory=dict)
    assembled: dict[str, Assembled] = field(default_factory=dict)  # render.Rendered.assembled


@dataclass
class Analysis:
    toolset: ToolSet
    units: list[Unit]  # in name order, one per tool of toolset (when there is no error)
    diagnostics: list[Diagnostic]


def analyse(
    options: BuildOptions,
    memo: Memo | None = None,
    paths: Sequence[Path] | None = None,
    reused: Sequence[Unit] = (),
    contribution: Contribution = NOTHING,
    models: Models | None = None,
    progress: Progress = unseen,
    rels: Sequence[str] | None = None,
    *,
    pack: bool = False,
) -> Analysis:
    """Every spec's unit (the reused ones given, the others made now, their models started on
    `models`), the specs the sources contributed among them, and the whole set's diagnostics;
    nothing is rendered. `rels`: each path relative to the spec folder, when known; `pack`: the
    units' entries kept compressed till rendered (make_units)."""
    paths = discover(options.specs) if paths is None else paths
    from toolnexus_gen.pipeline.strictness import relax
    from toolnexus_gen.pipeline.toolsets import check as check_set
    from toolnexus_gen.pipeline.toolsets import resolve, with_toolsets
    from toolnexus_gen.targets import TARGETS
    from toolnexus_gen.toolspec.cross import cross_tool

    links = escaping_links(options.specs)  # refused, never read
    known = {unit.rel for unit in reused}
    if rels is None:
        rels = [_rel(path, options.specs) for path in paths]
    fresh = [path for rel, path in zip(rels, paths, strict=True) if rel not in known]
    fresh = [path for path in fresh if path not in links]
    made = [spec for spec in contribution.specs if spec.rel not in known]
    units = list(reused)
    if (
        fresh or made
    ):  # every spec reused (list after a build): the per-spec stage is never imported
        from toolnexus_gen.pipeline.units import make_units

        units += make_units(
            fresh,
            options,
            header_for(options),
            memo or Memo(),
            made,
            models,
            progress,
            pack=pack,
        )
    diagnostics = [d for unit in units for d in unit.diagnostics]
    diagnostics += contribution.diagnostics
    for link in links:
        kind = "folder" if link.is_dir() else "file"
        diagnostics.append(
            Diagnostic(
                display_path(link.parent) + "/" + link.name,  # the link, not where it points
                1,
                1,
                "TN121",
                f"symbolic link to a {kind} outside the spec folder, refused: a spec folder holds "
                "its own files (copy it in, or move the link's target under the spec folder)",
            )
        )
    named = sorted(
        ((unit.info, unit) for unit in units if unit.info is not None),
        key=lambda pair: (pair[0].name, pair[1].rel),
    )
    toolset = ToolSet(
        tuple(info for info, _ in named),
        options.targets,
        tuple(sorted(name for name, _ in contribution.files)),
    )
    units = [unit for _, unit in named]
    if options.curated.overrides:  # an override of no tool, a rename onto another tool
        from toolnexus_gen.pipeline.overrides import gone_upstream, whole_set

        every = [*rels, *(spec.rel for spec in contribution.specs)]
        named_as = [(tool.name, tool.display) for tool in toolset.tools]
        gone = gone_upstream(options.specs)
        diagnostics += whole_set(options.curated, every, named_as, gone, options.specs)
    diagnostics += cross_tool(toolset.tools)
    if not paths and not contribution.specs and not diagnostics:
        diagnostics.append(
            Diagnostic(
                display_path(options.specs),
                1,
                1,
                "TN118",
                "no tool specs found (files starting with _ or . are shared fragments, not "
                "tools); the package will offer no tools, and Bedrock and Gemini reject an "
                "empty tool list",
                Severity.WARNING,
            )
        )
    diagnostics += _alias_collisions(toolset)
    members, unknown = resolve(toolset.tools, options.many)
    if not has_errors(diagnostics):  # a spec that failed is no tool: its toolsets are not wrong
        diagnostics += unknown
    diagnostics = _one_missing_base_url(diagnostics)
    toolset = with_toolsets(toolset, members)
    if not has_errors(diagnostics):  # per-request limits, over every tool a target carries
        toolset, relaxed = relax(toolset, options)
        if relaxed:  # those tools are no longer "sent in strict mode" (TN221) there
            diagnostics = _without_strict_notes(diagnostics, toolset) + relaxed
        for name in options.targets:
            carried = [tool for tool in toolset.tools if tool.for_target(name)]
            diagnostics += TARGETS[name].check_all(carried, options.target_options.get(name, {}))
        diagnostics += check_set(toolset, options)
    diagnostics = sorted(set(d for d in diagnostics if not _ignored(d, options.ignore)))
    return Analysis(toolset, units, diagnostics)


def _one_missing_base_url(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Every spec with a relative URL and no base_url (an imported document without servers)
    said once, at the first of them, rather than once per spec."""
    from toolnexus_gen.toolspec.http import NO_BASE_URL

    missing = sorted(d for d in diagnostics if d.code == "TN441" and NO_BASE_URL in d.message)
    if len(missing) < 2:
        return diagnostics
    first = missing[0]
    others = sorted({d.path for d in missing[1:]} - {first.path})
    shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
    one = replace(
        first,
        message=f"{first.message} (so are the URLs of {len(others)} more specs: {shown}; one "
        "base_url serves them all)",
    )
    return [d for d in diagnostics if d not in missing] + [one]


def _rel(path: Path, specs: Path) -> str:
    """path.relative_to(specs).as_posix(), without its cost for a thousand paths."""
    text, base = str(path), str(specs) + os.sep
    if text.startswith(base):
        return text[len(base) :].replace(os.sep, "/")
    return path.relative_to(specs).as_posix()


def _without_strict_notes(diagnostics: list[Diagnostic], toolset: ToolSet) -> list[Diagnostic]:
    """The diagnostics but strictify's TN221 of each tool the per-request limits sent
    non-strict (TN226 says so instead)."""
    by_name = {tool.name: tool.display for tool in toolset.tools}
    gone = {(target, by_name[name]) for target, names in toolset.relaxed for name in names}
    return [d for d in diagnostics if d.code != "TN221" or (d.target, d.path) not in gone]


def _alias_collisions(toolset: ToolSet) -> list[Diagnostic]:
    """Two tools that one target's file would name alike (through name_aliases)."""
    found = []
    aliased = {target for tool in toolset.tools if tool.aliases for target, _ in tool.aliases}
    for target in toolset.targets:
        if target not in aliased:  # each tool is sent as its name: two alike are one (TN115)
            continue
        seen: dict[str, ToolInfo] = {}
        for tool in toolset.tools:
            if not tool.for_target(target):
                continue
            sent = tool.sent_name(target)
            other = seen.setdefault(sent, tool)
            if other is not tool and other.name != tool.name:  # same names: reported already
                line, col = tool.place("name")
                found.append(
                    Diagnostic(
                        tool.display,
                        line,
                        col,
                        "TN212",
                        f"{target}: tools {other.name!r} ({other.display}) and {tool.name!r} are "
                        f"both sent as {sent!r}; rename one of them",
                        target=target,
                    )
                )
    return found


def generate(
    options: BuildOptions,
    plan: Plan,
    progress: Progress = unseen,
    made: Callable[[str, str], None] | None = None,
    *,
    once: bool = False,
    spill: Callable[[str, Iterable[str]], str] | None = None,
) -> Generated:
    """The files of a build, over its plan (incremental.plan: what changed since the last
    build, what to reuse of it, what to make); `progress` hears of each stage's steps. The
    specs made afresh are made on the workers if `workers` opened them; `made(file, text)`
    hears of each model module as they make it (render_models), and of every other file while
    they do, before the build is whole. `once`: no later build in this process starts from this
    one (a command line's build): what only such a build would reuse is let go as soon as it is
    used (render's `release`); `spill`: render's."""
    contribution = plan.contribution
    from toolnexus_gen.codegen.package import HANDLERS_HEAD, package_keys, update_handlers
    from toolnexus_gen.pipeline.render import model_maker, render, render_models
    from toolnexus_gen.targets.reach import fold

    memo = plan.memo
    header = header_for(options)
    models = model_maker(header, memo)  # the workers make each model as its unit is made
    # Entries are kept compressed only where their text would weigh: thousands of specs made
    # afresh by a command line's build (compressing costs more than the memory saved below).
    fresh = len(plan.paths) + len(contribution.specs) - len(plan.reused)
    pack = once and fresh >= PACK_MIN
    analysis = analyse(
        options, memo, plan.paths, plan.reused, contribution, models, progress, plan.rels, pack=pack
    )
    progress("rendering", 0)
    toolset, diagnostics = analysis.toolset, fold(analysis.diagnostics, analysis.toolset)
    if has_errors(diagnostics):
        return Generated(None, toolset, diagnostics)
    keys = package_keys(toolset, header)
    digests = digest_each(keys)
    package = {
        name: plan.texts[name]
        for name in keys
        if name in plan.texts and plan.package.get(name) == digests[name]
    }
    if (
        "handlers.py" not in package
        and "handlers.py" in plan.texts
        and plan.package.get(HANDLERS_HEAD) == digests[HANDLERS_HEAD]
    ):
        # Only descriptions changed: its methods are made again, without a template.
        remade = {u.info.name for u in analysis.units if u.model_job is not None and u.info}
        updated = update_handlers(plan.texts["handlers.py"], toolset, remade)
        if updated is not None:
            package["handlers.py"] = updated
    rendered = render(
        toolset,
        analysis.units,
        header,
        package,
        options.many,
        plan.assembled,
        release=once,
        spill=spill,
    )
    rendered.files.update(contribution.files)
    budget = ""
    if models.awaited:
        # the workers are making models: meanwhile the other files are handed on (staged), and
        # the budget is estimated (else once the files are written: the package does not wait)
        if made is not None:
            for name, text in rendered.files.items():
                made(name, text)
        budget = _budget(options, toolset)
    try:
        rendered.files.update(render_models(toolset, analysis.units, models, progress, made))
    except DiagnosticsError as exc:
        return Generated(None, toolset, sorted(diagnostics + exc.diagnostics))
    files = dict(sorted(rendered.files.items()))
    return Generated(
        files,
        toolset,
        diagnostics,
        len(plan.reused),
        budget,
        analysis.units,
        rendered.layout,
        digests,
        rendered.assembled,
    )


def tell_budget(options: BuildOptions, result: Generated) -> str:
    """The largest request's estimated tokens, in words (`result.budget`, estimated once)."""
    if not result.budget and result.files is not None and result.toolset is not None:
        result.budget = _budget(options, result.toolset)
    return result.budget


def _budget(options: BuildOptions, toolset: ToolSet) -> str:
    from toolnexus_gen.pipeline.toolsets import budget, summary

    return summary(budget(toolset, options, per_tool=False), bool(toolset.toolsets))


def _ignored(diagnostic: Diagnostic, ignore: frozenset[str]) -> bool:
    # Structural problems (TN1xx) cannot be silenced: there would be nothing sound to generate.
    return diagnostic.code in ignore and not diagnostic.code.startswith("TN1")


def save_build(options: BuildOptions, plan: Plan, result: Generated, report: Report) -> Record:
    """Record a build whose files were just written (`report`: fs.output's), for the next
    build to start from (in this process: the record returned)."""
    from toolnexus_gen.incremental.plan import save

    assert result.files is not None and result.toolset is not None
    tell_budget(options, result)
    return save(
        options,
        plan,
        units=result.units,
        layout=result.layout,
        package=result.package,
        diagnostics=[[d.severity.value, d.format()] for d in result.diagnostics],
        tools=len(result.toolset.tools),
        budget=result.budget,
        outputs=report.recorded,
        written=result.files,
        assembled=result.assembled,
    )


def analyse_reusing(options: BuildOptions, contribution: Contribution = NOTHING) -> Analysis:
    """analyse(), with the units of specs unchanged since the last build taken from its record
    (`list` after a build reads the state instead of every spec)."""
    from toolnexus_gen.incremental.plan import plan as make_plan

    planned = make_plan(options, contribute=lambda: contribution, entries=False)
    return analyse(
        options, planned.memo, planned.paths, planned.reused, contribution, rels=planned.rels
    )
