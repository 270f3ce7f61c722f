"""Sessions with MCP servers: one per server and event loop, opened on first use by a task that
owns it, reused, reopened when its connection ended, and a server that cannot be reached marked
down for a while.

Set-up (start or connect, version negotiation, initialize) shares the server's timeout and
tools/list (every page together) gets the same again; a tools/list whose cursor repeats, or past
MAX_PAGES pages or MAX_TOOLS tools, leaves the server unavailable with that reason. A call waits
at most the server's timeout in all, for the session to open and for its answer together; the
opening goes on without it, so the next call may find the session ready. A server whose session
could not be opened is down: calls fail at once, saying why, until its backoff has passed (1 s,
then twice as long after each failure, at most BACKOFF_MAX); then the next call tries again, and
a session that opens ends the backoff. No worker thread runs a session or a call: a call given up
at its deadline is a cancelled task (the SDK sends the server `notifications/cancelled`).

While a call runs, the server's progress for it reaches the call's `ToolContext.report_progress`;
its log messages reach `ToolContext.log` when that call is the only one running on the session
(log messages name no request), else the `toolnexus_runtime.tools` logger.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TextIO

from ..datatypes import SourceError, ToolContext, ToolError
from ..reporting import PYTHON_LEVELS, tools_logger
from .mcp_config import ServerSettings
from .mcp_remote import http_transport
from .mcp_stdio import SENT, Recording, never_written, stdio_transport

logger = logging.getLogger("toolnexus_runtime")

MAX_PAGES = 1000  # of tools/list, and tools in all: more is a server gone wrong
MAX_TOOLS = 10_000
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 60.0
CONNECTION_CLOSED = -32000  # MCP error codes the SDK raises
REQUEST_TIMEOUT = -32001


class _Unavailable(Exception):
    """The session could not be opened (the reason, secrets hidden)."""


class _Session:
    """One open (or opening) session, owned by a task on the loop that opened it."""

    def __init__(self, upstream: Upstream, loop: asyncio.AbstractEventLoop) -> None:
        self.upstream = upstream
        self.loop = loop
        self.client: Any = None
        self.error: str | None = None
        self.dead = False  # its connection ended (set before the client can see it end)
        self.written: set[Any] | None = None  # ids of the requests written (over stdio)
        self.task_only: frozenset[str] = frozenset()  # tools that run only as tasks
        self.calls: list[ToolContext] = []  # the calls running on it
        self.phase = "set-up"  # then "tools/list"
        self.ready = asyncio.Event()
        self.closing = asyncio.Event()
        self.overdue: asyncio.TimerHandle | None = None
        self.task = loop.create_task(self._own(), name=f"toolnexus mcp {upstream.settings.name}")

    @property
    def failed(self) -> bool:
        """It did not open (its task may still be closing the transport)."""
        return self.ready.is_set() and self.client is None

    async def opened(self) -> Any:
        await self.ready.wait()
        if self.client is None:
            raise _Unavailable(self.error or "the session closed")
        return self.client

    async def _log(self, params: Any) -> None:
        level, data, name = params.level, params.data, params.logger
        call = self.calls[0] if len(self.calls) == 1 else None  # then it is about that call
        if call is not None and call.reporter is not None:
            call.log(level, data, logger=name)  # to our client, as the server said it
            return
        # To a Python log: in one line, cut (a newline in it could forge a record)
        data, name = _one_line(data), None if name is None else _one_line(name)
        if call is not None:
            call.log(level, data, logger=name)
            return
        tools_logger.log(
            PYTHON_LEVELS.get(level, logging.INFO),
            "MCP server %r%s: %s",
            self.upstream.settings.name,
            f" [{name}]" if name else "",
            data,
        )

    async def _own(self) -> None:
        import anyio
        from mcp import Client
        from mcp.types import Implementation

        from .._version import __version__

        settings = self.upstream.settings
        refused: list[int] = []
        try:
            # One scope for the whole set-up (however many handshakes the version negotiation
            # tries), then one more deadline for tools/list, every page together: a server that
            # pages without end costs about twice its timeout, never a timeout per page.
            # The session has failed at its deadline (counted once the SDK is imported: a first
            # import can take seconds), whatever closing its transport then takes (a server
            # that ignores its closed stdin gets a grace period before the kill).
            self.overdue = self.loop.call_later(settings.timeout, self._overdue)
            with anyio.CancelScope(deadline=anyio.current_time() + settings.timeout) as scope:
                client = Client(
                    _watched(_transport(settings, refused, self), self),
                    cache=None,
                    client_info=Implementation(name="toolnexus-runtime", version=__version__),
                    logging_callback=self._log,
                    log_level="debug",  # a 2026-07-28 server logs only when asked to
                )
                async with client:
                    # Every page: the client then knows each tool's outputSchema (it would list
                    # again before the first call of each tool otherwise).
                    self.phase = "tools/list"
                    scope.deadline = anyio.current_time() + settings.timeout
                    self.overdue.cancel()
                    self.overdue = self.loop.call_later(settings.timeout, self._overdue)
                    try:
                        listed, self.task_only = await _list_all(client)
                    except _Unavailable as exc:
                        self._failed(str(exc))  # now, not once the transport has closed
                        raise
                    except anyio.get_cancelled_exc_class():
                        if scope.cancel_called:
                            self._failed(f"tools/list did not finish within {settings.timeout:g} s")
                        raise
                    self.upstream.check_listing(listed)
                    scope.deadline = math.inf
                    self.overdue.cancel()
                    self.client = client
                    self.upstream.up()
                    self.ready.set()
                    await self.closing.wait()
            if scope.cancelled_caught and self.client is None:
                self._failed(
                    f"tools/list did not finish within {settings.timeout:g} s"
                    if self.phase == "tools/list"
                    else f"no answer within {settings.timeout:g} s"
                )
        except Exception as exc:  # noqa: BLE001 (the reason goes to every waiting call)
            self._failed(settings.hide(_explain(exc, settings, refused)))
        finally:
            if self.overdue is not None:
                self.overdue.cancel()
            self.client = None
            self.ready.set()

    def _overdue(self) -> None:
        timeout = self.upstream.settings.timeout
        if self.phase == "tools/list":
            self._failed(f"tools/list did not finish within {timeout:g} s")
        else:
            self._failed(f"no answer within {timeout:g} s")

    def _failed(self, reason: str) -> None:
        """The session did not open: every waiting call is told why, and the server is down."""
        if self.ready.is_set():
            return
        self.error = reason
        self.client = None
        self.upstream.down(reason)
        self.ready.set()

    async def close(self) -> None:
        if self.loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover (aclose always runs on a loop)
            running = None
        if running is self.loop:
            self.closing.set()
            if not self.ready.is_set():  # still opening: nothing waits on closing yet
                self.task.cancel()
            await asyncio.wait({self.task}, timeout=30)
            return
        try:  # a session of another loop: ask its loop to close it
            self.loop.call_soon_threadsafe(self.closing.set)
            if not self.ready.is_set():
                self.loop.call_soon_threadsafe(self.task.cancel)
        except RuntimeError:  # that loop closed meanwhile
            pass


LOG_TEXT = 2000  # characters of a server's log message written to a Python log


def _one_line(value: Any) -> str:
    """A server's log message or logger name for a Python log: its control characters escaped
    (a newline or a terminal escape sequence), cut at LOG_TEXT characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    cut = f"... [{len(text)} characters]" if len(text) > LOG_TEXT else ""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:LOG_TEXT])
    return shown + cut


