"""A cold build stages the model modules the workers make while it waits for the others
(fs.output.Staging): the package it writes is the one a build without staging writes, nothing
is staged in a folder the build may not write to, and a build that stops before it writes
leaves the disk as it found it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT, cli, generated, reference, write_specs

from toolnexus_gen.fs import output
from toolnexus_gen.fs.paths import TMP_SUFFIX


def _tmp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(f"*{TMP_SUFFIX}")) if folder.exists() else []


def test_staged_files_wait_as_temporary_files_and_write_renames_them(tmp_path: Path) -> None:
    out = tmp_path / "out"
    staging = output.Staging(out)
    staging.add("models/a.py", "A = 1\n")
    staging.add("models/b.py", "B = 1\n")
    staging.add("models/gone.py", "GONE = 1\n")  # staged, then not part of the build
    assert not (out / "models" / "a.py").exists()  # nothing in place before write
    assert len(_tmp_files(out)) == 3
    files = {
        "__init__.py": "",
        "models/a.py": "A = 1\n",
        "models/b.py": "B = 2\n",  # the build's text differs from the staged one: the build's
    }
    try:
        report = output.write(out, files, staged=staging)
    finally:
        staging.close()
    assert sorted(report.written) == sorted(files)
    for name, text in files.items():
        assert (out / name).read_text() == text
    assert _tmp_files(out) == []  # the unused and the outdated staged files are gone
    assert output.read_manifest(out) == sorted(files)
    assert output.check(out, files).up_to_date


def test_a_build_that_stops_before_writing_leaves_no_trace(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper" / "out"
    staging = output.Staging(out)
    staging.add("models/a.py", "A = 1\n")
    assert _tmp_files(out) and (out / output.LOCK).exists()
    staging.close()
    assert not (tmp_path / "new").exists()  # every folder it made is removed again


def test_a_stopped_build_keeps_an_existing_package_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "out"
    output.write(out, {"models/a.py": "A = 1\n"})
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    staging = output.Staging(out)
    staging.add("models/a.py", "A = 2\n")
    staging.add("models/new.py", "N = 1\n")
    staging.close()
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_nothing_is_staged_in_a_folder_holding_files_toolnexus_gen_did_not_write(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    (out / "models").mkdir(parents=True)
    (out / "models" / "mine.py").write_text("# the user's\n")
    staging = output.Staging(out)
    staging.add("models/a.py", "A = 1\n")
    try:
        assert _tmp_files(out) == [] and not (out / output.LOCK).exists()
        with pytest.raises(output.OwnershipError, match="models/mine.py"):
            output.write(out, {"models/a.py": "A = 1\n"}, staged=staging)
    finally:
        staging.close()
    assert sorted(p.name for p in out.rglob("*")) == ["mine.py", "models"]


def test_nothing_is_staged_through_a_symbolic_link(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    output.write(out, {"__init__.py": ""})
    (out / "models").symlink_to(elsewhere, target_is_directory=True)
    staging = output.Staging(out)
    staging.add("models/a.py", "A = 1\n")
    staging.close()
    assert list(elsewhere.iterdir()) == []


BUILD = """
import os, sys
from toolnexus_gen import parallel
from toolnexus_gen.codegen import models
from toolnexus_gen.fs import output
from toolnexus_gen.cli import main

parallel.workers = lambda: 2  # real workers, whatever this machine has
seen = []  # the model modules staged
others = []  # the other files, staged while the workers make the models
add = output.Staging.add

def counted(self, name, text):
    model = name.startswith("models/") and name != "models/__init__.py"
    (seen if model else others).append(name)
    if {stop_at} and len(seen) == {stop_at}:
        raise KeyboardInterrupt
    add(self, name, text)
    assert os.path.exists(self.staged[name][1])

output.Staging.add = counted
generate = models.make_model

def failing(job):  # datamodel-code-generator refusing one schema
    return (False, "ValueError: refused") if {fail} and job[1] == "Tool17Args" else generate(job)

