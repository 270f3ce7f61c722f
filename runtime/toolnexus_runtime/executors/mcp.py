"""The MCP proxy: tools snapshotted from MCP servers (`toolnexus-gen sync`) called on their server.

`Toolkit(handlers, mcp_config="mcp.json")` (a path or the same data as a dict) says how to reach
each server, in the format clients use (`mcpServers`, also `servers` or `mcp`; `command`/`args`/
`env`/`cwd` for a local server over stdio, `url`/`headers` for streamable HTTP; `enabled`,
`timeout`). `${VAR}` and `${VAR:-default}` are expanded from the environment when the Toolkit is
made, for the servers its tools use; a missing variable is an error naming it, and values are
never logged nor written anywhere.

A call reaches the server under the tool's original name, with the arguments its typed model
validated (so the model's mistakes never cost a round trip). Each server has one session per
event loop, opened on first use (concurrent first calls share it) by a task that owns it, and
reused; its set-up (start or connect, version negotiation, initialize) shares the server's
timeout, tools/list (every page together) gets the same again, and so does each call; a
tools/list whose cursor repeats, or past MAX_PAGES pages or MAX_TOOLS tools, leaves the server
unavailable with that reason. No worker thread runs a session or a call: both are tasks on
the event loop that opened the session (the runtime's own loop for `execute_sync` and the sync
tool loops), so a call given up at its deadline (the call's timeout, or the server's) is a
cancelled task: the SDK sends the server `notifications/cancelled`, the session stays open, and
no thread, task or process is left behind however many calls time out. A session found dead
before a call is sent on it is reopened once; a connection that ends while a call is out is an
error result (the tool may or may not have run, so it is never sent twice) and the next call
reopens the session. The result keeps what the server said: `isError` gives an error result with its text,
`structuredContent` the result's `data` (its text parts the output), text parts the output.
`Toolkit(output_limit=30_000)` caps what a result gives the model: text over it is cut with a
note of what was cut, structuredContent whose JSON is longer is refused (an error result). The
SDK reads each message whole before that (a stdio line, an HTTP JSON body; it caps an SSE event
at 1 MiB), so one oversized message is held until it is cut, never kept.
`Toolkit.aclose()` (or `async with`) closes the sessions. Needs the official MCP SDK:
`pip install 'toolnexus-runtime[mcp]'`, imported when the first session opens.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import math
import os
import re
import sys
import threading
import unicodedata
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import BaseModel

from ..datatypes import SourceError, ToolContext, ToolError, ToolResult
from .base import BoundTool, SourceOptions, secret_forms

if TYPE_CHECKING:
    from ..datatypes import ToolSpec
    from .base import ToolkitView as ToolkitCore

logger = logging.getLogger("toolnexus_runtime")

SERVER_TABLES = ("mcpServers", "servers", "mcp")
SERVER_KEYS = frozenset(
    {"type", "command", "args", "env", "cwd", "url", "headers"}
    | {"enabled", "disabled", "timeout", "tools", "prefix"}
)
DEFAULT_TIMEOUT = 30.0
DEFAULT_LIMIT = 30_000  # characters of a result, as Toolkit(output_limit=) says
MAX_PAGES = 1000  # of tools/list, and tools in all: more is a server gone wrong
MAX_TOOLS = 10_000
VARIABLE = re.compile(r"\$\{([^}]*)\}")
REFERENCE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
MIN_SECRET = 4
NO_CONTROL = ("command", "args", "cwd", "url", "headers")  # env values may be multi-line
CONNECTION_CLOSED = -32000  # MCP error codes the SDK raises
REQUEST_TIMEOUT = -32001


@dataclass(frozen=True)
class ServerSettings:
    """How to reach one server, `${VAR}` expanded."""

    name: str
    command: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout: float = DEFAULT_TIMEOUT
    secrets: tuple[str, ...] = ()

    def hide(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, "***")
        return text


# -- configuration ------------------------------------------------------------------------------


def read_config(config: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(where it came from, the servers by name, as written)."""
    if isinstance(config, Mapping):
        where, data, base = "mcp_config", config, Path.cwd()
    else:
        path = Path(config)
        where, base = str(path), path.resolve().parent
        try:
            data = json.loads(path.read_text("utf-8-sig"))
        except OSError as exc:
            raise ValueError(f"mcp_config: cannot read {path}: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: an MCP configuration is an object with mcpServers")
    table = next((data[key] for key in SERVER_TABLES if key in data), None)
    if not isinstance(table, Mapping):
        raise ValueError(f"{where}: no mcpServers object (nor servers, nor mcp)")
    servers = {}
    for name, entry in table.items():
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where}: server {name!r} must be an object")
        unknown = [k for k in entry if k not in SERVER_KEYS and not k.startswith("x-")]
        if unknown:
            raise ValueError(
                f"{where}: server {name!r}: unknown key {unknown[0]!r} "
                f"(known: {', '.join(sorted(SERVER_KEYS))})"
            )
        if ("command" in entry) == ("url" in entry):
            raise ValueError(f"{where}: server {name!r} needs either a command or a url")
        servers[name] = {**entry, "_base": base}
    return where, servers


