"""Stateful MCP over HTTP (asgi_app(stateless=False)): one bearer token cannot hold every session.

A real uvicorn serves the app on 127.0.0.1; sessions come from the official `mcp` client, raw
requests from httpx2. Before the cap, one token could open sessions until the SDK's limit, and
every other token then got 503 until they expired (30 minutes).
"""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack
from typing import Any

import httpx2
import pytest
from mcp_helpers import ACCEPT, weather_toolkit
from uvicorn_helpers import serving


@pytest.fixture(scope="module")
def weather() -> Any:
    return weather_toolkit()


def initialize(url: str, token: str) -> httpx2.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
    return httpx2.post(url, json=body, headers=headers, timeout=10)


async def open_session(stack: AsyncExitStack, url: str, token: str) -> Any:
    """A session of the official client, kept open until `stack` closes (which ends it)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = await stack.enter_async_context(
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    )
    streams = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    client = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
    await client.initialize()
    return client


def test_one_token_cannot_take_every_session(weather: Any) -> None:
    from toolnexus_runtime.mcp import asgi_app

    app = asgi_app(
        weather,
        bearer_tokens=["alice-token", "bob-token"],
        stateless=False,
        max_sessions_per_token=2,
    )

    async def scenario(url: str) -> None:
        async with AsyncExitStack() as alice:
            first = await open_session(alice, url, "alice-token")
            await open_session(alice, url, "alice-token")
            # a third for the same token is refused, and opens nothing
            refused = await asyncio.to_thread(initialize, url, "alice-token")
            assert refused.status_code == 429, refused.text
            assert "Too many open sessions for this token (2)" in refused.text
            assert "mcp-session-id" not in refused.headers
            # another token is not affected
            async with AsyncExitStack() as bob:
                session = await open_session(bob, url, "bob-token")
                listed = await session.list_tools()
                assert "get_weather" in [tool.name for tool in listed.tools]
            # Alice's open sessions still work
            called = await first.call_tool("get_weather", {"city": "Oslo"})
            assert called.content[0].text == "Oslo: 21C, clear"
        # her sessions ended (the client deletes them on close): she may open new ones
        async with AsyncExitStack() as again:
            await open_session(again, url, "alice-token")
            await open_session(again, url, "alice-token")

    with serving(app) as url:
        asyncio.run(scenario(url))


def test_an_idle_session_ends_and_frees_its_place(weather: Any) -> None:
    from toolnexus_runtime.mcp import asgi_app

    app = asgi_app(
        weather,
        bearer_tokens=["alice-token"],
        stateless=False,
        max_sessions_per_token=1,
        session_idle_timeout=0.5,
    )
    with serving(app) as url:
        opened = initialize(url, "alice-token")  # never ended by its client
        assert opened.status_code == 200, opened.text
        assert initialize(url, "alice-token").status_code == 429
        time.sleep(1.2)
        again = initialize(url, "alice-token")
        assert again.status_code == 200, again.text
        assert again.headers["mcp-session-id"] != opened.headers["mcp-session-id"]


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("max_sessions_per_token", 0),
        ("max_sessions_per_token", True),
        ("session_idle_timeout", 0),
        ("session_idle_timeout", float("inf")),
    ],
)
def test_session_settings_are_checked(weather: Any, option: str, value: Any) -> None:
    from toolnexus_runtime.mcp import asgi_app

    with pytest.raises(ValueError, match=option):
        asgi_app(weather, allow_anonymous=True, stateless=False, **{option: value})
