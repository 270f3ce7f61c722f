"""The pipeline, start to end: load -> validate -> check targets -> render. No disk writes here."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bundle import bundle_tools
from .config import Config, find_pyproject
from .diagnostics import Diagnostic, DiagnosticsError, has_errors
from .ir import ToolSet
from .load import Document, LoadError, discover, load_document
from .package import Header
from .render import FileMap, Prepared, prepare, render
from .targets import TARGETS
from .validate import validate

DEFAULT_SPECS = "specs"
DEFAULT_OUT = "tools"  # beside the spec folder


class UsageError(Exception):
    """Bad paths or options: exit code 2, no traceback."""


@dataclass(frozen=True)
class BuildOptions:
    specs: Path
    out: Path
    root: Path  # paths in generated headers are relative to this folder
    targets: tuple[str, ...] = tuple(TARGETS)
    target_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    ignore: frozenset[str] = frozenset()


@dataclass
class Generated:
    files: FileMap | None  # None when any error exists
    toolset: ToolSet | None
    diagnostics: list[Diagnostic]


def resolve_options(
    config: Config, specs: Path | None, out: Path | None, targets: tuple[str, ...] | None
) -> BuildOptions:
    specs = specs or config.specs or Path(DEFAULT_SPECS)
    out = out or config.out or specs.parent / DEFAULT_OUT
    chosen = targets or config.targets or tuple(TARGETS)
    unknown = [t for t in chosen if t not in TARGETS]
    if unknown:
        raise UsageError(f"unknown target(s) {', '.join(unknown)} (known: {', '.join(TARGETS)})")
    if not specs.is_dir():
        raise UsageError(
            f"spec folder {specs.as_posix()!r} does not exist (pass SPECS_DIR or set specs in "
            "[tool.toolnexus-gen])"
        )
    if out.resolve() == specs.resolve() or specs.resolve().is_relative_to(out.resolve()):
        raise UsageError(f"--out {out.as_posix()!r} must not contain the spec folder")
    ordered = tuple(t for t in TARGETS if t in chosen)
    # Header paths are relative to the project that holds the output, whatever the working folder.
    project = find_pyproject(out.resolve().parent)
    root = project.parent if project is not None else out.resolve().parent
    return BuildOptions(
        specs=specs,
        out=out,
        root=root,
        targets=ordered,
        target_options=config.target_options,
        ignore=config.ignore,
    )


def _rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def header_for(options: BuildOptions) -> Header:
    command = f"toolnexus-gen build {_rel(options.specs, options.root)} --out {_rel(options.out, options.root)}"
    if options.targets != tuple(TARGETS):
        command += "".join(f" --target {t}" for t in options.targets)
    return Header(specs_rel=_rel(options.specs, options.out), command=command)


def load_all(specs: Path) -> tuple[list[Document], list[Diagnostic]]:
    documents, diagnostics = [], []
    for path in discover(specs):
        try:
            documents.append(load_document(path))
        except LoadError as exc:
            diagnostics.append(exc.diagnostic)
    return documents, diagnostics


@dataclass
class Analysis:
    toolset: ToolSet | None
    prepared: Prepared | None  # None when any error stopped the pipeline early
    diagnostics: list[Diagnostic]


def analyse(options: BuildOptions) -> Analysis:
    """Load, validate, bundle and check every spec for every target; nothing is rendered."""
    documents, diagnostics = load_all(options.specs)
    toolset, found = validate(documents, options.specs, options.targets)
    diagnostics += found
    prepared = None
    if not has_errors(diagnostics):
        toolset, found = bundle_tools(toolset, options.specs)
        diagnostics += found
    if not has_errors(diagnostics):
        prepared = prepare(toolset, options.target_options)
        diagnostics += prepared.diagnostics
    diagnostics = sorted(set(d for d in diagnostics if not _ignored(d, options.ignore)))
    return Analysis(toolset, prepared, diagnostics)


def generate(options: BuildOptions) -> Generated:
    analysis = analyse(options)
    toolset, prepared, diagnostics = analysis.toolset, analysis.prepared, analysis.diagnostics
    if has_errors(diagnostics) or prepared is None or toolset is None:
        return Generated(None, toolset, diagnostics)
    try:
        files = render(toolset, prepared, header_for(options), options.target_options)
    except DiagnosticsError as exc:
        return Generated(None, toolset, sorted(diagnostics + exc.diagnostics))
    return Generated(files, toolset, diagnostics)


def _ignored(diagnostic: Diagnostic, ignore: frozenset[str]) -> bool:
    # Structural problems (TN1xx) cannot be silenced: there would be nothing sound to generate.
    return diagnostic.code in ignore and not diagnostic.code.startswith("TN1")
