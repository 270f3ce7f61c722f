"""The command line: parse the flags, call `session` (one line per command), print what it
returns, and exit with the code it means. Only this module prints.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from toolnexus_gen import __version__
from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError, ExitCode, printable
from toolnexus_gen.targets.registry import NAMES

if TYPE_CHECKING:
    from toolnexus_gen import (
        session,
    )  # imported where a command runs: --version and --help need none of it

T = TypeVar("T")


def _color() -> bool | None:
    return False if os.environ.get("NO_COLOR") else None


def _echo(message: str, *, err: bool = False, fg: str | None = None, bold: bool = False) -> None:
    click.secho(printable(message, lines=True), err=err, fg=fg, bold=bold, color=_color())


def _report(diagnostics: list[Diagnostic]) -> None:
    for diagnostic in diagnostics:
        _report_line(diagnostic.format(), diagnostic.is_error)


def _report_line(line: str, is_error: bool) -> None:
    _echo(printable(line), err=True, fg="red" if is_error else "yellow")


def _fail(message: str) -> NoReturn:
    _echo(f"error: {message}", err=True, fg="red")
    sys.exit(ExitCode.INVALID)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


_built = False  # a one-shot build ran (see run)


_terminated = False  # SIGTERM was heard (see _stop_on_sigterm)
SIGTERM_GRACE = 10  # seconds the cleanup after a SIGTERM may take before the process is ended


def _stop_on_sigterm() -> None:
    """SIGTERM (a hook's time limit, a cancelled CI job, `kill`) ends a command as Ctrl-C does:
    through every cleanup on the way out, so what it staged or wrote into a temporary folder is
    removed, where the default action would end the process on the spot and leave them; then
    the process ends by the signal, as its sender expects (_end_by_sigterm). A cleanup that
    hangs (an MCP server that ignores being stopped) is cut short after SIGTERM_GRACE seconds,
    and a second SIGTERM ends the process at once. A worker forked from this process ends at
    once, as by default (its parent cleans up)."""
    parent = os.getpid()

    def stop(signum: int, frame: object) -> None:
        global _terminated
        if os.getpid() != parent:
            os._exit(128 + signum)
        _terminated = True
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(SIGTERM_GRACE)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)


def _flushed() -> bool:
    """Flush stdout and stderr; False when either could not be written."""
    written = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            written = False
    return written


def _end_by_sigterm() -> NoReturn:
    _flushed()
    signal.alarm(0)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)
    os._exit(128 + signal.SIGTERM)  # pragma: no cover (the signal ends it first)


def run() -> None:
    """The console script, and `python -m toolnexus_gen`: main(); after a one-shot build, an
    exit that skips freeing every object the build made one by one (about 20 ms at 1,000
    tools), as mypy's command line does. By then its output is written and flushed, its
    workers stopped, and it holds nothing else that needs closing. Under a profiler, a tracer or
    coverage (which write their data as the process ends) it ends as usual.

    The garbage collector runs less often than Python's default (every 200,000 allocations
    net, not 700), as mypy's command line does: a build allocates millions of objects that
    live until it ends (the cache's records, specs, schemas), and the default would walk them
    again and again, for the few reference cycles it frees (tens of milliseconds of a
    build that takes a few hundred)."""
    gc.set_threshold(200_000, 30, 30)
    _stop_on_sigterm()
    try:
        main()
    except SystemExit as exc:
        if _terminated:
            _end_by_sigterm()
        watched = sys.gettrace() or sys.getprofile() or "coverage" in sys.modules
        if not _built or watched or not (exc.code is None or isinstance(exc.code, int)):
            raise
        code = exc.code or 0
    else:  # pragma: no cover (click's standalone main always exits)
        code = 0
    if not _flushed():
        code = code or 1
    os._exit(code)


def _run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """A session call; a user's mistake is printed and exits 2, never a traceback."""
    from toolnexus_gen import session

    try:
        return fn(*args, **kwargs)
    except DiagnosticsError as exc:
        _report(exc.diagnostics)
        sys.exit(ExitCode.INVALID)
    except session.UserError as exc:
        _fail(str(exc))


class _Shown:
    """Progress on a terminal, once the work has taken a second: rich's bar on stderr, imported
    only then (start-up never pays for it). Nothing in a pipe, a CI log or with --quiet."""

    DELAY = 1.0  # seconds of work before a bar is worth showing
    EVERY = 0.1  # seconds between two redraws

    def __init__(self, what: str, quiet: bool = False) -> None:
        self.what = what
        self.on = not quiet and sys.stderr.isatty()
        self.started = time.monotonic()
        self.drawn = 0.0
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, step: str, done: int, total: int | None = None) -> None:
        if not self.on:
            return
        now = time.monotonic()
        if self.bar is None:
            if now - self.started < self.DELAY:
                return
            self._start()
        self.bar.update(self.task, description=f"{self.what}: {step}", completed=done, total=total)
        if now - self.drawn >= self.EVERY or done == total:
            self.bar.refresh()
            self.drawn = now

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        # Redrawn as the work reports (no refresh thread: the build forks its workers).
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
            auto_refresh=False,
        )
        self.bar.start()
        self.task = self.bar.add_task(self.what, total=None)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def __enter__(self) -> _Shown:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
