"""Games given explicitly: tables, sums of unanimity games, callables, the planted top-k game."""

import numpy as np
import pytest

from sklearn_shapq.games import CallableGame, TableGame, UnanimityGame, planted_unanimity_game

from brute_force import brute_force_shapley
from game_helpers import all_masks

# ---------------------------------------------------------------- tables


def test_table_game_values_and_per_game_counts():
    d = 3
    tables = np.random.default_rng(0).normal(size=(2, 2**d))
    game = TableGame(tables)
    assert (game.n_players, game.n_games, game.n_outputs) == (d, 2, 1)
    games = np.array([0, 1, 1, 0, 1, 1, 1, 0])
    values = game(all_masks(d), games)
    assert values.shape == (2**d, 1)
    np.testing.assert_array_equal(values[:, 0], tables[games, np.arange(2**d)])
    np.testing.assert_array_equal(game.n_evals, [3, 5])


def test_table_game_bit_order_and_shared_table():
    # bit j of the index is player j: v({0}) = 1, v({1}) = 2, v({0, 1}) = 4
    game = TableGame([0.0, 1.0, 2.0, 4.0], n_games=3)
    assert game.n_games == 3
    masks = np.array([[True, False], [False, True], [True, True], [False, False]])
    np.testing.assert_array_equal(game(masks, np.array([0, 1, 2, 2]))[:, 0], [1.0, 2.0, 4.0, 0.0])
    np.testing.assert_array_equal(game.n_evals, [1, 1, 2])
    np.testing.assert_allclose(game.shapley_values()[:, :, 0], [[1.5, 2.5]] * 3)
    np.testing.assert_array_equal(game.empty_value[:, 0], [0.0] * 3)
    np.testing.assert_array_equal(game.full_value[:, 0], [4.0] * 3)


@pytest.mark.parametrize("d", [1, 2, 4, 6])
def test_table_game_shapley_matches_brute_force(d):
    tables = np.random.default_rng(d).normal(size=(2, 2**d))
    game = TableGame(tables)
    phi = game.shapley_values()
    assert phi.shape == (2, d, 1)
    bits = 1 << np.arange(d)
    for g in range(2):
        expected = brute_force_shapley(lambda s, g=g: tables[g, int(bits[list(s)].sum())], d)
        np.testing.assert_allclose(phi[g, :, 0], expected, atol=1e-12)
    assert game.n_evals.sum() == 0  # the oracle is not charged


@pytest.mark.parametrize(
    ("table", "n_games", "match"),
    [
        ([1.0, 2.0, 3.0], None, "2\\^d"),
        ([1.0], None, "2\\^d"),
        ([], None, "2\\^d"),
        (5.0, None, "2\\^d"),
        (np.zeros((1, 2, 4)), None, "2\\^d"),
        ([0.0, np.nan], None, "NaN"),
        ([0.0, np.inf, 1.0, 2.0], None, "NaN or infinity"),
        (np.zeros((3, 4)), 2, "does not match"),
        ([0.0, 1.0], 0, "at least one"),
    ],
)
def test_table_game_validation(table, n_games, match):
    with pytest.raises(ValueError, match=match):
        TableGame(table, n_games=n_games)


# ---------------------------------------------------------------- unanimity games


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_unanimity_shapley_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    d = 7
    carriers = rng.random((10, d)) < 0.35
    carriers[np.arange(10), rng.integers(0, d, 10)] = True  # non-empty
    coefficients = rng.normal(size=10)
    game = UnanimityGame(carriers, coefficients, n_games=2)
    closed = game.shapley_values()
    assert closed.shape == (2, d, 1)
    # the base class enumerates 2^d coalitions; a callable wrapper uses it
    enumerated = CallableGame(lambda m: game.evaluate(m, np.zeros(len(m), np.intp)), d).shapley_values()
    np.testing.assert_allclose(closed, np.repeat(enumerated, 2, axis=0), atol=1e-12)
    brute = brute_force_shapley(
        lambda s: sum(c for r, c in zip(carriers, coefficients, strict=True) if set(np.flatnonzero(r)) <= set(s)), d
    )
    np.testing.assert_allclose(closed[0, :, 0], brute, atol=1e-12)
    masks = all_masks(d)
    expected = (carriers[None, :, :] <= masks[:, None, :]).all(axis=2) @ coefficients
    np.testing.assert_allclose(game(masks)[:, 0], expected, atol=1e-12)


