"""The command line: parse options, call the library, print results, return an exit code.

Only this module prints. Heavy imports happen inside commands so `--version` stays instant.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from . import __version__
from .diagnostics import Diagnostic, DiagnosticsError, ExitCode
from .targetinfo import NAMES


def _color() -> bool | None:
    return False if os.environ.get("NO_COLOR") else None


def _echo(message: str, *, err: bool = False, fg: str | None = None, bold: bool = False) -> None:
    click.secho(message, err=err, fg=fg, bold=bold, color=_color())


def _report(diagnostics: list[Diagnostic]) -> None:
    for diagnostic in diagnostics:
        _report_line(diagnostic.format(), diagnostic.is_error)


def _report_line(line: str, is_error: bool) -> None:
    _echo(line, err=True, fg="red" if is_error else "yellow")


def _fail(message: str) -> NoReturn:
    _echo(f"error: {message}", err=True, fg="red")
    sys.exit(ExitCode.INVALID)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _options(specs_dir: Path | None, out_dir: Path | None, targets: tuple[str, ...]) -> Any:
    """BuildOptions from pyproject.toml and the flags (flags win); exits 2 on a bad setting."""
    from .config import load_config
    from .options import UsageError, resolve_options

    try:
        config = load_config(Path.cwd())
        return resolve_options(config, specs_dir, out_dir, targets or None)
    except DiagnosticsError as exc:
        _report(exc.diagnostics)
        sys.exit(ExitCode.INVALID)
    except UsageError as exc:
        _fail(str(exc))


SPECS_ARGUMENT = click.argument(
    "specs_dir", required=False, type=click.Path(path_type=Path, file_okay=False)
)
OUT_OPTION = click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Output package folder (owned by toolnexus-gen). Default: 'tools' beside SPECS_DIR.",
)
TARGET_OPTION = click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="NAME",
    help="Provider target to emit; repeat for several. Default: all.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="toolnexus-gen")
def main() -> None:
    """Define each LLM tool once; generate provider schemas, typed handlers and dispatch."""


@main.command()
@SPECS_ARGUMENT
@OUT_OPTION
@TARGET_OPTION
@click.option(
    "--check", is_flag=True, help="Write nothing; exit 1 if generated files are out of date."
)
@click.option("-q", "--quiet", is_flag=True, help="Print only problems.")
def build(
    specs_dir: Path | None, out_dir: Path | None, targets: tuple[str, ...], check: bool, quiet: bool
) -> None:
    """Validate every spec in SPECS_DIR and write (or --check) the generated package."""
    from . import cache, output
    from .options import header_for
    from .paths import display_path

    options = _options(specs_dir, out_dir, targets)
    out = display_path(options.out)
    state = cache.load_state(options)
    noop = cache.fast_noop(options, state, check=check)
    if noop is not None:  # nothing changed since the last build: answered without the pipeline
        for severity, line in noop.diagnostics:
            _report_line(line, severity == "error")
        if not quiet:
            counts = f"{_plural(noop.tools, 'tool')}, {_plural(noop.targets, 'target')}"
            if check:
                _echo(f"{out} is up to date ({counts}).", fg="green")
            else:
                _echo(f"{counts}: 0 files written, {noop.files} unchanged in {out}", fg="green")
        return
    from .build import generate

    try:
        result = generate(options, state)
    except RecursionError:  # a last line of defence: every known cause is a located error
        _fail("a schema is nested or self-referencing beyond what can be processed")
    _report(result.diagnostics)
    if result.files is None:
        errors = sum(d.is_error for d in result.diagnostics)
        _echo(f"{errors} error(s); nothing written.", err=True, fg="red", bold=True)
        sys.exit(ExitCode.INVALID)
    tools = len(result.toolset.tools) if result.toolset else 0
    if check:
        report = output.check(options.out, result.files)
        if report.up_to_date:
            if not quiet:
                _echo(
                    f"{out} is up to date ({_plural(tools, 'tool')}, "
                    f"{_plural(len(options.targets), 'target')}).",
                    fg="green",
                )
            return
        for label, names in (
            ("changed", report.changed),
            ("missing", report.missing),
            ("stale", report.stale),
        ):
            for name in names:
                _echo(f"{label}: {out}/{name}", err=True, fg="yellow")
        if report.diff:
            click.echo(report.diff, nl=False, err=True)
        command = header_for(options).command
        _echo(f"{out} is out of date: run `{command}`.", err=True, fg="red", bold=True)
        sys.exit(ExitCode.STALE)
    try:  # the cache is saved under the output lock, once the files are written
        report = output.write(
            options.out,
            result.files,
            lambda report: cache.save_build(options, result, report),
            result.known,
        )
    except output.OwnershipError as exc:
        _fail(str(exc))
    if not quiet:
        removed = f", {len(report.removed)} removed" if report.removed else ""
        warnings = sum(not d.is_error for d in result.diagnostics)
        warned = f", {_plural(warnings, 'warning')}" if warnings else ""
        _echo(
            f"{_plural(tools, 'tool')}, {_plural(len(options.targets), 'target')}: "
            f"{_plural(len(report.written), 'file')} written, {len(report.unchanged)} unchanged"
            f"{removed}{warned} in {out}",
            fg="green",
        )


@main.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain a diagnostic CODE (for example TN113) and how to fix it."""
    from .codes import CODES
    from .targets.rules import RULES

    code = code.upper()
    known = {**CODES, **{c: (r.title, r.explain()) for c, r in RULES.items()}}
    if code not in known:
        _fail(f"unknown code {code!r}; known codes: {', '.join(sorted(known))}")
    title, text = known[code]
    _echo(f"{code}: {title}", bold=True)
    click.echo(text)


