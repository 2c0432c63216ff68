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
  features, independently for every explained row: bit j of grid point t of run r is the keyed
  uniform (row key of run r, t · d + j) below q_t, so a row's masks depend on its values alone,
  never on its position or on the rows explained with it.
* **Owen-halved.** n_q is even; for t < n_q / 2 a mask b is drawn and grid point n_q − 1 − t
  (q = 1 − q_t) uses its complement ¬b, so feature i compares ¬b ∖ {i} with ¬b ∪ {i} (the
  "inverse set"). With n_q even there is no self-paired midpoint q = ½. Because e_i(q) + e_i(1 − q)
  is constant for games with at most pairwise interactions, Owen-halved is *exact* for them, for
  any masks and any seed.
* **Units.** Each run is one independent sampling unit with weight 1 / runs; standard errors come
  from the spread over runs (:func:`~sklearn_shapq.algorithms.combine_units`), which with the
  default two runs is a one-degree-of-freedom estimate.
* Owen estimates are not exactly efficient: Σ_i φ_i ≠ v(N) − v(∅) in general.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.algorithms._registry import ShapleyAlgorithm, ShapleyEstimate, register_algorithm
from sklearn_shapq.algorithms._units import UnitSamples, combine_units
from sklearn_shapq.samplers import keyed_uniforms, substream_keys

_KEY_BYTES = 8
"""Bytes per host uniform draw (float64) behind one mask bit."""

_ROW_MASK_BYTES = 4 * 2**20
"""Masks (and the uniform draws behind them) of one row built at once: fixes a row's chunks."""

OWEN_RUNS = 2
"""Independent runs, each one sampling unit."""


