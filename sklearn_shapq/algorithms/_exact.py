"""Exact Shapley values by enumerating all 2^d coalitions."""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq._registry import register
from sklearn_shapq.algorithms._registry import DEFAULT_MASK_BYTES, ShapleyAlgorithm, ShapleyEstimate
from sklearn_shapq.games import MAX_ENUMERATED_PLAYERS, coalition_masks, shapley_from_table

_CODE_CHUNK = 1 << 16
"""Coalition codes decoded per step (a fixed number, so a game's values never depend on the block)."""


def exact_shapley(game: Any, games: Any, *, max_mask_bytes: int = DEFAULT_MASK_BYTES) -> Any:
    """Exact Shapley values of games ``games`` (B,), from all 2^d coalitions.

    Costs 2^d − 2 new evaluations per game.

    Returns
    -------
    array of shape (B, d, n_outputs)

    Examples
    --------
    >>> from sklearn_shapq.games import TableGame
    >>> exact_shapley(TableGame([0.0, 1.0, 2.0, 4.0]), np.array([0]))[0, :, 0]
    array([1.5, 2.5])
    """
    backend = game.backend
    xp = backend.xp
    d, k = game.n_players, game.n_outputs
    games = backend.to_device(games)
    n_rows = games.shape[0]
    n_coalitions = 1 << d
    table = xp.empty((n_rows, n_coalitions, k), dtype=xp.float64)
    table[:, 0] = game.empty_value[games]
    table[:, -1] = game.full_value[games]
    step = max(1, min(_CODE_CHUNK, max_mask_bytes // max(1, 8 * n_rows * d)))  # masks decode through int64
    for start in range(1, n_coalitions - 1, step):
        stop = min(start + step, n_coalitions - 1)
        masks = coalition_masks(xp.arange(start, stop, dtype=xp.int64), d, xp)
        table[:, start:stop] = game.grid(games, xp.broadcast_to(masks, (n_rows, stop - start, d)))
    return shapley_from_table(table, xp)


@register
class ExactAlgorithm(ShapleyAlgorithm):
    """Algorithm "exact": all 2^d coalitions (d <= 30); values with zero standard errors."""

    name = "exact"

    @classmethod
    def minimum_evals(cls, n_players: int) -> int:
        """2^d: every coalition once."""
        return 2**n_players

    @classmethod
    def refusal(cls, max_evals: int, n_players: int) -> str | None:
        """Refuse d > 30 (2^d coalitions) and budgets below 2^d."""
        if n_players > MAX_ENUMERATED_PLAYERS:
            return f"algorithm='exact' enumerates 2^{n_players} coalitions; use it for d <= {MAX_ENUMERATED_PLAYERS}."
        return super().refusal(max_evals, n_players)

    @classmethod
    def draws_per_game(cls) -> bool:
        """No draws: every game enumerates the same coalitions."""
        return False

    def plan(self, max_evals: int) -> int:
        """Spend 2^d whatever the budget."""
        return 2**self.n_players

    def bytes_per_game(self, n_outputs: int) -> int:
        """Return the bytes of the 2^d × k table of a game and its share of a chunk of masks."""
        return (1 << self.n_players) * n_outputs * 8 + _CODE_CHUNK * self.n_players

    def estimate(self, game: Any, games: np.ndarray, keys: np.ndarray) -> ShapleyEstimate:
        """Enumerate every coalition of each game."""
        values = exact_shapley(game, games)
        n_rows = len(games)
        return ShapleyEstimate(
            values=values,
            stderr=game.backend.xp.zeros_like(values),
            n_evals=np.full(n_rows, self.n_evals),
            dof=np.full(n_rows, np.inf),
        )
