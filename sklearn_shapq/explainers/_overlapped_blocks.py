"""Work on blocks in order on two threads, so that one block's model calls run beside the previous block's kernels.

The games hold a shared lock while they call the model (:class:`~sklearn_shapq.games.InterventionalGame`'s
``model_lock``), so the model is called as before, one block at a time; what overlaps is the estimators'
work after the model calls (regressions, surrogate fits: numba kernels that release the GIL). Each
block's result depends on that block alone and the results come back in order, so the values are
those of working block after block.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

BLOCKS_IN_FLIGHT = 2
"""Blocks worked on at once: one calling the model, one in its estimator's kernels."""


def overlapped(work: Callable[[Item], Result], items: Iterable[Item], overlap: bool = True) -> Iterator[Result]:
    """Yield ``work(item)`` for each item, in order, with up to :data:`BLOCKS_IN_FLIGHT` items worked on at once.

    ``overlap=False`` works on them one after another in the calling thread. On an error, or when the
    caller stops early, the items not started are cancelled and those running are waited for, so
    that no model call outlives the explanation.

    Examples
    --------
    >>> list(overlapped(lambda block: block * 10, range(4)))
    [0, 10, 20, 30]
    """
    if not overlap:
        yield from map(work, items)
        return
    remaining = iter(items)
    pending: deque[Future] = deque()
    pool = ThreadPoolExecutor(BLOCKS_IN_FLIGHT, thread_name_prefix="sklearn_shapq-block")
    try:
        for item in remaining:
            pending.append(pool.submit(work, item))
            if len(pending) == BLOCKS_IN_FLIGHT:
                break
        while pending:
            result = pending.popleft().result()
            for item in remaining:
                pending.append(pool.submit(work, item))
                break
            yield result
    finally:
        for future in pending:
            future.cancel()
        wait(pending)
        pool.shutdown()
