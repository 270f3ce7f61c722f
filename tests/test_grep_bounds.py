"""The built-in grep against hostile patterns: bounded memory and time whatever the pattern.

Two guards, each proven here: the size guard reads a pattern as the regex module's own parser
does (verbose-mode comments, inline flags, escapes, classes, nesting), so no way of writing a
pattern hides its compiled size; and matching runs in a child process with a memory limit that
is killed at the deadline, since the backtracking memory of a match grows with the text.

Hostile cases run in a subprocess under an address-space limit (RLIMIT_AS): a guard that lets
one through fails the test with a MemoryError there, instead of exhausting this machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import build_in
from toolnexus_runtime.builtins import grep as grep_module
from toolnexus_runtime.builtins.workspace import Workspace
from toolnexus_runtime.core import ToolError

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="address-space limits (RLIMIT_AS) as Linux has"
)

GIB = 1 << 30


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("grep")
    (folder / "pyproject.toml").write_text("[tool.toolnexus-gen]\nbuiltins = true\n")
    return build_in(folder, {"now.yaml": {"description": "Current time"}})


CALL = """
import importlib, json, resource, sys
limit, folder, name, workspace, args, seconds = sys.argv[1:]
resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
sys.path.insert(0, folder)
for module in ("toolnexus_runtime.builtins.grep", "toolnexus_runtime.builtins.files"):
    try:  # grep's time limit, wherever this runtime keeps it
        setattr(importlib.import_module(module), "GREP_SECONDS", float(seconds))
    except ImportError:
        pass
pkg = importlib.import_module(name)

class Handlers:
    def now(self, args, ctx):
        return "12:00"

