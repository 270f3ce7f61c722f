"""MCP serving takes a toolset: `mcp_server`, `serve_mcp` (stdio) and `asgi_app` (streamable
HTTP) list only that toolset's tools and answer any other tool as unknown, reached with the
official `mcp` client (in process, over a real subprocess's stdio, over uvicorn on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import build_in
from test_http_server import serving

SPECS = {
    "get_invoice.yaml": {
        "description": "An invoice by id",
        "groups": ["billing"],
        "input_schema": {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
        },
    },
    "refund.yaml": {"description": "Refund the last invoice", "groups": ["billing"]},
    "github.delete_repo.yaml": {"description": "Delete a repository", "groups": ["admin"]},
    "now.yaml": {"description": "The time"},
}
PYPROJECT = """\
[tool.toolnexus-gen]
name_aliases = true

[tool.toolnexus-gen.toolsets]
billing = {groups = ["billing"], tools = ["now"]}
admin = {groups = ["admin"]}
"""
HANDLERS = """
class Handlers(ToolHandlers):
    def get_invoice(self, args, ctx):
        return f"invoice {args.id}"

    def refund(self, args, ctx):
        return "refunded"

    def github_delete_repo(self, args, ctx):
        return "deleted"

    def now(self, args, ctx):
        return "12:00"
"""


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("mcp_toolsets")
    (root / "pyproject.toml").write_text(PYPROJECT)
    return build_in(root, SPECS)


@pytest.fixture(scope="module")
def tk(pkg: Any) -> Any:
    scope: dict[str, Any] = {"ToolHandlers": pkg.ToolHandlers}
    exec(HANDLERS, scope)
    return pkg.Toolkit(scope["Handlers"]())


async def exercise(session: Any) -> tuple[list[str], Any, Any, Any]:
    listed = await session.list_tools()
    inside = await session.call_tool("get_invoice", {"id": "7"})
    outside = await session.call_tool("github.delete_repo", {})  # a tool of the package
    bad = await session.call_tool("get_invoice", {})
    return [t.name for t in listed.tools], inside, outside, bad


def check(pkg: Any, result: tuple[list[str], Any, Any, Any]) -> None:
    names, inside, outside, bad = result
    assert names == ["get_invoice", "now", "refund"] == list(pkg.TOOLSETS["billing"])
    assert not inside.is_error and inside.content[0].text == "invoice 7"
    assert outside.is_error
    assert outside.content[0].text == (
        "Unknown tool 'github.delete_repo'. Available tools: get_invoice, now, refund."
    )
    assert bad.is_error and "id: Field required" in bad.content[0].text


async def listed(server: Any) -> list[str]:
    from mcp import Client

    async with Client(server) as client:
        return [t.name for t in (await client.list_tools()).tools]


def test_mcp_server_serves_one_toolset_to_the_official_client(pkg: Any, tk: Any) -> None:
    from mcp import Client

    async def run() -> Any:
        async with Client(pkg.mcp_server(tk, toolset="billing")) as client:
            return await exercise(client)

    check(pkg, asyncio.run(run()))
    assert asyncio.run(listed(pkg.mcp_server(tk, toolset="admin"))) == ["github.delete_repo"]
    everything = asyncio.run(listed(pkg.mcp_server(tk)))
    assert everything == ["get_invoice", "github.delete_repo", "now", "refund"]
    with pytest.raises(ValueError, match="Unknown toolset 'nope'. Toolsets: billing, admin"):
        pkg.mcp_server(tk, toolset="nope")


def test_asgi_app_serves_one_toolset_over_http(tk: Any, pkg: Any) -> None:
    from test_http_server import session
    from toolnexus_runtime.mcp import asgi_app

    with serving(asgi_app(tk, toolset="billing", allow_anonymous=True)) as url:
        check(pkg, asyncio.run(session(url, exercise)))


def test_serve_mcp_serves_one_toolset_on_stdio(pkg: Any, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    root = Path(pkg.__file__).parent.parent
    script = tmp_path / "serve.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(root)!r})
            from {pkg.__name__} import Toolkit, ToolHandlers, serve_mcp
            """
        )
        + HANDLERS
        + '\nserve_mcp(Toolkit(Handlers()), toolset="billing")\n'
    )

    async def run() -> Any:
        params = StdioServerParameters(command=sys.executable, args=[str(script)])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                return await exercise(client)

    check(pkg, asyncio.run(run()))
