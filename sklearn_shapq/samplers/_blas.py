"""Run small dense linear algebra with one BLAS thread, safely from several threads at once."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from threadpoolctl import ThreadpoolController

_lock = threading.Lock()
_active = 0  # calls inside single_threaded_blas right now, in any thread
_limiter: Any = None  # threadpoolctl's limiter while _active > 0


@functools.cache
def _blas_controller() -> ThreadpoolController:
    return ThreadpoolController()


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """One BLAS thread from the first entry to the last exit, whichever threads they come from.

    BLAS's thread count is process-wide: a plain ``limit`` per call lets a call that ends first
    restore the threads of another that is still running (whose last bits then depend on timing),
    and may leave BLAS limited for good. Counting the calls inside keeps the limit for as long as
    any runs and restores the original once, when the last one leaves.
    """
    global _active, _limiter
    with _lock:
        if _active == 0:
            _limiter = _blas_controller().limit(limits=1, user_api="blas")
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                _limiter.restore_original_limits()
                _limiter = None


def single_threaded_blas(function: Callable) -> Callable:
    """Run ``function`` with one BLAS thread.

    Greedy design steps and per-row QR factorisations are many small products and solves, for which
    BLAS threads only add wake-up latency.
    """

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with _one_blas_thread():
            return function(*args, **kwargs)

    return wrapper
