"""A remote MCP server over streamable HTTP, read within bounds: a JSON answer up to
MAX_MESSAGE bytes (the SDK reads one whole; it caps an event of an event stream itself), no
compressed answer (asked for none: one could inflate to any size), and the server's secrets
hidden from what the HTTP libraries log."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from .mcp_stdio import MAX_MESSAGE

if TYPE_CHECKING:
    from .mcp_config import ServerSettings


class _Hiding(logging.Filter):
    """Hides the servers' secrets from what the HTTP libraries log (httpx2 logs each request's
    URL at INFO, the SDK its endpoint at DEBUG: a URL can hold a key in its query)."""

    LOGGERS = ("httpx2", "httpcore2", "mcp.client.streamable_http", "mcp.client.sse")

    def __init__(self) -> None:
        super().__init__()
        self.secrets: tuple[str, ...] = ()

    def add(self, secrets: tuple[str, ...]) -> None:
        if not set(secrets) <= set(self.secrets):
            self.secrets = tuple(sorted({*self.secrets, *secrets}, key=len, reverse=True))
            for name in self.LOGGERS:
                logging.getLogger(name).addFilter(self)  # (once: a logger's filters are a set)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        hidden = message
        for secret in self.secrets:
            hidden = hidden.replace(secret, "***")
        if hidden != message:
            record.msg, record.args = hidden, ()
        return True


_HIDING = _Hiding()


@asynccontextmanager
async def http_transport(settings: ServerSettings, refused: list[int]) -> AsyncIterator[Any]:
    """(read stream, write stream) to the server at settings.url; each HTTP status of 400 or
    more it answers is appended to `refused`."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    assert settings.url is not None
    _HIDING.add(settings.secrets)

    class Capped(httpx2.AsyncByteStream):
        """A JSON answer's bytes, read up to MAX_MESSAGE: the SDK reads it whole (an SSE
        event it caps itself)."""

        def __init__(self, stream: Any, why: str | None) -> None:
            self.stream, self.why = stream, why

        async def __aiter__(self) -> AsyncIterator[bytes]:
            read = 0
            async for chunk in self.stream:
                read += len(chunk)
                if self.why is None and read > MAX_MESSAGE:
                    self.why = (
                        f"its answer was over the limit of {MAX_MESSAGE} bytes a message "
                        "may take; the rest was not read"
                    )
                if self.why is not None:  # the SDK answers the call with this error
                    raise httpx2.StreamError(self.why)
                yield chunk

        async def aclose(self) -> None:
            await self.stream.aclose()

    async def record(response: httpx2.Response) -> None:
        if response.status_code >= 400:
            refused.append(response.status_code)
        if "text/event-stream" not in response.headers.get("content-type", ""):
            # Bytes are counted as they arrive, so an answer compressed although none was
            # asked for (it could inflate to any size) is refused unread.
            encoding = response.headers.pop("content-encoding", "identity").lower()
            why = (
                None
                if encoding == "identity"
                else f"its answer was {encoding}-compressed, which was not asked for (it "
                f"could inflate past the limit of {MAX_MESSAGE} bytes): it was not read"
            )
            response.stream = Capped(response.stream, why)

    timeout = httpx2.Timeout(settings.timeout, read=max(settings.timeout, 300.0))
    headers = {"accept-encoding": "identity", **settings.headers}
    if settings.transport == "sse":  # the older HTTP+SSE transport (type: sse)
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
            settings.url,
            headers=headers,
            timeout=settings.timeout,
            sse_read_timeout=max(settings.timeout, 300.0),
            httpx_client_factory=client,
        ) as streams:
            yield streams
        return
    async with (
        httpx2.AsyncClient(
            headers=headers, timeout=timeout, event_hooks={"response": [record]}
        ) as http,
        streamable_http_client(settings.url, http_client=http) as streams,
    ):
        yield streams
