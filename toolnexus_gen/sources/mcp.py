"""MCP servers as a tool source: `toolnexus-gen sync` snapshots each server's tools into the spec
folder, one spec per tool, and `sync --check` says what changed upstream since.

The official `mcp` SDK client does the talking (stdio and streamable HTTP), imported only here and
only when a sync runs, so `build` never needs it. Each server's whole set-up (start or connect,
version negotiation, initialize) shares one timeout, and tools/list (every page together) gets
one more: a server that never answers costs about its timeout, one that pages without end
about twice its timeout, never a multiple per page. A server that fails is
one located line; the others are listed all the same.

A snapshot is `specs/<server>/<prefix>_<tool>.json`: the tool as the server sent it (title,
description, inputSchema, outputSchema, annotations, in the server's key order) plus
`source: {mcp: {server, tool}}`, and its `_meta` as `x-mcp-meta` (data the build ignores). A
tool no model may call is left out with a warning (TN417): one that runs only as an MCP task,
or one the server marks for its app's UI only (MCP Apps, `_meta.ui.visibility: ["app"]`). It is rendered by `json.dumps` alone, so an unchanged server gives
the same bytes, and only files whose bytes change are written.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from toolnexus_gen import __version__
from toolnexus_gen.config.options import BuildOptions
from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.fs.paths import discover, display_path
from toolnexus_gen.sources.folder import FolderChanges
from toolnexus_gen.sources.mcp_config import McpConfig, Server, hide, spec_name
from toolnexus_gen.toolspec.codegen_keywords import strip_spec as strip_codegen_keywords
from toolnexus_gen.toolspec.pointer import join_pointer

SDK_HINT = (
    "toolnexus-gen sync talks to MCP servers with the official MCP SDK, which is not installed: "
    "pip install 'toolnexus-gen[mcp]' (or pip install 'mcp>=2')"
)
PARALLEL = 8  # servers listed at once
MAX_PAGES = 1000  # of tools/list: a server whose cursor never ends is a protocol error
MAX_TOOLS = 10_000  # listed by one server: more is a server gone wrong, not a tool set
SNAPSHOT_SUFFIX = ".json"
MAX_NAME = 128  # characters of a spec name (and its file's stem): MCP's own limit for a name
META_KEY = "x-mcp-meta"  # the tool's `_meta` in its snapshot, as the server sent it


class SdkMissing(Exception):
    """The `mcp` package is not installed."""


class _Failed(Exception):
    """A server failed: its diagnostic code and a one-line reason."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


@dataclass
class Listing:
    """What one server answered: its tools as sent, or why not."""

    server: Server
    tools: list[dict[str, Any]] | None = None
    failure: _Failed | None = None
    seconds: float = 0.0
    noise: list[str] = field(default_factory=list)  # stdout lines that were not MCP (skipped)

    @property
    def noise_note(self) -> str | None:
        """One line about what the server wrote on stdout that is not MCP (None: nothing)."""
        if not self.noise:
            return None
        return f"{noise_text(self.noise)}, skipped; a stdio server must log to stderr"


# -- listing: the only part that connects --------------------------------------------------------


def list_servers(
    servers: list[Server], on_listed: Callable[[Listing], None] | None = None
) -> list[Listing]:
    """Every page of tools/list of each server, PARALLEL servers at a time."""
    try:
        import anyio
        import mcp  # noqa: F401 (the SDK is needed below; say so now)
    except ImportError:
        raise SdkMissing(SDK_HINT) from None
    found: dict[str, Listing] = {}

    async def one(server: Server, limiter: anyio.CapacityLimiter) -> None:
        async with limiter:
            listing = await _listing(server)
        found[server.name] = listing
        if on_listed is not None:
            on_listed(listing)

    async def all_servers() -> None:
        limiter = anyio.CapacityLimiter(PARALLEL)
        async with anyio.create_task_group() as group:
            for server in servers:
                group.start_soon(one, server, limiter)

    with _sdk_logging_silenced():
        anyio.run(all_servers)
    return [found[server.name] for server in servers]


@contextmanager
def _sdk_logging_silenced() -> Iterator[None]:
    """The SDK logs each stdout line that is not JSON-RPC with a traceback (logger.exception);
    only the CLI prints, and what a server did wrong is its one line. The lines reach the
    listing as values instead (`Listing.noise`)."""
    sdk = logging.getLogger("mcp")
    kept = sdk.propagate, sdk.handlers[:]
    sdk.propagate = False
    sdk.handlers = [logging.NullHandler()]
    try:
        yield
    finally:
        sdk.propagate, sdk.handlers = kept[0], kept[1]


