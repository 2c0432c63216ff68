"""Bandwidths of product kernels: median heuristics, shared or per feature, and explicit values."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.distance import pdist

from sklearn_shapq.backends import FACTOR_KINDS

MAX_MEDIAN_ROWS = 500
"""Median heuristics look at the pairs of at most this many evenly spaced rows."""

KERNELS = ("rbf", "laplacian")
BANDWIDTH_RULES = ("median", "median_per_feature")


def _rows_for_median(X: np.ndarray) -> np.ndarray:
    if X.shape[0] <= MAX_MEDIAN_ROWS:
        return X
    return X[np.linspace(0, X.shape[0] - 1, MAX_MEDIAN_ROWS).astype(int)]


def _exponent(values: np.ndarray) -> int:
    """Return e with max |values| · 2^−e in [0.5, 1) (0 for zeros): an exact scaling that keeps squares finite."""
    largest = float(np.max(np.abs(values))) if values.size else 0.0
    return int(np.frexp(largest)[1]) if largest > 0 else 0


def _median_pair_distance(points: np.ndarray, metric: str) -> float:
    """Median of the non-zero distances between rows of ``points`` (N, p); NaN when all rows coincide.

    Over at most :data:`MAX_MEDIAN_ROWS` evenly spaced rows (the distinct rows, weighted, when those
    coincide); distances are taken after an exact power-of-two scaling, so squares do not overflow.
    """
    rows = _rows_for_median(points)
    exponent = _exponent(rows)
    distances = pdist(np.ldexp(rows, -exponent), metric)
    distances = distances[distances > 0]
    if distances.size:
        median = np.median(distances)
    else:
        distinct, counts = np.unique(points, axis=0, return_counts=True)
        if distinct.shape[0] < 2:
            return np.nan
        keep = np.linspace(0, distinct.shape[0] - 1, min(distinct.shape[0], MAX_MEDIAN_ROWS)).astype(int)
        distinct, counts = distinct[keep], counts[keep].astype(np.float64)
        exponent = _exponent(distinct)
        distances = pdist(np.ldexp(distinct, -exponent), metric)  # distinct rows: all positive
        weights = np.outer(counts, counts)[np.triu_indices(counts.size, 1)]  # pdist's order of pairs
        order = np.argsort(distances, kind="stable")
        cumulative = np.cumsum(weights[order])
        median = distances[order][np.searchsorted(cumulative, cumulative[-1] / 2.0)]
    with np.errstate(over="ignore"):
        return float(np.ldexp(median, exponent))


def median_distance(X: np.ndarray) -> float:
    """Median Euclidean distance between distinct pairs of rows (1.0 when all rows coincide)."""
    median = _median_pair_distance(X, "euclidean")
    return 1.0 if np.isnan(median) else median


def median_distance_per_feature(X: np.ndarray) -> np.ndarray:
    """Median of the non-zero |x_aj − x_bj| over pairs, per feature (inf for a constant feature)."""
    out = np.empty(X.shape[1])
    for j in range(X.shape[1]):  # one feature at a time bounds memory to one set of pairs
        median = _median_pair_distance(X[:, j : j + 1], "cityblock")
        out[j] = np.inf if np.isnan(median) else median
    return out


def resolve_bandwidths(bandwidth: Any, X: np.ndarray, name: str, columns: Any = None) -> np.ndarray:
    """Per-feature bandwidths σ_j (d,) from a rule name, a positive number or an array of d.

    "median": one σ, the median Euclidean distance between rows; "median_per_feature": the median
    |x_aj − x_bj| of each feature (inf for a constant feature).

    Raises
    ------
    ValueError
        An array that does not hold d positive values, or a median too large for float64.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [1.0, 4.0], [2.0, 8.0]])
    >>> resolve_bandwidths("median_per_feature", X, "bandwidth").tolist()
    [1.0, 4.0]
    """
    d = X.shape[1]
    if isinstance(bandwidth, str):
        if bandwidth == "median":
            values = np.full(d, median_distance(X))
            overflow = ~np.isfinite(values)
        else:
            values = median_distance_per_feature(X)
            overflow = ~np.isfinite(values) & (X.min(axis=0) < X.max(axis=0))  # inf is right for a constant column
        if overflow.any():
            column = int(np.flatnonzero(overflow)[0])
            raise ValueError(
                f"{name}={bandwidth!r}: the median distance of column {_column_name(column, columns)} is too large "
                "for float64: rescale the columns (e.g. StandardScaler) or give the bandwidths."
            )
        return values
    values = np.asarray(bandwidth, dtype=np.float64)
    if values.ndim == 0:
        values = np.full(d, float(values))
    if values.shape != (d,) or not np.all(values > 0) or np.any(np.isnan(values)):
        raise ValueError(f"{name} must be positive: a number or an array of {d} values, got {bandwidth!r}.")
    return values


def _column_name(j: int, columns: Any) -> str:
    return repr(str(columns[j])) if columns is not None else str(j)


def unit_scaled(U: np.ndarray, bandwidths: np.ndarray, name: str, columns: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """U and σ with each column j scaled by 2^−e_j, σ_j 2^−e_j in [0.5, 1): the same kernel, without overflow.

    The scaling is exact (bit-identical factors wherever they were finite); infinite σ gives a zero column.

    Raises
    ------
    ValueError
        A column whose values divided by its bandwidth overflow float64.
    """
    finite = np.isfinite(bandwidths)
    exponents = np.frexp(np.where(finite, bandwidths, 1.0))[1]
    with np.errstate(over="ignore"):
        scaled = np.ldexp(U, -exponents)
    scaled[:, ~finite] = 0.0
    overflow = ~np.isfinite(scaled).all(axis=0)
    if overflow.any():
        column = int(np.flatnonzero(overflow)[0])
        raise ValueError(
            f"{name}: column {_column_name(column, columns)} divided by its bandwidth {float(bandwidths[column])!r} "
            f"overflows float64: give a larger {name} or rescale the column."
        )
    return scaled, np.ldexp(bandwidths, -exponents)


def kernel_factors(kernel: str, bandwidths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Factor kinds and scales of ``kernel`` in :data:`KERNELS`.

    rbf exp(−(a−b)²/(2σ²)), laplacian exp(−|a−b|/σ); σ = inf gives γ = 0.
    """
    gammas = 1.0 / (2.0 * bandwidths**2) if kernel == "rbf" else 1.0 / bandwidths
    return np.full(bandwidths.shape[0], FACTOR_KINDS[kernel], dtype=np.int8), gammas