async def _list_all(client: Any) -> tuple[set[str], frozenset[str]]:
    """The names of every tool on every page of tools/list, and of those that run only as
    tasks; a cursor sent twice, too many pages or too many tools is a server gone wrong (its
    session does not open)."""
    listed: set[str] = set()
    task_only: set[str] = set()
    seen: set[str] = set()
    cursor = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            listed.add(tool.name)
            if getattr(getattr(tool, "execution", None), "task_support", None) == "required":
                task_only.add(tool.name)
        if len(listed) > MAX_TOOLS:
            raise _Unavailable(f"tools/list sent more than {MAX_TOOLS} tools")
        cursor = page.next_cursor
        if cursor is None:
            return listed, frozenset(task_only)
        if cursor in seen:
            raise _Unavailable(f"tools/list sent cursor {cursor[:80]!r} twice")
        seen.add(cursor)
    raise _Unavailable(f"tools/list did not end after {MAX_PAGES} pages")


class Upstream:
    """One server: its settings, the tools bound to it, its sessions (one per loop) and whether
    it is down."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.tools: set[str] = set()
        self._lock = threading.Lock()
        self._sessions: dict[asyncio.AbstractEventLoop, _Session] = {}
        self._failures = 0
        self._retry_at = 0.0  # time.monotonic() before which the server is down
        self._reason = ""

    def check_listing(self, listed: set[str]) -> None:
        gone = sorted(self.tools - listed)
        if gone:
            logger.warning(
                "MCP server %r does not list %s any more: the snapshot is older than the "
                "server (run `toolnexus-gen sync --check`)",
                self.settings.name,
                ", ".join(map(repr, gone)),
            )

    def down(self, reason: str) -> None:
        """A session did not open: calls fail at once until the backoff has passed."""
        with self._lock:
            self._failures += 1
            wait = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (self._failures - 1))
            self._retry_at = time.monotonic() + wait
            self._reason = reason
        logger.warning(
            "MCP server %r is down (%s); the next try in %g s", self.settings.name, reason, wait
        )

    def up(self) -> None:
        with self._lock:
            self._failures, self._retry_at = 0, 0.0

    def session(self) -> _Session:
        """This loop's session, opened (or reopened, when its connection ended) here."""
        loop = asyncio.get_running_loop()
        with self._lock:  # no await in here: concurrent first calls get one session
            for other in [lp for lp in self._sessions if lp.is_closed()]:
                del self._sessions[other]  # its loop ended, and the session with it
            found = self._sessions.get(loop)
            if found is not None and found.dead and not found.task.done():
                logger.warning("MCP server %r closed its session; reopening it", self.settings.name)
                found.closing.set()
            if found is None or found.task.done() or found.dead or found.failed:
                wait = self._retry_at - time.monotonic()
                if wait > 0:
                    raise SourceError(
                        f"MCP server {self.settings.name!r} is unavailable: {self._reason} "
                        f"(it is down; the next try in {math.ceil(wait):g} s)"
                    )
                found = self._sessions[loop] = _Session(self, loop)
            return found

    def forget(self, session: _Session) -> None:
        with self._lock:
            if self._sessions.get(session.loop) is session:
                del self._sessions[session.loop]

    async def call(self, tool: str, arguments: dict[str, Any], ctx: ToolContext) -> Any:
        """Call `tool` on the server, within the server's timeout in all. A session whose
        connection is known to have ended before the call was sent (the server exited between
        calls; over HTTP, a server that answers that it forgot the session, which means it did
        not take the call) is reopened once and the call sent on the new one. A connection that
        ends while the call is out is not: the tool may or may not have run (a payment, a
        message sent), so it is not sent twice; the next call opens a new session. Tool
        annotations (readOnlyHint, idempotentHint) come from the server and do not change
        this."""
        settings = self.settings
        if not settings.enabled:
            raise SourceError(f"MCP server {settings.name!r} is disabled (enabled: false)")
        deadline = time.monotonic() + settings.timeout
        for attempt in (1, 2):
            session = self.session()
            try:
                client = await asyncio.wait_for(
                    session.opened(), max(deadline - time.monotonic(), 0.001)
                )
            except _Unavailable as exc:
                self.forget(session)
                raise SourceError(f"MCP server {settings.name!r} is unavailable: {exc}") from None
            except asyncio.TimeoutError:
                raise SourceError(
                    f"MCP server {settings.name!r} did not answer within {settings.timeout:g} s "
                    f"(its {session.phase} had not finished)"
                ) from None
            if tool in session.task_only:
                raise ToolError(
                    f"Tool {tool!r} of MCP server {settings.name!r} runs only as an MCP task "
                    "(execution.taskSupport: required), which this runtime does not run: it "
                    "cannot be called here (`toolnexus-gen sync` leaves such tools out)."
                )
            if session.dead:  # it ended before anything was sent on it
                self.forget(session)
                await session.close()
                if attempt == 2:
                    break
                continue
            sent = await self._send(session, client, tool, arguments, ctx, deadline)
            if sent is not None:
                return sent
            if attempt == 1:
                logger.warning("MCP server %r did not take the call; a new session", settings.name)
        raise SourceError(
            f"MCP server {settings.name!r} closed the connection again after it was reopened"
        )

    async def _send(
        self,
        session: _Session,
        client: Any,
        tool: str,
        arguments: dict[str, Any],
        ctx: ToolContext,
        deadline: float,
    ) -> Any:
        """The call's result; None when the server did not take the call: it forgot the
        session, or exited before the call was written to it (send it again)."""
        import anyio
        from mcp.shared.exceptions import MCPError

        settings = self.settings
        progress = None
        if ctx.reporter is not None:

            async def progress(done: float, total: float | None, message: str | None) -> None:
                if math.isfinite(done) and (total is None or math.isfinite(total)):
                    ctx.report_progress(done, total, message)  # (NaN is valid JSON to the SDK)

        session.calls.append(ctx)
        SENT.set([])
        try:
            return await client.call_tool(
                tool,
                arguments,
                read_timeout_seconds=max(deadline - time.monotonic(), 0.001),
                progress_callback=progress,
            )
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise SourceError(
                    f"MCP server {settings.name!r} did not answer tool {tool!r} within "
                    f"{settings.timeout:g} s"
                ) from None
            forgotten = "session terminated" in exc.message.lower()  # HTTP 404: not taken
            if exc.code != CONNECTION_CLOSED and not forgotten:
                raise SourceError(
                    settings.hide(f"MCP server {settings.name!r}: {exc.message}")
                ) from None
            self.forget(session)
            await session.close()
            if not forgotten and not never_written(session.written):  # (exited before it)
                raise SourceError(
                    f"MCP server {settings.name!r} closed the connection while tool "
                    f"{tool!r} was running: it may or may not have run, so it is not sent "
                    "again (the next call opens a new session)"
                ) from None
            return None
        except Exception as exc:  # noqa: BLE001 (said without its secrets, not re-raised)
            if isinstance(exc, (anyio.BrokenResourceError, anyio.ClosedResourceError)):
                self.forget(session)  # the transport was gone before the call was sent
                await session.close()
                if never_written(session.written):
                    return None
            # e.g. structuredContent that breaks the tool's outputSchema, or an HTTP error
            said = settings.hide(f"{type(exc).__name__}: {exc}")
            raise SourceError(
                f"MCP server {settings.name!r} failed tool {tool!r}: {said}"
            ) from None
        finally:
            session.calls[:] = [other for other in session.calls if other is not ctx]

    async def aclose(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            await session.close()


@asynccontextmanager
async def _transport(
    settings: ServerSettings, refused: list[int], session: _Session
) -> AsyncIterator[Any]:
    if settings.url is None:
        session.written = set()
        async with stdio_transport(settings, _errlog(), written=session.written) as streams:
            yield streams[0], Recording(streams[1])
    else:
        async with http_transport(settings, refused) as streams:
            yield streams


@asynccontextmanager
async def _watched(transport: Any, session: _Session) -> AsyncIterator[Any]:
    """The transport's streams, the read side relayed so that `session.dead` is set as soon as
    the connection ends (the server exited, the stream closed), before the client sees it end:
    a call that finds it set knows nothing was sent on that session."""
    import anyio

    async with transport as (read, write):
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def relay() -> None:
            try:
                async for item in read:
                    await send.send(item)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
            finally:
                session.dead = True
                send.close()

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            try:
                yield receive, write
            finally:
                group.cancel_scope.cancel()


def _errlog() -> TextIO:
    """Where a local server's stderr goes: this process's stderr, when it is a real file (a
    notebook's or a test runner's stand-in has no file descriptor to hand a child process)."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    return open(os.devnull, "w")  # noqa: SIM115 (kept for the life of the session's child)


def _leaves(exc: BaseException) -> list[BaseException]:
    inner = getattr(exc, "exceptions", None)
    return [leaf for child in inner for leaf in _leaves(child)] if inner else [exc]


def _explain(exc: Exception, settings: ServerSettings, refused: list[int]) -> str:
    leaves = _leaves(exc)
    wrong = next((e for e in leaves if isinstance(e, _Unavailable)), None)
    if wrong is not None:  # what the listing found wrong
        return str(wrong)
    if refused:
        import httpx2

        status = refused[-1]
        return f"{settings.url} answered HTTP {status} {httpx2.codes.get_reason_phrase(status)}"
    leaf = next((e for e in leaves if isinstance(e, OSError)), leaves[0])
    if isinstance(leaf, OSError) and settings.url is None:
        return f"could not start {settings.command[0]!r}: {leaf.strerror or leaf}"
    message = getattr(leaf, "message", None) or str(leaf) or type(leaf).__name__
    if settings.url is not None and (isinstance(leaf, OSError) or "Connect" in type(leaf).__name__):
        return f"could not connect to {settings.url}: {message}"
    return str(message)
