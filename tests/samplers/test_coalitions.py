"""sized_coalitions: uniform among the coalitions of each size, a player optionally excluded."""

from math import comb

import numpy as np
import pytest
from scipy.stats import chisquare

from sklearn_shapq.samplers import sized_coalitions

from game_helpers import all_masks, codes_of

ALPHA = 1e-3


def test_sizes_and_the_smallest_draws():
    u = np.array([[0.5, 0.1, 0.9, 0.3], [0.2, 0.4, 0.6, 0.8]])
    out = sized_coalitions(u, np.array([2, 4]))
    assert out.dtype == bool and out.shape == (2, 4)
    np.testing.assert_array_equal(out.astype(int), [[0, 1, 0, 1], [1, 1, 1, 1]])
    np.testing.assert_array_equal(sized_coalitions(u, np.array([0, 1])).sum(axis=1), [0, 1])
    excluded = sized_coalitions(u, np.array([2, 3]), np.array([1, 3]))
    np.testing.assert_array_equal(excluded.astype(int), [[1, 0, 0, 1], [1, 1, 1, 0]])
    np.testing.assert_array_equal(u, [[0.5, 0.1, 0.9, 0.3], [0.2, 0.4, 0.6, 0.8]])  # the draws are not changed


@pytest.mark.parametrize("d", [4, 5])
def test_uniform_among_the_coalitions_of_each_size(d):
    rng = np.random.default_rng(d)
    n = 30_000
    sizes = rng.integers(0, d + 1, n)
    coalitions = sized_coalitions(rng.random((n, d)), sizes)
    np.testing.assert_array_equal(coalitions.sum(axis=1), sizes)
    counts = np.bincount(codes_of(coalitions), minlength=2**d)
    every_size = all_masks(d).sum(axis=1)
    for s in range(1, d):
        same = counts[every_size == s]
        assert same.size == comb(d, s)
        assert chisquare(same).pvalue > ALPHA


@pytest.mark.parametrize("d", [4, 5])
def test_uniform_among_the_coalitions_without_the_excluded_player(d):
    rng = np.random.default_rng(10 + d)
    n = 40_000
    player = rng.integers(0, d, n)
    sizes = rng.integers(0, d, n)  # 0 … d − 1: subsets of N ∖ {i}
    coalitions = sized_coalitions(rng.random((n, d)), sizes, player)
    assert not coalitions[np.arange(n), player].any()
    np.testing.assert_array_equal(coalitions.sum(axis=1), sizes)
    masks = all_masks(d)
    for i in range(d):
        for s in range(1, d - 1):
            rows = (player == i) & (sizes == s)
            counts = np.bincount(codes_of(coalitions[rows]), minlength=2**d)
            allowed = (masks.sum(axis=1) == s) & ~masks[:, i]
            assert counts[~allowed].sum() == 0
            assert chisquare(counts[allowed]).pvalue > ALPHA
