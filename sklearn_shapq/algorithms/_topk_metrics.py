"""Tie-aware quality measures of an estimated top-k set (Kolpaczki, Nielen & Hüllermeier 2025)."""

from __future__ import annotations

from typing import Any

import numpy as np


def _border(phi: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """φ_k (the k-th largest value) and, per set, how many players are strictly above it."""
    kth = -np.sort(-phi, axis=-1)[..., k - 1]
    return kth, (phi > kth[..., None]).sum(axis=-1)


def _as_sets(phi: Any, top_k: Any) -> tuple[np.ndarray, np.ndarray, int]:
    phi = np.atleast_2d(np.asarray(phi, dtype=np.float64))
    top_k = np.atleast_2d(np.asarray(top_k, dtype=np.intp))
    n, d = np.broadcast_shapes(phi.shape[:1], top_k.shape[:1])[0], phi.shape[1]
    k = top_k.shape[1]
    if not 1 <= k <= d:
        raise ValueError(f"A top-k set must hold between 1 and d = {d} players, got {k}.")
    if top_k.size and (top_k.min() < 0 or top_k.max() >= d):
        raise ValueError(f"top-k indices must lie in [0, {d}).")
    chosen = np.zeros((n, d), dtype=bool)
    np.put_along_axis(chosen, np.broadcast_to(top_k, (n, k)), True, axis=1)
    if (chosen.sum(axis=1) != k).any():
        raise ValueError("A top-k set has repeated players.")
    return np.broadcast_to(phi, (n, d)), chosen, k


def ratio_precision(phi: Any, top_k: Any) -> np.ndarray:
    """Fraction of the set that can stay in some eligible top-k set (precision@k made tie-aware).

    ``phi`` holds the true values, (d,) or (n, d); ``top_k`` the estimated sets, (k,) or (n, k).

    Examples
    --------
    >>> ratio_precision([3.0, 2.0, 2.0, 1.0], [[0, 2], [1, 3]])
    array([1. , 0.5])
    """
    phi, chosen, k = _as_sets(phi, top_k)
    kth, n_above = _border(phi, k)
    must = (chosen & (phi > kth[:, None])).sum(axis=1)
    ties = (chosen & (phi == kth[:, None])).sum(axis=1)
    return (must + np.minimum(ties, k - n_above)) / k


def binary_precision(phi: Any, top_k: Any) -> np.ndarray:
    """1 where the set is an eligible top-k set (its values sum to the largest possible), else 0.

    Examples
    --------
    >>> binary_precision([3.0, 2.0, 2.0, 1.0], [[0, 2], [1, 2]])
    array([1., 0.])
    """
    return (ratio_precision(phi, top_k) == 1.0).astype(np.float64)


def inclusion_exclusion_error(phi: Any, top_k: Any) -> np.ndarray:
    """ε(K̂) = max(max_{i∈K̂} (φ_k − φ_i), max_{j∉K̂} (φ_j − φ_k), 0), φ_k the k-th largest value.

    0 exactly for eligible sets; the smallest ε for which the set is ε-correct.

    Examples
    --------
    >>> inclusion_exclusion_error([3.0, 2.0, 2.0, 1.0], [[1, 2], [0, 3]])
    array([1., 1.])
    """
    phi, chosen, k = _as_sets(phi, top_k)
    kth = _border(phi, k)[0][:, None]
    inside = np.where(chosen, kth - phi, -np.inf).max(axis=1)
    outside = np.where(chosen, -np.inf, phi - kth).max(axis=1)
    return np.maximum(np.maximum(inside, outside), 0.0)