@click.option(
    "--watch",
    is_flag=True,
    help="Keep running: build again on every change to the specs, pyproject.toml or mcp.json "
    "(Ctrl-C stops).",
)
def build(
    specs_dir: Path | None,
    out_dir: Path | None,
    targets: tuple[str, ...],
    check: bool,
    quiet: bool,
    watch: bool,
) -> None:
    """Validate every spec in SPECS_DIR and write (or --check) the generated package."""
    from toolnexus_gen import session

    if watch:
        if check:
            _fail("--watch writes the package on every change; it cannot be used with --check")
        _watch(specs_dir, out_dir, targets, quiet)
        return
    global _built
    _built = True  # however it ends (its errors printed, or it exits 1 or 2)
    with _Shown("building", quiet) as bar:
        outcome = _run(session.build, specs_dir, out_dir, targets, check, None, bar, once=True)
    code = _show_build(outcome, check, quiet)
    if code:
        sys.exit(code)


def _show_build(outcome: session.BuildOutcome, check: bool, quiet: bool) -> int:
    """Print a build's outcome; its exit code."""
    for line, is_error in outcome.diagnostics:
        _report_line(line, is_error)
    counts = f"{_plural(outcome.tools, 'tool')}, {_plural(outcome.targets, 'target')}"
    if outcome.invalid:
        errors = sum(is_error for _, is_error in outcome.diagnostics)
        _echo(f"{errors} error(s); nothing written.", err=True, fg="red", bold=True)
        if outcome.reach_would_build:
            _echo(
                'hint: every error here is one that profile = "reach" carries (name aliases, '
                "meaning moved into descriptions, Gemini parametersJsonSchema, non-strict tools); "
                "add it under [tool.toolnexus-gen] in pyproject.toml to build for every target",
                err=True,
                fg="yellow",
            )
        return ExitCode.INVALID
    if check and outcome.check is not None and not outcome.check.up_to_date:
        report = outcome.check
        for label, names in (
            ("changed", report.changed),
            ("missing", report.missing),
            ("stale", report.stale),
        ):
            for name in names:
                _echo(f"{label}: {outcome.out}/{name}", err=True, fg="yellow")
        if report.diff:
            click.echo(printable(report.diff, lines=True), nl=False, err=True)
        _echo(
            f"{outcome.out} is out of date: run `{outcome.command}`.", err=True, fg="red", bold=True
        )
        return ExitCode.STALE
    if quiet:
        return 0
    if outcome.reach:
        _echo(f"reach: {outcome.reach}", fg="yellow")
    if check:
        _echo(f"{outcome.out} is up to date ({counts}).", fg="green")
    elif outcome.noop:
        _echo(f"{counts}: 0 files written, {outcome.files} unchanged in {outcome.out}", fg="green")
    else:
        assert outcome.report is not None
        report = outcome.report
        removed = f", {len(report.removed)} removed" if report.removed else ""
        warned = f", {_plural(outcome.warnings, 'warning')}" if outcome.warnings else ""
        _echo(
            f"{counts}: {_plural(len(report.written), 'file')} written, "
            f"{len(report.unchanged)} unchanged{removed}{warned} in {outcome.out}",
            fg="green",
        )
    if outcome.budget:
        click.echo(outcome.budget)
    return 0


