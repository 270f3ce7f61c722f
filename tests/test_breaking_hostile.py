"""A REF from anybody (a pull request's branch, a folder): whatever it holds, `breaking` and
`changelog` give one error line and exit 2 or compare it, never a traceback, never a read
outside the package, never markup in a pull request comment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import cli
from test_breaking import bad_ref, built, commit, findings_of, git, history


def test_a_folder_named_like_a_revision_is_refused_unless_written_as_a_path(
    tmp_path: Path,
) -> None:
    repo = history(tmp_path)
    # the change under review adds a folder `v1/tools` holding its own package: compared with
    # itself, it would say "no change"
    (repo / "v1").mkdir()
    git("worktree", "add", "-q", str(tmp_path / "now"), "HEAD", cwd=repo)
    os.symlink(tmp_path / "now" / "tools", repo / "v1" / "tools")  # (a copy would do the same)
    said = bad_ref(repo, "v1")
    assert "names both a directory and a git revision" in said and "./v1" in said
    as_path = cli("breaking", "--against", "./v1", "--format", "json", cwd=repo)
    assert "names both" not in as_path.stderr
    tag = cli("breaking", "--against", "refs/tags/v1", "--format", "json", cwd=repo)
    assert tag.exit_code == 1 and "TN501" in {f["rule"] for f in findings_of(tag)}


def test_out_at_ref_is_a_literal_folder_inside_the_repository(tmp_path: Path) -> None:
    repo = history(tmp_path)
    for out, said in (
        (":/", "holds no generated package"),  # git's pathspec magic: the whole repository
        ("../elsewhere", "not a folder inside the repository"),
        ("/etc", "not a folder inside the repository"),
    ):
        pyproject = repo / "pyproject.toml"
        text = pyproject.read_text()
        pyproject.write_text(text.replace('out = "tools"', f"out = {json.dumps(out)}"))
        commit(repo, f"out = {out}")
        pyproject.write_text(text)  # the working tree's settings are fine
        assert said in bad_ref(repo, "HEAD"), out
        git("reset", "-q", "--hard", "HEAD~1", cwd=repo)


def test_what_ref_names_is_one_line_in_an_error(tmp_path: Path) -> None:
    # REF's settings name the folder: a line break in it must not forge a second line (a CI
    # log reads `::error::` lines from stderr too)
    repo = history(tmp_path)
    pyproject = repo / "pyproject.toml"
    text = pyproject.read_text()
    forged = r"x\u001b[31m\n::error file=README.md::forged"
    pyproject.write_text(text.replace('out = "tools"', f'out = "{forged}"'))
    commit(repo, "a folder with a line break")
    pyproject.write_text(text)
    said = bad_ref(repo, "HEAD")  # one line, exit 2
    assert "holds no generated package" in said and "\\n::error" in said, said


def test_a_directory_ref_never_follows_links_out_of_it(tmp_path: Path) -> None:
    repo = history(tmp_path)
    old = tmp_path / "released"
    git("worktree", "add", "-q", str(old), "v1", cwd=repo)
    outside = tmp_path / "outside.json"
    outside.write_text((old / "tools/schemas/tools.json").read_text())
    tools = old / "tools/schemas/tools.json"
    tools.unlink()
    tools.symlink_to(outside)
    assert "holds no generated package" in bad_ref(repo, str(old / "tools"))
    # a FIFO (or /proc/kmsg) among the package's files is not read: reading it never ends
    tools.unlink()
    tools.write_text(outside.read_text())
    os.mkfifo(old / "tools/models/zz.py")
    done = cli("breaking", "--against", str(old / "tools"), "--format", "json", cwd=repo)
    assert done.exit_code == 1 and {f["rule"] for f in findings_of(done)} >= {"TN501"}


def test_what_no_build_writes_is_one_error_line(tmp_path: Path) -> None:
    repo = history(tmp_path)
    tools = repo / "tools/schemas/tools.json"
    good = tools.read_text()
    tools.write_text("[" * 100_000 + "]" * 100_000)  # past the interpreter's nesting limit
    commit(repo, "deep")
    built(repo)
    assert "nested too deeply" in bad_ref(repo, "HEAD")
    tools.write_text(good)
    dispatch = repo / "tools/dispatch.py"
    dispatch.write_text(dispatch.read_text() + "\nbinding = {{}: 1}\n")  # literal_eval: TypeError
    commit(repo, "odd literal")
    built(repo)
    done = cli("breaking", "--against", "HEAD", cwd=repo)
    assert done.exit_code in (0, 1, 2) and "Traceback" not in done.stderr, done.stderr


def test_markup_at_ref_is_shown_never_rendered(tmp_path: Path) -> None:
    repo = history(tmp_path)
    tools = repo / "tools/schemas/tools.json"
    data = json.loads(tools.read_text())
    hostile = "<img src=https://evil.example/p.png> @octocat [approve](https://evil.example)"
    text = json.dumps(data).replace('"city"', json.dumps(hostile))
    tools.write_text(text)
    commit(repo, "hostile names")
    built(repo)
    markdown = cli("breaking", "--against", "HEAD", "--format", "markdown", cwd=repo).stdout
    log = cli("changelog", "--against", "HEAD", cwd=repo).stdout
    for shown in (markdown, log):
        unescaped = re.findall(r"(?<!\\)(?:<img|@octocat|\[approve\])", shown)
        assert not unescaped, shown
    assert r"\<img src=https://evil.example/p.png\> \@octocat \[approve\]" in markdown + log
    raw = cli("breaking", "--against", "HEAD", "--format", "json", cwd=repo).stdout
    assert raw.isascii() and json.loads(raw)["findings"]


def _in_bounds(code: str) -> str:
    """What `code` prints, run in a process of at most 1 GiB that must end (a spec's pattern
    that backtracks without end, or spells out gigabytes, must not hang or exhaust the check)."""
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))\n"
    done = subprocess.run(
        [sys.executable, "-c", limit + code], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_pattern_that_backtracks_without_end_is_compared_and_ends() -> None:
    # `^(a+)+$` on forty a's and a dash: re backtracks 2**40 times; the witness is still found
    said = _in_bounds(
        "from toolnexus_gen.breaking.schema import compare\n"
        "def s(p): return {'type': 'object', 'properties': {'code': {'type': 'string', "
        "'pattern': p}}}\n"
        "for c in compare(s('^a{40,}'), s('^(a+)+$')): print(c.kind, c.narrows, c.detail)\n"
        "for c in compare(s('^(a|aa)+$'), s('^a{40,}')): print(c.kind, c.narrows)\n"
    )
    first, second = said.splitlines()
    assert first.startswith("bound True") and "a" * 40 + "-" in first, said
    assert second == "bound True"  # either a witness or a possible narrowing: told


def test_a_one_of_branch_that_backtracks_without_end_is_checked_and_ends() -> None:
    # a branch's example (and a property name) that the other branch's pattern backtracks on
    long = "a" * 40 + "-"
    said = _in_bounds(
        "import json\n"
        "from toolnexus_gen.breaking.schema import compare\n"
        f"long = {long!r}\n"
        "old = {'oneOf': [{'type': 'string', 'examples': [long]}, {'type': 'integer'}]}\n"
        "new = {'oneOf': [*old['oneOf'], {'type': 'string', 'pattern': '^(a+)+$'}]}\n"
        "names = {'type': 'object', 'required': [long], 'properties': {long: {}}}\n"
        "closed = {'type': 'object', 'patternProperties': {'^(a+)+$': {}}, "
        "'additionalProperties': False}\n"
        "for c in compare(old, new): print(c.kind, c.narrows)\n"
        "o2 = {'oneOf': [names, {'type': 'integer'}]}\n"
        "n2 = {'oneOf': [names, {'type': 'integer'}, closed]}\n"
        "for c in compare(o2, n2): print(c.kind, c.narrows)\n"
    )
    assert said.count("True") >= 2 and said.splitlines()[0].endswith("True"), said


def test_a_pattern_spelling_out_gigabytes_is_not_spelled_out() -> None:
    said = _in_bounds(
        "from toolnexus_gen.breaking.pattern import loosened, strings\n"
        "for p in ('^a{1000000000}$', '^(a{5000}){5000}$', '^(a{100}){100}b'):\n"
        "    print(loosened(p, '^b'), loosened('^a', p), max(map(len, strings(p)), default=0))\n"
    )
    for line in said.splitlines():
        assert int(line.rsplit(" ", 1)[1]) <= 4096, said
    assert said.count("\n") == 3


def test_every_search_of_a_run_shares_one_budget() -> None:
    # many patterns each just under the time of one search still end: once the run's budget
    # is spent, a pattern proves nothing (an undecided change, as for one that never ends)
    from toolnexus_gen.breaking.pattern import budget, loosened

    assert loosened("^[a-z]+$", "^[a-y]+$") == (False, "z")
    with budget(0):
        assert loosened("^[a-z]+$", "^[a-y]+$") == (None, None)
    with budget(60):
        assert loosened("^[a-z]+$", "^[a-y]+$") == (False, "z")
