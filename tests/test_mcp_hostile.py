"""An attacker's review of the MCP gateway: hostile upstream servers over streamable HTTP, served
for real by uvicorn on 127.0.0.1 as a raw ASGI app (no SDK: it says what a hostile server says),
reached by the Toolkit's proxy (the official `mcp` client). Each test failed before its fix: a
JSON answer was read whole however long it was (an endless one until the call's deadline), a
compressed one was inflated whole, a JSON-RPC error's text reached the model whatever its length,
and credentials written in a server's URL were quoted in the errors the model and the log got."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp_helpers import ACCEPT, free_port, weather_toolkit
from pydantic import BaseModel
from test_mcp_gateway import counting_server, raw_server
from test_mcp_gateway import proxied as proxied_stdio
from toolnexus_runtime import Toolkit, ToolSpec
from toolnexus_runtime.executors.mcp import MAX_MESSAGE
from uvicorn_helpers import serving

Send = Callable[[dict[str, Any]], Awaitable[None]]


class Empty(BaseModel):
    pass


def proxied(server: dict[str, Any], **options: Any) -> Toolkit[Any]:
    table = {"x_t": ToolSpec("x_t", Empty, None, {"mcp": {"server": "x", "tool": "t"}})}
    return Toolkit(object(), tools=table, mcp_config={"mcpServers": {"x": server}}, **options)


async def _json(send: Send, message: dict[str, Any], status: int = 200) -> None:
    body = json.dumps(message).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def hostile(call: Callable[[Any, Send], Awaitable[None]], status: int = 200) -> Any:
    """A streamable HTTP MCP server of protocol 2025-11-25 answering tools/call with `call(id,
    send)` (every request with `status`, when not 200)."""

    async def app(scope: Any, receive: Any, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body) if scope["method"] == "POST" else {}
        ident, method = request.get("id"), request.get("method")
        if status != 200:
            await _json(
                send, {"jsonrpc": "2.0", "id": ident, "error": {"code": 1, "message": "no"}}, status
            )
        elif ident is None:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body"})
        elif method == "initialize":
            result = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
            await _json(send, {"jsonrpc": "2.0", "id": ident, "result": result})
        elif method == "tools/list":
            tools = [{"name": "t", "inputSchema": {"type": "object"}}]
            await _json(send, {"jsonrpc": "2.0", "id": ident, "result": {"tools": tools}})
        elif method == "tools/call":
            await call(ident, send)
        else:
            error = {"code": -32601, "message": "Method not found"}
            await _json(send, {"jsonrpc": "2.0", "id": ident, "error": error})

    return app


HEAD = '{"jsonrpc": "2.0", "id": %s, "result": {"content": [{"type": "text", "text": "'
CHUNK = b"y" * (1 << 20)


async def endless(ident: Any, send: Send) -> None:
    """A JSON answer that never ends (64 MiB here: a bound for the test's sake)."""
    start = {"type": "http.response.start", "status": 200}
    await send({**start, "headers": [(b"content-type", b"application/json")]})
    await send(
        {
            "type": "http.response.body",
            "body": (HEAD % json.dumps(ident)).encode(),
            "more_body": True,
        }
    )
    for _ in range(64):
        await send({"type": "http.response.body", "body": CHUNK, "more_body": True})
        await asyncio.sleep(0)
    await send({"type": "http.response.body", "body": b'"}]}}'})


def _bomb() -> bytes:
    """A gzip stream of 160 kB that inflates to a 40 MiB JSON answer for id 4."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [packer.compress((HEAD % "4").encode())]
    parts += [packer.compress(CHUNK) for _ in range(40)]
    parts += [packer.compress(b'"}]}}'), packer.flush()]
    return b"".join(parts)


BOMB = _bomb()


async def compressed(ident: Any, send: Send) -> None:
    assert ident == 4  # the bomb is made for it (server/discover, initialize, tools/list first)
    headers = [(b"content-type", b"application/json"), (b"content-encoding", b"gzip")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": BOMB})


def test_an_endless_json_answer_is_cut_at_the_message_limit_not_read_whole() -> None:
    timeout = 20.0
    with serving(hostile(endless)) as url, proxied({"url": url, "timeout": timeout}) as tk:
        start = time.perf_counter()
        result = tk.execute_sync("x_t", {})
        took = time.perf_counter() - start
    assert result.is_error
    assert f"over the limit of {MAX_MESSAGE} bytes" in result.output, result.output[:300]
    assert took < timeout / 2, took


def test_a_compressed_answer_is_not_inflated_past_the_message_limit() -> None:
    assert len(BOMB) < 1_000_000
    with serving(hostile(compressed)) as url, proxied({"url": url, "timeout": 20}) as tk:
        result = tk.execute_sync("x_t", {})
    assert result.is_error, result.output[:300]
    assert "its answer was gzip-compressed, which was not asked for" in result.output


async def long_error(ident: Any, send: Send) -> None:
    error = {"code": -32603, "message": "E" * 2_000_000}
    await _json(send, {"jsonrpc": "2.0", "id": ident, "error": error})


def test_an_upstream_error_text_is_cut_at_the_output_limit() -> None:
    with serving(hostile(long_error)) as url, proxied({"url": url}, output_limit=1000) as tk:
        result = tk.execute_sync("x_t", {})
    assert result.is_error
    assert "EEEE" in result.output
    assert len(result.output) < 1200, len(result.output)
    assert "[output cut: 1000 of" in result.output


SECRETS = ("hunter2-password", "sk-live-0123456789")


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


@pytest.mark.parametrize("reachable", [True, False], ids=["refused-401", "no-listener"])
def test_credentials_written_in_a_server_url_are_never_quoted(
    reachable: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)

    def url_of(base: str) -> str:
        return base.replace("http://", f"http://admin:{SECRETS[0]}@") + f"?api_key={SECRETS[1]}"

    if reachable:
        with serving(hostile(long_error, status=401)) as url, proxied({"url": url_of(url)}) as tk:
            result = tk.execute_sync("x_t", {})
    else:
        with proxied({"url": url_of(f"http://127.0.0.1:{free_port()}/mcp")}) as tk:
            result = tk.execute_sync("x_t", {})
    assert result.is_error and "unavailable" in result.output, result.output
    assert "127.0.0.1" in result.output  # still says where
    assert _leaks(result.output) == [], result.output
    assert _leaks(caplog.text) == [], caplog.text


# -- our server, to a hostile client -----------------------------------------------------------


@pytest.fixture(scope="module")
def weather() -> Any:
    return weather_toolkit()


def _post(url: str, token: str, method: str, session: str | None = None) -> httpx2.Response:
    headers = {**ACCEPT, "Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2025-11-25"}
    if session is not None:
        headers["Mcp-Session-Id"] = session
    params: dict[str, Any] = {}
    if method == "initialize":
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx2.post(url, json=body, headers=headers, timeout=10)


def test_a_session_answers_only_the_token_that_opened_it(weather: Any) -> None:
    from toolnexus_runtime.mcp import asgi_app

    app = asgi_app(weather, bearer_tokens=["token-of-alice", "token-of-bob"], stateless=False)
    with serving(app) as url:
        opened = _post(url, "token-of-alice", "initialize")
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        # Bob, who knows (or guessed) Alice's session id, is told it does not exist
        stolen = _post(url, "token-of-bob", "tools/list", session)
        assert stolen.status_code == 404, stolen.text
        assert "get_weather" not in stolen.text
        # Alice still reaches her session, and Bob his own
        assert _post(url, "token-of-alice", "tools/list", session).status_code == 200
        own = _post(url, "token-of-bob", "initialize")
        assert own.status_code == 200 and own.headers["mcp-session-id"] != session


# -- a local server's notifications --------------------------------------------------------------

NOISY = raw_server(
    [{"name": "t", "inputSchema": {"type": "object"}}],
    """
    token = request["params"].get("_meta", {}).get("progressToken")
    progress = {"progressToken": token, "progress": float("nan")}
    send({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
    text = "done\\nCRITICAL root: forged record \\x1b[31m" + "z" * 100_000
    send({"jsonrpc": "2.0", "method": "notifications/message",
          "params": {"level": "error", "data": text, "logger": "a\\nb"}})
    send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": "ok"}]}})
    """,
)


def test_a_servers_log_message_is_one_cut_line_and_nan_progress_is_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from toolnexus_runtime import ToolContext
    from toolnexus_runtime.reporting import Relay

    caplog.set_level(logging.INFO)
    sent: list[Any] = []

    async def with_reporter(tk: Any) -> Any:
        async def send(item: Any) -> None:
            sent.append(item)

        relay = Relay(send, "x_t")
        result = await tk.execute("x_t", {}, ToolContext(reporter=relay))
        await relay.close()
        return result

    with proxied_stdio(counting_server(tmp_path, NOISY)) as tk:
        plain = tk.execute_sync("x_t", {})  # no reporter: to the Python log
        reported = asyncio.run(with_reporter(tk))  # a reporter: to our client, as said
    assert plain.output == reported.output == "ok"
    logged = [r for r in caplog.records if r.name == "toolnexus_runtime.tools"]
    assert len(logged) == 1 and logged[0].levelno == logging.ERROR
    message = logged[0].getMessage()
    assert "\n" not in message and "\x1b" not in message
    assert message.startswith("[a\\nb] done\\nCRITICAL root: forged record \\x1b[31mzzz")
    said = len("done\nCRITICAL root: forged record \x1b[31m") + 100_000
    assert message.endswith(f"... [{said} characters]") and len(message) < 2100
    assert not [r for r in caplog.records if "progress callback raised" in r.getMessage()]
    assert sent == [
        ("log", "error", "done\nCRITICAL root: forged record \x1b[31m" + "z" * 100_000, "a\nb")
    ]
