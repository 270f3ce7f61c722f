"""Paths as diagnostics show them: relative to the working folder when inside it."""

from __future__ import annotations

from pathlib import Path

SPEC_SUFFIXES = (".json", ".yaml", ".yml")  # what counts as a spec file
CACHE_DIR = ".toolnexus-gen.cache"  # the build cache, inside the output folder
TMP_SUFFIX = ".tnx-tmp"  # a file being written; renamed into place when complete


def display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()
