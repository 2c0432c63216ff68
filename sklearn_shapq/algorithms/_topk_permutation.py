"""Permutation baselines of the top-k paper: ApproShapley (whole walks) and SamplingSHAP@K (the top-k border)."""

from __future__ import annotations

from typing import Any

from sklearn_shapq._registry import register
from sklearn_shapq.algorithms._permutation_walk import walk_gains
from sklearn_shapq.algorithms._registry import ShapleyEstimate
from sklearn_shapq.algorithms._topk_base import (
    TopKAlgorithm,
    run_adaptive,
    run_batched,
    run_stats_method,
)
from sklearn_shapq.algorithms._topk_state import Ledger, PlayerStats
from sklearn_shapq.games import prefix_masks
from sklearn_shapq.samplers import KeyedStream


def permutation_rounds(ledger: Ledger, games: Any, stream: KeyedStream) -> tuple[Any, Any]:
    """One ApproShapley permutation per row, walked with reuse (d − 1 paid evaluations).

    Returns marginal contributions (r, d) and which were taken. A walk is paid whole or not at all:
    a walk cut short would bias its first players.
    """
    xp = ledger.xp
    r, d = games.shape[0], ledger.n_players
    position = stream.ranks(games, d)
    masks = prefix_masks(position, xp)  # (r, d − 1, d): prefixes of sizes 1 … d − 1
    units = xp.repeat(xp.arange(r), d - 1)
    values, paid = ledger.pay(masks.reshape(-1, d), xp.repeat(games, d - 1), units)
    path = xp.concatenate([ledger.empty[games, None], values.reshape(r, d - 1), ledger.full[games, None]], axis=1)
    gains = walk_gains(path[:, :, None], position, xp)[:, :, 0]
    taken = xp.broadcast_to(paid.reshape(r, d - 1)[:, :1], (r, d))
    return gains, taken


def pair_marginals(ledger: Ledger, games: Any, selected: Any, stream: KeyedStream) -> tuple[Any, Any]:
    """SamplingSHAP@K round: for each selected player i, v(pre ∪ {i}) − v(pre) on one permutation.

    pre: the players before i in a fresh uniform permutation; a player's two coalitions are paid as a unit.
    """
    xp = ledger.xp
    r, d = selected.shape
    position = stream.ranks(games, d)
    rows, players = xp.nonzero(selected)
    before = position[rows] < position[rows, players][:, None]
    masks = xp.stack([before, before | (xp.arange(d) == players[:, None])], axis=1).reshape(-1, d)
    values, paid = ledger.pay(masks, xp.repeat(games[rows], 2), xp.repeat(xp.arange(rows.size), 2))
    samples = xp.full((r, d), xp.nan)
    taken = xp.zeros((r, d), dtype=bool)
    samples[rows, players] = values[1::2] - values[0::2]
    taken[rows, players] = paid[1::2]
    return samples, taken


@register
class ApproShapley(TopKAlgorithm):
    """Algorithm "permutation": ApproShapley (Castro et al. 2009), whole permutation walks."""

    name = "permutation"
    pac = False
    minimum_needs = "v(∅), v(N) and one permutation walk of d − 1 evaluations, a marginal contribution of every player"

    @classmethod
    def minimum_evals(cls, d: int) -> int:
        """v(∅), v(N) and one walk (paid whole)."""
        return 2 + (d - 1)

    def run(self, ledger: Ledger, stream: KeyedStream) -> ShapleyEstimate:
        """Walk permutations until every game's budget is spent."""
        d = ledger.n_players

        def body(stats: PlayerStats) -> None:
            def draw(games: Any) -> Any:
                samples, taken = permutation_rounds(ledger, games, stream)
                stats.add(games, samples, taken)
                return ~taken.all(axis=1)

            run_batched(ledger, draw, d - 1, d * d, ledger.xp.arange(ledger.n_games))

        return run_stats_method(self, ledger, body)


@register
class SamplingShapAtK(TopKAlgorithm):
    """Algorithm "sampling_shap_at_k": SHAP@K with permutation sampling of the border pair."""

    name = "sampling_shap_at_k"
    adaptive = True
    minimum_needs = "v(∅), v(N) and one warm-up walk of d − 1 evaluations, a marginal contribution of every player"

    @classmethod
    def minimum_evals(cls, d: int) -> int:
        """v(∅), v(N) and the first warm-up walk (paid whole)."""
        return 2 + (d - 1)

    @classmethod
    def warm_up_evals(cls, d: int, t_min: int) -> int:
        """Return the warm-up evaluations: v(∅), v(N) and t_min permutations of d − 1 evaluations."""
        return 2 + t_min * (d - 1)

    def run(self, ledger: Ledger, stream: KeyedStream) -> ShapleyEstimate:
        """Warm up with t_min permutations per game, then sample the border pair."""
        xp = ledger.xp

        def body(stats: PlayerStats) -> None:
            games = xp.repeat(xp.arange(ledger.n_games), self.t_min)
            samples, taken = permutation_rounds(ledger, games, stream)
            stats.add(games, samples, taken)
            cut = xp.zeros(ledger.n_games, dtype=bool)
            cut[games[~taken.all(axis=1)]] = True
            run_adaptive(
                ledger,
                stats,
                xp.flatnonzero(~cut),
                lambda active: self.border_pair(stats, active),
                lambda active, selected: pair_marginals(ledger, active, selected, stream),
                self.stop_rule(stats),
                self.step_rounds,
                self.t_min,
            )

        return run_stats_method(self, ledger, body)
