"""The Mallows kernel on rank vectors, its uniform mean, and the discrepancy (Mitchell et al. 2022, Eq. 8)."""

from __future__ import annotations

import math

import numba
import numpy as np

DEFAULT_LAMBDA = 4.0
"""Mallows bandwidth λ of the paper (its reference code used 5)."""


def sign_features(orderings: np.ndarray) -> np.ndarray:
    """±1 features of feature pairs: ``F[:, (i, j)] = sign(r_i − r_j)`` for i < j on rank vectors.

    Orderings (n, d) → (n, C), C = d (d − 1) / 2: a Gram matrix of Kendall distances is one
    product, n_dis = (C − F_a · F_b) / 2. float32 while C < 2^24 (exact), else float64.
    """
    orderings = check_orderings(orderings)
    n, d = orderings.shape
    n_pairs = d * (d - 1) // 2
    out = np.empty((n, n_pairs), dtype=np.float32 if n_pairs < 2**24 else np.float64)
    _pair_signs(orderings, out)
    return out


def check_orderings(orderings: np.ndarray) -> np.ndarray:
    """Return ``orderings`` as a C-contiguous int64 (n, d) array; every row must permute 0 … d − 1."""
    array = np.atleast_2d(np.asarray(orderings))
    if array.ndim != 2 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"orderings must be a 2-d integer array, got {array.dtype} of shape {array.shape}.")
    if not (np.sort(array, axis=1) == np.arange(array.shape[1])).all():
        raise ValueError("Every row of orderings must be a permutation of 0 … d − 1.")
    return np.ascontiguousarray(array, dtype=np.int64)


@numba.njit(cache=True)
def _pair_signs(orderings: np.ndarray, out: np.ndarray) -> None:
    n, d = orderings.shape
    ranks = np.empty(d, dtype=np.int64)
    for row in range(n):
        for position in range(d):
            ranks[orderings[row, position]] = position
        column = 0
        for i in range(d):
            for j in range(i + 1, d):
                out[row, column] = 1.0 if ranks[i] > ranks[j] else -1.0
                column += 1


def gram_from_features(features_a: np.ndarray, features_b: np.ndarray, lam: float) -> np.ndarray:
    """Mallows Gram matrix exp(−λ n_dis / C) from :func:`sign_features` blocks (float64)."""
    n_pairs = features_a.shape[1]
    if n_pairs == 0:
        return np.ones((features_a.shape[0], features_b.shape[0]))
    agreement = (features_a @ features_b.T).astype(np.float64)
    return np.exp(-lam * (n_pairs - agreement) / (2.0 * n_pairs))


def mallows_kernel(orderings_a: np.ndarray, orderings_b: np.ndarray, lam: float = DEFAULT_LAMBDA) -> np.ndarray:
    """Gram matrix of the normalised Mallows kernel K(σ, σ′) = exp(−λ n_dis(σ, σ′) / C).

    n_dis is the Kendall distance of the rank vectors and C = d (d − 1) / 2. Orderings (n_a, d)
    and (n_b, d) give (n_a, n_b); ``lam`` is λ >= 0.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0, 1, 2, 3]])
    >>> float(mallows_kernel(p, p[:, ::-1])[0, 0]) == float(np.exp(-4.0))
    True
    """
    orderings_a, orderings_b = np.atleast_2d(orderings_a), np.atleast_2d(orderings_b)
    if orderings_a.shape[1] != orderings_b.shape[1]:
        raise ValueError("Both sets of orderings must have the same number of features.")
    return gram_from_features(sign_features(orderings_a), sign_features(orderings_b), check_lambda(lam))


def mallows_mean(n_features: int, lam: float = DEFAULT_LAMBDA) -> float:
    """E_{σ′ ~ uniform} K(σ, σ′), the same for every σ.

    μ_d(λ) = Π_{j=1}^{d} (1 − e^{−λ j / C}) / (j (1 − e^{−λ / C})), in log space.

    Examples
    --------
    >>> round(mallows_mean(10), 6)
    0.153035
    """
    d = int(n_features)
    if d < 2:
        return 1.0
    x = check_lambda(lam) / (d * (d - 1) / 2.0)
    if x == 0.0:
        return 1.0
    j = np.arange(1, d + 1)
    log_terms = np.log(-np.expm1(-x * j)) - np.log(j) - math.log(-math.expm1(-x))
    return float(np.exp(log_terms.sum()))


def discrepancy(orderings: np.ndarray, weights: np.ndarray | None = None, *, lam: float = DEFAULT_LAMBDA) -> float:
    """Discrepancy D(Π, w) of a weighted set of orderings against the uniform law (the paper's Eq. 8).

    D² = μ (1 − 2 Σ w) + wᵀ K w, with μ = :func:`mallows_mean`; ``|estimate − truth| <= D · ‖f‖_K``
    for any f on permutations.

    ``orderings`` (n, d); ``weights`` (n,) or None for 1/n each.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0, 1, 2], [2, 1, 0]])
    >>> round(discrepancy(p), 4) == round(float(np.sqrt((1 + np.exp(-4.0)) / 2 - mallows_mean(3))), 4)
    True
    """
    orderings = np.atleast_2d(orderings)
    n, d = orderings.shape
    w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},), got {w.shape}.")
    features = sign_features(orderings)
    gram = gram_from_features(features, features, check_lambda(lam))
    squared = mallows_mean(d, lam) * (1.0 - 2.0 * w.sum()) + w @ gram @ w
    return math.sqrt(max(float(squared), 0.0))


def check_lambda(lam: float) -> float:
    """Return the Mallows bandwidth as a float; it must be finite and >= 0."""
    lam = float(lam)
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"The Mallows bandwidth lam must be a finite number >= 0, got {lam}.")
    return lam
