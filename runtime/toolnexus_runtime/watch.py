"""What the runtime watches a handler for while it runs on an event loop: a step that blocks a
shared loop (logged, naming the tool and what to do), and an outcome that arrives after the
call's deadline (logged, never sent).
"""

from __future__ import annotations

import asyncio
import logging
import time
import types
from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

T = TypeVar("T")

logger = logging.getLogger("toolnexus_runtime")

BLOCKING_SECONDS = 1.0
"""An async handler that holds a shared event loop this long in one step is reported."""


@types.coroutine
def _watched(awaitable: Awaitable[T], name: str) -> Generator[Any, Any, T]:
    """Await `awaitable`, timing each step it runs on the loop (asyncio's slow-callback idea,
    for one handler): a step of BLOCKING_SECONDS or more blocked every other call on a shared
    loop, so it is logged, naming the tool and what to do."""
    steps = awaitable.__await__()
    message: Any = None
    error: BaseException | None = None
    while True:
        began = time.perf_counter()
        try:
            yielded = steps.send(message) if error is None else steps.throw(error)
        except StopIteration as stop:
            _check_step(name, began)
            return stop.value  # type: ignore[no-any-return]
        except BaseException:
            _check_step(name, began)
            raise
        _check_step(name, began)
        message = error = None
        try:
            message = yield yielded
        except GeneratorExit:
            close = getattr(steps, "close", None)
            if close is not None:
                close()
            raise
        except BaseException as exc:  # noqa: BLE001 (handed to the handler, as await would)
            error = exc


def _check_step(name: str, began: float) -> None:
    held = time.perf_counter() - began
    if held >= BLOCKING_SECONDS:
        logger.warning(
            "Tool %r blocked the event loop for %.1f seconds in one step: every other call on "
            "that loop waited. An async handler must not call blocking code: make it a plain "
            "def (it then runs in a worker thread) or move the blocking call off the loop "
            "(await asyncio.to_thread(...))",
            name,
            held,
            extra={"tool_name": name},
        )


def _late(name: str) -> Callable[[asyncio.Future[Any]], None]:
    """What becomes of a call given up at its deadline: its outcome is logged, never sent."""

    def done(task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            logger.warning("Tool %r failed after its timeout", name, exc_info=exc)
        else:
            logger.warning(
                "Tool %r returned after its timeout (it ignored cancellation); the value was "
                "dropped",
                name,
                extra={"tool_name": name},
            )

    return done
