"""Where a build reads and writes, from pyproject.toml and the flags. Light on purpose: the
no-op fast path and every command start here before anything heavy is imported."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolnexus_gen.config.curated import Curated
from toolnexus_gen.config.many import Many
from toolnexus_gen.config.pyproject import Config, Setting, find_pyproject
from toolnexus_gen.fs.paths import is_hidden, shell_word
from toolnexus_gen.targets.registry import NAMES


@dataclass(frozen=True)
class Header:
    specs_rel: str  # the spec folder, relative to the output package
    command: str  # the command that regenerates the package


DEFAULT_SPECS = "specs"
DEFAULT_OUT = "tools"  # beside the spec folder


class UsageError(Exception):
    """Bad paths or options: exit code 2, no traceback."""


@dataclass(frozen=True)
class BuildOptions:
    specs: Path
    out: Path
    root: Path  # paths in generated headers are relative to this folder
    targets: tuple[str, ...] = NAMES
    target_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    ignore: frozenset[str] = frozenset()
    name_aliases: bool = False  # names a target rejects get aliases it accepts
    codegen_keywords: bool = False  # the project's own specs may name Python code for models
    profile: str | None = None  # a named set of settings ("reach")
    builtins: Setting | None = None  # which built-in tools join the build (sources/builtins.py)
    skills: Setting | None = None  # the folder of SKILL.md files (sources/skills.py)
    base_url: str | None = None  # relative `http` URLs in specs are appended to it
    many: Many = field(default_factory=Many)  # toolsets, budgets, tool search, hosted tools
    curated: Curated = field(default_factory=Curated)  # overrides over the sources' tools

    @property
    def source_folders(self) -> tuple[Path, ...]:
        """Folders outside the spec folder whose files are inputs of the build (the skills
        folder): the build cache watches them as it watches the spec folder."""
        return (self.skills.value,) if self.skills is not None else ()


def resolve_options(
    config: Config, specs: Path | None, out: Path | None, targets: tuple[str, ...] | None
) -> BuildOptions:
    specs = specs or config.specs or Path(DEFAULT_SPECS)
    out = out or config.out or specs.parent / DEFAULT_OUT
    chosen = targets or config.targets or NAMES
    unknown = [t for t in chosen if t not in NAMES]
    if unknown:
        raise UsageError(f"unknown target(s) {', '.join(unknown)} (known: {', '.join(NAMES)})")
    if not specs.is_dir():
        raise UsageError(
            f"spec folder {specs.as_posix()!r} does not exist (pass SPECS_DIR or set specs in "
            "[tool.toolnexus-gen])"
        )
    if out.resolve() == specs.resolve() or specs.resolve().is_relative_to(out.resolve()):
        raise UsageError(f"--out {out.as_posix()!r} must not contain the spec folder")
    inside = out.resolve().is_relative_to(specs.resolve())
    if inside and not is_hidden(out.resolve().relative_to(specs.resolve())):
        raise UsageError(
            f"--out {out.as_posix()!r} is inside the spec folder {specs.as_posix()!r}: the next "
            "build would read the files it generates as specs; put it beside the spec folder "
            "(or in a folder whose name starts with _ or .)"
        )
    ordered = tuple(t for t in NAMES if t in chosen)
    # Header paths are relative to the project that holds the output, whatever the working folder.
    project = find_pyproject(out.resolve().parent)
    root = project.parent if project is not None else out.resolve().parent
    for what, path in (
        ("the working folder", Path.cwd()),
        ("spec folder", specs.resolve()),
        ("--out", out.resolve()),
        ("skills folder", config.skills.value.resolve() if config.skills else None),
    ):
        _check_utf8(what, path)
    return BuildOptions(
        specs=specs,
        out=out,
        root=root,
        targets=ordered,
        target_options=config.target_options,
        ignore=config.ignore,
        name_aliases=config.name_aliases,
        codegen_keywords=config.codegen_keywords,
        profile=config.profile,
        builtins=config.builtins,
        skills=config.skills,
        base_url=config.base_url,
        many=config.many,
        curated=config.curated,
    )


def _check_utf8(what: str, path: Path | None) -> None:
    """A UsageError when `path` is not UTF-8: generated files, diagnostics and the build cache
    hold paths as text."""
    if path is None:
        return
    raw = os.fsencode(path)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        shown = raw.decode("utf-8", "backslashreplace")
        raise UsageError(
            f"{what} '{shown}' is not a UTF-8 path (byte 0x{raw[exc.start]:02x}): a build writes "
            "paths into its files as UTF-8 text; rename the folder"
        ) from None


def _rel(path: Path, start: Path) -> str:
    rel = Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()
    return f"./{rel}" if rel.startswith("-") else rel  # never read as an option


def header_for(options: BuildOptions) -> Header:
    """What generated files say they come from, and the command that regenerates them (paths
    quoted as a shell word each: one printable line whatever the folder names hold)."""
    specs = shell_word(_rel(options.specs, options.root))
    command = f"toolnexus-gen build {specs} --out {shell_word(_rel(options.out, options.root))}"
    if options.targets != NAMES:
        command += "".join(f" --target {t}" for t in options.targets)
    return Header(specs_rel=shell_word(_rel(options.specs, options.out)), command=command)
