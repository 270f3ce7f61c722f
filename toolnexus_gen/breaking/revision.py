"""REF, the earlier tool surface: the generated package checked in at a git revision, or one in a
directory. A revision is read from git's object store (`git ls-tree`, one `git cat-file --batch`),
never by checking anything out: the working tree, the index and HEAD are never touched, and
nothing is written anywhere.

The generated package, not the specs, is what is read at REF: it is what callers, handlers and
models met at that revision, and it reads the same whatever generator version made it (building
REF's specs with today's generator would compare today's output with today's output).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from toolnexus_gen.fs.paths import CACHE_DIR, display_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TOOLS_FILE = "schemas/tools.json"
# What is read of REF is bounded: a file over MAX_FILE bytes, or files over MAX_TOTAL together,
# are refused (sizes are asked first: nothing that large is read). GitHub's 1,223 tools make
# files of at most 11.5 MB (gemini.json; tools.json 10.3 MB, 41 MB in all).
MAX_FILE = 64 * 1024 * 1024
MAX_TOTAL = 256 * 1024 * 1024


class RevisionError(Exception):
    """REF cannot be read: one line saying why."""


@dataclass(frozen=True)
class Revision:
    label: str  # as the user named it, with the commit: "main (1a2b3c4d)"
    where: str  # the package, as errors name it: "main:src/app/tools"
    files: dict[str, str] | None  # the package's files that matter (None: no package, no tool)
    pyproject: str | None = None  # the project's pyproject.toml at REF, when there is one


def read(against: str, out: Path, root: Path) -> Revision:
    """The package at REF `against`: a directory (the package, or a folder holding it where the
    project holds `out`), else a git revision of the repository around `root` (the project's
    folder), whose package is where `[tool.toolnexus-gen] out` said at that revision."""
    if not against.strip():
        raise RevisionError("--against needs a git revision or a directory")
    folder = Path(against)
    if folder.is_dir():
        # A folder in the working tree must not stand in for a revision of the same name (a
        # change adding `origin/main/tools/` would be compared with itself): a name that is
        # both is refused unless written as a path (./main, /abs/main).
        as_path = against.startswith(("./", "../", "/")) or against in (".", "..")
        if not as_path and _commit(against, root):
            raise RevisionError(
                f"{against!r} names both a directory and a git revision: write ./{against} for "
                "the directory, or the commit (or refs/heads/..., refs/tags/...) for the revision"
            )
        return _directory(folder, out, root)
    return _revision(against, out, root)


def _wanted(rel: str) -> bool:
    """The files of a package the surface is read from: the tool list, the aliases, each
    provider file, the dispatch table, the handler interface and the argument models."""
    path = PurePosixPath(rel)
    if CACHE_DIR in path.parts or "__pycache__" in path.parts:
        return False
    from toolnexus_gen.breaking import surface

    if rel in surface.read_files():
        return True
    return path.parts[0] == "models" and path.suffix == ".py"


def _too_large(where: str, size: int, total: int) -> None:
    """Refuse a file of `size` bytes, read after `total` bytes of others (one line why)."""
    if size > MAX_FILE:
        raise RevisionError(
            f"{where}: {size:,} bytes, over the {_amount(MAX_FILE)} a generated file is read "
            "up to (not a package a build made?)"
        )
    if total + size > MAX_TOTAL:
        raise RevisionError(
            f"{where}: the package's files are over {_amount(MAX_TOTAL)} together, more than "
            "is read of a generated package (not a package a build made?)"
        )


def _amount(size: int) -> str:
    return f"{size / 2**20:g} MiB" if size >= 2**20 else f"{size:,} bytes"


def _decode(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RevisionError(f"{where}: not UTF-8 text (a corrupt generated package)") from None


# -- a directory -------------------------------------------------------------------------------


def _directory(folder: Path, out: Path, root: Path) -> Revision:
    """The package in a directory: its regular files only, never a link (a link could lead the
    reading anywhere: another package, /proc, a FIFO that never answers)."""
    candidates = [folder]
    try:
        candidates.append(folder / out.resolve().relative_to(root.resolve()))
    except ValueError:
        pass
    package = next(
        (c for c in candidates if not _linked(c, folder) and _regular(c / TOOLS_FILE)), None
    )
    shown = display_path(folder)
    if package is None:
        looked = " or ".join(f"{display_path(c)}/{TOOLS_FILE}" for c in candidates)
        raise RevisionError(f"directory {shown} holds no generated package (no {looked})")
    files = {}
    shown_package = display_path(package)
    total = 0
    for top, dirs, names in os.walk(package):  # never into a linked folder
        dirs.sort()
        for name in sorted(names):
            path = Path(top, name)
            rel = path.relative_to(package).as_posix()
            if _wanted(rel) and _regular(path):
                size = path.stat().st_size
                _too_large(f"{shown_package}/{rel}", size, total)
                total += size
                files[rel] = _read(path, f"{shown_package}/{rel}")
    pyproject = folder / "pyproject.toml"
    return Revision(
        f"directory {shown}",
        shown_package,
        files,
        _read(pyproject, display_path(pyproject)) if _regular(pyproject) else None,
    )


def _linked(path: Path, below: Path) -> bool:
    """Whether reaching `path` from `below` goes through a link."""
    parts = path.relative_to(below).parts
    return any((below.joinpath(*parts[: i + 1])).is_symlink() for i in range(len(parts)))


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _read(path: Path, where: str) -> str:
    with path.open("rb") as file:
        raw = file.read(MAX_FILE + 1)
    if len(raw) > MAX_FILE:
        raise RevisionError(f"{where}: over {MAX_FILE >> 20} MiB, not a generated file")
    return _decode(raw, where)


# -- a git revision ------------------------------------------------------------------------------


def _git(
    args: list[str], cwd: Path, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # reading never takes the index lock (a commit may hold it)
    env["GIT_LITERAL_PATHSPECS"] = "1"  # a path from REF's settings is a path, never `:/` magic
    return subprocess.run(
        ["git", *args], cwd=cwd, input=stdin, capture_output=True, env=env, check=False
    )


def workspace_prefix(cwd: Path) -> str:
    """Where `cwd` is inside its git repository ("" at its top or outside one): GitHub places
    an annotation by a path from the repository's top, ours are from the current folder."""
    if shutil.which("git") is None:
        return ""
    done = _git(["rev-parse", "--show-prefix"], cwd)
    return done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else ""


