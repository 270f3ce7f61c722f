"""One function per command: what the command does, start to end, as results the CLI prints.

Nothing here prints or exits. A user's mistake is a `UserError` (one line, exit 2) or a
`DiagnosticsError` (located diagnostics, exit 2); an operating-system error on any input, output
or configuration path becomes a `UserError` naming the path, never a traceback. Heavy modules
are imported inside the functions, so `--version` and the no-op build stay instant.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolnexus_gen import __version__
from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError, Severity, printable
from toolnexus_gen.progress import Progress, unseen

if TYPE_CHECKING:
    from toolnexus_gen.commands.importer import Imported
    from toolnexus_gen.commands.project import InitReport
    from toolnexus_gen.config.options import BuildOptions
    from toolnexus_gen.fs.output import Report, Staging
    from toolnexus_gen.fs.watch import Inputs
    from toolnexus_gen.incremental.plan import Plan, Record
    from toolnexus_gen.ir import Contribution, ToolInfo
    from toolnexus_gen.pipeline.build import Analysis
    from toolnexus_gen.pipeline.toolsets import Budget


# Errors that profile = "reach" turns into warnings: names (aliases), what describe carries,
# what Gemini's parametersJsonSchema and a non-strict tool carry.
REACH_CARRIES = frozenset(
    {"TN201", "TN202", "TN203", "TN205", "TN301", "TN302", "TN303", "TN306", "TN310", "TN311"}
    | {"TN312", "TN313", "TN314", "TN315", "TN316", "TN320", "TN340", "TN341", "TN342", "TN344"}
    | {"TN345", "TN346", "TN350", "TN351", "TN352", "TN353", "TN354", "TN356"}
)


def _plural(n: int, one: str, many: str) -> str:
    return "" if not n else f"{n} {one if n == 1 else many}"


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
    record: Record | None = None  # what the next build in this process starts from

    @property
    def reach(self) -> str:
        """What the reach steps did, in one line ("" when nothing)."""
        count = self.codes.count
        parts = [
            _plural(count("TN210") + count("TN211"), "alias", "aliases"),
            _plural(count("TN220"), "removal described", "removals described"),
            _plural(count("TN225"), "exact rewrite", "exact rewrites"),
            _plural(count("TN221"), "strict entry", "strict entries"),
            _plural(count("TN223") + count("TN226"), "non-strict entry", "non-strict entries"),
            _plural(
                count("TN222"),
                "Gemini declaration via parametersJsonSchema",
                "Gemini declarations via parametersJsonSchema",
            ),
            _plural(count("TN224"), "root taken as an object", "roots taken as objects"),
        ]
        return ", ".join(part for part in parts if part)

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
    specs_dir: Path | None,
    out_dir: Path | None,
    targets: tuple[str, ...],
    check: bool,
    last: Record | None = None,
    progress: Progress = unseen,
    *,
    once: bool = False,
) -> BuildOutcome:
    """One build. `last`: what the previous build in this process recorded (build --watch);
    `progress` hears of its stages' steps; `once`: no later build in this process starts from
    this one (the command line's `build`), so what only such a build reuses is not kept."""
    from toolnexus_gen.config.options import header_for
    from toolnexus_gen.fs.paths import display_path
    from toolnexus_gen.incremental.plan import plan

    chosen = options(specs_dir, out_dir, targets)
    with os_errors(), ExitStack() as held:
        outcome = BuildOutcome(
            display_path(chosen.out), header_for(chosen).command, 0, len(chosen.targets), []
        )
        outcome.profile = chosen.profile

        def start_workers(known: Plan) -> None:  # once the plan knows what changed
            from toolnexus_gen.fs.paths import CACHE_DIR
            from toolnexus_gen.incremental.cache import MEMO
            from toolnexus_gen.pipeline.workers import workers

            contributed = len(known.contribution.specs) if known.first else 0
            memo_left = known.first and (chosen.out / CACHE_DIR / MEMO).is_file()
            held.enter_context(
                workers(
                    chosen.specs, known.first, known.changed, known.models, contributed, memo_left
                )
            )

        planned = plan(
            chosen,
            check=check,
            contribute=lambda: _contribute(chosen),
            last=last,
            ready=start_workers,
        )
        noop = planned.noop
        if noop is not None:  # nothing changed since the last build: answered from its record
            outcome.noop, outcome.tools, outcome.files = True, noop.tools, noop.files
            outcome.budget = noop.budget
            outcome.diagnostics = [
                (line, severity == "error") for severity, line in noop.diagnostics
            ]
            outcome.record = last
            return outcome
        return _full_build(chosen, planned, check, outcome, progress, once)


def _contribute(chosen: BuildOptions) -> Contribution:
    from toolnexus_gen.sources import contribute

    return contribute(chosen)


def _full_build(
    chosen: BuildOptions,
    planned: Plan,
    check: bool,
    outcome: BuildOutcome,
    progress: Progress,
    once: bool = False,
) -> BuildOutcome:
    from toolnexus_gen.fs import output

    # A build that writes stages the model modules the workers make while it waits for the rest
    # (output.Staging); whatever it did not use is removed once the build is over.
    staging = None if check else output.Staging(chosen.out, planned.outputs)
    try:
        return _generate_and_write(chosen, planned, check, outcome, progress, staging, once)
    finally:
        if staging is not None:
            staging.close()


def _generate_and_write(
    chosen: BuildOptions,
    planned: Plan,
    check: bool,
    outcome: BuildOutcome,
    progress: Progress,
    staging: Staging | None,
    once: bool = False,
) -> BuildOutcome:
    from toolnexus_gen.fs import output
    from toolnexus_gen.pipeline.build import generate, save_build, tell_budget

    try:
        result = generate(
            chosen,
            planned,
            progress,
            staging.add if staging else None,
            once=once,
            spill=staging.spill if staging is not None and once else None,
        )
    except RecursionError:  # a last line of defence: every known cause is a located error
        raise UserError(
            "a schema is nested or self-referencing beyond what can be processed"
        ) from None
    outcome.diagnostics = [(d.format(), d.is_error) for d in result.diagnostics]
    outcome.codes = [d.code for d in result.diagnostics]
    outcome.tools = len(result.toolset.tools) if result.toolset else 0
    if result.files is None:
        outcome.invalid = True
        return outcome
    if check:
        outcome.budget = tell_budget(chosen, result)
        outcome.check = output.check(chosen.out, result.files)
        return outcome
    records: list[Record] = []
    try:  # the cache is saved under the output lock, once the files are written
        outcome.report = output.write(
            chosen.out,
            result.files,
            lambda report: records.append(save_build(chosen, planned, result, report)),
            planned.outputs,
            lambda done, total: progress("writing", done, total),
            planned.written,
            staging,
        )
    except output.OwnershipError as exc:
        raise UserError(str(exc)) from None
    outcome.record = records[0]
    outcome.budget = result.budget  # estimated as the record was saved (save_build)
    return outcome


# -- build --watch -----------------------------------------------------------------------------


@dataclass
class Rebuild:
    """One build of `build --watch`: its outcome, or the mistake that stopped it."""

    changed: list[str]  # the files whose change started it, as shown
    first: bool = False  # the build that starts the watch
    started: bool = False  # the build once the watch is set up (what changed meanwhile)
    outcome: BuildOutcome | None = None
    error: str | None = None  # a UserError's line
    diagnostics: list[Diagnostic] = field(default_factory=list)  # a DiagnosticsError's

    @property
    def wrote(self) -> bool:
        return self.outcome is not None and self.outcome.report is not None


def watch(
    specs_dir: Path | None,
    out_dir: Path | None,
    targets: tuple[str, ...],
    progress: Callable[[], Progress] = lambda: unseen,
) -> Iterator[Rebuild]:
    """A build, then one more for every batch of changes to its inputs (the spec folder, the
    skills folder, pyproject.toml, mcp.json), forever: stopped by Ctrl-C (KeyboardInterrupt).
    Each build starts from the record the last successful one left in memory; a build with
    errors writes nothing, so the last good output stays as it was. `progress()` gives each
    build what hears of its steps."""
    import time

    from toolnexus_gen.fs import watch as watching
    from toolnexus_gen.fs.paths import display_path

    record: Record | None = None

    def once(changed: list[Path], first: bool = False, started: bool = False) -> Rebuild:
        nonlocal record
        rebuild = Rebuild([display_path(path) for path in changed], first, started)
        try:
            rebuild.outcome = build(specs_dir, out_dir, targets, False, record, progress())
        except UserError as exc:
            rebuild.error = str(exc)
        except DiagnosticsError as exc:
            rebuild.diagnostics = exc.diagnostics
        if rebuild.outcome is not None and rebuild.outcome.record is not None:
            record = rebuild.outcome.record
        return rebuild

    yield once([], first=True)
    inputs = _watched(specs_dir, out_dir)
    warm = False
    while True:
        if not all(folder.is_dir() for folder in inputs.folders):
            # a watched folder is missing (the build said so): wait for it to come back
            time.sleep(watching.POLL_MS / 1000)
            inputs = _watched(specs_dir, out_dir)
            if all(folder.is_dir() for folder in inputs.folders):
                yield once(list(inputs.folders))
            continue
        try:
            for batch in watching.changes(inputs, _tidy):  # the first: once the watch is set up
                yield once(batch, started=not warm)  # usually a no-op
                if not warm:  # the process stays: a model edit then finds the generator ready
                    _warm_up()
                    warm = True
                now = _watched(specs_dir, out_dir)
                if now != inputs or not all(folder.is_dir() for folder in now.folders):
                    inputs = now  # the configuration moved a folder, or one is gone
                    break
        except FileNotFoundError:  # gone as the watch started
            continue


def _watched(specs_dir: Path | None, out_dir: Path | None) -> Inputs:
    """What `build --watch` watches: the folders and files a build reads, its output aside."""
    from toolnexus_gen.config.options import DEFAULT_OUT, DEFAULT_SPECS
    from toolnexus_gen.config.pyproject import load_config
    from toolnexus_gen.fs.watch import Inputs

    cwd = Path.cwd()
    try:
        config = load_config(cwd)
    except DiagnosticsError:  # a broken pyproject.toml: the build says why; watch for its fix
        specs = specs_dir or Path(DEFAULT_SPECS)
        return Inputs((specs,), (cwd / "pyproject.toml",), (), _real([specs]))
    specs = specs_dir or config.specs or Path(DEFAULT_SPECS)
    out = out_dir or config.out or specs.parent / DEFAULT_OUT
    folders = [specs]
    if config.skills is not None:
        folders.append(config.skills.value)
    files = [config.path or config.root / "pyproject.toml"]
    files.append(config.mcp_config or config.root / "mcp.json")
    return Inputs(tuple(folders), tuple(files), (out,), _real(folders))


def _real(folders: list[Path]) -> tuple[str, ...]:
    return tuple(os.path.realpath(folder) for folder in folders)


def _tidy() -> None:
    """While the watch is idle: a full garbage collection, then what survives it (the record,
    the warm modules) is set aside, so the collections during the next build go over that
    build's objects only, not the thousands the record holds."""
    import gc

    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _warm_up() -> None:
    from toolnexus_gen.codegen.models import warm_up

    warm_up()


# -- list, explain -----------------------------------------------------------------------------


@dataclass
class Listing:
    options: BuildOptions
    analysis: Analysis
    budget: Budget | None = None  # list --budget


def list_tools(specs_dir: Path | None, targets: tuple[str, ...], budget: bool = False) -> Listing:
    from toolnexus_gen.pipeline.build import analyse_reusing
    from toolnexus_gen.sources import contribute

    chosen = options(specs_dir, None, targets)
    with os_errors():
        listing = Listing(chosen, analyse_reusing(chosen, contribute(chosen)))
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

    try:
        with os_errors():
            return project.init(directory, specs=specs, out=out, version=__version__)
    except ValueError as exc:  # --specs or --out not a plain folder inside DIRECTORY
        raise UserError(str(exc)) from None


def declare_openapi(
    file: Path,
    name: str,
    server: str | None,
    tags: tuple[str, ...],
    env_prefix: str | None,
    progress: Progress = unseen,
) -> tuple[str, SyncOutcome]:
    """`import openapi FILE --declare NAME`: the document declared as a synced source in
    pyproject.toml (made when there is none), then synced. Returns the table written."""
    import re as regex

    from toolnexus_gen.config.curated import SOURCE_NAME
    from toolnexus_gen.config.pyproject import load_config
    from toolnexus_gen.fs.output import atomic_write

    if not SOURCE_NAME.fullmatch(name):
        raise UserError(
            f"--declare {name!r}: a source name is letters, digits, _ and - (it names the "
            "folder specs/<name>/)"
        )
    if server is not None and not regex.match(r"https?://[^/?#]+", server):
        raise UserError(f"--server {server!r} must be an absolute http(s) URL")
    with os_errors():
        config = load_config(Path.cwd())
        if any(declared.name == name for declared in config.curated.openapi):
            raise UserError(f"openapi.{name} is declared already in pyproject.toml; run sync")
        path = config.path or config.root / "pyproject.toml"
        try:
            document = file.resolve().relative_to(config.root.resolve()).as_posix()
        except ValueError:
            raise UserError(
                f"{file.as_posix()} is outside the project ({config.root.as_posix()}): copy it "
                "into the project to declare it"
            ) from None
        lines = [f"\n[tool.toolnexus-gen.openapi.{name}]", f"document = {json.dumps(document)}"]
        if server is not None:
            lines.append(f"server = {json.dumps(server.rstrip('/'))}")
        if tags:
            lines.append(f"tags = {json.dumps(list(tags))}")
        if env_prefix is not None:
            lines.append(f"env_prefix = {json.dumps(env_prefix)}")
        table = "\n".join(lines) + "\n"
        original = path.read_bytes() if path.is_file() else None
        before = (original or b"").decode("utf-8")
        if before and not before.endswith("\n"):
            before += "\n"
        atomic_write(path, ((before or "[tool.toolnexus-gen]\n") + table).encode("utf-8"))
    try:
        return table.strip("\n"), sync(name, False, None, progress)
    except (UserError, DiagnosticsError):
        with os_errors():  # a declaration that cannot sync is not left behind
            if original is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, original)
        raise


