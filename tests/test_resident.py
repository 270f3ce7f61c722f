"""The resident (toolnexus_gen.resident), for real: command-line builds in their own processes
start one, hand it their few checks and models over its Unix socket, and write what a build
without it writes; a build that asked it imports neither datamodel-code-generator nor
jsonschema. Invalid specs get the same diagnostics; a resident that is gone, stale or answers
nonsense changes nothing; CI and TOOLNEXUS_GEN_RESIDENT=0 keep it off; a folder others may
enter is never used; it stops when idle. Each test gives it a runtime folder of its own and
stops it at the end, so none outlives the suite."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import generated, reference, write_specs

from toolnexus_gen import resident

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a Unix socket")

WAIT = 60.0  # seconds for a resident to warm up on a busy machine (usually under one)


def spec(name: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "city": {"type": "string", "description": "City name"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
        "unit": {"type": "string", "enum": ["c", "f"]},
        **(extra or {}),
    }
    return {
        "description": f"Forecast for a city ({name})",
        "input_schema": {"type": "object", "properties": properties, "required": ["city"]},
        "examples": [{"city": "Lyon", "days": 2}],
    }


class Project:
    """A project, and the environment of its command-line builds: resident on, not CI, and a
    runtime folder of its own."""

    def __init__(self, root: Path, run: Path | None = None) -> None:
        self.root = root
        self.shared = run is not None  # a runtime folder (and resident) other tests use too
        # a socket's path must be short (about 100 bytes): not under pytest's long tmp_path
        self.run = run or Path(tempfile.mkdtemp(prefix="tnr-", dir="/tmp"))
        self.env = {k: v for k, v in os.environ.items() if k not in ("CI", "TMPDIR")}
        self.env.update(TOOLNEXUS_GEN_RESIDENT="1", XDG_RUNTIME_DIR=str(self.run))
        write_specs(root / "specs", {f"{n}.json": spec(n) for n in ("alpha", "beta", "gamma")})

    @property
    def folder(self) -> Path:
        return self.run / "toolnexus-gen"

    def build(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args, "-m", "toolnexus_gen", "build", "specs", "--out", "out"],
            cwd=self.root,
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            check=False,
        )

    def key(self) -> str:
        """The resident's key, as a build in this environment makes it."""
        return subprocess.run(
            [sys.executable, "-c", "from toolnexus_gen import resident; print(resident._key())"],
            capture_output=True,
            text=True,
            env=self.env,
            check=True,
        ).stdout.strip()

    def sockets(self) -> list[Path]:
        return sorted(self.folder.glob("*.sock")) if self.folder.exists() else []

    def wait_for_resident(self) -> Path:
        deadline = time.monotonic() + WAIT
        while not self.sockets():
            assert time.monotonic() < deadline, "no resident started"
            time.sleep(0.05)
        return self.sockets()[0]

    def pids(self) -> list[int]:
        found = []
        for lock in self.folder.glob("*.lock") if self.folder.exists() else []:
            text = lock.read_text().strip()
            if text.isdigit():
                found.append(int(text))
        return found

    def stop(self) -> None:
        if self.shared:
            return
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.run, ignore_errors=True)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    made = Project(tmp_path / "proj")
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture(scope="module")
def shared_run() -> Iterator[Path]:
    """One runtime folder, and the resident the first build in it starts, for the tests that
    only use a resident (they leave it as they found it)."""
    run = Path(tempfile.mkdtemp(prefix="tnr-", dir="/tmp"))
    try:
        yield run
    finally:
        for lock in (run / "toolnexus-gen").glob("*.lock"):
            text = lock.read_text().strip()
            if text.isdigit():
                try:
                    os.kill(int(text), signal.SIGTERM)
                except ProcessLookupError:
                    pass
        shutil.rmtree(run, ignore_errors=True)


@pytest.fixture
def warm(tmp_path: Path, shared_run: Path) -> Project:
    """A project whose builds find the shared resident."""
    return Project(tmp_path / "proj", shared_run)


def edit(project: Project) -> None:
    """A schema and description edit of one spec, as in an edit loop."""
    changed = spec("beta", {"hours": {"type": "boolean", "description": "Hourly too"}})
    changed["description"] = "Forecast, edited"
    write_specs(project.root / "specs", {"beta.json": changed})


def imported(result: subprocess.CompletedProcess[str], module: str) -> bool:
    """Whether a build run with -X importtime imported the module."""
    return any(line.rstrip().endswith(f"| {module}") for line in result.stderr.splitlines())


