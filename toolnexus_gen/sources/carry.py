"""What a source writes builds: the mechanism every source that writes specs shares (`sync`,
`import openapi`).

A source keeps each tool's schemas exactly as it got them (a snapshot is compared with its
server, an import with its document), and says how they are to reach the providers with one
explicit setting per spec, `profile: reach` (`carried()`): that spec is built as under the
project's `profile = "reach"` (name aliases, describe, strictify, Gemini's parametersJsonSchema
where `parameters` cannot carry it), whatever the project's own settings.

Before it writes, the source asks `settle()` what a build with the project's targets and target
options would make of its specs: the specs are built (offline, in a scratch folder) and every
error is collected, of every spec at once. The argument models are not made: the build makes
them (on its workers, while it checks the specs), and a schema that passes the checks before
them is not known to make datamodel-code-generator fail (TN119), so making each model here
too would double the cost of an import, for nothing it finds. A spec whose errors all
belong to some of the targets is kept for the others (`targets: {exclude: [...]}` written into
it); a spec that no target can take is left out. Each is a `Refusal` naming the targets and the
build's own messages, for the source to report in one round, tool by tool. So what a source
writes builds with default settings, and the user learns everything that stood in the way from
one run, not one error class per build.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolnexus_gen.config.many import Many
from toolnexus_gen.config.options import BuildOptions, Header
from toolnexus_gen.config.pyproject import Config
from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.fs.paths import display_path
from toolnexus_gen.ir import Unit
from toolnexus_gen.memo import Memo

try:
    import fcntl
except ImportError:  # pragma: no cover (not POSIX)
    fcntl = None  # type: ignore[assignment]

PROFILE = "reach"
BINDING_KEYS = ("source", "http")  # the profile is written before them, after the schemas
MAX_ROUNDS = 4  # a round can only leave tools out or narrow their targets, so few are needed


def options_for(config: Config, specs: Path) -> BuildOptions:
    """The options a build of the project would use (the spec folder may not exist yet)."""
    from toolnexus_gen.targets.registry import NAMES

    chosen = config.targets or NAMES
    return BuildOptions(
        specs=specs,
        out=config.out or specs.parent / "tools",
        root=config.root,
        targets=tuple(t for t in NAMES if t in chosen),
        target_options=config.target_options,
        ignore=config.ignore,
        name_aliases=config.name_aliases,
        profile=config.profile,
        base_url=config.base_url,
    )


def carried(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with `profile: reach`, placed before its binding (`source`, `http`) so the
    schemas read first; the schemas themselves are not touched."""
    out: dict[str, Any] = {}
    for key, value in spec.items():
        if key in BINDING_KEYS and "profile" not in out:
            out["profile"] = PROFILE
        if key != "profile":
            out[key] = value
    out.setdefault("profile", PROFILE)
    return out


@dataclass(frozen=True)
class Refusal:
    """A spec a build would refuse for some targets (kept for the others) or all (left out)."""

    spec: str  # relative to the spec folder, as given to settle()
    targets: tuple[str, ...]  # the configured targets it does not reach
    reasons: tuple[str, ...]  # the build's errors, as it prints them (paths: the real ones)
    left_out: bool  # no configured target takes it: not written

    @property
    def reason(self) -> str:
        """The first error, then how many more."""
        more = len(self.reasons) - 1
        return self.reasons[0] + (f" (and {more} more)" if more > 0 else "")


@dataclass
class Settled:
    specs: dict[str, dict[str, Any]]  # what to write: the specs kept, targets narrowed
    refused: list[Refusal] = field(default_factory=list)  # in spec order
    # each spec kept, as the check wrote and built it (`render`'s text): what the source writes
    texts: dict[str, str] = field(default_factory=dict)
    # errors of the whole set that no spec can answer for (a limit over every tool), as printed
    unplaced: list[str] = field(default_factory=list)


SCRATCH_PREFIX = "toolnexus-settle-"  # then the pid of the process whose scratch folder it is
_SCRATCH = re.compile(re.escape(SCRATCH_PREFIX) + r"(\d{1,10})-")
SCRATCH_LOCK = ".lock"  # held (flock) by the process using the folder, for as long as it does
_SCRATCH_SETTLED = 60.0  # seconds: a younger folder may be one whose owner is taking its lock


@contextmanager
def _scratch_folder() -> Iterator[Path]:
    """A private temporary folder for one settle, removed after; its lock file is held the
    whole time, so that _sweep_scratch can tell it from the folder of a killed process."""
    _sweep_scratch()
    with tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-") as scratch:
        with open(os.path.join(scratch, SCRATCH_LOCK), "wb") as lock:
            if fcntl is not None:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            yield Path(scratch)


