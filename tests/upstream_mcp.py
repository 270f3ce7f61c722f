"""A third-party MCP server for the tests, written with the official SDK's low-level `Server`.

    python upstream_mcp.py [--tools FILE] [--page N] [--count FILE] [--http PORT --token T]
                           [--sse PORT]
                           [--cursor loop|endless] [--delay SECONDS] [--huge N]
    python upstream_mcp.py --mode hang|garbage|escapes|exit|chatty

Its tools come from FILE (a tools/list JSON list, read at every listing, so the drift tests
can change it while the server runs) or the built-in list, served N per page of tools/list
(with --cursor, pages that never end: the same cursor again, or a new one each time; --delay:
seconds before each page; --huge: results of N characters, `add` in its structuredContent,
`fail` in its error, every other tool in its text). Every session it opens (a stdio process, an HTTP handshake) appends a line to the --count file, and so does every call (`call <name> <args>`), so
tests count sessions and calls server-side (and `cancelled slow` each `slow` call the client
gave up on). Tools:
`add` answers structuredContent (for a sum of 13, one that breaks its outputSchema), `fail` an isError result, `slow` sleeps `seconds`, `crash`
kills the process (a dead session), `whoami` says which bearer token it saw (or its pid, over stdio); any other tool
echoes its arguments. The modes are broken servers: `hang` reads and never answers, `garbage`
answers every request with a result that is not MCP, `escapes` with an error whose text holds
terminal escape sequences, `exit` exits at once.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "name": "search-pages",
        "title": "Search pages",
        "description": "Search the wiki's pages",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for"},
                "limit": {"type": "integer", "minimum": 1, "default": 5},
            },
            "required": ["query"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "add",
        "description": "Add two numbers",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "number"}},
            "required": ["sum"],
        },
    },
    {
        "name": "fail",
        "description": "Always fails",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "slow",
        "description": "Sleeps, then answers",
        "inputSchema": {
            "type": "object",
            "properties": {"seconds": {"type": "number"}},
            "required": ["seconds"],
        },
    },
    {
        "name": "crash",
        "description": "Kills the server",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "whoami",
        "description": "Which bearer token the request carried",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


def count(path: str | None, line: str | None = None) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{line or os.getpid()}\n")


def make_server(
    source: str | None,
    page: int,
    counter: str | None,
    cursor: str | None = None,
    delay: float = 0,
    huge: int = 0,
) -> Any:
    import anyio
    import mcp.types as types
    from mcp.server.lowlevel.server import Server

    async def list_tools(ctx: Any, params: Any) -> Any:
        # read at every listing, so a test can change the server's tools while it runs
        tools = json.loads(Path(source).read_text("utf-8")) if source else TOOLS
        await anyio.sleep(delay)
        given = params.cursor if params is not None else None
        start = int(given) if given and given.isdigit() else 0
        chunk = tools[start : start + page]
        more = start + page < len(tools)
        following = str(start + page) if more else None
        if cursor == "loop":  # the same cursor again and again
            following = "again"
        elif cursor == "endless":  # a new cursor every time, quickly, and no more tools
            following = str(start + page)
        return types.ListToolsResult(
            tools=[types.Tool.model_validate(t) for t in chunk], next_cursor=following
        )

    def text(value: str, **extra: Any) -> Any:
        return types.CallToolResult(content=[types.TextContent(type="text", text=value)], **extra)

    async def call_tool(ctx: Any, params: Any) -> Any:
        args = params.arguments or {}
        count(counter, f"call {params.name} {json.dumps(args, sort_keys=True)}")
        if huge:  # a hostile server: results far larger than any model should read
            if params.name == "add":
                padding = "x" * huge
                return text("short", structured_content={"sum": 0, "padding": padding})
            return text("y" * huge, is_error=params.name == "fail")
        if params.name == "add":
            total = args["a"] + args["b"]
            if total == 13:  # a result that breaks the tool's own outputSchema
                return text("thirteen", structured_content={"sum": "thirteen"})
            return text(json.dumps({"sum": total}), structured_content={"sum": total})
        if params.name == "fail":
            return text("upstream refused: no such page", is_error=True)
        if params.name == "slow":
            try:
                await anyio.sleep(args["seconds"])
            except anyio.get_cancelled_exc_class():  # notifications/cancelled from the client
                count(counter, "cancelled slow")
                raise
            return text("done")
        if params.name == "crash":
            os._exit(3)
        if params.name == "whoami":
            request = getattr(ctx, "request", None)
            auth = request.headers.get("authorization", "") if request is not None else ""
            return text(auth.removeprefix("Bearer ") or f"stdio, pid {os.getpid()}")
        return text(f"{params.name}: {json.dumps(args, sort_keys=True)}")

    return Server("upstream", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


def serve_stdio(server: Any) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def serve_http(server: Any, port: int, token: str, counter: str | None) -> None:
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    manager = StreamableHTTPSessionManager(app=server, json_response=True)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            message = await receive()
            async with manager.run():
                await send({"type": "lifespan.startup.complete"})
                await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        headers = dict(scope["headers"])
        if headers.get(b"authorization") != f"Bearer {token}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        body = b""
        while True:  # read the request to count handshakes, then hand it on unchanged
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            method = json.loads(body).get("method") if body else None
        except ValueError:
            method = None
        if method in ("initialize", "server/discover"):
            count(counter)
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await manager.handle_request(scope, replay, send)

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def serve_sse(server: Any, port: int) -> None:
    """The older HTTP+SSE transport: GET /sse opens the event stream, POST /messages/ sends."""
    import uvicorn
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    sse = SseServerTransport("/messages/")

    async def handle_sse(request: Any) -> Any:
        async with sse.connect_sse(request.scope, request.receive, request._send) as streams:
            await server.run(streams[0], streams[1], server.create_initialization_options())
        return Response()

    app = Starlette(
        routes=[
            Route("/sse", endpoint=handle_sse, methods=["GET"]),
            Mount("/messages/", app=sse.handle_post_message),
        ]
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


ESCAPES = "\x1b]0;PWNED\x07\x1b[2J\x1b[31mall good\x1b[0m\nspecs/x.json: fine"


def broken(mode: str) -> None:
    if mode == "exit":
        print("upstream: cannot start, missing configuration", file=sys.stderr)
        sys.exit(1)
    if mode == "chatty":  # 64 MB of log lines, then its reason, then gone
        line = "upstream: debug " + "x" * 1000 + "\n"
        for _ in range(64 * 1024):
            sys.stderr.write(line)
        print("upstream: giving up after the noise", file=sys.stderr)
        sys.exit(1)
    for line in sys.stdin:  # hang: read everything, answer nothing
        if mode in ("garbage", "escapes") and line.strip():
            request = json.loads(line)
            if "id" in request:
                answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
                if mode == "garbage":
                    answer["result"] = {"tools": 42}
                else:  # an error whose text would drive the terminal
                    answer["error"] = {"code": -32603, "message": f"down {ESCAPES}"}
                sys.stdout.write(json.dumps(answer) + "\n")
                sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools")
    parser.add_argument("--page", type=int, default=2)
    parser.add_argument("--count")
    parser.add_argument("--http", type=int)
    parser.add_argument("--sse", type=int)
    parser.add_argument("--token", default="")
    parser.add_argument("--mode")
    parser.add_argument("--cursor", choices=["loop", "endless"])
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--huge", type=int, default=0)
    options = parser.parse_args()
    if options.mode:
        broken(options.mode)
        return
    server = make_server(
        options.tools, options.page, options.count, options.cursor, options.delay, options.huge
    )
    if options.http:
        serve_http(server, options.http, options.token, options.count)
    elif options.sse:
        serve_sse(server, options.sse)
    else:
        count(options.count)
        serve_stdio(server)


if __name__ == "__main__":
    main()