@dataclass
class ImportOutcome:
    folder: Path
    written: list[Path]
    imported: Imported


def import_specs(
    fmt: str,
    file: Path,
    specs_dir: Path | None,
    suffix: str,
    force: bool,
    server: str | None = None,
    tags: tuple[str, ...] = (),
    env_prefix: str | None = None,
    progress: Progress = unseen,
) -> ImportOutcome:
    from toolnexus_gen.commands import importer
    from toolnexus_gen.config.options import DEFAULT_SPECS
    from toolnexus_gen.config.pyproject import load_config
    from toolnexus_gen.fs import output

    with os_errors():
        config = load_config(Path.cwd())
        folder = specs_dir or config.specs or Path(DEFAULT_SPECS)
        try:
            imported = importer.read(
                fmt, file, server=server, tags=tags, env_prefix=env_prefix, progress=progress
            )
            memo = None
            if fmt == importer.OPENAPI:
                from toolnexus_gen.incremental.cache import load_memo
                from toolnexus_gen.sources.carry import options_for

                memo = load_memo(options_for(config, folder).out)
                importer.carry(imported, config, folder, f".{suffix}", memo)
            files = importer.plan(imported, folder, f".{suffix}", force, progress)
        except importer.ImportError_ as exc:
            raise UserError(str(exc)) from None
        output.create_user_files(
            files, replace=force, progress=lambda done, total: progress("writing", done, total)
        )
        home = importer.models_home(config, folder) if memo is not None else None
        if memo is not None and home is not None:
            from toolnexus_gen.incremental.cache import save_memo

            memo.used_valid, memo.used_models = set(memo.valid), set(memo.models)
            with suppress(OSError):  # a cache: never an error
                save_memo(home, memo)
        importer.add_toolsets(imported, config, file)
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
    from toolnexus_gen.sources import contribute

    chosen = options(specs_dir, out_dir, ())
    with os_errors():
        analysis = analyse(chosen, contribution=contribute(chosen))
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
    try:  # names that must be Python identifiers in the file written
        outcome.package = project.package_import(chosen.out, class_name)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    with os_errors():
        output.create_user_files(
            {file: project.scaffold_source(tools, outcome.package, class_name)}
        )
    outcome.written = True
    return outcome


