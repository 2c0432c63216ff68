"""Keyed draws without replacement (numba kernels): distinct, uniform, keyed, and the numpy uniforms' twin."""

from math import comb

import numpy as np
import pytest
from scipy.stats import chisquare

from sklearn_shapq.samplers import keyed_distinct_items, keyed_sized_coalitions, keyed_uniforms
from sklearn_shapq.samplers._keyed_subsets import _keyed_uniform

KEYS = np.arange(20_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)


def test_the_kernels_uniform_is_keyed_uniforms():
    keys = np.array([0, 5, 2**63 + 11], dtype=np.uint64)
    expected = keyed_uniforms(keys, np.arange(7)[None].repeat(3, 0))
    drawn = np.array([[_keyed_uniform(key, c) for c in range(7)] for key in keys])
    np.testing.assert_array_equal(drawn, expected)


@pytest.mark.parametrize(("n_items", "n"), [(10, 3), (10, 5), (10, 6), (10, 10), (7, 1)])  # rejection and shuffle
def test_distinct_items_are_distinct_and_every_ordered_sample_is_equally_likely(n_items, n):
    items = keyed_distinct_items(KEYS, n_items, n)
    assert items.shape == (KEYS.size, n) and items.min() >= 0 and items.max() < n_items
    assert all(len(set(row)) == n for row in items[:500].tolist())
    for position in (0, n - 1):  # each position is uniform over the items
        counts = np.bincount(items[:, position], minlength=n_items)
        assert chisquare(counts).pvalue > 1e-4
    pairs = np.bincount(items[:, 0] * n_items + items[:, -1], minlength=n_items**2)  # ordered pairs, first and last
    if n > 1:
        expected_cells = pairs.reshape(n_items, n_items)[~np.eye(n_items, dtype=bool)]
        assert chisquare(expected_cells).pvalue > 1e-4


def test_distinct_items_depend_on_the_key_alone():
    items = keyed_distinct_items(KEYS[:50], 100, 20)
    np.testing.assert_array_equal(items[7:8], keyed_distinct_items(KEYS[7:8], 100, 20))
    assert not np.array_equal(items[0], items[1])
    with pytest.raises(ValueError, match="cannot draw 11 distinct items of 10"):
        keyed_distinct_items(KEYS[:2], 10, 11)


@pytest.mark.parametrize("with_first", [False, True])
def test_sized_coalitions_are_uniform_among_their_size(with_first):
    d, size = 6, 3
    masks = keyed_sized_coalitions(KEYS, d, size, 2, with_first=with_first)
    assert masks.shape == (KEYS.size, 2, d) and (masks.sum(axis=2) == size).all()
    codes = (masks.reshape(-1, d) * (1 << np.arange(d))).sum(axis=1)
    counts = np.bincount(codes, minlength=1 << d)
    support = counts[counts > 0]
    assert support.size == (comb(d - 1, size - 1) if with_first else comb(d, size))
    if with_first:
        assert masks[..., 0].all()
    assert chisquare(support).pvalue > 1e-4
    np.testing.assert_array_equal(masks[3:4], keyed_sized_coalitions(KEYS[3:4], d, size, 2, with_first=with_first))


def test_sized_coalitions_of_no_keys_are_empty():
    assert keyed_sized_coalitions(np.zeros(0, dtype=np.uint64), 40, 5, 3).shape == (0, 3, 40)
