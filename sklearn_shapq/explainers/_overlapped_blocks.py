"""Work on blocks in order on two threads, so that one block's model calls run beside the previous block's kernels.

The blocks' model calls are handed back to the calling thread (:meth:`CallerThread.call`), which runs
them one at a time while it waits for the blocks: the model is called as before, from the caller's
thread with its thread-local settings (``sklearn.config_context``, ``torch.no_grad``), and what
overlaps is the estimators' work after each call (regressions, surrogate fits: numba kernels that
release the GIL). Each block's result depends on that block alone and the results come back in
order, so the values are those of working block after block. (A control variate's tables, where the
permutation explainer uses one, are computed on a third thread: ``PermutationShapExplainer._estimate``.)
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

import numba

Item = TypeVar("Item")
Result = TypeVar("Result")

BLOCKS_IN_FLIGHT = 2
"""Blocks worked on at once: one waiting for the model, one in its estimator's kernels."""


class CallerThread:
    """Run calls made on worker threads on the thread that created this object, while it waits for them.

    Examples
    --------
    >>> caller = CallerThread()
    >>> with ThreadPoolExecutor(1) as pool:
    ...     block = pool.submit(lambda: caller.call(threading.current_thread).name)
    ...     caller.serve_until(block)
    ...     block.result() == threading.current_thread().name
    True
    """

    def __init__(self) -> None:
        self._owner = threading.get_ident()
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        self.error: BaseException | None = None
        """The first error a call raised (the other blocks' calls were refused after it)."""

    def call(self, function: Callable[..., Result], *args: Any) -> Result:
        """Return ``function(*args)``, run on the owner thread (at once when called there).

        Raises
        ------
        CancelledError
            The owner stopped serving (an error or an interrupt there): the call never ran.
        """
        if threading.get_ident() == self._owner:
            return function(*args)
        reply: Future = Future()
        with self._lock:  # after close() nothing is queued: every queued call is served or refused
            if self._closed:
                raise CancelledError("the explanation stopped before this model call")
            self._requests.put((function, args, reply))
        return reply.result()

    def serve_until(self, future: Future) -> None:
        """Run the calls the workers make until ``future`` is done; on an error or interrupt, refuse the rest."""
        future.add_done_callback(lambda _: self._requests.put(None))
        try:
            while not future.done():
                request = self._requests.get()
                if request is None:
                    continue
                function, args, reply = request
                if self._closed:  # a call failed: the explanation fails, no model call runs after it
                    reply.set_exception(CancelledError("the explanation stopped before this model call"))
                elif reply.set_running_or_notify_cancel():
                    try:
                        result = function(*args)
                    except BaseException as error:  # the worker raises it; the other blocks' calls are refused
                        self.close()
                        self.error = error
                        reply.set_exception(error)
                        if not isinstance(error, Exception):  # an interrupt: raise it here too
                            raise
                    else:
                        reply.set_result(result)
        except BaseException:  # an interrupt, here or in a call
            self.close()
            raise

    def close(self) -> None:
        """Refuse every call made from now on or still waiting: the workers get :class:`CancelledError`."""
        with self._lock:
            self._closed = True
            wakeups = 0
            while True:
                try:
                    request = self._requests.get_nowait()
                except queue.Empty:
                    break
                if request is None:  # a finished block's wake-up: kept for serve_until
                    wakeups += 1
                else:
                    request[2].set_exception(CancelledError("the explanation stopped before this model call"))
            for _ in range(wakeups):
                self._requests.put(None)


def overlapped(
    work: Callable[[Item, CallerThread], Result], items: Iterable[Item], overlap: bool = True
) -> Generator[Result, None, None]:
    """Yield ``work(item, caller)`` for each item, in order, with up to :data:`BLOCKS_IN_FLIGHT` worked on at once.

    ``work`` runs on worker threads (with the caller's numba thread count) and hands its model calls
    to ``caller.call``, which runs them on the calling thread. ``overlap=False`` works on the items
    one after another in the calling thread. On an error or an interrupt, or when the caller stops
    early, no model call runs any more and the blocks in flight are waited for.

    Examples
    --------
    >>> list(overlapped(lambda block, caller: caller.call(lambda: block * 10), range(4)))
    [0, 10, 20, 30]
    """
    caller = CallerThread()
    if not overlap:
        yield from (work(item, caller) for item in items)
        return
    remaining = iter(items)
    pending: deque[Future] = deque()
    pool = ThreadPoolExecutor(
        BLOCKS_IN_FLIGHT,
        thread_name_prefix="sklearn_shapq-block",
        initializer=numba.set_num_threads,
        initargs=(numba.get_num_threads(),),
    )
    try:
        for item in remaining:
            pending.append(pool.submit(work, item, caller))
            if len(pending) == BLOCKS_IN_FLIGHT:
                break
        while pending:
            caller.serve_until(pending[0])
            try:
                result = pending.popleft().result()
            except CancelledError:  # refused after another block's model call failed: raise that error
                if caller.error is None:
                    raise
                raise caller.error from None
            for item in remaining:
                pending.append(pool.submit(work, item, caller))
                break
            yield result
    finally:
        caller.close()
        for future in pending:
            future.cancel()
        _wait_uninterrupted(pending)
        pool.shutdown()


def _wait_uninterrupted(futures: Iterable[Future]) -> None:
    """Wait for ``futures``, a second interrupt included: their model calls are refused, their kernels finish."""
    futures = list(futures)
    while True:
        try:
            wait(futures)
            return
        except KeyboardInterrupt:
            continue
