"""Work spread over worker processes comes back complete and in order, and a worker that dies
(killed, or failing at start-up) never hangs the build: the work is then done in-process. Work
is handed out item by item as a build finds it (Stream).

Each case runs in a fresh interpreter: the pool only forks from a single-threaded process, and
the test runner's process may have threads by then.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT

SCENARIO = """
import os, signal, sys
from toolnexus_gen import parallel

PARENT = os.getpid()
parallel.workers = lambda: 2  # two workers, whatever this machine has

def square(n):
    return n * n

def die_in_a_worker(n):
    if os.getpid() != PARENT and n == 7:
        os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
    return n * n

def broken_start():
    raise ImportError("datamodel-code-generator is broken")  # a worker's start-up failing

def streamed(fn, items):
    stream = parallel.Stream(fn)
    for item in items:
        stream.add(item)
    return stream.results()

fn, items, start = {fn}, {items}, {start}
with parallel.pool_for(items, start):
    assert parallel._pool is not None, "the case must run on real workers"
    assert streamed(fn, list(range(items))) == [n * n for n in range(items)]
print("ok")
"""


@pytest.mark.parametrize(
    ("fn", "items", "start"),
    [
        ("square", 100, "None"),  # results in order, from the workers
        ("die_in_a_worker", 100, "None"),  # a worker killed mid-task
        ("square", 1, "broken_start"),  # the one warm worker fails to start
        ("square", 100, "broken_start"),  # for many, the start-up runs before the fork, and fails
    ],
)
def test_the_work_completes_whatever_happens_to_the_workers(
    fn: str, items: int, start: str
) -> None:
    code = textwrap.dedent(SCENARIO).format(fn=fn, items=items, start=start)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


FROZEN = """
import gc
from toolnexus_gen import parallel

parallel.workers = lambda: 2

def warm():
    import json  # what a worker's start-up imports: set aside in the worker once it is done

def frozen_in_a_worker(_):
    return gc.get_freeze_count()

def streamed(fn, items):
    stream = parallel.Stream(fn)
    for item in items:
        stream.add(item)
    return stream.results()

gc.unfreeze()
with parallel.pool_for(100, warm):
    assert parallel._pool is not None, "the case must run on real workers"
    assert gc.get_freeze_count() == 0  # a build's own objects stay collectable here
    assert all(streamed(frozen_in_a_worker, list(range(16))))  # and not there
gc.freeze()  # what build --watch sets aside while idle
kept = gc.get_freeze_count()
with parallel.pool_for(100, warm):
    assert gc.get_freeze_count() >= kept  # still set aside
print("ok")
"""


def test_workers_collect_garbage_without_walking_what_they_inherit() -> None:
    """The objects a worker inherits, and those its start-up made, are set aside from its
    collections (gc.freeze); this process gets back what it had."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(FROZEN)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


ONCE = """
import os, sys
from toolnexus_gen import parallel

parallel.workers = lambda: 2
PARENT = os.getpid()
ran = []

def start():
    ran.append(os.getpid())  # in a worker, its own list: never seen here

def where(_):
    return os.getpid(), list(ran)

for items in (100, 1):
    ran.clear()
    with parallel.pool_for(items, start):
        assert parallel._pool is not None, "the case must run on real workers"
        stream = parallel.Stream(where)
        for n in range(16):
            stream.add(n)
        seen = stream.results()
    pids = {pid for pid, _ in seen}
    assert PARENT not in pids
    if items == 100:  # many: imported once, here, and inherited by every worker
        assert ran == [PARENT] and all(got == [PARENT] for _, got in seen), (ran, seen)
    else:  # a few: the one worker imports while this process reads the specs
        assert ran == [] and all(got == [pid] for pid, got in seen), (ran, seen)
print("ok")
"""


def test_the_slow_start_up_runs_once_for_many_and_on_the_worker_for_a_few() -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(ONCE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
