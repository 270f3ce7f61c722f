"""The daily workflow, as a new user runs it: init, build, scaffold, serve over MCP, import,
list, and the CLI's manners (summary, --quiet, colour)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, snapshot

FIXTURES = Path(__file__).parent / "fixtures" / "mcp"


def run(args: list[str], cwd: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False, **kw)


def test_init_creates_a_project_and_never_clobbers(tmp_path: Path) -> None:
    result = cli("init", str(tmp_path / "app"))
    assert result.exit_code == 0, result.stderr
    app = tmp_path / "app"
    assert (app / "specs/get_weather.yaml").is_file()
    assert "[tool.toolnexus-gen]" in (app / "pyproject.toml").read_text()
    assert "toolnexus-gen build" in (app / ".pre-commit-config.yaml").read_text()
    before = snapshot(app)
    again = cli("init", str(app))
    assert again.exit_code == 0 and "kept" in again.output
    assert snapshot(app) == before  # same bytes, same modification times

    # An existing pyproject.toml keeps every byte but for the runtime requirement added to its
    # [project] table; the section is appended after it.
    other = tmp_path / "other"
    other.mkdir()
    original = '[project]\nname = "mine"\nversion = "1"\n'
    (other / "pyproject.toml").write_text(original)
    (other / ".pre-commit-config.yaml").write_text("repos: []\n")
    assert cli("init", str(other)).exit_code == 0
    text = (other / "pyproject.toml").read_text()
    added = 'dependencies = ["toolnexus-runtime>=0.2.0,<0.3"]\n'
    assert added in text and text.replace(added, "", 1).startswith(original)
    assert "[tool.toolnexus-gen]" in text
    assert (other / ".pre-commit-config.yaml").read_text() == "repos: []\n"


def test_new_user_flow_init_build_scaffold_serve_mcp(tmp_path: Path) -> None:
    """init -> build -> scaffold -> fill in the handler -> serve over MCP -> official client."""
    assert cli("init", cwd=tmp_path).exit_code == 0
    built = cli("build", cwd=tmp_path)
    assert built.exit_code == 0, built.stderr
    assert "1 tool, 6 targets: 14 files written, 0 unchanged in tools" in built.output
    assert cli("scaffold", "handlers.py", cwd=tmp_path).exit_code == 0
    source = (tmp_path / "handlers.py").read_text()
    assert "class Handlers(ToolHandlers):" in source
    assert (
        "async def get_weather(self, args: GetWeatherArgs, ctx: ToolContext) -> ToolOutput:"
        in source
    )
    # The user fills the stub in.
    (tmp_path / "handlers.py").write_text(
        source.replace(
            'raise NotImplementedError("get_weather")',
            'return {"city": args.city, "temp": 21, "units": args.units.value}',
        )
    )
    (tmp_path / "server.py").write_text(
        "from handlers import Handlers\nfrom tools import Toolkit, serve_mcp\n\n"
        "serve_mcp(Toolkit(Handlers()))\n"
    )
    client = tmp_path / "client.py"
    client.write_text(
        textwrap.dedent(
            """
            import json, sys
            import anyio
            from mcp import ClientSession, StdioServerParameters
            from mcp.client.stdio import stdio_client

            async def main():
                params = StdioServerParameters(command=sys.executable, args=["server.py"])
                async with stdio_client(params) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        listed = await session.list_tools()
                        ok = await session.call_tool("get_weather", {"city": "Rome"})
                        bad = await session.call_tool("get_weather", {"town": "Rome"})
                        unknown = await session.call_tool("launch", {})
                        print(json.dumps({
                            "tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json")
                                      for t in listed.tools],
                            "ok": [ok.is_error, ok.content[0].text, ok.structured_content],
                            "bad": [bad.is_error, bad.content[0].text],
                            "unknown": [unknown.is_error, unknown.content[0].text],
                        }))

            anyio.run(main)
            """
        )
    )
    done = run([sys.executable, str(client)], tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["tools"] == json.loads((tmp_path / "tools/schemas/mcp.json").read_text())
    assert answer["ok"][0] is False
    assert answer["ok"][2] == {"city": "Rome", "temp": 21, "units": "celsius"}
    assert json.loads(answer["ok"][1]) == answer["ok"][2]
    assert answer["bad"][0] is True and "city" in answer["bad"][1]
    assert answer["unknown"][0] is True and "get_weather" in answer["unknown"][1]


def test_scaffold_is_written_once_then_lists_missing_methods(tmp_path: Path) -> None:
    assert cli("init", cwd=tmp_path).exit_code == 0
    assert cli("scaffold", "handlers.py", cwd=tmp_path).exit_code == 0
    (tmp_path / "specs/now.yaml").write_text("description: Current time\n")
    before = snapshot(tmp_path)
    result = cli("scaffold", "handlers.py", cwd=tmp_path)
    assert result.exit_code == 0
    assert "left unchanged" in result.output
    assert "async def now(self, args: NowArgs, ctx: ToolContext) -> ToolOutput:" in result.output
    assert "get_weather" not in result.output.split("left unchanged", 1)[1]
    assert snapshot(tmp_path) == before


def test_scaffolded_module_type_checks_and_lints(tmp_path: Path) -> None:
    assert cli("init", cwd=tmp_path).exit_code == 0
    (tmp_path / "specs/now.yaml").write_text('description: \'Current """ time\'\n')
    assert cli("build", cwd=tmp_path).exit_code == 0
    assert cli("scaffold", "handlers.py", cwd=tmp_path).exit_code == 0
    mypy = run([sys.executable, "-m", "mypy", "--strict", "handlers.py"], tmp_path)
    assert mypy.returncode == 0, mypy.stdout
    ruff = run([sys.executable, "-m", "ruff", "check", "--isolated", "handlers.py"], tmp_path)
    assert ruff.returncode == 0, ruff.stdout
    fmt = run(
        [sys.executable, "-m", "ruff", "format", "--isolated", "--check", "handlers.py"], tmp_path
    )
    assert fmt.returncode == 0, fmt.stdout


