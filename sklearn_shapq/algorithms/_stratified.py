"""Stratified sampling of marginal contributions by (player, coalition size) (Castro et al. 2017).

Sh_i = (1/d) Σ_ℓ E[v(S ∪ {i}) − v(S) | |S| = ℓ]; 2 evaluations a sample. Not exactly efficient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq._registry import register
from sklearn_shapq.algorithms._moments import RunningMoments
from sklearn_shapq.algorithms._registry import ShapleyAlgorithm, ShapleyEstimate
from sklearn_shapq.samplers import keyed_uniforms, sized_coalitions, substream_keys

_ROW_MASK_BYTES = 4 * 2**20
"""Draws of one row made at once (8 bytes each): fixes a row's chunks."""


def stratified_plan(max_evals: int, d: int) -> int:
    """Return the number of marginal samples that ``max_evals`` evaluations of v afford.

    n_samples = max_evals // 2; the minimum budget is 8 · d² (2 phase-1 samples in each stratum).

    Examples
    --------
    >>> stratified_plan(100, 3)
    50
    """
    return int(max_evals) // 2


def stratified_shapley(game: Any, games: Any, keys: np.ndarray, n_samples: int) -> tuple[Any, Any]:
    """Stratified Shapley estimates and standard errors of games ``games`` (B,).

    Phase 1 draws (n_samples // 2) // d² samples a stratum; phase 2 spreads the rest in proportion
    to the phase-1 variances.

    ``keys`` (B,) are the row keys, ``n_samples`` from :func:`stratified_plan`; returns the estimates
    and standard errors, (B, d, n_outputs) each.

    Examples
    --------
    >>> from sklearn_shapq.backends import CpuBackend
    >>> from sklearn_shapq.games import InterventionalGame, make_model_function
    >>> model = make_model_function(lambda Z: Z @ [1.0, 2.0, 3.0], "predict", CpuBackend())
    >>> game = InterventionalGame(model, np.zeros((1, 3)), np.array([[1.0, 2.0, 3.0]]))
    >>> n = stratified_plan(8 * 3**2, 3)
    >>> estimate, stderr = stratified_shapley(game, np.array([0]), np.array([1], dtype=np.uint64), n)
    >>> estimate[0, :, 0].round(12), stderr[0, :, 0].round(12)  # exact: the game is additive
    (array([1., 4., 9.]), array([0., 0., 0.]))
    >>> int(game.n_evals[0]) == 2 * n
    True
    """
    backend = game.backend
    xp = backend.xp
    n_rows, d, k = len(keys), game.n_players, game.n_outputs
    n_strata = d * d
    per_stratum = (n_samples // 2) // n_strata
    if per_stratum < 2:
        raise ValueError(f"n_samples={n_samples} leaves fewer than 2 phase-1 samples in each of the {n_strata} strata.")
    step = max(1, _ROW_MASK_BYTES // (d * 8))
    moments = RunningMoments((n_rows, n_strata, k), xp)
    phase1 = np.full((n_rows, n_strata), per_stratum)
    _sample_strata(game, games, substream_keys(keys, 0), phase1, moments, step)
    variance = backend.to_numpy(moments.m2.sum(axis=-1) / (moments.count[..., 0] - 1))
    phase2 = largest_remainder_allocation(variance, n_samples - per_stratum * n_strata)
    _sample_strata(game, games, substream_keys(keys, 1), phase2, moments, step)
    estimate = moments.mean.reshape(n_rows, d, d, k).mean(axis=2)
    spread = (moments.m2 / ((moments.count - 1) * moments.count)).reshape(n_rows, d, d, k).sum(axis=2)
    return estimate, xp.sqrt(spread) / d


def largest_remainder_allocation(variance: np.ndarray, total: int) -> np.ndarray:
    """Split ``total`` samples over strata proportionally to ``variance``, row by row.

    ``variance`` (B, J) non-negative (a row of zeros is split uniformly); returns int64 counts (B, J)
    summing to ``total`` per row.

    Examples
    --------
    >>> largest_remainder_allocation(np.array([[1.0, 1.0, 2.0], [0.0, 0.0, 0.0]]), 5)
    array([[1, 1, 3],
           [2, 2, 1]])
    """
    n_rows, n_strata = variance.shape
    norm = variance.sum(axis=1, keepdims=True)
    share = np.where(norm > 0, variance / np.where(norm > 0, norm, 1.0), 1.0 / n_strata)
    quota = total * share
    counts = np.floor(quota).astype(np.int64)
    left = total - counts.sum(axis=1)
    order = np.argsort(counts - quota, axis=1, kind="stable")  # largest remainder first
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(n_strata), (n_rows, n_strata)), axis=1)
    return counts + (rank < left[:, None])


