"""The resident: a process that keeps datamodel-code-generator and jsonschema imported and warm
between command-line builds.

A fresh process pays about 0.3 s to import the generator and make its first model, and about
0.06 s to import jsonschema and check a first schema: more than all the rest of a build that
changed one spec. So a command-line build that made models starts this process, detached, when
none runs; a later build with only a few specs to make (fewer than the workers' minimum) hands
it their checks and models over a Unix socket, and gets back what the very same functions give
in-process (`OPS`). It only turns data into data (a schema into a model's source, a schema or a
spec into "valid"): it reads and writes no project file, and runs nothing it is sent.

- One per interpreter and generator: its socket's name is a digest of the interpreter and of the
  generator's fingerprint (the one the build cache keys on), so an upgrade or an edit of the
  generator starts a new one; the old one stops at its next request, or when idle.
- Its folder is the user's own (`$XDG_RUNTIME_DIR/toolnexus-gen`, or `toolnexus-gen-UID` in the
  temporary folder, mode 0700, refused when anyone else owns it or may enter it); the socket is
  0600, and each side checks the other runs as the same user (SO_PEERCRED).
- It stops after ten idle minutes, on SIGTERM, and when its socket is removed or replaced. A
  build asks it one request at a time (the answer read before the next request is sent), and
  gives up on it for the rest of the build at the first thing that goes wrong: gone, a
  malformed answer, or no answer by the deadline (then it is stopped, as unresponsive, and the
  next build starts a new one). Builds under CI, or with TOOLNEXUS_GEN_RESIDENT=0, never start or
  ask one; nor do `build --watch` (warm itself) and the generator used as a library.
- Whatever it cannot answer, the build does itself, as it would without one; a check it finds
  failing, or a model it could not make, is made again in-process, for its diagnostics. Output
  never depends on it.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket

IDLE = 600.0  # seconds without a request before it stops
MOST = 32  # items in one request (parallel.PARALLEL_MIN: more go to the workers)
STARTING = 0.5  # seconds a build waits, in all, for one that is still warming up
LARGEST = 64 << 20  # bytes in a request or an answer
READING = 10.0  # seconds the resident waits for a whole request
ANSWER = 3.0  # seconds a build waits for an answer, and half a second more per item in it
# Libraries whose answers it gives: a new version of one starts a new resident.
LIBRARIES = ("jsonschema", "referencing", "jsonschema_specifications", "pydantic", "pydantic_core")

# What it answers: an operation's name, and the function (module:name) it applies to each item.
# Named, not imported, so this module sits below the stages whose functions it runs.
OPS = {
    "model": "toolnexus_gen.codegen.models:make_model",
    "valid": "toolnexus_gen.toolspec.validate:is_valid",
}
WARM = ("toolnexus_gen.codegen.models:warm_up", "toolnexus_gen.toolspec.validate:warm_up")


class _Build:
    """What this process's command-line build knows of the resident."""

    def __init__(self, allowed: bool = False) -> None:
        self.allowed = allowed  # a command-line build runs here (allow)
        self.made_here = 0  # models this process made itself (note_made)
        self.gave_up = False  # something went wrong with it: not asked again
        self.waited = 0.0  # seconds spent waiting for one to finish warming up
        self.outstanding: Pending | None = None  # the request whose answer is not read yet


_build = _Build()


def enabled() -> bool:
    setting = os.environ.get("TOOLNEXUS_GEN_RESIDENT", "").strip().lower()
    if setting in ("0", "false", "no", "off"):
        return False
    ci = os.environ.get("CI", "").strip().lower()
    if ci and ci not in ("0", "false", "no"):
        return False
    return os.name == "posix"


def allow(yes: bool = True) -> None:
    """A command-line build runs in this process: it may ask a resident and start one."""
    global _build
    if _build.outstanding is not None:
        _build.outstanding.close()
    _build = _Build(yes and enabled())


def allowed() -> bool:
    return _build.allowed and not _build.gave_up


def note_made(count: int) -> None:
    """This process made `count` models itself."""
    _build.made_here += count


# -- where it lives ------------------------------------------------------------------------------


def folder() -> Path | None:
    """The user's own folder for the resident's socket and lock, made if missing; None when it
    is not safe to use (a link, or someone else's, or open to others)."""
    uid = os.getuid()
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        path = Path(runtime) / "toolnexus-gen"
    else:
        path = Path(os.environ.get("TMPDIR") or "/tmp") / f"toolnexus-gen-{uid}"
    # a socket's path holds 104 bytes on macOS (108 on Linux): the folder, / and 25 more
    if len(os.fsencode(path)) > 72:
        return None
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        found = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != uid or found.st_mode & 0o077:
        return None
    return path


