"""Run small dense linear algebra with one BLAS thread."""

from __future__ import annotations

import functools
from collections.abc import Callable

from threadpoolctl import ThreadpoolController


@functools.cache
def _blas_controller() -> ThreadpoolController:
    return ThreadpoolController()


def single_threaded_blas(function: Callable) -> Callable:
    """Run ``function`` with one BLAS thread.

    Greedy design steps and per-row QR factorisations are many small products and solves: BLAS
    threads only add wake-up latency (20x slower when numpy's and scipy's OpenBLAS pools compete
    for two cores).
    """

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with _blas_controller().limit(limits=1, user_api="blas"):
            return function(*args, **kwargs)

    return wrapper