def test_list_shows_tools_targets_and_warnings(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "page.yaml").write_text(
        "description: Page through\ninput_schema:\n  type: object\n  properties:\n"
        "    page-size: {type: integer}\n"
    )
    (specs / "only_mcp.yaml").write_text("description: MCP only\ntargets: {only: [mcp]}\n")
    result = cli("list", "specs", cwd=tmp_path)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "only_mcp" and "targets: mcp" in lines[2]
    assert "page" in lines and "[1 warning]" in result.output and "TN319" in result.output


def test_quiet_colour_and_no_color(tmp_path: Path) -> None:
    assert cli("init", cwd=tmp_path).exit_code == 0
    quiet = cli("build", "-q", cwd=tmp_path)
    assert quiet.exit_code == 0 and quiet.output == ""
    from click.testing import CliRunner

    from toolnexus_gen.cli import main

    coloured = CliRunner().invoke(main, ["build", str(tmp_path / "specs")], color=True)
    assert "\x1b[" in coloured.output
    plain = CliRunner(env={"NO_COLOR": "1"}).invoke(
        main, ["build", str(tmp_path / "specs")], color=True
    )
    assert plain.exit_code == 0 and "\x1b[" not in plain.output


# -- import -------------------------------------------------------------------------------------

SAMPLE_NAMES = sorted(p.name.removesuffix(".tools.json") for p in FIXTURES.glob("*.tools.json"))


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_import_mcp_tools_list_then_build_gives_it_back(name: str, tmp_path: Path) -> None:
    sample = json.loads((FIXTURES / f"{name}.tools.json").read_text())
    source = tmp_path / "tools_list.json"
    source.write_text(json.dumps({"tools": sample["tools"]}))
    result = cli("import", "mcp", str(source), cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    built = cli("build", "specs", "--out", "out", "--target", "mcp", cwd=tmp_path)
    assert built.exit_code == 0, built.stderr
    rebuilt = json.loads((tmp_path / "out/schemas/mcp.json").read_text())
    expected = sorted(sample["tools"], key=lambda tool: tool["name"])
    kept = {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
    for tool in expected:  # the documented normalisations
        tool.setdefault("description", tool.get("title") or tool["name"])
        for key in set(tool) - kept:
            del tool[key]  # execution, icons, _meta: reported as not imported
    assert rebuilt == expected


def test_import_refuses_to_overwrite_unless_forced(tmp_path: Path) -> None:
    source = tmp_path / "tools.json"
    source.write_text(
        json.dumps(
            [
                {
                    "type": "function",
                    "function": {
                        "name": "ping",
                        "description": "Ping",
                        "parameters": {"type": "object", "properties": {}},
                    },
                }
            ]
        )
    )
    assert cli("import", "openai", str(source), cwd=tmp_path).exit_code == 0
    spec = tmp_path / "specs/ping.yaml"
    spec.write_text(spec.read_text() + "# my edit\n")
    before = snapshot(tmp_path / "specs")
    again = cli("import", "openai", str(source), cwd=tmp_path)
    assert again.exit_code == 2 and "already exist" in again.stderr and "--force" in again.stderr
    assert snapshot(tmp_path / "specs") == before
    forced = cli("import", "openai", str(source), "--force", cwd=tmp_path)
    assert forced.exit_code == 0
    assert "# my edit" not in spec.read_text()


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        ("openai", "[{]", "invalid JSON"),
        ("openai", '{"tools": 3}', "expected a list of tools"),
        (
            "anthropic",
            '[{"name": "a b", "input_schema": {"type": "object"}}]',
            "cannot be a spec file name",
        ),
        ("mcp", '[{"name": "x"}]', "missing 'inputSchema'"),
        ("bedrock", '{"tools": []}', "no tools found"),
    ],
)
def test_import_bad_files_are_located_errors(
    fmt: str, text: str, message: str, tmp_path: Path
) -> None:
    source = tmp_path / "in.json"
    source.write_text(text)
    result = cli("import", fmt, str(source), cwd=tmp_path)
    assert result.exit_code == 2
    assert message in result.stderr and "in.json" in result.stderr
    assert not (tmp_path / "specs").exists()


