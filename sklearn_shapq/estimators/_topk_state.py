"""Budget ledger, running statistics and confidence bounds shared by the top-k estimators.

All state has a leading axis over the ``n_games`` games of a :class:`~sklearn_shapq.games.Game`
(rows of a local explanation, or repeated runs), so one Python loop over rounds serves every game
at once. Every per-game quantity depends only on that game's own draws and values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr
from scipy.stats import norm

from sklearn_shapq.estimators._moments import RunningMoments

RANKINGS = ("signed", "absolute")


class Ledger:
    """Evaluates coalitions against a per-game budget; v(∅) and v(N) are cached and charged once.

    On creation v(∅) and v(N) of every game are taken from the game's cache (charged 2
    evaluations per game, as in the paper); afterwards a coalition equal to ∅ or N is free.
    :meth:`pay` evaluates only what fits in each game's budget, in one call of the game, and
    brings back to the host the values of the output each game ranks.

    Parameters
    ----------
    game : Game
    max_evals : int or None
        Evaluations per game, including v(∅) and v(N); None: unlimited.
    outputs : int array of shape (n_games,), optional
        Which model output each game ranks (default: output 0).
    """

    def __init__(self, game: object, max_evals: int | None, outputs: np.ndarray | None = None) -> None:
        d, n_games = game.n_players, game.n_games
        self.game = game
        self.n_players = d
        self.n_games = n_games
        self.budget = np.inf if max_evals is None else float(max_evals)
        if self.budget < 2:
            raise ValueError(f"max_evals must be at least 2 (v(∅) and v(N)), got {max_evals}.")
        self.outputs = np.zeros(n_games, dtype=np.intp) if outputs is None else np.asarray(outputs, dtype=np.intp)
        every = np.arange(n_games)
        to_numpy = game.backend.to_numpy
        self.empty = to_numpy(game.empty_value)[every, self.outputs].copy()
        self.full = to_numpy(game.full_value)[every, self.outputs].copy()
        self.used = np.full(n_games, 2, dtype=np.int64)

    @property
    def remaining(self) -> np.ndarray:
        """Evaluations left per game (inf when unlimited)."""
        return self.budget - self.used

    def pay(self, masks: np.ndarray, games: np.ndarray, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate the affordable units of coalitions, in order, in one game call.

        Parameters
        ----------
        masks : bool array of shape (m, d)
        games : int array of shape (m,)
            Game of each coalition.
        units : int array of shape (m,)
            Coalitions that are paid together share a unit; units are numbered 0, 1, … in the
            order of ``masks`` (non-decreasing). Per game, units are paid in order while their
            cumulative cost fits the remaining budget; ∅ and N cost nothing.

        Returns
        -------
        values : ndarray of shape (m,)
            v of each paid coalition, NaN for the others.
        paid : bool ndarray of shape (m,)
        """
        sizes = masks.sum(axis=1)
        free = (sizes == 0) | (sizes == self.n_players)
        n_units = int(units[-1]) + 1 if units.size else 0
        unit_cost = np.bincount(units, weights=~free, minlength=n_units)
        unit_game = np.zeros(n_units, dtype=np.intp)
        unit_game[units] = games
        order = np.argsort(unit_game, kind="stable")  # units of each game together, in order
        cumulative = np.cumsum(unit_cost[order])
        group_start = np.searchsorted(unit_game[order], unit_game[order], side="left")
        before_group = np.concatenate([[0.0], cumulative])[group_start]
        spent = np.empty(n_units)
        spent[order] = cumulative - before_group
        paid = (spent <= self.remaining[unit_game])[units]
        values = np.full(masks.shape[0], np.nan)
        charged = paid & ~free
        if charged.any():
            paid_games = games[charged]
            out = self.game.backend.to_numpy(self.game(masks[charged], paid_games))
            values[charged] = out[np.arange(paid_games.size), self.outputs[paid_games]]
        values[paid & (sizes == 0)] = self.empty[games[paid & (sizes == 0)]]
        full = paid & (sizes == self.n_players)
        values[full] = self.full[games[full]]
        self.used += np.bincount(games[charged], minlength=self.n_games)
        return values, paid


