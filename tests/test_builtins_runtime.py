"""The built-in tools at run time (toolnexus_runtime.builtins), through a generated package's
Toolkit: every path confined to the workspace (escapes by `..`, absolute paths and symbolic
links, also links made after the Toolkit), bash killed as a process group, outputs capped,
webfetch refusing non-http(s) URLs and private addresses (also on redirects), apply_patch all or
nothing, question through `ask`, and the skill tool."""

from __future__ import annotations

import asyncio
import http.server
import os
import socket
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from conftest import build_in
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolnexus_runtime import ToolContext
from toolnexus_runtime.builtins import grep as grep_module
from toolnexus_runtime.builtins import pages, web
from toolnexus_runtime.builtins import workspace as workspace_module
from toolnexus_runtime.builtins.wildcard import compile_glob
from toolnexus_runtime.builtins.workspace import Workspace
from toolnexus_runtime.core import ToolError

SKILL = "---\nname: pdf\ndescription: Fill PDF forms\n---\n# PDF\nRun scripts/fill.py.\n"


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("builtins")
    (folder / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\nbuiltins = true\nskills = "skills"\n'
    )
    (folder / "skills/pdf/scripts").mkdir(parents=True)
    (folder / "skills/pdf/SKILL.md").write_text(SKILL)
    (folder / "skills/pdf/scripts/fill.py").write_text("print('filled')\n")
    return build_in(folder, {"now.yaml": {"description": "Current time"}})


