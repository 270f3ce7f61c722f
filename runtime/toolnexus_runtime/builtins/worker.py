"""Blocking work of the built-in tools, off the event loop, in a thread of its own.

Not `asyncio.to_thread`: that uses the loop's shared default executor (a few threads, also used
by the application and by name resolution), and a call stuck in it would starve everything else
that uses it; its threads also hold the interpreter open at exit. Each call here gets a daemon
thread of its own, and a `threading.Event` that is set when the awaiting call is cancelled (a
Toolkit timeout, a closed loop), so long work (grep, glob, read) stops at its next check;
`on_cancel` lets a caller also break a blocking call (webfetch closes its socket).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def in_thread(
    work: Callable[[threading.Event], T], on_cancel: Callable[[], None] | None = None
) -> T:
    """`work(stop)` run in a new daemon thread; `stop` is set if this call is cancelled."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    stop = threading.Event()
    context = contextvars.copy_context()  # as asyncio.to_thread does

    def settle(outcome: Callable[[], None]) -> None:
        try:
            loop.call_soon_threadsafe(outcome)
        except RuntimeError:  # the loop is closed: nobody waits for this any more
            pass

    def run() -> None:
        try:
            result = context.run(work, stop)
        except BaseException as exc:  # noqa: BLE001 (handed to the awaiting call)
            error = exc
            settle(lambda: None if future.done() else future.set_exception(error))
        else:
            settle(lambda: None if future.done() else future.set_result(result))

    threading.Thread(target=run, name="toolnexus-builtin", daemon=True).start()
    try:
        return await future
    except asyncio.CancelledError:
        stop.set()
        if on_cancel is not None:
            on_cancel()
        raise
