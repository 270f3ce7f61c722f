"""What a source writes builds, with default settings, for every target: the recorded tools/list
of seven real MCP servers (tests/fixtures/mcp, served again by the test server) synced, built
with no reach setting in pyproject.toml, judged by each provider's SDK types and documented
rules, the package checked by mypy --strict and ruff and imported with only the runtime. The
snapshots keep the schemas as sent; the spec's own `profile: reach` carries them; the steps are
one line per server; a tool no build could take is named, with every other such tool, in one
sync."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, cli, write_specs
from mcp_helpers import project, stdio
from provider_rules import anthropic_request, violations
from runtime_only import run as run_runtime_only
from sdk_check import assert_accepted

from toolnexus_gen.sources import mcp, mcp_config

FIXTURES = ROOT / "tests" / "fixtures" / "mcp"
RECORDED = {
    "time": "py-mcp-server-time",
    "fetch": "py-mcp-server-fetch",
    "git": "py-mcp-server-git",
    "everything": "server-everything",
    "filesystem": "server-filesystem",
    "memory": "server-memory",
    "github": "server-github",
}
STEP_CODES = ("TN210", "TN211", "TN220", "TN221", "TN222", "TN223", "TN224", "TN225", "TN226")


def sent(name: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((FIXTURES / f"{name}.tools.json").read_text())["tools"]
    return tools


def provider_files(out: Path) -> dict[str, Any]:
    return {p.stem: json.loads(p.read_text()) for p in (out / "schemas").glob("*.json")}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The seven recorded servers, each served over stdio by the test server, synced into one
    project whose pyproject.toml says nothing about reach."""
    folder = tmp_path_factory.mktemp("recorded")
    servers = {}
    for server, name in RECORDED.items():
        listing = folder / f"{name}.json"
        listing.write_text(json.dumps(sent(name)))
        servers[server] = stdio("--tools", str(listing), "--page", "7", timeout=60)
    project(folder, servers, out="recorded_tools")
    return folder, cli("sync", cwd=folder)


def test_the_recorded_servers_build_for_every_target_with_default_settings(
    recorded: tuple[Path, Any],
) -> None:
    folder, synced = recorded
    assert synced.exit_code == 0, synced.output + synced.stderr
    result = cli("build", cwd=folder)
    assert result.exit_code == 0, result.stderr
    assert " error[" not in result.stderr
    files = provider_files(folder / "recorded_tools")
    assert {"gemini", "openai", "openai_responses", "anthropic", "mcp", "bedrock"} <= set(files)
    assert_accepted(files)
    assert violations(files) == []
    # the steps are one line per server, counted, not one line per step
    lines = result.stderr.splitlines()
    summaries = [line for line in lines if "warning[TN414]" in line]
    assert len(summaries) == len(RECORDED), lines
    assert not [line for line in lines if any(f"[{code}]" in line for code in STEP_CODES)]
    (memory,) = [line for line in summaries if "specs/memory/:" in line]
    assert memory.startswith("specs/memory/memory_add_observations.json:")
    assert '9 specs with profile "reach" (written by their source): ' in memory
    assert "removals described" in memory and "strict entries" in memory
    # every step stays listed, tool by tool
    listed = cli("list", cwd=folder)
    assert "warning[TN220]: gemini: 'additionalProperties' removed" in listed.output
    assert "memory_read_graph" in listed.output


def test_the_snapshots_keep_the_schemas_as_the_servers_sent_them(
    recorded: tuple[Path, Any],
) -> None:
    folder, _ = recorded
    for server, name in RECORDED.items():
        for tool in sent(name):
            if (tool.get("execution") or {}).get("taskSupport") == "required":
                continue
            path = folder / "specs" / server / f"{server}_{tool['name']}.json"
            spec = json.loads(path.read_text())
            assert spec["input_schema"] == tool["inputSchema"], path
            assert spec.get("output_schema") == tool.get("outputSchema"), path
            assert spec["profile"] == "reach"
            assert list(spec)[-2:] == ["profile", "source"]


