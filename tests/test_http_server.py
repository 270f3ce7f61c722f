"""MCP over HTTP as strangers reach it: tokens, origins, error text, threads, methods.

A real uvicorn serves each app on 127.0.0.1 (in a thread of the test process, so the tests can
read its log records and count its threads); raw requests come from httpx2, sessions from the
official `mcp` client. Each test reproduced a fault before it was fixed (issue 20).
"""

from __future__ import annotations

import asyncio
import hmac
import inspect
import json
import logging
import math
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest
from conftest import ROOT

WEATHER = ROOT / "examples" / "weather"
SECRET = "connect failed: dsn=postgres://admin:hunter2@db/prod"
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def tools() -> Any:
    sys.path.insert(0, str(WEATHER))
    try:
        import tools
    finally:
        sys.path.remove(str(WEATHER))
    return tools


def handlers_for(tools: Any) -> Any:
    class Handlers(tools.ToolHandlers):  # type: ignore[misc]
        release = threading.Event()
        started = threading.Event()

        async def get_weather(self, args: Any, ctx: Any) -> str:
            if args.city == "Atlantis":
                raise tools.ToolError("No weather for Atlantis: it is under water.")
            return f"{args.city}: 21C, clear"

        def now(self, args: Any, ctx: Any) -> str:
            self.started.set()
            if self.release.wait(20):
                raise RuntimeError(SECRET)
            return "12:00"

    return Handlers()


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn on a free port of 127.0.0.1; yield the /mcp URL."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "uvicorn did not start"
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(10)


def post(url: str, method: str, params: Any = None, **headers: str) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return httpx2.post(url, json=body, headers={**ACCEPT, **headers}, timeout=10)


async def session(url: str, work: Any, token: str | None = None) -> Any:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                return await work(client)


# -- 1. bearer tokens ------------------------------------------------------------------------------


@pytest.mark.parametrize("tokens", ["s3cret", b"s3cret"])
def test_a_single_string_of_tokens_is_refused_with_the_fix(tools: Any, tokens: Any) -> None:
    from toolnexus_runtime.mcp import asgi_app

    with pytest.raises(TypeError) as info:
        asgi_app(tools.Toolkit(handlers_for(tools)), bearer_tokens=tokens)
    text = str(info.value)
    assert "bearer_tokens" in text and "bearer_tokens=[" in text and "character" in text


