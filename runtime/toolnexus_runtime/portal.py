"""Where sync code runs async work, and where sync handlers run off the event loop.

- `run_sync(coro)` runs a coroutine on a long-lived event loop in a daemon thread (a portal, as
  anyio's `start_blocking_portal`), never a new loop per call, so loop-bound objects an async
  handler keeps (an `httpx.AsyncClient`, a database pool, an `asyncio.Queue`) stay usable across
  calls and loop turns. Called from any thread but a portal's, it uses the shared loop (depth 0).
  Called from a portal's own thread (a handler on that loop calling a sync entry point, which
  blocks the loop until it returns) it uses the loop one depth further down, long-lived too, so
  nested sync calls complete at any depth and each depth keeps its loop. A worker thread started
  from a portal's thread counts as that portal's for this (`_depth`). A KeyboardInterrupt or
  SystemExit a handler raises on a portal reaches its caller; the loop serves on.
- `in_thread(fn, ...)` runs a sync handler in a worker thread under a capacity limiter: at most
  that many run at once; the others wait for a slot. A call given up at its deadline frees its
  slot at once, while its thread runs on until the handler returns (Python cannot stop a
  thread). On asyncio the threads are this module's (`_Workers`: an idle one is reused, else one
  is started, and one idle for 10 s exits); anyio's `to_thread.run_sync` ties its threads to the
  root task, so code that runs each request in its own `asyncio.run` or `run_until_complete`
  started two threads per parallel turn (most of a short tool loop's time). Other event loops
  (trio) use anyio's.

anyio is imported on first use, so importing the runtime stays light.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextvars
import os
import queue
import threading
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from anyio import CapacityLimiter

T = TypeVar("T")

_here = threading.local()  # .depth: set in each portal's thread


class _Portal:
    """One event loop, run in a daemon thread until the process exits (or forks)."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None

    def loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is not None:
            return loop
        with self._lock:
            if self._loop is None:
                ready = threading.Event()
                new = asyncio.new_event_loop()

                async def main() -> None:
                    # A root task for the loop's lifetime: anyio keeps its worker threads for
                    # as long as the root task runs, not one thread per call.
                    self._stop = asyncio.Event()
                    ready.set()
                    await self._stop.wait()

                def serve() -> None:
                    _here.depth = self.depth
                    asyncio.set_event_loop(new)
                    root = new.create_task(main())
                    while True:
                        try:
                            new.run_until_complete(root)
                            return
                        except (KeyboardInterrupt, SystemExit):
                            # A handler raised it in a task here: asyncio settles that task
                            # with it, then re-raises it out of the loop. The caller hears of
                            # it through its future; the loop serves on (stopped, every later
                            # call on it would wait forever).
                            continue

                name = f"toolnexus-portal-{self.depth}" if self.depth else "toolnexus-portal"
                thread = threading.Thread(target=serve, name=name, daemon=True)
                thread.start()
                ready.wait()
                self._thread = thread
                self._loop = new
            return self._loop

    def stop(self) -> None:
        with self._lock:
            loop, thread, stop = self._loop, self._thread, self._stop
            self._loop = self._thread = self._stop = None
        if loop is not None and thread is not None and stop is not None and thread.is_alive():
            loop.call_soon_threadsafe(stop.set)
            thread.join(timeout=2)


class _Portals:
    """The portal of each depth, made on first need."""

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """Start afresh (also in a forked child, where the portal threads did not survive)."""
        self._lock = threading.Lock()
        self._portals: list[_Portal] = []

    def at(self, depth: int) -> _Portal:
        portals = self._portals
        if depth < len(portals):
            return portals[depth]
        with self._lock:
            while len(self._portals) <= depth:
                self._portals.append(_Portal(len(self._portals)))
            return self._portals[depth]

    def stop(self) -> None:
        for portal in reversed(self._portals):
            portal.stop()


PORTALS = _Portals()
atexit.register(PORTALS.stop)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=PORTALS.forget)


def _depth() -> int | None:
    """The depth of the portal this thread serves, or, in a worker thread, of the portal whose
    thread started its call (None: neither)."""
    return getattr(_here, "depth", getattr(_here, "started_from", None))


def _from(depth: int | None, call: Callable[[], T]) -> Callable[[], T]:
    """`call`, to run in a worker thread as if from the thread at `depth` (see `_depth`): a sync
    entry point it calls uses the loop one further down, not the one its starter blocks."""
    if depth is None:
        return call

    def from_depth() -> T:
        _here.started_from = depth
        try:
            return call()
        finally:
            del _here.started_from

    return from_depth


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Start `coro` on the runtime's loop for this thread; its result comes in the future."""
    depth = _depth()
    depth = 0 if depth is None else depth + 1
    return asyncio.run_coroutine_threadsafe(coro, PORTALS.at(depth).loop())


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion on the runtime's loop for this thread and return its result."""
    future = submit(coro)
    try:
        return future.result()
    except BaseException:
        future.cancel()  # KeyboardInterrupt while waiting: do not leave the work running
        raise