class Handlers:
    def now(self, args: Any, ctx: ToolContext) -> str:
        return "12:00"


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """A workspace `ws` beside a folder `outside` holding a secret; links inside point out."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside/secret.txt").write_text("SECRET\n")
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src/app.py").write_text("def main():\n    return 1\n")
    (ws / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (ws / "link_out").symlink_to(tmp_path / "outside")
    (ws / "secret_link.txt").symlink_to(tmp_path / "outside/secret.txt")
    (ws / "link_in.txt").symlink_to(ws / "notes.txt")
    return tmp_path


@pytest.fixture
def tk(pkg: Any, place: Path) -> Iterator[Any]:
    toolkit = pkg.Toolkit(Handlers(), workspace=place / "ws")
    yield toolkit
    toolkit.close()


def run(tk: Any, tool: str, **args: Any) -> Any:
    return tk.execute_sync(tool, args)


def timed(tk: Any, tool: str, args: dict[str, Any], within: float = 10) -> tuple[Any, float, float]:
    """(result, seconds taken, the longest the event loop was held) of one call made on a loop
    with a heartbeat; a test failure when it takes longer than `within` seconds."""

    async def main() -> tuple[Any, float, float]:
        beats = [time.monotonic()]

        async def beat() -> None:
            while True:
                await asyncio.sleep(0.02)
                beats.append(time.monotonic())

        heart = asyncio.ensure_future(beat())
        started = time.monotonic()
        try:
            result = await asyncio.wait_for(tk.execute(tool, args), within)
        except asyncio.TimeoutError:  # noqa: UP041 (distinct on 3.10)
            pytest.fail(f"{tool} still running after {within} s")
        finally:
            heart.cancel()
        took = time.monotonic() - started
        beats.append(time.monotonic())
        return result, took, max(b - a for a, b in zip(beats, beats[1:], strict=False))

    return asyncio.run(main())


def outside(place: Path) -> dict[str, bytes]:
    return {
        p.relative_to(place).as_posix(): p.read_bytes()
        for p in sorted((place / "outside").rglob("*"))
        if p.is_file()
    }


# -- the workspace --------------------------------------------------------------------------


ESCAPES = ["../outside/secret.txt", "src/../../outside/secret.txt", "link_out/secret.txt"]


@pytest.mark.parametrize("path", [*ESCAPES, "secret_link.txt", "ABSOLUTE"])
def test_no_file_tool_reads_or_writes_outside(tk: Any, place: Path, path: str) -> None:
    if path == "ABSOLUTE":
        path = str(place / "outside/secret.txt")
    before = outside(place)
    for name, args in [
        ("read", {"path": path}),
        ("write", {"path": path, "content": "pwned"}),
        ("edit", {"path": path, "oldString": "SECRET", "newString": "pwned"}),
        ("grep", {"pattern": "SECRET", "path": path}),
        ("glob", {"pattern": "*", "path": path}),
        ("bash", {"command": "pwd", "workdir": path}),
        ("apply_patch", {"patchText": f"*** Begin Patch\n*** Delete File: {path}\n*** End Patch"}),
    ]:
        result = run(tk, name, **args)
        assert result.is_error, (name, result.output)
        assert "outside the workspace" in result.output, (name, result.output)
        assert "SECRET" not in result.output
    assert outside(place) == before


def test_paths_inside_work_absolute_or_through_links_inside(tk: Any, place: Path) -> None:
    ws = place / "ws"
    assert run(tk, "read", path=str(ws / "notes.txt")).output == "alpha\nbeta\ngamma\n"
    assert run(tk, "read", path="link_in.txt").output == "alpha\nbeta\ngamma\n"
    assert run(tk, "read", path="src/../notes.txt", offset=2, limit=1).output.startswith("beta\n")
    assert not run(tk, "write", path="new/deep/file.txt", content="x").is_error
    assert (ws / "new/deep/file.txt").read_text() == "x"


def test_a_link_made_after_the_toolkit_is_refused_too(tk: Any, place: Path) -> None:
    ws = place / "ws"
    (ws / "later").symlink_to(place / "outside")
    assert "outside the workspace" in run(tk, "read", path="later/secret.txt").output
    assert "outside the workspace" in run(tk, "write", path="later/x.txt", content="x").output
    (ws / "notes.txt").unlink()
    (ws / "notes.txt").symlink_to(place / "outside/secret.txt")  # a file replaced by a link
    assert (
        "outside the workspace"
        in run(tk, "edit", path="notes.txt", oldString="S", newString="s").output
    )
    assert outside(place) == {"outside/secret.txt": b"SECRET\n"}
    # walks never follow links: the secret is not found through link_out or later
    assert run(tk, "grep", pattern="SECRET").output == "No matches."


def test_a_link_swapped_in_after_the_check_fails_the_open(place: Path) -> None:
    """The time-of-check race: the path is checked, then a folder on it becomes a link."""
    ws = Workspace(place / "ws")
    (place / "ws/sub").mkdir()
    (place / "ws/sub/f.txt").write_text("inside")
    (place / "outside/f.txt").write_text("outside")
    rel = ws.locate("sub/f.txt")
    (place / "ws/sub/f.txt").unlink()
    (place / "ws/sub").rmdir()
    (place / "ws/sub").symlink_to(place / "outside")
    with pytest.raises(ToolError, match="changed while it was being used"):
        ws.read_bytes(rel, 100)
    with pytest.raises(ToolError, match="changed while it was being used"):
        ws.write_bytes(rel, b"pwned")
    assert (place / "outside/f.txt").read_text() == "outside"


def test_a_workspace_that_does_not_exist_fails_when_the_toolkit_is_made(
    pkg: Any, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        pkg.Toolkit(Handlers(), workspace=tmp_path / "missing")
    with pytest.raises(ValueError, match="output_limit"):
        pkg.Toolkit(Handlers(), workspace=tmp_path, output_limit=0)


def test_grep_without_the_builtins_extra_fails_when_the_toolkit_is_made(
    pkg: Any, place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolnexus_runtime.builtins as builtins

    monkeypatch.setattr(builtins, "find_spec", lambda name: None)  # as without `regex`
    with pytest.raises(ImportError, match=r"toolnexus-runtime\[builtins\]"):
        pkg.Toolkit(Handlers(), workspace=place / "ws")


def test_the_default_workspace_is_the_current_folder(
    pkg: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    tk = pkg.Toolkit(Handlers())
    assert not run(tk, "write", path="here.txt", content="x").is_error
    assert (tmp_path / "here.txt").read_text() == "x"


SEGMENTS = ["..", ".", "src", "link_out", "link_in.txt", "secret_link.txt", "x", "", "/", "~"]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    path=st.lists(st.sampled_from(SEGMENTS) | st.text("ab./", max_size=4), max_size=6).map(
        "/".join
    ),
    tool=st.sampled_from(["read", "write", "edit", "glob", "grep", "patch_add", "patch_delete"]),
)
def test_random_paths_never_touch_anything_outside(
    tk: Any, place: Path, path: str, tool: str
) -> None:
    before = outside(place)
    siblings = sorted(p.name for p in place.iterdir())
    if tool == "patch_add":
        args: dict[str, Any] = {
            "patchText": f"*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch"
        }
        tool = "apply_patch"
    elif tool == "patch_delete":
        args = {"patchText": f"*** Begin Patch\n*** Delete File: {path}\n*** End Patch"}
        tool = "apply_patch"
    elif tool in ("glob", "grep"):
        args = {"pattern": "*" if tool == "glob" else "S", "path": path}
    elif tool == "edit":
        args = {"path": path, "oldString": "SECRET", "newString": "pwned"}
    elif tool == "write":
        args = {"path": path, "content": "pwned"}
    else:
        args = {"path": path}
    result = run(tk, tool, **args)
    assert "SECRET" not in result.output
    assert outside(place) == before
    assert sorted(p.name for p in place.iterdir()) == siblings  # nothing made beside ws


# -- the file tools -------------------------------------------------------------------------


def test_read_windows_caps_and_refuses_binaries(pkg: Any, place: Path) -> None:
    ws = place / "ws"
    (ws / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 5001)))
    (ws / "bin.dat").write_bytes(b"\x00\x01\x02")
    tk = pkg.Toolkit(Handlers(), workspace=ws, output_limit=200)
    first = run(tk, "read", path="long.txt").output
    assert first.startswith("line 1\nline 2\n")
    # the 2000-line window, cut at the limit, saying where to read on
    assert first.endswith(
        "\n\n[output cut at 200 characters: lines 1-26 shown whole; read on with offset=27, "
        "or read a smaller window with limit]"
    )
    window = run(tk, "read", path="long.txt", offset=4999, limit=5).output
    assert window == "line 4999\nline 5000\n"
    more = run(tk, "read", path="long.txt", offset=10, limit=2).output
    assert more == "line 10\nline 11\n\n[lines 10-11 shown; read on with offset=12]"
    assert "past the end" in run(tk, "read", path="long.txt", offset=9000).output
    assert "binary" in run(tk, "read", path="bin.dat").output
    assert "folder" in run(tk, "read", path="src").output
    assert "does not exist" in run(tk, "read", path="nope.txt").output


def test_edit_replaces_one_unique_match_unless_replace_all(tk: Any, place: Path) -> None:
    path = place / "ws/notes.txt"
    path.write_text("a = 1\nb = 1\n")
    twice = run(tk, "edit", path="notes.txt", oldString="= 1", newString="= 2")
    assert twice.is_error and "occurs 2 times" in twice.output
    assert path.read_text() == "a = 1\nb = 1\n"
    assert "not found" in run(tk, "edit", path="notes.txt", oldString="c", newString="d").output
    same = run(tk, "edit", path="notes.txt", oldString="a", newString="a")
    assert same.is_error and "the same" in same.output
    ok = run(tk, "edit", path="notes.txt", oldString="a = 1", newString="a = 3")
    assert ok.output == "Edited notes.txt (1 replacement)"
    every = run(tk, "edit", path="notes.txt", oldString=" = ", newString=": ", replaceAll=True)
    assert every.output == "Edited notes.txt (2 replacements)"
    assert path.read_text() == "a: 3\nb: 1\n"
    os.chmod(path, 0o640)
    run(tk, "edit", path="notes.txt", oldString="b", newString="c")
    assert (path.stat().st_mode & 0o777) == 0o640  # a replaced file keeps its mode


def test_grep_and_glob_walk_the_workspace_within_limits(tk: Any, place: Path) -> None:
    ws = place / "ws"
    (ws / ".git").mkdir()
    (ws / ".git/config").write_text("main = 1\n")
    (ws / "node_modules/dep").mkdir(parents=True)
    (ws / "node_modules/dep/index.js").write_text("function main() {}\n")
    (ws / "src/util.ts").write_text("export const main = 2\n")
    assert run(tk, "grep", pattern=r"main").output == (
        "src/app.py:1:def main():\nsrc/util.ts:1:export const main = 2"
    )
    assert (
        run(tk, "grep", pattern="main", include="*.ts").output
        == "src/util.ts:1:export const main = 2"
    )
    assert run(tk, "grep", pattern="main", path="src/app.py").output == "src/app.py:1:def main():"
    limited = run(tk, "grep", pattern="a", limit=1).output
    assert limited == "notes.txt:1:alpha\n[stopped at 1 matches; narrow the search or raise limit]"
    assert "invalid regular expression" in run(tk, "grep", pattern="(").output
    assert run(tk, "glob", pattern="*.py").output == "src/app.py"
    assert run(tk, "glob", pattern="src/*.{py,ts}").output == "src/app.py\nsrc/util.ts"
    assert run(tk, "glob", pattern="**/*.ts").output == "src/util.ts"
    assert run(tk, "glob", pattern="*.ts", path="src").output == "src/util.ts"
    many = run(tk, "glob", pattern="*", limit=2).output
    assert many == "notes.txt\nsrc/app.py\n[2 of 3 paths shown; narrow the pattern or raise limit]"
    assert "No files found." == run(tk, "glob", pattern="*.rs").output


# -- apply_patch ----------------------------------------------------------------------------

PATCH = """*** Begin Patch
*** Add File: docs/new.md
+# New
+text
*** Update File: notes.txt
@@ alpha
-beta
+BETA
*** Update File: src/app.py
*** Move to: src/main.py
@@ def main():
-    return 1
+    return 2
*** Delete File: old.txt
*** End Patch"""


def test_apply_patch_adds_updates_moves_and_deletes(tk: Any, place: Path) -> None:
    ws = place / "ws"
    (ws / "old.txt").write_text("old\n")
    result = run(tk, "apply_patch", patchText=PATCH)
    assert result.output == (
        "Applied the patch:\nA docs/new.md\nM notes.txt\nM src/app.py -> src/main.py\nD old.txt"
    )
    assert (ws / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"
    assert not (ws / "old.txt").exists()
    # one file twice (here through a link to it) is refused, not applied twice
    twice = (
        "*** Begin Patch\n*** Delete File: link_in.txt\n*** Delete File: notes.txt\n*** End Patch"
    )
    assert "more than one operation" in run(tk, "apply_patch", patchText=twice).output
    assert (ws / "docs/new.md").read_text() == "# New\ntext\n"
    assert (ws / "src/main.py").read_text() == "def main():\n    return 2\n"
    assert not (ws / "src/app.py").exists()


def test_a_patch_whose_second_hunk_fails_writes_nothing(tk: Any, place: Path) -> None:
    ws = place / "ws"
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file() and not p.is_symlink()}
    patch = """*** Begin Patch
