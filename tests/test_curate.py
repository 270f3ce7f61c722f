"""Curated third-party tools, end to end: GitHub's REST description (a trimmed excerpt of two
releases, tests/data/github) declared as a synced source with 12 operations and two overlays,
overrides over its tools (a tool and an argument renamed, owner and repo hidden and fixed from
the environment, descriptions rewritten), `sync` then `build`, calls sent to a stub server on
127.0.0.1, the next release's drift named by the rules of `breaking`, and every bad override a
located error."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, snapshot
from rest_server import Answer, Recorder, serving

DATA = Path(__file__).parent / "data" / "github"
OPERATIONS = [
    "issues/create",
    "issues/get",
    "issues/update",
    "issues/list-for-repo",
    "issues/create-comment",
    "issues/list-comments",
    "issues/add-labels",
    "issues/list-labels-for-repo",
    "pulls/list",
    "pulls/get",
    "repos/get",
    "search/issues-and-pull-requests",
]
TOOLS = sorted(op.replace("/", "_").replace("-", "_") for op in OPERATIONS)
MARKER = "owner-marker-7731"  # an environment value that must never reach a file
PYPROJECT = """[tool.toolnexus-gen]
targets = ["openai", "anthropic", "gemini", "mcp"]
out = "curated_github_tools"

[tool.toolnexus-gen.openapi.github]
document = "apis/github.json"
operations = [OPERATIONS]
server = "https://api.github.com"
overlays = ["apis/github.overlay.yaml", "apis/github.descriptions.overlay.yaml"]

[tool.toolnexus-gen.overrides."issues_create"]
name = "open_issue"
description = "Open an issue in our tracker."
hide = ["owner", "repo"]
fixed = { owner = "${GH_OWNER}", repo = "${GH_REPO}", labels = ["from-agent"] }
defaults = {}
arguments.title = { name = "headline", description = "One line." }

[tool.toolnexus-gen.overrides.issues_get]
description = "Read one issue of our tracker."
hide = ["owner", "repo"]
fixed = { owner = "${GH_OWNER}", repo = "${GH_REPO}" }
targets = { exclude = ["gemini"] }