def _sweep_scratch() -> None:
    """Remove the scratch folders that processes killed outright (SIGKILL, a power cut) left in
    the temporary folder: this user's own folders only, named for a process that does not run
    here and whose lock no process holds (a process of another PID namespace sharing the
    folder holds its lock), and over a minute old; never through a symbolic link."""
    if fcntl is None:  # not POSIX: no lock, no owner to tell by
        return
    root = tempfile.gettempdir()
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        found = _SCRATCH.match(entry.name)
        if found is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        if time.time() - info.st_mtime < _SCRATCH_SETTLED or _running(int(found[1])):
            continue
        if _unlocked(os.path.join(entry.path, SCRATCH_LOCK)):
            shutil.rmtree(entry.path, ignore_errors=True)


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError):  # someone else's process, or no pid at all
        return True
    return True


def _unlocked(path: str) -> bool:
    """Whether the lock file at path exists and no process holds its lock (taking it shows)."""
    assert fcntl is not None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def settle(
    specs: Mapping[str, dict[str, Any]],
    options: BuildOptions,
    render: Callable[[dict[str, Any], str], str],
    shared: Mapping[str, str] | None = None,
    memo: Memo | None = None,
) -> Settled:
    """Build `specs` ({path relative to the spec folder: spec data}, with the `shared` fragment
    files they refer to, {path: text}) as `options` would, and keep what builds (see the module's
    text). `render(spec, suffix)` is how the source writes a spec file. The schemas found valid
    go into `memo` (keyed as the project's build keys them, so a build given that memo need not
    check them again).

    A round after the first checks again only the specs it changed: a spec's unit depends on its
    file, the files it reaches and the options alone (pipeline/units.py), so the others' units
    stand; the whole set is analysed again each round."""
    kept = {rel: dict(spec) for rel, spec in specs.items()}
    refused: dict[str, Refusal] = {}
    unplaced: list[str] = []
    if not kept:  # nothing to build: the pipeline is not even imported
        return Settled(kept)
    memo = memo if memo is not None else Memo()
    units: dict[str, Unit] = {}  # each spec's unit, as its last round made it
    written: dict[str, str] = {}  # each spec's text, as its last round wrote it
    with _scratch_folder() as scratch:
        folder = scratch / "specs"
        for rel, text in (shared or {}).items():
            _write(folder / rel, text)
        changed = set(kept)
        for round_ in range(MAX_ROUNDS):
            for rel, spec in kept.items():
                if rel in changed:
                    written[rel] = render(spec, Path(rel).suffix)
                    _write(folder / rel, written[rel])
                    units.pop(rel, None)
            errors, unplaced = _errors(folder, options, memo, units)
            if not errors:
                break
            changed = set(errors)
            last = round_ == MAX_ROUNDS - 1  # what still fails then is left out
            for rel, found in errors.items():
                spec = kept[rel]
                wrong = sorted({d.target for d in found if d.target is not None})
                reachable = [t for t in _targets_of(spec, options) if t not in wrong]
                structural = any(d.target is None for d in found)
                texts = [_shown(d, folder, options.specs) for d in sorted(found)]
                before = refused.get(rel)
                if structural or not reachable or last:
                    del kept[rel], written[rel]
                    units.pop(rel, None)
                    (folder / rel).unlink()
                    gone = tuple(_targets_of(spec, options))
                    refused[rel] = Refusal(rel, gone, _joined(before, texts), True)
                else:
                    excluded = sorted({*(before.targets if before else ()), *wrong})
                    selection = spec.get("targets")
                    selection = selection if isinstance(selection, dict) else {}
                    kept[rel] = {**spec, "targets": {**selection, "exclude": excluded}}
                    refused[rel] = Refusal(rel, tuple(excluded), _joined(before, texts), False)
    return Settled(kept, [refused[rel] for rel in sorted(refused)], written, unplaced)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def _joined(before: Refusal | None, texts: list[str]) -> tuple[str, ...]:
    return (*(before.reasons if before else ()), *texts)


def _targets_of(spec: dict[str, Any], options: BuildOptions) -> list[str]:
    """The configured targets the spec goes to (its own `targets` selection applied)."""
    chosen = spec.get("targets")
    chosen = chosen if isinstance(chosen, dict) else {}
    only, exclude = chosen.get("only"), chosen.get("exclude") or ()
    return [t for t in options.targets if (only is None or t in only) and t not in exclude]


