"""The pipeline, start to end: load -> validate -> check targets -> render. No disk writes here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .bundle import bundle_tools
from .cache import Memo
from .diagnostics import Diagnostic, DiagnosticsError, Severity, has_errors
from .ir import ToolSet
from .load import Document, LoadError, discover, load_document
from .options import (
    DEFAULT_OUT,
    DEFAULT_SPECS,
    BuildOptions,
    UsageError,
    header_for,
    resolve_options,
)
from .parallel import pool_for
from .paths import display_path
from .render import FileMap, Prepared, prepare, render
from .validate import validate

__all__ = [
    "DEFAULT_OUT",
    "DEFAULT_SPECS",
    "BuildOptions",
    "Generated",
    "UsageError",
    "analyse",
    "generate",
    "header_for",
    "resolve_options",
]


@dataclass
class Generated:
    files: FileMap | None  # None when any error exists
    toolset: ToolSet | None
    diagnostics: list[Diagnostic]
    memo: Memo | None = None  # per-tool results to keep once the files are written


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


def analyse(options: BuildOptions, memo: Memo | None = None) -> Analysis:
    """Load, validate, bundle and check every spec for every target; nothing is rendered."""
    documents, diagnostics = load_all(options.specs)
    toolset, found = validate(documents, options.specs, options.targets, memo)
    diagnostics += found
    if not documents and not diagnostics:
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
    prepared = None
    if not has_errors(diagnostics):
        toolset, found = bundle_tools(toolset, options.specs)
        diagnostics += found
    if not has_errors(diagnostics):
        prepared = prepare(toolset, options.target_options)
        diagnostics += prepared.diagnostics
    diagnostics = sorted(set(d for d in diagnostics if not _ignored(d, options.ignore)))
    return Analysis(toolset, prepared, diagnostics)


def generate(options: BuildOptions, *, use_cache: bool = True) -> Generated:
    memo = Memo(options.out if use_cache else None)
    with pool_for(len(discover(options.specs))):  # workers start while this process is small
        return _generate(options, memo)


def _generate(options: BuildOptions, memo: Memo) -> Generated:
    analysis = analyse(options, memo)
    toolset, prepared, diagnostics = analysis.toolset, analysis.prepared, analysis.diagnostics
    if has_errors(diagnostics) or prepared is None or toolset is None:
        return Generated(None, toolset, diagnostics)
    try:
        files = render(toolset, prepared, header_for(options), options.target_options, memo)
    except DiagnosticsError as exc:
        return Generated(None, toolset, sorted(diagnostics + exc.diagnostics))
    return Generated(files, toolset, diagnostics, memo)


def _ignored(diagnostic: Diagnostic, ignore: frozenset[str]) -> bool:
    # Structural problems (TN1xx) cannot be silenced: there would be nothing sound to generate.
    return diagnostic.code in ignore and not diagnostic.code.startswith("TN1")