def test_without_their_profile_the_same_snapshots_do_not_build(
    recorded: tuple[Path, Any], tmp_path: Path
) -> None:
    folder, _ = recorded
    shutil.copytree(folder / "specs", tmp_path / "specs")
    for path in (tmp_path / "specs").rglob("*.json"):
        spec = json.loads(path.read_text())
        del spec["profile"]
        path.write_text(json.dumps(spec, indent=2))
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2
    assert "error[TN310]: gemini (parameters): keyword '$schema' is rejected" in result.stderr
    assert "error[TN316]" in result.stderr


def test_a_task_only_tool_is_left_out_with_a_note(tmp_path: Path) -> None:
    """server-everything's listing as it sends it on the 2025-11-25 protocol (2026-07-28 has no
    per-tool task declaration: tasks moved to an extension)."""
    (tmp_path / "mcp.json").write_text('{"mcpServers": {"everything": {"command": "npx"}}}')
    config = mcp_config.read(tmp_path / "mcp.json")
    listing = mcp.Listing(config.servers[0], tools=sent("server-everything"))
    snap, notes = mcp.snapshot(config, listing, tmp_path / "specs")
    assert [d.format().split("/")[-1] for d in notes] == [
        "mcp.json:1:17: warning[TN417]: server 'everything': tool 'simulate-research-query' is "
        "left out: it declares execution.taskSupport 'required' (it runs only as an MCP task, "
        "which the runtime does not start), so every call would fail"
    ]
    assert len(snap.specs) == 12 and "simulate-research-query" not in snap.tools.values()


def test_the_package_passes_mypy_and_ruff_and_imports_with_only_the_runtime(
    recorded: tuple[Path, Any],
) -> None:
    folder, _ = recorded
    if not (folder / "recorded_tools").exists():
        assert cli("build", cwd=folder).exit_code == 0
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "recorded_tools"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert mypy.returncode == 0, mypy.stdout
    ruff = str(Path(sysconfig.get_path("scripts")) / "ruff")
    for rules in ([], ["--extend-select", "I"]):
        check = subprocess.run(
            [ruff, "check", "--isolated", *rules, "recorded_tools"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        assert check.returncode == 0, check.stdout
    script = """
import recorded_tools
from recorded_tools import EverythingGzipFileAsResourceArgs, Toolkit
args = EverythingGzipFileAsResourceArgs()
print(type(args.data).__name__, len(recorded_tools.TOOLS))
"""
    ran = run_runtime_only(script, folder, ("recorded_tools",))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["str", "77"]


# -- a source names every tool a build could not take, in one run --------------------------------

OBJECT = {"type": "object", "properties": {"q": {"type": "string"}}}
MIXED = [
    {"name": "fine", "description": "Builds everywhere", "inputSchema": OBJECT},
    {
        "name": "remote",
        "description": "Refers to a schema on the web",
        "inputSchema": {
            "type": "object",
            "properties": {"page": {"$ref": "https://example.com/schemas/page.json"}},
        },
    },
    {
        "name": "chain",
        "description": "A chain without end",
        "inputSchema": {
            "type": "object",
            "properties": {"next": {"$ref": "#"}},
            "required": ["next"],
        },
    },
    {
        "name": "tree",
        "description": "A recursive answer",
        "inputSchema": OBJECT,
        "outputSchema": {
            "type": "object",
            "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}},
        },
    },
    {
        "name": "typo",
        "description": "A type that does not exist",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integr"}}},
    },
]


def test_a_sync_names_every_tool_a_build_could_not_take_and_writes_what_builds(
    tmp_path: Path,
) -> None:
    listing = tmp_path / "mixed.json"
    listing.write_text(json.dumps(MIXED))
    folder = project(tmp_path / "p", {"up": stdio("--tools", str(listing), "--page", "10")})
    synced = cli("sync", cwd=folder)
    assert synced.exit_code == 0, synced.output + synced.stderr
    err = synced.stderr
    # all of them from one run, each with the build's own words
    assert "warning[TN415]: server 'up': tool 'remote' is left out: no target can take it: " in err
    assert "error[TN120]: $ref 'https://example.com/schemas/page.json'" in err
    assert "warning[TN415]: server 'up': tool 'typo' is left out: no target can take it: " in err
    # no instance of it is finite: Gemini takes it in no form; the other targets carry it
    assert "warning[TN416]: server 'up': tool 'chain' is not sent to gemini" in err
    assert "error[TN315]: gemini: the schema is recursive" in err
    written = sorted(p.name for p in (folder / "specs/up").iterdir())
    assert written == ["up_chain.json", "up_fine.json", "up_tree.json"]
    chain = json.loads((folder / "specs/up/up_chain.json").read_text())
    assert chain["targets"] == {"exclude": ["gemini"]}
    assert chain["input_schema"] == MIXED[2]["inputSchema"]  # as sent
    assert synced.output.count("up: 3 tools") == 1
    built = cli("build", cwd=folder)
    assert built.exit_code == 0, built.stderr
    files = provider_files(folder / "tools")
    assert_accepted(files)
    assert violations(files) == []
    gemini = {d["name"] for d in files["gemini"][0]["functionDeclarations"]}
    assert "up_chain" not in gemini and "up_chain" in {e["name"] for e in files["mcp"]}
    (tree,) = [d for d in files["gemini"][0]["functionDeclarations"] if d["name"] == "up_tree"]
    assert tree["responseJsonSchema"] == MIXED[3]["outputSchema"]
    # --check agrees with what sync wrote
    assert cli("sync", "--check", cwd=folder).exit_code == 0


def test_a_spec_carries_its_own_profile_and_its_neighbours_do_not(tmp_path: Path) -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"q": {"type": "string", "format": "uri"}},
        "additionalProperties": False,
    }
    write_specs(
        tmp_path / "specs",
        {
            "sourced.json": {"description": "d", "input_schema": schema, "profile": "reach"},
            "mine.json": {"description": "d", "input_schema": schema},
        },
    )
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if " error[" in line]
    assert errors and all(line.startswith("specs/mine.json:") for line in errors)
    (tmp_path / "specs/mine.json").unlink()
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    bad = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert bad.exit_code == 0
    (tmp_path / "specs/sourced.json").write_text(
        json.dumps({"description": "d", "input_schema": schema, "profile": "everything"})
    )
    wrong = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert wrong.exit_code == 2 and "error[TN109]" in wrong.stderr and "profile" in wrong.stderr