# -- sync: MCP servers snapshotted into the spec folder ----------------------------------------


@dataclass
class Drift:
    file: str  # as shown
    tool: str  # the server's name for it
    what: str  # added, removed or changed (upstream)
    details: list[str] = field(default_factory=list)  # for a change: `<pointer> added|...`
    # what it means for callers, by the rules of `breaking`: `error[TN503] callers: ...`
    findings: list[str] = field(default_factory=list)


@dataclass
class ServerSync:
    name: str
    transport: str
    folder: str  # as shown
    tools: int = 0
    seconds: float = 0.0
    failed: bool = False
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    drift: list[Drift] = field(default_factory=list)  # --check


@dataclass
class DocumentResult:
    """One declared OpenAPI document's sync (or --check)."""

    name: str
    document: str  # as declared
    folder: str  # as shown
    tools: int = 0
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    drift: list[Drift] = field(default_factory=list)  # --check
    notes: list[str] = field(default_factory=list)  # the import's
    env: dict[str, str] = field(default_factory=dict)  # variables its headers read


@dataclass
class SyncOutcome:
    config: str  # the mcp.json, as shown
    check: bool
    servers: list[ServerSync] = field(default_factory=list)
    documents: list[DocumentResult] = field(default_factory=list)  # [tool.toolnexus-gen.openapi]
    diagnostics: list[Diagnostic] = field(default_factory=list)  # failures and warnings
    skipped: list[str] = field(default_factory=list)  # disabled servers
    refused: list[str] = field(default_factory=list)  # servers whose entry is wrong (exit 2)
    unlisted: list[str] = field(default_factory=list)  # snapshot folders mcp.json does not list

    @property
    def failed(self) -> int:
        return sum(server.failed for server in self.servers)

    @property
    def drifted(self) -> bool:
        return any(server.drift for server in self.servers) or any(
            document.drift for document in self.documents
        )