def test_an_edit_is_made_by_the_resident_and_writes_what_a_build_without_it_writes(
    warm: Project,
) -> None:
    project = warm
    first = project.build()
    assert first.returncode == 0, first.stderr
    project.wait_for_resident()
    edit(project)
    second = project.build("-X", "importtime")
    assert second.returncode == 0, second.stderr
    # the checks and the model came from the resident: neither library was imported here
    assert not imported(second, "datamodel_code_generator")
    assert not imported(second, "jsonschema")
    assert generated(project.root / "out") == reference(project.root)
    assert "hours" in (project.root / "out" / "models" / "beta.py").read_text()
    # and with it turned off, the same edit is made here, the same way
    edit_again = spec("beta", {"hours": {"type": "boolean", "description": "Hourly, too"}})
    write_specs(project.root / "specs", {"beta.json": edit_again})
    third = project.build("-X", "importtime", env={"TOOLNEXUS_GEN_RESIDENT": "0"})
    assert third.returncode == 0, third.stderr
    assert imported(third, "datamodel_code_generator")
    assert generated(project.root / "out") == reference(project.root)


def broken_specs() -> list[tuple[str, dict[str, Any]]]:
    unknown = spec("beta")
    unknown["unknown"] = 1  # the envelope
    no_type = spec("beta", {"when": {"type": "strin"}})  # the meta-schema
    wrong_example = spec("beta")
    wrong_example["examples"] = [{"city": 3}]  # the examples
    short = spec("beta")
    short["description"] = 7  # the envelope's schema
    return [("TN108", unknown), ("TN112", no_type), ("TN114", wrong_example), ("TN110", short)]


def test_an_invalid_edit_gets_the_diagnostics_a_build_without_it_prints(
    warm: Project, tmp_path: Path
) -> None:
    project = warm
    assert project.build().returncode == 0
    project.wait_for_resident()
    alone = tmp_path / "alone"
    shutil.copytree(project.root / "specs", alone / "specs")
    shutil.copytree(project.root / "out", alone / "out")
    for code, broken in broken_specs():
        write_specs(project.root / "specs", {"beta.json": broken})
        write_specs(alone / "specs", {"beta.json": broken})
        with_it = project.build()
        without = subprocess.run(
            [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", "out"],
            cwd=alone,
            capture_output=True,
            text=True,
            env={**project.env, "TOOLNEXUS_GEN_RESIDENT": "0"},
            check=False,
        )
        assert with_it.returncode == without.returncode != 0
        assert f"error[{code}]" in with_it.stderr
        assert with_it.stderr == without.stderr
    assert project.sockets()  # it was there all along


def test_ci_and_the_setting_keep_it_off(project: Project) -> None:
    for env in ({"CI": "true"}, {"TOOLNEXUS_GEN_RESIDENT": "0"}):
        shutil.rmtree(project.root / "out", ignore_errors=True)
        result = project.build(env=env)
        assert result.returncode == 0, result.stderr
        time.sleep(0.3)
        assert project.sockets() == [] and project.pids() == []
    assert project.build("-X", "importtime", env={"CI": "1"}).returncode == 0
    assert project.sockets() == []


def test_check_and_no_op_builds_start_none(project: Project) -> None:
    with_off = project.build(env={"TOOLNEXUS_GEN_RESIDENT": "0"})
    assert with_off.returncode == 0
    no_op = project.build()
    assert no_op.returncode == 0 and "0 files written" in no_op.stdout
    check = subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", "out", "--check"],
        cwd=project.root,
        capture_output=True,
        text=True,
        env=project.env,
        check=False,
    )
    assert check.returncode == 0, check.stderr
    time.sleep(0.3)
    assert project.pids() == []


