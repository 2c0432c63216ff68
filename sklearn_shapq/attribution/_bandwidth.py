"""Bandwidths of product kernels: median heuristics, shared or per feature, and explicit values."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.distance import pdist

from sklearn_shapq.backends._product_kernel import FACTOR_KINDS

MAX_MEDIAN_ROWS = 500
"""Median heuristics look at the pairs of at most this many evenly spaced rows."""

KERNELS = ("rbf", "laplacian")
BANDWIDTH_RULES = ("median", "median_per_feature")


def _rows_for_median(X: np.ndarray) -> np.ndarray:
    if X.shape[0] <= MAX_MEDIAN_ROWS:
        return X
    return X[np.linspace(0, X.shape[0] - 1, MAX_MEDIAN_ROWS).astype(int)]


def median_distance(X: np.ndarray) -> float:
    """Median Euclidean distance between distinct pairs of rows (1.0 when all rows coincide)."""
    distances = pdist(_rows_for_median(X))
    distances = distances[distances > 0]
    return float(np.median(distances)) if distances.size else 1.0


def median_distance_per_feature(X: np.ndarray) -> np.ndarray:
    """Median of the non-zero |x_aj − x_bj| over pairs, per feature (inf for a constant feature)."""
    rows = _rows_for_median(X)
    out = np.empty(X.shape[1])
    for j in range(X.shape[1]):  # one feature at a time bounds memory to one set of pairs
        distances = pdist(rows[:, j : j + 1], "cityblock")
        distances = distances[distances > 0]
        out[j] = np.median(distances) if distances.size else np.inf
    return out


def resolve_bandwidths(bandwidth: Any, X: np.ndarray, name: str) -> np.ndarray:
    """Per-feature bandwidths σ_j (d,) from a rule name, a positive number or an array of d.

    "median" (the paper's): one σ, the median Euclidean distance between rows of X, shared by
    every feature. "median_per_feature": σ_j is the median |x_aj − x_bj| of feature j. The
    parameter's type was validated by the public class; only what depends on d is checked here.

    Raises
    ------
    ValueError
        An array that does not hold d positive values (``name`` is the parameter in the message).

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [1.0, 4.0], [2.0, 8.0]])
    >>> resolve_bandwidths("median_per_feature", X, "bandwidth").tolist()
    [1.0, 4.0]
    """
    d = X.shape[1]
    if isinstance(bandwidth, str):
        return np.full(d, median_distance(X)) if bandwidth == "median" else median_distance_per_feature(X)
    values = np.asarray(bandwidth, dtype=np.float64)
    if values.ndim == 0:
        values = np.full(d, float(values))
    if values.shape != (d,) or not np.all(values > 0) or np.any(np.isnan(values)):
        raise ValueError(f"{name} must be positive: a number or an array of {d} values, got {bandwidth!r}.")
    return values


def kernel_factors(kernel: str, bandwidths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Factor kinds and scales of ``kernel`` in :data:`KERNELS`.

    rbf exp(−(a−b)²/(2σ²)), laplacian exp(−|a−b|/σ); σ = inf gives γ = 0.
    """
    gammas = 1.0 / (2.0 * bandwidths**2) if kernel == "rbf" else 1.0 / bandwidths
    return np.full(bandwidths.shape[0], FACTOR_KINDS[kernel], dtype=np.int8), gammas
