"""A call the runtime never wrote to a local MCP server (it had exited before the call was
written) is sent again on a new session; one that was written is not (it may have run). The
bookkeeping behind it: the id of each request the calling task sends, and the ids the stdio
transport wrote whole (the race itself: test_mcp_proxy's dead-session test, under load)."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCNotification, JSONRPCRequest
from toolnexus_runtime.executors import mcp_stdio


def test_only_requests_have_an_id_to_track() -> None:
    request = SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=7, method="tools/call"))
    note = SessionMessage(JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized"))
    assert mcp_stdio._ident(request) == 7
    assert mcp_stdio._ident(note) is None


def test_a_call_is_unwritten_only_when_the_transport_says_it_did_not_write_it() -> None:
    async def scenario(written: set[Any] | None) -> list[bool]:
        send, receive = anyio.create_memory_object_stream[Any](1)
        stream = mcp_stdio.Recording(send)
        mcp_stdio.SENT.set([])
        before = mcp_stdio.never_written(written)  # nothing sent yet: nothing to send again
        await stream.send(SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=3, method="x")))
        assert (await receive.receive()).message.id == 3
        after = mcp_stdio.never_written(written)
        if written is not None:
            written.add(3)
        return [before, after, mcp_stdio.never_written(written)]

    assert asyncio.run(scenario(set())) == [False, True, False]
    assert asyncio.run(scenario(None)) == [False, False, False]  # HTTP: never assumed unwritten
