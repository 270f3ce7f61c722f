"""Stage 4, the only module that touches the output folder: write a FileMap, or diff against it.

Every file is replaced atomically (temporary file + rename), unchanged files are left alone,
and a manifest records what toolnexus-gen owns, so stale files can be removed and files it did
not generate are never overwritten or deleted.
"""

from __future__ import annotations

import difflib
import json
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path
from typing import Any

from toolnexus_gen.fs.paths import CACHE_DIR, TMP_SUFFIX

MANIFEST = ".toolnexus-gen.json"
LOCK = ".toolnexus-gen.lock"  # held while a build writes, so two builds never interleave
_IGNORED_DIRS = {"__pycache__", CACHE_DIR}  # Python's, and the build cache


class OwnershipError(Exception):
    """The output folder holds files toolnexus-gen did not generate."""


@dataclass
class Report:
    written: list[str] = field(default_factory=list)  # created or changed
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # stale generated files
    missing: list[str] = field(default_factory=list)  # --check: would be created
    changed: list[str] = field(default_factory=list)  # --check: would change
    stale: list[str] = field(default_factory=list)  # --check: would be removed
    diff: str = ""
    # write: [size, mtime_ns, SHA-256] of each file as left on disk, the manifest included
    recorded: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def up_to_date(self) -> bool:
        return not (self.missing or self.changed or self.stale)


