"""A game over groups of another game's players: a coalition of groups is the union of their columns."""

from __future__ import annotations

from typing import Any

from sklearn_shapq._feature_groups import FeatureGroups
from sklearn_shapq.games._game import Game


class GroupedGame(Game):
    """The game whose players are groups of ``game``'s players (feature groups).

    v_G(T) = v(∪_{g ∈ T} members(g)); v(∅) and v(N) are ``game``'s.

    Parameters
    ----------
    game : Game
        The game over columns.
    groups : FeatureGroups

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_shapq._feature_groups import resolve_feature_groups
    >>> from sklearn_shapq.games import TableGame, coalition_masks
    >>> columns = TableGame(coalition_masks(np.arange(8), 3, np) @ np.array([1.0, 2.0, 4.0]))  # v(S) = sum of weights
    >>> grouped = GroupedGame(columns, resolve_feature_groups({"bc": [1, 2]}, ["a", "b", "c"]))
    >>> grouped(np.array([[False, True], [True, False]]))[:, 0].tolist()
    [6.0, 1.0]
    >>> grouped.shapley_values()[0, :, 0].tolist()
    [1.0, 6.0]
    """

    def __init__(self, game: Game, groups: FeatureGroups) -> None:
        self.game = game
        self.groups = groups
        self._player_of_column = game.backend.to_device(groups.player_of_column)
        super().__init__(groups.n_players, game.n_games, game.n_outputs, game.backend)

    def evaluate(self, masks: Any, games: Any) -> Any:
        """Evaluate the groups' coalitions as coalitions of their columns (not counted in ``game``)."""
        return self.game.evaluate(masks[:, self._player_of_column], games)

    def corner_values(self) -> tuple[Any, Any]:
        """v(∅) and v(N) of ``game``."""
        return self.game.empty_value, self.game.full_value