def _revision(against: str, out: Path, root: Path) -> Revision:
    if shutil.which("git") is None:
        raise RevisionError(
            f"{against!r} is not a directory, and git is not installed to read it as a revision"
        )
    top = _git(["rev-parse", "--show-toplevel"], root)
    if top.returncode != 0:
        raise RevisionError(
            f"{against!r} is not a directory, and {display_path(root)} is not in a git repository"
        )
    toplevel = Path(top.stdout.decode("utf-8", "replace").strip())
    commit = _commit(against, root)
    if not commit and against == "HEAD" and not _git(["rev-list", "-n", "1", "--all"], root).stdout:
        # a repository without a commit yet (a pre-commit hook's first commit): nothing was
        # there before, so every tool is new
        return Revision("HEAD (no commit yet)", "HEAD", None)
    if not commit:
        raise RevisionError(
            f"unknown revision {against!r}: no commit of this repository has that name (and "
            "no directory either)"
        )
    label = f"{against} ({commit[:8]})"
    try:
        project = root.resolve().relative_to(toplevel.resolve())
        package = out.resolve().relative_to(toplevel.resolve())
    except ValueError:
        raise RevisionError(
            f"the output package {display_path(out)} is outside the git repository "
            f"{display_path(toplevel)}"
        ) from None
    pyproject_path = (project / "pyproject.toml").as_posix()
    pyproject = _blobs(toplevel, commit, {pyproject_path: f"{commit}:{pyproject_path}"}).get(
        pyproject_path
    )
    if pyproject is not None:
        package = _out_at(pyproject, project) or package
    where = f"{against}:{package.as_posix()}"
    listed = _git(
        ["ls-tree", "-r", "-z", "--full-tree", commit, "--", f"{package.as_posix()}/"], toplevel
    )
    if listed.returncode != 0:
        raise RevisionError(
            f"{label}: git ls-tree failed: {listed.stderr.decode(errors='replace').strip()}"
        )
    wanted: dict[str, str] = {}
    for record in listed.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, oid = meta.decode().split()
        rel = (
            PurePosixPath(name.decode("utf-8", "replace"))
            .relative_to(package.as_posix())
            .as_posix()
        )
        if kind == "blob" and mode != "120000" and _wanted(rel):
            wanted[rel] = oid
    if not wanted:
        raise RevisionError(
            f"{label} holds no generated package at {package.as_posix()}/ (nothing there at that "
            "revision): compare against a revision whose generated package is committed, or a "
            "directory that holds one"
        )
    if TOOLS_FILE not in wanted:
        raise RevisionError(
            f"{label} holds no generated package at {package.as_posix()}/ ({TOOLS_FILE} is "
            "missing at that revision)"
        )
    files = _blobs(toplevel, commit, wanted)
    return Revision(label, where, files, pyproject)