class PlayerStats(RunningMoments):
    """Running count, mean and sum of squared deviations per (game, player), merged stably."""

    def __init__(self, n_games: int, d: int) -> None:
        super().__init__((n_games, d))

    def add(self, games: np.ndarray, samples: np.ndarray, taken: np.ndarray) -> None:
        """Add ``samples[r, j]`` where ``taken[r, j]`` to game ``games[r]``, player j."""
        n_games, d = self.mean.shape
        flat = (games[:, None] * d + np.arange(d)).ravel()
        weight = taken.ravel().astype(np.float64)
        samples = np.where(taken, samples, 0.0).ravel()

        def per_cell(values: np.ndarray) -> np.ndarray:
            return np.bincount(flat, weights=values, minlength=n_games * d).reshape(n_games, d)

        count_b = per_cell(weight)
        mean_b = per_cell(samples) / np.maximum(count_b, 1)
        deviation = (samples - mean_b.ravel()[flat]) * weight
        self.merge(count_b, mean_b, per_cell(deviation * deviation))


def ranking_key(values: np.ndarray, ranking: str) -> np.ndarray:
    """Return what the top-k is taken over: the values ("signed") or their magnitudes ("absolute")."""
    return np.abs(values) if ranking == "absolute" else values


def top_k_indices(key: np.ndarray, k: int) -> np.ndarray:
    """Return the indices (n_games, k) of the k largest ``key`` per game, largest first (ties: lower index)."""
    return np.argsort(-key, axis=1, kind="stable")[:, :k]


def top_k_mask(key: np.ndarray, k: int) -> np.ndarray:
    """Boolean (n_games, d) membership of the current top-k."""
    mask = np.zeros(key.shape, dtype=bool)
    np.put_along_axis(mask, top_k_indices(key, k), True, axis=1)
    return mask


def bonferroni_z(delta: float, d: int) -> float:
    """Return z = Φ⁻¹(1 − δ / (2 d)): two-sided intervals holding for all d players with probability 1 − δ."""
    return float(norm.isf(delta / (2.0 * d)))


def confidence_bounds(stats: PlayerStats, z: float, ranking: str) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of each player's ranking key (of |φ| for "absolute")."""
    half = z * stats.stderr()
    lower, upper = stats.mean - half, stats.mean + half
    if ranking == "absolute":
        lower, upper = np.where(lower > 0, lower, np.where(upper < 0, -upper, 0.0)), np.maximum(-lower, upper)
    return lower, upper


def pac_satisfied(
    stats: PlayerStats, in_top: np.ndarray, z: float, epsilon: float, t_min: int, ranking: str
) -> np.ndarray:
    """SHAP@K stopping rule per game: max_{j∉K̂} UCB_j − min_{i∈K̂} LCB_i ≤ ε, once all t ≥ t_min."""
    lower, upper = confidence_bounds(stats, z, ranking)
    if in_top.all():
        return np.ones(in_top.shape[0], dtype=bool)
    gap = np.where(~in_top, upper, -np.inf).max(axis=1) - np.where(in_top, lower, np.inf).min(axis=1)
    return (gap <= epsilon) & (stats.count.min(axis=1) >= t_min)


