"""The MCP proxy: tools snapshotted from MCP servers (`toolnexus-gen sync`) called on their server.

`Toolkit(handlers, mcp_config="mcp.json")` (a path or the same data as a dict) says how to reach
each server, in the format every client writes (mcp_config.py: `mcpServers`, `servers` or `mcp`;
`command`/`args`/`env`/`envFile`/`cwd` for a local server over stdio, `url`/`headers` for
streamable HTTP or HTTP+SSE; `enabled`/`disabled`, `timeout`). Variables are expanded for a
server when its first tool is called; a missing one is an error naming it, and values are never
logged nor written anywhere. A server whose entry is wrong fails its own tools only.

A call is validated by the tool's typed model (so the model's mistakes never cost a round trip)
and reaches the server under the tool's original name with the arguments exactly as the model
wrote them (argument aliases mapped back): never the model's normalised values (a URL with a
slash added, 2 made 2.0). Sessions, deadlines and servers that are down: mcp_session.py; local
servers over stdio: mcp_stdio.py. The server's progress and log messages pass on to the call's
`ToolContext` (and so to our own MCP server's client, when the toolkit is served again).

The result keeps what the server said: `isError` gives an error result with its text,
`structuredContent` the result's `data`, text parts the output, and images, audio, embedded
resources and resource links the result's `content` (`toolnexus_runtime.content`), which each
provider's reply carries in its own form. `Toolkit(output_limit=30_000)` caps the text a result
gives the model: text over it is cut with a note of what was cut, structuredContent whose JSON
is longer is refused (an error result). A local server's message over MAX_MESSAGE bytes is cut
while it is read (the call gets an error); over HTTP a JSON answer is read up to MAX_MESSAGE
bytes, never compressed, and an SSE event up to the SDK's 1 MiB (mcp_remote.py).
`Toolkit.aclose()` (or `async with`) closes the sessions. Needs the official MCP SDK:
`pip install 'toolnexus-runtime[mcp]'`, imported when the first session opens.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from ..content import Part, Resource, Text, from_mcp, has_media, text_of
from ..datatypes import SourceError, ToolContext, ToolError, ToolResult
from ..nested import refuse_nested
from .base import SourceOptions
from .mcp_config import DEFAULT_TIMEOUT, ServerSettings, read_config, settings_for
from .mcp_session import Upstream
from .mcp_stdio import MAX_MESSAGE

if TYPE_CHECKING:
    from ..datatypes import ToolSpec
    from .base import ToolkitView

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_TIMEOUT",
    "MAX_MESSAGE",
    "McpExecutor",
    "ServerSettings",
    "executor",
    "read_config",
    "settings_for",
    "to_result",
]

DEFAULT_LIMIT = 30_000  # characters of a result, as Toolkit(output_limit=) says


# -- results ------------------------------------------------------------------------------------


def to_result(result: Any, limit: int = DEFAULT_LIMIT) -> str | ToolResult:
    """What a handler would return for a CallToolResult (raises ToolError for isError). Its text
    is cut to `limit` characters with a note saying so; structuredContent whose JSON is longer
    than `limit` is refused (an error result: a cut object would mean something else), and its
    size is measured piece by piece, never made into one long string."""
    parts = [from_mcp(block) for block in result.content]
    media = has_media(parts)
    if media:
        parts = _cut_parts(parts, limit)
        text = text_of(parts)
    else:
        text = _cut(text_of(parts), limit)
    if result.is_error:
        raise ToolError(text or "The tool failed without a message.")
    data = result.structured_content
    if data is not None:
        size = 0
        for piece in json.JSONEncoder(ensure_ascii=False).iterencode(data):
            size += len(piece)
            if size > limit:
                raise ToolError(
                    f"The tool's structured result is over {limit} characters (the toolkit's "
                    "output_limit), so it was not used: ask for less (a narrower query, a "
                    "smaller page), or raise Toolkit(output_limit=...)."
                )
    elif not media:
        return text
    content = tuple(parts) if media else ()
    return ToolResult(text or json.dumps(data, ensure_ascii=False), False, data, content=content)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[output cut: {limit} of {len(text)} characters shown]"


def _cut_parts(parts: list[Part], limit: int) -> list[Part]:
    """The parts with at most `limit` characters of text among them (text parts and text
    resources, in order), the rest cut with a note; images and other media kept."""
    total = sum(len(p.text) for p in parts if isinstance(p, (Text, Resource)) and p.text)
    if total <= limit:
        return parts
    kept: list[Part] = []
    left = limit
    for part in parts:
        if isinstance(part, Text):
            if left:
                kept.append(Text(part.text[:left]))
                left -= min(left, len(part.text))
        elif isinstance(part, Resource) and part.text is not None:
            if left:
                kept.append(Resource(part.uri, text=part.text[:left], mime_type=part.mime_type))
                left -= min(left, len(part.text))
        else:
            kept.append(part)
    kept.append(Text(f"[output cut: {limit} of {total} characters of text shown]"))
    return kept


# -- the executor -------------------------------------------------------------------------------


class _Bound:
    """One tool bound to its server. Its `validate` checks the arguments with the tool's typed
    model and hands on the arguments as sent (the toolkit calls it in place of the model)."""

    def __init__(
        self, model: Any, upstream: Upstream, tool: str, limit: int, finish: Callable[[Any], Any]
    ) -> None:
        self._check = model.__pydantic_validator__.validate_python
        self.upstream = upstream
        self.tool = tool
        self.limit = limit
        self.finish = finish

    def validate(self, arguments: Any) -> Any:
        model = self._check(arguments)  # raises ValidationError: the toolkit answers the model
        refuse_nested(model, arguments)  # an undeclared key inside an argument is never sent
        return arguments

    async def __call__(self, arguments: Any, ctx: ToolContext) -> Any:
        # JSON values as sent; a caller's Python values (a datetime) as JSON would give them
        sent = to_jsonable_python(arguments)
        try:
            answer = await self.upstream.call(self.tool, sent, ctx)
        except SourceError as exc:  # its text can quote the server's, of any length
            raise SourceError(_cut(str(exc), self.limit)) from None
        return self.finish(answer)


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
        self._upstreams: dict[str, Upstream] = {}

    def _upstream(self, server: str, tool: str) -> Upstream:
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
        found = self._upstreams[server] = Upstream(settings_for(self._where, server, entry))
        return found

    def bind(self, spec: ToolSpec) -> Any:
        assert spec.binding is not None
        server, tool = spec.binding["mcp"]["server"], spec.binding["mcp"]["tool"]
        upstream = self._upstream(server, spec.name)
        upstream.tools.add(tool)
        limit = self.limit
        return _Bound(spec.model, upstream, tool, limit, lambda result: to_result(result, limit))

    async def aclose(self) -> None:
        for upstream in self._upstreams.values():
            await upstream.aclose()


def executor(toolkit: ToolkitView[Any], options: SourceOptions) -> McpExecutor:
    return McpExecutor(options)