def read_manifest(out_dir: Path) -> list[str] | None:
    try:
        data = json.loads((out_dir / MANIFEST).read_text("utf-8"))
        files = data["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return [f for f in files if _safe_relative(f)]


def _safe_relative(name: str) -> bool:
    return not name.startswith("/") and ".." not in name.split("/")


def _manifest_text(files: list[str]) -> str:
    """json.dumps({"generator": "toolnexus-gen", "files": sorted(files)}, indent=2), each name
    encoded by json's C encoder (indent makes json.dumps encode it all in Python)."""
    if not files:
        return '{\n  "generator": "toolnexus-gen",\n  "files": []\n}\n'
    names = ",\n    ".join(map(json.dumps, sorted(files)))
    return f'{{\n  "generator": "toolnexus-gen",\n  "files": [\n    {names}\n  ]\n}}\n'


def _existing_files(out_dir: Path, leftovers: list[str] | None = None) -> list[str]:
    """Every file in out_dir but the manifest, the lock, Python's and the cache's folders and
    temporary files (those go in `leftovers`, when given)."""
    found = []
    stack = [""]
    while stack:
        rel = stack.pop()
        with os.scandir(out_dir / rel if rel else out_dir) as entries:
            for entry in entries:  # the entry's type comes from the directory: no stat per file
                name = f"{rel}/{entry.name}" if rel else entry.name
                if entry.is_symlink():
                    raise OwnershipError(
                        f"refusing to write to {out_dir.as_posix()}: {name} is a symbolic link, "
                        "and writing through it could reach outside the output folder; remove it"
                    )
                if entry.is_dir():
                    if entry.name not in _IGNORED_DIRS:
                        stack.append(name)
                elif entry.name.endswith(TMP_SUFFIX):
                    if leftovers is not None:
                        leftovers.append(name)
                elif name not in (MANIFEST, LOCK):
                    found.append(name)
    return sorted(found)


@contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    """Hold the output folder's lock (POSIX advisory lock; a no-op where fcntl is missing).

    The lock is held on the lock file that is in the folder once it is taken: a build that made
    the folder and wrote nothing removes it again, lock file included (Staging.close), and a
    build that was waiting on that file then takes the lock again on the file now there."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover (Windows)
        out_dir.mkdir(parents=True, exist_ok=True)
        yield
        return
    while True:
        out_dir.mkdir(parents=True, exist_ok=True)
        handle = open(out_dir / LOCK, "a+b")  # noqa: SIM115 (held across the yield below)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                now = os.stat(out_dir / LOCK)
            except FileNotFoundError:
                now = None
            held = os.fstat(handle.fileno())
            if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                break
        except BaseException:
            handle.close()
            raise
        handle.close()  # the file was removed while this build waited: lock the new one
    try:
        yield
    finally:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        finally:
            handle.close()


class _Spilled(str):
    """What stands for the text of a file Staging.spill staged (see there)."""

    __slots__ = ()


class Staging:
    """Files written ahead of `write`, while the build still makes the others (a cold build's
    model modules, as the workers finish them; the other files that changed, while the workers
    make a rebuild's models): each into the temporary file `atomic_write`
    would use, which `write` renames into place with the rest once every file is made. Creating
    a file is the costly part of writing one, and here it is done while this process would
    otherwise wait for the workers.

    Nothing is written before the folder passes `write`'s checks (no file toolnexus-gen did not
    generate, no symbolic link), and from then on the folder's lock is held until `close`, so
    `_remove_leftovers` never meets a staged file of a build still running. A temporary file is
    created anew, never opened through a link or over a file already there (that file is then
    not staged). A folder that fails the checks is left alone: `write` says why, as it would
    have. `close` removes what was staged and not used, and, when the build wrote nothing, the
    folders the staging made and the lock file it added, unless another build's package is
    there by then."""

    def __init__(self, out_dir: Path, recorded: dict[str, list[Any]] | None = None) -> None:
        self.out_dir = out_dir
        self.recorded = recorded or {}  # what the last build wrote: [size, mtime_ns, SHA-256]
        self.staged: dict[str, tuple[str, Path]] = {}  # name -> (text, temporary file)
        self.digests: dict[str, tuple[str, str]] = {}  # name -> (text, its SHA-256), as added
        self._held: ExitStack | None = None
        self._refused = False
        self._made: list[Path] = []  # folders that were not there, outermost first
        self._lock_added = False  # the folder had no lock file before
        self.written = False  # write took the staged files

    def add(self, name: str, text: str) -> None:
        """Stage `name`, unless the last build wrote the same bytes there (`write` then leaves
        the file alone); either way its digest is kept for `write`."""
        if isinstance(text, _Spilled):  # staged already (spill)
            return
        if self._refused or not self._open():
            return
        data = text.encode("utf-8")
        digest = sha256(data).hexdigest()
        self.digests[name] = (text, digest)
        recorded = self.recorded.get(name)
        if recorded is not None and recorded[2] == digest:
            return
        try:
            tmp, handle = self._open_tmp(name)
        except OSError:
            return  # not staged: write makes it, or says why it cannot
        self.staged[name] = (text, tmp)  # before a byte is in: `close` removes it whatever happens
        with open(handle, "wb") as stream:
            stream.write(data)

    def _open_tmp(self, name: str) -> tuple[Path, int]:
        """A temporary file beside `name`'s place, created (never through a link) with the
        folders it needs (each recorded, to be removed if left empty); OSError if it cannot."""
        path = self.out_dir / name
        for folder in reversed([path.parent, *path.parent.parents]):
            if self.out_dir in folder.parents and not folder.exists():
                folder.mkdir()
                self._made.append(folder)
        tmp = _tmp_path(path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        return tmp, os.open(tmp, flags, 0o666)

    def spill(self, name: str, parts: Iterable[str]) -> str:
        """Stage `name`, the text made of `parts`, now and always (even where the last build
        wrote the same bytes), each part written as it comes (a file of hundreds of megabytes is
        never whole in memory); and give what stands for its text in the build's files from
        then on: a short placeholder that `write` finds staged. The text itself when the file
        cannot be staged."""
        if self._refused or not self._open():
            return "".join(parts)
        try:
            tmp, handle = self._open_tmp(name)
        except OSError:
            return "".join(parts)
        marker = _Spilled(f"<{name}: staged>")
        self.staged[name] = (marker, tmp)  # before a byte is in: `close` removes it
        digest = sha256()
        with open(handle, "wb") as stream:
            for part in parts:
                data = part.encode("utf-8")
                digest.update(data)
                stream.write(data)
        self.digests[name] = (marker, digest.hexdigest())
        return marker

    def digest(self, name: str, text: str) -> str | None:
        """The SHA-256 of `text` when `add` was given that text for `name`."""
        found = self.digests.get(name)
        return found[1] if found is not None and found[0] is text else None

    def _open(self) -> bool:
        if self._held is not None:
            return True
        out_dir = self.out_dir
        missing = [f for f in (out_dir, *out_dir.parents) if not f.exists()]
        lock_added = not (out_dir / LOCK).exists()
        held = ExitStack()
        try:
            if lock_added:
                _refuse_foreign(out_dir)
            self._made.extend(reversed(missing))  # made by _locked, outermost first
            held.enter_context(_locked(out_dir))
            self._lock_added = lock_added  # (removed again only by a build holding the lock)
            _claim(out_dir)
        except (OwnershipError, OSError):
            self._refused = True  # write says why, as it would have
            self._undo()
            held.close()
            return False
        self._held = held
        return True

    def take(self, name: str, text: str, path: Path) -> bool:
        """Rename the staged file of `name` into place at `path` if it holds `text`."""
        staged = self.staged.pop(name, None)
        if staged is None:
            if isinstance(text, _Spilled):  # never: a spilled file is always staged
                raise AssertionError(f"{name} was spilled and is not staged")
            return False
        if staged[0] is not text and staged[0] != text:
            staged[1].unlink(missing_ok=True)
            return False
        os.replace(staged[1], path)
        return True

    def close(self) -> None:
        """Never raises: it runs while another error may be on its way to the user."""
        for _text, tmp in self.staged.values():
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
        self.staged.clear()
        try:
            if not self.written:  # leave the disk as the build found it
                self._undo()
        finally:
            self._made.clear()
            if self._held is not None:
                held, self._held = self._held, None
                try:
                    held.close()
                except OSError:
                    pass

    def _undo(self) -> None:
        """Remove the folders made and the lock file added while they hold nothing else (the
        lock file only while its lock is held: see _locked)."""
        inside = [f for f in self._made if self.out_dir in f.parents]
        around = [f for f in self._made if f not in inside]  # out_dir and its parents
        for folder in reversed(inside):
            _rmdir(folder)
        if self._lock_added:
            self._lock_added = False
            try:
                if os.listdir(self.out_dir) == [LOCK]:  # no package: nobody wrote here since
                    (self.out_dir / LOCK).unlink()
            except OSError:
                pass
        for folder in reversed(around):
            _rmdir(folder)
        self._made.clear()

    @property
    def locked(self) -> bool:
        return self._held is not None


def _rmdir(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass  # something is in it now (or it is gone): it stays as it is


@contextmanager
def _whole() -> Iterator[None]:
    """Ctrl-C while the package is written (and its record saved) takes effect once that is
    done: the package is never left half old, half new."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread receives signals
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
        if caught:
            signal.raise_signal(signal.SIGINT)  # now, to whoever listened before


def _remove_leftovers(out_dir: Path, found: list[str]) -> None:
    """Temporary files of a build that was killed before it could rename them (`found`: those
    _existing_files met; and the cache's: every temporary file in out_dir is made under the
    lock, so none of these is still in use)."""
    cache = out_dir / CACHE_DIR
    try:
        with os.scandir(cache) as entries:
            found += [f"{CACHE_DIR}/{e.name}" for e in entries if e.name.endswith(TMP_SUFFIX)]
    except OSError:
        pass  # no cache yet
    for name in found:
        (out_dir / name).unlink(missing_ok=True)


def foreign_files(out_dir: Path, files: dict[str, str]) -> list[str]:
    """Files in out_dir that toolnexus-gen did not generate (and so must not touch)."""
    return _ownership(out_dir)[1]


def _ownership(out_dir: Path, leftovers: list[str] | None = None) -> tuple[list[str], list[str]]:
    """The files the manifest says toolnexus-gen owns, and those it did not generate (and the
    temporary files met, in `leftovers`, when given)."""
    if not out_dir.exists():
        return [], []
    if not out_dir.is_dir():
        raise OwnershipError(f"{out_dir.as_posix()} exists and is not a folder")
    owned = read_manifest(out_dir)
    existing = _existing_files(out_dir, leftovers)
    if owned is None:
        return [], existing
    known = set(owned)
    return owned, [name for name in existing if name not in known]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _tmp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}{TMP_SUFFIX}")


def atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp_path(path)
    # never through a link someone put where the temporary file goes
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with open(os.open(tmp, flags, 0o666), "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def write(
    out_dir: Path,
    files: dict[str, str],
    then: Callable[[Report], None] | None = None,
    known: dict[str, list[Any]] | None = None,
    progress: Callable[[int, int], None] | None = None,
    previous: dict[str, str] | None = None,
    staged: Staging | None = None,
) -> Report:
    """Make out_dir hold exactly `files` (plus the manifest), changing only what differs, then
    run `then(report)` (the build cache's update) while still holding the lock.

    `staged`: files written ahead (Staging), renamed into place here; its lock is the lock.

    `progress(done, total)` hears of the files as they are looked at. `known` is what the last
    build recorded of its files ([size, mtime_ns, SHA-256]): a file whose size and mtime are
    still those holds those bytes, so it is not read again (the trust the no-op build already
    places in stat; `--check` never relies on it). `previous`: the texts the last build in this
    process wrote there; such a file is compared by its text (never hashed when unchanged), and
    a changed one is hashed for the record once every file is in place.

    Checked before anything is created, and again under the lock: a file toolnexus-gen did not
    generate, or a symbolic link, stops the build with nothing written.
    """
    staging = staged if staged is not None and staged.locked else None
    if staging is None and not (out_dir / LOCK).is_file():  # else nothing to create
        _refuse_foreign(out_dir)
    with _whole(), nullcontext() if staging is not None else _locked(out_dir):
        if staging is None:
            owned = _claim(out_dir)
        else:  # checked as it was locked; checked again: a file may have appeared since
            owned = _claim(out_dir, leftovers=False)
            staging.written = True  # from here on, the folders it made are the package's
        aside: list[str] = []
        report = _write_locked(
            out_dir, files, owned, known or {}, progress, previous, staging, aside
        )
        freeing = _free(aside)
        try:
            if then is not None:
                then(report)
        finally:
            if freeing is not None:
                freeing.join()
        return report


