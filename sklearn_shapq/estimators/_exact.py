"""Exact Shapley values by enumerating all 2^d coalitions."""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from sklearn_shapq.estimators._permutation_walk import DEFAULT_MASK_BYTES

MAX_EXACT_FEATURES = 30


def coalition_masks(codes: Any, d: int, xp: Any) -> Any:
    """Coalitions encoded as integers: bit j of ``codes[c]`` says whether feature j is present."""
    bits = xp.arange(d, dtype=xp.int64)
    return ((codes[:, None] >> bits) & 1).astype(bool)


def coalition_sizes(d: int) -> np.ndarray:
    """Size of every coalition code 0 … 2^d − 1, as int8 (built by doubling, no (2^d, d) temporary)."""
    sizes = np.zeros(1, dtype=np.int8)
    for _ in range(d):
        sizes = np.concatenate([sizes, sizes + 1])
    return sizes


def shapley_weights(d: int) -> np.ndarray:
    """w[s] = s! (d − s − 1)! / d!, the weight of a coalition of size s not containing the player."""
    return np.array([1.0 / (d * comb(d - 1, s)) for s in range(d)])


def shapley_from_table(table: Any, xp: Any) -> Any:
    """Shapley values from the values of all 2^d coalitions.

    Parameters
    ----------
    table : array of shape (B, 2^d, k)
        ``table[:, c]`` is v of the coalition encoded by integer c (bit j ↔ feature j).

    Returns
    -------
    array of shape (B, d, k)
    """
    n_rows, n_coalitions, k = table.shape
    d = n_coalitions.bit_length() - 1
    weight = xp.asarray(np.append(shapley_weights(d), 0.0)[coalition_sizes(d)])  # size d never lacks a player
    phi = xp.empty((n_rows, d, k), dtype=table.dtype)
    for j in range(d):  # loop over features only; every coalition is handled in array code
        split = table.reshape(n_rows, n_coalitions >> (j + 1), 2, 1 << j, k)
        w = weight.reshape(n_coalitions >> (j + 1), 2, 1 << j)[:, 0]
        gains = split[:, :, 1] - split[:, :, 0]
        phi[:, j] = (w[None, :, :, None] * gains).sum(axis=(1, 2))
    return phi


def exact_shapley(game: Any, x: Any, full_value: Any, *, max_mask_bytes: int = DEFAULT_MASK_BYTES) -> Any:
    """Exact Shapley values of each explained row's game, from all 2^d coalitions.

    Costs 2^d − 2 new evaluations of v per row (v(∅) and v(N) are cached).

    Parameters
    ----------
    game : callable
        ``game(x, masks)`` with masks (B, C, d) → (B, C, k); has ``empty_value`` (k,).
    x : array of shape (B, d)
    full_value : array of shape (B, k)

    Returns
    -------
    array of shape (B, d, k)
    """
    xp = game.backend.xp
    n_rows, d = x.shape
    if d > MAX_EXACT_FEATURES:
        raise ValueError(f"Exact enumeration of 2^{d} coalitions is not feasible; use a sampler.")
    n_coalitions = 1 << d
    k = int(full_value.shape[1])
    table = xp.empty((n_rows, n_coalitions, k), dtype=full_value.dtype)
    table[:, 0] = game.empty_value
    table[:, -1] = full_value
    step = max(1, max_mask_bytes // max(1, 8 * n_rows * d))  # masks are decoded through int64
    for start in range(1, n_coalitions - 1, step):
        stop = min(start + step, n_coalitions - 1)
        masks = coalition_masks(xp.arange(start, stop, dtype=xp.int64), d, xp)
        table[:, start:stop] = game(x, xp.broadcast_to(masks, (n_rows, stop - start, d)))
    return shapley_from_table(table, xp)
