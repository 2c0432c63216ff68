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
    unit_scaled,
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


@pytest.mark.parametrize("exponent", [600, -600])
def test_median_rules_are_exact_at_extreme_scales(exponent):
    # once: squared distances overflowed (an infinite bandwidth) or underflowed (the fallback 1.0)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    scaled = np.ldexp(X, exponent)
    assert median_distance(scaled) == np.ldexp(median_distance(X), exponent)
    per_feature = median_distance_per_feature(X)
    np.testing.assert_array_equal(median_distance_per_feature(scaled), np.ldexp(per_feature, exponent))


def test_a_nearly_constant_column_takes_the_median_over_its_distinct_values():
    n = 3 * MAX_MEDIAN_ROWS
    column = np.zeros(n)
    rare = np.setdiff1d(np.arange(n), np.linspace(0, n - 1, MAX_MEDIAN_ROWS).astype(int))[::40]
    column[rare] = np.random.default_rng(2).uniform(1.0, 5.0, size=rare.size)
    distances = np.sort(pdist(column[:, None], "cityblock"))
    distances = distances[distances > 0]
    lower_median = distances[-(-distances.size // 2) - 1]  # every pair of rows, not only the evenly spaced ones
    assert median_distance_per_feature(column[:, None])[0] == lower_median
    assert np.isfinite(median_distance(np.c_[column, np.zeros(n)]))


def test_medians_too_large_for_float64_and_overflowing_bandwidths_are_refused():
    X = np.array([[-1.7e308, 1.0], [1.7e308, 2.0]])
    with pytest.raises(ValueError, match=r"bandwidth_x='median_per_feature': the median distance of column 'u'"):
        resolve_bandwidths("median_per_feature", X, "bandwidth_x", ["u", "v"])
    with pytest.raises(ValueError, match="bandwidth_x='median': the median distance"):
        resolve_bandwidths("median", X, "bandwidth_x")
    scaled, unit = unit_scaled(np.array([[1.0, 3.0], [2.0, 3.0]]), np.array([4.0, np.inf]), "b")
    np.testing.assert_array_equal(scaled, [[0.125, 0.0], [0.25, 0.0]])  # by 2^-3; a constant column: 0
    np.testing.assert_array_equal(unit, [0.5, np.inf])
    with pytest.raises(ValueError, match="b: column 1 divided by its bandwidth 1e-300 overflows"):
        unit_scaled(np.array([[1.0, 1e10]]), np.array([1.0, 1e-300]), "b")
