"""Kernel statistics as pair-weighted product games: MMD² and HSIC.

Both statistics are linear in the Gram matrix of a product kernel on a sample U (N rows):
statistic = Σ_ab W_ab K(u_a, u_b). Their Shapley games (Mohammadi et al. 2025, §4) are
v(S) = Σ_ab W_ab Π_{j∈S} k_j(u_aj, u_bj), with v(∅) = Σ W = 0, so attributions sum to the
statistic. A weight provider gives W block by block (rows r0 … r1 − 1 against all N columns), so
no N × N matrix is ever held beyond one block.
"""

from __future__ import annotations

import numpy as np

_ROW_BLOCK_BYTES = 32 * 2**20


def target_kernel_rows(y: np.ndarray, rows: slice, kind: str, gamma: float) -> np.ndarray:
    """Rows of the target Gram matrix L: delta 1[y_a = y_b] or rbf exp(−γ ‖y_a − y_b‖²).

    Parameters
    ----------
    y : array of shape (N, p)
    rows : slice
    kind : {"delta", "rbf"}
    gamma : float

    Returns
    -------
    array of shape (rows, N)
    """
    if kind == "delta":
        return np.all(y[rows, None, :] == y[None, :, :], axis=2).astype(np.float64)
    diff = y[rows, None, :] - y[None, :, :]
    return np.exp(-gamma * np.einsum("abp,abp->ab", diff, diff))


class MMDWeights:
    """Weights of MMD² between samples X (first n rows of U) and Z (last m rows).

    Parameters
    ----------
    n, m : int
        Sample sizes (at least 2 each for the unbiased estimator).
    unbiased : bool
        U-statistic (the paper's): 1/(n(n−1)) within X, 1/(m(m−1)) within Z, zero diagonal;
        else the V-statistic: 1/n², 1/m². Across samples −1/(nm) either way.

    Attributes
    ----------
    n_samples : int
        N = n + m.
    row_temporaries : int
        Arrays of N float64 that :meth:`rows` holds per row of its block (for block sizing).
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

    The unbiased weights (Song et al. 2012) are, for a ≠ b,
    W_ab = [L̃_ab + S/((n−1)(n−2)) − (c_a + c_b)/(n−2)] / (n(n−3)), with L̃ the target Gram matrix
    with zero diagonal, c = L̃1 and S = 1ᵀL̃1; the diagonal is zero.

    Parameters
    ----------
    y : array of shape (n, p)
    kind : {"delta", "rbf"}
        Target kernel.
    gamma : float
        Scale of the rbf target kernel.
    unbiased : bool

    Attributes
    ----------
    n_samples : int
    row_temporaries : int
        Arrays of N float64 that :meth:`rows` holds per row of its block (for block sizing): the
        target kernel's (N, p) differences and a few (N,) rows.
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
