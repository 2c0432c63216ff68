"""The SVARM family of the top-k paper: SVARM and Stratified SVARM, from coalition values (no PAC mode).

SVARM: φ_i = mean v(A⁺ ∋ i) − mean v(A⁻ ∌ i); Stratified SVARM averages that by size (unsampled strata: 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq._registry import register
from sklearn_shapq.algorithms._registry import ShapleyEstimate
from sklearn_shapq.algorithms._topk_base import TopKAlgorithm, run_batched
from sklearn_shapq.algorithms._topk_state import Ledger, PlayerStats
from sklearn_shapq.samplers import KeyedStream, sized_coalitions


class _SVARMBase(TopKAlgorithm):
    pac = False
    stratified = False

    def run(self, ledger: Ledger, stream: KeyedStream) -> ShapleyEstimate:
        """Spend every game's budget on coalition values; return φ⁺ − φ⁻ per player."""
        n_games, d, xp = ledger.n_games, ledger.n_players, ledger.xp
        cells = d * d if self.stratified else d
        plus, minus = PlayerStats(n_games, cells, xp), PlayerStats(n_games, cells, xp)
        everyone = xp.arange(n_games)
        if self.stratified:
            top_cell = xp.zeros((n_games, d, d), dtype=bool)
            top_cell[:, :, d - 1] = True
            plus.add(everyone, xp.broadcast_to(ledger.full[:, None], (n_games, cells)), top_cell.reshape(n_games, -1))
            minus.add(
                everyone,
                xp.broadcast_to(ledger.empty[:, None], (n_games, cells)),
                xp.roll(top_cell, 1, 2).reshape(n_games, -1),
            )
        else:
            _svarm_warm_up(ledger, plus, minus, stream)

        def add(games: Any, coalitions: Any, values: Any, paid: Any) -> None:
            sizes = coalitions.sum(axis=1)
            samples = xp.broadcast_to(values[:, None], (games.size, cells))
            if self.stratified:
                plus_at = coalitions[:, :, None] & (xp.arange(d) == sizes[:, None, None] - 1)
                minus_at = ~coalitions[:, :, None] & (xp.arange(d) == sizes[:, None, None])
                plus_at, minus_at = plus_at.reshape(games.size, -1), minus_at.reshape(games.size, -1)
            else:
                plus_at, minus_at = coalitions, ~coalitions
            plus.add(games, samples, plus_at & paid[:, None])
            minus.add(games, samples, minus_at & paid[:, None])

        def draw(games: Any) -> Any:
            r = games.size
            if self.stratified:
                first = sized_coalitions(stream.uniform(games, d), stream.integers(games, 1, d), xp=xp)
                coalitions = xp.stack([first, ~first], axis=1).reshape(-1, d)
                units = xp.repeat(xp.arange(r), 2)
            else:
                harmonic = 1.0 / np.arange(1, d + 1)
                size_plus = stream.choice(games, np.arange(1, d + 1), harmonic)
                size_minus = d - stream.choice(games, np.arange(1, d + 1), harmonic)
                pair = [
                    sized_coalitions(stream.uniform(games, d), size_plus, xp=xp),
                    sized_coalitions(stream.uniform(games, d), size_minus, xp=xp),
                ]
                coalitions = xp.stack(pair, axis=1).reshape(-1, d)
                units = xp.arange(2 * r)
            values, paid = ledger.pay(coalitions, xp.repeat(games, 2), units)
            pair_paid = paid.reshape(r, 2)
            if self.stratified:
                add(xp.repeat(games, 2), coalitions, values, paid)
            else:  # A⁺ updates φ⁺ only, A⁻ updates φ⁻ only
                both = coalitions.reshape(r, 2, d)
                plus.add(games, xp.broadcast_to(values[0::2, None], (r, d)), both[:, 0] & pair_paid[:, :1])
                minus.add(games, xp.broadcast_to(values[1::2, None], (r, d)), ~both[:, 1] & pair_paid[:, 1:])
            return ~pair_paid.all(axis=1)

        run_batched(ledger, draw, 2, 2 * d * cells, everyone[ledger.remaining > 0])
        if self.stratified:
            shape = (n_games, d, d)
            values = (plus.mean - minus.mean).reshape(shape).sum(axis=2) / d
            variance = (plus.stderr() ** 2 + minus.stderr() ** 2).reshape(shape).sum(axis=2)
            counts = (plus.count + minus.count).reshape(shape).sum(axis=2)
            return ShapleyEstimate(
                values=values, stderr=xp.sqrt(variance) / d, dof=None, n_evals=ledger.used, counts=counts
            )
        stderr = xp.sqrt(plus.stderr(xp.nan) ** 2 + minus.stderr(xp.nan) ** 2)  # NaN below two samples of either
        return ShapleyEstimate(
            values=plus.mean - minus.mean, stderr=stderr, dof=None, n_evals=ledger.used, counts=plus.count + minus.count
        )


def _svarm_warm_up(ledger: Ledger, plus: PlayerStats, minus: PlayerStats, stream: KeyedStream) -> None:
    """SVARM's warm-up: per player i, one v(A ∪ {i}) for φ⁺_i and one v(A') for φ⁻_i, A, A' ∌ i."""
    n_games, d, xp = ledger.n_games, ledger.n_players, ledger.xp
    games = xp.repeat(xp.arange(n_games), d)
    player = xp.tile(xp.arange(d), n_games)

    def without_player() -> Any:
        return sized_coalitions(stream.uniform(games, d), stream.integers(games, 0, d), player, xp)

    with_player = without_player()
    with_player[xp.arange(player.size), player] = True
    coalitions = xp.stack([with_player, without_player()], axis=1).reshape(-1, d)
    values, paid = ledger.pay(coalitions, xp.repeat(games, 2), xp.arange(2 * player.size))
    own = xp.arange(d) == player[:, None]
    plus.add(games, xp.broadcast_to(values[0::2, None], own.shape), own & paid[0::2, None])
    minus.add(games, xp.broadcast_to(values[1::2, None], own.shape), own & paid[1::2, None])


@register
class SVARM(_SVARMBase):
    """Algorithm "svarm": SVARM (Kolpaczki et al. 2024)."""

    name = "svarm"
    minimum_needs = "v(∅), v(N) and the warm-up's 2 d coalitions: one sample of φ⁺_i and one of φ⁻_i per player"

    @classmethod
    def minimum_evals(cls, d: int) -> int:
        """v(∅), v(N) and the warm-up: one v(A ∪ {i}) and one v(A') per player."""
        return 2 + 2 * d


@register
class StratifiedSVARM(_SVARMBase):
    """Algorithm "stratified_svarm": the paper's Stratified SVARM."""

    name = "stratified_svarm"
    stratified = True
    minimum_needs = (
        "v(∅), v(N) and d − 1 pairs of complements: the fewest with which each of a player's d − 1 sampled sizes "
        "can have a sample (an empty stratum counts as 0)"
    )

    @classmethod
    def minimum_evals(cls, d: int) -> int:
        """v(∅), v(N) and d − 1 pairs: below, every player surely has an empty stratum."""
        return 2 + 2 * (d - 1)