def test_tokens_are_compared_in_constant_time_whatever_their_length(
    tools: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolnexus_runtime.mcp import asgi_app

    compared: list[tuple[int, int]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        compared.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    app = asgi_app(tools.Toolkit(handlers_for(tools)), bearer_tokens=["s3cret-token", "other"])
    with serving(app) as url:
        for token, status in [("s", 401), ("s3cret-token-and-more", 401), ("s3cret-token", 200)]:
            response = post(url, "tools/list", Authorization=f"Bearer {token}")
            assert response.status_code == status, (token, response.text)
    assert compared and {pair for pair in compared} == {(32, 32)}  # digests, never the tokens
    assert len(compared) == 6  # every accepted token is compared, whichever matches


# -- 2. DNS rebinding: Origin and Host -------------------------------------------------------------


def test_a_foreign_origin_is_refused_and_a_client_without_one_still_works(tools: Any) -> None:
    from toolnexus_runtime.mcp import asgi_app

    with serving(asgi_app(tools.Toolkit(handlers_for(tools)))) as url:
        port = url.split(":")[2].split("/")[0]
        rebinding = post(
            url, "tools/list", Origin="http://evil.example", Host=f"evil.example:{port}"
        )
        assert rebinding.status_code == 403, rebinding.text
        assert "get_weather" not in rebinding.text
        # a non-browser client sends no Origin, whatever Host it names
        assert post(url, "tools/list", Host="mcp.internal.example").status_code == 200
        # a page served from this machine (an MCP inspector) may call it
        local = post(url, "tools/list", Origin="http://localhost:6274")
        assert local.status_code == 200 and "get_weather" in local.text
        listed = asyncio.run(session(url, lambda c: c.list_tools()))
        assert [t.name for t in listed.tools] == ["get_weather", "now"]


def test_allowed_origins_and_allowed_hosts_widen_and_narrow(tools: Any) -> None:
    from toolnexus_runtime.mcp import asgi_app

    app = asgi_app(
        tools.Toolkit(handlers_for(tools)),
        allowed_origins=["https://app.example"],
        allowed_hosts=["127.0.0.1:*", "mcp.example"],
    )
    with serving(app) as url:
        assert post(url, "tools/list", Origin="https://app.example").status_code == 200
        assert post(url, "tools/list", Origin="https://other.example").status_code == 403
        assert post(url, "tools/list", Host="mcp.example").status_code == 200
        refused = post(url, "tools/list", Host="evil.example")
        assert refused.status_code == 421 and "get_weather" not in refused.text


# -- 3. the example fails closed -------------------------------------------------------------------


EXAMPLE_RUNS = """
import contextlib, importlib, io, json, os, sys
cases = json.loads(sys.argv[1])
outcomes = []
for env in cases:
    for key in [k for k in os.environ if k.startswith("MCP_")]:
        del os.environ[key]
    os.environ.update(env)
    sys.modules.pop("serve_http", None)
    try:
        outcomes.append(["started", type(importlib.import_module("serve_http").app).__name__])
    except SystemExit as exc:
        outcomes.append(["refused", str(exc)])
print(json.dumps(outcomes))
"""


def test_the_http_example_refuses_to_start_without_tokens() -> None:
    cases: list[tuple[dict[str, str], bool]] = [
        ({}, False),
        ({"MCP_TOKENS": " , "}, False),  # set, but names no token
        ({"MCP_TOKEN": "s3cret"}, False),  # misspelled
        ({"MCP_TOKENS": "s3cret,other"}, True),
        ({"MCP_ALLOW_ANONYMOUS": "1"}, True),
    ]
    done = subprocess.run(
        [sys.executable, "-c", EXAMPLE_RUNS, json.dumps([env for env, _ in cases])],
        cwd=WEATHER,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for (env, starts), (outcome, detail) in zip(cases, json.loads(done.stdout), strict=True):
        if starts:
            assert (outcome, detail) == ("started", "Starlette"), env
        else:
            assert outcome == "refused", env
            assert "MCP_TOKENS" in detail and "MCP_ALLOW_ANONYMOUS" in detail


# -- 4. error text over HTTP -----------------------------------------------------------------------


def test_an_unexpected_exception_is_masked_over_http_with_an_error_id_in_the_log(
    tools: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from toolnexus_runtime.mcp import asgi_app

    handlers = handlers_for(tools)
    handlers.release.set()  # now() raises at once

    async def work(client: Any) -> Any:
        return (
            await client.call_tool("now", {}),
            await client.call_tool("get_weather", {"city": "Atlantis"}),
        )

    with caplog.at_level(logging.ERROR, logger="toolnexus_runtime"):
        with serving(asgi_app(tools.Toolkit(handlers))) as url:
            failed, refused = asyncio.run(session(url, work))
    assert failed.is_error
    text = failed.content[0].text
    assert "hunter2" not in text and "RuntimeError" not in text
    (record,) = [r for r in caplog.records if r.__dict__.get("tool_name") == "now"]
    error_id = record.__dict__["error_id"]
    assert text == (
        f"Tool 'now' failed (error id {error_id}). The details are in the server's log."
    )
    assert error_id in record.getMessage() and record.exc_info is not None
    assert "hunter2" in caplog.text  # the log keeps the whole story
    # a ToolError is the handler's own answer: it passes as written
    assert refused.is_error and refused.content[0].text == (
        "No weather for Atlantis: it is under water."
    )


def test_error_message_still_decides_over_http(tools: Any) -> None:
    from toolnexus_runtime.mcp import asgi_app

    handlers = handlers_for(tools)
    handlers.release.set()
    tk = tools.Toolkit(handlers, error_message=lambda name, exc: f"{name}: {type(exc).__name__}")
    with serving(asgi_app(tk)) as url:
        result = asyncio.run(session(url, lambda c: c.call_tool("now", {})))
    assert result.is_error and result.content[0].text == "now: RuntimeError"


# -- 6. threads and timeouts on the server path ----------------------------------------------------


def call_tool_of(server: Any) -> Any:
    entry = server._request_handlers["tools/call"]  # what the SDK dispatches tools/call to
    return getattr(entry, "handler", None) or entry[1]


def params(name: str, arguments: dict[str, Any]) -> Any:
    from mcp import types

    return types.CallToolRequestParams(name=name, arguments=arguments)


def test_300_concurrent_sync_calls_on_the_server_use_a_bounded_set_of_threads(
    tools: Any,
) -> None:
    from toolnexus_runtime.mcp import mcp_server

    handlers = handlers_for(tools)
    call_tool = call_tool_of(mcp_server(tools.Toolkit(handlers)))
    before = threading.active_count()
    peak = 0

    async def main() -> list[Any]:
        nonlocal peak
        ctx = type("C", (), {"request_id": 1})()
        calls = [asyncio.ensure_future(call_tool(ctx, params("now", {}))) for _ in range(300)]
        await asyncio.sleep(1.0)
        peak = threading.active_count() - before
        handlers.release.set()
        return list(await asyncio.gather(*calls))

    try:
        results = asyncio.run(main())
    finally:
        handlers.release.set()
    assert peak <= 40, peak  # the default limit, not one thread per call
    assert all(r.is_error for r in results)  # each raised once released, and said so


def test_the_server_path_has_a_default_timeout_and_answers_busy_at_the_limit(
    tools: Any,
) -> None:
    from toolnexus_runtime.mcp import asgi_app, mcp_server

    for factory in (mcp_server, asgi_app):
        default = inspect.signature(factory).parameters["timeout"].default
        assert isinstance(default, float) and math.isfinite(default) and default > 0
    handlers = handlers_for(tools)
    toolkit = tools.Toolkit(handlers, max_threads=1)
    call_tool = call_tool_of(mcp_server(toolkit, timeout=0.3))
    # the same toolkit (the same one thread) behind a server that waits longer: its call holds
    # the thread past every short deadline, so whether a waiter got the thread is not a race
    call_long = call_tool_of(mcp_server(toolkit, timeout=30))

    async def main() -> tuple[Any, Any, list[Any]]:
        ctx = type("C", (), {"request_id": 1})()
        # a call that runs past its deadline answers at the deadline (its thread runs on)
        hung = await call_tool(ctx, params("now", {}))
        handlers.started.clear()
        holder = asyncio.ensure_future(call_long(ctx, params("now", {})))
        while not handlers.started.is_set() and not holder.done():  # however busy the machine
            await asyncio.sleep(0.005)
        waiting = [asyncio.ensure_future(call_tool(ctx, params("now", {}))) for _ in range(4)]
        waited = await asyncio.gather(*waiting)
        handlers.release.set()
        return hung, await holder, waited

    try:
        started = time.perf_counter()
        hung, held, waited = asyncio.run(main())
        elapsed = time.perf_counter() - started
    finally:
        handlers.release.set()
    assert hung.is_error and hung.content[0].text == "Tool 'now' did not finish within 0.3 seconds."
    assert held.is_error and "did not finish" not in held.content[0].text  # it ran, then raised
    assert [r.content[0].text for r in waited] == [
        "Tool 'now' could not start within 0.3 seconds: all 1 threads for sync handlers are busy."
        " Try again later."
    ] * 4
    assert all(r.is_error for r in waited)
    assert elapsed < 5  # every call answered at its deadline: none hangs


# -- 7. no event stream --------------------------------------------------------------------------


def test_get_is_405_not_an_open_event_stream(tools: Any) -> None:
    from toolnexus_runtime.mcp import asgi_app

    with serving(asgi_app(tools.Toolkit(handlers_for(tools)))) as url:
        with httpx2.Client(timeout=5) as client:
            with client.stream("GET", url, headers={"Accept": "text/event-stream"}) as response:
                assert response.status_code == 405
                assert response.headers["allow"] == "POST"
        # the official client (which tries GET for server-initiated messages) still works
        listed = asyncio.run(session(url, lambda c: c.list_tools()))
        assert len(listed.tools) == 2
        assert json.loads(post(url, "tools/list").text)["result"]["tools"][0]["name"] == (
            "get_weather"
        )


# -- 8. an outputSchema is never a reason to fetch anything --------------------------------------


def test_an_output_schema_never_makes_the_server_fetch_a_url_or_read_a_file(
    tools: Any, tmp_path: Any
) -> None:
    """A snapshot's outputSchema is the upstream's text: with a `$id` and a `$dynamicRef` (which
    the build's $ref check did not look at), jsonschema's default registry GETs the URL it names
    (with no timeout, on the event loop) or reads the file, and its enum leaks into the error."""
    import http.server

    from toolnexus_runtime.mcp import mcp_server

    hits: list[str] = []

    class Internal(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "integer"}')

        def log_message(self, *args: Any) -> None:
            pass

    internal = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Internal)
    threading.Thread(target=internal.serve_forever, daemon=True).start()
    (tmp_path / "secret.json").write_text('{"enum": ["AKIA-TOP-SECRET-KEY"]}')
    bases = {
        "get_weather": f"http://127.0.0.1:{internal.server_address[1]}/internal/",
        "now": tmp_path.as_uri() + "/",
    }
    targets = {"get_weather": "metadata.json", "now": "secret.json"}

    class Snapshot(tools.Toolkit):  # type: ignore[misc, name-defined]
        def _provider_schema(self, *args: Any, **kwargs: Any) -> Any:
            listed = super()._provider_schema(*args, **kwargs)
            for tool in listed:
                tool["outputSchema"] = {
                    "$id": bases[tool["name"]],
                    "type": "object",
                    "properties": {"a": {"$dynamicRef": targets[tool["name"]]}},
                }
            return listed

    class Handlers(tools.ToolHandlers):  # type: ignore[misc, name-defined]
        def get_weather(self, args: Any, ctx: Any) -> Any:
            return {"a": 1}

        def now(self, args: Any, ctx: Any) -> Any:
            return {"a": 1}

    call_tool = call_tool_of(mcp_server(Snapshot(Handlers())))

    async def main() -> list[Any]:
        ctx = type("C", (), {"request_id": 1})()
        return [
            await call_tool(ctx, params("get_weather", {"city": "Oslo"})),
            await call_tool(ctx, params("get_weather", {"city": "Oslo"})),
            await call_tool(ctx, params("now", {})),
        ]

    try:
        results = asyncio.run(main())
    finally:
        internal.shutdown()
    assert hits == []
    for result in results:
        text = result.content[0].text
        assert result.is_error and "does not resolve within it" in text, text
        assert "AKIA" not in text
