"""A control variate of known Shapley values for sums through a link past the players enumerated exactly.

A boosted classifier's probability σ(Σ trees), or a logistic regression's σ(w·x + b), at d > 16 players is
sampled. Its trees or weights are read all the same
(:func:`~sklearn_shapq.explainers._exact_paths.linked_structure`), so the game restricted to a row's K most
important players, c(S) = v(S ∩ K) (the other players always the background row's), is enumerated on its 2^K
coalitions through the link, for each part of the row's background. The sampled estimate then runs on v − c
(:class:`~sklearn_shapq.games.ResidualGame`) and adds c's exact values: unbiased whatever c is, with the
variance of what the top players' game leaves. The players are ranked by the exact values of the sum itself
(the margin), in closed form at any d.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq.explainers._output_links import preprocessed
from sklearn_shapq.games import shapley_from_table

TOP_PLAYERS = 12
"""K, the control's players: at d = 20 (xgboost's probability, breast cancer) the residual had 0.38-0.49x the error
of the game with 12, 0.56-0.60x with 10 and 0.50-0.71x with 8 (Leverage SHAP with its surrogates, 100 to 1,000
evaluations; the user guide). Its tables cost 2^K coalitions of each pair of rows through the trees."""


RANKING_ROWS = 16
"""Background rows the sum's exact values rank the players against: evenly spaced, the same for every row (the
values against all rows took a third of the control's time)."""


def ranking_rows(background: np.ndarray) -> np.ndarray:
    """Return at most :data:`RANKING_ROWS` evenly spaced rows of ``background``.

    Examples
    --------
    >>> ranking_rows(np.arange(40.0)[:, None]).ravel().tolist()[:4]
    [0.0, 2.0, 5.0, 7.0]
    """
    n = background.shape[0]
    return background if n <= RANKING_ROWS else background[np.arange(RANKING_ROWS) * n // RANKING_ROWS]


class TopPlayersControl:
    """The game of each row's top players, from a tree ensemble read through its link, as a control variate.

    Parameters
    ----------
    path : TreePath or LinearPath
        The sum through the link, over every player (:func:`~sklearn_shapq.explainers._exact_paths.linked_structure`).
    n_top : int, default=TOP_PLAYERS

    Examples
    --------
    >>> from sklearn.ensemble import HistGradientBoostingClassifier
    >>> from sklearn_shapq._feature_groups import resolve_feature_groups
    >>> from sklearn_shapq.explainers._exact_paths import linked_structure
    >>> X = np.random.default_rng(0).normal(size=(200, 5))
    >>> model = HistGradientBoostingClassifier(max_iter=10).fit(X, X[:, 0] + X[:, 1] * X[:, 2] > 0)
    >>> groups = resolve_feature_groups(None, list("abcde"))
    >>> path = linked_structure(model, "probability", X[:20], model.predict_proba(X[:20])[:, 1:], groups)
    >>> players, tables, values = TopPlayersControl(path, n_top=2).tables(X[:1], parts=4)
    >>> players.shape, tables.shape, values.shape
    ((4, 2), (4, 4, 1), (1, 5, 1))
    """

    def __init__(self, path: Any, n_top: int = TOP_PLAYERS) -> None:
        self.path = path
        self.n_top = min(int(n_top), path.groups.n_players - 1)

    def bytes_per_game(self, game: Any) -> int:
        """Return the memory of one game's players and table (a game of ``game.n_outputs`` outputs)."""
        return 8 * (self.n_top + (1 << self.n_top) * game.n_outputs)

    def tables(self, rows: np.ndarray, parts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return each game's control players and tables, and each row's control values.

        Parameters
        ----------
        rows : ndarray of shape (n, d)
            Explained rows in the model's input units.
        parts : int
            Games per row (its background's parts, consecutive and equal, as :class:`InterventionalGame`'s).

        Returns
        -------
        players : int ndarray of shape (n · parts, K)
            Game r · parts + j's control players: row r's top K, by the exact values of the sum (no link).
        tables : ndarray of shape (n · parts, 2^K, n_outputs)
            Its control on every coalition of them: the mean over part j's background rows.
        values : ndarray of shape (n, p, n_outputs)
            Each row's control's exact Shapley values (the mean of its parts' games'), zero off its top players.

        Raises
        ------
        ValueError
            The link is not finite on a coalition (the model's own output is not either).
        """
        path, n_top, n = self.path, self.n_top, rows.shape[0]
        inputs = preprocessed(path.preprocessing, rows)
        margin = path.sum_values(inputs, ranking_rows(path.background))
        top = np.argsort(-np.abs(margin).sum(axis=2), axis=1, kind="stable")[:, :n_top]
        position = np.full((n, path.groups.n_players), -1)  # the other players: in no coalition (the backends' −1)
        np.put_along_axis(position, top, np.arange(n_top)[None, :], axis=1)
        tables = path.part_tables(inputs, position[:, path.groups.player_of_column], n_top, parts)
        row_values = shapley_from_table(tables.reshape(n, parts, *tables.shape[1:]).mean(axis=1), np)
        values = np.zeros((n, path.groups.n_players, path.offset.shape[0]))
        np.put_along_axis(values, top[:, :, None], row_values, axis=1)
        return np.repeat(top, parts, axis=0), tables, values
