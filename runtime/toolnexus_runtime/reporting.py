"""What a handler tells its caller while it runs: progress and log messages.

`ctx.report_progress(50, 100)` and `ctx.log("info", "...")` reach whoever set the call's
`ToolContext.reporter`: our MCP server sets one per call, so its client gets
`notifications/progress` and `notifications/message`, and a tool proxied from an MCP server passes
on what that server sends. Anyone can set one (`ToolContext(reporter=...)`: an object with the
two methods of `Reporter`). Without one, progress is not kept and log messages go to the
`toolnexus_runtime.tools` Python logger.

Both methods are plain calls, safe from any thread (a sync handler runs in a worker thread): the
MCP server's reporter (`Relay`) queues each message and one task sends them in order, all of
them before the call's result.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

from .datatypes import LOG_LEVELS as LEVELS
from .datatypes import PYTHON_LEVELS, Reporter, tools_logger

__all__ = ["LEVELS", "PYTHON_LEVELS", "QUEUE_LIMIT", "Relay", "Reporter", "tools_logger"]
QUEUE_LIMIT = 1000
"""Messages a relay holds for a slow client; past it new ones are dropped and counted."""
DRAIN_SECONDS = 5.0
"""How long a finished call waits for its queued messages to be sent before its result goes."""

logger = logging.getLogger("toolnexus_runtime")


def check_level(level: Any) -> str:
    if level not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}, not {level!r}")
    return str(level)


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, not {value!r}")
    return value


class Relay:
    """A Reporter that sends each message with `send` (an async function of one message:
    `("progress", progress, total, message)` or `("log", level, data, logger)`), in the order
    they came, from a task on the loop it was made on. `close()` sends what is queued (for up
    to DRAIN_SECONDS), then stops: what comes later is dropped (the call is over)."""

    def __init__(self, send: Callable[[tuple[Any, ...]], Awaitable[None]], tool: str) -> None:
        self._send = send
        self._tool = tool
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[Any, ...] | None] = asyncio.Queue()
        self._open = True
        self._dropped = 0
        self._task: asyncio.Task[None] | None = None

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        _number(progress, "progress")
        if total is not None:
            _number(total, "total")
        self._put(("progress", progress, total, None if message is None else str(message)))

    def log(self, level: str, data: Any, logger: str | None) -> None:
        self._put(("log", check_level(level), data, logger))

    def _put(self, item: tuple[Any, ...]) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._enqueue(item)
        else:
            try:
                self._loop.call_soon_threadsafe(self._enqueue, item)
            except RuntimeError:  # its loop has closed: the call is long over
                pass

    def _enqueue(self, item: tuple[Any, ...]) -> None:
        if not self._open:
            return
        if self._task is None:
            self._task = self._loop.create_task(self._pump())
        if self._queue.qsize() >= QUEUE_LIMIT:
            self._dropped += 1
            return
        self._queue.put_nowait(item)

    async def _pump(self) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            try:
                await self._send(item)
            except Exception as exc:  # noqa: BLE001 (a client gone away ends no call)
                logger.debug("could not send a %s notification: %s", item[0], exc)

    async def close(self) -> None:
        """Send what is queued, then stop taking messages."""
        if not self._open:
            return
        # Messages a worker thread handed over before the call ended are in the loop's queue
        # of callbacks: let them land first.
        await asyncio.sleep(0)
        self._open = False
        task = self._task
        if task is not None:
            self._queue.put_nowait(None)
            done, _ = await asyncio.wait({task}, timeout=DRAIN_SECONDS)
            if not done:
                task.cancel()
        if self._dropped:
            logger.warning(
                "Tool %r sent %d progress or log messages more than its client read in time; "
                "they were dropped",
                self._tool,
                self._dropped,
                extra={"tool_name": self._tool},
            )