*** Add File: added.txt
+new
*** Update File: notes.txt
@@
-alpha
+ALPHA
@@
-no such line
+x
*** End Patch"""
    result = run(tk, "apply_patch", patchText=patch)
    assert result.is_error
    assert "notes.txt, hunk 2" in result.output and "no such line" in result.output
    assert not (ws / "added.txt").exists()
    assert {
        p: p.read_bytes() for p in ws.rglob("*") if p.is_file() and not p.is_symlink()
    } == before


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("*** Update File: notes.txt\n-x\n*** End Patch", "must start with"),
        ("*** Begin Patch\n*** Update File: notes.txt\n-alpha", "must end with"),
        ("*** Begin Patch\n*** Add File: notes.txt\n+x\n*** End Patch", "already exists"),
        ("*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch", "does not exist"),
        ("*** Begin Patch\n*** Add File: a.txt\nno plus\n*** End Patch", "starts with '+'"),
        ("*** Begin Patch\nstray\n*** End Patch", "expected '*** Add/Update/Delete File"),
    ],
)
def test_malformed_patches_are_error_results(tk: Any, patch: str, message: str) -> None:
    result = run(tk, "apply_patch", patchText=patch)
    assert result.is_error and message in result.output


# -- bash -----------------------------------------------------------------------------------


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (killed, not yet reaped by its parent) counts as gone
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_bash_runs_in_the_workspace_and_reports_the_exit_code(tk: Any, place: Path) -> None:
    ok = run(tk, "bash", command="pwd; echo err >&2", description="where am I")
    assert ok.output == f"{place / 'ws'}\nerr\n"
    assert run(tk, "bash", command="pwd", workdir="src").output == f"{place / 'ws/src'}\n"
    failed = run(tk, "bash", command="echo partial; exit 7")
    assert failed.is_error and failed.output == "partial\n\nbash: command exited with code 7"


def test_bash_kills_the_whole_group_at_its_timeout(tk: Any, place: Path) -> None:
    started = time.monotonic()
    result = run(
        tk, "bash", command="sleep 30 & echo $! > child.pid; echo started; sleep 30", timeout=500
    )
    assert time.monotonic() - started < 10
    assert result.is_error and "timed out after 500 ms" in result.output
    assert result.output.startswith("started\n")
    child = int((place / "ws/child.pid").read_text())
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the background child outlived the timeout"


def test_a_background_child_left_behind_does_not_outlive_the_call(tk: Any, place: Path) -> None:
    started = time.monotonic()
    result = run(tk, "bash", command="(sleep 30; echo late) & echo $! > child.pid; echo done")
    assert result.output == "done\n" and time.monotonic() - started < 10
    child = int((place / "ws/child.pid").read_text())
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)


def test_bash_output_is_capped_with_a_note(pkg: Any, place: Path) -> None:
    tk = pkg.Toolkit(Handlers(), workspace=place / "ws", output_limit=100)
    result = run(tk, "bash", command="yes x | head -c 1000000")
    assert result.output.startswith("x\nx\n")
    assert "[output cut: the first 100 characters shown" in result.output
    assert len(result.output) < 200


def test_allow_shell_false_switches_bash_off(pkg: Any, place: Path) -> None:
    tk = pkg.Toolkit(Handlers(), workspace=place / "ws", allow_shell=False)
    result = run(tk, "bash", command="touch ran")
    assert result.is_error and "allow_shell=False" in result.output
    assert not (place / "ws/ran").exists()


def test_a_toolkit_timeout_kills_the_group_too(pkg: Any, place: Path) -> None:
    tk = pkg.Toolkit(Handlers(), workspace=place / "ws", timeout=0.5)
    result = run(tk, "bash", command="echo $$ > shell.pid; sleep 30")
    assert result.is_error and result.error_type == "timeout"
    shell = int((place / "ws/shell.pid").read_text())
    deadline = time.monotonic() + 5
    while alive(shell) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(shell)


# -- question and todowrite -----------------------------------------------------------------


def test_question_asks_through_the_callback(pkg: Any, place: Path) -> None:
    asked: list[Any] = []

    def ask(questions: list[dict[str, Any]]) -> str:
        asked.append(questions)
        return "blue"

    async def ask_async(questions: list[dict[str, Any]]) -> dict[str, str]:
        return {"answer": questions[0]["question"]}

    question = [{"question": "Colour?", "options": ["red", "blue"]}]
    tk = pkg.Toolkit(Handlers(), workspace=place / "ws", ask=ask)
    assert run(tk, "question", questions=question).output == "blue"
    assert asked == [[{"question": "Colour?", "options": ["red", "blue"]}]]
    tk = pkg.Toolkit(Handlers(), workspace=place / "ws", ask=ask_async)
    assert run(tk, "question", questions=question).output == '{"answer": "Colour?"}'
    nobody = run(pkg.Toolkit(Handlers(), workspace=place / "ws"), "question", questions=question)
    assert nobody.is_error and "No one can be asked" in nobody.output


def test_todowrite_renders_the_list(tk: Any) -> None:
    todos = [
        {"id": "1", "text": "read the code", "completed": True},
        {"id": "2", "text": "fix it", "completed": False},
    ]
    assert run(tk, "todowrite", todos=todos).output == "[x] read the code\n[ ] fix it"
    assert run(tk, "todowrite", todos=[]).output == "(no todos)"
    bad = run(tk, "todowrite", todos=[{"id": "1", "text": "x"}])
    assert bad.is_error and "completed" in bad.output  # the typed model answers first


# -- skills ---------------------------------------------------------------------------------


def test_the_skill_tool_returns_the_body_and_the_files_beside_it(tk: Any, pkg: Any) -> None:
    assert run(tk, "skill", name="pdf").output == (
        '<skill_content name="pdf">\n# Skill: pdf\n\n# PDF\nRun scripts/fill.py.\n\n'
        "Base directory for this skill: skills/pdf\n"
        "Relative paths in this skill (e.g., scripts/, reference/) are relative to this base "
        "directory.\n\n<skill_files>\n<file>skills/pdf/scripts/fill.py</file>\n</skill_files>\n"
        "</skill_content>"
    )
    unknown = run(tk, "skill", name="docx")
    assert unknown.is_error and "pdf" in unknown.output
    assert pkg.skills_prompt().endswith("## Available Skills\n- **pdf**: Fill PDF forms")


# -- webfetch -------------------------------------------------------------------------------

PAGE = b"<html><head><title>T</title><script>var x = 1</script></head><body><h1>Hello</h1><p>A <a href='/b'>link</a> here.</p></body></html>"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (the base class's name)
        path, _, query = self.path.partition("?")
        if path == "/redirect":
            self.send_response(302)
            self.send_header("Location", query)
            self.end_headers()
            return
        body, kind, status = {
            "/page": (PAGE, "text/html; charset=utf-8", 200),
            "/plain": (b"just text " * 50, "text/plain", 200),
            "/image": (b"\x89PNG", "image/png", 200),
            "/big": (b"x" * (web.MAX_BYTES + 10), "text/plain", 200),
            "/missing": (b"no", "text/plain", 404),
        }.get(path, (b"?", "text/plain", 404))
        if path == "/slow":
            time.sleep(3)
            body, kind, status = b"slow", "text/plain", 200
        self.send_response(status)
        self.send_header("Content-Type", kind)
        if path != "/big":
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture
def fetch(pkg: Any, place: Path) -> Any:
    def fetch(url: str, allow: list[str] | None = None, **args: Any) -> Any:
        tk = pkg.Toolkit(Handlers(), workspace=place / "ws", fetch_allow=allow, output_limit=300)
        return run(tk, "webfetch", url=url, **args)

    return fetch


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "http and https URLs only"),
        ("ftp://example.com/x", "http and https URLs only"),
        ("http://127.0.0.1/", "127.0.0.1 resolves to 127.0.0.1, a loopback, private"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 resolves to 169.254.169.254"),
        ("http://localhost/", "localhost resolves to 127.0.0.1"),
        ("http://0x7f000001/", "resolves to 127.0.0.1"),
        ("http://[::1]/", "resolves to ::1"),
        ("http://[::ffff:10.0.0.1]/", "a loopback, private"),
        ("http://10.1.2.3/", "a loopback, private"),
        ("http://user:pw@example.com/", "credentials"),
    ],
)
def test_webfetch_refuses_what_it_must_not_reach(fetch: Any, url: str, message: str) -> None:
    result = fetch(url)
    assert result.is_error and message in result.output, result.output


def test_webfetch_formats_from_an_allowed_host(fetch: Any, server: str) -> None:
    allow = ["127.0.0.1"]
    markdown = fetch(f"http://{server}/page", allow).output
    assert markdown == "T\n\n# Hello\n\nA [link](/b) here.\n"
    text = fetch(f"http://{server}/page", allow, format="text").output
    assert text == "Hello\nA link here.\n"  # the head (title, script) left out
    assert fetch(f"http://{server}/page", allow, format="html").output == PAGE.decode()
    plain = fetch(f"http://{server}/plain", allow).output
    assert plain.startswith("just text") and "[output cut: 300 of 500 characters shown]" in plain
    assert "HTTP 404" in fetch(f"http://{server}/missing", allow).output
    assert "image/png, not text" in fetch(f"http://{server}/image", allow).output
    assert "larger than" in fetch(f"http://{server}/big", allow).output
    slow = fetch(f"http://{server}/slow", allow, timeout=1)
    assert slow.is_error and "longer than the timeout (1 s)" in slow.output


def test_fetch_allow_limits_the_hosts_and_every_redirect_is_checked(
    fetch: Any, server: str
) -> None:
    allow = ["127.0.0.1"]
    assert "not in this toolkit's fetch_allow" in fetch("http://example.com/", allow).output
    for target in (
        "http://169.254.169.254/latest/meta-data/",
        f"http://localhost:{server.split(':')[1]}/page",
        "file:///etc/passwd",
    ):
        result = fetch(f"http://{server}/redirect?{target}", allow)
        assert result.is_error, target
        assert "fetch_allow" in result.output or "http and https" in result.output
    followed = fetch(f"http://{server}/redirect?/plain", allow)
    assert followed.output.startswith("just text")


def test_redirects_to_private_addresses_are_refused_after_resolution(
    fetch: Any, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without fetch_allow: a public host (resolved here to a public address, served by the local
    server) that redirects to the metadata endpoint or to a name for a loopback address."""
    real_resolve, real_connect = web._resolve, socket.create_connection
    port = int(server.split(":")[1])
    connected: list[tuple[str, int]] = []

    def resolve(host: str, port_: int) -> list[str]:
        return ["93.184.216.34"] if host == "public.test" else real_resolve(host, port_)

    def connect(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        connected.append(address)
        assert address[0] == "93.184.216.34", "only the checked address is ever connected to"
        return real_connect(("127.0.0.1", port), *args, **kwargs)

    monkeypatch.setattr(web, "_resolve", resolve)
    monkeypatch.setattr(web.socket, "create_connection", connect)
    assert fetch(f"http://public.test:{port}/plain").output.startswith("just text")
    for target in ("http://169.254.169.254/latest/meta-data/", f"http://localhost:{port}/plain"):
        result = fetch(f"http://public.test:{port}/redirect?{target}")
        assert result.is_error and "a loopback, private, link-local" in result.output, result.output
    assert connected == [("93.184.216.34", port)] * 3


def test_markdown_without_the_extra_says_so(
    fetch: Any, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "markdownify", None)
    result = fetch(f"http://{server}/page", ["127.0.0.1"])
    assert result.is_error and "toolnexus-runtime[webfetch]" in result.output
    assert not fetch(f"http://{server}/page", ["127.0.0.1"], format="text").is_error
    assert fetch(f"http://{server}/plain", ["127.0.0.1"]).output.startswith("just text")


# -- what a security review found: each test fails without its fix ----------------------------


def test_a_catastrophic_grep_pattern_stops_at_its_time_limit_off_the_loop(
    pkg: Any, tk: Any, place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_module, "GREP_SECONDS", 0.5)
    (place / "ws/a.txt").write_text("a" * 40 + "!\n")  # (a|aa)+$ tries ~fib(40) ways here
    result, took, held = timed(tk, "grep", {"pattern": "(a|aa)+$"})
    assert result.is_error and result.error_type == "ToolError"
    assert "grep stopped at its time limit (0.5 s) while matching in a.txt" in result.output
    assert took < 8 and held < 1.0
    # what was found before the limit comes back, with the note
    (place / "ws/0.txt").write_text("aa\n")
    found = timed(tk, "grep", {"pattern": "(a|aa)+$"})[0]
    assert not found.is_error and found.output.startswith("0.txt:1:aa\n[grep stopped at its")
    # the Toolkit's own timeout ends the call too, the loop never held
    short = pkg.Toolkit(Handlers(), workspace=place / "ws", timeout=0.3)
    result, took, held = timed(short, "grep", {"pattern": "(a|aa)+$", "path": "a.txt"})
    assert result.error_type == "timeout" and took < 5 and held < 1.0
    # the reviewer's pattern: the regex module sees through it
    (place / "ws/a.txt").write_text("a" * 28 + "!\n")
    assert run(tk, "grep", pattern="^(a+)+$", path="a.txt").output == "No matches."


def test_glob_and_include_patterns_are_matched_without_backtracking(tk: Any, place: Path) -> None:
    (place / "ws" / ("a" * 60)).write_text("x\n")
    stars = "*a" * 8 + "*b"  # as a regular expression: about 60**8 steps
    result, took, _ = timed(tk, "glob", {"pattern": stars}, within=5)
    assert result.output == "No files found." and took < 5
    result, took, _ = timed(tk, "grep", {"pattern": "x", "include": stars}, within=5)
    assert result.output == "No matches." and took < 5
    assert run(tk, "glob", pattern="*a" * 8).output == "a" * 60


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "src/app.py", True),
        ("*.py", "app.pyc", False),
        ("src/*.{py,ts}", "src/util.ts", True),
        ("src/*.{py,ts}", "src/a/util.ts", False),
        ("{a,{b,c}d}.txt", "cd.txt", True),
        ("{a,{b,c}d}.txt", "d.txt", False),
        ("**/*.ts", "util.ts", True),
        ("**/*.ts", "a/b/c/util.ts", True),
        ("src/**/x.py", "src/x.py", True),
        ("src/**/x.py", "src/a/b/x.py", True),
        ("src/**", "src", False),
        ("src/**", "src/a/b", True),
        ("a?c", "abc", True),
        ("a?c", "ac", False),
        ("[a-c]x", "bx", True),
        ("[!a-c]x", "bx", False),
        ("[^a]x", "bx", True),
        ("[]]x", "]x", True),
        ("{a", "{a", True),
        ("\\*", "*", True),
        ("\\*", "a", False),
        ("*ab*ab", "abab", True),
        ("*ab*ab", "aab", False),
        ("a*a", "a", False),
        ("*x?y*", "zxay", True),
        ("*x?y*", "zxy", False),
        ("[ab]*[ab]", "a", False),
        ("./src/*.py", "src/a.py", True),
        ("**/**/**/**/**/**/b", "/".join(["a"] * 60), False),
    ],
)
def test_glob_patterns_mean_what_they_say(pattern: str, path: str, matches: bool) -> None:
    assert compile_glob(pattern)(path) is matches


