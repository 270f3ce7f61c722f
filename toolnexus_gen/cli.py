"""The command line: parse options, call the library, print results, return an exit code.

Only this module prints. Heavy imports happen inside commands so `--version` stays instant.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from . import __version__
from .diagnostics import Diagnostic, DiagnosticsError, ExitCode


def _color() -> bool | None:
    return False if os.environ.get("NO_COLOR") else None


def _echo(message: str, *, err: bool = False, fg: str | None = None, bold: bool = False) -> None:
    click.secho(message, err=err, fg=fg, bold=bold, color=_color())


def _report(diagnostics: list[Diagnostic]) -> None:
    for diagnostic in diagnostics:
        _echo(diagnostic.format(), err=True, fg="red" if diagnostic.is_error else "yellow")


def _fail(message: str) -> None:
    _echo(f"error: {message}", err=True, fg="red")
    sys.exit(ExitCode.INVALID)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="toolnexus-gen")
def main() -> None:
    """Define each LLM tool once; generate provider schemas, typed handlers and dispatch."""


@main.command()
@click.argument("specs_dir", required=False, type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Output package folder (owned by toolnexus-gen). Default: 'tools' beside SPECS_DIR.",
)
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="NAME",
    help="Provider target to emit; repeat for several. Default: all.",
)
@click.option(
    "--check", is_flag=True, help="Write nothing; exit 1 if generated files are out of date."
)
@click.option("-q", "--quiet", is_flag=True, help="Print only problems.")
def build(
    specs_dir: Path | None, out_dir: Path | None, targets: tuple[str, ...], check: bool, quiet: bool
) -> None:
    """Validate every spec in SPECS_DIR and write (or --check) the generated package."""
    from . import output
    from .build import UsageError, generate, header_for, resolve_options
    from .config import load_config

    try:
        config = load_config(Path.cwd())
        options = resolve_options(config, specs_dir, out_dir, targets or None)
    except DiagnosticsError as exc:
        _report(exc.diagnostics)
        sys.exit(ExitCode.INVALID)
    except UsageError as exc:
        _fail(str(exc))
    result = generate(options)
    _report(result.diagnostics)
    if result.files is None:
        errors = sum(d.is_error for d in result.diagnostics)
        _echo(f"{errors} error(s); nothing written.", err=True, fg="red", bold=True)
        sys.exit(ExitCode.INVALID)
    tools = len(result.toolset.tools) if result.toolset else 0
    out = options.out.as_posix()
    if check:
        report = output.check(options.out, result.files)
        if report.up_to_date:
            if not quiet:
                _echo(
                    f"{out} is up to date ({tools} tools, {len(options.targets)} targets).",
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
    try:
        report = output.write(options.out, result.files)
    except output.OwnershipError as exc:
        _fail(str(exc))
    if not quiet:
        removed = f", {len(report.removed)} removed" if report.removed else ""
        _echo(
            f"{tools} tools, {len(options.targets)} targets: {len(report.written)} files written, "
            f"{len(report.unchanged)} unchanged{removed} in {out}",
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