def _watch(
    specs_dir: Path | None, out_dir: Path | None, targets: tuple[str, ...], quiet: bool
) -> None:
    """build --watch: each build printed as it ends; Ctrl-C stops it (exit 0)."""
    from toolnexus_gen import session

    bar = _Shown("building", quiet)

    def each() -> _Shown:  # a bar for each build, shown if it takes a second
        nonlocal bar
        bar.close()
        bar = _Shown("building", quiet)
        return bar

    broken = False  # the last build reported errors: going back to the last good state says so
    try:
        for rebuild in session.watch(specs_dir, out_dir, targets, each):
            bar.close()
            noop = rebuild.outcome is not None and rebuild.outcome.noop
            if noop and not rebuild.first and not broken:
                if rebuild.started and not quiet:
                    _echo("watching for changes (Ctrl-C to stop)", err=True)
                continue  # touched, not changed
            if not rebuild.first and not quiet:
                more = len(rebuild.changed) - 1
                shown = rebuild.changed[0] if rebuild.changed else "while the watch started"
                _echo(f"changed: {shown}" + (f" and {more} more" if more > 0 else ""))
            if rebuild.error is not None:
                _echo(f"error: {rebuild.error}", err=True, fg="red")
            _report(rebuild.diagnostics)
            broken = rebuild.outcome is None
            if rebuild.outcome is not None and _show_build(rebuild.outcome, False, quiet):
                broken = True
                _echo(
                    f"{rebuild.outcome.out} keeps the last good build; watching for a fix",
                    err=True,
                    fg="yellow",
                )
            if rebuild.started and not quiet:
                _echo("watching for changes (Ctrl-C to stop)", err=True)
    except KeyboardInterrupt:
        bar.close()
        _echo("stopped watching", err=True)