def on_portal() -> bool:
    """Whether this thread is a portal's (its running loop is one of the runtime's own)."""
    return hasattr(_here, "depth")


def capacity_limiter(tokens: float) -> CapacityLimiter:
    from anyio import CapacityLimiter

    return CapacityLimiter(tokens)


class Started:
    """Set when a worker thread begins the call: a call still waiting for a slot at its
    deadline was busy, not slow."""

    __slots__ = ("started",)

    def __init__(self) -> None:
        self.started = False


async def in_thread(
    fn: Callable[..., T], args: tuple[Any, ...], limiter: CapacityLimiter, started: Started
) -> T:
    """`fn(*args)` in a worker thread, at most `limiter`'s tokens at once; the caller's context
    variables (a tracing span) go with it. Cancelled, the call returns at once and the thread
    runs on."""

    def call() -> T:
        started.started = True
        return fn(*args)

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio): anyio's threads
        loop = None
    if loop is None:
        from anyio import to_thread

        return await to_thread.run_sync(call, abandon_on_cancel=True, limiter=limiter)
    from anyio import WouldBlock

    try:  # a free slot is taken at once: the thread starts in the caller's own step (a batch
        limiter.acquire_nowait()  # starts its other calls' threads before running one inline)
    except WouldBlock:
        await limiter.acquire()
    try:
        future: asyncio.Future[T] = loop.create_future()
        job = _from(_depth(), call)
        WORKERS.submit(loop, future, contextvars.copy_context().run, job)
        return await future
    finally:
        limiter.release()


class _Worker(threading.Thread):
    def __init__(self, pool: _Workers) -> None:
        super().__init__(name="toolnexus worker", daemon=True)  # an abandoned call never
        self.pool = pool  # holds up the interpreter's exit
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            try:
                loop, future, fn, args = self.jobs.get(timeout=_Workers.IDLE)
            except queue.Empty:
                if self.pool.retire(self):
                    return
                continue  # taken meanwhile: its job is on the way
            try:
                ok, value = True, fn(*args)
            except BaseException as exc:  # noqa: BLE001 (handed to the awaiting task)
                ok, value = False, exc
            self.pool.rest(self)  # idle before the caller hears back: its next call reuses us
            try:
                loop.call_soon_threadsafe(_settle, future, ok, value)
            except RuntimeError:  # the loop is closed: nobody waits for this any more
                pass
            del loop, future, fn, args, value


class _Workers:
    """Worker threads for sync calls from asyncio loops, shared by every loop: a call takes an
    idle thread or starts one (never a queue: the callers' limiters bound them)."""

    IDLE = 10.0  # seconds a thread waits for work before it exits (as anyio's)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []

    def submit(
        self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], fn: Any, *args: Any
    ) -> None:
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self)
            worker.start()
        worker.jobs.put((loop, future, fn, args))

    def rest(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def retire(self, worker: _Worker) -> bool:
        """Whether an idle worker may exit (false: a call took it meanwhile)."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False

    def forget(self) -> None:
        """In a forked child: the threads did not survive."""
        self._lock = threading.Lock()
        self._idle = []


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():  # cancelled: the call was given up, its thread ran on
        return
    if ok:
        future.set_result(value)
    else:
        if isinstance(value, StopIteration):  # a Future refuses it (asyncio's TypeError, and
            error = RuntimeError("the call raised StopIteration")  # the call never settled)
            error.__cause__ = value
            value = error
        future.set_exception(value)


WORKERS = _Workers()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=WORKERS.forget)


class _Direct:
    """In place of a loop for a worker that settles a concurrent Future: at once, in its own
    thread (no event loop involved)."""

    @staticmethod
    def call_soon_threadsafe(callback: Callable[..., Any], *args: Any) -> None:
        callback(*args)


def spawn(fn: Callable[..., T], *args: Any, **kwargs: Any) -> concurrent.futures.Future[T]:
    """`fn(*args, **kwargs)` in one of the worker threads, from a thread with no event loop;
    the caller's context variables go with it."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    call = _from(_depth(), partial(fn, *args, **kwargs))
    WORKERS.submit(_Direct, future, contextvars.copy_context().run, call)  # type: ignore[arg-type]
    return future


async def within(timeout: float, awaitable: Awaitable[T]) -> tuple[bool, T | None]:
    """(True, its value) when `awaitable` finishes within `timeout` seconds, else (False, None)
    once it has been cancelled (anyio's cancel scope tells its deadline from any other)."""
    from anyio import move_on_after

    with move_on_after(timeout):
        return True, await awaitable
    return False, None
