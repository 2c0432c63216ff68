"""The Game protocol: shapes, the per-game counter, cached corners counted once, grid, the oracle."""

import numpy as np
import pytest

from sklearn_shapq.backends import ArrayBackend
from sklearn_shapq.games import CallableGame, Game, TableGame
from sklearn_shapq.games._enumeration import MAX_ENUMERATED_PLAYERS

from brute_force import brute_force_shapley
from game_helpers import LoggingGame, all_masks, codes_of


class RecordingGame(Game):
    """A minimal subclass: v(S) = table[code(S)] + 100 · game, two outputs, evaluate calls recorded."""

    def __init__(self, d, n_games, backend=None):
        super().__init__(d, n_games, n_outputs=2, backend=backend)
        self.table = np.random.default_rng(d).normal(size=2**d)
        self.evaluated = []

    def evaluate(self, masks, games):
        xp = self.backend.xp
        self.evaluated.append(len(masks))
        base = xp.asarray(self.table)[codes_of(masks)] + 100.0 * games
        return xp.stack([base, -base], axis=1)


def test_values_shape_and_per_game_counter():
    d = 3
    game = RecordingGame(d, 3)
    assert (game.n_players, game.n_games, game.n_outputs) == (d, 3, 2)
    masks = all_masks(d)
    games = np.array([0, 2, 2, 1, 2, 0, 0, 2])
    values = game(masks, games)
    assert values.shape == (8, 2) and values.dtype == np.float64
    np.testing.assert_array_equal(values[:, 0], game.table + 100.0 * games)
    np.testing.assert_array_equal(values[:, 1], -values[:, 0])
    np.testing.assert_array_equal(game.n_evals, np.bincount(games, minlength=3))
    assert game.n_evals.dtype == np.int64 and game.n_calls == 1
    game(masks[:2])  # default: game 0
    np.testing.assert_array_equal(game.n_evals, np.bincount(games, minlength=3) + [2, 0, 0])
    assert game.n_calls == 2
    game.reset_counts()
    np.testing.assert_array_equal(game.n_evals, [0, 0, 0])
    assert game.n_calls == 0


def test_empty_call_evaluates_and_counts_nothing():
    game = RecordingGame(3, 2)
    out = game(np.zeros((0, 3), dtype=bool), np.zeros(0, dtype=np.intp))
    assert out.shape == (0, 2)
    assert game.evaluated == [] and game.n_calls == 0
    np.testing.assert_array_equal(game.n_evals, [0, 0])


def test_masks_are_cast_to_bool():
    game = TableGame([0.0, 1.0, 2.0, 4.0])
    np.testing.assert_array_equal(game(np.array([[1, 0], [0, 1], [1, 1]]))[:, 0], [1.0, 2.0, 4.0])
    np.testing.assert_array_equal(game([[True, True]]), [[4.0]])  # nested lists too


def test_shape_checks_before_any_evaluation():
    game = RecordingGame(3, 2)
    with pytest.raises(ValueError, match="masks must have shape"):
        game(np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="masks must have shape"):
        game(np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="games must have shape"):
        game(np.ones((2, 3), dtype=bool), np.array([0]))
    with pytest.raises(ValueError, match="games must have shape"):
        game(np.ones((2, 3), dtype=bool), np.zeros((2, 1), dtype=np.intp))
    assert game.evaluated == [] and game.n_calls == 0
    np.testing.assert_array_equal(game.n_evals, [0, 0])
    with pytest.raises(ValueError, match="at least one player"):
        CallableGame(lambda m: m.sum(axis=1), n_players=0)
    with pytest.raises(ValueError, match="at least one player and one game"):
        RecordingGame(3, 0)
    with pytest.raises(TypeError, match="abstract"):
        Game(2, 1)


@pytest.mark.parametrize("games", [[0, 2], [-1, 0]])
def test_out_of_range_game_indices_are_refused_before_evaluation(games):
    """A negative index would wrap to the last game: refused before any model work."""
    game = RecordingGame(3, 2)
    with pytest.raises(ValueError, match="game indices"):
        game(np.ones((2, 3), dtype=bool), np.array(games))
    assert game.evaluated == []  # no model work is spent on a call that fails
    np.testing.assert_array_equal(game.n_evals, [0, 0])