@main.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain a diagnostic CODE (for example TN113) and how to fix it."""
    from toolnexus_gen import session

    title, text = _run(session.explain, code)
    _echo(f"{code.upper()}: {title}", bold=True)
    click.echo(printable(text, lines=True))


@main.command("list")
@SPECS_ARGUMENT
@TARGET_OPTION
@click.option(
    "--budget",
    is_flag=True,
    help="Print the estimated tokens of the tool definitions, per target, per toolset and per tool.",
)
def list_(specs_dir: Path | None, targets: tuple[str, ...], budget: bool) -> None:
    """Show each tool in SPECS_DIR with the targets it goes to and its warnings."""
    from toolnexus_gen import session

    listing = _run(session.list_tools, specs_dir, targets, budget)
    options, analysis = listing.options, listing.analysis
    if listing.budget is not None:
        _report([d for d in analysis.diagnostics if d.code in BUDGET_CODES])
        click.echo("\n".join(_budget_lines(listing.budget)))
        return
    by_file: dict[str, list[Diagnostic]] = {}
    for diagnostic in analysis.diagnostics:
        by_file.setdefault(diagnostic.path, []).append(diagnostic)
    shown: set[str] = set()
    tools = analysis.toolset.tools
    curated = {o.name or o.tool: o for o in options.curated.overrides if not o.exclude}
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
        first = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        _echo(f"  {first}")
        _echo(f"  targets: {', '.join(chosen) or '(none)'}" + (f"  [{status}]" if status else ""))
        override = curated.get(tool.name)
        if override is not None:
            line, _ = override.place
            _echo(f"  overridden ({override.display}:{line}): {override.summary()}")
        if tool.groups or tool.defer_loading:
            deferred = "  (defer_loading)" if tool.defer_loading else ""
            _echo(f"  groups: {', '.join(tool.groups) or '(none)'}{deferred}")
        for diagnostic in found:
            _echo(f"    {diagnostic.format()}", fg="red" if diagnostic.is_error else "yellow")
    others = [d for path, ds in sorted(by_file.items()) if path not in shown for d in ds]
    _report(others)
    if any(d.is_error for d in analysis.diagnostics):
        sys.exit(ExitCode.INVALID)


BUDGET_CODES = ("TN330", "TN318", "TN461", "TN462")


def _budget_lines(budget: Any) -> list[str]:
    """The token tables of `list --budget` (pipeline.toolsets.Budget)."""
    targets = list(budget.targets)
    rows = [(label, costs, deferred) for label, costs, deferred in budget.sets]
    width = max([len("toolset"), *(len(label) for label, _, _ in rows)]) + 2
    tool_width = max([len("tool"), *(len(name) for name, _ in budget.tools)]) + 2
    columns = [max(len(t), 9) for t in targets]

    def line(label: str, values: list[str], first: int) -> str:
        cells = "".join(f"  {value:>{size}}" for value, size in zip(values, columns, strict=True))
        return f"{label:<{first}}{cells}".rstrip()

    out = [
        "Estimated tokens of tool definitions per request (offline estimate, see the docs: Many tools, Token "
        "budgets; deferred tools count once loaded)",
        "",
        line("toolset", targets, width),
    ]
    for label, costs, deferred in rows:
        values = [f"{costs[t]:,}" if costs.get(t) else "-" for t in targets]
        out.append(line(label, values, width) + (f"   ({deferred} deferred)" if deferred else ""))
    out += ["", line("tool", targets, tool_width)]
    for name, costs in budget.tools:
        out.append(
            line(name, [f"{costs[t]:,}" if t in costs else "-" for t in targets], tool_width)
        )
    return out


@main.command()
@click.argument(
    "directory", required=False, default=".", type=click.Path(path_type=Path, file_okay=False)
)
@click.option("--specs", default="specs", show_default=True, help="Spec folder, inside DIRECTORY.")
@click.option("--out", default="tools", show_default=True, help="Output package, inside DIRECTORY.")
def init(directory: Path, specs: str, out: str) -> None:
    """Start a project in DIRECTORY: a spec folder with one example spec, the
    [tool.toolnexus-gen] section, and a pre-commit hook. Existing files are never replaced."""
    from toolnexus_gen import session
    from toolnexus_gen.codegen.package import RUNTIME_REQUIREMENT

    report = _run(session.init, directory, specs, out)
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
@click.argument("fmt", metavar="FORMAT", type=click.Choice([*NAMES, "openapi"]))
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
@click.option(
    "--server",
    metavar="URL",
    help="openapi: the server the tools call (default: the document's first server).",
)
@click.option(
    "--tag",
    "tags",
    multiple=True,
    metavar="TAG",
    help="openapi: import only operations with this tag; repeat for several.",
)
@click.option(
    "--env-prefix",
    metavar="NAME",
    help="openapi: start the environment variables that credentials are read from with NAME "
    "(default: from the document's title, e.g. WEATHER_BEARER_AUTH).",
)
@click.option(
    "--declare",
    metavar="NAME",
    help="openapi: declare FILE as a synced source [tool.toolnexus-gen.openapi.NAME] in "
    "pyproject.toml and sync it into specs/NAME/ (re-imported by every sync; overrides and "
    "overlays apply), instead of importing it once.",
)
def import_(
    fmt: str,
    file: Path,
    specs_dir: Path | None,
    suffix: str,
    force: bool,
    server: str | None,
    tags: tuple[str, ...],
    env_prefix: str | None,
    declare: str | None,
) -> None:
    """Write one spec per tool found in FILE: a provider tool list in FORMAT (a target name),
    or, with FORMAT openapi, an OpenAPI 3.0/3.1 document (one tool per operation, each a REST
    call the runtime makes; no handler to write)."""
    from toolnexus_gen import session
    from toolnexus_gen.fs.paths import display_path

    if declare is not None:
        if fmt != "openapi":
            _fail("--declare applies to `import openapi` only")
        with _Shown("syncing") as bar:
            table, synced = _run(
                session.declare_openapi, file, declare, server, tags, env_prefix, bar
            )
        _echo(f"declared in pyproject.toml:\n{table}", fg="green")
        _report(synced.diagnostics)
        for document in synced.documents:
            _show_document(document, False)
        return

    with _Shown("importing") as bar:
        outcome = _run(
            session.import_specs,
            fmt,
            file,
            specs_dir,
            suffix,
            force,
            server,
            tags,
            env_prefix,
            bar,
        )
    imported, folder = outcome.imported, outcome.folder
    folder_name = getattr(imported, "folder", "")
    shared = [p for p in outcome.written if folder_name and p.parent.name == folder_name]
    for path in outcome.written:
        if path not in shared:
            _echo(f"wrote {display_path(path)}", fg="green")
    if shared:
        _echo(
            f"wrote {_plural(len(shared), 'shared schema')} into {display_path(shared[0].parent)}",
            fg="green",
        )
    for note in imported.notes:  # one line each, whatever the document holds
        _echo(f"note: {printable(note)}", err=True, fg="yellow")
    for skipped in getattr(imported, "skipped", []):  # located: the operation is not imported
        _echo(skipped.format(), err=True, fg="yellow")
    for warning in getattr(imported, "warnings", []):  # located: what the import changed
        _echo(warning.format(), err=True, fg="yellow")
    env: dict[str, str] = getattr(imported, "env", {})
    if env:
        servers: dict[str, list[str]] = getattr(imported, "env_servers", {})
        _echo("headers read from the environment when a tool is called:", fg="yellow")
        for var, what in sorted(env.items()):
            to = ", ".join(servers.get(var, []))
            _echo(f"  {var}: {printable(what)}, to {to}", fg="yellow")
        for var in sorted(v for v in env if v in os.environ):
            _echo(
                f"note: {var} is already set in this environment: the tools will send it to "
                f"{', '.join(servers.get(var, []))}; if it holds a credential for another "
                "service, import again with --env-prefix NAME",
                err=True,
                fg="yellow",
            )
    hint = getattr(imported, "base_url_hint", None)
    if hint is not None:
        where = f"is relative ({hint})" if hint else "is not given"
        _echo(
            f'note: the document\'s server {where}: set base_url = "https://..." under '
            "[tool.toolnexus-gen] in pyproject.toml, or import with --server URL",
            err=True,
            fg="yellow",
        )
    for key, value in imported.options.items():
        target, option = key.split(".")
        _echo(
            f"note: {file.as_posix()} uses {option} = {value!r}; to get it back, set it under "
            f"[tool.toolnexus-gen.{target}] in pyproject.toml",
            err=True,
            fg="yellow",
        )
    specs = len(outcome.written) - len(shared)
    click.echo(f"{_plural(specs, 'spec')} imported into {display_path(folder)}")


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
    from toolnexus_gen import session

    outcome = _run(session.scaffold, file, specs_dir, out_dir, class_name)
    _report(outcome.diagnostics)
    if outcome.written:
        _echo(
            f"wrote {file.as_posix()} ({_plural(outcome.tools, 'stub')}; imports {outcome.package})",
            fg="green",
        )
    elif not outcome.missing:
        _echo(
            f"{file.as_posix()} exists and has a method for every tool; left unchanged", fg="green"
        )
    else:
        _echo(
            f"{file.as_posix()} exists and is left unchanged; add "
            f"{_plural(len(outcome.missing), 'method')} for the new tools:",
            fg="yellow",
        )
        click.echo(printable(outcome.stubs.rstrip("\n"), lines=True))


@main.command()
@click.option(
    "--server",
    "server",
    metavar="NAME",
    help="Sync only this server of mcp.json, or this declared OpenAPI document.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 if a server's tools changed since its snapshot.",
)
@click.option(
    "--accept-origin",
    is_flag=True,
    help="Let a declared OpenAPI document move its tools to another server (scheme, host or "
    "port); without it that is an error and nothing is written, unless the declaration pins "
    "its server.",
)
def sync(server: str | None, check: bool, accept_origin: bool) -> None:
    """Snapshot the tools of the MCP servers in mcp_config (mcp.json) and of the OpenAPI
    documents declared under [tool.toolnexus-gen.openapi] into the spec folder: one spec per
    tool under specs/<name>/, each bound to its source."""
    from toolnexus_gen import session

    def on_listed(name: str, tools: int | None, seconds: float) -> None:
        if sys.stderr.isatty():  # progress, one line per server as it answers
            state = "failed" if tools is None else f"listed {_plural(tools, 'tool')}"
            _echo(f"  {name}: {state} in {seconds:.1f} s", err=True)

    with _Shown("syncing") as bar:
        outcome = _run(session.sync, server, check, on_listed, bar, accept_origin)
    _report(outcome.diagnostics)
    for document in outcome.documents:
        _show_document(document, check)
    for result in outcome.servers:
        if result.failed:
            continue
        if check:
            for drift in result.drift:
                shown = drift.details[:12]
                more = len(drift.details) - len(shown)
                details = f": {printable(', '.join(shown))}" if shown else ""
                details += f" and {more} more" if more else ""
                _echo(
                    f"{drift.file}: {drift.what} upstream (tool {drift.tool!r} of server "
                    f"{result.name!r}){details}",
                    err=True,
                    fg="yellow",
                )
                for finding in drift.findings:  # one line each, whatever the server sent
                    error = finding.startswith("error")
                    _echo(f"  {printable(finding)}", err=True, fg="red" if error else None)
            if result.drift:
                _echo(
                    f"{result.name}: the snapshot is out of date: run "
                    f"`toolnexus-gen sync --server {result.name}`",
                    err=True,
                    fg="red",
                    bold=True,
                )
            else:
                _echo(
                    f"{result.name}: {_plural(result.tools, 'tool')}, snapshot up to date",
                    fg="green",
                )
            continue
        removed = f", {len(result.removed)} removed" if result.removed else ""
        _echo(
            f"{result.name}: {_plural(result.tools, 'tool')} ({result.transport}, "
            f"{result.seconds:.1f} s): {_plural(len(result.written), 'file')} written, "
            f"{result.unchanged} unchanged{removed} in {result.folder}",
            fg="green",
        )
    for name in outcome.skipped:
        _echo(f"{name}: skipped (enabled: false)")
    for folder in outcome.unlisted:
        _echo(
            f"note: {folder} holds the snapshot of a server {outcome.config} no longer lists; "
            "delete the folder if its tools are gone for good",
            err=True,
            fg="yellow",
        )
    if outcome.failed:
        _echo(
            f"{outcome.failed} of {_plural(len(outcome.servers), 'server')} failed; "
            f"{'their snapshots were not checked' if check else 'their snapshots are unchanged'}.",
            err=True,
            fg="red",
            bold=True,
        )
    if outcome.refused:
        _echo(
            f"{_plural(len(outcome.refused), 'server')} refused for a wrong entry in "
            f"{outcome.config} ({', '.join(outcome.refused)}); the others were "
            f"{'checked' if check else 'synced'}.",
            err=True,
            fg="red",
            bold=True,
        )
        sys.exit(ExitCode.INVALID)
    if outcome.failed or (check and outcome.drifted):
        sys.exit(ExitCode.STALE)


def _show_drift(drift: session.Drift, whose: str) -> None:
    shown = drift.details[:12]
    more = len(drift.details) - len(shown)
    details = f": {printable(', '.join(shown))}" if shown else ""
    details += f" and {more} more" if more else ""
    what = f"tool {drift.tool!r}" if drift.tool else "a shared schema"
    _echo(
        f"{drift.file}: {drift.what} upstream ({what} of {whose}){details}", err=True, fg="yellow"
    )
    for finding in drift.findings:  # one line each, whatever the source sent
        error = finding.startswith("error")
        _echo(f"  {printable(finding)}", err=True, fg="red" if error else None)


def _show_document(document: session.DocumentResult, check: bool) -> None:
    """One declared OpenAPI document's sync, or what --check found."""
    whose = f"openapi.{document.name}"
    if check:
        for drift in document.drift:
            _show_drift(drift, whose)
        if document.drift:
            _echo(
                f"{document.name}: the snapshot is out of date: run "
                f"`toolnexus-gen sync --server {document.name}`",
                err=True,
                fg="red",
                bold=True,
            )
        else:
            _echo(
                f"{document.name}: {_plural(document.tools, 'tool')}, snapshot up to date",
                fg="green",
            )
        return
    for note in document.notes:
        _echo(f"note: {document.name}: {printable(note)}", err=True, fg="yellow")
    for var, what in sorted(document.env.items()):
        _echo(
            f"note: {document.name}: {var} is read from the environment: {printable(what)}",
            err=True,
            fg="yellow",
        )
    removed = f", {len(document.removed)} removed" if document.removed else ""
    _echo(
        f"{document.name}: {_plural(document.tools, 'tool')} (openapi, {printable(document.document)}): "
        f"{_plural(len(document.written), 'file')} written, {document.unchanged} unchanged"
        f"{removed} in {document.folder}",
        fg="green",
    )