result = pkg.Toolkit(Handlers(), workspace=workspace).execute_sync("grep", json.loads(args))
print(json.dumps({"is_error": result.is_error, "output": result.output}))
"""


def grep_limited(
    pkg: Any, workspace: Path, args: dict[str, Any], memory: int = GIB, seconds: float = 30
) -> tuple[bool, str]:
    """(is_error, output) of one grep call through the generated Toolkit, made in a process
    whose address space is capped at `memory`; a test failure if that process fails or takes
    more than a minute."""
    folder = Path(pkg.__file__).parent
    argv = [str(memory), str(folder.parent), folder.name, str(workspace), json.dumps(args)]
    try:
        done = subprocess.run(
            [sys.executable, "-c", CALL, *argv, str(seconds)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"grep {args} still running after 60 s")
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.splitlines()[-1])
    return answer["is_error"], answer["output"]


# -- the size guard ---------------------------------------------------------------------------

# Each compiles to (at least) a billion nodes, or to gigabytes; each was let through by a guard
# that scanned the pattern's text.
HIDDEN = {
    # a verbose-mode comment holding parentheses: the text scan paired them, the parser skips them
    "verbose comment": "(?x)(?:(?:a{1000}#(\n){1000}#(\n){1000}",
    "verbose flag set mid-pattern": "b(?x)(?:(?:a{1000}#(\n){1000}#(\n){1000}",
    "scoped verbose group": "(?:(?:(?x:a{1000}#(\n)){1000}){1000}",
    "inline comment group": "(?:(?:a{1000}(?#()){1000}(?#()){1000}",
    "spaces inside verbose counts": "(?x)(?:(?:a{ 1000 }){ 1000 }){ 1000 }",
    # full case folding: each copy of the set carries the strings its characters fold to
    "case-folded set": "(?:(?fi:[\\x00-\\U0010ffff]){300}){300}",
    # one count, but a large body: each of 90,000 copies holds 17 nodes
    "large repeated body": "(?:(a)(b)(c)(d)(e)(f)(g)(h)){90000}",
    "plain nesting": "((a{1000}){1000}){1000}",
    "open-ended counts": "(?:(?:a{1000,}){1000,}){1000,}",
    "counts beside an escaped brace": "(?:(?:a\\{1000}{1000}){1000}){1000}",
}


@pytest.mark.parametrize("pattern", HIDDEN.values(), ids=HIDDEN.keys())
def test_a_pattern_that_hides_its_size_is_refused_before_it_compiles(
    pkg: Any, tmp_path: Path, pattern: str
) -> None:
    (tmp_path / "a.txt").write_text("aaaa\n")
    is_error, output = grep_limited(pkg, tmp_path, {"pattern": pattern})
    assert is_error, output
    assert output.startswith("the pattern is too large to compile: its counted repeats"), output


def test_the_size_guard_bounds_what_compiling_costs(tmp_path: Path) -> None:
    """Property: every pattern the guard accepts, from a grammar of the ways a pattern can be
    written (groups of every kind, counted and open repeats, verbose mode with comments, inline
    comments, escapes, classes, case folding), compiles to less than 32 MiB of nodes (the
    compiled pattern's own __sizeof__; its peak while compiling is about twice that), with
    hypothesis steering toward the accepted patterns that compile largest. Run in a process
    capped at 1 GiB."""
    script = textwrap.dedent(
        """
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        import regex
        from hypothesis import HealthCheck, Phase, given, settings, strategies as st, target
        from toolnexus_runtime.builtins.grep import check_pattern
        from toolnexus_runtime.core import ToolError

        ATOMS = st.sampled_from(["a", "ab", "\\\\d", "[)(]", "[\\\\]{]", "\\\\{9\\\\}", "ß",
                                 "(?fi:[\\\\x00-\\\\U0010ffff])", "\\\\p{L}", "(?#){(})"])
        COUNTS = st.sampled_from([0, 1, 2, 10, 300, 1000, 9999])
        QUANTIFIERS = st.one_of(
            st.sampled_from(["", "*", "+?", "++"]),
            COUNTS.map(lambda n: "{%d}" % n),
            COUNTS.map(lambda n: "{%d,}" % n),
            st.tuples(COUNTS, COUNTS).map(lambda c: "{%d,%d}" % (min(c), max(c))),
            COUNTS.map(lambda n: "{ %d }" % n),
        )
        OPENERS = st.sampled_from(["(", "(?:", "(?>", "(?i:", "(?=", "(?x:"])
        COMMENTS = st.sampled_from(["", "", " # a ( [ { comment\\n", "(?#)", "(?#(){9})"])

        def group(inner):
            parts = st.tuples(OPENERS, st.lists(inner, min_size=1, max_size=2), COMMENTS,
                              QUANTIFIERS)
            return parts.map(lambda g: g[0] + "".join(g[1]) + g[2] + ")" + g[3])

        ONE = st.one_of(st.tuples(ATOMS, QUANTIFIERS).map("".join), group(ATOMS))
        TWO = group(ONE)
        PATTERNS = st.tuples(
            st.sampled_from(["", "(?x)", "(?i)"]),
            st.one_of(TWO, group(TWO), st.lists(TWO, min_size=2, max_size=3).map("|".join)),
        ).map("".join)

        @settings(max_examples=200, deadline=None, database=None, phases=[Phase.generate, Phase.target],
                  suppress_health_check=list(HealthCheck))
        @given(PATTERNS)
        def accepted_patterns_compile_small(pattern):
            try:
                check_pattern(pattern)
            except ToolError:
                return  # refused (too large, or invalid)
            regex.purge()
            try:
                size = regex.compile(pattern, regex.VERSION0 | regex.MULTILINE).__sizeof__()
            except (regex.error, ValueError, OverflowError, RecursionError):
                return
            target(size)  # toward the accepted patterns that cost the most
            assert size < 32 << 20, (pattern, size)

        accepted_patterns_compile_small()
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=240, cwd=tmp_path
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-4000:]


REAL = [
    r"def \w+\(",
    r"TODO|FIXME|XXX",
    r"^import (os|sys)$",
    r"[0-9a-f]{40}",
    r"\d{4}-\d{2}-\d{2}",
    r"(?:\d{1,3}\.){3}\d{1,3}",
    r"https?://[^\s\"']+",
    r"(?i)error:",
    r"(?x) class \s+ (\w+)  # a class and its name",
    r"\bself\.\w+\s*=",
    r"[A-Z][a-z]+(?:[A-Z][a-z]+)+",
    r"(['\"])(?:(?!\1).)*\1",
    r"^\s*#\s*type:\s*ignore",
    r"[\u4e00-\u9fff]{2,}",
    r"(?fi)straße",
    r"x{1000}",
]


@pytest.mark.parametrize("pattern", REAL)
def test_the_patterns_people_write_are_accepted(pattern: str) -> None:
    grep_module.check_pattern(pattern)