def test_unanimity_validation():
    with pytest.raises(ValueError, match="at least one player"):
        UnanimityGame([[True, False], [False, False]], [1.0, 2.0])
    with pytest.raises(ValueError, match="carriers must be"):
        UnanimityGame([[True, False]], [1.0, 2.0])
    with pytest.raises(ValueError, match="carriers must be"):
        UnanimityGame([True, False], [1.0])


def test_planted_unanimity_game():
    game = planted_unanimity_game(12, 3, np.random.default_rng(123), n_games=4)
    assert (game.n_players, game.n_games) == (12, 4)
    assert game.carriers.shape == (27, 12)
    sizes = game.carriers.sum(axis=1)
    assert sizes[:24].min() >= 1 and sizes[:24].max() <= 4
    np.testing.assert_array_equal(sizes[24:], 1)  # the planted singletons, on distinct players
    assert len(set(np.flatnonzero(game.carriers[24:].any(axis=0)))) == 3
    np.testing.assert_array_equal(game.coefficients[24:], 1.5)
    assert np.abs(game.coefficients[:24]).max() <= 1.0
    again = planted_unanimity_game(12, 3, np.random.default_rng(123))
    np.testing.assert_array_equal(again.carriers, game.carriers)
    phi = game.shapley_values()
    np.testing.assert_array_equal(phi[0], phi[3])
    # with the spec's recipe the boosted players lead at this seed
    boosted = np.flatnonzero(game.carriers[24:].any(axis=0))
    assert set(np.argsort(-phi[0, :, 0])[:3]) == set(boosted)
    small = planted_unanimity_game(3, 1, np.random.default_rng(0), n_terms=5, max_order=8)
    assert small.carriers.sum(axis=1).max() <= 3  # orders capped at the number of players


# ---------------------------------------------------------------- callables


def test_callable_game_shapes_and_games_argument():
    seen = []

    def f(masks, games):
        seen.append(games.copy())
        return (masks.sum(axis=1) + 10 * games)[:, None]  # (m, 1) is accepted

    game = CallableGame(f, n_players=3, n_games=2)
    values = game(np.ones((3, 3), dtype=bool), np.array([1, 0, 1]))
    np.testing.assert_array_equal(values[:, 0], [13.0, 3.0, 13.0])
    np.testing.assert_array_equal(seen[0], [1, 0, 1])
    np.testing.assert_array_equal(game.n_evals, [1, 2])
    np.testing.assert_allclose(game.shapley_values()[:, :, 0], [[1.0, 1.0, 1.0]] * 2)

    single = CallableGame(lambda m: m.sum(axis=1), n_players=2)  # one game: called with masks only
    np.testing.assert_array_equal(single([[True, True], [False, True]])[:, 0], [2.0, 1.0])

    bad = CallableGame(lambda m: np.zeros((len(m), 2)), n_players=2)
    with pytest.raises(ValueError, match="returned shape"):
        bad(np.ones((4, 2), dtype=bool))
    with pytest.raises(TypeError, match="callable"):
        CallableGame("not a function", n_players=2)


def test_symmetric_square_game_closed_form():
    # v(S) = |S|^2: phi_i = d for every player
    for d in (2, 3, 5, 8):
        phi = CallableGame(lambda m: m.sum(axis=1) ** 2.0, d).shapley_values()
        np.testing.assert_allclose(phi[:, :, 0], np.full((1, d), float(d)), atol=1e-12)


def _log_of_size(masks):
    return np.log(masks.sum(axis=1) - 1.0)  # NaN for ∅, -inf for a single player


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_callable_that_returns_nan_or_infinity_is_an_error_naming_it():
    game = CallableGame(_log_of_size, n_players=3)
    masks = np.array([[True, True, True], [True, False, False], [True, True, False]])
    with pytest.raises(ValueError, match=r"function <function _log_of_size .*> returned -inf for the coalition \[0\]"):
        game(masks)
    with pytest.raises(ValueError, match=r"returned NaN for the coalition \[\] \(1 of 2 values"):
        game(np.array([[True, True, False], [False, False, False]]))
    with pytest.raises(ValueError, match="_log_of_size"):  # the exact values enumerate through the same check
        game.shapley_values()


def test_unanimity_coefficients_must_be_finite():
    with pytest.raises(ValueError, match="coefficients contains NaN or infinity"):
        UnanimityGame([[True, False], [False, True]], [1.0, np.nan])
