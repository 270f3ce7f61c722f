"""Where things are: spec files, the names the build uses in its output folder, and paths as
diagnostics show them (relative to the working folder when inside it). Light on purpose: the
no-op fast path imports it."""

from __future__ import annotations

import os
from pathlib import Path

SPEC_SUFFIXES = (".json", ".yaml", ".yml")  # what counts as a spec file
CACHE_DIR = ".toolnexus-gen.cache"  # the build cache, inside the output folder
TMP_SUFFIX = ".tnx-tmp"  # a file being written; renamed into place when complete


def is_hidden(relative: Path) -> bool:
    return any(part.startswith(("_", ".")) for part in relative.parts)


def discover(specs_dir: Path) -> list[Path]:
    """Spec files under specs_dir, sorted; `_`/`.` files and folders hold shared fragments."""
    found = []
    for path in specs_dir.rglob("*"):
        rel = path.relative_to(specs_dir)
        if path.suffix in SPEC_SUFFIXES and not is_hidden(rel) and path.is_file():
            found.append(path)
    return sorted(found, key=lambda p: p.relative_to(specs_dir).as_posix())


def escaping_links(specs_dir: Path) -> list[Path]:
    """Symbolic links (to files or folders) under specs_dir whose target is outside it: a spec
    folder holds its own files, so these are refused rather than read or silently skipped."""
    root = specs_dir.resolve()
    found = []
    stack = [str(specs_dir)]
    while stack:  # os.walk's, without a stat per entry: the folder listing tells links apart
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                target = Path(entry.path).resolve()
                if target != root and root not in target.parents:
                    found.append(Path(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return sorted(found)


def display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


SKIPPED_FOLDERS = frozenset({".git", "node_modules"})  # never walked into by folder_files


def folder_files(folder: Path) -> dict[str, os.stat_result]:
    """Every file under `folder` (by relative POSIX path, sorted), for sources that read a
    folder (skills): `.git` and `node_modules` skipped, linked folders not followed."""
    found: dict[str, os.stat_result] = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(folder / rel if rel else folder))
        except OSError:
            continue
        for entry in entries:
            name = f"{rel}/{entry.name}" if rel else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED_FOLDERS:
                        stack.append(name)
                elif entry.is_file():
                    found[name] = entry.stat()
            except OSError:
                continue
    return dict(sorted(found.items()))
