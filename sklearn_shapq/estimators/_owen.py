"""Owen's multilinear extension on a q-grid: the Owen and Owen-halved Shapley estimators.

Owen (1972): Sh_i = ∫_0^1 e_i(q) dq with e_i(q) = E[v(E ∪ {i}) − v(E ∖ {i})], where E includes
each feature independently with probability q. Okhrati & Lipani (2020), "Owen-halved", pair q with
1 − q: Sh_i = ∫_0^{1/2} [e_i(q) + e_i(1 − q)] dq, estimating e_i(1 − q) on the complement of the
set that estimates e_i(q).

Design decisions
----------------
* **Cost.** One mask b costs d + 1 evaluations of v: v(b) once and v(b with bit i flipped) for each
  feature i. b is the "off" coalition of feature i where b_i = 0 and its "on" coalition where
  b_i = 1, so feature i's marginal is (1 − 2 b_i) · (v(b ⊕ e_i) − v(b)). The reference code spends
  2d evaluations per mask (v(b ∪ {i}) and v(b ∖ {i}) for every i); sharing v(b) nearly halves that.
  Every coalition goes through the game, the deterministic masks ∅ (q = 0) and N (q = 1) included,
  so ``runs`` runs of ``n_q`` grid points cost exactly runs · n_q · (d + 1) evaluations.
* **Quadrature.** q_t = t / (n_q − 1), t = 0 … n_q − 1, with trapezoid weights (½ at both
  endpoints, normalised to sum to 1), as the paper describes; the reference code used equal weights.
  The trapezoid rule is exact for e_i linear in q, so plain Owen is unbiased for games with at most
  pairwise interactions; with higher-order interactions its bias is O(1 / (n_q − 1)²).
* **Masks.** For each run and grid point one mask b ~ Bernoulli(q_t)^d is drawn, shared by all
  features, independently for every explained row. Draws are taken from ``rng`` in (run, grid
  point, row, feature) order, so the result does not depend on ``max_mask_bytes``; it does depend
  on which rows are explained together in one call.
* **Owen-halved.** n_q is even; for t < n_q / 2 a mask b is drawn and grid point n_q − 1 − t
  (q = 1 − q_t) uses its complement ¬b, so feature i compares ¬b ∖ {i} with ¬b ∪ {i} (the
  "inverse set"). With n_q even there is no self-paired midpoint q = ½. Because e_i(q) + e_i(1 − q)
  is constant for games with at most pairwise interactions, Owen-halved is *exact* for them, for
  any masks and any seed.
* **Units.** Each run is one independent sampling unit with weight 1 / runs; standard errors come
  from the spread over runs (:func:`~sklearn_shapq.estimators.combine_units`), which with the
  default two runs is a one-degree-of-freedom estimate.
* Owen estimates are not exactly efficient: Σ_i φ_i ≠ v(N) − v(∅) in general.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.estimators._permutation_walk import DEFAULT_MASK_BYTES
from sklearn_shapq.estimators._units import UnitSamples

_KEY_BYTES = 8
"""Bytes per host uniform draw (float64) behind one mask bit."""


def owen_plan(max_evals: int, d: int, *, halved: bool, runs: int = 2) -> int:
    """Return the number of q-grid points per run that ``max_evals`` evaluations of v afford.

    Parameters
    ----------
    max_evals : int
        Evaluations of v allowed per explained row.
    d : int
        Number of features.
    halved : bool
        Plan for Owen-halved: the grid size is rounded down to an even number.
    runs : int
        Independent runs.

    Returns
    -------
    int
        n_q = max_evals // (runs · (d + 1)), rounded down to even for ``halved``; at least 2.
        The estimate then costs runs · n_q · (d + 1) ≤ ``max_evals`` evaluations.

    Raises
    ------
    ValueError
        If the budget is below the minimum 2 · runs · (d + 1), or ``d`` or ``runs`` is below 1.

    Examples
    --------
    >>> owen_plan(100, 4, halved=False), owen_plan(100, 4, halved=True)
    (10, 10)
    >>> owen_plan(90, 4, halved=False), owen_plan(90, 4, halved=True)
    (9, 8)
    """
    if d < 1 or runs < 1:
        raise ValueError(f"d and runs must be at least 1, got d={d}, runs={runs}.")
    n_q = int(max_evals) // (runs * (d + 1))
    if halved:
        n_q -= n_q % 2
    if n_q < 2:
        name = "Owen-halved" if halved else "Owen"
        raise ValueError(
            f"max_evals={max_evals} is below the minimum {2 * runs * (d + 1)} for {name} with d={d} and "
            f"runs={runs}: each run needs 2 q-grid points of d + 1 evaluations each."
        )
    return n_q


def trapezoid_weights(n_q: int) -> np.ndarray:
    """Trapezoid weights of the grid q_t = t / (n_q − 1): ½ at both endpoints, summing to 1.

    Examples
    --------
    >>> trapezoid_weights(3)
    array([0.25, 0.5 , 0.25])
    """
    weights = np.full(n_q, 1.0 / (n_q - 1))
    weights[[0, -1]] /= 2
    return weights


def owen_shapley(
    game: Any,
    x: Any,
    n_q: int,
    rng: np.random.Generator,
    *,
    halved: bool = False,
    runs: int = 2,
    max_mask_bytes: int = DEFAULT_MASK_BYTES,
) -> UnitSamples:
    """Owen (or Owen-halved) Shapley estimates of each explained row, one unit per run.

    Parameters
    ----------
    game : callable
        ``game(x, masks)`` with masks (B, C, d) → values (B, C, k); has ``backend`` and
        ``empty_value`` (k,).
    x : array of shape (B, d)
        Explained rows on the game's backend.
    n_q : int
        q-grid points per run (see :func:`owen_plan`); at least 2, even for ``halved``.
    rng : numpy.random.Generator
        Host random source of the masks.
    halved : bool
        Owen-halved: grid point n_q − 1 − t uses the complement of the mask drawn for grid point t.
    runs : int
        Independent runs, each one sampling unit.
    max_mask_bytes : int
        Bound on the coalition masks (and the host uniform draws behind them) built at once;
        the grid is processed in chunks of masks.

    Returns
    -------
    UnitSamples
        ``values`` (B, runs, d, k) float64, the trapezoid-weighted marginals of each run;
        ``weights`` 1 / runs each. Costs runs · n_q · (d + 1) evaluations of v per row.

    Examples
    --------
    >>> from sklearn_shapq.backends import CpuBackend
    >>> from sklearn_shapq.estimators import combine_units
    >>> from sklearn_shapq.games import InterventionalGame, make_model_function
    >>> model = make_model_function(lambda Z: Z[:, 0] * Z[:, 1] + Z[:, 2], "predict", CpuBackend())
    >>> game = InterventionalGame(model, np.zeros((1, 3)))
    >>> x = np.array([[1.0, 2.0, 3.0]])
    >>> n_q = owen_plan(32, 3, halved=True)
    >>> units = owen_shapley(game, x, n_q, np.random.default_rng(0), halved=True)
    >>> estimate, stderr = combine_units(units, np)
    >>> estimate[0, :, 0].round(12)  # exact: the game has only pairwise interactions
    array([1., 1., 3.])
    >>> game.n_model_rows == 2 * n_q * (3 + 1)
    True
    """
    if n_q < 2 or (halved and n_q % 2):
        raise ValueError(f"n_q must be at least 2{' and even for Owen-halved' if halved else ''}, got {n_q}.")
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}.")
    backend = game.backend
    xp = backend.xp
    n_rows, d = x.shape
    k = int(game.empty_value.shape[0])
    q = np.linspace(0.0, 1.0, n_q)
    weights = trapezoid_weights(n_q)
    n_drawn = n_q // 2 if halved else n_q
    masks_per_draw = 2 if halved else 1
    step = max(1, max_mask_bytes // (n_rows * d * max(masks_per_draw * (d + 1), _KEY_BYTES)))
    flips = xp.eye(d, dtype=bool)
    values = xp.zeros((n_rows, runs, d, k), dtype=xp.float64)
    for run in range(runs):
        for start in range(0, n_drawn, step):
            t = np.arange(start, min(start + step, n_drawn))
            drawn = rng.random((t.size, n_rows, d)) < q[t, None, None]  # (chunk, B, d): chunking-invariant draws
            if halved:
                drawn = np.concatenate([drawn, ~drawn])
                t = np.concatenate([t, n_q - 1 - t])
            masks = backend.to_device(np.ascontiguousarray(drawn.transpose(1, 0, 2)))
            values[:, run] += _weighted_marginals(game, x, masks, backend.to_device(weights[t]), flips)
    return UnitSamples(values, backend.to_device(np.full(runs, 1.0 / runs)))


def _weighted_marginals(game: Any, x: Any, masks: Any, weights: Any, flips: Any) -> Any:
    """Σ_c w_c · (v(b_c ∪ {i}) − v(b_c ∖ {i})) for masks b_c (B, C, d), from d + 1 evaluations per mask."""
    n_rows, n_masks, d = masks.shape
    coalitions = game.backend.xp.concatenate([masks[:, :, None, :], masks[:, :, None, :] ^ flips], axis=2)
    v = game(x, coalitions.reshape(n_rows, n_masks * (d + 1), d)).reshape(n_rows, n_masks, d + 1, -1)
    sign = 1.0 - 2.0 * masks  # +1 where flipping bit i adds feature i, −1 where it removes it
    marginals = sign[..., None] * (v[:, :, 1:] - v[:, :, :1])
    return (weights[None, :, None, None] * marginals).sum(axis=1)
