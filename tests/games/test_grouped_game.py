"""GroupedGame: a coalition of groups is the union of their columns; Shapley values against brute force."""

import numpy as np

from sklearn_shapq._feature_groups import resolve_feature_groups
from sklearn_shapq.games import GroupedGame, TableGame

from brute_force import brute_force_shapley


def test_grouped_shapley_values_equal_brute_force_over_groups():
    d = 5
    table = np.random.default_rng(0).normal(size=(2, 2**d))
    groups = resolve_feature_groups({"g": [1, 3], "h": [2, 4]}, [f"x{j}" for j in range(d)])
    grouped = GroupedGame(TableGame(table), groups)
    players = [[0], [1, 3], [2, 4]]

    def value(game, coalition):
        code = sum(1 << j for p in coalition for j in players[p])
        return table[game, code]

    expected = np.array([brute_force_shapley(lambda s, g=g: value(g, s), 3) for g in range(2)])
    np.testing.assert_allclose(grouped.shapley_values()[:, :, 0], expected, atol=1e-12)


def test_corners_and_counts_are_the_inner_games():
    table = np.arange(16.0)
    inner = TableGame(table)
    grouped = GroupedGame(inner, resolve_feature_groups({"ab": [0, 1]}, ["a", "b", "c", "d"]))
    np.testing.assert_array_equal(grouped.empty_value, [[0.0]])
    np.testing.assert_array_equal(grouped.full_value, [[15.0]])
    grouped(np.array([[True, False, False], [False, True, True]]))
    np.testing.assert_array_equal(grouped.n_evals, [4])  # two corners and two coalitions
    np.testing.assert_array_equal(inner.n_evals, [2])  # the corners, evaluated there once
