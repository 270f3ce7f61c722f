"""`build --watch`, driven for real: a watch process in its own project, edited as a user edits
(the package follows; an invalid edit prints its diagnostics and leaves the package untouched; a
burst of saves is one build; pyproject.toml is watched too), stopped with Ctrl-C (SIGINT: exit
0, no traceback). And Ctrl-C while a package is written takes effect once it is whole."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import cli, generated, snapshot, write_specs

from toolnexus_gen.fs import output

WAIT = 120.0  # seconds: a shared, busy machine can be slow; a pass is usually under a second

# `python -m toolnexus_gen`, started as from a terminal, where Ctrl-C (SIGINT) is heard. A process
# inherits an ignored SIGINT (the test run started in the background by a non-interactive shell,
# `make test &`, or by a CI runner), and Python then leaves it ignored: the watch would never hear
# the tests' Ctrl-C, and every stop() would wait out WAIT. So the child listens again first.
_CTRL_C_HEARD = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'toolnexus-gen'; runpy.run_module('toolnexus_gen', run_name='__main__')"
)


class Watch:
    """A `toolnexus-gen build --watch` process and what it printed so far."""

    def __init__(self, root: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CTRL_C_HEARD, "build", "--watch", *args],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, lines in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, lines), daemon=True).start()

    @staticmethod
    def _read(stream: object, lines: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.append(line)

    @property
    def text(self) -> str:
        return "".join(self.out) + "".join(self.err)

    def wait_for(self, what: Callable[[], bool], why: str) -> None:
        deadline = time.monotonic() + WAIT
        while not what():
            if self.process.poll() is not None:
                raise AssertionError(f"watch exited ({self.process.returncode}): {self.text}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {why}: {self.text}")
            time.sleep(0.02)

    def builds(self) -> int:
        return sum(line.startswith("changed: ") for line in self.out)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=WAIT)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_specs(
        tmp_path / "specs",
        {
            "get_weather.yaml": {
                "description": "Current weather for a city",
                "input_schema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
            "now.yaml": {"description": "Current time"},
        },
    )
    return tmp_path


@pytest.fixture
def watch(project: Path) -> Iterator[Watch]:
    running = Watch(project)
    running.wait_for(lambda: "watching for changes" in running.text, "the first build")
    yield running
    if running.process.poll() is None:
        running.process.kill()
        running.process.wait()


def holds(path: Path, text: str) -> Callable[[], bool]:
    return lambda: path.exists() and text in path.read_text("utf-8")


def test_the_package_follows_edits_and_an_invalid_edit_leaves_it_untouched(
    project: Path, watch: Watch
) -> None:
    schemas = project / "tools/schemas/openai.json"
    assert "Current time" in schemas.read_text()

    (project / "specs/now.yaml").write_text("description: The time where the user is\n")
    watch.wait_for(holds(schemas, "The time where the user is"), "a description edit")
    models = project / "tools/models/get_weather.py"
    spec = project / "specs/get_weather.yaml"
    optional = {"type": "object", "properties": {"city": {"type": "string"}}}
    spec.write_text(json.dumps({"description": "Current weather", "input_schema": optional}))
    watch.wait_for(holds(models, "city: StrictStr | None = None"), "a schema edit")
    watch.wait_for(lambda: "changed: specs/get_weather.yaml" in watch.text, "its report")

    before = snapshot(project / "tools")
    (project / "specs/now.yaml").write_text("description: [unclosed\n")
    watch.wait_for(lambda: "error[TN101]" in watch.text, "the diagnostics of an invalid edit")
    watch.wait_for(lambda: "keeps the last good build" in watch.text, "the note that says so")
    after = snapshot(project / "tools")
    assert after == before  # not a byte, not a timestamp

    (project / "specs/now.yaml").write_text("description: Fixed\n")
    watch.wait_for(holds(schemas, '"Fixed"'), "the fix")
    assert watch.stop() == 0
    assert generated(project / "tools") == from_scratch(project)


def from_scratch(project: Path) -> dict[str, bytes]:
    """What `toolnexus-gen build` writes in a copy of the project, without any cache."""
    copy = project.parent / f"{project.name}_fresh"
    shutil.copytree(project / "specs", copy / "specs")
    assert cli("build", cwd=copy).exit_code == 0
    return generated(copy / "tools")


def test_a_burst_of_saves_is_one_build(project: Path, watch: Watch) -> None:
    built = watch.builds()
    # The watch is paused while the burst is saved (as a busy machine might pause it), so the
    # burst reaches it whole, however slowly this test writes it.
    os.kill(watch.process.pid, signal.SIGSTOP)
    try:
        for i in range(12):
            spec = {"description": f"Burst tool {i}"}
            (project / f"specs/burst_{i:02}.json").write_text(json.dumps(spec))
            (project / f"specs/burst_{i:02}.json").write_text(json.dumps(spec) + "\n")
    finally:
        os.kill(watch.process.pid, signal.SIGCONT)
    schemas = project / "tools/schemas/anthropic.json"
    watch.wait_for(holds(schemas, "Burst tool 11"), "the burst")
    time.sleep(1.0)  # anything still to come would be a second build
    assert watch.builds() == built + 1, watch.text
    assert "changed: specs/burst_00.json and 11 more" in watch.text
    assert "14 tools" in "".join(watch.out)


def test_the_configuration_is_watched_too(project: Path, watch: Watch) -> None:
    (project / "pyproject.toml").write_text('[tool.toolnexus-gen]\ntargets = ["openai"]\n')
    watch.wait_for(lambda: "changed: pyproject.toml" in watch.text, "the configuration edit")
    watch.wait_for(lambda: not (project / "tools/schemas/gemini.json").exists(), "gemini gone")
    # a broken configuration is a located error, and the watch goes on
    (project / "pyproject.toml").write_text("[tool.toolnexus-gen\n")
    watch.wait_for(lambda: "error[TN801]" in watch.text, "the TOML error")
    (project / "pyproject.toml").write_text('[tool.toolnexus-gen]\ntargets = ["gemini"]\n')
    watch.wait_for(lambda: (project / "tools/schemas/gemini.json").exists(), "gemini back")
    assert watch.stop() == 0


def test_ctrl_c_stops_cleanly(project: Path, watch: Watch) -> None:
    assert watch.stop() == 0
    time.sleep(0.2)  # the readers drain the pipes
    assert "Traceback" not in watch.text and "Aborted" not in watch.text
    assert "stopped watching" in watch.text


def test_check_and_watch_do_not_go_together(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", "build", "--watch", "--check"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 2 and "cannot be used with --check" in done.stderr
    assert not (project / "tools").exists()


def test_ctrl_c_while_the_package_is_written_waits_for_it_to_be_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    files = {f"f{i}.txt": f"{i}\n" for i in range(5)}

    def interrupted(report: output.Report) -> None:  # as the record is saved: Ctrl-C
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the signal is not acted on here, but after the write
        (out / "recorded").write_text("yes")  # the rest of the lock's work still runs

    # as in a terminal, whatever this test run inherited (see _CTRL_C_HEARD)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            output.write(out, files, interrupted)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert {name: (out / name).read_text() for name in files} == files
    assert (out / "recorded").read_text() == "yes"


# -- a hostile look: links, a folder swapped, files vanishing, floods of events -----------------


def quiet_for(watch: Watch, seconds: float) -> int:
    """The builds reported after `seconds` without a change (what a late event would start)."""
    time.sleep(seconds)
    return watch.builds()


def test_a_link_out_of_the_spec_folder_is_refused_and_not_watched(
    project: Path, watch: Watch
) -> None:
    outside = project.parent / f"{project.name}_outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep/far.yaml").write_text("description: Far away\n")
    (outside / "one.yaml").write_text("description: One file\n")
    before = snapshot(project / "tools")
    built = watch.builds()
    (project / "specs/linked").symlink_to(outside, target_is_directory=True)
    (project / "specs/one.yaml").symlink_to(outside / "one.yaml")
    watch.wait_for(lambda: watch.text.count("error[TN121]") >= 2, "the links refused")
    watch.wait_for(lambda: "keeps the last good build" in watch.text, "the note")
    assert snapshot(project / "tools") == before
    settled = quiet_for(watch, 1.0)
    assert settled > built
    # what happens out there is none of the watch's business: no build, nothing read
    (outside / "deep/far.yaml").write_text("description: Changed far away\n")
    (outside / "deep/new.yaml").write_text("description: New far away\n")
    (outside / "one.yaml").write_text("description: One file, changed\n")
    assert quiet_for(watch, 1.0) == settled, watch.text
    (project / "specs/linked").unlink()
    (project / "specs/one.yaml").unlink()
    watch.wait_for(lambda: watch.builds() > settled, "the build once the links are gone")
    watch.wait_for(lambda: "0 files written, 15 unchanged" in watch.text, "told it is good again")
    quiet_for(watch, 0.5)
    assert generated(project / "tools") == from_scratch(project)
    assert watch.stop() == 0
    assert "Far away" not in (project / "tools/schemas/openai.json").read_text()


def test_a_spec_folder_swapped_for_a_link_is_followed(project: Path, watch: Watch) -> None:
    elsewhere = project.parent / f"{project.name}_elsewhere"
    elsewhere.mkdir()
    (elsewhere / "far.yaml").write_text("description: Far tool\n")
    schemas = project / "tools/schemas/openai.json"
    os.rename(project / "specs", project / "specs_old")
    (project / "specs").symlink_to(elsewhere, target_is_directory=True)
    watch.wait_for(holds(schemas, "Far tool"), "the build of the new folder")
    watch.wait_for(lambda: "Current time" not in schemas.read_text(), "the old tools gone")
    # and its edits are built: the watch is on the folder the link names now
    (elsewhere / "far.yaml").write_text("description: Far tool, edited\n")
    watch.wait_for(holds(schemas, "Far tool, edited"), "an edit in the new folder")
    (project / "specs_old/now.yaml").write_text("description: Not watched any more\n")
    time.sleep(1.0)
    assert "Not watched any more" not in schemas.read_text()
    assert watch.stop() == 0
    assert "Traceback" not in watch.text


def test_files_vanishing_while_it_builds_never_break_it(project: Path, watch: Watch) -> None:
    specs = project / "specs"
    for i in range(60):
        (specs / f"tool_{i:02}.json").write_text(json.dumps({"description": f"Tool {i}"}))
    deadline = time.monotonic() + 2.0
    i = 0
    while time.monotonic() < deadline:  # created and deleted as builds run
        path = specs / f"flicker_{i % 7}.json"
        if path.exists():
            path.unlink()
        else:
            path.write_text(json.dumps({"description": f"Flicker {i}"}))
        (specs / f"tool_{i % 60:02}.json").unlink()
        (specs / f"tool_{i % 60:02}.json").write_text(json.dumps({"description": f"Again {i}"}))
        i += 1
        time.sleep(0.003)
    for path in specs.glob("flicker_*.json"):
        path.unlink()
    (specs / "now.yaml").write_text("description: The end\n")
    schemas = project / "tools/schemas/openai.json"
    watch.wait_for(holds(schemas, "The end"), "the build after the storm")
    quiet_for(watch, 1.0)
    assert generated(project / "tools") == from_scratch(project)
    assert watch.process.poll() is None
    assert "Traceback" not in watch.text
    assert not list((project / "tools").rglob(f"*{output.TMP_SUFFIX}")), (
        "a temporary file left behind"
    )
    assert watch.stop() == 0


# 3,000 events (about 10 s): soak; the burst of a few saves stays in make test
@pytest.mark.soak
def test_thousands_of_events_in_a_burst_are_one_build(project: Path, watch: Watch) -> None:
    built = watch.builds()
    os.kill(watch.process.pid, signal.SIGSTOP)  # the whole burst reaches it at once
    try:
        for round_ in range(30):
            for i in range(100):
                spec = {"description": f"Flood tool {i} round {round_}"}
                (project / f"specs/flood_{i:03}.json").write_text(json.dumps(spec))
    finally:
        os.kill(watch.process.pid, signal.SIGCONT)
    schemas = project / "tools/schemas/anthropic.json"
    watch.wait_for(holds(schemas, "Flood tool 99 round 29"), "the flood")
    time.sleep(1.5)
    assert watch.builds() == built + 1, watch.text
    assert "changed: specs/flood_000.json and 99 more" in watch.text
    assert watch.process.poll() is None
    assert watch.stop() == 0


BOMB = "description: bomb\nx-a: &a [l, l, l, l, l, l, l, l, l, l]\n" + "".join(
    f"x-{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\n"
    for p, n in zip("abcdefg", "bcdefgh", strict=True)
)


def test_numbers_json_cannot_carry_and_alias_bombs_never_stop_it(
    project: Path, watch: Watch
) -> None:
    """Each input below was a traceback that ended `build --watch` (or an alias bomb that ran it
    out of memory); each is now a located error, and the watch goes on to the next build."""
    digits = "9" * 5000
    specs = project / "specs"
    steps = [
        (
            specs / "big.yaml",
            f"description: big\nx-n: {digits}\n",
            "specs/big.yaml:2:6: error[TN101]",
        ),
        (
            specs / "hex.yaml",
            f"description: hex\nx-n: 0x{'f' * 4000}\n",
            "specs/hex.yaml:2:6: error[TN101]",
        ),
        (
            specs / "far.json",
            '{"description": "far", "x-n": 1e999}',
            "specs/far.json:1:31: error[TN101]",
        ),
        (specs / "bomb.yaml", BOMB, "specs/bomb.yaml:2:16: error[TN104]"),
        (
            project / "pyproject.toml",
            f"[tool.toolnexus-gen]\nmax_tool_tokens = {digits}\n",
            "pyproject.toml:2:19: error[TN801]",
        ),
    ]
    for path, text, expected in steps:
        path.write_text(text)
        watch.wait_for(lambda expected=expected: expected in watch.text, expected)  # type: ignore[misc]
        built = watch.text.count(" in tools")
        path.unlink()
        watch.wait_for(lambda built=built: watch.text.count(" in tools") > built, "the next build")  # type: ignore[misc]
    assert "Traceback" not in watch.text
    assert watch.stop() == 0
