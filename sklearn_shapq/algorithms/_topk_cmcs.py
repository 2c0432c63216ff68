"""The CMCS family: Comparable Marginal Contributions Sampling, Greedy CMCS and CMCS@K.

A round draws one coalition S and samples Δ_i(S) = ±(v(S △ {i}) − v(S)) of the selected players.
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from sklearn_shapq._registry import register
from sklearn_shapq.algorithms._registry import ShapleyEstimate
from sklearn_shapq.algorithms._topk_base import (
    TopKAlgorithm,
    everyone_selected,
    run_adaptive,
    run_batched,
    run_stats_method,
)
from sklearn_shapq.algorithms._topk_state import Ledger, PairStats, PlayerStats, ranking_key
from sklearn_shapq.samplers import KeyedStream, sized_coalitions


def cmcs_coalition_probability(d: int) -> np.ndarray:
    """P_CMCS(S) = 1 / ((d + 1) C(d, s)) for each size s = 0 … d of S (Kolpaczki et al. 2025)."""
    return np.array([1.0 / ((d + 1) * comb(d, s)) for s in range(d + 1)])


def cmcs_coalitions(size_draws: Any, uniforms: Any, xp: Any = np) -> Any:
    """Coalitions (n, d) of the CMCS law from uniform draws: sizes (n,) and one draw per player (n, d).

    Examples
    --------
    >>> cmcs_coalitions(np.array([0.99, 0.0]), np.array([[0.2, 0.9, 0.5], [0.2, 0.9, 0.5]])).astype(int)
    array([[1, 1, 1],
           [0, 0, 0]])
    """
    d = uniforms.shape[1]
    sizes = xp.floor(size_draws * (d + 1)).astype(xp.int64)
    return sized_coalitions(uniforms, sizes, xp=xp)


def cmcs_round_cost(d: int) -> int:
    """Most evaluations one CMCS round pays: S and its d neighbours, less those equal to ∅ or N (free).

    For d <= 3 every coalition is ∅ or N or a neighbour of one of them, so a round pays at most d.

    Examples
    --------
    >>> cmcs_round_cost(3), cmcs_round_cost(10)
    (3, 11)
    """
    return d + 1 if d >= 4 else d


def one_cmcs_round(d: int) -> int:
    """v(∅), v(N) and one whole CMCS round: a marginal contribution of every player."""
    return 2 + cmcs_round_cost(d)


_ONE_ROUND = "v(∅), v(N) and one whole CMCS round, a marginal contribution of every player"


def extended_marginals(value: Any, neighbour_values: Any, coalitions: Any) -> Any:
    """Δ_i(S) = (1 − 2·1[i ∈ S]) (v(S △ {i}) − v(S)) for v(S) (r,) and v(S △ {i}) (r, d)."""
    return (1.0 - 2.0 * coalitions) * (neighbour_values - value[:, None])


def _flat_units(keep: Any, unit_of: Any, xp: Any) -> Any:
    """Renumber the unit ids of the kept cells 0, 1, … in order (they are non-decreasing)."""
    kept = unit_of[keep]
    new = xp.ones(kept.shape, dtype=bool)
    new[1:] = kept[1:] != kept[:-1]
    return xp.cumsum(new) - 1


def cmcs_rounds(ledger: Ledger, games: Any, selected: Any, stream: KeyedStream) -> tuple[Any, Any]:
    """One CMCS round per row: draw S, evaluate v(S) and v(S △ {i}) for the selected players.

    S is paid with its first neighbour, then neighbours in random order while the budget lasts.
    ``games`` (r,), ``selected`` (r, d); returns Δ_i(S) (r, d), NaN where not taken, and ``taken``.
    """
    xp = ledger.xp
    r, d = selected.shape
    draws = stream.uniform(games, 2 * d + 1)
    coalitions = cmcs_coalitions(draws[:, 0], draws[:, 1 : d + 1], xp)
    priority = xp.where(selected, draws[:, d + 1 :], xp.inf)
    order = xp.argsort(priority, axis=1)
    neighbours = coalitions[:, None, :] ^ xp.eye(d, dtype=bool)[order]
    keep_neighbours = xp.take_along_axis(selected, order, axis=1)
    masks = xp.concatenate([coalitions[:, None, :], neighbours], axis=1)
    keep = xp.concatenate([keep_neighbours.any(axis=1)[:, None], keep_neighbours], axis=1)
    unit_of = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.arange(d)]) + d * xp.arange(r)[:, None]
    row_games = xp.broadcast_to(games[:, None], keep.shape)
    values, paid = ledger.pay(masks[keep], row_games[keep], _flat_units(keep, unit_of, xp))
    all_values = xp.full(keep.shape, xp.nan)
    all_paid = xp.zeros(keep.shape, dtype=bool)
    all_values[keep], all_paid[keep] = values, paid
    in_s = xp.take_along_axis(coalitions, order, axis=1)
    ordered = extended_marginals(all_values[:, 0], all_values[:, 1:], in_s)
    samples = xp.empty((r, d))
    taken = xp.empty((r, d), dtype=bool)
    rows = xp.arange(r)[:, None]
    samples[rows, order] = ordered
    taken[rows, order] = all_paid[:, 1:]
    return samples, taken


def warm_up_cmcs(ledger: Ledger, stats: PlayerStats, pairs: PairStats | None, t_min: int, stream: KeyedStream) -> Any:
    """t_min full CMCS rounds per game, all of a game's in one chunk; returns the games whose budget lasted."""
    xp = ledger.xp
    d = ledger.n_players
    cut = xp.zeros(ledger.n_games, dtype=bool)
    cells = (d + 1) * d * (8 if pairs is not None else 1) * t_min  # pair updates: (r, d, d) floats
    per_chunk = max(1, (2**25) // cells)
    for start in range(0, ledger.n_games, per_chunk):  # whole games per chunk
        chunk = xp.repeat(xp.arange(start, min(start + per_chunk, ledger.n_games)), t_min)
        samples, taken = cmcs_rounds(ledger, chunk, everyone_selected(chunk, d, xp), stream)
        stats.add(chunk, samples, taken)
        if pairs is not None:
            pairs.add(chunk, samples, taken)
        cut[chunk[~taken.all(axis=1)]] = True
    return xp.flatnonzero(~cut)


@register
class CMCS(TopKAlgorithm):
    """Algorithm "cmcs": every player, every round, on one shared coalition."""

    name = "cmcs"
    minimum_needs = _ONE_ROUND

    @classmethod
    def minimum_evals(cls, d: int) -> int:
        """One whole CMCS round (:func:`one_cmcs_round`)."""
        return one_cmcs_round(d)

    def run(self, ledger: Ledger, stream: KeyedStream) -> ShapleyEstimate:
        """Batched rounds in fixed-budget mode; one round per game per step in PAC mode."""
        d, xp = ledger.n_players, ledger.xp

        def body(stats: PlayerStats) -> None:
            if self.epsilon == -np.inf:  # fixed budget: rounds are independent, so batch them

                def draw(games: Any) -> Any:
                    samples, taken = cmcs_rounds(ledger, games, everyone_selected(games, d, xp), stream)
                    stats.add(games, samples, taken)
                    return ~taken.all(axis=1)

                run_batched(ledger, draw, d if d > 2 else 1, (d + 1) * d, xp.arange(ledger.n_games))
                return
            active = warm_up_cmcs(ledger, stats, None, self.t_min, stream)
            run_adaptive(
                ledger,
                stats,
                active,
                lambda games: everyone_selected(games, d, xp),
                lambda games, selected: cmcs_rounds(ledger, games, selected, stream),
                self.stop_rule(stats),
                self.step_rounds,
                self.t_min,
            )

        return run_stats_method(self, ledger, body)


@register
class GreedyCMCS(TopKAlgorithm):
    """Algorithm "greedy_cmcs": after the warm-up, rounds sample the players of pairs likely to be mis-ordered."""

    name = "greedy_cmcs"
    adaptive = True
    minimum_needs = _ONE_ROUND

    @classmethod
    def minimum_evals(cls, d: int) -> int:
        """One whole CMCS round (:func:`one_cmcs_round`)."""
        return one_cmcs_round(d)

    def run(self, ledger: Ledger, stream: KeyedStream) -> ShapleyEstimate:
        """Warm up, then choose players by their pairs' mis-ordering probabilities."""
        d, k, ranking, t_min, xp = ledger.n_players, self.k, self.ranking, self.t_min, ledger.xp
        pairs = PairStats(ledger.n_games, d, ranking, xp)

        def body(stats: PlayerStats) -> None:
            active = warm_up_cmcs(ledger, stats, pairs, t_min, stream)

            def choose(games: Any) -> Any:
                selected = everyone_selected(games, d, xp)
                if k == d:
                    return selected
                means = stats.mean[games]
                order = xp.argsort(-ranking_key(means, ranking), axis=1, kind="stable")
                top, rest = order[:, :k], order[:, k:]
                probability, joint = pairs.misorder_probability(games, top, rest, xp.where(means < 0, -1.0, 1.0))
                low, high = probability.min(axis=(1, 2)), probability.max(axis=(1, 2))
                spread = xp.where(high > low, high - low, 1.0)[:, None, None]
                draws = stream.uniform(games, k * (d - k)).reshape(probability.shape)
                drawn = draws < (probability - low[:, None, None]) / spread
                chosen = xp.zeros((games.size, d), dtype=bool)
                rows = xp.arange(games.size)[:, None]
                chosen[rows, top] = drawn.any(axis=2)
                chosen[rows, rest] = drawn.any(axis=1)
                everyone = (joint < t_min).any(axis=(1, 2)) | (high == low)  # warming up, or nothing to prefer
                return xp.where(everyone[:, None], selected, chosen)

            def sample(games: Any, selected: Any) -> tuple[Any, Any]:
                samples, taken = cmcs_rounds(ledger, games, selected, stream)
                pairs.add(games, samples, taken)
                return samples, taken

            run_adaptive(ledger, stats, active, choose, sample, self.stop_rule(stats), self.step_rounds, t_min)

        return run_stats_method(self, ledger, body)

    @classmethod
    def bytes_per_game(cls, d: int, max_evals: float) -> int:
        """Return the working memory of a chunk of rounds and the five (d, d) pair statistics."""
        return super().bytes_per_game(d, max_evals) + 5 * 8 * d * d


@register
class CMCSAtK(TopKAlgorithm):
    """Algorithm "cmcs_at_k": SHAP@K with CMCS: the two players at the border of the top-k, on one coalition."""

    name = "cmcs_at_k"
    adaptive = True
    minimum_needs = _ONE_ROUND

    @classmethod
    def minimum_evals(cls, d: int) -> int:
        """One whole CMCS round (:func:`one_cmcs_round`)."""
        return one_cmcs_round(d)

    def run(self, ledger: Ledger, stream: KeyedStream) -> ShapleyEstimate:
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