def test_an_overlong_or_invalid_pattern_is_a_clear_refusal() -> None:
    with pytest.raises(ToolError, match="grep takes at most 10000"):
        grep_module.check_pattern("a" * 10_001)
    with pytest.raises(ToolError, match=r"invalid regular expression '\(\?x\)\(#\)': missing \)"):
        grep_module.check_pattern("(?x)(#)")


# -- matching: memory and time --------------------------------------------------------------

# On a 5 MB line each of these asks for more memory than a process should hand a tool call:
# the regex module keeps a backtracking entry (and capture) per character a repeated group
# passes; `((.)*)*` copies them, gigabytes.
GREEDY = ["((.)*)*[xy]", "(?:a|a)*(?:a|a)*[xy]", "(a|ab)*[xy]", "(.)*[xy]"]


@pytest.mark.parametrize("pattern", GREEDY)
def test_a_match_needing_gigabytes_is_cut_at_the_memory_limit(
    pkg: Any, tmp_path: Path, pattern: str
) -> None:
    (tmp_path / "big.txt").write_text("a" * 5_000_000 + "\n")
    (tmp_path / "small.txt").write_text("x\n")
    is_error, output = grep_limited(pkg, tmp_path, {"pattern": pattern}, seconds=20)
    assert not is_error, output
    lines = output.splitlines()
    assert lines[0] == "small.txt:1:x"  # the other files are still searched
    assert lines[1].startswith(
        "[not searched to the end: big.txt, where the pattern needed more than grep's 512 MiB "
        "memory limit"
    ), output


def test_only_files_over_the_memory_limit_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("a" * 5_000_000 + "\n")
    with pytest.raises(ToolError, match="not searched to the end: big.txt, where the pattern"):
        grep_module.grep(Workspace(tmp_path), {"pattern": "(a|ab)*[xy]"}, 30_000, threading.Event())


HUNG = """
import os, sys, time
open(os.environ["MATCHER_PID"], "w").write(str(os.getpid()))
time.sleep(120)
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def gone(pid_file: Path) -> bool:
    deadline = time.monotonic() + 5
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_a_matcher_that_does_not_stop_is_killed_at_the_deadline(
    pkg: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the regex module's own timeout does not stop (a compile, an allocation) ends at
    the deadline: the process is killed, the call answers, the time limit said."""
    hung = tmp_path / "hung.py"
    hung.write_text(HUNG)
    monkeypatch.setenv("MATCHER_PID", str(tmp_path / "pid"))
    monkeypatch.setattr(grep_module, "MATCHER", str(hung))
    monkeypatch.setattr(grep_module, "GREP_SECONDS", 0.5)
    monkeypatch.setattr(grep_module, "GRACE", 0.5)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws/a.txt").write_text("a\n")
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"grep stopped at its time limit \(0.5 s\) while matching"):
        grep_module.grep(Workspace(tmp_path / "ws"), {"pattern": "a"}, 30_000, threading.Event())
    assert time.monotonic() - started < 10
    assert gone(tmp_path / "pid")
    # a call cancelled (a Toolkit timeout) kills it too
    (tmp_path / "pid").unlink()
    monkeypatch.setattr(grep_module, "GREP_SECONDS", 60)
    toolkit = pkg.Toolkit(type("H", (), {"now": lambda *a: "12:00"})(), workspace=tmp_path / "ws")
    toolkit_short = pkg.Toolkit(
        type("H", (), {"now": lambda *a: "12:00"})(), workspace=tmp_path / "ws", timeout=0.5
    )
    result = toolkit_short.execute_sync("grep", {"pattern": "a"})
    assert result.is_error and result.error_type == "timeout", result.output
    assert gone(tmp_path / "pid")
    toolkit.close()
    toolkit_short.close()


def matchers() -> list[int]:
    """The live matcher processes this process started."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.split(")")[-1].split()
        if int(fields[1]) == os.getpid() and fields[0] != "Z" and b"matcher.py" in command:
            found.append(int(entry))
    return found


def test_grep_holds_no_process_after_it_answers(pkg: Any, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    toolkit = pkg.Toolkit(type("H", (), {"now": lambda *a: "12:00"})(), workspace=tmp_path)
    outputs = [
        toolkit.execute_sync("grep", args).output
        for args in ({"pattern": "alpha"}, {"pattern": "(?<=a+)"}, {"pattern": "x", "path": "b"})
    ]
    assert outputs[0] == "a.txt:1:alpha"
    assert outputs[2] == "b does not exist."
    assert matchers() == []
    toolkit.close()
