"""Where things are: spec files, the names the build uses in its output folder, and paths as
diagnostics show them (relative to the working folder when inside it). Light on purpose: the
no-op fast path imports it."""

from __future__ import annotations

import os
import re
import shlex
import stat
from functools import lru_cache
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


_PLAIN = re.compile(r"[\w@%+=:,./-]+", re.ASCII)  # needs no quoting in a POSIX shell


def shell_word(text: str) -> str:
    """`text` as one POSIX shell word, on one line of printable characters (for the command a
    generated file says regenerates it): as it is when that is safe, else single-quoted, else
    in bash's $'...' form, with control characters, bidi overrides and bytes that are not UTF-8
    (a path's surrogate escapes) written as escapes, so a path can neither end a comment line
    nor reorder what a reader sees."""
    if _PLAIN.fullmatch(text):
        return text
    if text.isprintable():
        return shlex.quote(text)
    out = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as os.fsdecode keeps it
            out.append(f"\\x{code - 0xDC00:02x}")
        elif char in "\\'":
            out.append("\\" + char)
        elif char.isprintable():
            out.append(char)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return "$'" + "".join(out) + "'"


def display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(_resolved_cwd(os.getcwd())).as_posix()
    except ValueError:
        return path.as_posix()


@lru_cache(maxsize=8)
def _resolved_cwd(cwd: str) -> Path:
    """The working folder, its links resolved: once per folder, not once per file shown."""
    return Path(cwd).resolve()


SKIPPED_FOLDERS = frozenset({".git", "node_modules"})  # never walked into by folder_files


def folder_files(
    folder: Path, left_out: list[tuple[str, str]] | None = None
) -> dict[str, os.stat_result]:
    """Every file under `folder` (by relative POSIX path, sorted), for sources that read a
    folder (skills): `.git` and `node_modules` skipped. A symbolic link counts only when its
    real target is a regular file inside `folder`; a linked folder is not followed, and a link
    that leads out of `folder` (or to nothing) is left out, so nothing outside the folder is
    ever read through it. With `left_out`, each link left out is added as (path, why)."""
    found: dict[str, os.stat_result] = {}
    inside = os.path.realpath(folder)
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
                if entry.is_symlink():
                    why, target = _link(entry.path, inside)
                    if target is not None:
                        found[name] = target
                    elif left_out is not None and why:
                        left_out.append((name, why))
                elif entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED_FOLDERS:
                        stack.append(name)
                elif entry.is_file(follow_symlinks=False):
                    found[name] = entry.stat(follow_symlinks=False)
            except OSError:
                continue
    return dict(sorted(found.items()))


def _link(path: str, inside: str) -> tuple[str, os.stat_result | None]:
    """(why a link is left out, or "" to leave it out silently; the stat of its target when it
    is kept instead)."""
    real = os.path.realpath(path)
    if os.path.commonpath([real, inside]) != inside:
        return f"it is a symbolic link to {real}, outside the skills folder", None
    try:
        target = os.stat(real)
    except OSError:
        return "it is a symbolic link to nothing (its target does not exist)", None
    if stat.S_ISDIR(target.st_mode):
        return "it is a symbolic link to a folder (linked folders are not followed)", None
    return ("", target) if stat.S_ISREG(target.st_mode) else ("", None)


def read_inside(folder: Path, rel: str, limit: int) -> bytes:
    """The bytes of the regular file `rel` under `folder` (a link resolved, its target inside
    `folder`), at most `limit` + 1 of them; OSError when it is not such a file (a link swapped
    in since the folder was listed is not followed out of it)."""
    inside = os.path.realpath(folder)
    real = os.path.realpath(folder / rel)
    if os.path.commonpath([real, inside]) != inside:
        raise OSError(f"{rel} leads outside {folder}")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(real, flags)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{rel} is not a regular file")
        return handle.read(limit + 1)
