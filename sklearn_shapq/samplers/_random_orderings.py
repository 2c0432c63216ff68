"""Uniformly random orderings: plain Monte Carlo and antithetic (forward + reversed) pairs."""

from __future__ import annotations

import numpy as np

_CHUNK_ELEMENTS = 2**22  # uniform draws held at once while drawing orderings


def random_orderings(rng: np.random.Generator, n_sets: int, n_permutations: int, n_features: int) -> np.ndarray:
    """Draw ``n_sets`` sets of ``n_permutations`` i.i.d. uniform orderings.

    Returns
    -------
    int32 array of shape (n_sets, n_permutations, n_features)
        Each row an ordering: the order in which features join the coalition.
    """
    out = np.empty((n_sets, n_permutations, n_features), dtype=np.int32)
    per_set = max(1, n_permutations * n_features)
    step = max(1, _CHUNK_ELEMENTS // per_set)
    for start in range(0, n_sets, step):
        stop = min(start + step, n_sets)
        out[start:stop] = rng.random((stop - start, n_permutations, n_features)).argsort(axis=-1)
    return out


def antithetic_orderings(rng: np.random.Generator, n_sets: int, n_pairs: int, n_features: int) -> np.ndarray:
    """Draw ``n_sets`` sets of ``n_pairs`` antithetic pairs: an ordering, then its reverse.

    Returns
    -------
    int32 array of shape (n_sets, 2 * n_pairs, n_features)
        Orderings ``2i`` and ``2i + 1`` form pair i (``out[:, 2i + 1] == out[:, 2i, ::-1]``).
    """
    forward = random_orderings(rng, n_sets, n_pairs, n_features)
    out = np.empty((n_sets, 2 * n_pairs, n_features), dtype=np.int32)
    out[:, 0::2] = forward
    out[:, 1::2] = forward[:, :, ::-1]
    return out
