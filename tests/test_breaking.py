"""`toolnexus-gen breaking` and `changelog`: the tool surface at a git revision against what a
build makes now.

Case folders `cases/breaking/<case>/`, one (at least) per rule: `base/` holds the specs at REF,
`head/` the specs now; `pyproject.toml` (optional) the project's settings now and
`base_pyproject.toml` (optional) those at REF. The test commits base/ and its built package in a
fresh git repository, puts head/ in the working tree, and runs `breaking --against HEAD` (and
`args.txt`'s flags, when there is one). `expected.txt` holds the exit code and what it printed
(text format). Regenerate expectations with `TNX_UPDATE_CASES=1 make test` and review the diff.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, snapshot

from toolnexus_gen.breaking import revision

CASES = Path(__file__).parent / "cases" / "breaking"
UPDATE = os.environ.get("TNX_UPDATE_CASES") == "1"
CONFIG = (
    '[tool.toolnexus-gen]\nspecs = "specs"\nout = "tools"\n'
    'targets = ["openai", "openai_responses", "anthropic", "mcp", "bedrock"]\n'
)


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def repository(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", cwd=folder)
    git("config", "user.email", "t@example.com", cwd=folder)
    git("config", "user.name", "T", cwd=folder)
    (folder / ".gitignore").write_text(".toolnexus-gen.cache/\n.toolnexus-gen.lock\n")
    return folder


def commit(folder: Path, message: str) -> None:
    git("add", "-A", cwd=folder)
    git("commit", "-q", "-m", message, cwd=folder)


def replace_specs(folder: Path, source: Path) -> None:
    shutil.rmtree(folder / "specs", ignore_errors=True)
    if source.is_dir():
        shutil.copytree(source, folder / "specs")
    else:
        (folder / "specs").mkdir()


def built(folder: Path) -> None:
    result = cli("build", cwd=folder)
    assert result.exit_code == 0, result.output + result.stderr


def case_project(case: str, tmp_path: Path) -> Path:
    source = CASES / case
    folder = repository(tmp_path / case)
    base_config = source / "base_pyproject.toml"
    config = source / "pyproject.toml"
    head_config = config.read_text() if config.exists() else CONFIG
    (folder / "pyproject.toml").write_text(
        base_config.read_text() if base_config.exists() else head_config
    )
    replace_specs(folder, source / "base")
    built(folder)
    commit(folder, "base")
    (folder / "pyproject.toml").write_text(head_config)
    replace_specs(folder, source / "head")
    return folder


def folders() -> list[str]:
    return sorted(p.name for p in CASES.iterdir() if p.is_dir())


@pytest.mark.parametrize("case", folders())
def test_breaking_case(case: str, tmp_path: Path) -> None:
    folder = case_project(case, tmp_path)
    extra_file = CASES / case / "args.txt"
    extra = extra_file.read_text().split() if extra_file.exists() else []
    before = snapshot(folder)
    result = cli("breaking", "--against", "HEAD", *extra, cwd=folder)
    assert snapshot(folder) == before, "breaking writes nothing"
    assert git("status", "--porcelain", "--", "tools", cwd=folder) == ""
    actual = f"exit: {result.exit_code}\n{result.stdout}"
    expected = CASES / case / "expected.txt"
    if UPDATE:
        expected.write_text(actual)
    assert actual == expected.read_text()
    assert "Traceback" not in result.output + result.stderr

    # the same findings, as JSON, with exactly the contract's keys
    as_json = cli("breaking", "--against", "HEAD", "--format", "json", *extra, cwd=folder)
    assert as_json.exit_code == result.exit_code
    findings = json.loads(as_json.stdout)["findings"]
    assert len(findings) == len(result.stdout.splitlines())
    keys = ["tool", "rule", "category", "severity", "message", "path", "line", "col"]
    for finding in findings:
        # an accepted finding says so, with its entry's reason and expiry
        assert list(finding) == keys + ["accepted"] * ("accepted" in finding)
        if "accepted" in finding:
            assert set(finding["accepted"]) == {"entry", "reason", "until"}
        assert isinstance(finding["tool"], str) and finding["tool"], finding  # always named
        assert finding["category"] in ("callers", "handlers", "model")
        assert finding["severity"] in ("error", "warning", "info")
        where = f"{finding['path']}:{finding['line']}:{finding['col']}: "
        assert any(
            line.startswith(where if finding["path"] else f"{finding['tool']}: ")
            and f"[{finding['rule']}]" in line
            for line in result.stdout.splitlines()
        )


def test_every_rule_has_a_check_and_a_case() -> None:
    from toolnexus_gen.breaking.rules import CHECKS
    from toolnexus_gen.diagnostics.catalogue import BREAKING

    assert set(CHECKS) | {"TN550"} == set(BREAKING)  # TN550: the version policy (policy.py)
    shown = "".join((CASES / case / "expected.txt").read_text() for case in folders())
    for code in BREAKING:
        assert f"[{code}]" in shown, f"no case folder shows {code}"


def test_explain_prints_a_rule() -> None:
    result = cli("explain", "TN503")
    assert result.exit_code == 0
    assert "required argument added" in result.output
    assert "(category: callers). Severity: error." in result.output


def findings_of(result: Any) -> list[dict[str, Any]]:
    return list(json.loads(result.stdout)["findings"])


# -- a real git history ------------------------------------------------------------------------

WEATHER_SPEC = (
    "description: Current weather for a city\n"
    "input_schema:\n  type: object\n  properties:\n    city: {type: string}\n  required: [city]\n"
)
NOW_SPEC = "description: Current time\n"
TARGETS = CONFIG


def history(tmp_path: Path) -> Path:
    """Three commits: two tools; then one removed; then an optional argument added."""
    repo = repository(tmp_path / "repo")
    (repo / "pyproject.toml").write_text(TARGETS)
    (repo / "specs").mkdir()
    (repo / "specs/get_weather.yaml").write_text(WEATHER_SPEC)
    (repo / "specs/now.yaml").write_text(NOW_SPEC)
    built(repo)
    commit(repo, "two tools")
    git("tag", "v1", cwd=repo)
    (repo / "specs/now.yaml").unlink()
    built(repo)
    commit(repo, "now removed")
    spec = repo / "specs/get_weather.yaml"
    spec.write_text(
        spec.read_text().replace(
            "    city: {type: string}\n", "    city: {type: string}\n    days: {type: integer}\n"
        )
    )
    built(repo)
    commit(repo, "optional days")
    return repo


def test_against_a_real_git_history(tmp_path: Path) -> None:
    repo = history(tmp_path)
    before = snapshot(repo)
    head = git("rev-parse", "HEAD", cwd=repo)

    latest = cli("breaking", "--against", "HEAD~1", "--format", "json", cwd=repo)
    assert latest.exit_code == 0, latest.stderr  # an optional argument is no error
    found = findings_of(latest)
    assert [(f["rule"], f["tool"], f["severity"]) for f in found] == [
        ("TN531", "get_weather", "info")
    ]
    assert found[0]["path"] == "specs/get_weather.yaml" and found[0]["line"] == 6

    removal = cli("breaking", "--against", "HEAD~2", cwd=repo)
    assert removal.exit_code == 1
    assert "now: error[TN501] callers: tool removed" in removal.stdout
    assert "HEAD~2 (" in removal.stderr and "2 errors" in removal.stderr
    # a tag, a commit, and what the commit before it held: the same answers
    tagged = cli("breaking", "--against", "v1", cwd=repo)
    assert tagged.stdout == removal.stdout.replace("HEAD~2", "v1")
    sha = git("rev-parse", "HEAD~1", cwd=repo).strip()
    assert cli("breaking", "--against", sha, cwd=repo).exit_code == 0

    # the working tree, the index and HEAD are as they were
    assert snapshot(repo) == before
    assert git("status", "--porcelain", cwd=repo) == ""
    assert git("rev-parse", "HEAD", cwd=repo) == head


def test_the_build_now_reuses_the_models_the_last_build_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a build makes now is made in memory with the last build's memo: no argument model
    the build already made is made again by datamodel-code-generator (the slow part)."""
    from toolnexus_gen.codegen import models

    repo = history(tmp_path)
    made: list[str] = []
    real = models._source

    def counted(schema: dict[str, Any], class_name: str, header: str) -> str:
        made.append(class_name)
        return real(schema, class_name, header)

    monkeypatch.setattr(models, "_source", counted)
    assert cli("breaking", "--against", "HEAD~2", cwd=repo).exit_code == 1
    assert made == []
    spec = repo / "specs/get_weather.yaml"
    spec.write_text(spec.read_text().replace("days: {type: integer}", "days: {type: string}"))
    assert cli("breaking", "--against", "HEAD", cwd=repo).exit_code == 1
    assert made == ["GetWeatherArgs"]  # the one model that changed, made in memory
    assert git("status", "--porcelain", "--", "tools", cwd=repo) == ""