def test_a_folder_others_may_enter_is_never_used(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.folder.mkdir(mode=0o755)
    project.folder.chmod(0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(project.run))
    assert resident.folder() is None
    result = project.build()
    assert result.returncode == 0, result.stderr
    time.sleep(0.3)
    assert list(project.folder.iterdir()) == []
    # nor a link to a folder of one's own
    project.folder.rmdir()
    own = project.run / "elsewhere"
    own.mkdir(mode=0o700)
    project.folder.symlink_to(own)
    assert resident.folder() is None


class Liar:
    """A server at a resident's socket that answers every request with `answer`."""

    def __init__(self, path: Path, answer: Any) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(64)
        self.answer = answer
        self.asked = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                try:
                    (size,) = struct.unpack("!Q", connection.recv(8, socket.MSG_WAITALL))
                    connection.recv(size, socket.MSG_WAITALL)
                    self.asked += 1
                    data = json.dumps(self.answer).encode()
                    connection.sendall(struct.pack("!Q", len(data)) + data)
                except OSError:
                    pass


@pytest.mark.parametrize(
    "answer",
    [{"results": [[True]]}, {"results": ["nonsense"]}, "x"],
    ids=["short", "wrong-shape", "a-string"],
)
def test_a_resident_answering_nonsense_changes_nothing(
    project: Project, monkeypatch: pytest.MonkeyPatch, answer: Any
) -> None:
    assert project.build(env={"TOOLNEXUS_GEN_RESIDENT": "0"}).returncode == 0
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(project.run))
    key = project.key()
    place = resident.folder()
    assert place is not None
    liar = Liar(place / f"{key}.sock", answer)
    # its lock held, as a real one's is: a build does not start another
    lock = os.open(place / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)

    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        edit(project)
        result = project.build()
        assert result.returncode == 0, result.stderr
        assert liar.asked >= 1  # it was asked, and its answers were not taken
        assert generated(project.root / "out") == reference(project.root)
    finally:
        os.close(lock)
        liar.listener.close()


def test_a_stale_socket_is_passed_over(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    assert project.build(env={"TOOLNEXUS_GEN_RESIDENT": "0"}).returncode == 0
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(project.run))
    place = resident.folder()
    assert place is not None
    key = project.key()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(place / f"{key}.sock"))
    dead.close()  # a socket file nobody listens on: what a killed resident leaves
    edit(project)
    started = time.monotonic()
    result = project.build()
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < WAIT
    assert generated(project.root / "out") == reference(project.root)


def test_one_per_key_and_it_stops_when_idle(project: Project) -> None:
    key = project.key()
    command = [sys.executable, "-m", "toolnexus_gen.resident", key, "1.5"]
    first = subprocess.Popen(command, env=project.env, stdin=subprocess.DEVNULL)
    try:
        socket_path = project.wait_for_resident()
        assert (
            socket_path.name == f"{key}.sock" and oct(socket_path.stat().st_mode & 0o777) == "0o600"
        )
        second = subprocess.run(command, env=project.env, timeout=WAIT, check=False)
        assert second.returncode == 0  # another holds the lock: it leaves at once
        assert first.poll() is None
        assert first.wait(timeout=WAIT) == 0  # idle for 1.5 s: it stops, and cleans up
        assert not socket_path.exists()
    finally:
        if first.poll() is None:
            first.kill()
    # a key that is not the generator's: it does not start
    stale = subprocess.run(
        [sys.executable, "-m", "toolnexus_gen.resident", "0" * 20, "1"],
        env=project.env,
        timeout=WAIT,
        check=False,
    )
    assert stale.returncode == 0 and project.sockets() == []


def test_a_request_with_another_key_or_a_bad_item_is_refused(warm: Project) -> None:
    project = warm
    assert project.build().returncode == 0
    path = project.wait_for_resident()
    key = path.stem

    def ask(message: Any) -> Any:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(WAIT)
            connection.connect(str(path))
            data = json.dumps(message).encode()
            connection.sendall(struct.pack("!Q", len(data)) + data)
            head = connection.recv(8, socket.MSG_WAITALL)
            if len(head) < 8:
                return "closed"
            (size,) = struct.unpack("!Q", head)
            return json.loads(connection.recv(size, socket.MSG_WAITALL))

    item = ["schema", {"type": "object"}, True]
    assert ask({"key": key, "op": "valid", "items": [item]}) == {"results": [True]}
    assert ask({"key": "x" * 20, "op": "valid", "items": [item]}) == {"results": None}
    assert ask({"key": key, "op": "run", "items": [item]}) == {"results": None}
    assert ask({"key": key, "op": "valid", "items": [item] * 40}) == {"results": None}
    assert ask({"key": key, "op": "valid", "items": [["schema"]]}) == "closed"
    # and it still answers after all that
    bad = ["schema", {"type": "strin"}, True]
    assert ask({"key": key, "op": "valid", "items": [item, bad]}) == {"results": [True, False]}


