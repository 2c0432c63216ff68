"""The permutation walk: prefixes, marginal gains and per-unit means against a direct computation."""

import numpy as np
import pytest

from sklearn_shapq.algorithms import walk_gains, walk_units
from sklearn_shapq.algorithms._permutation_walk import unit_means
from sklearn_shapq.backends import ArrayBackend
from sklearn_shapq.games import TableGame, prefix_masks

from game_helpers import codes_of


def _gains_by_hand(table, ordering):
    """v(pre ∪ {i}) − v(pre) for every player along one ordering, from a table (bit j ↔ player j)."""
    d = len(ordering)
    gains, code = np.zeros(d), 0
    for player in ordering:
        gains[player] = table[code | (1 << player)] - table[code]
        code |= 1 << player
    return gains


def test_prefix_masks():
    ordering = np.array([3, 0, 2, 1])
    ranks = np.argsort(ordering)
    masks = prefix_masks(ranks, np)
    assert masks.shape == (3, 4)
    np.testing.assert_array_equal(masks.astype(int), [[0, 0, 0, 1], [1, 0, 0, 1], [1, 0, 1, 1]])
    batch = np.stack([ranks, np.argsort(ordering[::-1])])
    np.testing.assert_array_equal(prefix_masks(batch, np)[0], masks)
    np.testing.assert_array_equal(prefix_masks(batch, np)[1].sum(axis=1), [1, 2, 3])


def test_walk_gains_from_a_path():
    d = 5
    table = np.random.default_rng(0).normal(size=2**d)
    ordering = np.array([2, 4, 0, 1, 3])
    ranks = np.argsort(ordering)
    path = table[np.r_[0, codes_of(prefix_masks(ranks, np)), 2**d - 1]]
    gains = walk_gains(path[:, None], ranks, np)[:, 0]
    np.testing.assert_allclose(gains, _gains_by_hand(table, ordering), atol=1e-15)
    np.testing.assert_allclose(gains.sum(), table[-1] - table[0], atol=1e-14)


@pytest.mark.parametrize("backend", [None, ArrayBackend(np, "twin")])
def test_walk_units_against_a_direct_walk(backend):
    d, n, n_games = 5, 6, 3
    rng = np.random.default_rng(1)
    tables = rng.normal(size=(n_games, 2**d))
    game = TableGame(tables)
    if backend is not None:
        game.backend = backend
    orderings = np.argsort(rng.random((2, n, d)), axis=-1)
    games = np.array([2, 0])
    bounds = np.array([0, 1, 4, 6])  # units of unequal sizes
    units = walk_units(game, games, orderings, bounds)
    assert units.shape == (2, 3, d, 1)
    for b in range(2):
        gains = np.array([_gains_by_hand(tables[games[b]], p) for p in orderings[b]])
        for u in range(3):
            np.testing.assert_allclose(units[b, u, :, 0], gains[bounds[u] : bounds[u + 1]].mean(axis=0), atol=1e-14)
        # every unit telescopes: exactly efficient whatever the weights
        np.testing.assert_allclose(units[b, :, :, 0].sum(axis=1), tables[games[b], -1] - tables[games[b], 0])
    # cost: d − 1 evaluations per ordering, plus the cached corners of every game once
    np.testing.assert_array_equal(game.n_evals, [2 + n * (d - 1), 2, 2 + n * (d - 1)])


def test_unit_means_equal_and_unequal_sizes():
    rng = np.random.default_rng(2)
    contributions = rng.normal(size=(2, 6, 3, 2))
    equal = unit_means(contributions, np.array([0, 2, 4, 6]), np)
    np.testing.assert_allclose(equal, contributions.reshape(2, 3, 2, 3, 2).mean(axis=2))
    unequal = unit_means(contributions, np.array([0, 1, 5, 6]), np)
    np.testing.assert_allclose(unequal[:, 1], contributions[:, 1:5].mean(axis=1), rtol=1e-13)
    np.testing.assert_allclose(unequal[:, 0], contributions[:, 0], rtol=1e-13)
