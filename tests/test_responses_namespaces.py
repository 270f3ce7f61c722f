"""OpenAI Responses: deferred tools grouped into `namespace` tools, as the provider recommends for
tool search (one per MCP server the tools come from, else per group), judged by the openai SDK's
own types; a scripted conversation through the official client whose call names its namespace;
toolsets, import and incremental builds keep the namespaces right."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, cli, generated, write_specs
from sdk_check import assert_typed_dict

sys.path.insert(0, str(ROOT / "examples"))
import scripted  # noqa: E402


def invoice(description: str, **extra: Any) -> dict[str, Any]:
    return {
        "description": description,
        "defer_loading": True,
        "input_schema": {
            "type": "object",
            "properties": {"invoice": {"type": "string"}},
            "required": ["invoice"],
        },
        **extra,
    }


SPECS = {
    "get_weather.json": {
        "description": "Current weather for a city",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
    "get_invoice.json": invoice("Get an invoice", groups=["billing.v2"]),
    "refund_invoice.json": invoice("Refund an invoice", groups=["billing.v2", "admin"]),
    "void_invoice.json": {**invoice("Void an invoice"), "groups": ["admin"]},
    "export_report.json": {"description": "Export a report as CSV", "defer_loading": True},
    "wiki/search.json": {
        "description": "Search the wiki",
        "defer_loading": True,
        "groups": ["admin"],  # the MCP server wins over the group
        "source": {"mcp": {"server": "wiki", "tool": "search-pages"}},
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
    },
    "loaded.json": {"description": "Loaded, in a group", "groups": ["billing.v2"]},
}
PYPROJECT = """\
[tool.toolnexus-gen]
targets = ["openai_responses", "anthropic"]

[tool.toolnexus-gen.toolsets]
refunds = {tools = ["refund_invoice", "get_weather"]}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("namespaces")
    write_specs(root / "specs", SPECS)
    (root / "pyproject.toml").write_text(PYPROJECT)
    result = cli("build", "specs", "--out", "ns_tools", cwd=root)
    assert result.exit_code == 0, result.stderr
    return root


@pytest.fixture(scope="module")
def pkg(project: Path) -> Any:
    sys.path.insert(0, str(project))
    return importlib.import_module("ns_tools")


def test_deferred_tools_go_into_a_namespace_per_server_or_group(project: Path, pkg: Any) -> None:
    from openai.types.responses import NamespaceToolParam, ToolParam
    from pydantic import TypeAdapter

    text = (project / "ns_tools/schemas/openai_responses.json").read_text()
    tools = json.loads(text)
    assert text == json.dumps(tools, indent=2, ensure_ascii=False) + "\n"  # as one dump writes it
    TypeAdapter(list[ToolParam]).validate_python(tools)
    shape = [(t["type"], t.get("name")) for t in tools]
    assert shape == [
        ("function", "export_report"),  # deferred, with neither server nor group: alone
        ("namespace", "billing_v2"),  # a name the provider takes
        ("function", "get_weather"),
        ("function", "loaded"),  # loaded tools stay where they are, groups or not
        ("namespace", "wiki"),  # where its first tool (by name) would stand
        ("namespace", "admin"),
        ("tool_search", None),
    ]
    billing, wiki, admin = tools[1], tools[4], tools[5]
    for namespace in (billing, admin, wiki):
        assert_typed_dict(namespace, NamespaceToolParam)
        assert all(t["defer_loading"] is True for t in namespace["tools"])
        assert "defer_loading" not in namespace  # on the functions inside, not the namespace
    assert [t["name"] for t in billing["tools"]] == ["get_invoice", "refund_invoice"]
    assert billing["description"] == (
        "billing_v2 tools, loaded through tool search: get_invoice, refund_invoice"
    )
    assert [t["name"] for t in admin["tools"]] == ["void_invoice"]
    assert [t["name"] for t in wiki["tools"]] == ["search"]
    # elsewhere nothing changes: Anthropic keeps flat entries with defer_loading
    anthropic = pkg.to_anthropic()
    assert [t.get("name") for t in anthropic if "input_schema" in t] == [
        "export_report",
        "get_invoice",
        "get_weather",
        "loaded",
        "refund_invoice",
        "search",
        "void_invoice",
    ]


def test_a_toolset_keeps_its_part_of_a_namespace(pkg: Any) -> None:
    from openai.types.responses import ToolParam
    from pydantic import TypeAdapter

    refunds = pkg.to_openai_responses(toolset="refunds")
    TypeAdapter(list[ToolParam]).validate_python(refunds)
    assert [(t["type"], t.get("name")) for t in refunds] == [
        ("namespace", "billing_v2"),
        ("function", "get_weather"),
        ("tool_search", None),
    ]
    assert refunds[0]["description"].endswith("loaded through tool search: refund_invoice")
    assert [t["name"] for t in refunds[0]["tools"]] == ["refund_invoice"]