@pytest.mark.soak  # a kill test, waiting out a deadline: make test-all
def test_a_stopped_resident_holds_a_build_up_seconds_once_and_is_replaced(
    project: Project,
) -> None:
    assert project.build().returncode == 0
    project.wait_for_resident()
    (stopped,) = project.pids()
    os.kill(stopped, signal.SIGSTOP)  # stuck: it takes requests and never answers
    try:
        for name in ("alpha", "beta"):
            write_specs(
                project.root / "specs", {f"{name}.json": spec(name, {"x": {"type": "string"}})}
            )
        started = time.monotonic()
        result = project.build()
        took = time.monotonic() - started
        assert result.returncode == 0, result.stderr
        assert generated(project.root / "out") == reference(project.root)
        # one request's deadline, then no more asking: not one per model
        assert took < resident.ANSWER + 0.5 + 20, took
        deadline = time.monotonic() + WAIT
        while Path(f"/proc/{stopped}").exists() and _state(stopped) != "Z":
            assert time.monotonic() < deadline, "the stuck resident was not stopped"
            time.sleep(0.05)
        # and that build, having made its models itself, started a new one
        deadline = time.monotonic() + WAIT
        while not [pid for pid in project.pids() if pid != stopped]:
            assert time.monotonic() < deadline, "no new resident"
            time.sleep(0.05)
    finally:
        try:
            os.kill(stopped, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_a_killed_resident_is_replaced_and_sigterm_removes_the_socket(project: Project) -> None:
    assert project.build().returncode == 0
    project.wait_for_resident()
    (first,) = project.pids()
    os.kill(first, signal.SIGKILL)  # its socket file stays behind
    time.sleep(0.2)
    assert project.sockets()
    edit(project)
    result = project.build()
    assert result.returncode == 0, result.stderr
    assert generated(project.root / "out") == reference(project.root)
    deadline = time.monotonic() + WAIT
    while not (project.pids() and project.pids() != [first] and project.sockets()):
        assert time.monotonic() < deadline, "the killed resident was not replaced"
        time.sleep(0.05)
    (second,) = project.pids()
    deadline = time.monotonic() + WAIT
    while True:  # until it listens (the killed one's socket was removed as it started)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(project.sockets()[0]))
                break
            except (OSError, IndexError):
                assert time.monotonic() < deadline, "the new resident does not listen"
                time.sleep(0.05)
    os.kill(second, signal.SIGTERM)
    deadline = time.monotonic() + WAIT
    while project.sockets():
        assert time.monotonic() < deadline, "SIGTERM left the socket"
        time.sleep(0.05)


def test_large_specs_go_one_request_at_a_time(warm: Project) -> None:
    """Answers larger than a socket's buffer: each is read before the next request is sent, so
    neither side waits on the other (every model still comes from the resident)."""
    project = warm
    assert project.build().returncode == 0
    project.wait_for_resident()
    many = {f"p{i:04}": {"type": "string", "description": "d" * 120} for i in range(1500)}
    for name in ("alpha", "beta"):
        write_specs(project.root / "specs", {f"{name}.json": spec(name, many)})
    result = project.build("-X", "importtime")
    assert result.returncode == 0, result.stderr[-2000:]
    assert not imported(result, "datamodel_code_generator")
    for name in ("alpha", "beta"):  # whole (byte equality is the other tests' business)
        model = (project.root / "out" / "models" / f"{name}.py").read_text()
        assert "p1499: StrictStr | None" in model and len(model) > 200_000


def test_a_pyproject_above_the_resident_or_the_project_changes_no_model(
    warm: Project,
) -> None:
    """datamodel-code-generator's formatter reads the nearest pyproject.toml: it is pointed at
    the root, so neither the resident's folder nor the build's decides a model."""
    project = warm
    above = project.run / "pyproject.toml"
    above.write_text("[tool\n")  # not even TOML
    (project.root / "pyproject.toml").write_text(
        "[tool.black]\nskip-string-normalization = true\nline-length = 30\n"
        '[tool.isort]\nknown_first_party = ["pydantic"]\n'
    )
    assert project.build().returncode == 0
    project.wait_for_resident()
    edit(project)
    try:
        result = project.build("-X", "importtime")
    finally:
        above.unlink()
    assert result.returncode == 0, result.stderr[-2000:]
    assert not imported(result, "datamodel_code_generator")
    assert generated(project.root / "out") == reference(project.root)


def test_the_key_follows_the_libraries_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import version

    from toolnexus_gen.incremental import cache

    for name in ("jsonschema", "pydantic_core"):
        assert cache.dist_version(name) == version(name)
    assert cache.dist_version("no_such_thing") == "-"
    before = resident._digest()
    real = cache.dist_version
    monkeypatch.setattr(
        cache, "dist_version", lambda name: "99.0" if name == "jsonschema" else real(name)
    )
    assert resident._digest() != before  # an upgraded jsonschema: another resident