def _sample_strata(
    game: Any, games: Any, keys: np.ndarray, counts: np.ndarray, moments: RunningMoments, step: int
) -> None:
    """Draw ``counts[b, j]`` samples of stratum j for row b (equal row sums) and merge them into ``moments``."""
    backend = game.backend
    n_rows, n_strata = counts.shape
    d = game.n_players
    total = int(counts[0].sum())
    rows = np.arange(n_rows)[:, None]
    ends = (np.cumsum(counts, axis=1) + total * rows).ravel()
    for start in range(0, total, step):
        positions = np.arange(start, min(start + step, total))
        strata = np.searchsorted(ends, positions + total * rows, side="right") - n_strata * rows
        counters = (positions[:, None] * d + np.arange(d)).reshape(-1)
        uniforms = keyed_uniforms(keys, np.broadcast_to(counters, (n_rows, counters.size)))
        samples = _marginal_samples(game, games, strata, uniforms.reshape(n_rows * positions.size, d))
        chunk = _chunk_stats(samples, backend.to_device(strata), n_strata, backend.xp)
        moments.merge(*chunk)


def _marginal_samples(game: Any, games: Any, strata: np.ndarray, uniforms: np.ndarray) -> Any:
    """v(S ∪ {i}) − v(S) with S uniform of size ℓ in N ∖ {i}, for strata i · d + ℓ of shape (B, c)."""
    n_rows, n_chunk = strata.shape
    d = game.n_players
    player, size = np.divmod(strata.reshape(-1), d)
    off = sized_coalitions(uniforms, size, player)
    on = off.copy()
    on[np.arange(player.size), player] = True
    masks = np.stack([off, on], axis=1).reshape(n_rows, 2 * n_chunk, d)
    v = game.grid(games, game.backend.to_device(masks)).reshape(n_rows, n_chunk, 2, -1)
    return v[:, :, 1] - v[:, :, 0]


def _chunk_stats(samples: Any, strata: Any, n_strata: int, xp: Any) -> tuple[Any, Any, Any]:
    """Count, mean and sum of squared deviations (two-pass) of each row's strata in one chunk."""
    n_rows, _, k = samples.shape
    cell = xp.arange(n_rows)[:, None] * n_strata + strata
    count = xp.bincount(cell.ravel(), minlength=n_rows * n_strata).reshape(n_rows, n_strata)
    flat = (cell[..., None] * k + xp.arange(k)).ravel()
    size = n_rows * n_strata * k
    total = xp.bincount(flat, weights=samples.ravel(), minlength=size).reshape(n_rows, n_strata, k)
    mean = total / xp.maximum(count, 1)[..., None]
    deviation = samples - mean[xp.arange(n_rows)[:, None], strata]
    m2 = xp.bincount(flat, weights=(deviation**2).ravel(), minlength=size).reshape(n_rows, n_strata, k)
    return xp.broadcast_to(count[..., None], m2.shape), mean, m2


@register
class StratifiedAlgorithm(ShapleyAlgorithm):
    """Algorithm "stratified": Castro et al. (2017), strata of feature × coalition size; not efficient."""

    name = "stratified"
    efficient = False

    @classmethod
    def minimum_evals(cls, n_players: int) -> int:
        """8 d²: two phase-1 samples of 2 evaluations in each of the d² strata, half of the budget."""
        return 8 * n_players * n_players

    def plan(self, max_evals: int) -> int:
        """Marginal samples per row; spend 2 per sample."""
        self.n_samples = stratified_plan(max_evals, self.n_players)
        return 2 * self.n_samples

    def bytes_per_game(self, n_outputs: int) -> int:
        """Return the bytes of a chunk of draws and masks, and the strata statistics."""
        return 3 * _ROW_MASK_BYTES + 4 * self.n_players**2 * n_outputs * 8

    def estimate(self, game: Any, games: np.ndarray, keys: np.ndarray) -> ShapleyEstimate:
        """Two phases of strata samples; normal-quantile intervals."""
        values, stderr = stratified_shapley(game, game.backend.to_device(games), keys, self.n_samples)
        n_rows = len(games)
        return ShapleyEstimate(
            values=values, stderr=stderr, n_evals=np.full(n_rows, self.n_evals), dof=np.full(n_rows, np.inf)
        )
