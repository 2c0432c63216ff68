"""A row's Shapley estimate from those of its background parts' games (their mean, Welch-Satterthwaite dof)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.algorithms._moments import satterthwaite_dof
from sklearn_shapq.algorithms._registry import ShapleyEstimate


class BackgroundPartsMerge:
    """Merge the estimates of every row's ``parts`` games into the row's estimate, in any order of blocks.

    A row's game split by equal parts of the background is the mean of its parts' games, so its
    values are the mean of theirs, its variances the sum of theirs over parts², and its degrees of
    freedom Welch-Satterthwaite's; its evaluations are the most any part used.

    Parameters
    ----------
    n_rows, n_players, n_outputs : int
    parts : int
        Games per row.

    Examples
    --------
    >>> merge = BackgroundPartsMerge(1, 1, 1, parts=2)
    >>> ones = np.ones((2, 1, 1))
    >>> merge.add(np.array([0, 0]), ShapleyEstimate(ones, ones, np.array([9.0, 9.0]), np.array([5, 5])))
    >>> estimate = merge.result()
    >>> estimate.values.ravel(), estimate.stderr.ravel() ** 2, estimate.dof, estimate.n_evals
    (array([1.]), array([0.5]), array([18.]), array([5]))
    """

    def __init__(self, n_rows: int, n_players: int, n_outputs: int, parts: int) -> None:
        self.parts = parts
        self.values = np.zeros((n_rows, n_players, n_outputs))
        self.variance = np.zeros((n_rows, n_players, n_outputs))
        self.spread = np.zeros(n_rows)
        self.n_evals = np.zeros(n_rows, dtype=np.int64)

    def add(self, row_of: np.ndarray, estimate: ShapleyEstimate, backend: Any = None) -> None:
        """Add the estimates of games (B,) that belong to rows ``row_of`` (B,); ``backend`` moves them to the host."""
        to_numpy = np.asarray if backend is None else backend.to_numpy
        part_variance = to_numpy(estimate.stderr) ** 2
        np.add.at(self.values, row_of, to_numpy(estimate.values))
        np.add.at(self.variance, row_of, part_variance)
        with np.errstate(divide="ignore", invalid="ignore"):  # inf dof: exact parts
            np.add.at(self.spread, row_of, part_variance.reshape(len(row_of), -1).sum(axis=1) ** 2 / estimate.dof)
        np.maximum.at(self.n_evals, row_of, estimate.n_evals)

    def result(self) -> ShapleyEstimate:
        """Return the rows' estimates: values and standard errors (n_rows, n_players, n_outputs), dof, n_evals."""
        n_rows = self.values.shape[0]
        dof = satterthwaite_dof(self.variance.reshape(n_rows, -1).sum(axis=1), self.spread)
        return ShapleyEstimate(self.values / self.parts, np.sqrt(self.variance) / self.parts, dof, self.n_evals)
