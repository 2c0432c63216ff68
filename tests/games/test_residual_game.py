"""ResidualGame: v − c with c known on a few players' coalitions; φ(v − c) + φ(c) = φ(v), against brute force."""

import numpy as np
import pytest

from sklearn_shapq.games import ResidualGame, TableGame

from brute_force import brute_force_shapley


def test_residual_values_plus_the_controls_are_the_games_values():
    d, rng = 5, np.random.default_rng(0)
    table = rng.normal(size=(3, 2**d))
    players = np.array([[3, 0], [1, 4], [2, 3]])
    control = rng.normal(size=(3, 4, 1))
    residual = ResidualGame(TableGame(table), lambda: (players, control))
    for g in range(3):

        def value(coalition, g=g):
            return table[g, sum(1 << j for j in coalition)]

        def control_value(coalition, g=g):
            return control[g, sum(1 << k for k, p in enumerate(players[g]) if p in coalition), 0]

        phi_control = brute_force_shapley(control_value, d)
        expected = brute_force_shapley(value, d) - phi_control
        np.testing.assert_allclose(residual.shapley_values()[g, :, 0], expected, atol=1e-12)
        assert np.all(phi_control[[j for j in range(d) if j not in players[g]]] == 0)  # c's other players are null
    full = table[:, -1] - control[:, -1, 0]
    np.testing.assert_allclose(residual.full_value[:, 0], full)
    np.testing.assert_allclose(residual.empty_value[:, 0], table[:, 0] - control[:, 0, 0])


def test_shapes_that_do_not_fit_the_games_are_refused_where_first_needed():
    residual = ResidualGame(TableGame(np.arange(8.0)), lambda: (np.array([[0, 1]]), np.zeros((1, 2, 1))))
    with pytest.raises(ValueError, match="do not fit 1 games"):
        residual.full_value  # noqa: B018


def test_the_control_is_asked_once_and_after_the_games_own_evaluations():
    events = []

    class RecordingGame(TableGame):
        def evaluate(self, masks, games):
            events.append("game")
            return super().evaluate(masks, games)

    def control():
        events.append("control")
        return np.array([[1]]), np.array([[0.0, 2.0]])[:, :, None]

    residual = ResidualGame(RecordingGame(np.arange(8.0)[None]), control)
    assert events == []
    masks = np.array([[True, False, True], [False, True, False]])
    values = residual.evaluate(masks, np.zeros(2, dtype=int))
    residual.evaluate(masks, np.zeros(2, dtype=int))
    assert events == ["game", "control", "game"]
    np.testing.assert_array_equal(values[:, 0], [5.0 - 0.0, 2.0 - 2.0])
