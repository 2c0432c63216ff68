"""Budget ledger, running statistics and confidence bounds of the top-k estimators, per game, on the game's backend.

On a GPU the per-game sums are atomic adds (``bincount``), so their last bits may depend on the device's order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import norm

from sklearn_shapq.algorithms._moments import RunningMoments
from sklearn_shapq.backends import scipy_special

RANKINGS = ("signed", "absolute")


class Ledger:
    """Evaluates coalitions against a per-game budget; v(∅) and v(N) are charged once, then free.

    ``max_evals`` counts v(∅) and v(N) (None: unlimited); ``outputs`` (n_games,) is the output each
    game ranks. ``empty``, ``full`` and ``used`` (n_games,) live in the game's namespace ``xp``.
    """

    def __init__(self, game: Any, max_evals: int | None, outputs: Any = None) -> None:
        d, n_games = game.n_players, game.n_games
        self.game = game
        self.xp = xp = game.backend.xp
        self.n_players = d
        self.n_games = n_games
        self.budget = np.inf if max_evals is None else float(max_evals)
        if self.budget < 2:
            raise ValueError(f"max_evals must be at least 2 (v(∅) and v(N)), got {max_evals}.")
        self.outputs = xp.zeros(n_games, dtype=xp.intp) if outputs is None else xp.asarray(outputs, dtype=xp.intp)
        every = xp.arange(n_games)
        self.empty = game.empty_value[every, self.outputs]
        self.full = game.full_value[every, self.outputs]
        _refuse_non_finite(game, xp.concatenate([self.empty, self.full]), "v(∅) or v(N)")
        self.used = xp.full(n_games, 2, dtype=xp.int64)

    @property
    def remaining(self) -> Any:
        """Evaluations left per game (inf when unlimited)."""
        return self.budget - self.used

    def pay(self, masks: Any, games: Any, units: Any) -> tuple[Any, Any]:
        """Evaluate the affordable units of coalitions, in order, in one game call.

        ``masks`` (m, d), ``games`` and non-decreasing ``units`` (m,): a game pays its units in order
        while they fit. Returns the values (m,), NaN where unpaid, and which were paid.
        """
        xp = self.xp
        sizes = masks.sum(axis=1)
        free = (sizes == 0) | (sizes == self.n_players)
        n_units = int(units[-1]) + 1 if units.size else 0
        unit_cost = xp.bincount(units, weights=(~free).astype(xp.float64), minlength=n_units)
        unit_game = xp.zeros(n_units, dtype=xp.intp)
        unit_game[units] = games
        order = xp.argsort(unit_game, kind="stable")  # units of each game together, in order
        cumulative = xp.cumsum(unit_cost[order])
        group_start = xp.searchsorted(unit_game[order], unit_game[order], side="left")
        before_group = xp.concatenate([xp.zeros(1), cumulative])[group_start]
        spent = xp.empty(n_units)
        spent[order] = cumulative - before_group
        paid = (spent <= self.remaining[unit_game])[units]
        values = xp.full(masks.shape[0], xp.nan)
        charged = paid & ~free
        paid_games = games[charged]
        if paid_games.size:
            out = self.game(masks[charged], paid_games)
            values[charged] = out[xp.arange(paid_games.size), self.outputs[paid_games]]
            _refuse_non_finite(self.game, values[charged], "a coalition")
        values = xp.where(paid & (sizes == 0), self.empty[games], values)
        values = xp.where(paid & (sizes == self.n_players), self.full[games], values)
        self.used += xp.bincount(paid_games, minlength=self.n_games)
        return values, paid


def _refuse_non_finite(game: Any, values: Any, what: str) -> None:
    """Raise a ValueError when a game's ``values`` hold NaN or infinity: never rank NaNs."""
    if not bool(game.backend.xp.isfinite(values).all()):
        raise ValueError(
            f"The game {type(game).__name__} gave NaN or infinity for {what}: Shapley values and a top k of "
            "non-finite values are undefined. Make the game's values finite."
        )