models.make_model = failing
try:
    main(["build", "specs", "--out", "out", "-q"])
except SystemExit as exc:
    print("exit", exc.code, "staged", len(seen), "schemas/tools.json" in others)
except KeyboardInterrupt:
    print("interrupted", "staged", len(seen), "schemas/tools.json" in others)
"""


def _build(project: Path, stop_at: int = 0, fail: bool = False) -> str:
    code = textwrap.dedent(BUILD).format(stop_at=stop_at, fail=fail)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


SPECS = {
    f"tool_{i:02}.yaml": {
        "description": f"Tool {i}",
        "input_schema": {
            "type": "object",
            # each its own schema (tools with one schema share one model, made once)
            "properties": {
                "q": {"type": "string", "description": f"Query {i}"},
                "n": {"type": "integer"},
            },
            "required": ["q"],
        },
    }
    for i in range(40)  # enough to be made on the workers and staged
}


def test_a_cold_build_stages_its_models_and_writes_the_package_a_plain_build_writes(
    tmp_path: Path,
) -> None:
    project, plain = tmp_path / "staged", tmp_path / "plain"
    write_specs(project / "specs", SPECS)
    write_specs(plain / "specs", SPECS)
    # every model, as the workers made it, and the other files before them
    assert _build(project) == "exit 0 staged 40 True"
    out = project / "out"
    assert _tmp_files(out) == []
    # the same package as a build that stages nothing (one job: no workers, no staging)
    subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", "out", "-q"],
        cwd=plain,
        check=True,
        env={**os.environ, "TOOLNEXUS_GEN_JOBS": "1", "PYTHONPATH": str(ROOT)},
    )
    ours = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    theirs = {
        p.relative_to(plain / "out"): p.read_bytes()
        for p in (plain / "out").rglob("*")
        if p.is_file()
    }
    package = {name for name in ours if ".toolnexus-gen.cache" not in name.parts}
    assert len([n for n in package if n.parts[0] == "models"]) == 41  # with its __init__
    assert {n: ours[n] for n in package} == {n: theirs.get(n) for n in package}
    assert set(ours) == set(theirs)


@pytest.mark.parametrize(("stop_at", "fail"), [(10, False), (0, True)])
def test_a_cold_build_stopped_while_staging_leaves_nothing_on_disk(
    tmp_path: Path, stop_at: int, fail: bool
) -> None:
    write_specs(tmp_path / "specs", SPECS)
    result = _build(tmp_path, stop_at=stop_at, fail=fail)
    if fail:  # TN119 (invalid input: exit 2), once the other models are staged
        assert result == "exit 2 staged 39 True"
    else:  # Ctrl-C while the models come in (click says "Aborted!", exit 1)
        assert result == "exit 1 staged 10 True"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["specs"]


def test_a_build_waiting_on_a_lock_file_that_was_removed_locks_the_new_one(
    tmp_path: Path,
) -> None:
    import fcntl
    import threading
    import time

    out = tmp_path / "out"
    staging = output.Staging(out)
    staging.add("models/a.py", "A = 1\n")  # holds the lock of a folder it made
    inside = threading.Event()
    leave = threading.Event()

    def waiting_build() -> None:
        with output._locked(out):
            inside.set()
            leave.wait(10)

    waiter = threading.Thread(target=waiting_build)
    waiter.start()
    time.sleep(0.3)  # the waiter is blocked on the lock file staging made
    assert not inside.is_set()
    staging.close()  # wrote nothing: the folder goes, lock file included
    try:
        assert inside.wait(10)
        # the lock the waiter holds is the lock file now in the folder: a third build waits
        with open(out / output.LOCK, "a+b") as third:
            with pytest.raises(BlockingIOError):
                fcntl.flock(third.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        leave.set()
        waiter.join(10)


def test_a_link_planted_where_a_staged_file_goes_is_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    output.write(out, {"models/a.py": "A = 0\n", "models/b.py": "B = 0\n"})
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    staging = output.Staging(out)
    staging.add("models/a.py", "A = 1\n")  # the folder passed the checks; the build goes on
    planted = out / "models" / f".b.py.{os.getpid()}{TMP_SUFFIX}"
    planted.symlink_to(victim)
    try:
        staging.add("models/b.py", "B = 1\n")
        assert victim.read_text() == "precious\n" and "models/b.py" not in staging.staged
        with pytest.raises(output.OwnershipError, match="symbolic link"):
            output.write(out, {"models/a.py": "A = 1\n", "models/b.py": "B = 1\n"}, staged=staging)
    finally:
        staging.close()
    assert victim.read_text() == "precious\n"
    assert (out / "models" / "b.py").read_text() == "B = 0\n"


def test_an_empty_folder_given_stays_empty_when_the_build_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    staging = output.Staging(out)
    staging.add("models/a.py", "A = 1\n")
    staging.close()
    assert out.is_dir() and list(out.iterdir()) == []


def test_closing_never_hides_the_error_of_a_folder_that_cannot_be(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    out = tmp_path / "afile" / "out"
    staging = output.Staging(out)
    staging.add("models/a.py", "A = 1\n")  # nothing staged
    staging.close()  # and nothing raised
    with pytest.raises(OSError, match="afile/out"):
        output.write(out, {"models/a.py": "A = 1\n"}, staged=staging)


REBUILD = """
from toolnexus_gen import parallel
from toolnexus_gen.fs import output
from toolnexus_gen.cli import main