@pytest.fixture(scope="module")
def stalling_server() -> Iterator[str]:
    """/drip: headers, then one body byte every 0.3 s; /drip-head: the headers too; /continue:
    `100 Continue` forever."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve(conn: socket.socket) -> None:
        with conn, suppress(OSError):
            request = conn.recv(65536)
            if b" /continue " in request:
                while True:
                    conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n" * 50)
                    time.sleep(0.01)
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 999\r\n"
            if b" /drip-head " in request:  # the headers one byte at a time
                for byte in head:
                    time.sleep(0.3)
                    conn.sendall(bytes([byte]))
            conn.sendall(head + b"\r\n")
            for _ in range(999):
                time.sleep(0.3)
                conn.sendall(b"x")

    def accept() -> None:
        with suppress(OSError):
            while True:
                conn, _ = listener.accept()
                threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def test_webfetch_has_one_deadline_and_holds_no_thread_past_it(
    pkg: Any, place: Path, stalling_server: str
) -> None:
    tk = pkg.Toolkit(Handlers(), workspace=place / "ws", fetch_allow=["127.0.0.1"])

    async def main() -> tuple[list[Any], float, Any, Any]:
        started = time.monotonic()
        slow = [  # more than a default executor has threads
            tk.execute("webfetch", {"url": f"http://{stalling_server}/{path}", "timeout": 1})
            for path in ["drip", "drip-head"] * 4
        ]
        dripped = await asyncio.wait_for(asyncio.gather(*slow), 15)
        took = time.monotonic() - started
        read = await asyncio.wait_for(tk.execute("read", {"path": "notes.txt"}), 5)
        endless = {"url": f"http://{stalling_server}/continue", "timeout": 10}
        continued = await asyncio.wait_for(tk.execute("webfetch", endless), 15)
        return dripped, took, read, continued

    dripped, took, read, continued = asyncio.run(main())
    assert all("took longer than the timeout (1 s)" in r.output for r in dripped), dripped[0]
    assert took < 6
    assert read.output == "alpha\nbeta\ngamma\n"
    assert continued.is_error
    assert "more than 10 interim (100 Continue) responses" in continued.output
    deadline = time.monotonic() + 5  # the sockets were shut down: every fetch thread ends
    while time.monotonic() < deadline and any(
        t.name == "toolnexus-builtin" for t in threading.enumerate()
    ):
        time.sleep(0.05)
    assert not [t for t in threading.enumerate() if t.name == "toolnexus-builtin"]


PAGES = {
    "/deep": b"<div>" * 3000 + b"deep text",
    "/huge": b"<p>" + b"word " * 250_000 + b"</p>",
    "/charset": b"<p>hi</p>",
    "/quadratic": b"<a" * 60_000,  # the standard HTML parser rescans the rest at every <a
}


class PageHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (the base class's name)
        body = PAGES[self.path]
        self.send_response(200)
        charset = "x-no-such" if self.path == "/charset" else "utf-8"
        self.send_header("Content-Type", f"text/html; charset={charset}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def pages_server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PageHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_html_is_converted_in_a_child_process_within_limits(
    pkg: Any, place: Path, pages_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tk = pkg.Toolkit(Handlers(), workspace=place / "ws", fetch_allow=["127.0.0.1"])

    def fetch(path: str, fmt: str = "markdown") -> Any:
        return timed(tk, "webfetch", {"url": f"http://{pages_server}{path}", "format": fmt}, 30)

    deep = fetch("/deep")[0]
    assert not deep.is_error, deep.output
    assert deep.output.startswith("[shown as text: the page nests its elements too deeply")
    assert deep.output.endswith("deep text\n")
    huge = fetch("/huge")[0]
    assert huge.output.startswith(
        "[shown as text: the page has 1250007 characters of HTML, more than the 1000000"
    )
    assert fetch("/charset")[0].output == "hi\n"  # an unknown charset: read as UTF-8
    monkeypatch.setattr(web, "RENDER_SECONDS", 1.0)
    result, took, held = fetch("/quadratic", "text")
    assert result.is_error and "to text took longer than 1 s and was stopped" in result.output
    assert took < 10 and held < 1.0


def test_a_module_written_in_the_workspace_is_never_imported_by_webfetch(
    fetch: Any, server: str, place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workspace on the import path (a script run from it): a markdownify.py the model
    wrote there is imported neither by the toolkit nor by the converter."""
    ws = place / "ws"
    (ws / "markdownify.py").write_text("open(__file__ + '.ran', 'w').close()\n")
    monkeypatch.syspath_prepend(str(ws))
    monkeypatch.delitem(sys.modules, "markdownify", raising=False)
    assert fetch(f"http://{server}/page", ["127.0.0.1"]).output.startswith("T\n\n# Hello")
    assert not (ws / "markdownify.py.ran").exists()