class PlayerStats(RunningMoments):
    """Running count, mean and sum of squared deviations per (game, player), in namespace ``xp``."""

    def __init__(self, n_games: int, d: int, xp: Any = np) -> None:
        super().__init__((n_games, d), xp)

    def add(self, games: Any, samples: Any, taken: Any) -> None:
        """Add ``samples[r, j]`` where ``taken[r, j]`` to game ``games[r]``, player j."""
        xp = self.xp
        n_games, d = self.mean.shape
        flat = (games[:, None] * d + xp.arange(d)).ravel()
        weight = taken.ravel().astype(xp.float64)
        samples = xp.where(taken, samples, 0.0).ravel()

        def per_cell(values: Any) -> Any:
            return xp.bincount(flat, weights=values, minlength=n_games * d).reshape(n_games, d)

        count_b = per_cell(weight)
        mean_b = per_cell(samples) / np.maximum(count_b, 1)
        deviation = (samples - mean_b.ravel()[flat]) * weight
        self.merge(count_b, mean_b, per_cell(deviation * deviation))


def ranking_key(values: Any, ranking: str) -> Any:
    """Return what the top-k is taken over: the values ("signed") or their magnitudes ("absolute")."""
    return abs(values) if ranking == "absolute" else values


def top_k_indices(key: Any, k: int, xp: Any = np) -> Any:
    """Return the indices (n_games, k) of the k largest ``key`` per game, largest first (ties: lower index)."""
    return xp.argsort(-key, axis=1, kind="stable")[:, :k]


def top_k_mask(key: Any, k: int, xp: Any = np) -> Any:
    """Boolean (n_games, d) membership of the current top-k."""
    mask = xp.zeros(key.shape, dtype=bool)
    mask[xp.arange(key.shape[0])[:, None], top_k_indices(key, k, xp)] = True
    return mask


def bonferroni_z(delta: float, d: int) -> float:
    """Return z = Φ⁻¹(1 − δ / (2 d)): two-sided intervals holding for all d players with probability 1 − δ."""
    return float(norm.isf(delta / (2.0 * d)))


def confidence_bounds(stats: RunningMoments, z: float, ranking: str) -> tuple[Any, Any]:
    """Lower and upper bounds of each player's ranking key (of |φ| for "absolute")."""
    xp = stats.xp
    half = z * stats.stderr()
    lower, upper = stats.mean - half, stats.mean + half
    if ranking == "absolute":
        lower, upper = xp.where(lower > 0, lower, xp.where(upper < 0, -upper, 0.0)), xp.maximum(-lower, upper)
    return lower, upper


def pac_satisfied(stats: RunningMoments, in_top: Any, z: float, epsilon: float, t_min: int, ranking: str) -> Any:
    """SHAP@K stopping rule per game: max_{j∉K̂} UCB_j − min_{i∈K̂} LCB_i ≤ ε, once all t ≥ t_min.

    A game whose top-k holds every player (k = d) satisfies it at once.
    """
    xp = stats.xp
    lower, upper = confidence_bounds(stats, z, ranking)
    gap = xp.where(~in_top, upper, -xp.inf).max(axis=1) - xp.where(in_top, lower, xp.inf).min(axis=1)
    return ((gap <= epsilon) & (stats.count.min(axis=1) >= t_min)) | in_top.all(axis=1)