def _digest(fresh: bool = True) -> str:
    """What the answers depend on besides the items: the interpreter, the generator's
    fingerprint (toolnexus-gen's files, datamodel-code-generator's version, Python's:
    incremental.cache), read afresh unless a build's own (`fresh=False`) will do, and the
    versions of the other libraries the answers come from."""
    import hashlib

    from toolnexus_gen.incremental.cache import dist_version, generator_fingerprint

    fingerprint = generator_fingerprint.__wrapped__() if fresh else generator_fingerprint()
    versions = ",".join(f"{name}={dist_version(name)}" for name in LIBRARIES)
    text = f"{sys.executable}\n{fingerprint}\n{versions}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


@cache
def _key() -> str:  # a build's; the resident checks `_digest()` afresh, as it lives long
    return _digest(fresh=False)


def _peer(connection: socket.socket) -> int | None:
    """The other side's process id when it runs as this user, else None."""
    import socket
    import struct

    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:  # pragma: no cover (not Linux): the 0700 folder keeps others out
        return 0
    size = struct.calcsize("3i")
    pid, uid, _gid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, option, size))
    return int(pid) if uid == os.getuid() else None


def _send(connection: socket.socket, message: Any) -> None:
    import struct

    data = json.dumps(message, ensure_ascii=False).encode()
    connection.sendall(struct.pack("!Q", len(data)) + data)


def _receive(connection: socket.socket, seconds: float) -> Any:
    """A whole message, within `seconds` however slowly it comes."""
    import struct

    deadline = time.monotonic() + seconds
    (size,) = struct.unpack("!Q", _exactly(connection, 8, deadline))
    if size > LARGEST:
        raise ValueError(f"a message of {size} bytes")
    return json.loads(_exactly(connection, size, deadline))