AGAINST_OPTION = click.option(
    "--against",
    "against",
    required=True,
    metavar="REF",
    help="A git revision of this repository (main, HEAD~1, v1.2.0, a commit) whose checked-in "
    "generated package is compared, or a directory holding an earlier generated package.",
)


ACCEPT_OPTION = click.option(
    "--accept",
    "accepted",
    multiple=True,
    metavar="TOOL:RULE",
    help="Accept one finding (a tool name or glob, and a rule ID; repeatable): it is still "
    "reported, marked accepted, and counts for no --fail-on. Beside accept in "
    "[tool.toolnexus-gen.breaking].",
)


@main.command()
@AGAINST_OPTION
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    default=None,
    help="Exit 1 when a finding is at or above this severity. Default: error "
    "(or fail_on in [tool.toolnexus-gen.breaking]).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github", "markdown"]),
    default="text",
    show_default=True,
    help="text (path:line:col), json (for scripts), github (workflow annotations), markdown "
    "(a pull request comment).",
)
@ACCEPT_OPTION
def breaking(against: str, fail_on: str | None, fmt: str, accepted: tuple[str, ...]) -> None:
    """Compare the tool surface at REF with what a build makes now: each change that breaks
    callers, handler code or what a model is shown, by rule (toolnexus-gen explain TN5xx).
    Nothing is written; the working tree is never touched."""
    from toolnexus_gen import session
    from toolnexus_gen.breaking import report, revision

    outcome = _run(session.breaking, against, fail_on, accepted)
    prefix = revision.workspace_prefix(Path.cwd()) if fmt == "github" else ""
    text = report.render(outcome.findings, fmt, outcome.against, prefix)
    if text:
        click.echo(text)
    for note in outcome.notes:
        _echo(f"note: {note}", err=True, fg="yellow")
    _echo(
        report.summary(outcome.findings, outcome.against),
        err=True,
        fg="red" if outcome.failed else "green",
    )
    if outcome.failed:
        sys.exit(ExitCode.STALE)


@main.command()
@AGAINST_OPTION
@ACCEPT_OPTION
@click.option(
    "--detail",
    type=click.Choice(["model", "all"]),
    default=None,
    help="model: list every model-only change (descriptions as word diffs, examples, token "
    "costs, strict mode) instead of one line each; all: also each compatible result change "
    "(result fields added).",
)
def changelog(against: str, accepted: tuple[str, ...], detail: str | None) -> None:
    """Print the tool changes since REF as release notes in Keep a Changelog's form (Added,
    Removed, Deprecated, Changed; breaking changes marked), to paste into CHANGELOG.md."""
    import datetime

    from toolnexus_gen import session
    from toolnexus_gen.breaking import report

    outcome = _run(session.breaking, against, None, accepted)
    text = report.changelog(
        outcome.findings,
        outcome.against,
        detail=detail,
        version=outcome.version,
        today=datetime.date.today().isoformat(),
    )
    click.echo(text, nl=False)
    for note in outcome.notes:
        _echo(f"note: {note}", err=True, fg="yellow")
