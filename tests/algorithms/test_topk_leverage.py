"""Top-k by Leverage SHAP: exact with every pair, efficient, keyed by the game, refused below its minimum."""

import numpy as np
import pytest

from sklearn_shapq.algorithms import TOPK_ALGORITHMS, top_k_shapley
from sklearn_shapq.games import TableGame
from sklearn_shapq.samplers import row_keys

from brute_force import brute_force_shapley


def _exact(table, d):
    return brute_force_shapley(lambda s: table[int(sum(1 << j for j in s))], d)


@pytest.mark.parametrize("d", [3, 5, 6])
def test_every_pair_gives_the_exact_values_and_top_k(d):
    table = np.random.default_rng(d).normal(size=2**d)
    result = top_k_shapley(TableGame(table), 2, "leverage", max_evals=2**d, random_state=0)
    exact = _exact(table, d)
    np.testing.assert_allclose(result.values[0], exact, atol=1e-10)
    np.testing.assert_array_equal(np.sort(result.top_k[0]), np.sort(np.argsort(-exact)[:2]))
    np.testing.assert_array_equal(result.stderr, 0.0)  # nothing sampled
    assert result.n_evals[0] == 2**d


def test_values_are_exactly_efficient_with_few_pairs():
    d = 8
    table = np.random.default_rng(3).normal(size=2**d)
    result = top_k_shapley(TableGame(table), 3, "leverage", max_evals=40, random_state=1)
    np.testing.assert_allclose(result.values[0].sum(), table[-1] - table[0], atol=1e-10)
    assert result.n_evals[0] == 40 and (result.stderr[0] > 0).all()


def test_a_game_depends_on_its_key_alone():
    d = 7
    table = np.random.default_rng(4).normal(size=2**d)
    keys = row_keys(9, np.array([[0.0], [1.0], [0.0]]))
    together = top_k_shapley(TableGame(table, n_games=3), 2, "leverage", max_evals=50, keys=keys)
    alone = top_k_shapley(TableGame(table), 2, "leverage", max_evals=50, keys=keys[:1])
    np.testing.assert_array_equal(together.values[0], together.values[2])
    np.testing.assert_array_equal(together.values[0], alone.values[0])
    assert not np.array_equal(together.values[0], together.values[1])


def test_no_pac_mode_and_a_minimum_budget():
    assert not TOPK_ALGORITHMS["leverage"].pac
    table = np.zeros(2**6)
    minimum = "max_evals=20 is below the minimum of 22 evaluations that algorithm 'leverage' needs"
    with pytest.raises(ValueError, match=minimum):
        top_k_shapley(TableGame(table), 2, "leverage", max_evals=20)
    with pytest.raises(ValueError, match="PAC mode"):
        top_k_shapley(TableGame(table), 2, "leverage", max_evals=100, epsilon=0.1)