def test_a_call_from_a_namespace_runs_its_tool(pkg: Any) -> None:
    from openai.types.responses import ResponseInputParam
    from pydantic import TypeAdapter

    class Handlers(pkg.ToolHandlers):  # type: ignore[misc, name-defined]
        def get_weather(self, args: Any, ctx: Any) -> str:
            return "sunny"

        def get_invoice(self, args: Any, ctx: Any) -> str:
            return f"invoice {args.invoice}"

        def refund_invoice(self, args: Any, ctx: Any) -> str:
            return f"refunded {args.invoice}"

        def void_invoice(self, args: Any, ctx: Any) -> str:
            return "void"

        def export_report(self, args: Any, ctx: Any) -> str:
            return "a,b"

        def loaded(self, args: Any, ctx: Any) -> str:
            return "ok"

    wiki = {"mcpServers": {"wiki": {"command": sys.executable}}}  # never started here
    tk = pkg.Toolkit(Handlers(), mcp_config=wiki)

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
                "tools": [pkg.to_openai_responses(toolset="refunds")[0]],
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "namespace": "billing_v2",
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
    result = tk.run_openai_responses(client, model="m", input="Refund INV-9", toolset="refunds")
    assert script.requests[0]["tools"] == pkg.to_openai_responses(toolset="refunds")
    [(call, outcome)] = result.tool_calls
    assert (call.name, outcome.output) == ("refund_invoice", "refunded INV-9")
    echoed = script.requests[1]["input"][3]
    assert echoed["namespace"] == "billing_v2" and echoed["name"] == "refund_invoice"
    TypeAdapter(ResponseInputParam).validate_python(result.messages)
    # the round trip alone answers it the same way
    (reply,) = tk.openai_responses_outputs([searched["output"][2]])
    assert reply == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": "refunded INV-9",
    }


def test_import_reads_the_tools_inside_namespaces(project: Path, tmp_path: Path) -> None:
    result = cli(
        "import",
        "openai_responses",
        str(project / "ns_tools/schemas/openai_responses.json"),
        "--as",
        "json",
        cwd=tmp_path,
    )
    assert result.exit_code == 0, result.stderr
    assert sorted(p.stem for p in (tmp_path / "specs").glob("*.json")) == [
        "export_report",
        "get_invoice",
        "get_weather",
        "loaded",
        "refund_invoice",
        "search",
        "void_invoice",
    ]


def test_an_incremental_build_writes_what_a_fresh_one_does(project: Path, tmp_path: Path) -> None:
    root = tmp_path / "incremental"
    shutil.copytree(project / "specs", root / "specs")
    shutil.copy(project / "pyproject.toml", root)
    assert cli("build", "specs", "--out", "out", cwd=root).exit_code == 0
    # one more tool in a namespace, one leaves it: the others' entries are reused
    write_specs(root / "specs", {"credit_note.json": invoice("Credit note", groups=["billing.v2"])})
    (root / "specs/get_invoice.json").unlink()
    assert cli("build", "specs", "--out", "out", cwd=root).exit_code == 0
    fresh = tmp_path / "fresh"
    shutil.copytree(root / "specs", fresh / "specs")
    shutil.copy(root / "pyproject.toml", fresh)
    assert cli("build", "specs", "--out", "out", cwd=fresh).exit_code == 0
    assert generated(root / "out") == generated(fresh / "out")
    tools = json.loads((root / "out/schemas/openai_responses.json").read_text())
    billing = next(t for t in tools if t.get("name") == "billing_v2")
    assert [t["name"] for t in billing["tools"]] == ["credit_note", "refund_invoice"]
    assert cli("build", "specs", "--out", "out", "--check", cwd=root).exit_code == 0


def test_a_tool_named_like_a_namespace_in_its_request_is_refused(tmp_path: Path) -> None:
    write_specs(
        tmp_path / "specs",
        {
            "billing.json": {"description": "loaded"},
            "refund.json": invoice("Refund", groups=["billing"]),
        },
    )
    result = cli("build", "specs", "--out", "out", "--target", "openai_responses", cwd=tmp_path)
    assert result.exit_code == 2
    assert (
        "specs/billing.json:1:1: error[TN466]: openai_responses: 'billing' is the name of the "
        "namespace of its deferred tools in the same request" in result.stderr
    )