def sync(
    server: str | None,
    check: bool,
    on_listed: Callable[[str, int | None, float], None] | None,
    progress: Progress = unseen,
    accept_origin: bool = False,
) -> SyncOutcome:
    """List each enabled MCP server's tools and write (or --check) its snapshot.

    `on_listed(server, tools or None when it failed, seconds)` is called as each one answers,
    and `progress` hears how many of them have. `accept_origin`: a declared document may move
    its tools to another server (else that is an error and nothing is written)."""
    from toolnexus_gen.config.options import DEFAULT_SPECS
    from toolnexus_gen.config.pyproject import load_config
    from toolnexus_gen.fs import output
    from toolnexus_gen.fs.paths import display_path
    from toolnexus_gen.sources import carry, mcp, mcp_config

    with os_errors():
        config = load_config(Path.cwd())
        specs_dir = config.specs or Path(DEFAULT_SPECS)
        declared = config.curated.openapi
        chosen_documents = [d for d in declared if server is None or d.name == server]
        mcp_path = config.mcp_config or config.root / "mcp.json"
        # MCP servers are synced when there is an mcp.json (or no declared document at all)
        with_mcp = (config.mcp_config is not None or mcp_path.exists() or not declared) and not (
            server is not None and chosen_documents
        )
        if not with_mcp:
            outcome = SyncOutcome(display_path(mcp_path), check)
            _sync_documents(
                outcome, config, chosen_documents, specs_dir, check, progress, accept_origin
            )
            return outcome
        servers = mcp_config.read(mcp_path)
    outcome = SyncOutcome(servers.display, check)
    if server is None:  # the declared documents too, before the servers are listed
        _sync_documents(
            outcome, config, chosen_documents, specs_dir, check, progress, accept_origin
        )
        for document in declared:
            if servers.server(document.name) is not None:
                raise UserError(
                    f"openapi.{document.name} and MCP server {document.name!r} of "
                    f"{servers.display} would both sync into {display_path(specs_dir / document.name)}"
                    "; rename one of them"
                )
    outcome.diagnostics += servers.notes  # other clients' keys, ignored
    refused = dict(servers.refused)  # a wrong entry refuses its server alone
    if server is not None:
        if server in refused:
            raise DiagnosticsError([*servers.notes, *refused[server]])
        chosen = servers.server(server)
        if chosen is None:
            listed = ", ".join(servers.names) or "none"
            raise UserError(f"{servers.display} has no server {server!r} (it has: {listed})")
        if not chosen.enabled:
            raise UserError(f"server {server!r} is disabled in {servers.display} (enabled: false)")
        selected, refused = [chosen], {}
    else:
        selected = [s for s in servers.servers if s.enabled]
        outcome.skipped = [s.name for s in servers.servers if not s.enabled]
    expanded = []
    for entry in selected:
        resolved, found = mcp_config.expand(servers, entry, os.environ)
        if found:
            refused[entry.name] = tuple(found)
        else:
            expanded.append(resolved)
    outcome.refused = list(refused)
    for why in refused.values():
        outcome.diagnostics += why
    if refused and not expanded:  # nothing can start
        raise DiagnosticsError(outcome.diagnostics)
    answered: list[str] = []

    def answer(done: Any) -> None:
        answered.append(done.server.name)
        progress("servers", len(answered), len(expanded))
        if on_listed is not None:
            tools = None if done.tools is None else len(done.tools)
            on_listed(done.server.name, tools, done.seconds)

    progress("servers", 0, len(expanded))
    try:
        listings = mcp.list_servers(expanded, answer)
    except mcp.SdkMissing as exc:
        raise UserError(str(exc)) from None
    snapshots: list[mcp.Snapshot] = []
    found_problems: list[Diagnostic] = []
    with os_errors():
        for listing in listings:
            entry = listing.server
            result = ServerSync(
                entry.name,
                entry.transport,
                display_path(specs_dir / entry.name),
                seconds=listing.seconds,
            )
            outcome.servers.append(result)
            if listing.failure is not None:
                result.failed = True
                message = f"server {entry.name!r} ({entry.transport}): {listing.failure.reason}"
                outcome.diagnostics.append(servers.diagnostic(entry, listing.failure.code, message))
                continue
            if listing.noise_note is not None:  # listed all the same: a warning
                message = f"server {entry.name!r} ({entry.transport}): {listing.noise_note}"
                outcome.diagnostics.append(
                    servers.diagnostic(entry, "TN412", message, severity=Severity.WARNING)
                )
            snap, notes = mcp.snapshot(servers, listing, specs_dir)
            found_problems += notes
            if snap.refused is not None:  # a tool name no snapshot file can have
                result.failed = True
                message = f"server {entry.name!r} ({entry.transport}): {snap.refused}"
                outcome.diagnostics.append(servers.diagnostic(entry, "TN413", message))
                continue
            snapshots.append(snap)
        found_problems += mcp.collisions(servers, snapshots, specs_dir)
        if any(d.is_error for d in found_problems):
            raise DiagnosticsError(found_problems + outcome.diagnostics)
        # every tool checked as the project's build would take it, before anything is written
        found_problems += mcp.carry(servers, snapshots, carry.options_for(config, specs_dir))
        for snap in snapshots:
            next(r for r in outcome.servers if r.name == snap.server.name).tools = len(snap.files)
        outcome.diagnostics += found_problems
        outcome.unlisted = [display_path(f) for f in mcp.stale_folders(servers, specs_dir)]
        by_name = {result.name: result for result in outcome.servers}
        for snap in snapshots:
            result = by_name[snap.server.name]
            if check:
                result.drift = _drift(snap)
                continue
            changed = {snap.folder / f: snap.files[f] for f in (*snap.added, *snap.changed)}
            gone = [snap.folder / f for f in snap.removed]
            result.written = [display_path(path) for path in changed]
            result.removed = [display_path(path) for path in gone]
            result.unchanged = len(snap.files) - len(changed)
            _record_gone(snap, changed)
            output.replace_files(changed, gone)
    return outcome


