"""The CMCS family: Comparable Marginal Contributions Sampling, Greedy CMCS and CMCS@K.

Every CMCS round draws one coalition S (size uniform on {0, …, d}, then uniform among the
coalitions of that size) and samples the extended marginal contribution
Δ_i(S) = (1 − 2·1[i ∈ S]) (v(S △ {i}) − v(S)) of the selected players, so that players are
compared on the same coalitions.
"""

from __future__ import annotations

from math import comb

import numpy as np

from sklearn_shapq.estimators._topk_base import (
    TopKEstimator,
    everyone_selected,
    register_topk,
    run_adaptive,
    run_batched,
    run_stats_method,
)
from sklearn_shapq.estimators._topk_state import Ledger, PairStats, PlayerStats, ranking_key
from sklearn_shapq.samplers import KeyedStream, sized_coalitions


def cmcs_coalition_probability(d: int) -> np.ndarray:
    """P_CMCS(S) = 1 / ((d + 1) C(d, s)) for each size s = 0 … d of S (spec Eq. 15)."""
    return np.array([1.0 / ((d + 1) * comb(d, s)) for s in range(d + 1)])


def cmcs_coalitions(size_draws: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Coalitions (n, d) of the CMCS law from uniform draws: sizes (n,) and one draw per player (n, d).

    Examples
    --------
    >>> cmcs_coalitions(np.array([0.99, 0.0]), np.array([[0.2, 0.9, 0.5], [0.2, 0.9, 0.5]])).astype(int)
    array([[1, 1, 1],
           [0, 0, 0]])
    """
    d = uniforms.shape[1]
    sizes = np.floor(size_draws * (d + 1)).astype(np.int64)
    return sized_coalitions(uniforms, sizes)


def extended_marginals(value: np.ndarray, neighbour_values: np.ndarray, coalitions: np.ndarray) -> np.ndarray:
    """Δ_i(S) = (1 − 2·1[i ∈ S]) (v(S △ {i}) − v(S)) for v(S) (r,) and v(S △ {i}) (r, d)."""
    return np.where(coalitions, -1.0, 1.0) * (neighbour_values - value[:, None])


def _flat_units(keep: np.ndarray, unit_of: np.ndarray) -> np.ndarray:
    """Renumber the unit ids of the kept cells 0, 1, … in order (they are non-decreasing)."""
    return np.unique(unit_of[keep], return_inverse=True)[1]


def cmcs_rounds(
    ledger: Ledger, games: np.ndarray, selected: np.ndarray, stream: KeyedStream
) -> tuple[np.ndarray, np.ndarray]:
    """One CMCS round per row: draw S, evaluate v(S) and v(S △ {i}) for the selected players.

    Rows of one game are paid in order. Within a row, S is paid together with the first
    neighbour, then neighbours one by one in a random order, while the budget lasts.

    Parameters
    ----------
    games : int array of shape (r,)
        Game of each round (a game may have several consecutive rounds).
    selected : bool array of shape (r, d)
        Players to sample in each round.

    Returns
    -------
    samples : ndarray of shape (r, d)
        Extended marginal contributions Δ_i(S) (NaN where not taken).
    taken : bool ndarray of shape (r, d)
    """
    r, d = selected.shape
    draws = stream.uniform(games, 2 * d + 1)
    coalitions = cmcs_coalitions(draws[:, 0], draws[:, 1 : d + 1])
    priority = np.where(selected, draws[:, d + 1 :], np.inf)
    order = np.argsort(priority, axis=1)
    neighbours = coalitions[:, None, :] ^ np.eye(d, dtype=bool)[order]
    keep_neighbours = np.take_along_axis(selected, order, axis=1)
    masks = np.concatenate([coalitions[:, None, :], neighbours], axis=1)
    keep = np.concatenate([keep_neighbours.any(axis=1)[:, None], keep_neighbours], axis=1)
    unit_of = np.concatenate([np.zeros(1, dtype=np.int64), np.arange(d)]) + d * np.arange(r)[:, None]
    row_games = np.broadcast_to(games[:, None], keep.shape)
    values, paid = ledger.pay(masks[keep], row_games[keep], _flat_units(keep, unit_of))
    all_values = np.full(keep.shape, np.nan)
    all_paid = np.zeros(keep.shape, dtype=bool)
    all_values[keep], all_paid[keep] = values, paid
    in_s = np.take_along_axis(coalitions, order, axis=1)
    ordered = extended_marginals(all_values[:, 0], all_values[:, 1:], in_s)
    samples = np.empty((r, d))
    taken = np.empty((r, d), dtype=bool)
    np.put_along_axis(samples, order, ordered, axis=1)
    np.put_along_axis(taken, order, all_paid[:, 1:], axis=1)
    return samples, taken


def warm_up_cmcs(
    ledger: Ledger, stats: PlayerStats, pairs: PairStats | None, t_min: int, stream: KeyedStream
) -> np.ndarray:
    """t_min full CMCS rounds per game, all of a game's in one chunk; returns the games whose budget lasted."""
    d = ledger.n_players
    cut = np.zeros(ledger.n_games, dtype=bool)
    cells = (d + 1) * d * (8 if pairs is not None else 1) * t_min  # pair updates: (r, d, d) floats
    per_chunk = max(1, (2**25) // cells)
    for start in range(0, ledger.n_games, per_chunk):  # whole games per chunk
        chunk = np.repeat(np.arange(start, min(start + per_chunk, ledger.n_games)), t_min)
        samples, taken = cmcs_rounds(ledger, chunk, everyone_selected(chunk, d), stream)
        stats.add(chunk, samples, taken)
        if pairs is not None:
            pairs.add(chunk, samples, taken)
        cut[chunk[~taken.all(axis=1)]] = True
    return np.flatnonzero(~cut)


@register_topk
class CMCS(TopKEstimator):
    """Method "cmcs": every player, every round, on one shared coalition."""

    name = "cmcs"

    def run(self, ledger: Ledger, stream: KeyedStream) -> tuple:
        """Batched rounds in fixed-budget mode; one round per game per step in PAC mode."""
        d = ledger.n_players

        def body(stats: PlayerStats) -> None:
            if self.epsilon == -np.inf:  # fixed budget: rounds are independent, so batch them

                def draw(games: np.ndarray) -> np.ndarray:
                    samples, taken = cmcs_rounds(ledger, games, everyone_selected(games, d), stream)
                    stats.add(games, samples, taken)
                    return ~taken.all(axis=1)

                run_batched(ledger, draw, d if d > 2 else 1, (d + 1) * d, np.arange(ledger.n_games))
                return
            active = warm_up_cmcs(ledger, stats, None, self.t_min, stream)
            run_adaptive(
                ledger,
                stats,
                active,
                lambda games: everyone_selected(games, d),
                lambda games, selected: cmcs_rounds(ledger, games, selected, stream),
                self.stop_rule(stats),
                self.step_rounds,
                self.t_min,
            )

        return run_stats_method(self, ledger, body)


@register_topk
class GreedyCMCS(TopKEstimator):
    """Method "greedy_cmcs": after the warm-up, rounds sample the players of pairs likely to be mis-ordered."""

    name = "greedy_cmcs"
    adaptive = True

    def run(self, ledger: Ledger, stream: KeyedStream) -> tuple:
        """Warm up, then choose players by their pairs' mis-ordering probabilities."""
        d, k, ranking, t_min = ledger.n_players, self.k, self.ranking, self.t_min
        pairs = PairStats(ledger.n_games, d, ranking)

        def body(stats: PlayerStats) -> None:
            active = warm_up_cmcs(ledger, stats, pairs, t_min, stream)

            def choose(games: np.ndarray) -> np.ndarray:
                selected = everyone_selected(games, d)
                if k == d:
                    return selected
                means = stats.mean[games]
                order = np.argsort(-ranking_key(means, ranking), axis=1, kind="stable")
                top, rest = order[:, :k], order[:, k:]
                probability, joint = pairs.misorder_probability(games, top, rest, np.where(means < 0, -1.0, 1.0))
                low, high = probability.min(axis=(1, 2)), probability.max(axis=(1, 2))
                spread = np.where(high > low, high - low, 1.0)[:, None, None]
                draws = stream.uniform(games, k * (d - k)).reshape(probability.shape)
                drawn = draws < (probability - low[:, None, None]) / spread
                chosen = np.zeros((games.size, d), dtype=bool)
                np.put_along_axis(chosen, top, drawn.any(axis=2), axis=1)
                np.put_along_axis(chosen, rest, drawn.any(axis=1), axis=1)
                everyone = (joint < t_min).any(axis=(1, 2)) | (high == low)  # warming up, or nothing to prefer
                return np.where(everyone[:, None], selected, chosen)

            def sample(games: np.ndarray, selected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                samples, taken = cmcs_rounds(ledger, games, selected, stream)
                pairs.add(games, samples, taken)
                return samples, taken

            run_adaptive(ledger, stats, active, choose, sample, self.stop_rule(stats), self.step_rounds, t_min)

        return run_stats_method(self, ledger, body)

    @classmethod
    def bytes_per_game(cls, d: int, max_evals: float) -> int:
        """Return the working memory of a chunk of rounds and the five (d, d) pair statistics."""
        return super().bytes_per_game(d, max_evals) + 5 * 8 * d * d


@register_topk
class CMCSAtK(TopKEstimator):
    """Method "cmcs_at_k": SHAP@K with CMCS: the two players at the border of the top-k, on one coalition."""

    name = "cmcs_at_k"
    adaptive = True

    def run(self, ledger: Ledger, stream: KeyedStream) -> tuple:
        """Warm up, then sample the border pair each round."""

        def body(stats: PlayerStats) -> None:
            active = warm_up_cmcs(ledger, stats, None, self.t_min, stream)
            run_adaptive(
                ledger,
                stats,
                active,
                lambda games: self.border_pair(stats, games),
                lambda games, selected: cmcs_rounds(ledger, games, selected, stream),
                self.stop_rule(stats),
                self.step_rounds,
                self.t_min,
            )

        return run_stats_method(self, ledger, body)