# An alarm that lands in a weakref callback is dropped by Python (and reported); the next one,
# 50 ms later, is not: that is what this test shows, so the report is expected here.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_markdown_too_slow_to_make_comes_back_as_text() -> None:
    dense = "<p>" + "<b>x</b> " * 40_000 + "</p>"
    text = pages.convert(dense, "markdown", markdown_seconds=0.2)
    assert text.startswith("[shown as text: converting it to markdown took longer than 0.2 s]")
    assert text.endswith("x x x\n")


def test_grep_never_waits_on_a_fifo(tk: Any, place: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = place / "ws/pipe"
    os.mkfifo(fifo)
    try:
        named = timed(tk, "grep", {"pattern": "x", "path": "pipe"}, within=5)[0]
        assert named.is_error and named.output == "pipe is not a regular file."
        assert run(tk, "grep", pattern="alpha").output == "notes.txt:1:alpha"
        # a file swapped for a FIFO between the walk and the open: skipped, not waited on
        walk = Workspace.files

        def swapped(self: Workspace, rel: str) -> Iterator[tuple[int, str, str]]:
            for folder, name, path in walk(self, rel):
                yield folder, name, path
                if path == "notes.txt":
                    yield folder, "pipe", "pipe"

        monkeypatch.setattr(Workspace, "files", swapped)
        assert timed(tk, "grep", {"pattern": "alpha"}, within=5)[0].output == "notes.txt:1:alpha"
    finally:  # a reader stuck on the FIFO (the bug) is let go
        with suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_read_of_a_huge_line_holds_little_memory(tk: Any, place: Path) -> None:
    with open(place / "ws/big.log", "wb") as handle:  # 256 MiB, no newline (sparse)
        handle.write(b"x" * 8192)
        handle.truncate(256 << 20)
    tracemalloc.start()
    try:
        result = run(tk, "read", path="big.log", limit=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not result.is_error
    assert result.output.startswith("x" * 8192)
    assert "[output cut at 30000 characters: line 1 is longer than that" in result.output
    assert peak < 16 << 20, peak


def test_edit_refuses_a_replacement_that_would_pass_the_file_limit(tk: Any, place: Path) -> None:
    path = place / "ws/a.txt"
    path.write_text("a" * 100_000)
    result = run(tk, "edit", path="a.txt", oldString="a", newString="b" * 200, replaceAll=True)
    assert result.is_error and result.output == (
        "replacing 100000 occurrences would make a.txt 20000000 bytes, more than edit's limit "
        "of 10485760; nothing was changed."
    )
    assert path.read_text() == "a" * 100_000


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the session is read from /proc")
def test_bash_kills_a_child_that_left_the_process_group(tk: Any, place: Path) -> None:
    leave = (
        f"{sys.executable} -c 'import os, time; os.setpgid(0, 0); print(os.getpid(), "
        "flush=True); time.sleep(60)' > child.pid & while [ ! -s child.pid ]; do sleep 0.05; done;"
    )
    for command, timeout in [(leave + " sleep 30", 2000), (leave + " echo done", 60_000)]:
        result = run(tk, "bash", command=command, timeout=timeout)
        assert ("timed out" in result.output) is (timeout == 2000), result.output
        child = int((place / "ws/child.pid").read_text())
        deadline = time.monotonic() + 5
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child), command
        (place / "ws/child.pid").unlink()


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("glob", {"pattern": "[z-a]"}, "invalid range z-a in [z-a]"),
        ("grep", {"pattern": "x", "include": "[z-a]"}, "invalid range z-a in [z-a]"),
        ("glob", {"pattern": "{a,b}" * 9}, "groups expand to more than 256 patterns"),
        ("grep", {"pattern": "((a{1000}){1000}){1000}"}, "unroll to more than 100000 steps"),
        ("webfetch", {"url": "http://[::1/"}, "'http://[::1/' is not a valid URL"),
        ("webfetch", {"url": "http://a\x00b/"}, "has an invalid host name"),
        ("webfetch", {"url": "http://127.0.0.1:99999/"}, "is not a valid URL: Port out of range"),
    ],
)
def test_bad_input_is_a_clear_refusal(
    tk: Any, tool: str, args: dict[str, Any], message: str
) -> None:
    result = run(tk, tool, **args)
    assert result.is_error and result.error_type == "ToolError", result.output
    assert message in result.output


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("::127.0.0.1", False),  # IPv4-compatible (deprecated)
        ("::8.8.8.8", False),
        ("::ffff:0:7f00:1", False),  # IPv4-translated (SIIT)
        ("64:ff9b::7f00:1", False),  # NAT64 to a loopback address
        ("64:ff9b::a00:1", False),  # ... to a private one
        ("64:ff9b::808:808", True),  # ... to a public one
        ("64:ff9b:1::a00:1", False),  # local-use NAT64
        ("2002:7f00:1::1", False),  # 6to4 around a loopback address
        ("2002:a9fe:a9fe::", False),  # ... around 169.254.169.254
        ("2002:808:808::1", True),
        ("fec0::1", False),  # site-local
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False),  # Teredo
        ("2606:4700::1111", True),
        ("8.8.8.8", True),
        ("100.64.0.1", False),
    ],
)
def test_ipv6_forms_of_private_addresses_are_not_public(address: str, public: bool) -> None:
    assert web.is_public(address) is public