class PairStats:
    """Statistics of Δ_i − Δ_j (and Δ_i + Δ_j for absolute ranking) over rounds sampling both.

    T, D, Q of Greedy CMCS (joint rounds, sum, sum of squares); the sums of Δ_i + Δ_j let a pair
    be compared by magnitude when the current signs of i and j differ.
    """

    def __init__(self, n_games: int, d: int, ranking: str) -> None:
        self.ranking = ranking
        self.joint = np.zeros((n_games, d, d))
        self.diff_sum = np.zeros((n_games, d, d))
        self.diff_sq = np.zeros((n_games, d, d))
        if ranking == "absolute":
            self.plus_sum = np.zeros((n_games, d, d))
            self.plus_sq = np.zeros((n_games, d, d))

    def add(self, games: np.ndarray, samples: np.ndarray, taken: np.ndarray) -> None:
        """Add rounds of samples (r, d) taken where ``taken``; a game may have several rounds."""
        both = taken[:, :, None] & taken[:, None, :]
        samples = np.where(taken, samples, 0.0)
        diff = np.where(both, samples[:, :, None] - samples[:, None, :], 0.0)
        # a game repeated in ``games`` (the warm-up's t_min rounds) must add every round, which
        # ``target[games] += values`` does not: sum the rounds of each game first
        order = np.argsort(games, kind="stable")
        sorted_games = games[order]
        starts = np.flatnonzero(np.concatenate([[True], sorted_games[1:] != sorted_games[:-1]]))

        def accumulate(target: np.ndarray, values: np.ndarray) -> None:
            if starts.size == games.size:  # one round per game (adaptive rounds)
                target[games] += values
            elif starts.size:
                target[sorted_games[starts]] += np.add.reduceat(values[order], starts, axis=0)

        accumulate(self.joint, both)
        accumulate(self.diff_sum, diff)
        accumulate(self.diff_sq, diff * diff)
        if self.ranking == "absolute":
            plus = np.where(both, samples[:, :, None] + samples[:, None, :], 0.0)
            accumulate(self.plus_sum, plus)
            accumulate(self.plus_sq, plus * plus)

    def misorder_probability(self, games: np.ndarray, top: np.ndarray, rest: np.ndarray, signs: np.ndarray):
        """p̂_ij = Φ(−D_ij / sqrt(σ̂²_ij T_ij)) for i in ``top`` (r, k), j in ``rest`` (r, d − k).

        Returns the (r, k, d − k) probabilities (0 where the variance is 0) and the joint counts.
        """
        g = games[:, None, None]
        i, j = top[:, :, None], rest[:, None, :]
        joint = self.joint[g, i, j]
        total, squares = self.diff_sum[g, i, j], self.diff_sq[g, i, j]
        if self.ranking == "absolute":  # compare s_i Δ_i with s_j Δ_j, s the current signs
            s_i, s_j = np.take_along_axis(signs, top, 1)[:, :, None], np.take_along_axis(signs, rest, 1)[:, None, :]
            same = s_i == s_j
            total = s_i * np.where(same, total, self.plus_sum[g, i, j])
            squares = np.where(same, squares, self.plus_sq[g, i, j])
        safe = np.maximum(joint, 2)
        variance = np.maximum((squares - total * total / safe) / (safe - 1), 0.0)
        scale = np.sqrt(variance * safe)
        with np.errstate(divide="ignore", invalid="ignore"):
            probability = np.where(scale > 0, ndtr(-total / np.where(scale > 0, scale, 1.0)), 0.0)
        return probability, joint


@dataclass
class TopKResult:
    """What a top-k estimator returns, per game.

    Attributes
    ----------
    values : ndarray of shape (n_games, d)
        Shapley value estimates (unsampled players: 0).
    stderr : ndarray of shape (n_games, d)
        Standard errors of the estimates (0 below two samples).
    counts : ndarray of shape (n_games, d)
        Samples (marginal contributions, or coalition values for the SVARM family) per player.
    top_k : int ndarray of shape (n_games, k)
        The k best-ranked players, best first.
    n_evals : int ndarray of shape (n_games,)
        Evaluations of the game charged, v(∅) and v(N) included.
    pac_satisfied : bool ndarray of shape (n_games,)
        Whether the PAC stopping rule held at the end (with ε = 0 in fixed-budget mode: the
        bounds of the top k and the rest are separated); always False for the SVARM family.
    """

    values: np.ndarray
    stderr: np.ndarray
    counts: np.ndarray
    top_k: np.ndarray
    n_evals: np.ndarray
    pac_satisfied: np.ndarray