def test_corners_are_cached_and_counted_once_per_game():
    d = 4
    game = LoggingGame(np.arange(2.0**d), n_games=3)
    empty, full = game.empty_value, game.full_value
    assert empty.shape == full.shape == (3, 1)
    np.testing.assert_array_equal(empty[:, 0], 0.0)
    np.testing.assert_array_equal(full[:, 0], 2.0**d - 1)
    np.testing.assert_array_equal(game.n_evals, [2, 2, 2])
    assert len(game.calls) == 1  # both corners of every game in one evaluation
    masks, games = game.calls[0]
    assert sorted(masks.sum(axis=1).tolist()) == [0, 0, 0, d, d, d]
    np.testing.assert_array_equal(np.bincount(games, minlength=3), [2, 2, 2])
    for _ in range(3):  # cached: never evaluated or counted again
        game.empty_value, game.full_value  # noqa: B018
    assert len(game.calls) == 1
    np.testing.assert_array_equal(game.n_evals, [2, 2, 2])
    game.reset_counts()
    game.full_value  # noqa: B018  (still cached after a reset)
    np.testing.assert_array_equal(game.n_evals, [0, 0, 0])
    # a corner asked through the call is an ordinary, counted evaluation
    game(np.ones((1, d), dtype=bool), np.array([1]))
    np.testing.assert_array_equal(game.n_evals, [0, 1, 0])


def test_corners_of_every_game_and_output():
    game = RecordingGame(3, 2)
    t0, tn = game.table[0], game.table[-1]
    np.testing.assert_array_equal(game.empty_value, [[t0, -t0], [t0 + 100, -t0 - 100]])
    np.testing.assert_array_equal(game.full_value, [[tn, -tn], [tn + 100, -tn - 100]])
    np.testing.assert_array_equal(game.n_evals, [2, 2])


def test_grid_is_one_counted_call_in_row_major_order():
    d = 3
    game = RecordingGame(d, 4)
    rng = np.random.default_rng(0)
    masks = rng.random((2, 5, d)) < 0.5
    games = np.array([3, 1])
    out = game.grid(games, masks)
    assert out.shape == (2, 5, 2)
    for b in range(2):
        np.testing.assert_array_equal(out[b], game(masks[b], np.full(5, games[b])))
    np.testing.assert_array_equal(game.n_evals, [0, 10, 0, 10])
    assert game.evaluated == [10, 5, 5]


@pytest.mark.parametrize("d", [1, 2, 4, 6])
def test_shapley_values_oracle_matches_brute_force_and_is_not_counted(d):
    game = RecordingGame(d, 2)
    phi = game.shapley_values()
    assert phi.shape == (2, d, 2) and isinstance(phi, np.ndarray)
    bits = 1 << np.arange(d)
    for g in range(2):
        expected = brute_force_shapley(lambda s, g=g: game.table[int(bits[list(s)].sum())] + 100.0 * g, d)
        np.testing.assert_allclose(phi[g, :, 0], expected, atol=1e-12)
        np.testing.assert_allclose(phi[g, :, 1], -expected, atol=1e-12)
    np.testing.assert_array_equal(game.n_evals, 0)
    assert game.n_calls == 0


def test_generic_array_backend():
    """The protocol through the array-namespace code a GPU backend runs (xp = numpy)."""
    backend = ArrayBackend(np, "twin")
    game = RecordingGame(3, 2, backend=backend)
    assert game.backend is backend
    out = game(all_masks(3), np.repeat([0, 1], 4))
    np.testing.assert_array_equal(out[:, 0], game.table + 100.0 * np.repeat([0, 1], 4))
    np.testing.assert_array_equal(game.n_evals, [4, 4])
    np.testing.assert_allclose(game.shapley_values(), RecordingGame(3, 2).shapley_values(), atol=1e-14)


def test_enumeration_refuses_large_games():
    game = CallableGame(lambda m: m.sum(axis=1), MAX_ENUMERATED_PLAYERS + 1)
    with pytest.raises(ValueError, match="not feasible"):
        game.shapley_values()
