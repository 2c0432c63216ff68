"""MMD² and HSIC as pair-weighted product games v(S) = Σ_ab W_ab Π_{j∈S} k_j(u_aj, u_bj) (Mohammadi et al. 2025).

Weight providers give W block by block of rows, so no N × N matrix is held.
"""

from __future__ import annotations

import numpy as np

_ROW_BLOCK_BYTES = 32 * 2**20


def target_kernel_rows(y: np.ndarray, rows: slice, kind: str, gamma: float) -> np.ndarray:
    """Rows of the target Gram matrix L: delta 1[y_a = y_b] or rbf exp(−γ ‖y_a − y_b‖²).

    ``y`` (N, p); returns the ``rows`` slice of L, (rows, N).
    """
    if kind == "delta":
        return np.all(y[rows, None, :] == y[None, :, :], axis=2).astype(np.float64)
    diff = y[rows, None, :] - y[None, :, :]
    return np.exp(-gamma * np.einsum("abp,abp->ab", diff, diff))


class MMDWeights:
    """Weights of MMD² between samples X (first n rows of U) and Z (last m rows).

    ``unbiased``: the U-statistic (n, m >= 2), else the V-statistic. ``row_temporaries`` counts the
    arrays of N = ``n_samples`` floats :meth:`rows` holds per row.
    """

    row_temporaries = 3

    def __init__(self, n: int, m: int, unbiased: bool) -> None:
        self.n, self.m, self.unbiased = n, m, unbiased
        self.n_samples = n + m
        self._within = (1.0 / (n * (n - 1)), 1.0 / (m * (m - 1))) if unbiased else (1.0 / n**2, 1.0 / m**2)

    def rows(self, start: int, stop: int) -> np.ndarray:
        """W[start:stop, :] as an array of shape (stop − start, N)."""
        in_x = np.arange(self.n_samples) < self.n
        block = np.where(
            in_x[start:stop, None] == in_x[None, :],
            np.where(in_x[start:stop, None], self._within[0], self._within[1]),
            -1.0 / (self.n * self.m),
        )
        if self.unbiased:
            block[np.arange(stop - start), np.arange(start, stop)] = 0.0
        return block


class HSICWeights:
    """Weights of HSIC(X, y): W = HLH/(n−1)² (biased, the paper's) or the unbiased estimator's.

    ``y`` (n, p) with target kernel ``kind`` ("delta" or "rbf" of scale ``gamma``); ``unbiased``:
    Song et al. (2012). ``row_temporaries`` as :class:`MMDWeights`'.
    """

    def __init__(self, y: np.ndarray, kind: str, gamma: float, unbiased: bool) -> None:
        self.y, self.kind, self.gamma, self.unbiased = y, kind, gamma, unbiased
        n = self.n_samples = y.shape[0]
        self.row_temporaries = 4 + y.shape[1]
        sums = np.empty(n)
        step = max(1, _ROW_BLOCK_BYTES // (8 * n * max(1, y.shape[1])))
        for start in range(0, n, step):  # row sums of L in blocks: O(n) memory
            sums[start : start + step] = self._target_rows(start, min(start + step, n)).sum(axis=1)
        if unbiased:
            sums -= 1.0  # L̃ = L without its unit diagonal
        self._row_sums = sums

    def _target_rows(self, start: int, stop: int) -> np.ndarray:
        return target_kernel_rows(self.y, slice(start, stop), self.kind, self.gamma)

    def rows(self, start: int, stop: int) -> np.ndarray:
        """W[start:stop, :] as an array of shape (stop − start, N)."""
        n, c = self.n_samples, self._row_sums
        block = self._target_rows(start, stop)
        diagonal = (np.arange(stop - start), np.arange(start, stop))
        if not self.unbiased:
            means = c / n
            return (block - means[start:stop, None] - means[None, :] + means.mean()) / (n - 1) ** 2
        block[diagonal] = 0.0
        total = c.sum()
        block += total / ((n - 1) * (n - 2)) - (c[start:stop, None] + c[None, :]) / (n - 2)
        block /= n * (n - 3)
        block[diagonal] = 0.0
        return block
