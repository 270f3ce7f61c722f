"""One function per command: what the command does, start to end, as results the CLI prints.

Nothing here prints or exits. A user's mistake is a `UserError` (one line, exit 2) or a
`DiagnosticsError` (located diagnostics, exit 2); an operating-system error on any input, output
or configuration path becomes a `UserError` naming the path, never a traceback. Heavy modules
are imported inside the functions, so `--version` and the no-op build stay instant.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolnexus_gen import __version__
from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError

if TYPE_CHECKING:
    from toolnexus_gen.commands.importer import Imported
    from toolnexus_gen.commands.project import InitReport
    from toolnexus_gen.config.options import BuildOptions
    from toolnexus_gen.fs.output import Report
    from toolnexus_gen.ir import ToolInfo
    from toolnexus_gen.pipeline.build import Analysis
    from toolnexus_gen.pipeline.toolsets import Budget


# Errors that profile = "reach" turns into warnings: names (aliases), what describe carries.
REACH_CARRIES = frozenset(
    {"TN201", "TN202", "TN203", "TN205", "TN301", "TN302", "TN306", "TN310", "TN311", "TN312"}
    | {"TN313", "TN314", "TN316"}
)


class UserError(Exception):
    """A mistake the user can fix, said in one line (exit 2)."""


@contextmanager
def os_errors() -> Iterator[None]:
    """Every OSError (a file where a folder should be, no permission, a full disk...) as one
    line naming the path."""
    try:
        yield
    except OSError as exc:
        where = exc.filename if exc.filename is not None else ""
        reason = exc.strerror or str(exc)
        if exc.filename2 is not None:
            where = f"{where} -> {exc.filename2}"
        raise UserError(
            f"{Path(where).as_posix() if where else '(unknown path)'}: {reason}"
        ) from None


def options(specs_dir: Path | None, out_dir: Path | None, targets: tuple[str, ...]) -> BuildOptions:
    """BuildOptions from pyproject.toml and the flags (flags win)."""
    from toolnexus_gen.config.options import UsageError, resolve_options
    from toolnexus_gen.config.pyproject import load_config

    try:
        with os_errors():
            return resolve_options(load_config(Path.cwd()), specs_dir, out_dir, targets or None)
    except UsageError as exc:
        raise UserError(str(exc)) from None


# -- build -------------------------------------------------------------------------------------


@dataclass
class BuildOutcome:
    out: str  # the output folder as shown
    command: str  # the command that regenerates it
    tools: int
    targets: int
    diagnostics: list[tuple[str, bool]]  # (formatted line, is error)
    noop: bool = False  # answered from the build state, without running the pipeline
    files: int = 0  # for a no-op: the generated files, all unchanged
    invalid: bool = False  # errors: nothing written
    report: Report | None = None  # what was written
    check: Report | None = None  # what --check found
    codes: list[str] = field(default_factory=list)  # the code of each diagnostic, in order
    profile: str | None = None  # the configured profile
    budget: str = ""  # the costliest request's estimated tokens, in words

    @property
    def reach(self) -> str:
        """What name_aliases and describe did, in one line ("" when nothing)."""
        aliases = sum(code in ("TN210", "TN211") for code in self.codes)
        described = self.codes.count("TN220")
        parts = [f"{aliases} alias{'es' if aliases != 1 else ''}"] if aliases else []
        parts += (
            [f"{described} removal{'s' if described != 1 else ''} described"] if described else []
        )
        return ", ".join(parts)

    @property
    def reach_would_build(self) -> bool:
        """Whether every error is one that profile = "reach" carries (and it is not on)."""
        errors = [
            code
            for (_, is_error), code in zip(self.diagnostics, self.codes, strict=True)
            if is_error
        ]
        return bool(errors) and self.profile is None and set(errors) <= REACH_CARRIES

    @property
    def warnings(self) -> int:
        return sum(not is_error for _, is_error in self.diagnostics)


def build(
    specs_dir: Path | None, out_dir: Path | None, targets: tuple[str, ...], check: bool
) -> BuildOutcome:
    from toolnexus_gen.config.options import header_for
    from toolnexus_gen.fs.paths import display_path
    from toolnexus_gen.incremental import cache

    chosen = options(specs_dir, out_dir, targets)
    with os_errors():
        outcome = BuildOutcome(
            display_path(chosen.out), header_for(chosen).command, 0, len(chosen.targets), []
        )
        outcome.profile = chosen.profile
        state = cache.load_state(chosen)
        noop = cache.fast_noop(chosen, state, check=check)
        if noop is not None:  # nothing changed since the last build: answered from its record
            outcome.noop, outcome.tools, outcome.files = True, noop.tools, noop.files
            outcome.budget = noop.budget
            outcome.diagnostics = [
                (line, severity == "error") for severity, line in noop.diagnostics
            ]
            return outcome
        return _full_build(chosen, state, check, outcome)


def _code(line: str) -> str:
    found = re.search(r": (?:error|warning)\[(TN\d+)\]", line)
    return found.group(1) if found else ""


def _full_build(
    chosen: BuildOptions, state: dict[str, Any] | None, check: bool, outcome: BuildOutcome
) -> BuildOutcome:
    from toolnexus_gen.fs import output
    from toolnexus_gen.pipeline.build import generate, save_build

    try:
        result = generate(chosen, state)
    except RecursionError:  # a last line of defence: every known cause is a located error
        raise UserError(
            "a schema is nested or self-referencing beyond what can be processed"
        ) from None
    outcome.diagnostics = [(d.format(), d.is_error) for d in result.diagnostics]
    outcome.codes = [d.code for d in result.diagnostics]
    outcome.tools = len(result.toolset.tools) if result.toolset else 0
    outcome.budget = result.budget
    if result.files is None:
        outcome.invalid = True
        return outcome
    if check:
        outcome.check = output.check(chosen.out, result.files)
        return outcome
    try:  # the cache is saved under the output lock, once the files are written
        outcome.report = output.write(
            chosen.out,
            result.files,
            lambda report: save_build(chosen, result, report),
            result.known,
        )
    except output.OwnershipError as exc:
        raise UserError(str(exc)) from None
    return outcome


# -- list, explain -----------------------------------------------------------------------------


@dataclass
class Listing:
    options: BuildOptions
    analysis: Analysis
    budget: Budget | None = None  # list --budget


def list_tools(specs_dir: Path | None, targets: tuple[str, ...], budget: bool = False) -> Listing:
    from toolnexus_gen.pipeline.build import analyse_reusing

    chosen = options(specs_dir, None, targets)
    with os_errors():
        listing = Listing(chosen, analyse_reusing(chosen))
    if budget and not any(d.is_error for d in listing.analysis.diagnostics):
        from toolnexus_gen.pipeline.toolsets import budget as estimate

        listing.budget = estimate(listing.analysis.toolset, chosen)
    return listing


def explain(code: str) -> tuple[str, str]:
    """(title, explanation) of a diagnostic code."""
    from toolnexus_gen.diagnostics import catalogue

    found = catalogue.explain(code.upper())
    if found is None:
        raise UserError(f"unknown code {code!r}; known codes: {', '.join(catalogue.all_codes())}")
    return found


# -- init, import, scaffold (files that belong to the user) ------------------------------------


def init(directory: Path, specs: str, out: str) -> InitReport:
    from toolnexus_gen.commands import project

    with os_errors():
        return project.init(directory, specs=specs, out=out, version=__version__)


@dataclass
class ImportOutcome:
    folder: Path
    written: list[Path]
    imported: Imported


def import_specs(
    fmt: str, file: Path, specs_dir: Path | None, suffix: str, force: bool
) -> ImportOutcome:
    from toolnexus_gen.commands import importer
    from toolnexus_gen.config.options import DEFAULT_SPECS
    from toolnexus_gen.config.pyproject import load_config
    from toolnexus_gen.fs import output

    with os_errors():
        config = load_config(Path.cwd())
        folder = specs_dir or config.specs or Path(DEFAULT_SPECS)
        try:
            imported = importer.read(fmt, file)
            files = importer.plan(imported, folder, f".{suffix}", force)
        except importer.ImportError_ as exc:
            raise UserError(str(exc)) from None
        output.create_user_files(files, replace=force)
    return ImportOutcome(folder, list(files), imported)


@dataclass
class ScaffoldOutcome:
    diagnostics: list[Diagnostic]
    written: bool = False
    package: str = ""
    tools: int = 0
    missing: list[ToolInfo] = field(default_factory=list)  # methods an existing file lacks
    stubs: str = ""


def scaffold(
    file: Path, specs_dir: Path | None, out_dir: Path | None, class_name: str
) -> ScaffoldOutcome:
    from toolnexus_gen.commands import project
    from toolnexus_gen.fs import output
    from toolnexus_gen.pipeline.build import analyse

    chosen = options(specs_dir, out_dir, ())
    with os_errors():
        analysis = analyse(chosen)
    outcome = ScaffoldOutcome(analysis.diagnostics)
    if any(d.is_error for d in analysis.diagnostics):
        raise DiagnosticsError(analysis.diagnostics)
    # tools from other sources (MCP servers, HTTP endpoints, built-ins) need no method
    tools = tuple(tool for tool in analysis.toolset.tools if tool.has_method)
    outcome.tools = len(tools)
    if file.exists():
        try:
            outcome.missing = project.missing_methods(file.read_text("utf-8"), tools)
        except (OSError, UnicodeDecodeError, SyntaxError) as exc:
            raise UserError(
                f"{file.as_posix()} exists and cannot be read as Python ({exc}); left unchanged"
            ) from None
        outcome.stubs = project.stubs_for(outcome.missing) if outcome.missing else ""
        return outcome
    outcome.package = project.package_import(chosen.out)
    with os_errors():
        output.create_user_files(
            {file: project.scaffold_source(tools, outcome.package, class_name)}
        )
    outcome.written = True
    return outcome
