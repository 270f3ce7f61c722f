"""Serve a Toolkit as an MCP server with the official `mcp` package, imported only when used
(`pip install 'toolnexus-runtime[mcp]'`): `serve_mcp` on stdio, `asgi_app` over streamable HTTP,
`mcp_server` (the SDK's low-level `Server`) for any other transport.

tools/list answers exactly the generated `schemas/mcp.json`; tools/call goes through
`Toolkit.execute`; images, audio and resources a tool returns go as MCP content, and its
`ctx.report_progress` / `ctx.log` as notifications before the result (mcp_server.py). Over HTTP:
mcp_http.py.
"""

from __future__ import annotations

import asyncio
from importlib import import_module
from typing import Any

from .core import ToolkitCore
from .mcp_http import asgi_app
from .mcp_server import DEFAULT_TIMEOUT, _output_validator, _structured, mcp_server

__all__ = [
    "DEFAULT_TIMEOUT",
    "_output_validator",
    "_structured",
    "aserve_mcp",
    "asgi_app",
    "mcp_server",
    "serve_mcp",
]


async def aserve_mcp(
    toolkit: ToolkitCore[Any],
    *,
    name: str | None = None,
    version: str = "",
    instructions: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    toolset: str | None = None,
) -> None:
    """Serve `toolkit` (or one toolset of it) over MCP on stdio until the client disconnects."""
    stdio = import_module("mcp.server.stdio")
    server = mcp_server(
        toolkit,
        name=name,
        version=version,
        instructions=instructions,
        timeout=timeout,
        toolset=toolset,
    )
    async with stdio.stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_mcp(
    toolkit: ToolkitCore[Any],
    *,
    name: str | None = None,
    version: str = "",
    instructions: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    toolset: str | None = None,
) -> None:
    """Serve `toolkit` (or one toolset of it) over MCP on stdio until the client disconnects
    (blocking)."""
    asyncio.run(
        aserve_mcp(
            toolkit,
            name=name,
            version=version,
            instructions=instructions,
            timeout=timeout,
            toolset=toolset,
        )
    )