async def _listing(server: Server) -> Listing:
    start = time.perf_counter()
    listing = Listing(server)
    refused: list[int] = []  # HTTP statuses >= 400 the server answered
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            listing.tools = await _list_tools(
                server, _transport(server, errlog, refused), listing.noise
            )
        except _Failed as failed:
            listing.failure = _Failed(failed.code, hide(failed.reason, server))
        except Exception as exc:  # noqa: BLE001 (one line per server, never a traceback)
            # what the listing found wrong, raised inside the client (an exception group) or not
            wrong = next((e for e in _leaves(exc) if isinstance(e, _Failed)), None)
            code, reason = (wrong.code, wrong.reason) if wrong else _explain(exc, server, refused)
            said = [line.strip() for line in _tail(errlog).splitlines() if line.strip()]
            if said and code == "TN410":
                reason += f" (its last words on stderr: {said[-1][:200]})"
            listing.failure = _Failed(code, hide(reason, server))
    listing.seconds = time.perf_counter() - start
    return listing


def _tail(errlog: TextIO, size: int = 65536) -> str:
    """The last `size` bytes a server wrote to stderr (it may have written gigabytes)."""
    errlog.flush()
    end = os.fstat(errlog.fileno()).st_size
    return os.pread(errlog.fileno(), size, max(0, end - size)).decode("utf-8", "replace")


async def _list_tools(server: Server, transport: Any, noise: list[str]) -> list[dict[str, Any]]:
    import anyio
    from mcp import Client
    from mcp.types import Implementation

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):  # a line that is not JSON-RPC: kept for the reason
            noise.append(_line_of(message))
        await anyio.lowlevel.checkpoint()

    tools: list[dict[str, Any]] | None = None
    phase = "connect and initialize"
    # One scope, its deadline moved once: the set-up (however many handshakes the version
    # negotiation tries) gets `timeout` seconds, and then tools/list, every page together, gets
    # `timeout` seconds more: a server that pages without end costs that, not a page's worth
    # for each of MAX_PAGES pages.
    with anyio.CancelScope(deadline=anyio.current_time() + server.timeout) as scope:
        client = Client(
            transport,
            cache=None,
            message_handler=on_message,
            client_info=Implementation(name="toolnexus-gen", version=__version__),
        )
        async with client:
            found: list[dict[str, Any]] = []
            cursor: str | None = None
            seen: set[str] = set()
            scope.deadline = anyio.current_time() + server.timeout
            for page in range(1, MAX_PAGES + 1):
                phase = f"tools/list, page {page}"
                result = await client.list_tools(cursor=cursor)
                found += [
                    t.model_dump(mode="json", by_alias=True, exclude_unset=True)
                    for t in result.tools
                ]
                if len(found) > MAX_TOOLS:
                    raise _Failed("TN412", f"tools/list sent more than {MAX_TOOLS} tools")
                cursor = result.next_cursor
                if cursor is None:
                    break
                if cursor in seen:
                    raise _Failed("TN412", f"tools/list sent cursor {cursor[:80]!r} twice")
                seen.add(cursor)
            else:
                raise _Failed("TN412", f"tools/list did not end after {MAX_PAGES} pages")
            tools = found
            scope.deadline = anyio.current_time() + server.timeout  # for the goodbye
    if tools is not None:  # listed; a slow goodbye changes nothing
        return tools
    if scope.cancelled_caught:
        if noise:
            raise _Failed(
                "TN412", f"no answer within {server.timeout:g} s, and {noise_text(noise)}"
            )
        if phase.startswith("tools/list"):
            raise _Failed(
                "TN411", f"tools/list did not finish within {server.timeout:g} s ({phase})"
            )
        raise _Failed("TN411", f"no answer within {server.timeout:g} s ({phase})")
    raise _Failed("TN412", "the connection ended without an answer")