def _record_gone(snap: Any, changed: dict[Path, str]) -> None:
    """An MCP server's tools and arguments gone upstream, recorded in its folder's manifest for
    the build's overrides (pipeline/overrides.py): a file only once something is gone."""
    from toolnexus_gen.pipeline.overrides import MANIFEST, gone_record, manifest_gone

    path = snap.folder / MANIFEST
    by = f"`sync` of MCP server {snap.server.name!r}"
    record = gone_record(manifest_gone(snap.folder), snap.existing, snap.files, by)
    if record or path.is_file():
        text = json.dumps({"source": {"mcp": snap.server.name}, "gone": record}, indent=2) + "\n"
        if not path.is_file() or path.read_text("utf-8", "replace") != text:
            changed[path] = text


def _sync_documents(
    outcome: SyncOutcome,
    config: Any,
    declared: list[Any],
    specs_dir: Path,
    check: bool,
    progress: Progress,
    accept_origin: bool = False,
) -> None:
    """Each declared OpenAPI document, re-imported into specs/<name>/ (or --check'ed). Every
    document is read and checked before anything is written: a mistake in one writes nothing,
    nor does a tool's move to another server unless `accept_origin` (TN378)."""
    from toolnexus_gen.commands import openapi_sync
    from toolnexus_gen.fs import output
    from toolnexus_gen.fs.paths import display_path
    from toolnexus_gen.pipeline.overrides import MANIFEST

    synced = []
    problems: list[Diagnostic] = []
    with os_errors():
        for done, document in enumerate(declared):
            progress("documents", done, len(declared))
            try:
                one = openapi_sync.prepare(document, config, specs_dir)
            except DiagnosticsError as exc:
                problems += exc.diagnostics
                continue
            one.diagnostics += openapi_sync.origin_problems(one, accept_origin or check)
            synced.append(one)
        progress("documents", len(declared), len(declared))
        found = [d for s in synced for d in s.diagnostics]
        if any(d.is_error for d in problems + found):
            raise DiagnosticsError(problems + found)
        for one in synced:
            outcome.diagnostics += one.diagnostics
            result = DocumentResult(
                one.declared.name,
                one.declared.document,
                display_path(one.folder),
                len(one.tools),
                notes=one.notes,
                env=one.env,
            )
            outcome.documents.append(result)
            if check:
                result.drift = _document_drift(one, config.curated)
                continue
            changed = {one.folder / f: one.files[f] for f in (*one.added, *one.changed)}
            gone = [one.folder / f for f in one.removed]
            manifest = one.folder / MANIFEST
            before = manifest.read_text("utf-8") if manifest.is_file() else None
            if before != one.manifest():
                changed[manifest] = one.manifest()
            output.replace_files(changed, gone)
            for path in gone:  # a shared schema folder the document no longer needs
                if path.parent != one.folder and path.parent.is_dir():
                    if not any(path.parent.iterdir()):
                        path.parent.rmdir()
            result.written = [display_path(p) for p in changed if p != manifest]
            result.removed = [display_path(p) for p in gone]
            result.unchanged = len(one.files) - len(result.written)


