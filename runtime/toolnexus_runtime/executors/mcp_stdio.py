"""A local MCP server over stdio, read in time linear in what it sends.

The server's stdout is split into lines as it arrives, each byte looked at once, and a line is
cut while it is read: past MAX_MESSAGE bytes the rest of it is read and dropped, never kept, and
the call it answered gets an error saying so (the SDK's own reader joins its buffer and each new
chunk before splitting, which costs time quadratic in the length of one line: a 50 MB line took
minutes before any limit applied). A line that is not JSON-RPC is logged in one line and
skipped. The process is started and stopped as the SDK's stdio client does it: in a process group
of its own (a job object on Windows), with the SDK's default environment under the server's
`env`, stdin closed first, then the whole group terminated, then killed.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from .mcp_config import ServerSettings

logger = logging.getLogger("toolnexus_runtime")

MAX_MESSAGE = 16 * 1024 * 1024
"""Bytes one message from a local server may take (a result with its images, as JSON)."""
CHUNK = 64 * 1024
GRACE = 2.0  # seconds a server has to exit once its stdin is closed, then again once terminated
# The id of a response, when the line starts as JSON-RPC responses do ({"jsonrpc": "2.0", "id":
# ...} or {"id": ...}): the call an oversized answer was meant for.
RESPONSE_ID = re.compile(
    rb'\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")'
)


# The ids of the requests the calling task handed to the transport (set per call: a list, so a
# task the SDK might start for the send still adds to the caller's).
SENT: ContextVar[list[Any] | None] = ContextVar("toolnexus_mcp_sent", default=None)


class Recording:
    """A transport's write stream, as the client session sees it: each request's id goes to
    SENT (the transport's writer says which ones it wrote: `written`)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    async def send(self, message: Any) -> None:
        sent, ident = SENT.get(), _ident(message)
        if sent is not None and ident is not None:
            sent.append(ident)
        await self.stream.send(message)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    async def __aenter__(self) -> Recording:
        await self.stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stream.__aexit__(*exc)


def _ident(message: Any) -> Any:
    """A SessionMessage's request id (None for a notification or a response)."""
    inner = getattr(message, "message", None)
    inner = getattr(inner, "root", inner)  # an older SDK wraps the message in a RootModel
    return getattr(inner, "id", None) if type(inner).__name__ == "JSONRPCRequest" else None


def never_written(written: set[Any] | None) -> bool:
    """Whether the request this task sent last (SENT: the call, after any listing it needed)
    was never written to the server, by a transport that says what it wrote (`written`, once
    that transport is closed: nothing more is written then)."""
    sent = SENT.get()
    return written is not None and sent is not None and len(sent) > 0 and sent[-1] not in written


class Oversized:
    """A line over the limit: its first bytes (to find the call it answers) and its length."""

    def __init__(self, head: bytes, length: int) -> None:
        self.head = head
        self.length = length


async def lines(stream: Any, limit: int = MAX_MESSAGE) -> AsyncIterator[bytes | Oversized]:
    """The lines of a byte stream, each at most `limit` bytes, else an Oversized in its place."""
    import anyio

    pending = bytearray()
    head: bytes | None = None  # set while a line over the limit is being skipped
    length = 0
    while True:
        try:
            chunk = await stream.receive(CHUNK)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        start = 0
        while start <= len(chunk):
            end = chunk.find(b"\n", start)
            stop = len(chunk) if end < 0 else end
            if head is None and len(pending) + stop - start > limit:
                head = bytes(pending[:256] + chunk[start : start + 256])[:256]
                length = len(pending)
                pending.clear()
            if head is None:
                pending += chunk[start:stop]
            else:
                length += stop - start
            if end < 0:
                break
            if head is not None:
                yield Oversized(head, length)
                head = None
            else:
                yield bytes(pending)
                pending.clear()
            start = end + 1


def _message(line: bytes | Oversized, server: str, limit: int) -> Any:
    """The SessionMessage a line holds, an error answer for an oversized response, or None."""
    import mcp.types as types
    from mcp.shared.message import SessionMessage

    if isinstance(line, Oversized):
        found = RESPONSE_ID.match(line.head)
        logger.warning(
            "MCP server %r sent a message of %d bytes, over the limit of %d: it was dropped as "
            "it was read",
            server,
            line.length,
            limit,
        )
        if found is None:
            return None
        raw = found.group(1).decode("utf-8", "replace")
        answer = {
            "jsonrpc": "2.0",
            "id": int(raw) if raw[0] != '"' else raw[1:-1],
            "error": {
                "code": -32603,
                "message": f"its answer was {line.length} bytes, over the limit of {limit} bytes "
                "a local server's message may take; it was not read",
            },
        }
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(answer))
    if not line.strip():
        return None
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:
        shown = line[:200].decode("utf-8", "replace").encode("unicode_escape").decode("ascii")
        logger.warning("MCP server %r wrote a line that is not JSON-RPC: %s", server, shown)
        return None


async def _spawn(settings: ServerSettings, env: dict[str, str], errlog: TextIO) -> Any:
    import anyio

    command, args = settings.command[0], list(settings.command[1:])
    if sys.platform == "win32":  # pragma: no cover (the SDK's job-object process)
        from mcp.os.win32.utilities import create_windows_process, get_windows_executable_command

        command = get_windows_executable_command(command)
        return await create_windows_process(command, args, env, errlog, settings.cwd)
    return await anyio.open_process(
        [command, *args], env=env, stderr=errlog, cwd=settings.cwd, start_new_session=True
    )


async def _stop(process: Any) -> None:
    """stdin closed, a grace period, then the whole group terminated (and killed)."""
    import anyio

    async def exited(seconds: float) -> bool:
        with anyio.move_on_after(seconds):
            while process.returncode is None:
                await anyio.sleep(0.02)
            return True
        return False

    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await exited(GRACE):
        if sys.platform == "win32":  # pragma: no cover
            from mcp.os.win32.utilities import terminate_windows_process_tree

            await terminate_windows_process_tree(process)
        else:
            from mcp.os.posix.utilities import terminate_posix_process_tree

            await terminate_posix_process_tree(process, GRACE)
        await exited(GRACE)
    if sys.platform == "win32":  # pragma: no cover
        from mcp.os.win32.utilities import close_process_job

        close_process_job(process)
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()


@asynccontextmanager
async def stdio_transport(
    settings: ServerSettings,
    errlog: TextIO,
    limit: int = MAX_MESSAGE,
    written: set[Any] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) of SessionMessages to a local server, as the SDK's
    stdio_client gives them. The id of each request written whole to the server's stdin goes to
    `written` (one that is not was never seen by the server: it had exited, or the session was
    closed first)."""
    import anyio
    from mcp.client.stdio import get_default_environment

    env = get_default_environment() | dict(settings.env or {})
    process = await _spawn(settings, env, errlog)
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)

    async def reader() -> None:
        async with read_writer:
            async for line in lines(process.stdout, limit):
                message = _message(line, settings.name, limit)
                if message is not None:
                    try:
                        await read_writer.send(message)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return

    async def writer() -> None:
        try:
            async with write_reader:
                async for message in write_reader:
                    json = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(json.encode() + b"\n")
                    if written is not None:
                        written.add(_ident(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the server is gone: the session sees the end

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                write_stream.close()
                read_stream.close()
                await _stop(process)
            group.cancel_scope.cancel()