@asynccontextmanager
async def _transport(server: Server, errlog: TextIO, refused: list[int]) -> AsyncIterator[Any]:
    """The SDK's transport for the server: stdio (its stderr to `errlog`), streamable HTTP or
    HTTP+SSE (each HTTP status >= 400 recorded in `refused`, which the SDK's errors leave
    out)."""
    if server.local:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        parameters = StdioServerParameters(
            command=server.command[0],
            args=list(server.command[1:]),
            env=dict(server.env) if server.env is not None else None,
            cwd=server.cwd,
        )
        async with stdio_client(parameters, errlog=errlog) as streams:
            yield streams
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async def record(response: httpx2.Response) -> None:
            if response.status_code >= 400:
                refused.append(response.status_code)

        assert server.url is not None
        timeout = httpx2.Timeout(server.timeout, read=max(server.timeout, 300.0))
        if server.sse:  # the older HTTP+SSE transport (type: sse)
            from mcp.client.sse import sse_client

            def client(
                headers: dict[str, str] | None = None,
                timeout: httpx2.Timeout | None = None,
                auth: httpx2.Auth | None = None,
            ) -> httpx2.AsyncClient:
                return httpx2.AsyncClient(
                    headers=headers, timeout=timeout, auth=auth, event_hooks={"response": [record]}
                )

            async with sse_client(
                server.url,
                headers=dict(server.headers),
                timeout=server.timeout,
                sse_read_timeout=max(server.timeout, 300.0),
                httpx_client_factory=client,
            ) as streams:
                yield streams
            return
        async with (
            httpx2.AsyncClient(
                headers=dict(server.headers), timeout=timeout, event_hooks={"response": [record]}
            ) as http,
            streamable_http_client(server.url, http_client=http) as streams,
        ):
            yield streams


def _line_of(error: Exception) -> str:
    """The stdout line the SDK could not read as JSON-RPC (its pydantic error holds it)."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            found = errors(include_url=False)
        except Exception:  # noqa: BLE001 (a best effort: the type's name then)
            found = []
        if found and isinstance(found[0].get("input"), str):
            return str(found[0]["input"])
    return f"({type(error).__name__})"


def noise_text(noise: list[str]) -> str:
    first = noise[0] if len(noise[0]) <= 80 else noise[0][:77] + "..."
    lines = "1 line" if len(noise) == 1 else f"{len(noise)} lines"
    return f"it wrote {lines} on stdout that are not MCP (the first: {first!r})"


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, in order."""
    inner = getattr(exc, "exceptions", None)
    if not inner:
        return [exc]
    return [leaf for child in inner for leaf in _leaves(child)]


def _explain(exc: Exception, server: Server, refused: list[int]) -> tuple[str, str]:
    """(code, one line) for what went wrong with a server."""
    import httpx2
    from mcp.shared.exceptions import MCPError
    from pydantic import ValidationError

    if refused:
        status = refused[-1]
        hint = "; check the token in its headers" if status in (401, 403) else ""
        return (
            "TN410",
            f"{server.url} answered HTTP {status} {httpx2.codes.get_reason_phrase(status)}{hint}",
        )
    leaves = _leaves(exc)
    leaf = next((e for e in leaves if isinstance(e, (OSError, MCPError))), leaves[0])
    if isinstance(leaf, OSError) and server.local:
        what = leaf.strerror or str(leaf)
        return "TN410", f"could not start {server.command[0]!r}: {what}"
    if isinstance(leaf, MCPError):
        text = leaf.message
        closed = "closed" in text.lower() or leaf.code == -32000
        if closed and server.local:
            return "TN410", f"the server exited or closed stdio before answering ({text})"
        return ("TN410" if closed else "TN412"), f"{text} (MCP error {leaf.code})"
    if isinstance(leaf, ValidationError):
        first = leaf.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        return "TN412", f"an answer that is not valid MCP ({where}: {first['msg']})"
    name = type(leaf).__name__
    if "Connect" in name or "Transport" in name or isinstance(leaf, OSError):
        return "TN410", f"could not connect to {server.url}: {leaf or name}"
    return "TN412", f"{name}: {leaf}"


# -- snapshots --------------------------------------------------------------------------------


@dataclass
class Snapshot(FolderChanges):
    """A server's snapshot: the files it should hold, and those it holds now."""

    server: Server
    folder: Path
    specs: dict[str, dict[str, Any]] = field(default_factory=dict)  # file name -> spec
    files: dict[str, str] = field(default_factory=dict)  # file name -> text (carry() makes it)
    tools: dict[str, str] = field(default_factory=dict)  # file name -> the server's tool name
    existing: dict[str, str] = field(default_factory=dict)  # file name -> text on disk
    refused: str | None = None  # why the server's snapshot cannot be written (tool names)