def _commit(against: str, root: Path) -> str | None:
    """The commit a name means in the repository around `root`, if any."""
    if against.startswith("-") or shutil.which("git") is None:  # never an option of git's
        return None
    found = _git(["rev-parse", "--verify", "--quiet", f"{against}^{{commit}}"], root)
    return found.stdout.decode().strip() or None if found.returncode == 0 else None


def _blobs(toplevel: Path, commit: str, wanted: dict[str, str]) -> dict[str, str]:
    """The text of each object named (relative path -> object name or rev:path); missing
    objects are left out."""
    names = list(wanted.items())
    request = "".join(f"{oid}\n" for _, oid in names).encode()
    sized = _git(["cat-file", "--batch-check"], toplevel, request)
    if sized.returncode != 0:
        raise RevisionError(f"git cat-file failed: {sized.stderr.decode(errors='replace').strip()}")
    total, present = 0, []
    for (rel, oid), line in zip(
        names, sized.stdout.decode(errors="replace").splitlines(), strict=False
    ):
        fields = line.split()
        if len(fields) < 3 or fields[1] != "blob":
            continue  # "<name> missing"
        _too_large(f"{commit[:8]}:{rel}", int(fields[2]), total)
        total += int(fields[2])
        present.append((rel, oid))
    names = present
    request = "".join(f"{oid}\n" for _, oid in names).encode()
    done = _git(["cat-file", "--batch"], toplevel, request)
    if done.returncode != 0:
        raise RevisionError(f"git cat-file failed: {done.stderr.decode(errors='replace').strip()}")
    data, at, found = done.stdout, 0, {}
    for rel, _ in names:
        end = data.index(b"\n", at)
        header = data[at:end].split()
        at = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue  # "<name> missing"
        size = int(header[2])
        found[rel] = _decode(data[at : at + size], f"{commit[:8]}:{rel}")
        at += size + 1
    return found


def _out_at(pyproject: str, project: Path) -> Path | None:
    """The package folder `[tool.toolnexus-gen] out` names in a pyproject.toml's text."""
    try:
        section = tomllib.loads(pyproject).get("tool", {}).get("toolnexus-gen", {})
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    out = section.get("out") if isinstance(section, dict) else None
    if not isinstance(out, str) or not out:
        return None
    package = Path(os.path.normpath(project / out))
    if os.path.isabs(out) or package.parts[:1] == ("..",) or "\0" in out:
        raise RevisionError(
            f"pyproject.toml at that revision sets out = {out!r}: not a folder inside the "
            "repository"
        )
    return package
