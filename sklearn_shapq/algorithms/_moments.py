"""Running count, mean and sum of squared deviations, merged with Chan et al.'s pairwise formula."""

from __future__ import annotations

from typing import Any

import numpy as np


class RunningMoments:
    """Count, mean and sum of squared deviations (M2) of the samples of every cell of an array.

    ``count``, ``mean`` and ``m2`` are arrays of ``shape`` in namespace ``xp``.

    Examples
    --------
    >>> moments = RunningMoments((2,))
    >>> moments.merge(*RunningMoments.of(np.array([[1.0, 0.0], [3.0, 0.0]]), axis=0))
    >>> moments.merge(*RunningMoments.of(np.array([[5.0, 0.0]]), axis=0))
    >>> moments.mean, moments.variance()
    (array([3., 0.]), array([4., 0.]))
    """

    def __init__(self, shape: tuple[int, ...], xp: Any = np) -> None:
        self.xp = xp
        self.count = xp.zeros(shape, dtype=xp.float64)
        self.mean = xp.zeros(shape, dtype=xp.float64)
        self.m2 = xp.zeros(shape, dtype=xp.float64)

    @staticmethod
    def of(samples: Any, axis: int) -> tuple[Any, Any, Any]:
        """Count, mean and M2 (two-pass) of ``samples`` along ``axis``, ready for :meth:`merge`."""
        count = samples.shape[axis]
        mean = samples.mean(axis=axis)
        deviation = samples - samples.mean(axis=axis, keepdims=True)
        return count, mean, (deviation * deviation).sum(axis=axis)

    def merge(self, count: Any, mean: Any, m2: Any, where: Any = None) -> None:
        """Merge the statistics of new samples (optionally only into the cells ``where``, a row index)."""
        target = (slice(None),) if where is None else (where,)
        count_a, mean_a, m2_a = self.count[target], self.mean[target], self.m2[target]
        total = count_a + count
        share = count / self.xp.maximum(total, 1)
        delta = mean - mean_a
        self.mean[target] = mean_a + delta * share
        self.m2[target] = m2_a + m2 + delta * delta * count_a * share
        self.count[target] = total

    def subset(self, index: Any) -> RunningMoments:
        """Return the statistics of some cells along the first axis (a copy)."""
        part = RunningMoments((0,), self.xp)
        part.count, part.mean, part.m2 = self.count[index], self.mean[index], self.m2[index]
        return part

    def variance(self, undefined: float = 0.0) -> Any:
        """Return the unbiased variance of one sample; ``undefined`` below two samples."""
        xp = self.xp
        variance = xp.maximum(self.m2, 0.0) / xp.maximum(self.count - 1, 1)
        return xp.where(self.count > 1, variance, undefined)

    def stderr(self, undefined: float = 0.0) -> Any:
        """Return the standard error of the mean; ``undefined`` below two samples."""
        xp = self.xp
        return xp.where(self.count > 1, xp.sqrt(self.variance() / xp.maximum(self.count, 1)), undefined)


def satterthwaite_dof(total_variance: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Degrees of freedom of a sum of independent variance estimates (Welch-Satterthwaite).

    (Σ_p V_p)² / Σ_p (V_p² / ν_p), for parts p with variances V_p and degrees of freedom ν_p.

    ``total_variance`` is Σ_p V_p and ``spread`` Σ_p V_p² / ν_p, each of shape (n,); inf where the
    spread is zero.

    Examples
    --------
    >>> satterthwaite_dof(np.array([4.0]), np.array([4 * 1.0**2 / 9]))  # four equal parts of 9 dof
    array([36.])
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(spread > 0, total_variance**2 / spread, np.inf)