parallel.workers = lambda: 2  # real workers, whatever this machine has
staged = []
add = output.Staging.add

def counted(self, name, text):
    add(self, name, text)
    if name in self.staged:
        staged.append(name)

output.Staging.add = counted
try:
    main(["build", "specs", "--out", "out", "-q"])
except SystemExit as exc:
    print(exc.code, sorted(staged))
"""


def test_a_rebuild_stages_the_files_that_change_while_the_workers_make_its_model(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    write_specs(project / "specs", SPECS)
    assert cli("build", "specs", "--out", "out", cwd=project).exit_code == 0
    before = {p: p.stat().st_mtime_ns for p in (project / "out").rglob("*.py")}
    edited = {**SPECS["tool_07.yaml"], "input_schema": {"type": "object", "properties": {}}}
    write_specs(project / "specs", {"tool_07.yaml": edited})
    done = subprocess.run(
        [sys.executable, "-c", REBUILD],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    code, _, staged = done.stdout.strip().partition(" ")
    assert code == "0", done.stderr[-3000:]
    # the provider files carry the tool's schema; the package's Python files are unchanged
    assert ast.literal_eval(staged) == [
        f"schemas/{name}.json"
        for name in ("anthropic", "bedrock", "gemini", "mcp", "openai", "openai_responses", "tools")
    ]
    after = {p: p.stat().st_mtime_ns for p in (project / "out").rglob("*.py")}
    assert {p for p in before if after[p] != before[p]} == {project / "out/models/tool_07.py"}
    assert _tmp_files(project / "out") == []
    assert generated(project / "out") == reference(project)


def test_a_large_file_replaced_is_freed_beside_the_build_and_leaves_no_name_behind(
    tmp_path: Path,
) -> None:
    """A large file's old bytes are freed on a thread while the record is saved: the file is
    replaced by then, the name that held its old bytes is gone once write returns, and a name
    left by a build killed before it could remove it goes with the next build."""
    out = tmp_path / "out"
    big = "x" * output.ASIDE_MIN
    output.write(out, {"schemas/a.json": big + "1", "small.py": "A = 1\n"})
    inode = (out / "schemas/a.json").stat().st_ino
    seen: list[list[str]] = []

    def then(report: output.Report) -> None:  # the cache is saved while the thread frees
        assert (out / "schemas/a.json").read_text() == big + "2"
        seen.append(_tmp_files(out))

    output.write(out, {"schemas/a.json": big + "2", "small.py": "A = 2\n"}, then)
    assert (out / "schemas/a.json").stat().st_ino != inode  # replaced, not written in place
    assert seen and all(name.endswith(f".old{TMP_SUFFIX}") for name in seen[0])
    assert _tmp_files(out) == []
    leftover = out / "schemas" / f".a.json.99999.old{TMP_SUFFIX}"
    os.link(out / "schemas/a.json", leftover)  # as a build killed meanwhile leaves it
    output.write(out, {"schemas/a.json": big + "3", "small.py": "A = 3\n"})
    assert _tmp_files(out) == [] and (out / "schemas/a.json").read_text() == big + "3"


def test_a_spilled_file_is_written_ahead_and_its_text_let_go(tmp_path: Path) -> None:
    """Staging.spill: the provider files of a command line's build are staged as soon as they
    are assembled, and a short placeholder stands for each text till `write` renames the file
    into place; the package and its record are those of the texts."""
    import hashlib

    out = tmp_path / "out"
    big = '{"tools": [' + ", ".join(f'"tool {i} \u00e9"' for i in range(5000)) + "]}\n"
    staging = output.Staging(out)
    marker = staging.spill("schemas/mcp.json", [big[:10], big[10:]])
    assert marker != big and len(marker) < 100 and _tmp_files(out)
    files = {"__init__.py": "", "schemas/mcp.json": marker}
    try:
        report = output.write(out, files, staged=staging)
    finally:
        staging.close()
    assert (out / "schemas/mcp.json").read_text("utf-8") == big
    digest = hashlib.sha256(big.encode("utf-8")).hexdigest()
    assert report.recorded["schemas/mcp.json"][2] == digest
    assert sorted(report.written) == sorted(files) and _tmp_files(out) == []
    # the next build's spilled file holds the same bytes: left as it is, staged copy removed
    again = output.Staging(out, report.recorded)
    same = again.spill("schemas/mcp.json", iter([big]))
    try:
        second = output.write(
            out, {**files, "schemas/mcp.json": same}, known=report.recorded, staged=again
        )
    finally:
        again.close()
    assert sorted(second.unchanged) == ["__init__.py", "schemas/mcp.json"], second.written
    assert _tmp_files(out) == [] and (out / "schemas/mcp.json").read_text("utf-8") == big
    # a spilled file never reaches a build that stops: nothing is left
    stopped = output.Staging(tmp_path / "stopped")
    stopped.spill("schemas/mcp.json", [big])
    stopped.close()
    assert not (tmp_path / "stopped").exists()


def test_a_file_that_cannot_be_staged_keeps_its_text(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("the user's")  # not toolnexus-gen's: nothing is staged here
    staging = output.Staging(out)
    try:
        assert staging.spill("schemas/mcp.json", iter(["[", "]\n"])) == "[]\n"
    finally:
        staging.close()
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]


def test_entries_kept_compressed_write_the_package_plain_entries_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build of thousands of specs keeps each provider entry compressed (ir.Packed) till it
    is rendered; a smaller one keeps the text. Both write the same package, byte for byte."""
    from toolnexus_gen.ir import Packed
    from toolnexus_gen.pipeline import build

    packed_entries: list[int] = []
    real_init = Packed.__init__

    def counted(self: Packed, text: str) -> None:
        packed_entries.append(len(text))
        real_init(self, text)

    monkeypatch.setattr(Packed, "__init__", counted)
    outs = {}
    for name, least in (("plain", build.PACK_MIN), ("packed", 1)):
        monkeypatch.setattr(build, "PACK_MIN", least)
        project = tmp_path / name
        write_specs(project / "specs", SPECS)
        result = cli("build", "specs", "--out", "out", "-q", cwd=project)
        assert result.exit_code == 0, result.output + result.stderr
        outs[name] = generated(project / "out")
        if name == "plain":
            assert packed_entries == []  # 40 specs: nothing compressed
    assert len(packed_entries) >= 40 * 6  # every spec's entries, one per provider file
    assert outs["packed"] == outs["plain"]