@main.command("list")
@SPECS_ARGUMENT
@TARGET_OPTION
def list_(specs_dir: Path | None, targets: tuple[str, ...]) -> None:
    """Show each tool in SPECS_DIR with the targets it goes to and its warnings."""
    from .build import analyse

    options = _options(specs_dir, None, targets)
    analysis = analyse(options)
    by_file: dict[str, list[Diagnostic]] = {}
    for diagnostic in analysis.diagnostics:
        by_file.setdefault(diagnostic.path, []).append(diagnostic)
    shown: set[str] = set()
    tools = analysis.toolset.tools
    for tool in tools:
        chosen = [t for t in options.targets if tool.for_target(t)]
        found = by_file.get(tool.display, [])
        shown.add(tool.display)
        notes = sum(not d.is_error for d in found)
        errors = sum(d.is_error for d in found)
        status = ", ".join(
            part
            for part in (
                _plural(errors, "error") if errors else "",
                _plural(notes, "warning") if notes else "",
            )
            if part
        )
        _echo(f"{tool.name}", bold=True, fg="red" if errors else None)
        click.echo(
            f"  {tool.description.strip().splitlines()[0] if tool.description.strip() else ''}"
        )
        click.echo(
            f"  targets: {', '.join(chosen) or '(none)'}" + (f"  [{status}]" if status else "")
        )
        for diagnostic in found:
            _echo(f"    {diagnostic.format()}", fg="red" if diagnostic.is_error else "yellow")
    others = [d for path, ds in sorted(by_file.items()) if path not in shown for d in ds]
    _report(others)
    if any(d.is_error for d in analysis.diagnostics):
        sys.exit(ExitCode.INVALID)


@main.command()
@click.argument(
    "directory", required=False, default=".", type=click.Path(path_type=Path, file_okay=False)
)
@click.option("--specs", default="specs", show_default=True, help="Spec folder, inside DIRECTORY.")
@click.option("--out", default="tools", show_default=True, help="Output package, inside DIRECTORY.")
def init(directory: Path, specs: str, out: str) -> None:
    """Start a project in DIRECTORY: a spec folder with one example spec, the
    [tool.toolnexus-gen] section, and a pre-commit hook. Existing files are never replaced."""
    from . import project
    from .package import RUNTIME_REQUIREMENT

    report = project.init(directory, specs=specs, out=out, version=__version__)
    for path in report.created:
        _echo(f"created {path.as_posix()}", fg="green")
    for path in report.appended:
        _echo(f"added [tool.toolnexus-gen] to {path.as_posix()}", fg="green")
    if report.required is not None:
        _echo(
            f"added {RUNTIME_REQUIREMENT} to [project].dependencies in "
            f"{report.required.as_posix()} (the generated package imports it)",
            fg="green",
        )
    for note in report.kept:
        _echo(f"kept {note}", fg="yellow")
    for note in report.notes:
        _echo(f"note: {note}", fg="yellow")
    click.echo("next: toolnexus-gen build   (then: toolnexus-gen scaffold handlers.py)")