def test_working_tree_changes_are_what_is_compared(tmp_path: Path) -> None:
    """Uncommitted spec edits count (what a build makes now), not the package on disk."""
    repo = history(tmp_path)
    spec = repo / "specs/get_weather.yaml"
    spec.write_text(spec.read_text().replace("required: [city]", "required: [city, days]"))
    result = cli("breaking", "--against", "HEAD", cwd=repo)  # tools/ not rebuilt
    assert result.exit_code == 1
    assert (
        "specs/get_weather.yaml:7:3: error[TN504] callers: get_weather: argument 'days'"
        in result.stdout
    )
    assert "error[TN524]" not in result.stdout  # days: StrictInt | None before and after


def test_a_project_in_a_subfolder_and_a_package_that_moved(tmp_path: Path) -> None:
    repo = repository(tmp_path / "mono")
    project = repo / "services/weather"
    (project / "specs").mkdir(parents=True)
    (project / "specs/get_weather.yaml").write_text(WEATHER_SPEC)
    (project / "specs/now.yaml").write_text(NOW_SPEC)
    (project / "pyproject.toml").write_text(TARGETS)
    built(project)
    commit(repo, "first")
    # the package moves to src/weather_tools, and a tool goes
    (project / "pyproject.toml").write_text(
        TARGETS.replace('out = "tools"', 'out = "src/weather_tools"')
    )
    shutil.rmtree(project / "tools")
    (project / "specs/now.yaml").unlink()
    built(project)
    result = cli("breaking", "--against", "HEAD", "--format", "json", cwd=project)
    assert [(f["rule"], f["tool"]) for f in findings_of(result)] == [
        ("TN501", "now"),
        ("TN520", "now"),
    ]


def test_a_directory_as_ref(tmp_path: Path) -> None:
    repo = history(tmp_path)
    old = tmp_path / "released"
    git("worktree", "add", "-q", str(old), "v1", cwd=repo)
    for ref in (old / "tools", old):  # the package itself, or a folder holding it where out says
        result = cli("breaking", "--against", str(ref), "--format", "json", cwd=repo)
        assert result.exit_code == 1
        assert {f["rule"] for f in findings_of(result)} == {"TN501", "TN520", "TN531"}


# -- bad REFs: one clear line, exit 2, nothing written ---------------------------------------------


def bad_ref(repo: Path, ref: str) -> str:
    before = snapshot(repo)
    result = cli("breaking", "--against", ref, cwd=repo)
    assert result.exit_code == 2, result.output + result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(repo) == before
    assert cli("changelog", "--against", ref, cwd=repo).exit_code == 2
    return lines[0]


