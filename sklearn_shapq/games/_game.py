"""The game protocol: batched v(S) of coalitions of given games, on a backend, with a counter and cached corners."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from sklearn_shapq.backends import ArrayBackend, CpuBackend
from sklearn_shapq.games._enumeration import MAX_ENUMERATED_PLAYERS, coalition_masks, shapley_from_table


def prefix_masks(ranks: Any, xp: Any) -> Any:
    """Coalitions visited by a walk along each ordering, without ∅ and N.

    ``ranks`` (..., d) are the players' positions; step t of the result (..., d − 1, d) holds the first t players.

    Examples
    --------
    >>> prefix_masks(np.array([2, 0, 1]), np).astype(int)  # the ordering (1, 2, 0)
    array([[0, 1, 0],
           [0, 1, 1]])
    """
    d = ranks.shape[-1]
    if d <= np.iinfo(np.int16).max:  # the comparison writes d² per ordering: narrow integers compare 2-3x faster
        ranks = ranks.astype(xp.int16)
    steps = xp.arange(1, d, dtype=ranks.dtype)
    return ranks[..., None, :] < steps[:, None]


class Game(ABC):
    """Base class of every game: batched, backend-aware v(S), an evaluation counter, cached corners.

    Subclasses implement :meth:`evaluate` (and may override :meth:`corner_values`); callers use
    ``game(masks, games)``. ``n_games`` games over ``n_players`` players give ``n_outputs`` values a
    coalition, on ``backend`` (default: the CPU); ``n_calls`` counts the calls.
    """

    def __init__(self, n_players: int, n_games: int, n_outputs: int = 1, backend: ArrayBackend | None = None) -> None:
        if n_players < 1 or n_games < 1:
            raise ValueError(f"A game needs at least one player and one game, got {n_players} and {n_games}.")
        self.n_players = int(n_players)
        self.n_games = int(n_games)
        self.n_outputs = int(n_outputs)
        self.backend = CpuBackend() if backend is None else backend
        self._evals = self.backend.xp.zeros(self.n_games, dtype=np.int64)
        self._corners: tuple[Any, Any] | None = None
        self.n_calls = 0

    @property
    def n_evals(self) -> np.ndarray:
        """Coalitions evaluated so far per game (host int64 array of shape (n_games,))."""
        return self.backend.to_numpy(self._evals)

    def reset_counts(self) -> None:
        """Set the evaluation counters to zero (cached corners stay cached)."""
        self._evals[:] = 0
        self.n_calls = 0

    def __call__(self, masks: Any, games: Any = None) -> Any:
        """Evaluate ``masks`` (m, n_players) of ``games`` (m,) (default: game 0), counted: (m, n_outputs)."""
        xp = self.backend.xp
        masks = self.backend.to_device(masks).astype(bool, copy=False)
        if masks.ndim != 2 or masks.shape[1] != self.n_players:
            raise ValueError(f"masks must have shape (m, {self.n_players}), got {tuple(masks.shape)}.")
        if games is None:
            games = xp.zeros(masks.shape[0], dtype=xp.intp)
        games = self._checked_games(games, masks.shape[0])
        if masks.shape[0] == 0:
            return xp.empty((0, self.n_outputs), dtype=xp.float64)
        values = self.evaluate(masks, games)
        self._evals += xp.bincount(games, minlength=self.n_games)
        self.n_calls += 1
        return values

    def _checked_games(self, games: Any, n_coalitions: int) -> Any:
        """``games`` as backend intp, checked to be one valid game index per coalition."""
        xp = self.backend.xp
        games = self.backend.to_device(games).astype(xp.intp, copy=False)
        if games.shape != (n_coalitions,):
            raise ValueError(f"games must have shape ({n_coalitions},), got {tuple(games.shape)}.")
        if n_coalitions and (int(games.min()) < 0 or int(games.max()) >= self.n_games):
            raise ValueError(f"game indices must lie in [0, {self.n_games}).")
        return games

    def grid(self, games: Any, masks: Any) -> Any:
        """Evaluate C coalitions of each of B games: ``masks`` (B, C, d) → values (B, C, n_outputs)."""
        n_rows, n_coalitions, d = masks.shape
        xp = self.backend.xp
        flat_games = xp.repeat(self.backend.to_device(games).astype(xp.intp), n_coalitions)
        return self(masks.reshape(n_rows * n_coalitions, d), flat_games).reshape(n_rows, n_coalitions, -1)

    def prefix_grid(self, games: Any, ranks: Any) -> Any:
        """Evaluate the walk prefixes of ``ranks`` (B, n, d) of B games: values (B, n, d − 1, n_outputs).

        Equal to ``grid`` of :func:`prefix_masks` and counted alike; a game may skip the masks.

        Examples
        --------
        >>> from sklearn_shapq.games import TableGame
        >>> game = TableGame(np.arange(8.0))  # v(S) = the integer code of S
        >>> game.prefix_grid(np.array([0]), np.array([[[2, 0, 1]]]))[0, 0, :, 0]  # the ordering (1, 2, 0)
        array([2., 6.])
        >>> game.n_evals
        array([2])
        """
        xp = self.backend.xp
        ranks = self.backend.to_device(ranks)
        if ranks.ndim != 3 or ranks.shape[2] != self.n_players:
            raise ValueError(f"ranks must have shape (B, n, {self.n_players}), got {tuple(ranks.shape)}.")
        n_rows, n_orderings, d = ranks.shape
        games = self._checked_games(games, n_rows)
        if n_rows * n_orderings == 0 or d == 1:
            return xp.empty((n_rows, n_orderings, d - 1, self.n_outputs), dtype=xp.float64)
        flat_games = xp.repeat(games, n_orderings)
        values = self.evaluate_prefixes(ranks.reshape(n_rows * n_orderings, d), flat_games)
        self._evals += xp.bincount(flat_games, minlength=self.n_games) * (d - 1)
        self.n_calls += 1
        return values.reshape(n_rows, n_orderings, d - 1, self.n_outputs)

    def evaluate_prefixes(self, ranks: Any, games: Any) -> Any:
        """Values (m (d − 1), n_outputs) of the prefixes of ``ranks`` (m, d) of ``games`` (m,); not counted."""
        d = self.n_players
        return self.evaluate(prefix_masks(ranks, self.backend.xp).reshape(-1, d), self.backend.xp.repeat(games, d - 1))

    @abstractmethod
    def evaluate(self, masks: Any, games: Any) -> Any:
        """Return the values (m, n_outputs) of coalitions ``masks`` (m, d) of games ``games`` (m,); not counted."""

    def corner_values(self) -> tuple[Any, Any]:
        """Compute v(∅) and v(N) of every game, each (n_games, n_outputs), once (then cached)."""
        xp = self.backend.xp
        corners = xp.repeat(xp.asarray([[False], [True]]), self.n_players, axis=1)
        masks = xp.tile(corners, (self.n_games, 1))
        values = self.evaluate(masks, xp.repeat(xp.arange(self.n_games), 2)).reshape(self.n_games, 2, -1)
        return values[:, 0], values[:, 1]

    def _cached_corners(self) -> tuple[Any, Any]:
        if self._corners is None:
            self._corners = self.corner_values()
            self._evals += 2
        return self._corners

    @property
    def empty_value(self) -> Any:
        """v(∅) of every game, (n_games, n_outputs) on the backend; evaluated once."""
        return self._cached_corners()[0]

    @property
    def full_value(self) -> Any:
        """v(N) of every game, (n_games, n_outputs) on the backend; evaluated once."""
        return self._cached_corners()[1]

    def shapley_values(self) -> np.ndarray:
        """Exact Shapley values (n_games, d, n_outputs) by enumerating all 2^d coalitions (an oracle; not counted)."""
        d = self.n_players
        if d > MAX_ENUMERATED_PLAYERS:
            raise ValueError(f"Enumerating 2^{d} coalitions is not feasible.")
        xp = self.backend.xp
        masks = coalition_masks(xp.arange(1 << d, dtype=xp.int64), d, xp)
        table = xp.stack([self.evaluate(masks, xp.full(1 << d, g, dtype=xp.intp)) for g in range(self.n_games)])
        return self.backend.to_numpy(shapley_from_table(table, xp))