def spec_of(server: Server, tool: dict[str, Any]) -> dict[str, Any]:
    """The spec of one tool as the server sent it."""
    name = tool["name"]
    spec: dict[str, Any] = {"name": spec_name(server, name)}
    if isinstance(tool.get("title"), str):
        spec["title"] = tool["title"]
    description = tool.get("description")
    if not isinstance(description, str) or not description.strip():
        titled = tool.get("title") or (tool.get("annotations") or {}).get("title")
        description = titled if isinstance(titled, str) and titled.strip() else name
    spec["description"] = description
    for sent, key in (
        ("inputSchema", "input_schema"),
        ("outputSchema", "output_schema"),
        ("annotations", "annotations"),
    ):
        if tool.get(sent) is not None:
            spec[key] = tool[sent]
    spec["source"] = {"mcp": {"server": server.name, "tool": name}}
    if isinstance(tool.get("_meta"), dict):  # kept as sent; an x- key: the build ignores it
        spec[META_KEY] = tool["_meta"]
    return spec


def snapshot(
    config: McpConfig, listing: Listing, specs_dir: Path
) -> tuple[Snapshot, list[Diagnostic]]:
    """The files of a listed server's snapshot, beside those it has now; warnings."""
    server = listing.server
    snap = Snapshot(
        server, specs_dir / server.name, existing=owned_files(specs_dir / server.name, server.name)
    )
    warnings = []
    sent = listing.tools or []
    names = {tool["name"] for tool in sent}
    unusable = []
    for tool in sent:
        if not server.wanted(tool["name"]):
            continue
        if task_only(tool):
            warnings.append(
                config.diagnostic(
                    server,
                    "TN417",
                    f"server {server.name!r}: tool {tool['name']!r} is left out: it declares "
                    "execution.taskSupport 'required' (it runs only as an MCP task, which the "
                    "runtime does not start), so every call would fail",
                    severity=Severity.WARNING,
                )
            )
            continue
        if app_only(tool):
            warnings.append(
                config.diagnostic(
                    server,
                    "TN417",
                    f"server {server.name!r}: tool {tool['name']!r} is left out: it is for the "
                    "server's app only (_meta.ui.visibility does not hold 'model', MCP Apps), "
                    "so no model is offered it",
                    severity=Severity.WARNING,
                )
            )
            continue
        spec = spec_of(server, tool)
        warnings += [
            config.diagnostic(server, "TN123", message, severity=Severity.WARNING)
            for message in strip_codegen_keywords(spec, f"server {server.name!r}: tool")
        ]
        if not tool["name"] or not usable_name(spec["name"]):
            unusable.append(tool["name"])
            continue
        file = spec["name"] + SNAPSHOT_SUFFIX
        if file in snap.specs:
            other = snap.tools[file]
            warnings.append(
                config.diagnostic(
                    server,
                    "TN406",
                    f"server {server.name!r}: tools {other!r} and {tool['name']!r} both become "
                    f"spec {spec['name']!r}",
                )
            )
            continue
        if not isinstance(tool.get("description"), str) or not tool["description"].strip():
            warnings.append(
                config.diagnostic(
                    server,
                    "TN408",
                    f"server {server.name!r}: tool {tool['name']!r} has no description; the "
                    f"snapshot uses {spec['description']!r}",
                    severity=Severity.WARNING,
                )
            )
        snap.specs[file] = spec
        snap.tools[file] = tool["name"]
    if unusable:
        first = unusable[0]
        shown = repr(first if len(first) <= 60 else f"{first[:60]}...")
        more = f" (and {len(unusable) - 1} more)" if len(unusable) > 1 else ""
        snap.refused = (
            f"tool {shown}{more} cannot be a spec file: its name "
            f"{spec_name(server, first)[:60]!r} is empty, starts with _ or . (a fragment or a "
            f"hidden file) or is longer than {MAX_NAME} characters; leave it out with the "
            "server's `tools` allowlist, or set a `prefix`"
        )
    for wanted in server.tools or ():
        if wanted not in names:
            warnings.append(
                config.diagnostic(
                    server,
                    "TN405",
                    f"server {server.name!r}: the tools allowlist names {wanted!r}, which the "
                    "server does not list",
                    "tools",
                    Severity.WARNING,
                )
            )
    return snap, warnings


