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
import stat
from collections.abc import Iterator
from os import PathLike

from ..core import ToolError

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

    def _dir(self, parts: list[str], create: bool = False) -> int:
        """A descriptor of the folder at `parts` (components of a located path)."""
        fd = os.open(self.root, _DIR)
        try:
            for part in parts:
                try:
                    child = os.open(part, _DIR, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o777, dir_fd=fd)
                    child = os.open(part, _DIR, dir_fd=fd)
                except NotADirectoryError:  # O_NOFOLLOW met a link (Linux says ENOTDIR)
                    if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                        raise OSError(errno.ELOOP, "a symbolic link on the path") from None
                    raise
                os.close(fd)
                fd = child
        except OSError as exc:
            os.close(fd)
            raise _moved(exc) from None
        return fd

    def parent(self, rel: str, create: bool = False) -> tuple[int, str]:
        """(descriptor of the folder holding `rel`, its last component)."""
        parts = rel.split("/")
        return self._dir(parts[:-1], create), parts[-1]

    def folder(self, rel: str) -> int:
        return self._dir([] if rel == "." else rel.split("/"))

    def open_file(self, rel: str) -> int:
        """A descriptor for reading the regular file `rel`."""
        if rel == ".":
            raise ToolError("The workspace itself is a folder, not a file.")
        parent, name = self.parent(rel)
        try:
            fd = os.open(name, _FILE, dir_fd=parent)
        except OSError as exc:
            raise _moved(exc, rel) from None
        finally:
            os.close(parent)
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

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write the file `rel` whole (its folders made as needed): a temporary file beside it,
        renamed into place, so a reader never sees half of it and a link there is replaced,
        never followed."""
        if rel == ".":
            raise ToolError("The workspace itself is a folder, not a file.")
        parent, name = self.parent(rel, create=True)
        temp = f".{name}.{os.getpid()}.tnx-tmp"
        try:
            mode = None  # a new file gets the default mode; a replaced one keeps its own
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
                os.rename(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
            except BaseException:
                try:
                    os.unlink(temp, dir_fd=parent)
                except OSError:
                    pass
                raise
        except OSError as exc:
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
