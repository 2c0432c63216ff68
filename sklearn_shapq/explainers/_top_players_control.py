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

import copy
from typing import Any

import numpy as np

from sklearn_shapq._feature_groups import FeatureGroups
from sklearn_shapq.explainers._output_links import preprocessed
from sklearn_shapq.games import shapley_from_table

TOP_PLAYERS = 12
"""K, the control's players: at d = 20 (xgboost's probability, breast cancer) the residual had 0.38-0.49x the error
of the game with 12, 0.56-0.60x with 10 and 0.50-0.71x with 8 (Leverage SHAP with its surrogates, 100 to 1,000
evaluations; the user guide). Its tables cost 2^(K+1) coalitions of each pair of rows through the trees."""


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
        path, n_top = self.path, self.n_top
        inputs = preprocessed(path.preprocessing, rows)
        groups = path.groups
        margin = path.sum_values(inputs)
        top = np.argsort(-np.abs(margin).sum(axis=2), axis=1, kind="stable")[:, :n_top]
        part_rows = path.background.shape[0] // parts
        players = np.repeat(top, parts, axis=0)
        tables = np.empty((rows.shape[0] * parts, 1 << n_top, path.offset.shape[0]))
        values = np.zeros((rows.shape[0], groups.n_players, path.offset.shape[0]))
        for r, row_top in enumerate(top):
            position = np.full(groups.n_players, n_top)  # the other players: one never in the coalitions
            position[row_top] = np.arange(n_top)
            restricted = copy.copy(path)
            restricted.groups = FeatureGroups([str(k) for k in range(n_top + 1)], position[groups.player_of_column])
            for j in range(parts):
                restricted.background = path.background[j * part_rows : (j + 1) * part_rows]
                tables[r * parts + j] = restricted._finite_table(inputs[r : r + 1])[0, : 1 << n_top]
            row_table = tables[r * parts : (r + 1) * parts].mean(axis=0, keepdims=True)
            values[r, row_top] = shapley_from_table(row_table, np)[0]
        return players, tables, values