def test_mcp_structured_content_is_checked_against_the_output_schema(build_package: Any) -> None:
    pkg = build_package(
        {
            "stats.yaml": {
                "description": "Stats",
                "output_schema": {
                    "type": "object",
                    "properties": {"count": {"type": "integer"}},
                    "required": ["count"],
                },
            },
            "free.yaml": {"description": "No output schema"},
        }
    )
    mcp = importlib.import_module("toolnexus_runtime.mcp")
    schema = {t["name"]: mcp._output_validator(t.get("outputSchema")) for t in pkg.to_mcp()}
    ok, data = mcp._structured(
        "stats", pkg.ToolResult('{"count": 3}', False, {"count": 3}), schema["stats"]
    )
    assert not ok.is_error and data == {"count": 3}
    bad, data = mcp._structured(
        "stats", pkg.ToolResult('{"count": "x"}', False, {"count": "x"}), schema["stats"]
    )
    assert bad.is_error and data is None and "count" in bad.output and "outputSchema" in bad.output
    text, data = mcp._structured("stats", pkg.ToolResult("just text"), schema["stats"])
    assert text.is_error and "no object" in text.output
    parsed, data = mcp._structured("stats", pkg.ToolResult('{"count": 5}'), schema["stats"])
    assert not parsed.is_error and data == {"count": 5}  # JSON text is parsed and checked
    free, data = mcp._structured("free", pkg.ToolResult("hello"), schema["free"])
    assert not free.is_error and data is None


