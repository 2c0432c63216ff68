"""Leverage SHAP with a cross-fitted control variate: a tree surrogate, less its linear part (its exact Shapley values).

A regression adjustment with cross-fitting on the coalitions Leverage SHAP already evaluated (no extra
model evaluations); design notes in ``doc/architecture.md``, figures in the user guide.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from sklearn_shapq._registry import register
from sklearn_shapq.algorithms._leverage import (
    ENUMERATED_CLASS_SIZE,
    LeverageAlgorithm,
    class_capacities,
    jackknife_stderr,
)
from sklearn_shapq.algorithms._oblivious_boosting import (
    BoostingSettings,
    fit_oblivious_boosting,
    oblivious_shapley,
)
from sklearn_shapq.algorithms._registry import RowParts, ShapleyEstimate

SURROGATE = BoostingSettings(n_trees=15, depth=5, learning_rate=0.5, l2=1.0)
"""The surrogate's trees: on :data:`SURROGATE_FOLDS` folds, 15 trees matched 25 with two folds in time and beat
them in error; shallower ones lose (``benchmarks/bench_leverage_variants.py``, the user guide)."""

MIN_SAMPLED_PAIRS = 10
"""Fewest sampled pairs (one per jackknife group) for the control variate; below, the plain regression
(``benchmarks/bench_leverage_variants.py --small-budgets``)."""

SURROGATE_FOLDS = 5
"""Folds of the surrogates' cross-fitting: each pair is corrected by the surrogate fitted on the other folds
(five fits per row and output, each on 4/5 of the pairs: 0.67-0.93x the error of two folds, once 1.08x, at
1.0-1.02x the time; ten folds of 25 trees 0.5-0.9x at 1.5-1.8x the CPU time; the user guide)."""

STDERR_WIDENING = 1.25
"""Factor on the jackknife standard errors, which hold the other folds' surrogates fixed
(coverage checked in ``tests/algorithms/test_leverage.py``)."""


@register
class LeverageControlVariateAlgorithm(LeverageAlgorithm):
    """Algorithm "leverage_cv": Leverage SHAP on the game minus a cross-fitted tree surrogate less its linear part.

    Coalitions, budget and refusals are :class:`LeverageAlgorithm`'s; the surrogates cost no evaluations.

    Examples
    --------
    >>> from sklearn_shapq.games import CallableGame
    >>> def value(masks):  # an interaction of order 3 and a main effect
    ...     return (masks[:, 0] & masks[:, 1] & masks[:, 2]) * 3.0 + masks[:, 3]
    >>> keys, exact = np.array([7], dtype=np.uint64), np.r_[1.0, 1.0, 1.0, 1.0, np.zeros(6)]
    >>> plain = LeverageAlgorithm(200, 10, 0)
    >>> for estimator in (plain, LeverageControlVariateAlgorithm(200, 10, 0)):
    ...     phi = estimator.estimate(CallableGame(value, 10), np.array([0]), keys).values[0, :, 0]
    ...     print(estimator.name, round(float(np.abs(phi - exact).max()), 3), round(float(phi.sum()), 12))
    leverage 0.105 4.0
    leverage_cv 0.023 4.0
    """

    name = "leverage_cv"

    @staticmethod
    def row_bytes(n_coalitions: int, d: int, n_outputs: int) -> int:
        """Leverage SHAP's, and the surrogates' targets, weights and fits (the array path's one-hot node sums)."""
        problems = n_outputs * SURROGATE_FOLDS
        surrogate = 8 * n_coalitions * problems * (2 ** (SURROGATE.depth + 1) + 16) + 8 * n_coalitions * (d + 1)
        return LeverageAlgorithm.row_bytes(n_coalitions, d, n_outputs) + surrogate

    def estimate(self, game: Any, games: Any, keys: np.ndarray, parts: RowParts | None = None) -> ShapleyEstimate:
        """Leverage SHAP's regression, the surrogates of each fold, and the regression of the corrected values."""
        masks, values, total = self._evaluate(game, games, keys, parts)
        xp = game.backend.xp
        design = self._design(masks, game.backend)
        phi, stderr, leave_out = self._regress(design, values, total)
        if leave_out is None or not self._fits_surrogates():  # Leverage SHAP
            return self._estimate(phi, stderr)
        folds = self._surrogate_folds()
        _, _, fold_linear = self._regress(replace(design, groups=folds + 1), values, total)  # without each fold
        own_fold, mean_fold = self._surrogates(masks, values, total, fold_linear, folds, game.backend)
        drawn = xp.asarray(self._drawn_fraction().repeat(2))[None, :, None]  # π of each coalition's class
        corrected = values - (1 - drawn) * own_fold - drawn * mean_fold
        # one regression for both: the corrected values (the estimate) and the cross-fitted ones (each
        # pair corrected by the surrogate that never saw it), whose jackknife over the groups of pairs
        # gives the errors, the surrogates held fixed (hence the widening); the surrogates' Shapley
        # values are zero, so the totals are the game's
        both, _, leave_out_both = self._regress(
            design, xp.concatenate([corrected, values - own_fold], axis=2), xp.concatenate([total, total], axis=1)
        )
        n_outputs = values.shape[2]
        phi, residual_replicates = both[..., :n_outputs], leave_out_both[..., n_outputs:]
        return self._estimate(phi, STDERR_WIDENING * jackknife_stderr(residual_replicates, xp))

    def _fits_surrogates(self) -> bool:
        """Return whether the rows have the :data:`MIN_SAMPLED_PAIRS` the control variate needs."""
        return bool(self.sampled_pairs.sum() >= MIN_SAMPLED_PAIRS)

    def _operations_after_evaluation(self) -> tuple[str, ...]:
        """Return Leverage SHAP's regression, and the surrogates' fit where they are fitted."""
        return ("paired_regression", "fit_oblivious_trees") if self._fits_surrogates() else ("paired_regression",)

    def _surrogate_folds(self) -> np.ndarray:
        """Fold of each pair in the surrogates' cross-fitting: its jackknife group modulo :data:`SURROGATE_FOLDS`."""
        group = self._jackknife_groups()
        return np.where(group >= 0, group % SURROGATE_FOLDS, -1)

    def _surrogates(
        self, masks: Any, values: Any, total: Any, fold_linear: Any, folds: np.ndarray, backend: Any
    ) -> tuple[Any, Any]:
        """g_k(S) of each coalition's fold and ḡ(S) = mean_k g_k(S), (B, 2P, n_outputs).

        Surrogate f_k fits, on the pairs of the other folds, the odd part of the values less the linear
        fit without fold k (``fold_linear``, (B, K, d, n_outputs)). g_k is its odd part less its own
        linear part, Σ_{i ∈ S} φ_i(f_k) made odd: a game whose Shapley values are zero, so that the
        folds' differing linear parts never enter the estimate; the regression fits the linear part
        from every pair.
        """
        xp = backend.xp
        rows, n_coalitions, d = masks.shape
        n_outputs, n_folds = values.shape[2], fold_linear.shape[1]
        sizes = masks.sum(axis=2, keepdims=True)
        odd_targets = _odd_part(values, xp) - (2 * sizes - d) * total[:, None, :] / (2 * d)
        centred = masks.astype(xp.float64) - sizes / d
        fitted = xp.einsum("bci,bgik->bckg", centred, fold_linear)  # the out-of-fold linear fits, (B, 2P, k, K)
        residuals = (odd_targets[..., None] - fitted).reshape(rows, n_coalitions, n_outputs * n_folds)
        group = xp.asarray(folds.repeat(2))  # fold of each coalition; -1: listed whole
        training = (group[:, None] != xp.arange(n_folds)).astype(xp.float64)  # (2P, K)
        weights = xp.broadcast_to(training[None, :, None, :], (rows, n_coalitions, n_outputs, n_folds))
        weights = weights.reshape(rows, n_coalitions, n_outputs * n_folds)
        ensemble = fit_oblivious_boosting(masks, residuals, weights, SURROGATE, backend)
        fold_phi = oblivious_shapley(ensemble, d, xp).reshape(rows, n_outputs * n_folds, d)  # φ(f_k)
        own_linear = xp.einsum("bci,bmi->bcm", masks.astype(xp.float64) - 0.5, fold_phi)  # odd part of Σ_{i∈S} φ_i
        odd_fit = (_odd_part(ensemble.predictions, xp) - own_linear).reshape(rows, n_coalitions, n_outputs, n_folds)
        fold_index = xp.broadcast_to(xp.maximum(group, 0)[None, :, None, None], (rows, n_coalitions, n_outputs, 1))
        mean_fold = odd_fit.mean(axis=3)
        own_fold = xp.where(
            group[None, :, None] >= 0, xp.take_along_axis(odd_fit, fold_index, axis=3)[..., 0], mean_fold
        )
        return own_fold, mean_fold

    def _drawn_fraction(self) -> np.ndarray:
        """π of each pair: 1 for classes listed whole, n_t / C_t drawn without replacement, 0 drawn independently."""
        capacity = class_capacities(self.n_players)
        without_replacement = (capacity <= ENUMERATED_CLASS_SIZE) | (self.pairs == capacity)
        return np.repeat(np.where(without_replacement, self.pairs / capacity, 0.0), self.pairs)


def _odd_part(values: Any, xp: Any) -> Any:
    """(u(S) − u(N ∖ S)) / 2 at each coalition of ``values`` (B, 2P, …), laid out in pairs (S, N ∖ S)."""
    paired = values.reshape(values.shape[0], -1, 2, *values.shape[2:])
    half = (paired[:, :, 0] - paired[:, :, 1]) / 2
    return xp.stack([half, -half], axis=2).reshape(values.shape)
