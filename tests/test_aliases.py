"""name_aliases: names a provider rejects get aliases in its file only; every round trip, loop,
integration and the MCP server maps them back, so handlers see only the spec's names."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import build_in, cli, write_specs
from sdk_check import assert_accepted

SPEC = {
    "github.create_issue.json": {
        "description": "Create an issue",
        "input_schema": {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "$meta": {
                    "type": "object",
                    "properties": {"año": {"type": "integer"}, "ok": {"type": "string"}},
                    "required": ["año"],
                },
                "labels": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"näme": {"type": "string"}}},
                },
            },
            "required": ["title", "$meta"],
        },
    },
    "now.json": {"description": "Current time"},
}
SENT = {"title": "Bug", "_meta": {"ano": 2026, "ok": "y"}, "labels": [{"name": "p1"}]}
SEEN = {"title": "Bug", "$meta": {"año": 2026, "ok": "y"}, "labels": [{"näme": "p1"}]}


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("aliases")
    (folder / "pyproject.toml").write_text("[tool.toolnexus-gen]\nname_aliases = true\n")
    return build_in(folder, SPEC)


@pytest.fixture
def tk(pkg: Any) -> Any:
    class Handlers(pkg.ToolHandlers):  # type: ignore[misc]
        seen: list[Any] = []

        def github_create_issue(self, args: Any, ctx: Any) -> str:
            self.seen.append((args.model_dump(by_alias=True, exclude_none=True), ctx.tool_name))
            return "created"

        def now(self, args: Any, ctx: Any) -> str:
            return "12:00"

    return pkg.Toolkit(Handlers())


def test_provider_files_take_the_aliases(pkg: Any) -> None:
    schemas = {
        t: getattr(pkg, f"to_{t}")()
        for t in ("openai", "openai_responses", "anthropic", "bedrock", "gemini", "mcp")
    }
    assert_accepted(schemas)
    assert schemas["openai"][0]["function"]["name"] == "github_create_issue"
    assert schemas["anthropic"][0]["name"] == "github_create_issue"
    assert schemas["bedrock"]["tools"][0]["toolSpec"]["name"] == "github_create_issue"
    assert schemas["mcp"][0]["name"] == "github.create_issue"  # valid there: kept
    assert schemas["gemini"][0]["functionDeclarations"][0]["name"] == "github.create_issue"
    properties = schemas["anthropic"][0]["input_schema"]["properties"]
    assert list(properties) == ["title", "_meta", "labels"]
    assert list(properties["_meta"]["properties"]) == ["ano", "ok"]
    assert properties["_meta"]["required"] == ["ano"]
    pattern = re.compile(r"[a-zA-Z0-9_.-]{1,64}")

    def names(node: Any) -> list[str]:
        if isinstance(node, dict):
            found = list(node.get("properties", {}))
            return found + [n for v in node.values() for n in names(v)]
        return [n for v in node for n in names(v)] if isinstance(node, list) else []

    assert all(pattern.fullmatch(n) for n in names(schemas["anthropic"]))
    # the openai file keeps the property names (OpenAI takes them)
    assert "$meta" in schemas["openai"][0]["function"]["parameters"]["properties"]


def test_every_round_trip_maps_names_back(tk: Any) -> None:
    anthropic_args = SENT
    openai_args = {**SEEN}
    replies = [
        tk.openai_tool_messages(
            {
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "github_create_issue",
                            "arguments": json.dumps(openai_args),
                        },
                    }
                ]
            }
        )[0]["content"],
        tk.openai_responses_outputs(
            [
                {
                    "type": "function_call",
                    "call_id": "c2",
                    "name": "github_create_issue",
                    "arguments": json.dumps(openai_args),
                }
            ]
        )[0]["output"],
        tk.anthropic_tool_results(
            [
                {
                    "type": "tool_use",
                    "id": "c3",
                    "name": "github_create_issue",
                    "input": anthropic_args,
                }
            ]
        )[0]["content"],
        tk.bedrock_tool_results(
            [{"toolUse": {"toolUseId": "c4", "name": "github_create_issue", "input": openai_args}}]
        )[0]["toolResult"]["content"][0]["text"],
        tk.gemini_reply([{"functionCall": {"name": "github.create_issue", "args": openai_args}}])[
            "parts"
        ][0]["functionResponse"]["response"]["output"],
    ]
    assert replies == ["created"] * 5
    assert tk.handlers.seen == [(SEEN, "github.create_issue")] * 5


def test_the_reply_echoes_the_name_the_model_sent(tk: Any) -> None:
    (reply,) = tk.anthropic_tool_results(
        [{"type": "tool_use", "id": "c9", "name": "github_create_issue", "input": {"title": "x"}}]
    )
    assert reply["tool_use_id"] == "c9" and reply["is_error"]
    # the message names what the model sent: the tool and the property under their aliases
    assert reply["content"].startswith("Invalid arguments for tool 'github_create_issue': _meta:")
    (reply,) = tk.anthropic_tool_results(
        [
            {
                "type": "tool_use",
                "id": "c8",
                "name": "github_create_issue",
                "input": {"title": "x", "_meta": {}},
            }
        ]
    )
    assert "_meta.ano: Field required" in reply["content"]
    direct = tk.execute_sync("github.create_issue", {"title": "x"})  # no provider: spec names
    assert "'github.create_issue': $meta:" in direct.output


def test_a_loop_offers_and_maps_aliases(tk: Any) -> None:
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "examples"))
    import scripted

    turns: list[Any] = [[("t1", "github_create_issue", SENT)], "done"]
    client, recorder = scripted.client_for("anthropic", turns)
    run = tk.run_anthropic(client, model="m", messages="go", tools=["github.create_issue"])
    assert [t["name"] for t in recorder.requests[0]["tools"]] == ["github_create_issue"]
    assert [r.output for _, r in run.tool_calls] == ["created"]
    assert tk.handlers.seen[-1] == (SEEN, "github.create_issue")


def test_integrations_map_aliases_back(tk: Any) -> None:
    from toolnexus_runtime.integrations import openai_agents_tools

    tools = {t.name: t for t in openai_agents_tools(tk)}
    assert "github_create_issue" in tools
    ctx = type("Ctx", (), {"tool_call_id": "a1"})()
    out = asyncio.run(tools["github_create_issue"].on_invoke_tool(ctx, json.dumps(SEEN)))
    assert out == "created" and tk.handlers.seen[-1] == (SEEN, "github.create_issue")


def test_without_the_setting_names_stay_errors(tmp_path: Path) -> None:
    specs = write_specs(
        tmp_path / "specs", {"github.create_issue.json": SPEC["github.create_issue.json"]}
    )
    result = cli("build", str(specs), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert result.exit_code == 2
    assert "error[TN202]" in result.stderr and "error[TN301]" in result.stderr


def test_two_tools_that_alias_alike_are_an_error_naming_both(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.toolnexus-gen]\nname_aliases = true\n")
    specs = write_specs(
        tmp_path / "specs", {"a.b.yaml": {"description": "A"}, "a_b.yaml": {"description": "B"}}
    )
    result = cli("build", str(specs), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert result.exit_code == 2
    assert "error[TN212]" in result.stderr and "'a.b'" in result.stderr and "'a_b'" in result.stderr


def test_an_overlong_name_is_cut_with_a_stable_hash(tmp_path: Path) -> None:
    from toolnexus_gen.targets.aliases import make_alias

    long = "x." * 50
    alias = make_alias(long, r"[a-zA-Z0-9_-]{1,64}", 64)
    assert len(alias) == 64 and re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", alias)
    assert alias == make_alias(long, r"[a-zA-Z0-9_-]{1,64}", 64)
    assert alias != make_alias("y." * 50, r"[a-zA-Z0-9_-]{1,64}", 64)


MCP_SPEC = {
    "geo:weather.json": {
        "description": "Weather",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "output_schema": {
            "type": "object",
            "properties": {"celsius": {"type": "number"}},
            "required": ["celsius"],
        },
    }
}


def test_the_mcp_server_maps_an_aliased_tool_and_its_arguments_back(tmp_path: Path) -> None:
    from toolnexus_runtime.mcp import mcp_server

    (tmp_path / "pyproject.toml").write_text("[tool.toolnexus-gen]\nname_aliases = true\n")
    mcp_pkg = build_in(tmp_path, MCP_SPEC)
    # MCP takes this tool's names as they are today; give its file an alias for the tool and a
    # property, as the other targets' files have, to hold the server to the same mapping.
    schemas = Path(mcp_pkg.__file__).parent / "schemas"
    listed = json.loads((schemas / "mcp.json").read_text())
    listed[0]["name"] = "geo_weather"
    listed[0]["inputSchema"]["properties"] = {"town": {"type": "string"}}
    listed[0]["inputSchema"]["required"] = ["town"]
    (schemas / "mcp.json").write_text(json.dumps(listed))
    aliases = json.loads((schemas / "aliases.json").read_text())
    aliases["tools"]["mcp"] = {"geo_weather": "geo:weather"}
    aliases["arguments"]["mcp"] = {"geo:weather": {"town": ["city", {}]}}
    (schemas / "aliases.json").write_text(json.dumps(aliases))

    class Handlers(mcp_pkg.ToolHandlers):  # type: ignore[misc]
        seen: list[Any] = []

        def geo_weather(self, args: Any, ctx: Any) -> Any:
            self.seen.append((args.city, ctx.tool_name))
            return {"celsius": "warm"} if args.city == "Rome" else {"celsius": 21.5}

    server = mcp_server(mcp_pkg.Toolkit(Handlers()))
    entry = server._request_handlers["tools/call"]
    call_tool = getattr(entry, "handler", None) or entry[1]
    ctx = type("C", (), {"request_id": 3})()

    def call(arguments: dict[str, Any]) -> Any:
        params = type("P", (), {"name": "geo_weather", "arguments": arguments, "meta": None})()
        return asyncio.run(call_tool(ctx, params))

    good = call({"town": "Oslo"})
    assert not good.is_error, good
    assert good.structured_content == {"celsius": 21.5}
    assert Handlers.seen == [("Oslo", "geo:weather")]
    # the outputSchema is the aliased tool's: a result that breaks it is an error
    bad = call({"town": "Rome"})
    assert bad.is_error and "does not match the outputSchema at celsius" in bad.content[0].text