def settings_for(where: str, name: str, entry: Mapping[str, Any]) -> ServerSettings:
    """One server's settings, checked and `${VAR}` expanded (values never in a message). A
    disabled server needs none of its variables: its tools answer that it is disabled."""
    if entry.get("enabled", True) is False or entry.get("disabled") is True:
        return ServerSettings(name=name, enabled=False)
    secrets: list[str] = []

    def text(value: Any, key: str) -> str:
        if not isinstance(value, str):
            raise ValueError(f"{where}: server {name!r}: {key} must be a string, not {value!r}")

        def substitute(match: re.Match[str]) -> str:
            reference = REFERENCE.fullmatch(match.group(1))
            if reference is None:
                raise ValueError(
                    f"{where}: server {name!r}: {match.group(0)!r} in {key} is not an "
                    "environment variable reference (use ${NAME} or ${NAME:-default})"
                )
            variable, default = reference.groups()
            found = os.environ.get(variable)
            if found is None:
                if default is None:
                    raise ValueError(
                        f"{where}: server {name!r}: environment variable {variable} (in {key}) "
                        "is not set"
                    )
                found = default
            else:
                secrets.extend(secret_forms(found, MIN_SECRET))
            if key in NO_CONTROL and _has_control(found):
                raise ValueError(
                    f"{where}: server {name!r}: environment variable {variable} (in {key}) holds "
                    "a control character (a trailing newline?); its value is not printed"
                )
            return found

        expanded = VARIABLE.sub(substitute, value)
        if key in NO_CONTROL and _has_control(expanded):
            raise ValueError(f"{where}: server {name!r}: {key} holds a control character")
        return expanded

    def strings(value: Any, key: str) -> dict[str, str]:
        if not isinstance(value, Mapping):
            raise ValueError(f"{where}: server {name!r}: {key} must be an object of strings")
        return {k: text(v, key) for k, v in value.items()}

    command = entry.get("command")
    argv = list(command) if isinstance(command, list) else [] if command is None else [command]
    argv += entry.get("args", [])
    argv = [text(part, "command" if i == 0 else "args") for i, part in enumerate(argv)]
    if command is not None and not argv:
        raise ValueError(f"{where}: server {name!r}: command is empty")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"{where}: server {name!r}: timeout must be a number of seconds above 0")
    env = strings(entry["env"], "env") if "env" in entry else None
    headers = strings(entry.get("headers", {}), "headers")
    cwd = text(entry["cwd"], "cwd") if "cwd" in entry else None
    secrets += [
        form
        for v in (*headers.values(), *(env or {}).values())
        for form in secret_forms(v, MIN_SECRET)
    ]
    return ServerSettings(
        name=name,
        command=tuple(argv),
        env=env,
        cwd=str(entry["_base"] / cwd) if cwd is not None else None,
        url=text(entry["url"], "url") if "url" in entry else None,
        headers=headers,
        timeout=float(timeout),
        secrets=tuple(dict.fromkeys(secrets)),
    )


def _has_control(value: str) -> bool:
    return any(unicodedata.category(char) == "Cc" for char in value)


# -- arguments and results ------------------------------------------------------------------


