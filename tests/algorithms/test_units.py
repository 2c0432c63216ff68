"""combine_units: the weighted estimate of independent sampling units and its standard error."""

import numpy as np

from sklearn_shapq.algorithms import UnitSamples, combine_units


def test_equal_weights_give_the_mean_and_its_standard_error():
    values = np.arange(12.0).reshape(1, 4, 3, 1) ** 1.5
    estimate, stderr = combine_units(UnitSamples(values, np.full(4, 0.25)), np)
    assert estimate.shape == stderr.shape == (1, 3, 1)
    np.testing.assert_allclose(estimate[0, :, 0], values[0, :, :, 0].mean(0))
    np.testing.assert_allclose(stderr[0, :, 0], values[0, :, :, 0].std(0, ddof=1) / 2)


def test_unequal_weights():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(2, 5, 3, 2))
    weights = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    estimate, stderr = combine_units(UnitSamples(values, weights), np)
    expected = np.einsum("u,budk->bdk", weights, values)
    np.testing.assert_allclose(estimate, expected, rtol=1e-13)
    spread = np.einsum("u,budk->bdk", weights**2, (values - expected[:, None]) ** 2)
    np.testing.assert_allclose(stderr, np.sqrt(spread * 5 / 4), rtol=1e-13)


def test_a_single_unit_has_no_standard_error():
    values = np.ones((2, 1, 3, 1))
    estimate, stderr = combine_units(UnitSamples(values, np.ones(1)), np)
    np.testing.assert_array_equal(estimate, 1.0)
    assert np.isnan(stderr).all()