def _errors(
    folder: Path, options: BuildOptions, memo: Memo, made: dict[str, Unit]
) -> tuple[dict[str, list[Diagnostic]], list[str]]:
    """Every error a build of `folder` finds, by spec (relative path); and the whole set's
    errors no spec answers for. `made`: the units of specs unchanged since they were made
    (completed here)."""
    from toolnexus_gen.config.options import header_for
    from toolnexus_gen.fs.paths import discover
    from toolnexus_gen.pipeline.build import analyse

    scratch = replace(
        options, specs=folder, out=folder.parent / "out", many=Many(), builtins=None, skills=None
    )
    header = header_for(options)  # the memo's keys: the project's build's
    paths = discover(folder)
    rels = [path.relative_to(folder).as_posix() for path in paths]
    fresh = [path for path, rel in zip(paths, rels, strict=True) if rel not in made]
    # each spec's errors, wherever they point (nothing is rendered: no entries kept)
    made.update((unit.rel, unit) for unit in _units(fresh, scratch, header, memo))
    units = [made[rel] for rel in rels]
    analysis = analyse(scratch, memo, paths, units)  # and the whole set's
    by_spec: dict[str, list[Diagnostic]] = {}
    placed: set[Diagnostic] = set()
    for unit in units:
        errors = [d for d in unit.diagnostics if d.is_error]
        if errors:
            by_spec.setdefault(unit.rel, []).extend(errors)
            placed.update(errors)
    unplaced = []
    for diagnostic in analysis.diagnostics:
        if not diagnostic.is_error or diagnostic in placed:
            continue
        rel = _rel(diagnostic.path, folder)
        # a whole set over a provider's tool count names one tool, but is no tool's fault:
        # leaving that one out would only move the error to the next (one build per tool)
        if rel is not None and diagnostic.code not in whole_set_limits():
            by_spec.setdefault(rel, []).append(diagnostic)
        else:
            unplaced.append(_shown(diagnostic, folder, options.specs))
    return by_spec, unplaced


# what the workers _units() forks check the specs with: (options, header, memo), inherited
_job: tuple[BuildOptions, Header, Memo] | None = None


def _units(paths: list[Path], scratch: BuildOptions, header: Header, memo: Memo) -> list[Unit]:
    """The units of these scratch specs (their entries let go: nothing is rendered). Many are
    made on every core, each worker a share of the specs (every n-th, so each share costs about
    the same), forked once the specs are written; a unit comes back without its model's job
    (no model is made here), and the checks it passed are marked in `memo`."""
    global _job
    from toolnexus_gen.parallel import PARALLEL_MIN, parallel_map, pool_for, workers
    from toolnexus_gen.pipeline.units import make_units

    count = workers()
    if len(paths) < PARALLEL_MIN or count < 2:
        return make_units(paths, scratch, header, memo, entries=False)
    _job = (scratch, header, memo)
    try:
        with pool_for(len(paths), warm_few=False):
            shares = parallel_map(_share, [paths[i::count] for i in range(count)])
    finally:
        _job = None
    units = [unit for share in shares for unit in share]
    for unit in units:
        for key in unit.passed:
            memo.mark_valid(key)
    return units


def _share(paths: list[Path]) -> list[Unit]:
    """One worker's share of _units()."""
    from toolnexus_gen.pipeline.units import make_units

    assert _job is not None
    scratch, header, memo = _job
    units = make_units(paths, scratch, header, memo, entries=False)
    return [replace(unit, model_job=None) for unit in units]


def whole_set_limits() -> frozenset[str]:
    """The codes of the targets' limits on the number of tools in one request (TN318, TN330):
    toolsets answer them, never a spec of its own."""
    from toolnexus_gen.targets import TARGETS

    return frozenset(t.max_tools[1] for t in TARGETS.values() if t.max_tools is not None)


def _rel(path: str, folder: Path) -> str | None:
    """A diagnostic's spec file, relative to the scratch spec folder (None: not a spec there)."""
    try:
        rel = Path(path).resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return None
    return None if rel.startswith(("_", ".")) or "/_" in rel or "/." in rel else rel


def _shown(diagnostic: Diagnostic, folder: Path, specs: Path) -> str:
    """A diagnostic as the build would print it in the real spec folder."""
    real = display_path(specs)
    text = diagnostic.format()
    for shown in {display_path(folder), str(folder.resolve()), str(folder)}:
        text = text.replace(shown, real)
    return text
