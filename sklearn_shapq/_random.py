"""One random source: ``random_state`` → ``numpy.random.Generator``; never the global RNG."""

from __future__ import annotations

import numbers

import numpy as np


def make_generator(random_state: None | int | np.random.Generator | np.random.RandomState, stream: int = 0):
    """Return a ``numpy.random.Generator`` for ``random_state``.

    An int gives the same stream every call (``stream`` picks an independent one), None fresh
    entropy; a Generator or RandomState is used and advanced.

    Examples
    --------
    >>> a = make_generator(0, stream=1).random()
    >>> b = make_generator(0, stream=1).random()
    >>> a == b
    True
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative int, got {random_state}.")
        return np.random.default_rng(np.random.SeedSequence([int(random_state), stream]))
    raise TypeError(f"random_state must be None, an int, a numpy Generator or RandomState, got {type(random_state)!r}.")