ASIDE_MIN = 1 << 18  # bytes: below this, freeing a replaced file's blocks costs next to nothing


def _set_aside(path: str, aside: list[str]) -> None:
    """Before a large file is replaced: a second name for it (a temporary file's), so that the
    replace does not wait for the old bytes' blocks to be freed; `_free` removes those names
    while the build goes on. A build killed meanwhile leaves them to the next one, as any
    temporary file (_remove_leftovers)."""
    try:
        if os.stat(path).st_size < ASIDE_MIN:
            return
        head, name = os.path.split(path)
        link = os.path.join(head, f".{name}.{os.getpid()}.old{TMP_SUFFIX}")
        os.link(path, link)
    except OSError:
        return  # replaced as it is
    aside.append(link)


def _free(aside: list[str]) -> threading.Thread | None:
    """Remove the names `_set_aside` gave, on a thread (the kernel frees the blocks there,
    without the GIL) that the caller joins once it is done with its own work."""
    if not aside:
        return None

    def remove() -> None:
        for link in aside:
            try:
                os.unlink(link)
            except OSError:
                pass  # a leftover: the next build removes it

    thread = threading.Thread(target=remove, name="toolnexus-gen-free", daemon=True)
    thread.start()
    return thread


def _refuse_foreign(out_dir: Path) -> None:
    """Before anything is created: stop at a file toolnexus-gen did not generate."""
    foreign = foreign_files(out_dir, {})
    if foreign:
        raise OwnershipError(_foreign_message(out_dir, foreign))


