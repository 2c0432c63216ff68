"""All 2^d coalitions: codes, masks, sizes, the Shapley weights and values from a table."""

from math import comb, factorial

import numpy as np
import pytest

from sklearn_shapq.backends import ArrayBackend
from sklearn_shapq.games import coalition_masks, shapley_from_table, shapley_weights
from sklearn_shapq.games._enumeration import coalition_sizes

from brute_force import brute_force_shapley
from game_helpers import all_masks


@pytest.mark.parametrize("d", [1, 3, 7])
def test_coalition_masks_and_sizes(d):
    codes = np.arange(2**d)
    np.testing.assert_array_equal(coalition_masks(codes, d, np), all_masks(d))
    sizes = coalition_sizes(d)
    assert sizes.dtype == np.int8
    np.testing.assert_array_equal(sizes, all_masks(d).sum(axis=1))
    np.testing.assert_array_equal(coalition_masks(np.array([5, 2]), d + 2, np).sum(axis=1), [2, 1])


@pytest.mark.parametrize("d", [1, 2, 5, 9])
def test_shapley_weights(d):
    mu = shapley_weights(d)
    np.testing.assert_allclose(mu, [factorial(s) * factorial(d - s - 1) / factorial(d) for s in range(d)], rtol=1e-13)
    # the coalitions not containing a player carry total weight 1
    np.testing.assert_allclose(sum(comb(d - 1, s) * mu[s] for s in range(d)), 1.0, rtol=1e-13)


@pytest.mark.parametrize("d", [1, 2, 4, 6])
def test_shapley_from_table_matches_brute_force(d):
    rng = np.random.default_rng(d)
    tables = rng.normal(size=(3, 2**d, 2))
    phi = shapley_from_table(tables, np)
    assert phi.shape == (3, d, 2)
    bits = 1 << np.arange(d)
    for b in range(3):
        expected = brute_force_shapley(lambda s, b=b: tables[b, int(bits[list(s)].sum())], d)
        np.testing.assert_allclose(phi[b], expected, atol=1e-12)
        np.testing.assert_allclose(phi[b].sum(axis=0), tables[b, -1] - tables[b, 0], atol=1e-12)  # efficiency
    generic = shapley_from_table(tables, ArrayBackend(np).xp)
    np.testing.assert_allclose(generic, phi, atol=0)


def test_shapley_from_table_closed_form_unanimity():
    # unanimity game on T: phi_i = 1/|T| for i in T, 0 otherwise
    d, carrier = 6, [1, 3, 4]
    table = all_masks(d)[:, carrier].all(axis=1).astype(float)[None, :, None]
    expected = np.zeros(d)
    expected[carrier] = 1 / 3
    np.testing.assert_allclose(shapley_from_table(table, np)[0, :, 0], expected, atol=1e-15)