def task_only(tool: dict[str, Any]) -> bool:
    """Whether the tool can only be called as an MCP task (`execution.taskSupport: required`)."""
    execution = tool.get("execution")
    return isinstance(execution, dict) and execution.get("taskSupport") == "required"


def app_only(tool: dict[str, Any]) -> bool:
    """Whether the server offers the tool to its app's UI only, never to a model (MCP Apps:
    `_meta.ui.visibility` lists who may call it; none listed means both)."""
    meta = tool.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    return isinstance(visibility, list) and bool(visibility) and "model" not in visibility


def spec_text(spec: dict[str, Any], suffix: str = SNAPSHOT_SUFFIX) -> str:
    """A snapshot file: json.dumps alone, so an unchanged server gives the same bytes."""
    return json.dumps(spec, indent=2, ensure_ascii=False) + "\n"


def carry(config: McpConfig, snapshots: list[Snapshot], options: BuildOptions) -> list[Diagnostic]:
    """Each snapshot's files: every spec with `profile: reach`, checked by a build with the
    project's targets (sources/carry.py). A tool some targets cannot take is written for the
    others, one no target can take is left out, each a warning naming the tool and why; all
    of them from one sync."""
    from toolnexus_gen.sources.carry import carried, settle

    where = {}
    specs = {}
    for snap in snapshots:
        for file, spec in snap.specs.items():
            rel = f"{snap.folder.name}/{file}"
            specs[rel] = carried(spec)
            where[rel] = (snap, file)
    settled = settle(specs, options, spec_text)
    notes = []
    for refusal in settled.refused:
        snap, file = where[refusal.spec]
        tool, server = snap.tools[file], snap.server
        if refusal.left_out:
            del snap.tools[file]
            notes.append(
                config.diagnostic(
                    server,
                    "TN415",
                    f"server {server.name!r}: tool {tool!r} is left out: no target can take "
                    f"it: {refusal.reason}",
                    severity=Severity.WARNING,
                )
            )
        else:
            notes.append(
                config.diagnostic(
                    server,
                    "TN416",
                    f"server {server.name!r}: tool {tool!r} is not sent to "
                    f"{', '.join(refusal.targets)} (its snapshot says targets.exclude): "
                    f"{refusal.reason}",
                    severity=Severity.WARNING,
                )
            )
    for snap in snapshots:
        snap.files = {
            file: spec_text(settled.specs[f"{snap.folder.name}/{file}"])
            for file in snap.specs
            if f"{snap.folder.name}/{file}" in settled.specs
        }
    if settled.unplaced and snapshots:
        first = snapshots[0].server
        notes += [
            config.diagnostic(
                first,
                "TN418",
                f"the synced tools build one by one, but not as a whole set: {text}",
                severity=Severity.WARNING,
            )
            for text in settled.unplaced
        ]
    return notes


def usable_name(name: str) -> bool:
    """Whether a spec name can be a snapshot's file stem: not empty, no fragment or hidden file
    (`_`, `.`: discover() skips them, so the tool would silently not exist, and the file could
    be the user's fragment), and short enough for any file system."""
    return 0 < len(name) <= MAX_NAME and not name.startswith(("_", "."))


def owned_files(folder: Path, server: str) -> dict[str, str]:
    """The snapshot files of `server` in its folder (specs sync wrote: `source.mcp.server` names
    it); any other spec there is the user's and is left alone."""
    found: dict[str, str] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob(f"*{SNAPSHOT_SUFFIX}")):
        try:
            text = path.read_text("utf-8")
            data = json.loads(text)
        except (OSError, ValueError, RecursionError):
            continue
        source = data.get("source") if isinstance(data, dict) else None
        bound = source.get("mcp") if isinstance(source, dict) else None
        if isinstance(bound, dict) and bound.get("server") == server:
            found[path.name] = text
    return found