def _document_drift(one: Any, curated: Any) -> list[Drift]:
    from toolnexus_gen.commands import openapi_sync
    from toolnexus_gen.fs.paths import display_path
    from toolnexus_gen.sources import mcp

    found = []
    for what, files in (("added", one.added), ("removed", one.removed), ("changed", one.changed)):
        for rel in files:
            tool = openapi_sync.tool_of(rel)
            drift = Drift(display_path(one.folder / rel), tool or "", what)
            if tool is None:  # a shared schema: the tools that reach it
                users = openapi_sync.reaching(one, rel)
                drift.details = [f"reached by {', '.join(users) or 'no tool'}"]
            else:
                if what == "changed":
                    try:
                        drift.details = mcp.changes(
                            json.loads(one.existing[rel]), json.loads(one.files[rel])
                        )
                    except (ValueError, RecursionError):
                        drift.details = ["/ changed"]
                drift.findings = openapi_sync.consequences(one, rel)
                if what == "removed" and curated.override(tool) is not None:
                    drift.findings.append(
                        f"warning[TN376] overrides: [tool.toolnexus-gen.overrides.{tool}] will "
                        "no longer apply once synced"
                    )
            found.append(drift)
    return found


def _drift(snap: Any) -> list[Drift]:
    import json

    from toolnexus_gen.fs.paths import display_path
    from toolnexus_gen.sources import mcp

    found = []
    for file in snap.added:
        found.append(Drift(display_path(snap.folder / file), snap.tools[file], "added"))
    for file in snap.removed:
        tool = json.loads(snap.existing[file])["source"]["mcp"]["tool"]
        found.append(Drift(display_path(snap.folder / file), tool, "removed"))
    for file in snap.changed:
        details = mcp.drift(snap, file)
        found.append(Drift(display_path(snap.folder / file), snap.tools[file], "changed", details))
    for drift, file in zip(found, [*snap.added, *snap.removed, *snap.changed], strict=True):
        drift.findings = mcp.consequences(snap, file)
    return found


