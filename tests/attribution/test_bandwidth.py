"""Bandwidth rules of the kernel statistics: median heuristics, explicit values, kernel factors."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from sklearn_shapq.attribution._bandwidth import (
    MAX_MEDIAN_ROWS,
    kernel_factors,
    median_distance,
    median_distance_per_feature,
    resolve_bandwidths,
)
from sklearn_shapq.backends._product_kernel import FACTOR_KINDS


def test_median_rules():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[:, 2] = 1.5  # constant: no distance, an infinite bandwidth, a null player
    assert median_distance(X) == pytest.approx(np.median(pdist(X)))
    per_feature = median_distance_per_feature(X)
    for j in range(2):
        assert per_feature[j] == pytest.approx(np.median(np.abs(X[:, None, j] - X[None, :, j])[np.triu_indices(40, 1)]))
    assert per_feature[2] == np.inf
    np.testing.assert_array_equal(resolve_bandwidths("median", X, "b"), np.full(3, median_distance(X)))
    np.testing.assert_array_equal(resolve_bandwidths("median_per_feature", X, "b"), per_feature)
    assert median_distance(np.ones((5, 2))) == 1.0
    big = rng.normal(size=(MAX_MEDIAN_ROWS * 3, 2))
    assert median_distance(big) == pytest.approx(np.median(pdist(big)), rel=0.05)  # evenly spaced subsample


def test_explicit_bandwidths_and_factors():
    X = np.zeros((3, 2))
    np.testing.assert_array_equal(resolve_bandwidths(2.0, X, "b"), [2.0, 2.0])
    np.testing.assert_array_equal(resolve_bandwidths([1.0, 3.0], X, "b"), [1.0, 3.0])
    for bad in ([1.0, -1.0], [1.0], [1.0, np.nan]):
        with pytest.raises(ValueError, match="bandwidth_x"):
            resolve_bandwidths(bad, X, "bandwidth_x")
    sigma = np.array([1.0, 2.0, np.inf])
    kinds, gammas = kernel_factors("rbf", sigma)
    np.testing.assert_array_equal(kinds, FACTOR_KINDS["rbf"])
    np.testing.assert_allclose(gammas, [0.5, 0.125, 0.0])
    kinds, gammas = kernel_factors("laplacian", sigma)
    np.testing.assert_array_equal(kinds, FACTOR_KINDS["laplacian"])
    np.testing.assert_allclose(gammas, [1.0, 0.5, 0.0])