def _claim(out_dir: Path, leftovers: bool = True) -> list[str]:
    """Under the lock: the files the manifest says are toolnexus-gen's (OwnershipError at any
    other file), with the temporary files of a build that was killed removed."""
    found: list[str] | None = [] if leftovers else None
    owned, foreign = _ownership(out_dir, found)
    if foreign:
        raise OwnershipError(_foreign_message(out_dir, foreign))
    if found is not None:
        _remove_leftovers(out_dir, found)
    return owned


def _holds(
    path: str, text: str, data: bytes | None, digest: str, known: list[Any] | None
) -> list[Any] | None:
    """The file's record ([size, mtime_ns, digest]) when the file at path holds exactly `text`
    (`data` when encoded already; its SHA-256 is digest), else None."""
    if known is not None:
        try:
            stat = os.stat(path)
        except OSError:
            return None
        if [stat.st_size, stat.st_mtime_ns] == known[:2]:
            return [stat.st_size, stat.st_mtime_ns, digest] if known[2] == digest else None
    if isinstance(text, _Spilled):  # its bytes are on disk, staged: compared by digest
        found = _read(Path(path))
        held = found is not None and sha256(found).hexdigest() == digest
        return _record(path, digest) if held else None
    data = text.encode("utf-8") if data is None else data
    return _record(path, digest) if _read(Path(path)) == data else None


def _record(path: Path | str, digest: str) -> list[Any]:
    stat = os.stat(path)
    return [stat.st_size, stat.st_mtime_ns, digest]


def _write_locked(
    out_dir: Path,
    files: dict[str, str],
    old: list[str],
    known: dict[str, list[Any]],
    progress: Callable[[int, int], None] | None = None,
    previous: dict[str, str] | None = None,
    staging: Staging | None = None,
    aside: list[str] | None = None,
) -> Report:
    report = Report()
    previous = previous or {}

    def put(name: str, path: Path, text: str, data: bytes | None) -> None:
        large = len(text) >= ASIDE_MIN or isinstance(text, _Spilled)
        if aside is not None and large:  # replacing a large file, likely
            _set_aside(os.fspath(path), aside)
        if staging is None or not staging.take(name, text, path):
            atomic_write(path, text.encode("utf-8") if data is None else data)

    unhashed: list[tuple[str, list[int], bytes]] = []
    stale = sorted(set(old) - set(files))
    # Record ownership of every file before any of them appears, so a build killed part-way
    # leaves nothing the next build would mistake for a user's file.
    manifest_path = out_dir / MANIFEST
    union = _manifest_text(sorted(set(old) | set(files))).encode()
    if _read(manifest_path) != union:
        atomic_write(manifest_path, union)
    folder = os.fspath(out_dir)  # paths as strings: a Path per file costs more than its stat
    for done, (name, text) in enumerate(files.items(), 1):
        if progress is not None and done % 50 == 0:
            progress(done, len(files))
        recorded = known.get(name)
        if recorded is not None and name in previous:
            # The last build in this process wrote previous[name] there: while the file's stat
            # is the recorded one it still holds it, and the texts say whether it changes.
            try:
                stat = os.stat(os.path.join(folder, name))
                untouched = [stat.st_size, stat.st_mtime_ns] == recorded[:2]
            except OSError:
                untouched = False
            if untouched and (previous[name] is text or previous[name] == text):
                report.unchanged.append(name)
                report.recorded[name] = list(recorded)
                continue
            data = text.encode("utf-8")
            path = out_dir / name
            put(name, path, text, data)
            report.written.append(name)
            stat = path.stat()
            unhashed.append((name, [stat.st_size, stat.st_mtime_ns], data))
            continue
        # a staged text was encoded and hashed as it was staged: not again, unless it is written
        staged = staging.digest(name, text) if staging else None
        encoded = None if staged else text.encode("utf-8")
        digest = staged or sha256(text.encode("utf-8") if encoded is None else encoded).hexdigest()
        held = _holds(os.path.join(folder, name), text, encoded, digest, recorded)
        if held is not None:
            report.unchanged.append(name)
            report.recorded[name] = held
            continue
        path = out_dir / name
        put(name, path, text, encoded)
        report.written.append(name)
        report.recorded[name] = _record(path, digest)
    for name, written, data in unhashed:  # once the package is whole: only the record waits
        staged = staging.digest(name, files[name]) if staging else None
        report.recorded[name] = [*written, staged or sha256(data).hexdigest()]
    for name in stale:
        path = out_dir / name
        if path.is_file():
            path.unlink()
            report.removed.append(name)
            _remove_empty_parents(path.parent, out_dir)
    final = union if not stale else _manifest_text(list(files)).encode()
    if _read(manifest_path) != final:
        atomic_write(manifest_path, final)
    report.recorded[MANIFEST] = _record(manifest_path, sha256(final).hexdigest())
    return report