# -- breaking, changelog: the tool surface at REF against what a build makes now ----------------


@dataclass
class BreakingOutcome:
    against: str  # REF as named, with its commit
    findings: list[Any]  # breaking.rules.Finding, selected, located, sorted
    fail_on: str  # the level the exit code is decided at
    notes: list[str] = field(default_factory=list)  # what could not be checked, and why
    tools: int = 0  # tools now
    version: str | None = None  # the project's version now, when its pyproject.toml says

    @property
    def failed(self) -> bool:
        from toolnexus_gen.breaking.rules import at_or_above

        return at_or_above(self.findings, self.fail_on)


# What a corrupt or hostile package at REF can raise from deep inside the reading and comparing
# (nesting past the interpreter's limits, a literal no build writes, a number past its range):
# one error line and exit 2, never a traceback (nor exit 1, which means "findings").
_UNREADABLE = (RecursionError, MemoryError, ValueError, TypeError, OverflowError)


def _ref_name(against: str) -> str:
    return f"REF {printable(against)!r}"


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, MemoryError):
        return "too large to hold in memory"
    return printable(f"{type(exc).__name__}: {exc}")[:200]


def breaking(
    against: str, fail_on: str | None = None, accepted: Sequence[str] = ()
) -> BreakingOutcome:
    """Every finding of the rules between the package at REF `against` (a git revision or a
    directory) and the one a build would write now (made in memory; nothing is written).
    `accepted`: `--accept TOOL:RULE` entries, beside the configuration's `accept`."""
    from toolnexus_gen.breaking import (
        accept,
        config,
        deprecation,
        locate,
        policy,
        revision,
        rules,
        surface,
    )
    from toolnexus_gen.breaking.pattern import budget as pattern_budget
    from toolnexus_gen.fs.paths import display_path

    entries = []
    for written in accepted:
        entry = accept.parse(written)
        if isinstance(entry, str):
            raise UserError(f"--accept {entry}")
        entries.append(entry)
    chosen = options(None, None, ())
    with os_errors():
        settings = config.load(Path.cwd())
        try:
            ref = revision.read(against, chosen.out, chosen.root)
            old = (
                surface.read_package(ref.files, ref.where)
                if ref.files is not None
                else surface.Surface({}, True)
            )
        except (revision.RevisionError, surface.PackageError) as exc:
            # one line: what REF holds (its settings' `out`, a file's name) may hold a line
            # break, which would forge a line of its own (`::error::` in a CI log)
            raise UserError(printable(str(exc))) from None
        except _UNREADABLE as exc:
            raise UserError(f"{_ref_name(against)}: cannot be read: {_why(exc)}") from None
        files, toolset = _generated(chosen)
        try:
            new = surface.read_package(files, display_path(chosen.out))
            pairs = rules.pairs(old, new, against, settings.token_threshold)
            with pattern_budget():  # hostile patterns, however many, end in bounded time
                found = rules.findings(pairs)
        except surface.PackageError as exc:
            raise UserError(str(exc)) from None
        except _UNREADABLE as exc:
            raise UserError(
                f"cannot compare with {_ref_name(against)}: {_why(exc)} (a package no build "
                "writes: corrupt, or made to be hostile)"
            ) from None
    found = rules.selected(found, settings.use, settings.excepted, settings.ignore)
    found = accept.severities(found, dict(settings.severity))
    found = deprecation.apply(
        found,
        old,
        deprecation.Policy(
            *settings.deprecation,
            ref_version=policy.version_in(ref.pyproject, settings.version),
            version=policy.version_in(settings.text, settings.version),
        ),
    )
    entries = [*settings.accept, *entries]
    version = policy.version_in(settings.text, settings.version)
    # accepted before the version policy reads them: an accepted finding asks for no major bump
    found, _ = accept.apply(found, entries, version)
    outcome = BreakingOutcome(
        ref.label, found, fail_on or settings.fail_on, tools=len(new.tools), version=version
    )
    if settings.version_policy and settings.pyproject is not None:
        try:
            extra, note = policy.check(
                found,
                settings.version,
                ref.pyproject,
                settings.text,
                display_path(settings.pyproject),
                against,
            )
        except policy.PolicyError as exc:
            raise UserError(str(exc)) from None
        except _UNREADABLE as exc:
            raise UserError(
                f"{_ref_name(against)}: its version cannot be read: {_why(exc)}"
            ) from None
        extra = rules.selected(extra, settings.use, settings.excepted, settings.ignore)
        found += accept.severities(extra, dict(settings.severity))
        if note:
            outcome.notes.append(note)
    elif settings.version_policy:
        raise UserError(
            "version_policy is on, but there is no pyproject.toml to read the version from"
        )
    found, notes = accept.apply(found, entries, version)  # TN550 too; the notes of them all
    outcome.notes += notes
    with os_errors():
        infos = {tool.name: tool for tool in toolset.tools}
        outcome.findings = sorted(locate.locate(found, infos), key=rules.order)
    return outcome


def _generated(chosen: BuildOptions) -> tuple[dict[str, str], Any]:
    """The files a build would write now, and its tool set; invalid specs raise (exit 2)."""
    from toolnexus_gen.incremental.plan import plan
    from toolnexus_gen.pipeline.build import generate
    from toolnexus_gen.sources import contribute

    try:
        # Every file is made (no "nothing changed" answer), over what the last build left: the
        # units of the specs unchanged since, and its memo, so nothing is made afresh in vain.
        planned = plan(chosen, contribute=lambda: contribute(chosen), noop=False)
        result = generate(chosen, planned)
    except RecursionError:
        raise UserError(
            "a schema is nested or self-referencing beyond what can be processed"
        ) from None
    if result.files is None or result.toolset is None:
        raise DiagnosticsError([d for d in result.diagnostics if d.is_error])
    return result.files, result.toolset