def owen_plan(max_evals: int, d: int, *, halved: bool, runs: int = OWEN_RUNS) -> int:
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
        n_q = max_evals // (runs · (d + 1)), rounded down to even for ``halved`` (0 when the budget
        is below the minimum 2 · runs · (d + 1)).

    Examples
    --------
    >>> owen_plan(100, 4, halved=False), owen_plan(100, 4, halved=True)
    (10, 10)
    >>> owen_plan(90, 4, halved=False), owen_plan(90, 4, halved=True)
    (9, 8)
    """
    n_q = int(max_evals) // (runs * (d + 1))
    if halved:
        n_q -= n_q % 2
    return n_q if n_q >= 2 else 0


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


def owen_units(
    game: Any, games: Any, keys: np.ndarray, n_q: int, *, halved: bool = False, runs: int = OWEN_RUNS
) -> UnitSamples:
    """Owen (or Owen-halved) Shapley estimates of games ``games`` (B,), one unit per run.

    Parameters
    ----------
    game : Game
    games : int array of shape (B,), on the backend
    keys : uint64 ndarray of shape (B,)
        Row keys: run r's mask bits of a row are keyed uniforms of (key, r).
    n_q : int
        q-grid points per run (see :func:`owen_plan`); at least 2, even for ``halved``.
    halved : bool
        Owen-halved: grid point n_q − 1 − t uses the complement of the mask drawn for grid point t.
    runs : int
        Independent runs, each one sampling unit.

    Returns
    -------
    UnitSamples
        ``values`` (B, runs, d, k) float64, the trapezoid-weighted marginals of each run;
        ``weights`` 1 / runs each. Costs runs · n_q · (d + 1) evaluations of v per row.

    Examples
    --------
    >>> from sklearn_shapq.backends import CpuBackend
    >>> from sklearn_shapq.algorithms import combine_units
    >>> from sklearn_shapq.games import InterventionalGame, make_model_function
    >>> model = make_model_function(lambda Z: Z[:, 0] * Z[:, 1] + Z[:, 2], "predict", CpuBackend())
    >>> game = InterventionalGame(model, np.zeros((1, 3)), np.array([[1.0, 2.0, 3.0]]))
    >>> n_q = owen_plan(32, 3, halved=True)
    >>> units = owen_units(game, np.array([0]), np.array([7], dtype=np.uint64), n_q, halved=True)
    >>> estimate, stderr = combine_units(units, np)
    >>> estimate[0, :, 0].round(12)  # exact: the game has only pairwise interactions
    array([1., 1., 3.])
    >>> int(game.n_evals[0]) == 2 * n_q * (3 + 1)
    True
    """
    if n_q < 2 or (halved and n_q % 2):
        raise ValueError(f"n_q must be at least 2{' and even for Owen-halved' if halved else ''}, got {n_q}.")
    backend = game.backend
    xp = backend.xp
    n_rows, d, k = len(keys), game.n_players, game.n_outputs
    q = np.linspace(0.0, 1.0, n_q)
    weights = trapezoid_weights(n_q)
    n_drawn = n_q // 2 if halved else n_q
    masks_per_draw = 2 if halved else 1
    step = max(1, _ROW_MASK_BYTES // (d * max(masks_per_draw * (d + 1), _KEY_BYTES)))
    flips = xp.eye(d, dtype=bool)
    values = xp.zeros((n_rows, runs, d, k), dtype=xp.float64)
    for run in range(runs):
        run_keys = substream_keys(keys, run)
        for start in range(0, n_drawn, step):
            t = np.arange(start, min(start + step, n_drawn))
            counters = (t[:, None] * d + np.arange(d)).reshape(-1)
            uniforms = keyed_uniforms(run_keys, np.broadcast_to(counters, (n_rows, counters.size)))
            drawn = uniforms.reshape(n_rows, t.size, d) < q[t, None]
            if halved:
                drawn = np.concatenate([drawn, ~drawn], axis=1)
                t = np.concatenate([t, n_q - 1 - t])
            values[:, run] += _weighted_marginals(
                game, games, backend.to_device(drawn), backend.to_device(weights[t]), flips
            )
    return UnitSamples(values, backend.to_device(np.full(runs, 1.0 / runs)))


def _weighted_marginals(game: Any, games: Any, masks: Any, weights: Any, flips: Any) -> Any:
    """Σ_c w_c · (v(b_c ∪ {i}) − v(b_c ∖ {i})) for masks b_c (B, C, d), from d + 1 evaluations per mask."""
    n_rows, n_masks, d = masks.shape
    coalitions = game.backend.xp.concatenate([masks[:, :, None, :], masks[:, :, None, :] ^ flips], axis=2)
    v = game.grid(games, coalitions.reshape(n_rows, n_masks * (d + 1), d)).reshape(n_rows, n_masks, d + 1, -1)
    sign = 1.0 - 2.0 * masks  # +1 where flipping bit i adds feature i, −1 where it removes it
    marginals = sign[..., None] * (v[:, :, 1:] - v[:, :, :1])
    return (weights[None, :, None, None] * marginals).sum(axis=1)


@register_algorithm("owen", "owen_halved")
class OwenAlgorithm(ShapleyAlgorithm):
    """Samplers "owen" and "owen_halved": Owen's multilinear extension on a q-grid, two runs; not efficient."""

    efficient = False

    @classmethod
    def minimum_evals(cls, name: str, n_players: int) -> int:
        """Two runs of two grid points of d + 1 evaluations."""
        return OWEN_RUNS * 2 * (n_players + 1)

    def plan(self, max_evals: int) -> int:
        """Grid points per run; spend runs · n_q · (d + 1)."""
        self.halved = self.name == "owen_halved"
        self.n_q = owen_plan(max_evals, self.n_players, halved=self.halved)
        return OWEN_RUNS * self.n_q * (self.n_players + 1)

    def bytes_per_game(self, n_outputs: int) -> int:
        """Return the bytes of a chunk of masks and draws, and of the runs' values."""
        return _ROW_MASK_BYTES + OWEN_RUNS * self.n_players * n_outputs * 8

    def estimate(self, game: Any, games: np.ndarray, keys: np.ndarray) -> ShapleyEstimate:
        """Run the grid; standard errors from the spread of the runs (one degree of freedom)."""
        units = owen_units(game, game.backend.to_device(games), keys, self.n_q, halved=self.halved)
        values, stderr = combine_units(units, game.backend.xp)
        n_rows = len(games)
        return ShapleyEstimate(values, stderr, np.full(n_rows, OWEN_RUNS - 1.0), np.full(n_rows, self.n_evals))