def _exactly(connection: socket.socket, size: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    while size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no whole message in time")
        connection.settimeout(left)
        chunk = connection.recv(min(size, 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _running(place: Path, key: str) -> bool:
    """Whether a resident holds its lock: it runs, or warms up before it listens. (Its socket
    alone says nothing: one that was killed leaves it behind.)"""
    import fcntl

    try:
        descriptor = os.open(place / f"{key}.lock", os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(descriptor)
    return False


# -- a build's side ------------------------------------------------------------------------------


def available() -> bool:
    """Whether this build should hand its few checks and models to a resident: one runs or is
    warming up."""
    if not allowed():
        return False
    place = folder()
    return place is not None and _running(place, _key())


class Pending:
    """A request sent to the resident. Its answer is read when needed (`results`), or before
    the build's next request is sent: the resident works on it meanwhile, and neither side ever
    waits to write while the other does."""

    def __init__(self, connection: socket.socket, count: int, pid: int, seconds: float) -> None:
        self.connection: socket.socket | None = connection
        self.count = count
        self.pid = pid
        self.seconds = seconds  # how long its answer may take, from now
        self.sent = time.monotonic()
        self.answer: Any = None

    def collect(self) -> None:
        connection, self.connection = self.connection, None
        if connection is None:
            return
        if _build.outstanding is self:
            _build.outstanding = None
        try:
            with connection:
                left = self.seconds - (time.monotonic() - self.sent)
                self.answer = _receive(connection, max(left, 1.0))
        except TimeoutError:
            _unresponsive(self.pid)
        except (OSError, ValueError):
            _build.gave_up = True

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def results(self, fits: Callable[[Any], bool]) -> list[Any] | None:
        """The answers, or None when the resident could not give them or one is not one `fits`
        takes (the build then does that work itself)."""
        self.collect()
        answer = self.answer
        results = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(results, list) or len(results) != self.count:
            _build.gave_up = True
            return None
        if not all(fits(result) for result in results):
            _build.gave_up = True
            return None
        return results


def _unresponsive(pid: int) -> None:
    """No answer in time: not asked again in this build, and stopped (a resident that is
    stopped or stuck would hold up every build), so the next build starts a new one."""
    import signal

    _build.gave_up = True
    if pid > 0:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def send(op: str, items: Sequence[Any]) -> Pending | None:
    """Ask the resident for `OPS[op]` of each item; None when there is none to ask (the build
    then does the work itself). Items go as JSON: what JSON would change (a tuple, a key that
    is not a string) is not sent."""
    if not allowed() or not items or len(items) > MOST or op not in OPS:
        return None
    sent = list(items)
    try:
        if json.loads(json.dumps(sent)) != sent:
            return None
    except (TypeError, ValueError, RecursionError):
        return None
    if _build.outstanding is not None:
        _build.outstanding.collect()  # one request at a time
        if _build.gave_up:
            return None
    place = folder()
    if place is None:
        return None
    key = _key()
    found = _connect(place, key)
    if found is None:
        return None
    connection, pid = found
    try:
        connection.settimeout(5.0)
        _send(connection, {"key": key, "op": op, "items": sent})
    except (OSError, ValueError):
        connection.close()
        _build.gave_up = True
        return None
    # a model takes it milliseconds to a second; a stopped or stuck one never answers
    pending = Pending(connection, len(sent), pid, ANSWER + 0.5 * len(sent))
    _build.outstanding = pending
    return pending


def ask(op: str, items: Sequence[Any], fits: Callable[[Any], bool]) -> list[Any] | None:
    """`OPS[op]` of each item, from the resident (send, then wait for the answer)."""
    pending = send(op, items)
    return None if pending is None else pending.results(fits)


def _connect(place: Path, key: str) -> tuple[socket.socket, int] | None:
    import socket

    path = str(place / f"{key}.sock")
    while True:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.settimeout(1.0)
            connection.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            connection.close()
            if _build.waited < STARTING and _running(place, key):
                time.sleep(0.01)  # warming up: it listens once the libraries are ready
                _build.waited += 0.01
                continue
            _build.gave_up = True
            return None
        except OSError:
            connection.close()
            _build.gave_up = True
            return None
        pid = _peer(connection)
        if pid is None:
            connection.close()
            _build.gave_up = True
            return None
        return connection, pid


def keep_warm() -> None:
    """After a command-line build that made models itself: start a resident unless one runs."""
    if not _build.allowed or not _build.made_here:
        return
    place = folder()
    if place is None:
        return
    key = _key()
    if _running(place, key):
        return
    import subprocess

    try:
        subprocess.Popen(  # noqa: S603 (this interpreter, this module)
            [sys.executable, "-m", "toolnexus_gen.resident", key],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=place,
            start_new_session=True,  # no terminal's Ctrl-C, and it outlives the build
            close_fds=True,
        )
    except OSError:
        pass


# -- the resident's side -------------------------------------------------------------------------


def _function(path: str) -> Callable[..., Any]:
    import importlib

    module, _, name = path.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


def serve(key: str, idle: float = IDLE) -> int:
    """Run as the resident for `key` until idle for `idle` seconds (or SIGTERM); 0 at once when
    another one holds the lock or the generator on disk is no longer the one `key` names."""
    import fcntl
    import signal
    import socket

    place = folder()
    if place is None:
        return 1
    lock = os.open(place / f"{key}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    for attempt in range(5):  # a build looking whether one runs holds it for a moment
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if attempt == 4:
                return 0  # one is there already
            time.sleep(0.01)
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())
    if _digest() != key:
        return 0
    path = place / f"{key}.sock"
    try:
        os.unlink(path)  # left by one that was killed: the lock is ours now
    except FileNotFoundError:
        pass
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # its socket is removed on the way
    ops = {op: _function(path) for op, path in OPS.items()}
    for warm in WARM:
        _function(warm)()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(mask)
    bound = os.lstat(path).st_ino
    listener.listen(64)
    listener.settimeout(min(idle, 30.0))  # it looks at its socket at least this often
    last = time.monotonic()
    try:
        while _ours(path, bound) and time.monotonic() - last < idle:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                if not _answer(connection, key, ops):
                    break
            last = time.monotonic()
    finally:
        if _ours(path, bound):
            os.unlink(path)
        listener.close()
    return 0


def _ours(path: Path, bound: int) -> bool:
    try:
        return os.lstat(path).st_ino == bound
    except OSError:
        return False


def _answer(connection: socket.socket, key: str, ops: dict[str, Callable[..., Any]]) -> bool:
    """Answer one request; False when the resident should stop (the generator changed)."""
    try:
        if _peer(connection) is None:
            return True
        request = _receive(connection, READING)
        if not isinstance(request, dict) or request.get("key") != key:
            _send(connection, {"results": None})
            return True
        if _digest() != key:
            _send(connection, {"results": None})
            return False
        function, items = ops.get(request.get("op", "")), request.get("items")
        if function is None or not isinstance(items, list) or len(items) > MOST:
            _send(connection, {"results": None})
            return True
        results = [function(item) for item in items]
        connection.settimeout(READING)
        _send(connection, {"results": results})
    except Exception:  # noqa: BLE001 (a malformed item, a lost client: that build does it)
        pass
    return True


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if not arguments:
        raise SystemExit("usage: python -m toolnexus_gen.resident KEY [IDLE-SECONDS]")
    sys.exit(serve(arguments[0], float(arguments[1]) if len(arguments) > 1 else IDLE))