def test_specs_strictified_by_their_own_profile_keep_anthropic_within_its_limits(
    tmp_path: Path,
) -> None:
    specs = {
        f"t{i:02}.json": {
            "description": f"tool {i}",
            "input_schema": {
                "type": "object",
                "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
                "required": ["q"],
            },
            "profile": "reach",
        }
        for i in range(25)
    }
    specs["own.json"] = {
        "description": "strict by its author",
        "strict": True,
        "input_schema": {
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "required": ["q"],
            "additionalProperties": False,
        },
    }
    write_specs(tmp_path / "specs", specs)
    result = cli("build", "specs", "--out", "out", "--target", "anthropic", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    anthropic = json.loads((tmp_path / "out/schemas/anthropic.json").read_text())
    assert anthropic_request(anthropic) == []
    strict = {e["name"] for e in anthropic if e.get("strict")}
    assert "own" in strict  # the author's choice stays; the sourced ones make room
    assert len(strict) == 17  # 16 union parameters: the author's tool and 16 sourced ones


def test_settle_keeps_a_specs_own_target_selection(tmp_path: Path) -> None:
    from toolnexus_gen.config.options import BuildOptions
    from toolnexus_gen.sources.carry import carried, settle

    chain = {
        "type": "object",
        "properties": {"next": {"$ref": "#"}},
        "required": ["next"],
    }
    specs = {
        "s/chain.json": carried(
            {"description": "d", "input_schema": chain, "targets": {"only": ["gemini", "openai"]}}
        ),
        "s/fine.json": carried({"description": "d", "input_schema": OBJECT}),
    }
    options = BuildOptions(specs=tmp_path / "specs", out=tmp_path / "out", root=tmp_path)
    settled = settle(specs, options, mcp.spec_text)
    assert settled.specs["s/chain.json"]["targets"] == {
        "only": ["gemini", "openai"],
        "exclude": ["gemini"],
    }
    assert settled.specs["s/fine.json"] == specs["s/fine.json"]
    (refusal,) = settled.refused
    assert (refusal.spec, refusal.targets, refusal.left_out) == ("s/chain.json", ("gemini",), False)
    assert "error[TN315]" in refusal.reason and str(tmp_path) in refusal.reason.split(":")[0]


def test_settle_checks_the_specs_and_leaves_their_models_to_the_build(tmp_path: Path) -> None:
    """The check makes no argument model (the build makes each, on its workers): what it keeps
    for the build is the schemas it found valid."""
    from toolnexus_gen.config.options import BuildOptions
    from toolnexus_gen.memo import Memo
    from toolnexus_gen.sources.carry import carried, settle

    specs = {f"s/t{n}.json": carried({"description": "d", "input_schema": OBJECT}) for n in (1, 2)}
    options = BuildOptions(specs=tmp_path / "specs", out=tmp_path / "out", root=tmp_path)
    memo = Memo()
    settled = settle(specs, options, mcp.spec_text, memo=memo)
    assert settled.specs == specs and settled.refused == []
    assert memo.valid and memo.models == {}


def test_settle_gives_the_text_it_built_each_spec_from(tmp_path: Path) -> None:
    """What a source writes is the very text the check built: a spec narrowed in a later round
    carries its `targets.exclude` in it; a spec left out has none."""
    from toolnexus_gen.config.options import BuildOptions
    from toolnexus_gen.sources.carry import carried, settle

    chain = {"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"]}
    specs = {
        "s/chain.json": carried({"description": "d", "input_schema": chain}),
        "s/fine.json": carried({"description": "d", "input_schema": OBJECT}),
        "s/broken.json": carried({"description": "d", "input_schema": {"type": "nothing"}}),
    }
    options = BuildOptions(specs=tmp_path / "specs", out=tmp_path / "out", root=tmp_path)
    settled = settle(specs, options, mcp.spec_text)
    assert sorted(settled.texts) == ["s/chain.json", "s/fine.json"]
    for rel, text in settled.texts.items():
        assert text == mcp.spec_text(settled.specs[rel], ".json")
    assert json.loads(settled.texts["s/chain.json"])["targets"]["exclude"] == ["gemini"]