def _numbers(value: Any) -> Any:
    """Arguments as JSON numbers the model sent: a `number` property's model field is a float,
    so 2 became 2.0; JSON means the same by both, and servers are sent 2."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_numbers(item) for item in value]
    return value


def _part_text(part: Any) -> str:
    kind = getattr(part, "type", None)
    if kind == "text":
        return str(part.text)
    if kind == "resource":
        inner = part.resource
        text = getattr(inner, "text", None)
        return str(text) if text is not None else f"[resource {inner.uri}]"
    if kind == "resource_link":
        return f"[resource link {part.uri}]"
    return f"[{kind} {getattr(part, 'mime_type', '')}]".replace(" ]", "]")


def to_result(result: Any, limit: int = DEFAULT_LIMIT) -> str | ToolResult:
    """What a handler would return for a CallToolResult (raises ToolError for isError). Its text
    is cut to `limit` characters with a note saying so; structuredContent whose JSON is longer
    than `limit` is refused (an error result: a cut object would mean something else), and its
    size is measured piece by piece, never made into one long string."""
    text = _cut("\n".join(_part_text(part) for part in result.content), limit)
    if result.is_error:
        raise ToolError(text or "The tool failed without a message.")
    data = result.structured_content
    if data is None:
        return text
    size = 0
    for piece in json.JSONEncoder(ensure_ascii=False).iterencode(data):
        size += len(piece)
        if size > limit:
            raise ToolError(
                f"The tool's structured result is over {limit} characters (the toolkit's "
                "output_limit), so it was not used: ask for less (a narrower query, a smaller "
                "page), or raise Toolkit(output_limit=...)."
            )
    return ToolResult(text or json.dumps(data, ensure_ascii=False), False, data)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[output cut: {limit} of {len(text)} characters shown]"


# -- sessions ---------------------------------------------------------------------------------


class _Unavailable(Exception):
    """The session could not be opened (the reason, secrets hidden)."""


class _Session:
    """One open (or opening) session, owned by a task on the loop that opened it."""

    def __init__(self, upstream: _Upstream, loop: asyncio.AbstractEventLoop) -> None:
        self.upstream = upstream
        self.loop = loop
        self.client: Any = None
        self.error: str | None = None
        self.dead = False  # its connection ended (set before the client can see it end)
        self.ready = asyncio.Event()
        self.closing = asyncio.Event()
        self.task = loop.create_task(self._own(), name=f"toolnexus mcp {upstream.settings.name}")

    async def opened(self) -> Any:
        await self.ready.wait()
        if self.client is None:
            raise _Unavailable(self.error or "the session closed")
        return self.client

    async def _own(self) -> None:
        import anyio
        from mcp import Client
        from mcp.types import Implementation

        from .._version import __version__

        settings = self.upstream.settings
        refused: list[int] = []
        phase = "set-up"
        try:
            # One scope for the whole set-up (however many handshakes the version negotiation
            # tries), then one more deadline for tools/list, every page together: a server that
            # pages without end costs about twice its timeout, never a timeout per page.
            with anyio.CancelScope(deadline=anyio.current_time() + settings.timeout) as scope:
                client = Client(
                    _watched(_transport(settings, refused), self),
                    cache=None,
                    client_info=Implementation(name="toolnexus-runtime", version=__version__),
                )
                async with client:
                    # Every page: the client then knows each tool's outputSchema (it would list
                    # again before the first call of each tool otherwise).
                    phase = "tools/list"
                    scope.deadline = anyio.current_time() + settings.timeout
                    self.upstream.check_listing(await _list_all(client))
                    scope.deadline = math.inf
                    self.client = client
                    self.ready.set()
                    await self.closing.wait()
            if scope.cancelled_caught and self.client is None:
                self.error = (
                    f"tools/list did not finish within {settings.timeout:g} s"
                    if phase == "tools/list"
                    else f"no answer within {settings.timeout:g} s"
                )
        except Exception as exc:  # noqa: BLE001 (the reason goes to every waiting call)
            self.error = settings.hide(_explain(exc, settings, refused))
        finally:
            self.client = None
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
            await asyncio.wait({self.task}, timeout=30)
            return
        try:  # a session of another loop: ask its loop to close it
            self.loop.call_soon_threadsafe(self.closing.set)
        except RuntimeError:  # that loop closed meanwhile
            pass


async def _list_all(client: Any) -> set[str]:
    """The names of every tool on every page of tools/list; a cursor sent twice, too many pages
    or too many tools is a server gone wrong (its session does not open)."""
    listed: set[str] = set()
    seen: set[str] = set()
    cursor = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        listed.update(tool.name for tool in page.tools)
        if len(listed) > MAX_TOOLS:
            raise _Unavailable(f"tools/list sent more than {MAX_TOOLS} tools")
        cursor = page.next_cursor
        if cursor is None:
            return listed
        if cursor in seen:
            raise _Unavailable(f"tools/list sent cursor {cursor[:80]!r} twice")
        seen.add(cursor)
    raise _Unavailable(f"tools/list did not end after {MAX_PAGES} pages")


class _Upstream:
    """One server: its settings, the tools bound to it, and its sessions (one per loop)."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.tools: set[str] = set()
        self._lock = threading.Lock()
        self._sessions: dict[asyncio.AbstractEventLoop, _Session] = {}

    def check_listing(self, listed: set[str]) -> None:
        gone = sorted(self.tools - listed)
        if gone:
            logger.warning(
                "MCP server %r does not list %s any more: the snapshot is older than the "
                "server (run `toolnexus-gen sync --check`)",
                self.settings.name,
                ", ".join(map(repr, gone)),
            )

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
            if found is None or found.task.done() or found.dead:
                found = self._sessions[loop] = _Session(self, loop)
            return found

    def forget(self, session: _Session) -> None:
        with self._lock:
            if self._sessions.get(session.loop) is session:
                del self._sessions[session.loop]

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call `tool` on the server. A session whose connection is known to have ended before
        the call was sent (the server exited between calls; over HTTP, a server that answers
        that it forgot the session, which means it did not take the call) is reopened once and
        the call sent on the new one. A connection that ends while the call is out is not: the
        tool may or may not have run (a payment, a message sent), so it is not sent twice; the
        next call opens a new session. Tool annotations (readOnlyHint, idempotentHint) come
        from the server and do not change this."""
        settings = self.settings
        if not settings.enabled:
            raise SourceError(f"MCP server {settings.name!r} is disabled (enabled: false)")
        from mcp.shared.exceptions import MCPError

        for attempt in (1, 2):
            session = self.session()
            try:
                client = await session.opened()
            except _Unavailable as exc:
                self.forget(session)
                raise SourceError(f"MCP server {settings.name!r} is unavailable: {exc}") from None
            if session.dead:  # it ended before anything was sent on it
                self.forget(session)
                await session.close()
                if attempt == 2:
                    break
                continue
            try:
                return await client.call_tool(
                    tool, arguments, read_timeout_seconds=settings.timeout
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
                if not forgotten:
                    raise SourceError(
                        f"MCP server {settings.name!r} closed the connection while tool "
                        f"{tool!r} was running: it may or may not have run, so it is not sent "
                        "again (the next call opens a new session)"
                    ) from None
                if attempt == 1:
                    logger.warning("MCP server %r forgot its session; reopening it", settings.name)
            except Exception as exc:  # noqa: BLE001 (said without its secrets, not re-raised)
                # e.g. structuredContent that breaks the tool's outputSchema, or an HTTP error
                said = settings.hide(f"{type(exc).__name__}: {exc}")
                raise SourceError(
                    f"MCP server {settings.name!r} failed tool {tool!r}: {said}"
                ) from None
        raise SourceError(
            f"MCP server {settings.name!r} closed the connection again after it was reopened"
        )

    async def aclose(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            await session.close()


@asynccontextmanager
async def _transport(settings: ServerSettings, refused: list[int]) -> AsyncIterator[Any]:
    if settings.url is None:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        parameters = StdioServerParameters(
            command=settings.command[0],
            args=list(settings.command[1:]),
            env=dict(settings.env) if settings.env is not None else None,
            cwd=settings.cwd,
        )
        async with stdio_client(parameters, errlog=_errlog()) as streams:
            yield streams
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async def record(response: httpx2.Response) -> None:
            if response.status_code >= 400:
                refused.append(response.status_code)

        timeout = httpx2.Timeout(settings.timeout, read=max(settings.timeout, 300.0))
        async with (
            httpx2.AsyncClient(
                headers=dict(settings.headers), timeout=timeout, event_hooks={"response": [record]}
            ) as http,
            streamable_http_client(settings.url, http_client=http) as streams,
        ):
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


# -- the executor -----------------------------------------------------------------------------


class McpExecutor:
    """Tools bound to MCP servers, for one Toolkit."""

    def __init__(self, options: SourceOptions) -> None:
        self.config = options.mcp_config
        limit = options.output_limit
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"output_limit must be a positive integer, not {limit!r}")
        self.limit = limit
        self._where = ""
        self._entries: dict[str, Any] | None = None
        self._upstreams: dict[str, _Upstream] = {}

    def _upstream(self, server: str, tool: str) -> _Upstream:
        found = self._upstreams.get(server)
        if found is not None:
            return found
        if self.config is None:
            raise ValueError(
                f"tool {tool!r} comes from the MCP server {server!r}: pass "
                "Toolkit(handlers, mcp_config=...) with the mcp.json that `toolnexus-gen sync` "
                "read (a path, or the same data as a dict)"
            )
        if importlib.util.find_spec("mcp") is None:
            raise ImportError(
                "tools from MCP servers need the official MCP SDK: "
                "pip install 'toolnexus-runtime[mcp]'"
            )
        if self._entries is None:
            self._where, self._entries = read_config(self.config)
        entry = self._entries.get(server)
        if entry is None:
            raise ValueError(
                f"tool {tool!r} comes from the MCP server {server!r}, which {self._where} does "
                f"not list (it lists: {', '.join(self._entries) or 'none'})"
            )
        found = self._upstreams[server] = _Upstream(settings_for(self._where, server, entry))
        return found

    def bind(self, spec: ToolSpec) -> BoundTool:
        assert spec.binding is not None
        server, tool = spec.binding["mcp"]["server"], spec.binding["mcp"]["tool"]
        upstream = self._upstream(server, spec.name)
        upstream.tools.add(tool)

        async def call(args: BaseModel, ctx: ToolContext) -> Any:
            arguments = args.model_dump(mode="json", by_alias=True, exclude_unset=True)
            return to_result(await upstream.call(tool, _numbers(arguments)), self.limit)

        return call

    async def aclose(self) -> None:
        for upstream in self._upstreams.values():
            await upstream.aclose()


def executor(toolkit: ToolkitCore[Any], options: SourceOptions) -> McpExecutor:
    return McpExecutor(options)