PARTIAL = """*** Begin Patch
*** Add File: new.txt
+hello
*** Update File: src/app.py
@@
-    return 1
+    return 2
*** Add File: x/y/made.txt
+x
*** Add File: notes.txt/child.txt
+boom
*** End Patch"""


def snapshot(ws: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(ws).as_posix(): None if p.is_dir() else p.read_bytes()
        for p in sorted(ws.rglob("*"))
        if not p.is_symlink()
    }


def test_a_patch_is_applied_whole_or_not_at_all(tk: Any, place: Path) -> None:
    ws = place / "ws"
    before = snapshot(ws)
    result = run(tk, "apply_patch", patchText=PARTIAL)
    assert result.is_error and result.output == (
        "notes.txt/child.txt: notes.txt is a file, not a folder; nothing was changed."
    )
    assert snapshot(ws) == before  # no new.txt, app.py as it was, no x/y made
    nested = "*** Begin Patch\n*** Add File: d\n+file\n*** Add File: d/e\n+x\n*** End Patch"
    result = run(tk, "apply_patch", patchText=nested)
    assert result.is_error and result.output.startswith(
        "d is both a file of the patch and a folder on the way to d/e; nothing was changed"
    )
    assert snapshot(ws) == before


@pytest.mark.parametrize("failing", [1, 2, 3, 4])
def test_a_failure_while_writing_a_patch_undoes_every_step(
    tk: Any, place: Path, monkeypatch: pytest.MonkeyPatch, failing: int
) -> None:
    """The n-th rename into place (three writes, then the delete) fails: all is put back."""
    ws = place / "ws"
    (ws / "old.txt").write_text("old\n")
    os.chmod(ws / "notes.txt", 0o640)
    before = snapshot(ws)
    calls = 0
    real = os.rename

    def rename(*args: Any, **kwargs: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == failing:
            raise OSError(5, "Input/output error")
        real(*args, **kwargs)

    monkeypatch.setattr(workspace_module.os, "rename", rename)
    patch = """*** Begin Patch
*** Update File: notes.txt
-alpha
+ALPHA
*** Add File: new/deep/file.txt
+x
*** Update File: src/app.py
-    return 1
+    return 2
*** Delete File: old.txt
*** End Patch"""
    result = run(tk, "apply_patch", patchText=patch)
    assert result.is_error and "Input/output error" in result.output
    monkeypatch.undo()
    assert snapshot(ws) == before  # old contents back, new file and its folders gone, no temp
    assert (ws / "notes.txt").stat().st_mode & 0o777 == 0o640
    assert not run(tk, "apply_patch", patchText=patch).is_error  # and it applies when it can
    assert (ws / "notes.txt").read_text() == "ALPHA\nbeta\ngamma\n"
    assert not (ws / "old.txt").exists()
    assert [p.name for p in ws.rglob("*.tnx-*")] == []
