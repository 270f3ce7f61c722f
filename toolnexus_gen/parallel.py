"""Spreading independent per-tool work (model generation) over the cores.

A build opens the worker pool at its start, while the process is still small, so forked workers
do not each carry a copy of every parsed spec (`pool_for`); work is then handed out item by item
as this process finds it (`Stream`: the workers start on it while this process goes on with
other work). On one core, or where fork is unavailable, the work runs in-process. Results come
back in input order, so output never depends on scheduling.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    import multiprocessing.pool

T = TypeVar("T")
R = TypeVar("R")

PARALLEL_MIN = 32  # below this, starting workers costs more than it saves
_pool: multiprocessing.pool.Pool | None = None
_workers: set[int] = set()  # the pool's worker processes (pids)
_others: set[int] = set()  # children this process had before (not the pool's)
# pool_for(deferred=True)'s (items, initializer): workers to open once work comes
_deferred: tuple[int, Callable[[], None] | None] | None = None


def workers() -> int:
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (not Linux)
        count = os.cpu_count() or 1
    limit = os.environ.get("TOOLNEXUS_GEN_JOBS", "")
    return max(1, min(count, int(limit))) if limit.isdigit() else count


@contextmanager
def pool_for(
    items: int,
    initializer: Callable[[], None] | None = None,
    *,
    warm_few: bool = True,
    deferred: bool = False,
) -> Iterator[None]:
    """Workers for a build that makes `items` specs afresh, opened now and closed when the build
    ends: for many, one per core, forked once this process has run `initializer` (the slow
    imports); for a few, a single one that runs `initializer` while this process reads the
    specs, so their work finds it ready, or none unless `warm_few` (the work then runs in this
    process). `deferred`: the work may all be known already (a memo left by an import), so they
    are opened only when a Stream is first handed an item, if ever."""
    global _deferred
    if _pool is not None or items < 1 or workers() < 2 or (items < PARALLEL_MIN and not warm_few):
        yield
        return
    if deferred:
        _deferred = (items, initializer)
        try:
            yield
        finally:
            _deferred = None
            _stop()
        return
    _open(items, initializer)
    try:
        yield
    finally:
        # Every result is in by now; a worker still warming up for work that never came (an
        # edit that changed no model) is stopped rather than waited for.
        _stop()


def _open(items: int, initializer: Callable[[], None] | None) -> None:
    """Fork the workers (none when this process cannot fork safely)."""
    global _pool
    import multiprocessing  # only when workers start: a build that needs none never imports it

    if "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
        # Forking a process that runs other threads can deadlock a child on a lock one of them
        # held; in that case (toolnexus-gen used as a library, under a test runner) stay serial.
        return
    count = workers() if items >= PARALLEL_MIN else 1
    if count > 1 and initializer is not None:
        # For many, the slow imports are made once, here, and every worker inherits them: one
        # core's work, not one per worker, and every worker is ready as it starts. (Should they
        # fail, the workers start without them, and their work shows why.)
        with suppress(Exception):
            initializer()
        initializer = None
    _others.update(_children())
    # What this process holds is set aside from the workers' garbage collections (each has its
    # own copy, which they would otherwise walk, and touch, page by page), then given back here
    # (unless something was set aside already: build --watch's record, until it tidies again).
    thawed = gc.get_freeze_count() == 0
    gc.freeze()
    try:
        _pool = multiprocessing.get_context("fork").Pool(count, _start, (initializer,))
    finally:
        if thawed:
            gc.unfreeze()
    _workers.update(_children() - _others)


def _open_deferred() -> None:
    """Open the workers pool_for(deferred=True) held back, now that there is work for them."""
    global _deferred
    if _deferred is not None and _pool is None:
        items, initializer = _deferred
        _deferred = None
        _open(items, initializer)


def pooled() -> bool:
    """Whether workers are open: work handed to a Stream is made there, while this process
    goes on."""
    return _pool is not None


def _start(initializer: Callable[[], None] | None) -> None:
    """A worker's start: Ctrl-C is the main process's to handle (it stops the pool), so a
    terminal's Ctrl-C, sent to every process of the group, prints no worker's traceback."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the pool's terminate() ends it on the spot
    if initializer is not None:
        initializer()
        gc.freeze()  # what it imported stays: the collections go over each job's objects only


def _stop() -> None:
    global _pool
    if _pool is not None:
        _pool.terminate()
        _pool.join()
    _pool = None
    _workers.clear()
    _others.clear()


def _children() -> set[int]:
    import multiprocessing

    return {p.pid for p in multiprocessing.active_children() if p.pid is not None}


def parallel_map(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """`fn` over `items`, on the workers when they are open (else here), in order."""
    if _pool is None or not items:
        return [fn(item) for item in items]
    chunk = max(1, -(-len(items) // (workers() * 4)))
    pending = _pool.map_async(fn, items, chunksize=chunk)
    if not _wait([pending]):
        return [fn(item) for item in items]
    return pending.get()


class Stream(Generic[T, R]):
    """`fn` over items handed in one by one: on the workers, in small batches as they come (so
    they work while this process goes on), or, without workers, in `results()`."""

    BATCH = 8  # a few models' worth: the workers start early, and end together

    def __init__(self, fn: Callable[[T], R]) -> None:
        self.fn = fn
        self.items: list[T] = []
        self.sent: list[multiprocessing.pool.MapResult[R]] = []
        self.unsent = 0  # items[unsent:] are not handed out yet

    def add(self, item: T) -> None:
        self.items.append(item)
        if _pool is None and _deferred is not None:
            _open_deferred()
        if _pool is not None and len(self.items) - self.unsent >= self.BATCH:
            self._send()

    def _send(self) -> None:
        assert _pool is not None
        batch = self.items[self.unsent :]
        self.sent.append(_pool.map_async(self.fn, batch, chunksize=len(batch)))
        self.unsent = len(self.items)

    def results(
        self,
        progress: Callable[[int, int], None] | None = None,
        each: Callable[[int, R], None] | None = None,
    ) -> list[R]:
        """Every item's result, in the order added; `progress(done, total)` as they come, and
        `each(index, result)` for each result the workers hand back while this process waits
        for the others (not for those made here: nothing is waiting then)."""
        if _pool is not None and self.unsent < len(self.items):
            self._send()
        total = len(self.items)
        done: list[R] = []
        for pending in self.sent:
            if not _wait([pending]):  # a worker died: all of it is done here
                done = []
                break
            start = len(done)
            done += pending.get()
            if each is not None:
                for index in range(start, len(done)):
                    each(index, done[index])
            if progress is not None:
                progress(len(done), total)
        for item in self.items[len(done) :]:
            done.append(self.fn(item))
            if progress is not None:
                progress(len(done), total)
        return done


def _wait(pending: Sequence[multiprocessing.pool.ApplyResult[Any]]) -> bool:
    """Wait for work handed to the pool; False when a worker died meanwhile (the pool is then
    stopped, and the work is to be done in this process)."""
    for result in pending:
        while not result.ready():
            if _pool is None:  # stopped meanwhile: this work will not come back
                return False
            result.wait(0.05)
            # A worker never exits while work is pending: one that is gone (or replaced by a new
            # one) died, because its start-up failed or it was killed, and multiprocessing would
            # wait for its tasks forever. Stop the pool, so the caller does the work here, where
            # any error surfaces as usual.
            if not result.ready() and _children() - _others != _workers:
                _stop()
                return False
    return True
