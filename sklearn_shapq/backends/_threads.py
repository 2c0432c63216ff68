"""Run a serial ``nogil`` numba kernel on disjoint ranges of work items from ``numba.get_num_threads()`` threads."""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numba

_pool: ThreadPoolExecutor | None = None
_pool_pid = -1
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():  # a forked child has no worker threads
            _pool = ThreadPoolExecutor(max(1, numba.config.NUMBA_NUM_THREADS), thread_name_prefix="sklearn_shapq")  # type: ignore[attr-defined]
            _pool_pid = os.getpid()
        return _pool


def run_ranges(call: Callable[[int, int], None], n_items: int, min_items: int = 1, ranges_per_thread: int = 1) -> None:
    """Call ``call(start, stop)`` on disjoint ranges covering ``range(n_items)``, in parallel.

    ``call(start, stop)`` is a ``nogil`` kernel; ``min_items`` is the fewest items worth a thread,
    ``ranges_per_thread`` the ranges each thread takes dynamically.

    Examples
    --------
    >>> seen = []
    >>> run_ranges(lambda start, stop: seen.extend(range(start, stop)), 10)
    >>> sorted(seen) == list(range(10))
    True
    """
    if n_items <= 0:
        return
    threads = min(numba.get_num_threads(), n_items // max(1, min_items))
    if threads <= 1:
        call(0, n_items)
        return
    n_ranges = min(n_items, threads * max(1, ranges_per_thread))
    bounds = [n_items * r // n_ranges for r in range(n_ranges + 1)]
    ranges = itertools.count()  # next() is atomic under the GIL

    def worker() -> None:
        for r in ranges:
            if r >= n_ranges:
                return
            call(bounds[r], bounds[r + 1])

    futures = [_executor().submit(worker) for _ in range(threads - 1)]
    try:
        worker()
    finally:
        for future in futures:
            future.result()