def test_unknown_revision(tmp_path: Path) -> None:
    repo = history(tmp_path)
    assert "unknown revision 'nope'" in bad_ref(repo, "nope")
    assert "unknown revision '--output=x'" in bad_ref(repo, "--output=x")
    assert "unknown revision 'HEAD~9'" in bad_ref(repo, "HEAD~9")


def test_revision_without_a_generated_package(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    (repo / "pyproject.toml").write_text(TARGETS)
    (repo / "specs").mkdir()
    (repo / "specs/now.yaml").write_text(NOW_SPEC)
    commit(repo, "specs only; the package is not committed")
    git("tag", "specs-only", cwd=repo)
    built(repo)
    (repo / "tools/schemas/tools.json").unlink()
    commit(repo, "a package without tools.json")
    built(repo)
    said = bad_ref(repo, "specs-only")
    assert "holds no generated package at tools/" in said
    assert "holds no generated package at tools/ (schemas/tools.json is missing" in bad_ref(
        repo, "HEAD"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "directory" in bad_ref(repo, str(empty)) and "holds no generated package" in bad_ref(
        repo, str(empty)
    )


@pytest.mark.parametrize(
    ("file", "text", "said"),
    [
        ("schemas/tools.json", '[{"name": ', "tools.json: not JSON"),
        ("schemas/tools.json", '{"tools": 1}', "not a list of tools"),
        ("schemas/mcp.json", "not json", "mcp.json: not JSON"),
        ("handlers.py", "class ToolHandlers(:\n", "handlers.py:1: not Python"),
        ("models/get_weather.py", "class GetWeatherArgs(\n", "not Python"),
        ("dispatch.py", None, "dispatch.py is missing"),
        ("models/get_weather.py", None, "the module of GetWeatherArgs is missing"),
    ],
)
def test_corrupt_package_at_ref(tmp_path: Path, file: str, text: str | None, said: str) -> None:
    repo = history(tmp_path)
    target = repo / "tools" / file
    if text is None:
        target.unlink()
    else:
        target.write_bytes(text.encode())
    commit(repo, "corrupt")
    built(repo)  # the working tree is fine again
    # a changed model, so the corrupt model is read
    spec = repo / "specs/get_weather.yaml"
    spec.write_text(spec.read_text().replace("days: {type: integer}", "days: {type: string}"))
    line = bad_ref(repo, "HEAD")
    assert said in line, line
    assert "corrupt" in line or "not" in line or "missing" in line


def one_commit(tmp_path: Path) -> Path:
    repo = repository(tmp_path / "repo")
    (repo / "pyproject.toml").write_text(TARGETS)
    (repo / "specs").mkdir()
    (repo / "specs/get_weather.yaml").write_text(WEATHER_SPEC)
    built(repo)
    commit(repo, "one tool")
    return repo


def test_files_the_comparison_does_not_need_are_not_read_at_ref(tmp_path: Path) -> None:
    repo = one_commit(tmp_path)
    for rel in ("padding.py", "sub/padding.py", "schemas/extra.json"):
        (repo / "tools" / rel).parent.mkdir(exist_ok=True)
        (repo / "tools" / rel).write_bytes(b"\xff\xfe not UTF-8, and never read\n")
    commit(repo, "files beside the package's")
    for ref in ("HEAD", "tools"):
        result = cli("breaking", "--against", ref, "--format", "json", cwd=repo)
        assert result.exit_code == 0, result.output + result.stderr
        assert findings_of(result) == []


@pytest.mark.parametrize("ref", ["HEAD", "tools"])
def test_a_file_over_the_size_limit_at_ref_is_refused(
    tmp_path: Path, ref: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = one_commit(tmp_path)
    handlers = repo / "tools/handlers.py"
    handlers.write_text(handlers.read_text() + "# padding\n" * 1000)
    commit(repo, "padded")
    monkeypatch.setattr(revision, "MAX_FILE", 8000)
    line = bad_ref(repo, ref)
    assert (
        "handlers.py: 1" in line and "bytes, over the 8,000 bytes a generated file is read" in line
    ), line
    monkeypatch.setattr(revision, "MAX_FILE", 1 << 20)
    monkeypatch.setattr(revision, "MAX_TOTAL", handlers.stat().st_size + 100)
    line = bad_ref(repo, ref)
    assert "the package's files are over" in line and "bytes together" in line, line


def test_not_a_repository(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    (folder / "specs").mkdir(parents=True)
    (folder / "specs/now.yaml").write_text(NOW_SPEC)
    (folder / "pyproject.toml").write_text(TARGETS)
    said = bad_ref(folder, "main")
    assert "is not a directory" in said and "not in a git repository" in said


def test_invalid_specs_now(tmp_path: Path) -> None:
    repo = history(tmp_path)
    (repo / "specs/bad.yaml").write_text("description: [\n")
    result = cli("breaking", "--against", "HEAD", cwd=repo)
    assert result.exit_code == 2
    assert "specs/bad.yaml:" in result.stderr and "error[TN101]" in result.stderr


# -- formats, fail-on, configuration, changelog ----------------------------------------------------


def changed(tmp_path: Path) -> Path:
    repo = history(tmp_path)
    spec = repo / "specs/get_weather.yaml"
    spec.write_text(
        "description: Current weather for a city, with alerts\n"
        "input_schema:\n  type: object\n  properties:\n    city: {type: string}\n"
        "    days: {type: integer, default: 1}\n  required: [city]\n"
    )
    (repo / "specs/forecast.yaml").write_text("description: Forecast, by day\n")
    return repo


def test_github_annotations(tmp_path: Path) -> None:
    repo = changed(tmp_path)
    result = cli("breaking", "--against", "HEAD~2", "--format", "github", cwd=repo)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert any(
        line.startswith("::error title=TN501 tool removed (now)::now: callers: tool removed")
        for line in lines
    )
    assert any(
        line.startswith(
            "::notice file=specs/get_weather.yaml,line=6,col=5,title=TN531 optional argument added (get_weather)::"
        )
        for line in lines
    )
    assert any(
        line.startswith("::warning file=specs/forecast.yaml,line=1,col=1,title=TN522")
        for line in lines
    )
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)


def test_markdown_for_a_pull_request(tmp_path: Path) -> None:
    repo = changed(tmp_path)
    result = cli("breaking", "--against", "HEAD~2", "--format", "markdown", cwd=repo)
    assert result.exit_code == 1
    text = result.stdout
    assert text.startswith("### Tool surface changes since `HEAD~2 (")
    assert "| 🔴 error | `TN501` callers | `now` | tool removed" in text
    assert (
        "| 🔵 info | `TN531` callers | `get_weather` | optional argument 'days' added | `specs/get_weather.yaml:6` |"
        in text
    )
    errors = text.index("🔴 error")
    assert errors < text.index("🟠 warning") < text.index("🔵 info")  # worst first


def test_fail_on(tmp_path: Path) -> None:
    repo = changed(tmp_path)
    assert cli("breaking", "--against", "HEAD", cwd=repo).exit_code == 0  # TN522: a warning
    assert cli("breaking", "--against", "HEAD", "--fail-on", "warning", cwd=repo).exit_code == 1
    assert cli("breaking", "--against", "HEAD", "--fail-on", "info", cwd=repo).exit_code == 1
    bad = cli("breaking", "--against", "HEAD", "--fail-on", "fatal", cwd=repo)
    assert bad.exit_code == 2 and "fatal" in bad.stderr
    assert cli("breaking", cwd=repo).exit_code == 2  # --against is required
    (repo / "pyproject.toml").write_text(
        TARGETS + '\n[tool.toolnexus-gen.breaking]\nfail_on = "warning"\n'
    )
    assert cli("breaking", "--against", "HEAD", cwd=repo).exit_code == 1
    assert cli("breaking", "--against", "HEAD", "--fail-on", "error", cwd=repo).exit_code == 0
    assert cli("build", "--check", cwd=repo).exit_code == 1  # the table is no build error


@pytest.mark.parametrize(
    ("table", "said"),
    [
        (
            'use = ["callers", "everyone"]',
            "breaking.use must list some of callers, handlers, model",
        ),
        ('except = ["TN999"]', "breaking.except must list rule IDs"),
        ("ignore = 3", "breaking.ignore must be a list of tool names or globs"),
        ('fail_on = "fatal"', "breaking.fail_on must be one of info, warning, error"),
        ("token_threshold = -1", "breaking.token_threshold must be a percentage"),
        ('version_policy = "yes"', "breaking.version_policy must be true or false"),
        ("surprise = 1", "unknown key 'surprise' in [tool.toolnexus-gen.breaking]"),
    ],
)
def test_bad_configuration(tmp_path: Path, table: str, said: str) -> None:
    repo = history(tmp_path)
    (repo / "pyproject.toml").write_text(TARGETS + f"\n[tool.toolnexus-gen.breaking]\n{table}\n")
    result = cli("breaking", "--against", "HEAD", cwd=repo)
    assert result.exit_code == 2
    assert f"pyproject.toml:7:1: error[TN802]: {said}" in result.stderr, result.stderr


def test_version_policy_needs_a_version(tmp_path: Path) -> None:
    repo = history(tmp_path)
    (repo / "pyproject.toml").write_text(
        TARGETS + "\n[tool.toolnexus-gen.breaking]\nversion_policy = true\n"
    )
    said = bad_ref(repo, "HEAD")
    assert "version_policy is on, but pyproject.toml has no project.version" in said


def test_version_policy_reads_a_configured_field(tmp_path: Path) -> None:
    repo = history(tmp_path)
    poetry = '[tool.poetry]\nversion = "0.3.1"\n\n' + TARGETS
    (repo / "pyproject.toml").write_text(poetry)
    commit(repo, "versioned")
    (repo / "specs/get_weather.yaml").unlink()
    policy = (
        '\n[tool.toolnexus-gen.breaking]\nversion_policy = true\nversion = "tool.poetry.version"\n'
    )
    for version, flagged in (("0.3.2", True), ("1.0.0", False), ("0.4.0", False)):
        (repo / "pyproject.toml").write_text(poetry.replace("0.3.1", version) + policy)
        result = cli("breaking", "--against", "HEAD", "--format", "json", cwd=repo)
        rules = [f["rule"] for f in findings_of(result)]
        assert ("TN550" in rules) is flagged, (version, rules)


def test_version_policy_names_each_tool_in_every_format(tmp_path: Path) -> None:
    folder = case_project("tn550_version_policy", tmp_path)  # get_weather changed, now removed
    found = findings_of(cli("breaking", "--against", "HEAD", "--format", "json", cwd=folder))
    policy = {f["tool"]: f for f in found if f["rule"] == "TN550"}
    assert sorted(policy) == ["get_weather", "now"]
    assert policy["get_weather"]["path"] == "specs/get_weather.yaml"  # where the tool stands
    assert policy["now"]["path"] is None  # removed: no place
    assert "(TN501, TN520)" in policy["now"]["message"]
    assert all("1.4.2 to 1.5.0 (pyproject.toml:3:1)" in f["message"] for f in policy.values())

    github = cli("breaking", "--against", "HEAD", "--format", "github", cwd=folder).stdout
    marked = [line for line in github.splitlines() if "title=TN550 " in line]
    assert len(marked) == 2
    assert marked[0].startswith("::error file=specs/get_weather.yaml,line=1,col=1,title=TN550 ")
    assert "(get_weather)::callers: breaking since HEAD (TN503)" in marked[0]
    assert "(now)::now: callers: breaking since HEAD" in marked[1]

    markdown = cli("breaking", "--against", "HEAD", "--format", "markdown", cwd=folder).stdout
    rows = [line for line in markdown.splitlines() if "`TN550`" in line]
    assert [row.split("|")[3].strip() for row in rows] == ["`get_weather`", "`now`"]

    log = cli("changelog", "--against", "HEAD", cwd=folder).stdout
    assert "**3 breaking changes** in 2 tools (`get_weather`, `now`)." in log  # TN503, TN501, TN520
    block = log[log.index("- **error** breaking change without a major version bump (TN550):") :]
    assert block.splitlines()[1].startswith("  - `get_weather`: breaking since HEAD (TN503), but")
    assert block.splitlines()[2].startswith("  - `now`: breaking since HEAD (TN501, TN520), but")

    # a tool left out (ignore) breaks no policy; TN550 left out (except) is never reported
    config = folder / "pyproject.toml"
    base = config.read_text()
    config.write_text(base + 'ignore = ["now"]\n')
    found = findings_of(cli("breaking", "--against", "HEAD", "--format", "json", cwd=folder))
    assert [f["tool"] for f in found if f["rule"] == "TN550"] == ["get_weather"]
    config.write_text(base + 'except = ["TN550"]\n')
    found = findings_of(cli("breaking", "--against", "HEAD", "--format", "json", cwd=folder))
    assert "TN550" not in {f["rule"] for f in found}


def test_changelog_groups_by_tool(tmp_path: Path) -> None:
    repo = changed(tmp_path)
    before = snapshot(repo)
    result = cli("changelog", "--against", "v1", cwd=repo)
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert snapshot(repo) == before
    # Keep a Changelog's form: a section a project pastes into its CHANGELOG.md
    assert text.startswith("## [Unreleased]\n\nTool changes since v1 (")
    assert "**2 breaking changes** in 1 tool (`now`)." in text  # TN501 and TN520
    added = text.index("### Added")
    removed = text.index("### Removed")
    changes = text.index("### Changed")
    assert added < removed < changes
    assert "- `forecast`: Forecast, by day; **warning**: ToolHandlers gains" in text[added:removed]
    assert (
        "Calls of these tools are refused now.\n\n- `now` **(breaking)**" in text[removed:changes]
    )
    tail = text[changes:]
    assert "- `get_weather`\n  - optional argument 'days' added\n" in tail
    # model-only changes: one line each, unless --detail model (a word diff of descriptions)
    assert "- Descriptions or titles changed: 1 change in 1 tool (`get_weather`;" in tail
    detail = cli("changelog", "--against", "v1", "--detail", "model", cwd=repo).stdout
    assert "  - description: Current weather for a ~~city~~ **city, with alerts**" in detail
    versioned = '[project]\nname = "w"\nversion = "2.0.0"\n\n' + TARGETS
    (repo / "pyproject.toml").write_text(versioned)
    dated = cli("changelog", "--against", "v1", cwd=repo).stdout
    assert re.match(r"## \[2\.0\.0\] - \d{4}-\d{2}-\d{2}\n", dated), dated[:40]
    none = cli("changelog", "--against", "HEAD", cwd=history(tmp_path / "again"))
    assert none.stdout.endswith("No tool changed since HEAD (" + none.stdout.split("(")[1])


def test_a_shared_schema_change_is_one_line_naming_its_tools() -> None:
    from toolnexus_gen.breaking.report import changelog, word_diff
    from toolnexus_gen.breaking.rules import Finding

    shared = "required argument 'owner.login' added: a call without it, valid at v1, is refused now"
    found = [
        Finding(tool, "TN503", "callers", "error", shared, "specs/x.yaml", 1, 1)
        for tool in ("list_repos", "get_repo", "delete_repo")
    ] + [Finding("get_repo", "TN531", "callers", "info", "optional argument 'page' added")]
    text = changelog(found, "v1")
    assert text.count("owner.login") == 1
    assert "(in 3 tools: `delete_repo`, `get_repo`, `list_repos`)" in text
    assert "- `get_repo`\n  - optional argument 'page' added" in text
    assert "**3 breaking changes** in 3 tools" in text
    said = word_diff("Get a repository by its owner and name", "Get a repository by its full name")
    assert said == "Get a repository by its ~~owner and~~ **full** name"
    long = " ".join(f"w{i}" for i in range(40))
    cut = word_diff(long, long.replace("w20", "x20"))
    assert cut == "… w16 w17 w18 w19 ~~w20~~ **x20** w21 w22 w23 w24 …"


def test_a_removed_deprecated_tool_says_since_when_in_balanced_words() -> None:
    from toolnexus_gen.breaking.report import changelog
    from toolnexus_gen.breaking.rules import Finding

    gone = (
        "tool removed: every call of it, valid at v1, is refused now (deprecated since 1.0, "
        "for how long unknown; the policy asks 1 release)"
    )
    text = changelog([Finding("now", "TN501", "callers", "error", gone)], "v1")
    line = next(line for line in text.splitlines() if line.startswith("- `now`"))
    assert line == (
        "- `now` **(breaking)**: deprecated since 1.0, for how long unknown; the policy asks 1 "
        "release"
    )


def test_a_large_release_counts_result_changes_and_names_every_break() -> None:
    from toolnexus_gen.breaking.report import changelog
    from toolnexus_gen.breaking.rules import Finding

    tools = [f"list_{i:02}" for i in range(30)]
    pointer = "/$defs/minimal-repository/properties/license/properties/url"
    found = [
        Finding(
            tool,
            "TN512",
            "callers",
            "warning",
            "result field 'result[].license.url': now also accepts null (it is nullable now): ...",
            at=("output_schema", pointer),
            kind="nullable",
        )
        for tool in tools
    ] + [
        Finding(
            tool,
            "TN533",
            "callers",
            "info",
            f"result field 'result[].pin{i}' added",
            at=("output_schema", f"/$defs/issue/properties/pin{i}"),
            kind="optional_added",
        )
        for tool in tools[:3]
        for i in range(2)
    ]
    breaking = "required argument 'owner' added: a call without it, valid at v1, is refused now"
    found += [Finding(tool, "TN503", "callers", "error", breaking) for tool in tools]
    text = changelog(found, "v1")
    assert "url" not in text  # counted, not listed
    assert "    - null accepted: 30 in 30 tools (`minimal-repository` 30)" in text
    assert "    - optional fields added: 6 in 3 tools (`issue` 6)" in text
    line = next(line for line in text.splitlines() if "'owner'" in line)
    assert all(f"`{tool}`" in line for tool in tools)  # a breaking change names every tool
    listed = changelog(found, "v1", detail="all")
    assert "license.url" in listed and "null accepted" not in listed


# -- sync --check: an upstream MCP server's change, through the same rules -------------------------


def test_sync_check_says_what_an_upstream_change_breaks(tmp_path: Path) -> None:
    from mcp_helpers import TOOLS, project, stdio

    served = tmp_path / "served.json"
    served.write_text(json.dumps(TOOLS[:2]))
    folder = project(tmp_path / "p", {"wiki": stdio("--tools", str(served))})
    assert cli("sync", cwd=folder).exit_code == 0
    upstream = json.loads(json.dumps(TOOLS[:1]))  # `add` dropped
    upstream[0]["inputSchema"]["properties"]["space"] = {"type": "string"}
    upstream[0]["inputSchema"]["required"].append("space")
    served.write_text(json.dumps(upstream))
    before = snapshot(folder)
    result = cli("sync", "--check", cwd=folder)
    assert result.exit_code == 1
    assert snapshot(folder) == before
    err = result.stderr
    assert (
        "specs/wiki/wiki_add.json: removed upstream (tool 'add' of server 'wiki')\n  error[TN501] callers: tool removed (from MCP server 'wiki'): every call of it, valid at the snapshot, is refused now"
        in err
    )
    assert (
        "  error[TN503] callers: required argument 'space' added: a call without it, valid at the snapshot, is refused now"
        in err
    )


# -- the handlers rules are what mypy says -----------------------------------------------------------

HANDLER = """
from weather_tools import GetWeatherArgs, ToolContext, ToolHandlers


class Handlers(ToolHandlers):
    def get_weather(self, args: GetWeatherArgs, ctx: ToolContext) -> str:
        return args.city.upper() + args.units.value
"""


def test_handlers_findings_are_what_mypy_finds(tmp_path: Path) -> None:
    """Handler code that type-checks against the package at REF fails mypy --strict against
    the package now exactly where breaking says (TN524 city may be None, TN525 units gone)."""
    import sys

    repo = repository(tmp_path / "repo")
    (repo / "pyproject.toml").write_text(CONFIG.replace('out = "tools"', 'out = "weather_tools"'))
    (repo / "specs").mkdir()
    spec = repo / "specs/get_weather.yaml"
    spec.write_text(
        "description: Weather\ninput_schema:\n  type: object\n  properties:\n"
        "    city: {type: string}\n    units: {type: string, enum: [c, f], default: c}\n"
        "  required: [city]\n"
    )
    built(repo)
    commit(repo, "ref")
    (repo / "handlers.py").write_text(HANDLER)

    def mypy() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "handlers.py"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )

    assert mypy().returncode == 0, mypy().stdout
    spec.write_text(
        "description: Weather\ninput_schema:\n  type: object\n  properties:\n"
        "    city: {type: string}\n"
    )
    result = cli("breaking", "--against", "HEAD", "--format", "json", cwd=repo)
    handlers = {
        (f["rule"], f["message"].split("'")[1])
        for f in findings_of(result)
        if f["category"] == "handlers"
    }
    assert handlers == {("TN524", "city"), ("TN525", "units")}
    built(repo)
    said = mypy().stdout
    assert 'Item "None" of "str | None" has no attribute "upper"' in said
    assert '"GetWeatherArgs" has no attribute "units"' in said


def test_the_docs_hold_the_rule_table() -> None:
    from conftest import ROOT

    from toolnexus_gen.diagnostics.catalogue import breaking_table

    pages = [*ROOT.glob("changes/*.md"), *ROOT.glob("docs/**/*.md")]
    assert any(breaking_table() in page.read_text("utf-8") for page in pages)


def test_what_specs_say_never_reaches_the_terminal_raw(tmp_path: Path) -> None:
    """Property names and descriptions (an MCP server's, an imported document's) are quoted in
    messages: escape sequences and line breaks in them are printed escaped, in every format."""
    repo = history(tmp_path)
    hostile = "x\x1b]0;PWNED\x07\nspecs/x.yaml:1:1: error[TN501] forged"
    spec = repo / "specs/get_weather.yaml"
    spec.write_text(
        json.dumps(
            {
                "description": f"Weather {hostile}",
                "input_schema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, hostile: {"type": "string"}},
                    "required": ["city", hostile],
                },
            }
        )
    )
    spec.rename(spec.with_suffix(".json"))
    (repo / "pyproject.toml").write_text(
        TARGETS.replace(
            'targets = ["openai", "openai_responses", "anthropic", "mcp", "bedrock"]',
            'targets = ["mcp"]',
        )
    )
    for args in (["--format", "text"], ["--format", "github"], ["--format", "markdown"]):
        result = cli("breaking", "--against", "HEAD", *args, cwd=repo)
        assert result.exit_code == 1
        for text in (result.stdout, result.stderr):
            assert "\x1b" not in text and "\x07" not in text
            assert "\nspecs/x.yaml" not in text
    log = cli("changelog", "--against", "HEAD", cwd=repo).stdout
    assert "\x1b" not in log and "\nspecs/x.yaml" not in log


def openapi_document(*, required: list[str], status_values: list[str]) -> str:
    """A small OpenAPI 3.1 document: one operation with a path parameter, a query enum."""
    return json.dumps(
        {
            "openapi": "3.1.0",
            "info": {"title": "Pets", "version": "1"},
            "servers": [{"url": "https://pets.example.com"}],
            "paths": {
                "/pets/{owner}": {
                    "get": {
                        "operationId": "listPets",
                        "summary": "List an owner's pets",
                        "parameters": [
                            {
                                "name": "owner",
                                "in": "path",
                                "required": True,
                                "schema": {"type": "string"},
                            },
                            {
                                "name": "status",
                                "in": "query",
                                "required": "status" in required,
                                "schema": {"type": "string", "enum": status_values},
                            },
                        ],
                        "responses": {"200": {"description": "ok"}},
                    }
                }
            },
        }
    )


def test_imported_openapi_operations(tmp_path: Path) -> None:
    """An operation re-imported from a changed document is compared by the same rules: a query
    parameter made required and an enum value dropped upstream are callers errors."""
    repo = repository(tmp_path / "repo")
    (repo / "pyproject.toml").write_text(TARGETS)
    document = repo / "pets.json"
    document.write_text(openapi_document(required=[], status_values=["available", "sold"]))
    imported = cli("import", "openapi", "pets.json", cwd=repo)
    assert imported.exit_code == 0, imported.output + imported.stderr
    built(repo)
    commit(repo, "pets v1")
    document.write_text(openapi_document(required=["status"], status_values=["available"]))
    imported = cli("import", "openapi", "pets.json", "--force", cwd=repo)
    assert imported.exit_code == 0, imported.output + imported.stderr
    result = cli("breaking", "--against", "HEAD", "--format", "json", cwd=repo)
    assert result.exit_code == 1, result.output + result.stderr
    found = {(f["tool"], f["rule"], f["category"]) for f in findings_of(result)}
    assert ("listPets", "TN504", "callers") in found
    assert ("listPets", "TN508", "callers") in found
    assert all(f["path"] and f["path"].startswith("specs/") for f in findings_of(result))


def test_github_annotations_name_files_from_the_repository_top(tmp_path: Path) -> None:
    """GitHub places an annotation by its path from the repository's top: a project in a
    subfolder gets that subfolder in front of its spec paths (the text format keeps them short)."""
    repo = repository(tmp_path / "repo")
    project = repo / "services" / "weather"
    (project / "specs").mkdir(parents=True)
    (project / "pyproject.toml").write_text(TARGETS)
    (project / "specs/get_weather.yaml").write_text(WEATHER_SPEC)
    built(project)
    commit(repo, "weather")
    (project / "specs/get_weather.yaml").write_text(
        WEATHER_SPEC.replace("required: [city]", "required: [city, units]").replace(
            "city: {type: string}", "city: {type: string}\n    units: {type: string}"
        )
    )
    github = cli("breaking", "--against", "HEAD", "--format", "github", cwd=project)
    assert github.exit_code == 1, github.output + github.stderr
    assert github.stdout.startswith("::error file=services/weather/specs/get_weather.yaml,line=")
    text = cli("breaking", "--against", "HEAD", cwd=project)
    assert text.stdout.startswith("specs/get_weather.yaml:")


# -- accepting findings one by one ---------------------------------------------------------------


def test_an_accepted_finding_is_listed_in_every_format_and_fails_nothing(tmp_path: Path) -> None:
    repo = history(tmp_path)  # HEAD: get_weather(city, days?)
    spec = repo / "specs/get_weather.yaml"
    spec.write_text(
        spec.read_text()
        .replace("required: [city]", "required: [city, days]")
        .replace("Current weather", "Weather")
    )
    accept = ["--accept", "get_weather:TN504", "--accept", "get_*:TN540"]
    refused = cli("breaking", "--against", "HEAD", cwd=repo)
    assert refused.exit_code == 1, refused.output
    for fmt in ("text", "json", "github", "markdown"):
        result = cli("breaking", "--against", "HEAD", "--format", fmt, *accept, cwd=repo)
        assert result.exit_code == 0, (fmt, result.output)
        assert "accepted" in result.stdout, (fmt, result.stdout)
        assert "2 accepted" in result.stderr
    found = findings_of(cli("breaking", "--against", "HEAD", "--format", "json", *accept, cwd=repo))
    assert {f["rule"] for f in found if "accepted" in f} == {"TN504", "TN540"}
    assert found[0]["accepted"] == {"entry": "get_weather:TN504", "reason": None, "until": None}
    github = cli("breaking", "--against", "HEAD", "--format", "github", *accept, cwd=repo).stdout
    assert not any(line.startswith("::error") for line in github.splitlines())
    notes = cli("changelog", "--against", "HEAD", *accept, cwd=repo).stdout
    assert "accepted" in notes and "days" in notes
    # one accepted, one not: the other still fails
    half = cli(
        "breaking",
        "--against",
        "HEAD",
        "--accept",
        "get_weather:TN504",
        "--fail-on",
        "info",
        cwd=repo,
    )
    assert half.exit_code == 1 and "1 accepted" in half.stderr


def test_an_accepted_finding_asks_for_no_major_version(tmp_path: Path) -> None:
    folder = case_project("tn550_version_policy", tmp_path)  # get_weather changed, now removed
    accepted = ["--accept", "now:TN501", "--accept", "now:TN520"]
    found = findings_of(
        cli("breaking", "--against", "HEAD", "--format", "json", *accepted, cwd=folder)
    )
    policy = [f["tool"] for f in found if f["rule"] == "TN550"]
    assert policy == ["get_weather"]  # `now`'s breaks are all accepted: no TN550 for it
    listed = {f["rule"] for f in found if f["tool"] == "now" and "accepted" in f}
    assert listed == {"TN501", "TN520"}  # and still listed, as accepted
    text = cli("breaking", "--against", "HEAD", *accepted, cwd=folder)
    assert "TN501] callers: tool removed" in text.stdout and "[accepted]" in text.stdout
    # one break of a tool left unaccepted still asks for the bump
    found = findings_of(
        cli(
            "breaking", "--against", "HEAD", "--format", "json", "--accept", "now:TN501", cwd=folder
        )
    )
    assert sorted(f["tool"] for f in found if f["rule"] == "TN550") == ["get_weather", "now"]


def test_accept_entries_expire_and_stale_ones_are_noted(tmp_path: Path) -> None:
    repo = history(tmp_path)
    (repo / "specs/get_weather.yaml").unlink()
    versioned = '[project]\nname = "x"\nversion = "1.5.0"\n\n' + TARGETS
    table = (
        "\n[tool.toolnexus-gen.breaking]\naccept = [\n"
        '  {finding = "get_weather:TN501", reason = "gone in 2.0", until = UNTIL},\n'
        '  "get_weather:TN520",\n  "no_such_tool:TN503",\n]\n'
    )
    for until, counts in (
        ('"2.0.0"', False),
        ('"1.5.0"', True),
        ('"2020-01-31"', True),
        ("2020-01-31", True),  # a TOML date
        ("2999-01-01", False),
    ):
        (repo / "pyproject.toml").write_text(versioned + table.replace("UNTIL", until))
        result = cli("breaking", "--against", "HEAD", cwd=repo)
        assert result.exit_code == int(counts), (until, result.output)
        assert ("expired" in result.stderr) is counts, result.stderr
        assert "accept no_such_tool:TN503 names no finding" in result.stderr


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('accept = ["get_weather"]', "is not TOOL:RULE"),
        ('accept = ["get_weather:TN999"]', "TN999 is no rule of toolnexus-gen breaking"),
        ('accept = [{finding = "a:TN501", until = "soon"}]', "neither a version"),
        ('accept = [{finding = "a:TN501", why = "x"}]', "unknown key 'why'"),
        # a TOML date-time, or a month, is not read as version 2027 (an acceptance never ending)
        ('accept = [{finding = "a:TN501", until = 2027-03-31T10:00:00}]', "is not a date"),
        ('accept = [{finding = "a:TN501", until = "2027-03"}]', "is not a date"),
        # a version with words after it is not read as that version
        ('accept = [{finding = "a:TN501", until = "2.0.0 junk"}]', "neither a version"),
        ('accept = [{finding = "a:TN501", until = "2.0.0; 3.0"}]', "neither a version"),
        ("token_threshold = nan", "must be a percentage"),
        # a long wrong value is quoted in part: the error stays one readable line
        ("ignore = [" + "1, " * 20_000 + "]", "not [1, 1, 1, 1, 1, 1, 1, 1, ...]"),
        ('severity = {TN506 = "fatal"}', "a level is one of info, warning, error"),
        ('severity = {TN999 = "error"}', "no rule of toolnexus-gen breaking"),
        ("deprecation = {weeks = 3}", "must be a table of releases and/or days"),
        ("deprecation = {releases = -1}", "must be a table of releases and/or days"),
    ],
)
def test_bad_accept_configuration(tmp_path: Path, table: str, said: str) -> None:
    repo = history(tmp_path)
    (repo / "pyproject.toml").write_text(TARGETS + f"\n[tool.toolnexus-gen.breaking]\n{table}\n")
    result = cli("breaking", "--against", "HEAD", cwd=repo)
    assert result.exit_code == 2
    assert "pyproject.toml:7:1: error[TN802]: breaking." in result.stderr, result.stderr
    assert said in result.stderr
    assert len(result.stderr) < 1000


