"""Uniform orderings from the keyed bijective generator, addressed by (seed, counter).

Ordering number ``c`` of a seed is the VariablePhilox permutation keyed by (seed, c): any block of
counters can be generated on its own, in any order, on the cpu or the cuda backend, and gives the
same orderings bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import ndtri

from sklearn_shapq.backends import resolve_backend
from sklearn_shapq.backends._feistel import ROUNDS, ordering_keys


def keyed_orderings(seed: int, counters: Any, n_features: int, backend: Any = None) -> Any:
    """Uniform orderings number ``counters`` of ``seed``.

    Parameters
    ----------
    seed : int
        In [0, 2^64).
    counters : int array of shape (P,)
        Global ordering numbers, on the backend's device.
    n_features : int
    backend : backend or None
        None means the cpu backend.

    Returns
    -------
    int32 array of shape (P, n_features) on the backend

    Examples
    --------
    >>> import numpy as np
    >>> a = keyed_orderings(7, np.arange(3), 5)
    >>> b = keyed_orderings(7, np.arange(2, 3), 5)
    >>> bool((a[2] == b[0]).all()), sorted(a[0].tolist())
    (True, [0, 1, 2, 3, 4])
    """
    backend = resolve_backend("cpu") if backend is None else backend
    counters = backend.xp.asarray(counters, dtype=backend.xp.uint64).reshape(-1)
    return backend.keyed_orderings(ordering_keys(seed, counters, backend.xp), n_features)


def draw_seed(rng: np.random.Generator) -> int:
    """Draw a 64-bit generator seed from ``rng``."""
    return int(rng.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True))


def counter_normals(seed: int, counters: np.ndarray, size: int) -> np.ndarray:
    """``size`` standard normal numbers for each counter, from (seed, counter) alone (host numpy).

    The 32-bit words of :func:`~sklearn_shapq.backends._feistel.ordering_keys` (SplitMix64 outputs)
    are paired into 53-bit uniforms in (0, 1) and mapped through the normal inverse CDF.

    Returns
    -------
    float64 ndarray of shape (len(counters), size)
    """
    keys_per_counter = -(-2 * size // ROUNDS)
    expanded = (np.asarray(counters, dtype=np.int64)[:, None] * keys_per_counter + np.arange(keys_per_counter)).ravel()
    words = ordering_keys(seed, expanded).reshape(len(counters), -1)[:, : 2 * size].astype(np.uint64)
    mantissa = (words[:, 0::2] << np.uint64(21)) ^ (words[:, 1::2] >> np.uint64(11))  # 53 random bits
    return ndtri((mantissa.astype(np.float64) + 0.5) / 2.0**53)
