"""A game minus a control game of known Shapley values: what a sampled estimate is left to estimate."""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.games._game import Game


class ResidualGame(Game):
    """The game v − c, where each game's control c depends on a few of its players and is known on all their coalitions.

    c_g(S) = table_g[code of S ∩ K_g], K_g game g's control players (the code Σ_k 2^k [K_gk ∈ S]). Shapley values
    are linear, so φ(v) = φ(v − c) + φ(c): an estimate of the residual plus the control's exact values is an
    estimate of v's with the residual's variance, whatever c is (a control far from v costs variance, never bias).

    Parameters
    ----------
    game : Game
    players : int array of shape (n_games, K)
        Each game's control players K_g.
    tables : array of shape (n_games, 2^K, n_outputs)
        Each game's control on every coalition of its players.

    Examples
    --------
    >>> from sklearn_shapq.games import TableGame, coalition_masks
    >>> game = TableGame(coalition_masks(np.arange(8), 3, np) @ np.array([1.0, 2.0, 4.0]))  # v(S) = Σ weights
    >>> control = np.array([[0.0, 4.0]])[:, :, None]  # c(S) = 4 [2 ∈ S]
    >>> residual = ResidualGame(game, np.array([[2]]), control)
    >>> residual.shapley_values()[0, :, 0].tolist(), float(residual.full_value[0, 0])
    ([1.0, 2.0, 0.0], 3.0)
    """

    def __init__(self, game: Game, players: np.ndarray, tables: np.ndarray) -> None:
        if players.shape[0] != game.n_games or tables.shape != (game.n_games, 1 << players.shape[1], game.n_outputs):
            raise ValueError(
                f"The control's players {players.shape} and tables {tables.shape} do not fit {game.n_games} games "
                f"of {game.n_outputs} outputs."
            )
        self.game = game
        backend = game.backend
        self._players = backend.to_device(np.asarray(players, dtype=np.intp))
        self._tables = backend.to_device(np.asarray(tables, dtype=np.float64))
        self._bits = backend.to_device(1 << np.arange(players.shape[1], dtype=np.intp))
        super().__init__(game.n_players, game.n_games, game.n_outputs, backend)

    def control(self, masks: Any, games: Any) -> Any:
        """Return the control's values (m, n_outputs) on ``masks`` (m, d) of ``games`` (m,)."""
        xp = self.backend.xp
        rows = xp.arange(masks.shape[0])[:, None]
        codes = (masks[rows, self._players[games]] * self._bits).sum(axis=1)
        return self._tables[games, codes]

    def evaluate(self, masks: Any, games: Any) -> Any:
        """V − c of the coalitions (``game``'s evaluations; not counted in ``game``)."""
        return self.game.evaluate(masks, games) - self.control(masks, games)

    def corner_values(self) -> tuple[Any, Any]:
        """v(∅) − c(∅) and v(N) − c(N): ``game``'s corners less the tables' first and last entries."""
        return self.game.empty_value - self._tables[:, 0], self.game.full_value - self._tables[:, -1]