@main.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(list(NAMES)))
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option(
    "--specs",
    "specs_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Where to write the specs. Default: the configured spec folder, or ./specs.",
)
@click.option(
    "--as",
    "suffix",
    type=click.Choice(["yaml", "json"]),
    default="yaml",
    show_default=True,
    help="Spec file format.",
)
@click.option("--force", is_flag=True, help="Replace specs that already exist.")
def import_(fmt: str, file: Path, specs_dir: Path | None, suffix: str, force: bool) -> None:
    """Write one spec per tool found in FILE, a provider tool list in FORMAT (a target name)."""
    from . import importer, output
    from .build import DEFAULT_SPECS
    from .config import load_config
    from .paths import display_path

    try:
        config = load_config(Path.cwd())
    except DiagnosticsError as exc:
        _report(exc.diagnostics)
        sys.exit(ExitCode.INVALID)
    folder = specs_dir or config.specs or Path(DEFAULT_SPECS)
    try:
        imported = importer.read(fmt, file)
        files = importer.plan(imported, folder, f".{suffix}", force)
    except importer.ImportError_ as exc:
        _fail(str(exc))
    output.create_user_files(files, replace=force)
    for path in files:
        _echo(f"wrote {display_path(path)}", fg="green")
    for note in imported.notes:
        _echo(f"note: {note}", err=True, fg="yellow")
    for key, value in imported.options.items():
        target, option = key.split(".")
        _echo(
            f"note: {file.as_posix()} uses {option} = {value!r}; to get it back, set it under "
            f"[tool.toolnexus-gen.{target}] in pyproject.toml",
            err=True,
            fg="yellow",
        )
    click.echo(f"{_plural(len(files), 'spec')} imported into {display_path(folder)}")


@main.command()
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--specs",
    "specs_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Spec folder. Default: as for build.",
)
@OUT_OPTION
@click.option(
    "--class-name", default="Handlers", show_default=True, help="Name of the ToolHandlers subclass."
)
def scaffold(file: Path, specs_dir: Path | None, out_dir: Path | None, class_name: str) -> None:
    """Write FILE, a module of your own with a ToolHandlers subclass and one stub per tool.

    Written once: if FILE exists it is left unchanged, and the methods that tools added since
    still need are printed instead."""
    from . import output, project
    from .build import analyse

    options = _options(specs_dir, out_dir, ())
    analysis = analyse(options)
    _report(analysis.diagnostics)
    if any(d.is_error for d in analysis.diagnostics):
        _fail("fix the specs first; nothing written")
    tools = analysis.toolset.tools
    if file.exists():
        try:
            missing = project.missing_methods(file.read_text("utf-8"), tools)
        except (OSError, UnicodeDecodeError, SyntaxError) as exc:
            _fail(f"{file.as_posix()} exists and cannot be read as Python ({exc}); left unchanged")
        if not missing:
            _echo(
                f"{file.as_posix()} exists and has a method for every tool; left unchanged",
                fg="green",
            )
            return
        _echo(
            f"{file.as_posix()} exists and is left unchanged; add {_plural(len(missing), 'method')} "
            "for the new tools:",
            fg="yellow",
        )
        click.echo(project.stubs_for(missing).rstrip("\n"))
        return
    package = project.package_import(options.out)
    output.create_user_files({file: project.scaffold_source(tools, package, class_name)})
    _echo(f"wrote {file.as_posix()} ({_plural(len(tools), 'stub')}; imports {package})", fg="green")
