"""Many tools (issue 25): a 600-tool project with toolsets, generated here; each provider's
restriction form judged by the official SDK types; the loops, round trips and integrations sending
a toolset; limits and budgets located in pyproject.toml."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import sdk_check
from conftest import ROOT, cli, write_specs
from sdk_check import assert_typed_dict

sys.path.insert(0, str(ROOT / "examples"))
import scripted  # noqa: E402

GROUPS = ["crm", "billing", "shipping", "search", "admin", "reports"]
COUNT = 600
PYPROJECT = """\
[project]
name = "many"

[tool.toolnexus-gen]
specs = "specs"
out = "many_tools"

[tool.toolnexus-gen.toolsets]
billing = {groups = ["billing"]}
support = {groups = ["crm"], tools = ["tool_001", "tool_007"]}

[tool.toolnexus-gen.toolsets.ops]
groups = ["admin"]
max_tool_tokens = 500
"""
PROVIDERS = ["openai", "openai_responses", "anthropic", "gemini", "bedrock"]


def spec(i: int) -> dict[str, Any]:
    return {
        "description": f"Tool {i} of the {GROUPS[i % 6]} group: looks up record {i}",
        "groups": [GROUPS[i % 6]],
        "input_schema": {
            "type": "object",
            "properties": {"id": {"type": "string", "description": "Record id"}},
            "required": ["id"],
        },
    }


def members(group: str) -> list[str]:
    return [f"tool_{i:03}" for i in range(COUNT) if GROUPS[i % 6] == group]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    root = tmp_path_factory.mktemp("many")
    write_specs(root / "specs", {f"tool_{i:03}.json": spec(i) for i in range(COUNT)})
    (root / "pyproject.toml").write_text(PYPROJECT)
    return root, cli("build", cwd=root)


@pytest.fixture(scope="module")
def pkg(project: tuple[Path, Any]) -> Any:
    root, result = project
    assert result.exit_code == 0, result.stderr
    sys.path.insert(0, str(root))
    return importlib.import_module("many_tools")


@pytest.fixture
def tk(pkg: Any) -> Any:
    class Handlers(pkg.ToolHandlers):  # type: ignore[misc, name-defined]
        pass

    for i in range(COUNT):
        setattr(Handlers, f"tool_{i:03}", lambda self, args, ctx, i=i: f"record {args.id} ({i})")
    Handlers.__abstractmethods__ = frozenset()
    return pkg.Toolkit(Handlers())


def names(target: str, tools: Any) -> list[str]:
    if target == "gemini":
        return [d["name"] for d in tools[0]["functionDeclarations"]]
    if target == "bedrock":
        return [t["toolSpec"]["name"] for t in tools["tools"]]
    if target == "openai":
        return [t["function"]["name"] for t in tools]
    return [t["name"] for t in tools if "name" in t]


def test_the_whole_set_over_a_limit_is_a_warning_with_toolsets(project: tuple[Path, Any]) -> None:
    root, result = project
    assert result.exit_code == 0, result.stderr
    for line in (
        "warning[TN330]: openai: 600 tools; a request takes at most 128 in the whole set",
        "warning[TN330]: openai_responses: 600 tools",
        "warning[TN318]: gemini: 600 function declarations; a request takes at most 512",
    ):
        assert line in result.stderr
    assert "specs/tool_128.json:1:1" in result.stderr  # the first tool over the limit
    # ops (100 admin tools) is over its own budget: located at its table in pyproject.toml
    assert (
        "pyproject.toml:14:1: warning[TN462]: toolset 'ops' costs more than max_tool_tokens = 500"
        in result.stderr
    )
    assert (
        "largest toolset: support, ~" in result.stdout
        and "tokens of tool definitions" in result.stdout
    )


def test_toolsets_are_exported_and_each_target_gives_the_subset(pkg: Any, tk: Any) -> None:
    assert dict(pkg.TOOLSETS) == {
        "billing": tuple(members("billing")),
        "support": tuple(sorted({*members("crm"), "tool_001", "tool_007"})),
        "ops": tuple(members("admin")),
    }
    for target in ("gemini", "openai", "openai_responses", "anthropic", "mcp", "bedrock"):
        module = getattr(pkg, f"to_{target}")
        subset = module(toolset="support")
        assert names(target, subset) == list(pkg.TOOLSETS["support"])
        assert getattr(tk, f"to_{target}")(toolset="support") == subset
        assert len(names(target, module())) == COUNT
        sdk_check.CHECKS[target](subset)  # the subset is still what the SDK accepts
    with pytest.raises(ValueError, match="Unknown toolset 'nope'. Toolsets: billing, support, ops"):
        pkg.to_openai(toolset="nope")


def test_every_restriction_form_is_the_sdks_own(pkg: Any, tk: Any) -> None:
    from google.genai import types
    from openai.types.chat import ChatCompletionAllowedToolChoiceParam
    from openai.types.chat.chat_completion_allowed_tools_param import (
        ChatCompletionAllowedToolsParam,
    )
    from openai.types.responses import ToolChoiceAllowedParam

    billing = members("billing")
    chat = pkg.allowed_tools("openai", "billing")
    assert_typed_dict(chat, ChatCompletionAllowedToolChoiceParam)
    assert_typed_dict(chat["allowed_tools"], ChatCompletionAllowedToolsParam)
    assert [t["function"]["name"] for t in chat["allowed_tools"]["tools"]] == billing
    responses = pkg.allowed_tools("openai_responses", "billing", mode="required")
    assert_typed_dict(responses, ToolChoiceAllowedParam)
    assert responses["mode"] == "required" and [t["name"] for t in responses["tools"]] == billing
    gemini = types.ToolConfig.model_validate(pkg.allowed_tools("gemini", "billing"))
    assert gemini.function_calling_config is not None
    assert gemini.function_calling_config.allowed_function_names == billing
    assert gemini.function_calling_config.mode == types.FunctionCallingConfigMode.VALIDATED
    assert tk.allowed_tools("openai", "billing") == chat
    for target, says in (
        ("anthropic", "no allowed-subset form"),
        ("bedrock", "no allowed-subset form"),
        ("mcp", "no per-request restriction"),
    ):
        with pytest.raises(ValueError, match=says):
            pkg.allowed_tools(target, "billing")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_loops_send_the_toolset_and_refuse_other_tools(tk: Any, provider: str) -> None:
    turns: list[scripted.Turn] = [
        [("c1", "tool_001", {"id": "a"}), ("c2", "tool_003", {"id": "b"})],  # crm, billing
        "done",
    ]
    client, recorder = scripted.client_for(provider, turns)
    if provider == "bedrock":
        sent: list[dict[str, Any]] = []
        client.meta.events.register(
            "provide-client-params.bedrock-runtime.Converse",
            lambda params, **_: sent.append(params),
        )
    request = {
        "openai": {"model": "m", "messages": "hi"},
        "openai_responses": {"model": "m", "input": "hi"},
        "anthropic": {"model": "m", "messages": "hi"},
        "gemini": {"model": "m", "contents": "hi"},
        "bedrock": {"modelId": "m", "messages": "hi"},
    }[provider]
    result = getattr(tk, f"run_{provider}")(client, toolset="support", **request)
    first = sent[0] if provider == "bedrock" else recorder.requests[0]
    if provider == "gemini":
        offered = [d["name"] for d in first["tools"][0]["functionDeclarations"]]
    elif provider == "bedrock":
        offered = [t["toolSpec"]["name"] for t in first["toolConfig"]["tools"]]
    elif provider == "openai":
        offered = [t["function"]["name"] for t in first["tools"]]
    else:
        offered = [t["name"] for t in first["tools"]]
    assert offered == list(tk.TOOLSETS["support"])
    (_, ok), (_, refused) = result.tool_calls
    assert ok.output == "record a (1)" and not ok.is_error
    assert refused.is_error and "Unknown tool 'tool_003'" in refused.output
    with pytest.raises(ValueError, match="not both"):
        getattr(tk, f"run_{provider}")(client, toolset="support", tools=["tool_001"], **request)


def test_round_trips_and_integrations_take_a_toolset(tk: Any) -> None:
    message = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "1",
                "type": "function",
                "function": {"name": "tool_001", "arguments": '{"id": "x"}'},
            },
            {
                "id": "2",
                "type": "function",
                "function": {"name": "tool_003", "arguments": '{"id": "y"}'},
            },
        ],
    }
    inside, outside = tk.openai_tool_messages(message, toolset="billing")
    assert inside["content"] == "record x (1)"
    assert outside["content"].startswith("Unknown tool 'tool_003'")
    from toolnexus_runtime.integrations import langchain_tools, openai_agents_tools

    assert [t.name for t in openai_agents_tools(tk, toolset="ops")] == members("admin")
    assert [t.name for t in langchain_tools(tk, toolset="billing")] == members("billing")


def test_list_budget_prints_each_target_toolset_and_tool(
    project: tuple[Path, Any], pkg: Any
) -> None:
    root, _ = project
    result = cli("list", "--budget", cwd=root)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("toolset "))
    assert header.split() == [
        "toolset",
        "gemini",
        "openai",
        "openai_responses",
        "anthropic",
        "mcp",
        "bedrock",
    ]
    rows = {
        line.split()[0]: line.split()[1:]
        for line in lines
        if line.split()[:1] in (["billing"], ["support"], ["ops"])
    }
    whole = next(line for line in lines if line.startswith("(all tools)")).split()[2:]
    for row in (*rows.values(), whole):
        assert len(row) == 6 and all(value.replace(",", "").isdigit() for value in row)
    billing_openai = int(rows["billing"][1].replace(",", ""))
    per_tool = {line.split()[0]: line.split()[1:] for line in lines if line.startswith("tool_")}
    assert len(per_tool) == COUNT
    # a toolset costs its tools' entries (and nothing else on OpenAI Chat)
    assert billing_openai == sum(int(per_tool[name][1]) for name in members("billing"))
    anthropic = int(rows["billing"][3].replace(",", "")) - sum(
        int(per_tool[n][3]) for n in members("billing")
    )
    assert anthropic == 346  # the documented tool-use system prompt


def limits_project(root: Path, toolsets: str, count: int = 130) -> Any:
    write_specs(
        root / "specs",
        {
            f"t{i:03}.yaml": {"description": f"tool {i}", "groups": ["a" if i < 129 else "b"]}
            for i in range(count)
        },
    )
    (root / "pyproject.toml").write_text(
        "[tool.toolnexus-gen]\n\n[tool.toolnexus-gen.toolsets]\n" + toolsets
    )
    return cli("build", "specs", "--out", "out", "--target", "openai", cwd=root)


def test_a_toolset_over_a_limit_is_an_error_located_in_pyproject(tmp_path: Path) -> None:
    result = limits_project(tmp_path, 'small = {groups = ["b"]}\nlarge = {groups = ["a"]}\n')
    assert result.exit_code == 2 and not (tmp_path / "out").exists()
    assert (
        "pyproject.toml:5:1: error[TN461]: toolset 'large': openai: 129 tools; a request takes at most 128"
        in result.stderr
    )
    assert "warning[TN330]" in result.stderr and "small" not in result.stderr


def test_unknown_groups_and_tools_are_located_errors(tmp_path: Path) -> None:
    toolsets = 'one = {groups = ["a", "billng"], tools = ["t001", "t999"]}\n'
    result = limits_project(tmp_path, toolsets, 3)
    assert result.exit_code == 2
    assert (
        "pyproject.toml:4:23: error[TN460]: toolset 'one': no spec is in group 'billng'"
        in result.stderr
    )
    assert "pyproject.toml:4:51: error[TN460]: toolset 'one': no tool named 't999'" in result.stderr
    near = limits_project(tmp_path / "y", 'one = {tools = ["t01"]}\n', 3)
    assert "no tool named 't01' (did you mean 't001'?)" in near.stderr
    bad = limits_project(tmp_path / "x", 'two = {groups = "a"}\n', 3)
    assert (
        "pyproject.toml:4:8: error[TN802]: toolset 'two': groups must be a list of strings"
        in bad.stderr
    )


def test_deferred_loading_rules(tmp_path: Path) -> None:
    write_specs(tmp_path / "specs", {"a.yaml": {"description": "d", "defer_loading": True}})
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2
    assert "specs/a.yaml:2:16: error[TN463]: every tool has defer_loading: true" in result.stderr
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.toolsets]\nrare = {tools = ["a"]}\n'
    )
    write_specs(tmp_path / "specs", {"b.yaml": {"description": "loaded"}})
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert (
        "pyproject.toml:2:1: error[TN463]: toolset 'rare': every tool in it is deferred"
        in result.stderr
    )
    (tmp_path / "pyproject.toml").unlink()
    write_specs(
        tmp_path / "specs",
        {"a.yaml": {"description": "d", "defer_loading": True, "examples": [{}]}},
    )
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert (
        "specs/a.yaml:4:1: error[TN464]: anthropic: a deferred tool cannot carry input_examples"
        in result.stderr
    )
    write_specs(tmp_path / "specs", {"a.yaml": {"description": "d", "defer_loading": True}})
    write_specs(tmp_path / "specs", {"search_tools.yaml": {"description": "mine"}})
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    for target in ("gemini", "openai", "bedrock"):  # the loops' client-side search takes that name
        assert (
            f"error[TN466]: {target}: 'search_tools' is the name of the loops' client-side search"
            in result.stderr
        )


def test_hosted_tools_rules(tmp_path: Path) -> None:
    write_specs(tmp_path / "specs", {"web_search.yaml": {"description": "my own search"}})
    (tmp_path / "pyproject.toml").write_text("[tool.toolnexus-gen.hosted]\nweb_search = true\n")
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2
    assert (
        "specs/web_search.yaml:1:1: error[TN466]: anthropic: 'web_search' is the name of a hosted tool"
        in result.stderr
    )
    assert (
        "pyproject.toml:2:1: warning[TN467]: gemini: hosted tool 'web_search' beside function declarations needs Gemini 3"
        in result.stderr
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.hosted]\nsearch = {openai = {type = "web_search"}, bedrock = {type = "x"}}\n'
    )
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2
    assert (
        "pyproject.toml:2:11: error[TN465]: hosted tool 'search': openai cannot carry it: Chat Completions"
        in result.stderr
    )
    assert "error[TN465]: hosted tool 'search': bedrock cannot carry it" in result.stderr


HOSTED_ERRORS = [
    (
        "web_search = true",
        ("--target", "openai"),
        "pyproject.toml:2:1: error[TN465]: hosted tool 'web_search' cannot go to openai (Chat "
        "Completions takes only function and custom tools",
        'keep it from that target: web_search = {targets = {exclude = ["openai"]}}',
    ),
    (
        "code_execution = true",
        ("--target", "bedrock", "--target", "anthropic"),
        "pyproject.toml:2:1: error[TN465]: hosted tool 'code_execution' cannot go to bedrock "
        "(Bedrock Converse takes toolSpec",
        'code_execution = {targets = {exclude = ["bedrock"]}}',
    ),
    (
        "url_context = true",
        ("--target", "openai_responses", "--target", "gemini"),
        "hosted tool 'url_context' cannot go to openai_responses (the provider has no "
        "url_context tool)",
        'url_context = {targets = {exclude = ["openai_responses"]}}',
    ),
    (
        "web_search = true",
        (),  # every target: Chat Completions and Bedrock both named
        "hosted tool 'web_search' cannot go to openai (Chat Completions takes only function and "
        "custom tools (web search there is web_search_options on search models); use "
        "openai_responses) nor to bedrock (",
        'web_search = {targets = {exclude = ["openai", "bedrock"]}}',
    ),
    (
        'fetch = {anthropic = {type = "web_fetch_20250910", name = "web_fetch"}}',
        ("--target", "openai"),  # declared for others only: it would reach no request
        "pyproject.toml:2:1: error[TN465]: hosted tool 'fetch' cannot go to openai",
        'keep it from that target: targets = {exclude = ["openai"]} in its table',
    ),
    (
        'files = {openai_responses = {type = "file_search", vector_store_ids = ["vs_1"]}}',
        ("--target", "anthropic"),
        "hosted tool 'files' cannot go to anthropic (it has entries for openai_responses only; "
        "add one in the provider's own shape (anthropic = {...}))",
        'targets = {exclude = ["anthropic"]} in its table',
    ),
]


@pytest.mark.parametrize(("declared", "targets", "error", "fix"), HOSTED_ERRORS)
def test_a_hosted_tool_a_built_target_cannot_carry_is_a_located_error(
    tmp_path: Path, declared: str, targets: tuple[str, ...], error: str, fix: str
) -> None:
    write_specs(tmp_path / "specs", {"now.yaml": {"description": "time"}})
    (tmp_path / "pyproject.toml").write_text(f"[tool.toolnexus-gen.hosted]\n{declared}\n")
    result = cli("build", "specs", "--out", "out", *targets, cwd=tmp_path)
    assert result.exit_code == 2, result.stderr
    assert error in result.stderr and fix in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()  # nothing written


@pytest.mark.parametrize(
    ("declared", "targets", "carried"),
    [
        # the fix the error gives: the tool kept from the target, the rest as before
        ('web_search = {targets = {exclude = ["openai"]}}', ("openai",), {}),
        (
            'web_search = {targets = {exclude = ["openai", "bedrock"]}}',
            (),
            {"anthropic": 1, "openai_responses": 1, "gemini": 1},
        ),
        (
            'web_search = {targets = {only = ["anthropic"]}}',
            ("anthropic", "gemini", "openai"),
            {"anthropic": 1},
        ),
        (
            'fetch = {anthropic = {type = "web_fetch_20250910", name = "web_fetch"}, '
            'targets = {exclude = ["openai"]}}',
            ("openai",),
            {},
        ),
        (
            'files = {openai_responses = {type = "file_search", vector_store_ids = ["vs_1"]}}',
            ("openai_responses", "anthropic", "openai", "gemini"),  # goes where its table says
            {"openai_responses": 1},
        ),
    ],
)
def test_keeping_a_hosted_tool_from_a_target_builds(
    tmp_path: Path, declared: str, targets: tuple[str, ...], carried: dict[str, int]
) -> None:
    write_specs(tmp_path / "specs", {"now.yaml": {"description": "time"}})
    (tmp_path / "pyproject.toml").write_text(f"[tool.toolnexus-gen.hosted]\n{declared}\n")
    flags = [flag for target in targets for flag in ("--target", target)]
    result = cli("build", "specs", "--out", "out", *flags, cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    for target in targets or ("gemini", "openai", "openai_responses", "anthropic", "bedrock"):
        data = json.loads((tmp_path / f"out/schemas/{target}.json").read_text())
        entries = data["tools"] if target == "bedrock" else data
        functions = {"gemini": "functionDeclarations", "bedrock": "toolSpec"}.get(target)
        if functions is not None:  # a wrapper of functions; anything else is a hosted tool
            hosted = [entry for entry in entries if functions not in entry]
        else:  # function entries have no type (Anthropic) or type function
            hosted = [entry for entry in entries if entry.get("type", "function") != "function"]
        assert len(hosted) == carried.get(target, 0), (target, entries)


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (
            'web_search = {targets = {exclude = "openai"}}',
            "hosted tool 'web_search': targets: exclude must be a list",
        ),
        (
            'web_search = {targets = {only = ["chat"]}}',
            "hosted tool 'web_search': targets: unknown target 'chat'",
        ),
        (
            'web_search = {targets = {drop = ["openai"]}}',
            "hosted tool 'web_search': targets = {exclude = [...]} or {only = [...]}",
        ),
        (
            'mine = {targets = {exclude = ["openai"]}}',
            "hosted tool 'mine' has a targets table but no entry",
        ),
    ],
)
def test_a_malformed_hosted_targets_table_is_a_located_error(
    tmp_path: Path, declared: str, message: str
) -> None:
    write_specs(tmp_path / "specs", {"now.yaml": {"description": "time"}})
    (tmp_path / "pyproject.toml").write_text(f"[tool.toolnexus-gen.hosted]\n{declared}\n")
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2
    assert re.search(
        rf"pyproject.toml:2:\d+: error\[TN802\]: {re.escape(message)}", result.stderr
    ), result.stderr


def test_hosted_and_search_entries_are_the_sdks_own(tmp_path: Path) -> None:
    from anthropic.types import (
        ToolSearchToolBm25_20251119Param,
        ToolSearchToolRegex20251119Param,
        WebFetchTool20250910Param,
        WebSearchTool20250305Param,
    )
    from google.genai import types
    from openai.types.responses import ToolParam
    from pydantic import TypeAdapter

    write_specs(
        tmp_path / "specs",
        {
            "now.yaml": {"description": "time"},
            "far.yaml": {"description": "rare", "defer_loading": True},
        },
    )
    for mode, search in (
        ("bm25", ToolSearchToolBm25_20251119Param),
        ("regex", ToolSearchToolRegex20251119Param),
    ):
        (tmp_path / "pyproject.toml").write_text(
            f'[tool.toolnexus-gen]\ntool_search = "{mode}"\n\n[tool.toolnexus-gen.hosted]\n'
            'web_search = {targets = {exclude = ["openai", "bedrock"]}}\n'
            'url_context = {targets = {only = ["anthropic", "gemini"]}}\n'
            'files = {openai_responses = {type = "file_search", vector_store_ids = ["vs_1"]}}\n'
        )
        result = cli("build", "specs", "--out", "out", "-q", cwd=tmp_path)
        assert result.exit_code == 0, result.stderr
        schemas = {
            p.stem: json.loads(p.read_text()) for p in (tmp_path / "out" / "schemas").glob("*.json")
        }
        anthropic = schemas["anthropic"]
        assert anthropic[0]["name"] == "far" and anthropic[0]["defer_loading"] is True
        assert_typed_dict(anthropic[0], sdk_check_tool_param())
        assert_typed_dict(anthropic[2], search)
        assert_typed_dict(anthropic[3], WebSearchTool20250305Param)
        assert_typed_dict(anthropic[4], WebFetchTool20250910Param)
        responses = schemas["openai_responses"]
        assert responses[0]["defer_loading"] is True and [e["type"] for e in responses[2:]] == [
            "tool_search",
            "web_search",
            "file_search",
        ]
        TypeAdapter(list[ToolParam]).validate_python(responses)
        for entry in responses[2:]:
            assert set(entry) <= {"type", "vector_store_ids"}
        gemini = [types.Tool.model_validate(tool) for tool in schemas["gemini"]]
        assert gemini[1].google_search is not None and gemini[2].url_context is not None
        assert "defer_loading" not in json.dumps(schemas["openai"]) and len(schemas["openai"]) == 2


def sdk_check_tool_param() -> Any:
    from anthropic.types import ToolParam

    return ToolParam


# -- deferred loading through a tool search, scripted through the official clients ----------

DEFERRED = {
    "get_weather.yaml": {
        "description": "Current weather for a city",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
    "refund_invoice.yaml": {
        "description": "Refund an invoice, fully or in part",
        "defer_loading": True,
        "input_schema": {
            "type": "object",
            "properties": {"invoice": {"type": "string"}},
            "required": ["invoice"],
        },
    },
    "export_report.yaml": {
        "description": "Export a sales report as CSV",
        "defer_loading": True,
    },
}


@pytest.fixture(scope="module")
def deferred_tk(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from conftest import build_in

    root = tmp_path_factory.mktemp("deferred")
    (root / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.hosted]\nweb_search = {targets = {exclude = ["openai", "bedrock"]}}\n'
    )
    pkg = build_in(root, DEFERRED)

    class Handlers(pkg.ToolHandlers):  # type: ignore[misc, name-defined]
        def get_weather(self, args: Any, ctx: Any) -> str:
            return f"{args.city}: sunny"

        def refund_invoice(self, args: Any, ctx: Any) -> str:
            return f"refunded {args.invoice}"

        def export_report(self, args: Any, ctx: Any) -> str:
            return "a,b"

    return pkg.Toolkit(Handlers())


def test_an_anthropic_conversation_through_the_tool_search(deferred_tk: Any) -> None:
    from anthropic.types import MessageParam
    from pydantic import TypeAdapter

    usage = {"input_tokens": 1, "output_tokens": 1}
    searched = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": usage,
        "content": [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "tool_search_tool_bm25",
                "input": {"query": "refund"},
            },
            {
                "type": "tool_search_tool_result",
                "tool_use_id": "srvtoolu_1",
                "content": {
                    "type": "tool_search_tool_search_result",
                    "tool_references": [{"type": "tool_reference", "tool_name": "refund_invoice"}],
                },
            },
            {
                "type": "server_tool_use",
                "id": "srvtoolu_2",
                "name": "web_search",
                "input": {"query": "refund policy"},
            },
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2", "content": []},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "refund_invoice",
                "input": {"invoice": "INV-7"},
            },
        ],
    }
    final = {
        **searched,
        "id": "msg_2",
        "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "Refunded."}],
    }
    script = scripted.Script([searched, final])
    client = scripted.anthropic_client(script)
    result = deferred_tk.run_anthropic(client, model="m", messages="Refund INV-7")
    sent = script.requests[0]["tools"]
    assert [t.get("name") for t in sent] == [
        "export_report",
        "get_weather",
        "refund_invoice",
        "tool_search_tool_bm25",
        "web_search",
    ]
    assert [t.get("defer_loading") for t in sent[:3]] == [True, None, True]
    # only the tool_use block ran; the server blocks went back in the history as they came
    [(call, outcome)] = result.tool_calls
    assert call.name == "refund_invoice" and outcome.output == "refunded INV-7"
    assistant = script.requests[1]["messages"][1]
    assert [b["type"] for b in assistant["content"]] == [
        "server_tool_use",
        "tool_search_tool_result",
        "server_tool_use",
        "web_search_tool_result",
        "tool_use",
    ]
    assert script.requests[1]["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"
    for message in result.messages:
        TypeAdapter(MessageParam).validate_python(message)


def test_a_responses_conversation_through_the_tool_search(deferred_tk: Any) -> None:
    from openai.types.responses import ResponseInputParam
    from pydantic import TypeAdapter

    response = scripted.responses_envelope
    searched = response(
        [
            {
                "type": "tool_search_call",
                "id": "ts_1",
                "call_id": None,
                "execution": "server",
                "status": "completed",
                "arguments": {"query": "refund"},
            },
            {
                "type": "tool_search_output",
                "id": "tso_1",
                "call_id": None,
                "execution": "server",
                "status": "completed",
                "tools": [
                    {
                        "type": "function",
                        "name": "refund_invoice",
                        "parameters": {"type": "object"},
                        "strict": False,
                    }
                ],
            },
            {
                "type": "web_search_call",
                "id": "ws_1",
                "status": "completed",
                "action": {"type": "search", "query": "q"},
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "refund_invoice",
                "arguments": '{"invoice": "INV-9"}',
                "status": "completed",
            },
        ]
    )
    final = response(
        [
            {
                "type": "message",
                "id": "m1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
            }
        ]
    )
    script = scripted.Script([searched, final])
    client = scripted.openai_client(script)
    result = deferred_tk.run_openai_responses(client, model="m", input="Refund INV-9")
    sent = script.requests[0]["tools"]
    assert [t.get("name", t["type"]) for t in sent] == [
        "export_report",
        "get_weather",
        "refund_invoice",
        "tool_search",
        "web_search",
    ]
    [(call, outcome)] = result.tool_calls
    assert outcome.output == "refunded INV-9"
    kinds = [item["type"] for item in script.requests[1]["input"][1:]]
    assert kinds == [
        "tool_search_call",
        "tool_search_output",
        "web_search_call",
        "function_call",
        "function_call_output",
    ]
    TypeAdapter(ResponseInputParam).validate_python(result.messages)


@pytest.mark.parametrize("provider", ["openai", "gemini", "bedrock"])
def test_loops_search_deferred_tools_client_side(deferred_tk: Any, provider: str) -> None:
    turns: list[scripted.Turn] = [
        [("s1", "search_tools", {"query": "refund an invoice"})],
        [("c1", "refund_invoice", {"invoice": "INV-3"})],
        "Refunded.",
    ]
    client, recorder = scripted.client_for(provider, turns)
    sent: list[dict[str, Any]] = []
    if provider == "bedrock":
        client.meta.events.register(
            "provide-client-params.bedrock-runtime.Converse",
            lambda params, **_: sent.append(params),
        )
    request = {
        "openai": {"model": "m", "messages": "hi"},
        "gemini": {"model": "m", "contents": "hi"},
        "bedrock": {"modelId": "m", "messages": "hi"},
    }[provider]
    result = getattr(deferred_tk, f"run_{provider}")(client, **request)
    requests = sent if provider == "bedrock" else recorder.requests

    def offered(body: dict[str, Any]) -> list[str]:
        if provider == "gemini":
            return [d["name"] for t in body["tools"] for d in t.get("functionDeclarations", ())]
        if provider == "bedrock":
            return [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]]
        return [t["function"]["name"] for t in body["tools"]]

    assert offered(requests[0]) == ["get_weather", "search_tools"]
    assert offered(requests[1]) == ["get_weather", "refund_invoice", "search_tools"]
    (search, found), (_, refund) = result.tool_calls
    assert search.name == "search_tools" and found.data == {"loaded": ["refund_invoice"]}
    assert "refund_invoice: Refund an invoice" in found.output
    assert refund.output == "refunded INV-3"
    if provider == "gemini":  # the Gemini 3 rule, set by the loop for the hosted googleSearch
        assert requests[0]["toolConfig"]["includeServerSideToolInvocations"] is True
        assert {"googleSearch": {}} in requests[0]["tools"]


# -- a toolset without a tool for a target ---------------------------------------------------


def test_a_toolset_without_a_tool_for_a_target_sends_no_empty_list(tmp_path: Path) -> None:
    from conftest import build_in
    from google.genai import types

    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.toolsets]\nlocal = {tools = ["shell"]}\nall = {tools = ["shell", "now"]}\n'
    )
    specs = {
        "now.yaml": {"description": "The time"},
        "shell.yaml": {
            "description": "Run a command",
            "targets": {"exclude": ["gemini", "bedrock"]},
        },
    }
    write_specs(tmp_path / "check" / "specs", specs)
    (tmp_path / "check" / "pyproject.toml").write_text((tmp_path / "pyproject.toml").read_text())
    result = cli("build", "specs", "--out", "out", cwd=tmp_path / "check")
    assert result.exit_code == 0, result.stderr
    for target, says in (
        ("gemini", "Gemini rejects a functionDeclarations wrapper without declarations"),
        ("bedrock", "Bedrock rejects a toolConfig without tools"),
    ):
        assert (
            f"pyproject.toml:2:1: warning[TN468]: {target}: toolset 'local' "
            f"holds no tool for {target} (each of its tools excludes it): a request with it "
            f"carries no tools; send it without them (the loops do); {says}"
        ) in result.stderr
    assert "toolset 'all'" not in result.stderr and "openai: toolset" not in result.stderr
    pkg = build_in(tmp_path, specs)

    class Handlers(pkg.ToolHandlers):  # type: ignore[misc, name-defined]
        def now(self, args: Any, ctx: Any) -> str:
            return "12:00"

        def shell(self, args: Any, ctx: Any) -> str:
            return "ok"

    tk = pkg.Toolkit(Handlers())
    assert pkg.to_gemini(toolset="local") == [] == tk.to_gemini(toolset="local")
    assert [types.Tool.model_validate(t) for t in pkg.to_gemini(toolset="all")]
    with pytest.raises(ValueError, match="toolset 'local' holds no tool for bedrock"):
        pkg.to_bedrock(toolset="local")
    with pytest.raises(ValueError, match="Bedrock rejects a toolConfig without tools"):
        tk.to_bedrock(toolset="local")
    assert [t["toolSpec"]["name"] for t in pkg.to_bedrock(toolset="all")["tools"]] == ["now"]
    # the loops send such a request without tools (Bedrock's stub checks the request's shape)
    gemini, recorder = scripted.client_for("gemini", ["hello"])
    tk.run_gemini(gemini, model="m", contents="hi", toolset="local")
    assert "tools" not in recorder.requests[0]
    bedrock, _ = scripted.client_for("bedrock", ["hello"])
    sent: list[dict[str, Any]] = []
    bedrock.meta.events.register(
        "provide-client-params.bedrock-runtime.Converse", lambda params, **_: sent.append(params)
    )
    tk.run_bedrock(bedrock, modelId="m", messages="hi", toolset="local")
    assert "toolConfig" not in sent[0]


def test_the_whole_set_without_a_tool_for_a_target_writes_no_empty_wrapper(
    tmp_path: Path,
) -> None:
    write_specs(
        tmp_path / "specs",
        {"shell.yaml": {"description": "Run a command", "targets": {"exclude": ["gemini"]}}},
    )
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert (
        "specs/shell.yaml:1:1: warning[TN468]: gemini: the whole set holds no tool for gemini"
        in result.stderr
    )
    assert json.loads((tmp_path / "out/schemas/gemini.json").read_text()) == []
