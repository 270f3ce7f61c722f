"""Spreading independent per-tool work (meta-schema checks, model generation) over the cores.

Worker processes are forked, so they start with everything the parent already imported; below
PARALLEL_MIN items, or on one core, or where fork is unavailable, the work runs in-process.
Results come back in input order, so output never depends on scheduling.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

PARALLEL_MIN = 32  # below this, starting workers costs more than it saves


def workers() -> int:
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (not Linux)
        count = os.cpu_count() or 1
    return max(1, min(count, int(os.environ.get("TOOLNEXUS_GEN_JOBS", count) or count)))


def parallel_map(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    count = workers()
    if (
        count < 2
        or len(items) < PARALLEL_MIN
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        return [fn(item) for item in items]
    context = multiprocessing.get_context("fork")
    chunk = max(1, -(-len(items) // (count * 4)))
    with context.Pool(count) as pool:
        return pool.map(fn, items, chunksize=chunk)


__all__ = ["PARALLEL_MIN", "parallel_map", "workers", "Any"]
