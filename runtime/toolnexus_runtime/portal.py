"""Where sync code runs async work, and where sync handlers run off the event loop.

- `run_sync(coro)` runs a coroutine on one long-lived event loop in a daemon thread (a portal, as
  anyio's `start_blocking_portal`), never a new loop per call, so loop-bound objects an async
  handler keeps (an `httpx.AsyncClient`, a database pool, an `asyncio.Queue`) stay usable across
  calls and loop turns. It works from plain threads and from inside a running event loop; from
  the portal's own thread (a handler calling a sync entry point) it runs the coroutine on a
  private loop in a new thread instead of waiting on itself.
- `HANDLER_THREADS` runs sync handlers that must not block the caller (timeouts, concurrent
  calls): an idle thread is reused, and when none is idle a new one starts. A handler that never
  returns holds only its own thread, so it can never starve other calls, and nothing waits for a
  free slot in a bounded pool.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import os
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor, Future
from queue import Empty, SimpleQueue
from typing import Any, TypeVar

T = TypeVar("T")


class _Portal:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is not None:
            return loop
        with self._lock:
            if self._loop is None:
                ready = threading.Event()
                loop = asyncio.new_event_loop()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=serve, name="toolnexus-portal", daemon=True)
                thread.start()
                ready.wait()
                self._thread = thread
                self._loop = loop
            return self._loop

    def is_current(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def stop(self) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=2)

    def forget(self) -> None:
        """In a forked child: the portal thread did not survive the fork; start afresh."""
        self._lock = threading.Lock()
        self._loop = self._thread = None


PORTAL = _Portal()
atexit.register(PORTAL.stop)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=PORTAL.forget)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion on the portal's event loop and return its result."""
    if PORTAL.is_current():
        # Waiting here would block the very loop that must run `coro`.
        return _run_in_new_thread(coro)
    future = asyncio.run_coroutine_threadsafe(coro, PORTAL.loop())
    try:
        return future.result()
    except BaseException:
        future.cancel()  # KeyboardInterrupt while waiting: do not leave the work running
        raise


def _run_in_new_thread(coro: Coroutine[Any, Any, T]) -> T:
    box: list[Any] = []

    def main() -> None:
        try:
            box.append((True, asyncio.run(coro)))
        except BaseException as exc:  # noqa: BLE001 (handed to the caller below)
            box.append((False, exc))

    thread = threading.Thread(target=main, name="toolnexus-nested", daemon=True)
    thread.start()
    thread.join()
    ok, value = box[0]
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


class _HandlerThreads(Executor):
    """An executor whose threads grow on demand and retire when idle (see the module docstring).

    It keeps one count of idle threads that submitters may claim, as the standard library's
    ThreadPoolExecutor does with its idle semaphore, but without an upper bound on threads."""

    def __init__(self, idle_seconds: float = 30.0) -> None:
        self._idle_seconds = idle_seconds
        self.forget()

    def forget(self) -> None:
        """Start with no threads (also in a forked child, where the parent's threads are gone)."""
        self._work: SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._count_lock = threading.Lock()
        self.threads = 0

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        context = contextvars.copy_context()  # tracing spans and the like follow the call
        self._work.put((future, lambda: context.run(fn, *args, **kwargs)))
        if not self._idle.acquire(blocking=False):
            with self._count_lock:
                self.threads += 1
            threading.Thread(target=self._serve, name="toolnexus-handler", daemon=True).start()
        return future

    def _serve(self) -> None:
        while True:
            try:
                future, call = self._work.get(timeout=self._idle_seconds)
            except Empty:
                # Retire only if no submitter has counted on this idle thread meanwhile.
                if self._idle.acquire(blocking=False):
                    with self._count_lock:
                        self.threads -= 1
                    return
                continue
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as exc:  # noqa: BLE001 (handed to the caller)
                    future.set_exception(exc)
            del future, call
            self._idle.release()


HANDLER_THREADS = _HandlerThreads()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=HANDLER_THREADS.forget)
