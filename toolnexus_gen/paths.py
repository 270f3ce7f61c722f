"""Paths as diagnostics show them: relative to the working folder when inside it."""

from __future__ import annotations

from pathlib import Path

SPEC_SUFFIXES = (".json", ".yaml", ".yml")  # what counts as a spec file


def display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()