def test_a_bad_accept_option_is_a_usage_error(tmp_path: Path) -> None:
    repo = history(tmp_path)
    result = cli("breaking", "--against", "HEAD", "--accept", "get_weather", cwd=repo)
    assert result.exit_code == 2
    assert "--accept 'get_weather' is not TOOL:RULE" in result.stderr


def test_a_severity_override_decides_the_exit_code(tmp_path: Path) -> None:
    repo = history(tmp_path)
    spec = repo / "specs/get_weather.yaml"
    spec.write_text(
        spec.read_text().replace("description: Current weather", "description: Weather")
    )
    assert cli("breaking", "--against", "HEAD", cwd=repo).exit_code == 0
    (repo / "pyproject.toml").write_text(
        TARGETS + '\n[tool.toolnexus-gen.breaking]\nseverity = {tn540 = "error"}\n'
    )
    result = cli("breaking", "--against", "HEAD", "--format", "json", cwd=repo)
    assert result.exit_code == 1
    assert [f["severity"] for f in findings_of(result) if f["rule"] == "TN540"] == ["error"]


@pytest.mark.parametrize(
    ("until", "ok"),
    [
        ("2.0.0", True),
        ("v2.0", True),
        ("2.0.0rc1", True),
        ("2.0.0.post1", True),
        ("2.1.dev3", True),
        ("2027-03-31", True),
        ("2.0.0 junk", False),
        ("2.0.0-", False),
        ("2.0.0+local", False),
        ("2..0", False),
    ],
)
def test_until_is_a_whole_version_or_day(until: str, ok: bool) -> None:
    from toolnexus_gen.breaking.accept import until_problem

    assert (until_problem(until) is None) is ok, until_problem(until)
