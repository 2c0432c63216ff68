"""All 2^d coalitions (bit j of the code: player j): masks, sizes, the Shapley weights μ(s), values from a table."""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

MAX_ENUMERATED_PLAYERS = 30
"""Most players whose 2^d coalitions are ever enumerated."""


def coalition_masks(codes: Any, d: int, xp: Any) -> Any:
    """Coalitions encoded as integers: bit j of ``codes[c]`` says whether player j is present.

    Examples
    --------
    >>> coalition_masks(np.array([0, 5]), 3, np).astype(int)
    array([[0, 0, 0],
           [1, 0, 1]])
    """
    bits = xp.arange(d, dtype=xp.int64)
    return ((codes[:, None] >> bits) & 1).astype(bool)


def coalition_sizes(d: int) -> np.ndarray:
    """Size of every coalition code 0 … 2^d − 1, as int8 (built by doubling, no (2^d, d) temporary)."""
    sizes = np.zeros(1, dtype=np.int8)
    for _ in range(d):
        sizes = np.concatenate([sizes, sizes + 1])
    return sizes


def shapley_weights(d: int) -> np.ndarray:
    """μ(s) = s! (d − s − 1)! / d!, the weight of a coalition of size s not containing the player.

    Examples
    --------
    >>> shapley_weights(3) * 6
    array([2., 1., 2.])
    """
    return np.array([1.0 / (d * comb(d - 1, s)) for s in range(d)])


def shapley_from_table(table: Any, xp: Any) -> Any:
    """Shapley values from the values of all 2^d coalitions.

    ``table`` (B, 2^d, n_outputs) holds v of each coding integer; returns (B, d, n_outputs).

    Examples
    --------
    >>> shapley_from_table(np.array([0.0, 1.0, 2.0, 4.0]).reshape(1, 4, 1), np)[0, :, 0]
    array([1.5, 2.5])
    """
    n_rows, n_coalitions, k = table.shape
    d = n_coalitions.bit_length() - 1
    weight = xp.asarray(np.append(shapley_weights(d), 0.0)[coalition_sizes(d)])  # size d never lacks a player
    phi = xp.empty((n_rows, d, k), dtype=table.dtype)
    for j in range(d):  # loop over players only; every coalition is handled in array code
        split = table.reshape(n_rows, n_coalitions >> (j + 1), 2, 1 << j, k)
        w = weight.reshape(n_coalitions >> (j + 1), 2, 1 << j)[:, 0]
        gains = split[:, :, 1] - split[:, :, 0]
        phi[:, j] = (w[None, :, :, None] * gains).sum(axis=(1, 2))
    return phi
