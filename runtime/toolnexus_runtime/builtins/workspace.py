"""The workspace: the one folder the built-in file tools may read and write.

A path the model gives is resolved against the workspace, symbolic links included, and refused
when its real location is outside (`..`, an absolute path elsewhere, a link pointing out, also
one made after the Toolkit was). What is checked is then what is opened: every file is reached
from the workspace's own folder descriptor one real component at a time with `O_NOFOLLOW`, so a
link swapped in between the check and the use (a time-of-check race) fails the open instead of
leading outside. Writes go to a temporary file beside the target, renamed into place.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from contextlib import suppress
from os import PathLike

from ..datatypes import ToolError

SKIPPED = frozenset({".git", "node_modules"})  # never walked into (grep, glob)
MAX_DEPTH = 64  # folders deeper than this are not walked
_DIR = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK


def supported() -> bool:
    """Whether this system can open files relative to a folder without following links."""
    return (
        hasattr(os, "O_NOFOLLOW")
        and os.open in os.supports_dir_fd
        and os.mkdir in os.supports_dir_fd
        and os.rename in os.supports_dir_fd
        and os.unlink in os.supports_dir_fd
        and os.rmdir in os.supports_dir_fd
        and os.link in os.supports_dir_fd
        and os.scandir in os.supports_fd
    )


class Workspace:
    """Paths the model gives, confined to `root` (default: the current folder)."""

    def __init__(self, root: str | PathLike[str] | None) -> None:
        given = os.path.abspath(os.fspath(root) if root is not None else os.getcwd())
        if not os.path.isdir(given):
            raise ValueError(
                f"workspace {given!r} does not exist or is not a folder: create it, or pass "
                "Toolkit(..., workspace=PATH) naming the folder the built-in tools may use"
            )
        if not supported():
            raise RuntimeError(
                "the built-in file tools need a POSIX system (files opened relative to a folder, "
                "without following links); this one cannot confine them to a workspace"
            )
        self.root = os.path.realpath(given)

    def locate(self, path: str) -> str:
        """The workspace-relative real path of `path` ("." for the workspace itself), or a
        ToolError when it leaves the workspace."""
        if not path:
            raise ToolError("The path is empty: give a path relative to the workspace.")
        if "\x00" in path:
            raise ToolError("The path contains a NUL character.")
        real = os.path.realpath(os.path.join(self.root, path))
        rel = os.path.relpath(real, self.root)
        if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
            raise ToolError(
                f"{path!r} is outside the workspace (it resolves to a place outside it, through "
                "'..', an absolute path or a symbolic link); refused. Use paths inside the "
                "workspace, relative to it."
            )
        return rel.replace(os.sep, "/")

    # -- opening what was checked, one real component at a time ------------------------------

    def _dir(self, parts: list[str], create: bool = False, made: list[str] | None = None) -> int:
        """A descriptor of the folder at `parts` (components of a located path); with `create`,
        missing folders are made (and their paths added to `made`)."""
        fd = os.open(self.root, _DIR)
        try:
            for depth, part in enumerate(parts, 1):
                try:
                    child = os.open(part, _DIR, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o777, dir_fd=fd)
                    if made is not None:
                        made.append("/".join(parts[:depth]))
                    child = os.open(part, _DIR, dir_fd=fd)
                except NotADirectoryError:  # O_NOFOLLOW met a link (Linux says ENOTDIR)
                    if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                        raise OSError(errno.ELOOP, "a symbolic link on the path") from None
                    raise ToolError(f"{'/'.join(parts[:depth])} is a file, not a folder.") from None
                os.close(fd)
                fd = child
        except BaseException as exc:
            os.close(fd)
            if isinstance(exc, OSError):
                raise _moved(exc, "/".join(parts)) from None
            raise
        return fd

    def parent(
        self, rel: str, create: bool = False, made: list[str] | None = None
    ) -> tuple[int, str]:
        """(descriptor of the folder holding `rel`, its last component)."""
        parts = rel.split("/")
        return self._dir(parts[:-1], create, made), parts[-1]

    def folder(self, rel: str) -> int:
        return self._dir([] if rel == "." else rel.split("/"))

    def open_file(self, rel: str) -> int:
        """A descriptor for reading the regular file `rel`."""
        if rel == ".":
            raise ToolError("The workspace itself is a folder, not a file.")
        parent, name = self.parent(rel)
        try:
            return self.open_at(parent, name, rel)
        finally:
            os.close(parent)

    def open_at(self, folder: int, name: str, rel: str) -> int:
        """A descriptor for reading the regular file `name` in the folder descriptor `folder`
        (`rel` names it in messages). Opened without following a link and without blocking,
        so a FIFO (or a device) put there is refused at once, never waited on."""
        try:
            fd = os.open(name, _FILE, dir_fd=folder)
        except OSError as exc:
            raise _moved(exc, rel) from None
        kind = os.fstat(fd).st_mode
        if not stat.S_ISREG(kind):
            os.close(fd)
            what = "a folder (use glob to list it)" if stat.S_ISDIR(kind) else "not a regular file"
            raise ToolError(f"{rel} is {what}.")
        os.set_blocking(fd, True)
        return fd

    def read_bytes(self, rel: str, limit: int) -> bytes:
        """The file's bytes; a ToolError when it has more than `limit`."""
        fd = self.open_file(rel)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise ToolError(f"{rel} is larger than {limit} bytes; too large for this tool.")
        return data

    def exists(self, rel: str) -> bool:
        try:
            parent, name = self.parent(rel)
        except (ToolError, OSError):
            return False
        try:
            os.stat(name, dir_fd=parent, follow_symlinks=False)
            return True
        except OSError:
            return False
        finally:
            os.close(parent)

    def kind(self, rel: str) -> str:
        """What is at `rel`: "missing", "file" (a regular one), "folder" or "other"; or, when a
        folder on the way is not one, "under FOLDER" naming the first such."""
        parts = rel.split("/")
        fd = os.open(self.root, _DIR)
        try:
            for depth, part in enumerate(parts, 1):
                try:
                    mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                except FileNotFoundError:
                    return "missing"
                if depth == len(parts):
                    if stat.S_ISREG(mode):
                        return "file"
                    return "folder" if stat.S_ISDIR(mode) else "other"
                if not stat.S_ISDIR(mode):
                    return "under " + "/".join(parts[:depth])
                child = os.open(part, _DIR, dir_fd=fd)
                os.close(fd)
                fd = child
        except OSError as exc:
            raise _moved(exc, rel) from None
        finally:
            os.close(fd)
        return "folder"  # rel == "."

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write the file `rel` whole (its folders made as needed): a temporary file beside it,
        renamed into place, so a reader never sees half of it and a link there is replaced,
        never followed."""
        parent, name = self.parent(rel, create=True)
        try:
            temp = _stage(parent, name, rel, data)
            try:
                os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
            except OSError as exc:
                _unlink(parent, temp)
                raise _moved(exc, rel) from None
        finally:
            os.close(parent)

    def delete(self, rel: str) -> None:
        parent, name = self.parent(rel)
        try:
            if stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
                raise ToolError(f"{rel} is a folder; only files are deleted.")
            os.unlink(name, dir_fd=parent)
        except OSError as exc:
            raise _moved(exc, rel) from None
        finally:
            os.close(parent)

    def change(self, writes: dict[str, bytes], deletes: list[str]) -> None:
        """Write every file of `writes` and delete every file of `deletes`: all of it, or
        (whatever fails, on the way or at the end) none of it.

        Checked first: no path is a folder on the way to another, each one's folders are
        folders (or missing, to be made), nothing written is a folder, everything deleted is
        a file. Then every new content goes to a temporary file beside its target; then the
        temporaries are renamed into place, each replaced file kept under a hard link until
        the end; deletes come last (renamed aside too). On a failure every step done is undone
        in reverse (old files back, new ones and made folders removed); at the end the kept
        old files go."""
        self._check_change(writes, deletes)
        folders: dict[str, int] = {}  # the descriptors of the folders touched, by path
        made: list[str] = []
        staged: list[tuple[str, str]] = []  # (rel, temporary name)
        done: list[tuple[str, str | None, bool]] = []  # (rel, the old file's name aside, deleted)

        def folder(rel: str, create: bool = False) -> tuple[int, str]:
            where, _, name = rel.rpartition("/")
            if where not in folders:
                folders[where] = self._dir(where.split("/") if where else [], create, made)
            return folders[where], name

        try:
            try:
                for rel, data in writes.items():
                    parent, name = folder(rel, create=True)
                    staged.append((rel, _stage(parent, name, rel, data)))
                for rel, temp in staged:
                    parent, name = folder(rel)
                    aside = _aside(parent, name, rel)
                    try:
                        os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
                    except OSError as exc:
                        if aside is not None:
                            _unlink(parent, aside)
                        raise _moved(exc, rel) from None
                    done.append((rel, aside, False))
                for rel in deletes:
                    parent, name = folder(rel)
                    aside = _temp_name(name, "old")
                    try:
                        os.rename(name, aside, src_dir_fd=parent, dst_dir_fd=parent)
                    except OSError as exc:
                        raise _moved(exc, rel) from None
                    done.append((rel, aside, True))
            except BaseException:
                self._undo(done, staged, made, folder)
                raise
            for rel, aside, _ in done:
                if aside is not None:
                    _unlink(folder(rel)[0], aside)
        finally:
            for fd in folders.values():
                os.close(fd)

    @staticmethod
    def _undo(
        done: list[tuple[str, str | None, bool]],
        staged: list[tuple[str, str]],
        made: list[str],
        folder: Callable[[str], tuple[int, str]],
    ) -> None:
        """Every step of a change undone, in reverse; each as far as it can be."""
        for rel, aside, deleted in reversed(done):
            with suppress(OSError, ToolError):
                parent, name = folder(rel)
                if aside is not None:
                    os.rename(aside, name, src_dir_fd=parent, dst_dir_fd=parent)
                elif not deleted:
                    os.unlink(name, dir_fd=parent)
        for rel, temp in staged:
            with suppress(OSError, ToolError):
                _unlink(folder(rel)[0], temp)
        for path in reversed(made):
            with suppress(OSError, ToolError):
                parent, name = folder(path)
                os.rmdir(name, dir_fd=parent)

    def _check_change(self, writes: dict[str, bytes], deletes: list[str]) -> None:
        paths = [*writes, *deletes]
        every = set(paths)
        for rel in paths:
            parts = rel.split("/")
            for depth in range(1, len(parts)):
                above = "/".join(parts[:depth])
                if above in every:
                    raise ToolError(
                        f"{above} is both a file of the patch and a folder on the way to {rel}; "
                        "nothing was changed (split it into two patches)."
                    )
        for rel in paths:
            kind = self.kind(rel)
            if kind.startswith("under "):
                raise ToolError(f"{rel}: {kind[6:]} is a file, not a folder; nothing was changed.")
            what = {"missing": "does not exist", "folder": "is a folder, not a file"}.get(
                kind, "is not a regular file"
            )
            if kind != "file" and (rel not in writes or kind != "missing"):
                raise ToolError(f"{rel} {what}; nothing was changed.")

    # -- walking (grep, glob) -----------------------------------------------------------------

    def files(self, rel: str) -> Iterator[tuple[int, str, str]]:
        """(folder descriptor, name, workspace-relative path) of every regular file under the
        folder `rel`, in name order; links are not followed, .git and node_modules skipped.
        The descriptor is valid until the next item."""
        fd = self.folder(rel)
        try:
            yield from _walk(fd, "" if rel == "." else rel, 0)
        finally:
            os.close(fd)


def _walk(fd: int, rel: str, depth: int) -> Iterator[tuple[int, str, str]]:
    with os.scandir(fd) as found:
        entries = sorted(found, key=lambda entry: entry.name)
    for entry in entries:
        path = f"{rel}/{entry.name}" if rel else entry.name
        try:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name in SKIPPED or depth >= MAX_DEPTH:
                    continue
                child = os.open(entry.name, _DIR, dir_fd=fd)
            elif entry.is_file(follow_symlinks=False):
                yield fd, entry.name, path
                continue
            else:
                continue
        except OSError:
            continue
        try:
            yield from _walk(child, path, depth + 1)
        finally:
            os.close(child)


def _temp_name(name: str, kind: str) -> str:
    """A hidden name beside `name` for a temporary ("tmp") or a kept old file ("old")."""
    return f".{name[:100]}.{os.getpid()}.{secrets.token_hex(4)}.tnx-{kind}"


def _stage(parent: int, name: str, rel: str, data: bytes) -> str:
    """A temporary file in the folder `parent` holding `data`, with the mode of the file
    `name` it is to replace (a new file gets the default mode); its name."""
    temp = _temp_name(name, "tmp")
    try:
        mode = None
        try:
            old = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if stat.S_ISDIR(old.st_mode):
                raise ToolError(f"{rel} is a folder; give a file path.")
            if stat.S_ISREG(old.st_mode):
                mode = stat.S_IMODE(old.st_mode)
        except FileNotFoundError:
            pass
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, 0o666, dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)
                handle.write(data)
        except BaseException:
            _unlink(parent, temp)
            raise
    except OSError as exc:
        raise _moved(exc, rel) from None
    return temp


def _aside(parent: int, name: str, rel: str) -> str | None:
    """A second name (a hard link) for the file `name` about to be replaced, so it can be put
    back; None when there is none there. Where hard links cannot be made, a copy."""
    try:
        os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _moved(exc, rel) from None
    aside = _temp_name(name, "old")
    try:
        os.link(name, aside, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
    except OSError:  # a file system without hard links: a copy
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
        return _stage(parent, name, rel, data)
    return aside


def _unlink(parent: int, name: str) -> None:
    with suppress(OSError):
        os.unlink(name, dir_fd=parent)


def _moved(exc: OSError, rel: str | None = None) -> Exception:
    """An OSError met while opening a located path, as the model should hear it."""
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return ToolError(
            "The path changed while it was being used (a symbolic link appeared in it); refused."
        )
    where = rel if rel is not None else "the path"
    if exc.errno == errno.ENOTDIR:
        return ToolError(f"{where}: a part of it is not a folder.")
    if isinstance(exc, FileNotFoundError):
        return ToolError(f"{where} does not exist.")
    return ToolError(f"{where}: {exc.strerror or exc}.")
