"""Leverage SHAP with a cross-fitted control variate: a tree surrogate whose Shapley values are exact.

Not in the literature as such: the regression adjustment of spec/regression_estimators.md §5 with
cross-fitting, on the coalitions Leverage SHAP already evaluated (no extra model evaluations).

Design decisions
----------------
* **What the regression cannot see.** With complementary pairs, Leverage SHAP regresses the odd
  part o(S) = (v(S) − v(N ∖ S)) / 2 on the centred masks: its error is the part of o that is not
  linear in the mask. A surrogate of that part, subtracted from the game and added back through
  its exact Shapley values, leaves the regression a game closer to linear.
* **Cross-fitting.** The folds are the jackknife groups of the sampled pairs. For fold g: the
  linear fit without g's pairs (the jackknife's leave-out solution), its residuals on the other
  pairs' coalitions (S and N ∖ S, the residual is odd), and boosted oblivious trees h_g fitted to
  them (:mod:`._oblivious_boosting`). The odd surrogate f_g(S) = (h_g(S) − h_g(N ∖ S)) / 2 has
  φ(f_g) = φ(h_g), exact. The pairs of fold g are corrected by f_g, which never saw them; pairs of
  classes listed whole (no sample) by the mean f̄ of the folds.
* **Draws without replacement.** Leverage SHAP draws a class's pairs without replacement, so
  fold g's pairs are a sample of the class less the other folds' pairs, which are f_g's training
  pairs, where f_g fits best: corrected by f_g alone, a bias remained that grew with the share π_t
  = n_t / C_t of class t that is drawn (at d = 8, 0.3-0.6x the estimate's RMSE). The
  finite-population correction: the class's sum is the other folds' known part plus (1 − π_t)
  times an estimate of the rest, so a pair of class t is corrected by
  (1 − π_t) f_g(S) + π_t f̄(S). With π_t = 0 (independent draws) that is cross-fitting, with
  π_t = 1 (the class listed whole) the mean surrogate. The corrected right-hand side of the
  regression is unbiased when every fold holds n_t / G of the class's pairs, a random part of
  them (a row's pairs come in the order of its keyed draws and the folds take them round-robin;
  in listing order the bias on the game below, at d = 8 and 220 evaluations, was 0.24 of the
  RMSE, in draw order 0.22); what remains is the part of unequal fold shares (classes with few
  pairs), and the ratio bias of a regression on a random design, which Leverage SHAP has too.
  Measured on a tanh + order-4 + exp game (300 draws, d = 8-10): the mean error was no larger
  than Leverage SHAP's own, and the RMSE fell too (0.26 → 0.15x Leverage SHAP's at d = 8, 220
  evaluations).
* **Estimate.** φ = φ_LS(v − f) + φ(f̄): Leverage SHAP of the corrected values with total
  v(N) − v(∅) − Σ φ(f̄), plus the surrogate's exact values. Efficiency stays exact.
* **Cost.** No model evaluations; :data:`SURROGATE`'s trees per fold and output, about
  300 · 2P · d additions per row and output on the CPU (ten folds of 25 trees;
  :mod:`sklearn_shapq.backends._oblivious_fit`). On shap's reference setup (d = 16, 500
  evaluations) that was 3% of the explain call, the model 95%; with a cheap model at d = 100
  (xgboost of 100 trees of depth 4, 50 background rows, 5,000 evaluations) 25%.
* **Standard errors.** A jackknife over the folds of the plain cross-fitted estimate (each sampled
  pair corrected by f_g alone, whose error is the larger): without fold g, its pairs leave the
  regression and its surrogate the mean f̄; widened by :data:`STDERR_WIDENING` (the other folds'
  surrogates, fitted on g's pairs too, are held fixed). The corrected estimate's own jackknife
  would see the π_t f̄ part, fitted on every pair, and its intervals covered 0.90-0.92. Where most
  of a class is drawn the intervals are conservative, as Leverage SHAP's are (the jackknife
  ignores the finite population): at d = 8 and 220 evaluations the standard errors were 3.5x the
  RMSE (Leverage SHAP's 2.2x).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.algorithms._leverage import (
    ENUMERATED_CLASS_SIZE,
    JACKKNIFE_GROUPS,
    LeverageAlgorithm,
    class_capacities,
    jackknife_stderr,
)
from sklearn_shapq.algorithms._oblivious_boosting import (
    BoostingSettings,
    fit_oblivious_boosting,
    oblivious_shapley,
)
from sklearn_shapq.algorithms._registry import ShapleyEstimate, register_algorithm

SURROGATE = BoostingSettings(n_trees=25, depth=5, learning_rate=0.4, l2=1.0)
"""The surrogate's trees. In ``benchmarks/bench_leverage_variants.py`` (d = 8-60, 5d-20d), 50 trees
at rate 0.2 had 0.95-1.01x this error at twice the fitting time, 15 trees at rate 0.6 1.01-1.07x
(d = 30, 60; ad hoc), depth 3 had 0.94-2.96x, and 5 folds instead of 10 had 0.98-1.13x."""

MIN_SAMPLED_PAIRS = 10
"""Fewest sampled pairs (one per fold) for the control variate; below, the estimate is the plain
regression's. From 10 to 30 sampled pairs it had 0.68-1.01x Leverage SHAP's error on the problems of
``benchmarks/bench_accuracy.py`` at d = 6-20 (``benchmarks/bench_leverage_variants.py --small-budgets``)."""

STDERR_WIDENING = 1.25
"""Factor on the jackknife standard errors. The jackknife over folds holds the other folds'
surrogates fixed, though each was fitted on the left-out pairs too; its 95% intervals covered
0.91-0.97 of exact values on polynomial and tanh games at d = 8-16 (40 draws of 8 rows each),
0.94-0.99 with this factor (tests/algorithms/test_leverage.py checks 0.93-1.0)."""


@register_algorithm("leverage_cv")
class LeverageControlVariateAlgorithm(LeverageAlgorithm):
    """Sampler "leverage_cv": Leverage SHAP on the game minus a cross-fitted tree surrogate, plus its exact values.

    The coalitions, budget and refusals are Leverage SHAP's (:class:`LeverageAlgorithm`); the
    surrogates cost no model evaluations. See the module's design decisions.

    Examples
    --------
    >>> from sklearn_shapq.games import CallableGame
    >>> def value(masks):  # an interaction of order 3 and a main effect
    ...     return (masks[:, 0] & masks[:, 1] & masks[:, 2]) * 3.0 + masks[:, 3]
    >>> keys, exact = np.array([7], dtype=np.uint64), np.r_[1.0, 1.0, 1.0, 1.0, np.zeros(6)]
    >>> plain = LeverageAlgorithm("leverage", 200, 10, 0)
    >>> for estimator in (plain, LeverageControlVariateAlgorithm("leverage_cv", 200, 10, 0)):
    ...     phi = estimator.estimate(CallableGame(value, 10), np.array([0]), keys).values[0, :, 0]
    ...     print(estimator.name, round(float(np.abs(phi - exact).max()), 3), round(float(phi.sum()), 12))
    leverage 0.105 4.0
    leverage_cv 0.018 4.0
    """

    @staticmethod
    def row_bytes(n_coalitions: int, d: int, n_outputs: int) -> int:
        """Leverage SHAP's, and the surrogates' targets, weights and fits (the array path's one-hot node sums)."""
        problems = n_outputs * JACKKNIFE_GROUPS
        surrogate = 8 * n_coalitions * problems * (2 ** (SURROGATE.depth + 1) + 16) + 8 * n_coalitions * (d + 1)
        return LeverageAlgorithm.row_bytes(n_coalitions, d, n_outputs) + surrogate

    def estimate(self, game: Any, games: Any, keys: np.ndarray) -> ShapleyEstimate:
        """Leverage SHAP's regression, the surrogates of each fold, and the regression of the corrected values."""
        masks, values, total = self._evaluate(game, games, keys)
        xp = game.backend.xp
        design = self._design(masks, game.backend)
        phi, stderr, leave_out = self._regress(design, values, total)
        if leave_out is None or self.sampled_pairs.sum() < MIN_SAMPLED_PAIRS:  # Leverage SHAP
            return self._estimate(phi, stderr)
        own_fold, mean_fold, fold_phi = self._surrogates(masks, values, total, leave_out, game.backend)
        surrogate_phi = fold_phi.mean(axis=1)  # φ(f̄), (B, d, k)
        residual_total = total - surrogate_phi.sum(axis=1)
        drawn = xp.asarray(self._drawn_fraction().repeat(2))[None, :, None]  # π of each coalition's class
        corrected = values - (1 - drawn) * own_fold - drawn * mean_fold
        # one regression for both: the corrected values (the estimate) and the cross-fitted ones (each
        # pair corrected by its own fold's surrogate), whose jackknife over the folds gives the errors:
        # without fold g, its pairs and its surrogate (f̄ of the other folds)
        both, _, leave_out_both = self._regress(
            design,
            xp.concatenate([corrected, values - own_fold], axis=2),
            xp.concatenate([residual_total, residual_total], axis=1),
        )
        n_outputs = values.shape[2]
        phi, residual_replicates = both[..., :n_outputs], leave_out_both[..., n_outputs:]
        n_folds = fold_phi.shape[1]
        replicates = residual_replicates + (n_folds * surrogate_phi[:, None] - fold_phi) / (n_folds - 1)
        return self._estimate(phi + surrogate_phi, STDERR_WIDENING * jackknife_stderr(replicates, xp))

    def _surrogates(self, masks: Any, values: Any, total: Any, leave_out: Any, backend: Any) -> tuple[Any, Any, Any]:
        """Per coalition f_g(S) of its fold (f̄ for classes listed whole) and f̄(S), (B, 2P, k); φ(h_g), (B, G, d, k)."""
        xp = backend.xp
        rows, n_coalitions, d = masks.shape
        n_outputs, n_folds = values.shape[2], leave_out.shape[1]
        sizes = masks.sum(axis=2, keepdims=True)
        odd_targets = _odd_part(values, xp) - (2 * sizes - d) * total[:, None, :] / (2 * d)
        centred = masks.astype(xp.float64) - sizes / d
        fitted = xp.einsum("bci,bgik->bckg", centred, leave_out)  # the out-of-fold linear fits, (B, 2P, k, G)
        residuals = (odd_targets[..., None] - fitted).reshape(rows, n_coalitions, n_outputs * n_folds)
        group = xp.asarray(self._jackknife_groups().repeat(2))  # fold of each coalition; -1: listed whole
        training = (group[:, None] != xp.arange(n_folds)).astype(xp.float64)  # (2P, G)
        weights = xp.broadcast_to(training[None, :, None, :], (rows, n_coalitions, n_outputs, n_folds))
        weights = weights.reshape(rows, n_coalitions, n_outputs * n_folds)
        ensemble = fit_oblivious_boosting(masks, residuals, weights, SURROGATE, backend)
        odd_fit = _odd_part(ensemble.predictions, xp).reshape(rows, n_coalitions, n_outputs, n_folds)
        fold_index = xp.broadcast_to(xp.maximum(group, 0)[None, :, None, None], (rows, n_coalitions, n_outputs, 1))
        mean_fold = odd_fit.mean(axis=3)
        own_fold = xp.where(
            group[None, :, None] >= 0, xp.take_along_axis(odd_fit, fold_index, axis=3)[..., 0], mean_fold
        )
        fold_phi = oblivious_shapley(ensemble, d, xp).reshape(rows, n_outputs, n_folds, d)
        return own_fold, mean_fold, fold_phi.transpose(0, 2, 3, 1)

    def _drawn_fraction(self) -> np.ndarray:
        """π of each pair: the share of its class's pairs the rows evaluate when they draw them without replacement.

        1 for classes listed whole, n_t / C_t for classes drawn without replacement, 0 for classes
        drawn independently (above :data:`~sklearn_shapq.algorithms._leverage.ENUMERATED_CLASS_SIZE`).
        """
        capacity = class_capacities(self.n_players)
        without_replacement = (capacity <= ENUMERATED_CLASS_SIZE) | (self.pairs == capacity)
        return np.repeat(np.where(without_replacement, self.pairs / capacity, 0.0), self.pairs)


def _odd_part(values: Any, xp: Any) -> Any:
    """(u(S) − u(N ∖ S)) / 2 at each coalition of ``values`` (B, 2P, …), laid out in pairs (S, N ∖ S)."""
    paired = values.reshape(values.shape[0], -1, 2, *values.shape[2:])
    half = (paired[:, :, 0] - paired[:, :, 1]) / 2
    return xp.stack([half, -half], axis=2).reshape(values.shape)