def test_a_list_result_goes_under_mcps_result_wrapper(build_package: Any) -> None:
    wrapped = {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "integer"}}},
        "required": ["result"],
    }
    pkg = build_package({"ids.yaml": {"description": "Ids", "output_schema": wrapped}})
    mcp = importlib.import_module("toolnexus_runtime.mcp")
    (validator,) = [mcp._output_validator(t.get("outputSchema")) for t in pkg.to_mcp()]
    listed, data = mcp._structured("ids", pkg.ToolResult("[1, 2]", False, [1, 2]), validator)
    assert not listed.is_error and data == {"result": [1, 2]}
    parsed, data = mcp._structured("ids", pkg.ToolResult("[3]"), validator)
    assert not parsed.is_error and data == {"result": [3]}  # JSON text: parsed, then wrapped
    bad, data = mcp._structured("ids", pkg.ToolResult('["x"]', False, ["x"]), validator)
    assert bad.is_error and data is None and "result/0" in bad.output


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            '[project]\nname = "app"\ndependencies = [\n  "httpx>=0.27",  # why\n]\n',
            '[project]\nname = "app"\ndependencies = [\n  "toolnexus-runtime>=0.2.0,<0.3",\n  "httpx>=0.27",  # why\n]\n',
        ),
        (
            '[project]\nname = "app"\ndependencies = ["httpx"]\n',
            '[project]\nname = "app"\ndependencies = ["toolnexus-runtime>=0.2.0,<0.3", "httpx"]\n',
        ),
        (
            '[project]\nname = "app"\ndependencies = []\n',
            '[project]\nname = "app"\ndependencies = ["toolnexus-runtime>=0.2.0,<0.3"]\n',
        ),
        (
            '[project]\nname = "app"\n',
            '[project]\ndependencies = ["toolnexus-runtime>=0.2.0,<0.3"]\nname = "app"\n',
        ),
    ],
    ids=["multi-line", "one-line", "empty", "absent"],
)
def test_init_adds_the_runtime_to_project_dependencies(
    before: str, after: str, tmp_path: Path
) -> None:
    from toolnexus_gen.codegen.package import RUNTIME_REQUIREMENT

    assert RUNTIME_REQUIREMENT == "toolnexus-runtime>=0.2.0,<0.3"
    (tmp_path / "pyproject.toml").write_text(before)
    result = cli("init", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert f"added {RUNTIME_REQUIREMENT} to [project].dependencies" in result.output
    assert (tmp_path / "pyproject.toml").read_text().startswith(after)
    again = cli("init", cwd=tmp_path)  # a second init changes nothing
    assert "already requires toolnexus-runtime" in again.output
    assert (tmp_path / "pyproject.toml").read_text().count("toolnexus-runtime") == 1


def test_init_without_a_project_table_says_what_to_add(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.other]\nx = 1\n")
    result = cli("init", cwd=tmp_path)
    assert "note: your application needs toolnexus-runtime>=0.2.0,<0.3" in result.output
    assert "dependencies" not in (tmp_path / "pyproject.toml").read_text()


def test_generated_package_refuses_a_runtime_outside_its_range(
    build_package: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolnexus_runtime._version

    from toolnexus_gen.codegen.package import RUNTIME_BELOW, RUNTIME_MINIMUM

    # The runtime in this repository is one the generator's packages accept.
    version = tuple(int(p) for p in toolnexus_runtime.__version__.split("."))
    assert tuple(int(p) for p in RUNTIME_MINIMUM.split(".")) <= version
    assert version < tuple(int(p) for p in RUNTIME_BELOW.split("."))
    monkeypatch.setattr(toolnexus_runtime._version, "__version__", "0.3.1")
    with pytest.raises(ImportError) as info:
        build_package({"now.yaml": {"description": "Current time"}})
    text = str(info.value)
    assert "toolnexus-runtime>=0.2.0,<0.3" in text and "0.3.1" in text and "gen_pkg_" in text
