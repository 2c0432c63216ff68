"""Stratified sampling of marginal contributions (Castro et al. 2017).

Stratum (i, ℓ) holds the coalitions S ⊆ N ∖ {i} of size ℓ = 0 … d − 1; each size has probability
1 / d under a uniform ordering, so Sh_i = (1/d) Σ_ℓ E[v(S ∪ {i}) − v(S) | |S| = ℓ], S uniform among
the subsets of size ℓ.

Design decisions
----------------
* **Cost.** One sample costs 2 evaluations of v, both through the game (v(∅) and v(N) are not
  cached), so ``n_samples`` samples cost exactly 2 · n_samples evaluations per explained row.
* **Phase 1.** m1 = (n_samples // 2) // d² samples in each of the d² strata; m1 ≥ 2 is required so
  that every stratum has a sample variance (with m1 = 1 the reference code silently skipped phase 2).
* **Phase 2.** The remaining n_samples − m1 · d² samples are allocated, per explained row,
  proportionally to the phase-1 sample variance of each stratum (summed over outputs), as Castro
  et al. (2017) and the paper do; textbook Neyman allocation would use the standard deviation.
  Integer counts by largest remainder; uniform when all variances are 0.
* **Estimate and error.** φ_i = (1/d) Σ_ℓ ȳ_iℓ over all samples of a stratum; standard error
  sqrt((1/d²) Σ_ℓ s²_iℓ / n_iℓ) with s² the sample variance (ddof 1) of all the stratum's samples,
  merged over chunks with Chan's pairwise formula. Because phase 2's counts depend on the phase-1
  samples, the estimate carries a small allocation bias for skewed strata; it is exact for
  additive games (every stratum then has zero variance).
* **Randomness.** S is the ℓ smallest of uniform random keys over N ∖ {i} (key_i = +∞). Keys
  are drawn from ``rng`` in (sample, row, feature) order, so the result does not depend on
  ``max_mask_bytes``; it does depend on which rows are explained together in one call.
* Stratified estimates are not exactly efficient: Σ_i φ_i ≠ v(N) − v(∅) in general.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.estimators._permutation_walk import DEFAULT_MASK_BYTES

_KEY_BYTES = 8
"""Bytes per host random key (float64); the keys are the largest per-chunk temporary."""


def stratified_plan(max_evals: int, d: int) -> int:
    """Return the number of marginal samples that ``max_evals`` evaluations of v afford.

    Parameters
    ----------
    max_evals : int
        Evaluations of v allowed per explained row.
    d : int
        Number of features.

    Returns
    -------
    int
        n_samples = max_evals // 2 (each sample costs 2 evaluations), of which
        m1 = (n_samples // 2) // d² per stratum go to phase 1.

    Raises
    ------
    ValueError
        If the budget is below the minimum 8 · d² (2 phase-1 samples in each of the d² strata,
        which are at most half of the samples).

    Examples
    --------
    >>> stratified_plan(100, 3)
    50
    """
    if d < 1:
        raise ValueError(f"d must be at least 1, got {d}.")
    n_samples = int(max_evals) // 2
    if (n_samples // 2) // (d * d) < 2:
        raise ValueError(
            f"max_evals={max_evals} is below the minimum {8 * d * d} for stratified sampling with d={d}: "
            "phase 1 needs 2 samples of 2 evaluations in each of the d² strata, and gets half of the budget."
        )
    return n_samples


def stratified_shapley(
    game: Any,
    x: Any,
    n_samples: int,
    rng: np.random.Generator,
    *,
    max_mask_bytes: int = DEFAULT_MASK_BYTES,
) -> tuple[Any, Any]:
    """Stratified Shapley estimates and standard errors of each explained row.

    Phase 1 draws m1 = (n_samples // 2) // d² samples in each stratum (i, ℓ); phase 2 spreads the
    other n_samples − m1 · d² samples over each row's strata in proportion to their phase-1
    sample variances (see the module docstring).

    Parameters
    ----------
    game : callable
        ``game(x, masks)`` with masks (B, C, d) → values (B, C, k); has ``backend`` and
        ``empty_value`` (k,).
    x : array of shape (B, d)
        Explained rows on the game's backend.
    n_samples : int
        Marginal samples per row (see :func:`stratified_plan`); (n_samples // 2) // d² ≥ 2.
    rng : numpy.random.Generator
        Host random source of the coalitions.
    max_mask_bytes : int
        Bound on the coalition masks (and the host random keys drawing them) built at once;
        samples are processed in chunks.

    Returns
    -------
    estimate, stderr : float64 arrays of shape (B, d, k)
        Costs 2 · n_samples evaluations of v per row.

    Examples
    --------
    >>> from sklearn_shapq.backends import CpuBackend
    >>> from sklearn_shapq.games import InterventionalGame, make_model_function
    >>> model = make_model_function(lambda Z: Z @ [1.0, 2.0, 3.0], "predict", CpuBackend())
    >>> game = InterventionalGame(model, np.zeros((1, 3)))
    >>> n = stratified_plan(8 * 3**2, 3)
    >>> estimate, stderr = stratified_shapley(game, np.array([[1.0, 2.0, 3.0]]), n, np.random.default_rng(0))
    >>> estimate[0, :, 0].round(12), stderr[0, :, 0].round(12)  # exact: the game is additive
    (array([1., 4., 9.]), array([0., 0., 0.]))
    >>> game.n_model_rows == 2 * n
    True
    """
    backend = game.backend
    xp = backend.xp
    n_rows, d = x.shape
    n_strata = d * d
    per_stratum = (n_samples // 2) // n_strata
    if per_stratum < 2:
        raise ValueError(f"n_samples={n_samples} leaves fewer than 2 phase-1 samples in each of the {n_strata} strata.")
    k = int(game.empty_value.shape[0])
    step = max(1, max_mask_bytes // (n_rows * d * _KEY_BYTES))
    stats = (
        xp.zeros((n_rows, n_strata), dtype=xp.int64),
        xp.zeros((n_rows, n_strata, k), dtype=xp.float64),
        xp.zeros((n_rows, n_strata, k), dtype=xp.float64),
    )
    stats = _sample_strata(game, x, np.full((n_rows, n_strata), per_stratum), rng, stats, step)
    count, _, m2 = stats
    variance = backend.to_numpy(m2.sum(axis=-1) / (count - 1))
    phase2 = largest_remainder_allocation(variance, n_samples - per_stratum * n_strata)
    count, mean, m2 = _sample_strata(game, x, phase2, rng, stats, step)
    estimate = mean.reshape(n_rows, d, d, k).mean(axis=2)
    spread = (m2 / ((count - 1) * count)[..., None]).reshape(n_rows, d, d, k).sum(axis=2)
    return estimate, xp.sqrt(spread) / d


def largest_remainder_allocation(variance: np.ndarray, total: int) -> np.ndarray:
    """Split ``total`` samples over strata proportionally to ``variance``, row by row.

    Parameters
    ----------
    variance : array of shape (B, J)
        Non-negative weights of the J strata of each row; a row of zeros is split uniformly.
    total : int
        Samples to allocate in each row.

    Returns
    -------
    int64 array of shape (B, J)
        Counts summing to ``total`` in every row: the floors of the quotas, plus one for the
        strata with the largest remainders.

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
    game: Any, x: Any, counts: np.ndarray, rng: np.random.Generator, stats: tuple, step: int
) -> tuple[Any, Any, Any]:
    """Draw ``counts[b, j]`` samples of stratum j for row b (equal row sums) and merge them into ``stats``.

    Each row's samples are taken in stratum order, ``step`` at a time; the stratum of sample
    position p of row b is found by binary search in the cumulative counts, shifted by b · total so
    that all rows share one sorted array.
    """
    backend = game.backend
    n_rows, n_strata = counts.shape
    total = int(counts[0].sum())
    rows = np.arange(n_rows)[:, None]
    ends = (np.cumsum(counts, axis=1) + total * rows).ravel()
    for start in range(0, total, step):
        positions = np.arange(start, min(start + step, total)) + total * rows
        strata = np.searchsorted(ends, positions, side="right") - n_strata * rows
        samples = _marginal_samples(game, x, strata, rng)
        chunk = _chunk_stats(samples, backend.to_device(strata), n_strata, backend.xp)
        stats = _merge(stats, chunk, backend.xp)
    return stats


def _marginal_samples(game: Any, x: Any, strata: np.ndarray, rng: np.random.Generator) -> Any:
    """v(S ∪ {i}) − v(S) with S uniform of size ℓ in N ∖ {i}, for strata i · d + ℓ of shape (B, c)."""
    n_rows, n_chunk = strata.shape
    d = x.shape[1]
    player, size = np.divmod(strata.T, d)  # (c, B): draws are made sample by sample, chunking-invariant
    keys = rng.random((n_chunk, n_rows, d))
    np.put_along_axis(keys, player[..., None], np.inf, axis=-1)  # i ranks last, never in S
    off = keys.argsort(axis=-1).argsort(axis=-1) < size[..., None]
    on = off.copy()
    np.put_along_axis(on, player[..., None], True, axis=-1)
    masks = np.stack([off, on], axis=2).transpose(1, 0, 2, 3).reshape(n_rows, 2 * n_chunk, d)
    v = game(x, game.backend.to_device(masks)).reshape(n_rows, n_chunk, 2, -1)
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
    return count, mean, m2


def _merge(a: tuple, b: tuple, xp: Any) -> tuple[Any, Any, Any]:
    """Chan et al.'s pairwise merge of (count, mean, sum of squared deviations) statistics."""
    count_a, mean_a, m2_a = a
    count_b, mean_b, m2_b = b
    count = count_a + count_b
    share_b = (count_b / xp.maximum(count, 1))[..., None]
    delta = mean_b - mean_a
    return count, mean_a + delta * share_b, m2_a + m2_b + delta**2 * count_a[..., None] * share_b