class PairStats:
    """Greedy CMCS's T, D, Q (joint rounds, sum, sum of squares) of Δ_i − Δ_j (and Δ_i + Δ_j for "absolute")."""

    def __init__(self, n_games: int, d: int, ranking: str, xp: Any = np) -> None:
        self.xp = xp
        self.ranking = ranking
        self.joint = xp.zeros((n_games, d, d))
        self.diff_sum = xp.zeros((n_games, d, d))
        self.diff_sq = xp.zeros((n_games, d, d))
        if ranking == "absolute":
            self.plus_sum = xp.zeros((n_games, d, d))
            self.plus_sq = xp.zeros((n_games, d, d))

    def add(self, games: Any, samples: Any, taken: Any) -> None:
        """Add rounds of samples (r, d) taken where ``taken``; a game may have several rounds."""
        xp = self.xp
        d = samples.shape[1]
        both = taken[:, :, None] & taken[:, None, :]
        samples = xp.where(taken, samples, 0.0)
        diff = xp.where(both, samples[:, :, None] - samples[:, None, :], 0.0)
        # a game repeated in ``games`` (the warm-up's t_min rounds) must add every round, which
        # ``target[games] += values`` does not: sum the rounds of each game first, in order, by a
        # bincount over the game's position among the distinct games
        order = xp.argsort(games, kind="stable")
        sorted_games = games[order]
        first = xp.ones(games.shape[0], dtype=bool)
        first[1:] = sorted_games[1:] != sorted_games[:-1]
        distinct = sorted_games[first]
        group = xp.empty(games.shape[0], dtype=xp.intp)
        group[order] = xp.cumsum(first) - 1
        cells = (group[:, None] * d * d + xp.arange(d * d)).ravel()

        def accumulate(target: Any, values: Any) -> None:
            weights = values.reshape(-1).astype(xp.float64)
            target[distinct] += xp.bincount(cells, weights=weights, minlength=distinct.size * d * d).reshape(-1, d, d)

        accumulate(self.joint, both)
        accumulate(self.diff_sum, diff)
        accumulate(self.diff_sq, diff * diff)
        if self.ranking == "absolute":
            plus = xp.where(both, samples[:, :, None] + samples[:, None, :], 0.0)
            accumulate(self.plus_sum, plus)
            accumulate(self.plus_sq, plus * plus)

    def misorder_probability(self, games: Any, top: Any, rest: Any, signs: Any) -> tuple[Any, Any]:
        """p̂_ij = Φ(−D_ij / sqrt(σ̂²_ij T_ij)) for i in ``top`` (r, k), j in ``rest`` (r, d − k).

        Returns the (r, k, d − k) probabilities (0 where the variance is 0) and the joint counts.
        """
        xp = self.xp
        g = games[:, None, None]
        i, j = top[:, :, None], rest[:, None, :]
        joint = self.joint[g, i, j]
        total, squares = self.diff_sum[g, i, j], self.diff_sq[g, i, j]
        if self.ranking == "absolute":  # compare s_i Δ_i with s_j Δ_j, s the current signs
            s_i, s_j = xp.take_along_axis(signs, top, 1)[:, :, None], xp.take_along_axis(signs, rest, 1)[:, None, :]
            same = s_i == s_j
            total = s_i * xp.where(same, total, self.plus_sum[g, i, j])
            squares = xp.where(same, squares, self.plus_sq[g, i, j])
        safe = xp.maximum(joint, 2)
        variance = xp.maximum((squares - total * total / safe) / (safe - 1), 0.0)
        scale = xp.sqrt(variance * safe)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = -total / xp.where(scale > 0, scale, 1.0)
            probability = xp.where(scale > 0, scipy_special(xp).ndtr(z), 0.0)
        return probability, joint


@dataclass
class TopKResult:
    """What a top-k estimator returns, per game.

    Attributes
    ----------
    values : ndarray of shape (n_games, d)
        Shapley value estimates (unsampled players: 0).
    stderr : ndarray of shape (n_games, d)
        NaN below two samples; 0 for a lone player's exact value.
    counts : ndarray of shape (n_games, d)
        Samples per player (coalition values for the SVARM family).
    top_k : int ndarray of shape (n_games, k)
        The k best-ranked players, best first.
    n_evals : int ndarray of shape (n_games,)
        Evaluations of the game charged, v(∅) and v(N) included.
    pac_satisfied : bool ndarray of shape (n_games,)
        Whether the PAC rule held at the end (ε = 0 in fixed-budget mode); False for the SVARM family.
    """

    values: np.ndarray
    stderr: np.ndarray
    counts: np.ndarray
    top_k: np.ndarray
    n_evals: np.ndarray
    pac_satisfied: np.ndarray
