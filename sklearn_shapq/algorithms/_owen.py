"""Owen's multilinear extension on a trapezoid q-grid (Owen 1972) and Owen-halved (Okhrati & Lipani 2020).

Sh_i = ∫_0^1 e_i(q) dq, e_i(q) = E[v(E ∪ {i}) − v(E ∖ {i})] with E ~ Bernoulli(q)^d; one mask
costs d + 1 evaluations. Not exactly efficient; design notes in ``doc/architecture.md``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from sklearn_shapq._registry import register
from sklearn_shapq.algorithms._registry import ShapleyAlgorithm, ShapleyEstimate
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

    n_q = max_evals // (runs · (d + 1)), even for ``halved``; 0 below 2 · runs · (d + 1).

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
        Row keys of the mask bits.
    n_q : int
        q-grid points per run (:func:`owen_plan`); at least 2, even for ``halved``.
    halved : bool
        Grid point n_q − 1 − t uses the complement of grid point t's mask.
    runs : int
        Independent runs, each one sampling unit.

    Returns
    -------
    UnitSamples
        ``values`` (B, runs, d, n_outputs), ``weights`` 1 / runs; costs runs · n_q · (d + 1) evaluations.

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


@register
class OwenAlgorithm(ShapleyAlgorithm):
    """Algorithm "owen": Owen's multilinear extension on a q-grid, two runs; not efficient."""

    name = "owen"
    efficient = False
    halved: ClassVar[bool] = False
    """Owen-halved: grid point n_q − 1 − t uses the complement of grid point t's mask (:func:`owen_units`)."""

    @classmethod
    def minimum_evals(cls, n_players: int) -> int:
        """Two runs of two grid points of d + 1 evaluations."""
        return OWEN_RUNS * 2 * (n_players + 1)

    def plan(self, max_evals: int) -> int:
        """Grid points per run; spend runs · n_q · (d + 1)."""
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
        return ShapleyEstimate(
            values=values, stderr=stderr, n_evals=np.full(n_rows, self.n_evals), dof=np.full(n_rows, OWEN_RUNS - 1.0)
        )


@register
class OwenHalvedAlgorithm(OwenAlgorithm):
    """Algorithm "owen_halved": Okhrati & Lipani's Owen-halved, q paired with 1 − q on complementary masks."""

    name = "owen_halved"
    halved = True
