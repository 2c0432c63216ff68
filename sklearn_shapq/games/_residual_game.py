"""A game minus a control game of known Shapley values: what a sampled estimate is left to estimate."""

from __future__ import annotations

from collections.abc import Callable
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
    control : callable
        ``control()`` returns each game's control players K_g (int array (n_games, K)) and the control on every
        coalition of them (array (n_games, 2^K, n_outputs)). It is called where first needed, after the game's
        own evaluations, so that it may still be computing elsewhere while the model runs (a ``Future``'s
        ``result``), and kept (called again only after it raised).

    Examples
    --------
    >>> from sklearn_shapq.games import TableGame, coalition_masks
    >>> game = TableGame(coalition_masks(np.arange(8), 3, np) @ np.array([1.0, 2.0, 4.0]))  # v(S) = Σ weights
    >>> control = np.array([[0.0, 4.0]])[:, :, None]  # c(S) = 4 [2 ∈ S]
    >>> residual = ResidualGame(game, lambda: (np.array([[2]]), control))
    >>> residual.shapley_values()[0, :, 0].tolist(), float(residual.full_value[0, 0])
    ([1.0, 2.0, 0.0], 3.0)
    """

    def __init__(self, game: Game, control: Callable[[], tuple[np.ndarray, np.ndarray]]) -> None:
        self.game = game
        self._control = control
        self._resolved: tuple[Any, Any, Any] | None = None
        super().__init__(game.n_players, game.n_games, game.n_outputs, backend=game.backend)

    def _players_tables_bits(self) -> tuple[Any, Any, Any]:
        """Return the control's players, tables and bits on the backend (``control()`` on the first call).

        Raises
        ------
        ValueError
            The players or tables do not fit the game's games and outputs.
        """
        if self._resolved is None:
            players, tables = self._control()
            game = self.game
            if players.shape[0] != game.n_games or tables.shape != (
                game.n_games,
                1 << players.shape[1],
                game.n_outputs,
            ):
                raise ValueError(
                    f"The control's players {players.shape} and tables {tables.shape} do not fit {game.n_games} "
                    f"games of {game.n_outputs} outputs."
                )
            backend = game.backend
            self._resolved = (
                backend.to_device(np.asarray(players, dtype=np.intp)),
                backend.to_device(np.asarray(tables, dtype=np.float64)),
                backend.to_device(1 << np.arange(players.shape[1], dtype=np.intp)),
            )
        return self._resolved

    def control(self, masks: Any, games: Any) -> Any:
        """Return the control's values (m, n_outputs) on ``masks`` (m, d) of ``games`` (m,)."""
        players, tables, bits = self._players_tables_bits()
        xp = self.backend.xp
        rows = xp.arange(masks.shape[0])[:, None]
        codes = (masks[rows, players[games]] * bits).sum(axis=1)
        return tables[games, codes]

    def evaluate(self, masks: Any, games: Any) -> Any:
        """V − c of the coalitions (``game``'s evaluations, then the control's; not counted in ``game``)."""
        values = self.game.evaluate(masks, games)
        return values - self.control(masks, games)

    def corner_values(self) -> tuple[Any, Any]:
        """v(∅) − c(∅) and v(N) − c(N): ``game``'s corners less the tables' first and last entries."""
        empty, full = self.game.empty_value, self.game.full_value
        tables = self._players_tables_bits()[1]
        return empty - tables[:, 0], full - tables[:, -1]