[tool.toolnexus-gen.overrides.issues_list_for_repo]
hide = ["owner", "repo", "state"]
fixed = { owner = "${GH_OWNER}", repo = "${GH_REPO}", state = "${GH_STATE}" }
defaults = { sort = "updated" }
""".replace("[OPERATIONS]", json.dumps(OPERATIONS))


def _lines(result: Any) -> list[str]:
    return (result.stdout + result.stderr).splitlines()


def _ok(result: Any) -> None:
    assert result.exit_code == 0, result.stdout + result.stderr


def make_project(root: Path, release: str = "22.0.0") -> Path:
    (root / "apis").mkdir(parents=True)
    (root / "specs").mkdir()
    shutil.copy(DATA / f"github-{release}.json", root / "apis" / "github.json")
    for overlay in ("github.overlay.yaml", "github.descriptions.overlay.yaml"):
        shutil.copy(DATA / overlay, root / "apis" / overlay)
    (root / "pyproject.toml").write_text(PYPROJECT, "utf-8")
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("curate") / "project")
    with pytest.MonkeyPatch.context() as env:  # never read by sync or build, never written
        env.setenv("GH_OWNER", MARKER)
        _ok(cli("sync", cwd=root))
        _ok(cli("build", cwd=root))
    return root


@pytest.fixture(scope="module")
def pkg(project: Path) -> Any:
    sys.path.insert(0, str(project))
    try:
        return importlib.import_module("curated_github_tools")
    finally:
        sys.path.remove(str(project))


def _entries(project: Path, target: str) -> dict[str, Any]:
    data = json.loads((project / "curated_github_tools" / "schemas" / f"{target}.json").read_text())
    if target == "openai":
        return {e["function"]["name"]: e["function"] for e in data}
    if target == "gemini":
        return {e["name"]: e for e in data[0]["functionDeclarations"]}
    return {e["name"]: e for e in data}


# -- sync ----------------------------------------------------------------------------------------


def test_sync_writes_the_selected_operations_with_the_overlays_applied(project: Path) -> None:
    folder = project / "specs" / "github"
    assert sorted(p.stem for p in folder.glob("[!.]*.json")) == TOOLS
    manifest = json.loads((folder / ".toolnexus-sync.json").read_text())
    assert manifest["source"] == {"openapi": "github"} and manifest["gone"] == {}
    assert sorted(f for f in manifest["files"] if "/" not in f) == [f"{t}.json" for t in TOOLS]
    create = json.loads((folder / "issues_create.json").read_text())
    assert create["description"].startswith("Open an issue in our tracker\n")  # overlay 1
    body = create["input_schema"]["properties"]["body"]
    assert body["description"] == "The issue's text, in Markdown."  # overlay 2, after overlay 1
    for tool in ("issues_list_for_repo", "issues_list_comments", "pulls_list"):
        properties = json.loads((folder / f"{tool}.json").read_text())["input_schema"]["properties"]
        assert "page" in properties and "per_page" not in properties  # removed by a filter
    again = cli("sync", cwd=project)
    _ok(again)
    assert "0 files written" in again.stdout  # the same document gives the same bytes


def test_files_sync_did_not_write_are_left_alone(tmp_path: Path, project: Path) -> None:
    copy = tmp_path / "p"
    shutil.copytree(project, copy)
    mine = copy / "specs" / "github" / "NOTES.md"
    mine.write_text("ours\n")
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"repos/get", ', ""))
    _ok(cli("sync", cwd=copy))
    assert mine.read_text() == "ours\n"
    assert not (copy / "specs" / "github" / "repos_get.json").exists()  # sync's own: removed
    gone = json.loads((copy / "specs" / "github" / ".toolnexus-sync.json").read_text())["gone"]
    assert list(gone) == ["repos_get"]
    (copy / "specs" / "github" / "repos_get.json").write_text('{"description": "mine"}\n')
    pyproject.write_text(PYPROJECT)  # repos/get is wanted again: a file of ours is in the way
    before = snapshot(copy / "specs")
    result = cli("sync", cwd=copy)
    assert result.exit_code == 2
    assert any("error[TN488]" in line and "repos_get.json" in line for line in _lines(result))
    assert snapshot(copy / "specs") == before


# -- build: the curated surface ------------------------------------------------------------------


def test_the_schemas_show_only_the_curated_surface(project: Path) -> None:
    openai = _entries(project, "openai")
    expected = sorted({*TOOLS} - {"issues_create"} | {"open_issue"})
    assert sorted(openai) == expected
    issue = openai["open_issue"]
    assert issue["description"] == "Open an issue in our tracker."
    properties = issue["parameters"]["properties"]
    assert list(properties)[:2] == ["headline", "body"]
    assert properties["headline"]["description"] == "One line."
    assert not {"owner", "repo", "labels", "title"} & set(properties)
    assert "headline" in issue["parameters"]["required"]
    get = openai["issues_get"]
    assert get["description"] == "Read one issue of our tracker."
    assert list(get["parameters"]["properties"]) == ["issue_number"]
    listing = openai["issues_list_for_repo"]["parameters"]["properties"]
    assert not {"owner", "repo", "state"} & set(listing)
    sort = _entries(project, "mcp")["issues_list_for_repo"]["inputSchema"]["properties"]["sort"]
    assert sort["default"] == "updated"  # the MCP file carries the schema as it is
    assert "issues_get" not in _entries(project, "gemini")  # targets = {exclude = ["gemini"]}
    assert "open_issue" in _entries(project, "gemini")
    mcp = _entries(project, "mcp")
    assert sorted(mcp) == expected and "owner" in mcp["repos_get"]["inputSchema"]["properties"]


def test_models_and_list_show_the_curated_tools(project: Path, pkg: Any) -> None:
    assert set(pkg.OpenIssueArgs.model_fields) >= {"headline", "body"}
    assert not {"owner", "repo", "title"} & set(pkg.OpenIssueArgs.model_fields)
    assert not hasattr(pkg, "IssuesCreateArgs")
    listed = cli("list", cwd=project)
    _ok(listed)
    names = listed.stdout.splitlines()
    assert "open_issue" in names and "issues_create" not in names
    at = names.index("open_issue")
    override = next(line for line in names[at:] if line.startswith("  overridden"))
    assert override == (
        "  overridden (pyproject.toml:11): renamed from issues_create; description; arguments "
        "renamed: title -> headline; arguments described: title; hidden: owner, repo, labels; "
        "fixed: owner, repo, labels"
    )
    at = names.index("issues_get")
    assert (
        names[at + 3]
        == "  overridden (pyproject.toml:19): description; hidden: owner, repo; fixed: owner, repo; targets"
    )
    assert not any(
        line.startswith("  overridden") for line in names[names.index("repos_get") :][:4]
    )


def test_environment_values_are_never_written(project: Path) -> None:
    for path in project.rglob("*"):
        if path.is_file():
            assert MARKER.encode() not in path.read_bytes(), path
    dispatch = (project / "curated_github_tools" / "dispatch.py").read_text()
    assert '"${GH_OWNER}"' in dispatch  # the placeholder, read at run time


# -- run time: the calls a stub server receives --------------------------------------------------


@pytest.fixture
def server() -> Any:
    with serving() as recorder:
        yield recorder


def _toolkit(pkg: Any, server: Recorder) -> Any:
    return pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)


def test_calls_are_mapped_back_to_what_github_expects(
    pkg: Any, server: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GH_OWNER", "octo-org")
    monkeypatch.setenv("GH_REPO", "hello world")
    monkeypatch.setenv("GH_STATE", "closed")
    server.route("POST", "/repos/octo-org/hello%20world/issues", Answer(201, {"number": 7}))
    server.route("GET", "/repos/octo-org/hello%20world/issues/7", Answer(200, {"number": 7}))
    server.route("GET", "/repos/octo-org/hello%20world/issues", Answer(200, []))
    tk = _toolkit(pkg, server)
    # an `owner` or a `title` the model makes up is refused, nothing sent: a fixed argument is
    # never the model's, and a renamed one is taken under its new name only
    refused = tk.execute_sync(
        "open_issue", {"headline": "Broken", "body": "It is.", "owner": "evil", "title": "evil"}
    )
    assert refused.is_error and "owner: not an argument" in refused.output, refused.output
    assert "title: not an argument" in refused.output and server.seen == []
    made = tk.execute_sync("open_issue", {"headline": "Broken", "body": "It is."})
    assert (made.is_error, made.data) == (False, {"number": 7}), made.output
    got = tk.execute_sync("issues_get", {"issue_number": 7})
    assert not got.is_error, got.output
    listed = tk.execute_sync("issues_list_for_repo", {"labels": "bug"})
    assert not listed.is_error, listed.output
    create, read, search = server.seen
    assert (create.method, create.target) == ("POST", "/repos/octo-org/hello%20world/issues")
    assert create.json == {"title": "Broken", "body": "It is.", "labels": ["from-agent"]}
    assert (read.method, read.target) == ("GET", "/repos/octo-org/hello%20world/issues/7")
    assert search.path == "/repos/octo-org/hello%20world/issues"
    assert sorted(search.query) == [("labels", "bug"), ("sort", "updated"), ("state", "closed")]


def test_a_renamed_argument_is_validated_under_its_new_name(pkg: Any, server: Recorder) -> None:
    result = _toolkit(pkg, server).execute_sync("open_issue", {"title": "Broken"})
    assert result.is_error and "headline" in result.output
    assert server.seen == []


def test_a_missing_variable_is_an_error_result_naming_it(
    pkg: Any, server: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GH_OWNER", raising=False)
    monkeypatch.setenv("GH_REPO", "hello")
    result = _toolkit(pkg, server).execute_sync("issues_get", {"issue_number": 1})
    assert result.is_error and "GH_OWNER" in result.output
    assert server.seen == []


def test_values_read_from_the_environment_are_blanked_from_errors(
    pkg: Any, server: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GH_OWNER", "secret-owner-42")
    monkeypatch.setenv("GH_REPO", "hello")
    server.route(
        "GET",
        "/repos/secret-owner-42/hello/issues/1",
        Answer(404, {"message": "no repository secret-owner-42/hello"}),
    )
    result = _toolkit(pkg, server).execute_sync("issues_get", {"issue_number": 1})
    assert result.is_error and "HTTP 404" in result.output
    assert "secret-owner-42" not in result.output


def test_values_read_from_the_environment_are_blanked_from_results(
    pkg: Any, server: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GH_OWNER", "secret-owner-43")
    monkeypatch.setenv("GH_REPO", "hello")
    server.route(
        "GET",
        "/repos/secret-owner-43/hello/issues/2",
        Answer(200, {"url": "/repos/secret-owner-43/hello/issues/2", "number": 2}),
    )
    result = _toolkit(pkg, server).execute_sync("issues_get", {"issue_number": 2})
    assert not result.is_error, result.output
    assert result.data["number"] == 2
    assert "secret-owner-43" not in result.output
    assert "secret-owner-43" not in json.dumps(result.data)


# -- the next release: drift by rule, overrides kept ---------------------------------------------


def test_the_next_release_is_drift_named_by_rule_and_overrides_survive(
    tmp_path: Path, project: Path
) -> None:
    copy = tmp_path / "p"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns("curated_github_tools"))
    shutil.copy(DATA / "github-23.0.0.json", copy / "apis" / "github.json")
    before = snapshot(copy / "specs")
    checked = cli("sync", "--check", cwd=copy)
    assert checked.exit_code == 1
    lines = _lines(checked)
    assert snapshot(copy / "specs") == before  # --check writes nothing
    assert any(
        line.startswith("specs/github/issues_list_for_repo.json: changed upstream")
        and "/input_schema/properties/issue_field_values added" in line
        for line in lines
    ), lines
    assert "  info[TN531] callers: optional argument 'issue_field_values' added" in lines
    assert "  info[TN531] callers: optional argument 'duplicate_issue_id' added" in lines
    assert any(line.startswith("  warning[TN512] callers: result field") for line in lines), lines
    assert any("github: the snapshot is out of date" in line for line in lines)
    _ok(cli("sync", cwd=copy))
    _ok(cli("sync", "--check", cwd=copy))
    _ok(cli("build", cwd=copy))
    openai = _entries(copy, "openai")
    issue = openai["open_issue"]["parameters"]["properties"]
    assert "issue_field_values" in issue and "headline" in issue and "owner" not in issue
    assert openai["issues_get"]["description"] == "Read one issue of our tracker."


def test_a_tool_removed_upstream_is_drift_and_its_override_a_warning(
    tmp_path: Path, project: Path
) -> None:
    copy = tmp_path / "p"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns("curated_github_tools"))
    (copy / "apis" / "gone.yaml").write_text(
        "overlay: 1.0.0\ninfo: {title: gone, version: '1'}\nactions:\n"
        "  - target: $.paths['/repos/{owner}/{repo}/issues/{issue_number}'].get\n"
        "    remove: true\n"
    )
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            '"apis/github.descriptions.overlay.yaml"]',
            '"apis/github.descriptions.overlay.yaml", "apis/gone.yaml"]',
        )
    )
    checked = cli("sync", "--check", cwd=copy)
    assert checked.exit_code == 1
    lines = _lines(checked)
    assert (
        "specs/github/issues_get.json: removed upstream (tool 'issues_get' of openapi.github)"
        in lines
    )
    assert any(line.startswith("  error[TN501] callers: tool removed") for line in lines), lines
    assert (
        "  warning[TN376] overrides: [tool.toolnexus-gen.overrides.issues_get] will no longer "
        "apply once synced"
    ) in lines
    assert any("warning[TN487]" in line and "issues/get" in line for line in lines)
    _ok(cli("sync", cwd=copy))
    built = cli("build", cwd=copy)
    _ok(built)
    at = PYPROJECT.splitlines().index("[tool.toolnexus-gen.overrides.issues_get]") + 1
    assert any(
        line.startswith(f"pyproject.toml:{at}:1: warning[TN376]") and "gone upstream" in line
        for line in _lines(built)
    ), _lines(built)


# -- bad overrides: located errors, nothing written ----------------------------------------------

BAD = [
    ('[tool.toolnexus-gen.overrides.issues_craete]\nname = "x"\n', 1, 1, "TN375"),
    (
        '[tool.toolnexus-gen.overrides.repos_get]\narguments.ownr = { name = "who" }\n',
        2,
        1,
        "TN371",
    ),
    ('[tool.toolnexus-gen.overrides.repos_get]\nname = "pulls_get"\n', 2, 1, "TN372"),
    ('[tool.toolnexus-gen.overrides.repos_get]\nhide = ["owner"]\n', 2, 1, "TN373"),
    (
        '[tool.toolnexus-gen.overrides.pulls_get]\nfixed = { pull_number = "one" }\n',
        2,
        11,
        "TN374",
    ),
    (
        '[tool.toolnexus-gen.overrides.pulls_get]\nfixed = { pull_number = "${PR}" }\n',
        2,
        11,
        "TN374",
    ),
    (
        '[tool.toolnexus-gen.overrides.pulls_get]\ntargets = { exclude = ["gemni"] }\n',
        2,
        1,
        "TN813",
    ),
]


@pytest.mark.parametrize(
    ("extra", "line", "col", "code"), BAD, ids=[b[3] + str(i) for i, b in enumerate(BAD)]
)
def test_a_bad_override_is_a_located_error(
    tmp_path: Path, project: Path, extra: str, line: int, col: int, code: str
) -> None:
    copy = tmp_path / "p"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns("curated_github_tools"))
    (copy / "pyproject.toml").write_text(PYPROJECT + "\n" + extra)
    start = len((PYPROJECT + "\n").splitlines())
    result = cli("build", cwd=copy)
    assert result.exit_code == 2
    prefix = f"pyproject.toml:{start + line}:{col}: error[{code}]"
    assert any(found.startswith(prefix) for found in _lines(result)), (prefix, _lines(result))
    assert not (copy / "curated_github_tools").exists()


def test_an_override_of_an_own_spec_says_to_edit_it(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "now.yaml").write_text("description: Current time\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\n\n[tool.toolnexus-gen.overrides.now]\ndescription = "Time"\n'
    )
    result = cli("build", cwd=tmp_path)
    assert result.exit_code == 2
    assert any(x.startswith("pyproject.toml:3:1: error[TN370]") for x in _lines(result))


# -- any source: a built-in's argument renamed and defaulted -------------------------------------


def test_a_builtin_tool_renamed_and_its_argument_too(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\nbuiltins = ["read"]\nout = "builtin_curated"\n\n'
        "[tool.toolnexus-gen.overrides.read]\n"
        'name = "read_note"\n'
        'arguments.path = { name = "note", description = "A note of the workspace." }\n'
        "defaults = { limit = 1 }\n"
    )
    _ok(cli("build", cwd=tmp_path))
    sys.path.insert(0, str(tmp_path))
    try:
        pkg = importlib.import_module("builtin_curated")
    finally:
        sys.path.remove(str(tmp_path))
    entry = {t["name"]: t for t in pkg.to_anthropic()}["read_note"]
    assert list(entry["input_schema"]["properties"])[0] == "note"
    assert entry["input_schema"]["required"] == ["note"]
    tk = pkg.Toolkit(pkg.ToolHandlers(), workspace=tmp_path / "work")
    result = tk.execute_sync("read_note", {"note": "notes.txt"})
    assert not result.is_error, result.output
    assert "one" in result.output and "two" not in result.output  # the default limit sent


def test_the_curated_package_passes_mypy_and_ruff(project: Path) -> None:
    import subprocess
    import sysconfig

    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "curated_github_tools"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert mypy.returncode == 0, mypy.stdout
    ruff = str(Path(sysconfig.get_path("scripts")) / "ruff")
    for command in (["check", "--isolated", "--extend-select", "I"], ["format", "--check"]):
        done = subprocess.run(
            [ruff, *command, "curated_github_tools"],
            cwd=project,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout


def test_tags_and_exclude_select_the_operations(tmp_path: Path) -> None:
    (tmp_path / "apis").mkdir()
    shutil.copy(DATA / "github-22.0.0.json", tmp_path / "apis" / "github.json")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.openapi.gh]\ndocument = "apis/github.json"\n'
        'tags = ["pulls"]\nexclude = ["pulls/create"]\n'
    )
    _ok(cli("sync", cwd=tmp_path))
    names = sorted(p.stem for p in (tmp_path / "specs" / "gh").glob("[!.]*.json"))
    assert names == ["pulls_get", "pulls_list"]
