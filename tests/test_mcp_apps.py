"""MCP Apps: a server marks some tools for its app's UI only (`_meta.ui.visibility: ["app"]`;
6 of the 9 tools of @modelcontextprotocol/server-pdf). `sync` leaves those out with a warning,
as it does task-only tools, and keeps every tool's `_meta` in its snapshot (as `x-mcp-meta`, which
the build ignores). Both failed before: app-only tools were offered to the model, `_meta` dropped.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli
from mcp_helpers import project
from test_mcp_gateway import counting_server, raw_server

OBJECT = {"type": "object", "properties": {"url": {"type": "string"}}}
TOOLS = [
    {
        "name": "display_pdf",
        "description": "Show a PDF to the user",
        "inputSchema": OBJECT,
        "_meta": {"ui": {"resourceUri": "ui://pdf/viewer.html", "visibility": ["model", "app"]}},
    },
    {
        "name": "read_pdf_bytes",
        "description": "Bytes of a page, for the viewer",
        "inputSchema": OBJECT,
        "_meta": {"ui": {"visibility": ["app"]}},
    },
    {"name": "list_pdfs", "description": "PDFs at hand", "inputSchema": {"type": "object"}},
    {
        "name": "everyone",
        "description": "No visibility listed: both",
        "inputSchema": {"type": "object"},
        "_meta": {"ui": {"visibility": []}},
    },
]


def test_app_only_tools_are_left_out_and_meta_is_kept(tmp_path: Path) -> None:
    server = counting_server(tmp_path, raw_server(TOOLS, "pass"))
    folder = project(tmp_path / "p", {"pdf": server})
    result = cli("sync", cwd=folder)
    assert result.exit_code == 0, result.stderr
    written = sorted(p.name for p in (folder / "specs" / "pdf").glob("*.json"))
    assert written == ["pdf_display_pdf.json", "pdf_everyone.json", "pdf_list_pdfs.json"]
    assert (
        "warning[TN417]: server 'pdf': tool 'read_pdf_bytes' is left out: it is for the "
        "server's app only"
    ) in result.stderr
    shown = json.loads((folder / "specs" / "pdf" / "pdf_display_pdf.json").read_text())
    assert shown["x-mcp-meta"] == TOOLS[0]["_meta"]
    plain = json.loads((folder / "specs" / "pdf" / "pdf_list_pdfs.json").read_text())
    assert "x-mcp-meta" not in plain
    # the snapshot builds, and the model is offered only what the server meant for it
    built = cli("build", "--target", "openai", "--target", "mcp", cwd=folder)
    assert built.exit_code == 0, built.stderr
    offered = json.loads((folder / "tools" / "schemas" / "mcp.json").read_text())
    assert [tool["name"] for tool in offered] == [
        "pdf_display_pdf",
        "pdf_everyone",
        "pdf_list_pdfs",
    ]
    # and sync --check sees nothing changed
    assert cli("sync", "--check", cwd=folder).exit_code == 0