def _remove_empty_parents(folder: Path, root: Path) -> None:
    while (
        folder != root
        and folder.is_dir()
        and not any(p for p in folder.iterdir() if p.name not in _IGNORED_DIRS)
    ):
        for cache in folder.glob("__pycache__"):
            for item in cache.iterdir():
                item.unlink()
            cache.rmdir()
        folder.rmdir()
        folder = folder.parent


def check(out_dir: Path, files: dict[str, str]) -> Report:
    report = Report()
    diffs: list[str] = []
    old = read_manifest(out_dir) or []
    expected = {**files, MANIFEST: _manifest_text(list(files))}
    for name, text in sorted(expected.items()):
        current = _read(out_dir / name)
        if current is None:
            report.missing.append(name)
            continue
        if current == text.encode("utf-8"):
            report.unchanged.append(name)
            continue
        report.changed.append(name)
        before = current.decode("utf-8", "replace").splitlines(keepends=True)
        after = text.splitlines(keepends=True)
        diffs.extend(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}"))
    for name in sorted(set(old) - set(files)):
        if (out_dir / name).is_file():
            report.stale.append(name)
    report.diff = "".join(line if line.endswith("\n") else line + "\n" for line in diffs)
    return report


def _foreign_message(out_dir: Path, foreign: list[str]) -> str:
    shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
    return (
        f"refusing to write to {out_dir.as_posix()}: it holds files toolnexus-gen did not generate "
        f"({shown}). The output folder belongs to toolnexus-gen; keep your own code elsewhere, "
        "or choose an empty or new folder with --out."
    )


def create_user_files(
    files: dict[Path, str],
    *,
    replace: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Write files that belong to the user (specs, handler modules). Without replace, a file that
    appeared in the meantime is never overwritten: creation is exclusive."""
    for done, (path, text) in enumerate(files.items(), 1):
        if progress is not None:
            progress(done, len(files))
        path.parent.mkdir(parents=True, exist_ok=True)
        if replace:
            atomic_write(path, text.encode("utf-8"))
        else:
            with path.open("x", encoding="utf-8", newline="") as handle:
                handle.write(text)


def replace_files(files: dict[Path, str], remove: list[Path]) -> None:
    """Write files that a command keeps in the user's folders (MCP snapshots), each atomically,
    and remove the ones it no longer keeps."""
    for path, text in files.items():
        atomic_write(path, text.encode("utf-8"))
    for path in remove:
        path.unlink(missing_ok=True)