def test_settle_of_many_specs_on_every_core_finds_what_one_process_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many specs are checked by workers, each a share of them: the same refusals, texts and
    checks kept for the build as when one process checks them all."""
    from toolnexus_gen.config.options import BuildOptions
    from toolnexus_gen.memo import Memo
    from toolnexus_gen.sources.carry import carried, settle

    chain = {"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"]}
    specs = {
        f"s/t{n:02}.json": carried(
            {"description": f"tool {n}", "input_schema": {**OBJECT, "title": f"T{n}"}}
        )
        for n in range(40)
    }
    specs["s/chain.json"] = carried({"description": "d", "input_schema": chain})
    specs["s/broken.json"] = carried({"description": "d", "input_schema": {"type": "nothing"}})
    options = BuildOptions(specs=tmp_path / "specs", out=tmp_path / "out", root=tmp_path)
    found = []
    for jobs in ("2", "1"):
        monkeypatch.setenv("TOOLNEXUS_GEN_JOBS", jobs)
        memo = Memo()
        settled = settle(specs, options, mcp.spec_text, memo=memo)
        found.append((settled, set(memo.valid)))
    (many, many_valid), (one, one_valid) = found
    assert many.specs == one.specs and many.texts == one.texts
    assert [(r.spec, r.targets, r.left_out) for r in many.refused] == [
        ("s/broken.json", tuple(options.targets), True),
        ("s/chain.json", ("gemini",), False),
    ]
    assert [(r.spec, r.targets, r.left_out) for r in one.refused] == [
        (r.spec, r.targets, r.left_out) for r in many.refused
    ]
    assert many_valid == one_valid and len(many_valid) > 40