def collisions(config: McpConfig, snapshots: list[Snapshot], specs_dir: Path) -> list[Diagnostic]:
    """Spec names two snapshots share, or a snapshot shares with any other spec (hand-written,
    or another server's snapshot): errors naming both."""
    problems: list[Diagnostic] = []
    replaced = {snap.folder / name for snap in snapshots for name in snap.existing}
    others: dict[str, Path] = {}
    for path in discover(specs_dir) if specs_dir.is_dir() else []:
        if path not in replaced:
            others.setdefault(path.stem.casefold(), path)
    claimed: dict[str, tuple[Snapshot, str]] = {}
    for snap in snapshots:
        on_disk = (
            {path.name.casefold(): path for path in snap.folder.iterdir()}
            if snap.folder.is_dir()
            else {}
        )
        owned = {name.casefold() for name in snap.existing}
        for file, tool in sorted(snap.tools.items()):
            stem = file.removesuffix(SNAPSHOT_SUFFIX)
            key = stem.casefold()
            taken = on_disk.get(file.casefold())
            if taken is not None and file.casefold() not in owned and key not in others:
                # a file sync did not write (not a spec: it is not discovered) is never replaced
                problems.append(
                    Diagnostic(
                        display_path(taken),
                        1,
                        1,
                        "TN407",
                        f"this file is in the way of tool {tool!r} of MCP server "
                        f"{snap.server.name!r}, whose snapshot would be "
                        f"{display_path(snap.folder / file)}; set a prefix for the server in "
                        f"{config.display} or move this file",
                    )
                )
            if key in claimed:
                first, first_tool = claimed[key]
                problems.append(
                    config.diagnostic(
                        snap.server,
                        "TN406",
                        f"tool {first_tool!r} of server {first.server.name!r} and tool {tool!r} of "
                        f"server {snap.server.name!r} both become spec {stem!r}; give one server "
                        "another prefix",
                    )
                )
                continue
            claimed[key] = (snap, tool)
            other = others.get(key)
            if other is not None:
                problems.append(
                    Diagnostic(
                        display_path(other),
                        1,
                        1,
                        "TN407",
                        f"this spec is named like tool {tool!r} of MCP server "
                        f"{snap.server.name!r}, whose snapshot would be "
                        f"{display_path(snap.folder / file)}; set a prefix for the server in "
                        f"{config.display} or rename this spec",
                    )
                )
    return problems


def changes(old: Any, new: Any, pointer: str = "") -> list[str]:
    """What differs between two JSON values: `<pointer> added|removed|changed`, in order."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in old:
            if key not in new:
                found.append(f"{join_pointer(pointer, key)} removed")
            else:
                found += changes(old[key], new[key], join_pointer(pointer, key))
        found += [f"{join_pointer(pointer, key)} added" for key in new if key not in old]
        return found
    if isinstance(old, list) and isinstance(new, list):
        found = []
        for i in range(max(len(old), len(new))):
            if i >= len(new):
                found.append(f"{join_pointer(pointer, i)} removed")
            elif i >= len(old):
                found.append(f"{join_pointer(pointer, i)} added")
            else:
                found += changes(old[i], new[i], join_pointer(pointer, i))
        return found
    if old == new and type(old) is type(new):
        return []
    return [f"{pointer or '/'} changed"]


def drift(snap: Snapshot, file: str) -> list[str]:
    """What changed in one snapshot file, by JSON pointer."""
    try:
        old = json.loads(snap.existing[file])
    except (ValueError, RecursionError):
        return ["/ changed (the file on disk is not JSON)"]
    try:
        found = changes(old, json.loads(snap.files[file]))
    except RecursionError:
        return ["/ changed (nested too deeply to compare)"]
    return found or ["/ rewritten (same content, other formatting)"]


def consequences(snap: Snapshot, file: str) -> list[str]:
    """What one snapshot file's upstream change means for its callers, by the rules of
    `toolnexus-gen breaking` (`error[TN503] callers: required argument 'x' added: ...`)."""
    from toolnexus_gen.breaking.rules import spec_findings

    def read(text: str | None) -> Any:
        try:
            return json.loads(text) if text is not None else None
        except (ValueError, RecursionError):
            return None

    try:
        found = spec_findings(
            read(snap.existing.get(file)), read(snap.files.get(file)), "the snapshot"
        )
    except (RecursionError, MemoryError, ValueError, TypeError, OverflowError) as exc:
        # a snapshot no generated package holds (a hand-edited or hostile file): no traceback
        return [f"not compared by the rules of `breaking`: {type(exc).__name__}"]
    return [f"{f.severity}[{f.rule}] {f.category}: {f.message}" for f in found]


def stale_folders(config: McpConfig, specs_dir: Path) -> Iterable[Path]:
    """Snapshot folders of servers mcp.json no longer lists."""
    names = set(config.names)
    if not specs_dir.is_dir():
        return []
    return [
        folder
        for folder in sorted(specs_dir.iterdir())
        if folder.is_dir() and folder.name not in names and owned_files(folder, folder.name)
    ]
