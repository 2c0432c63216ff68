"""statistic_shapley: Shapley values of pair-weighted product games, against enumeration, in any block size."""

import numpy as np
import pytest

from sklearn_shapq.algorithms import statistic_shapley
from sklearn_shapq.backends import ArrayBackend, CpuBackend
from sklearn_shapq.backends._product_kernel import FACTOR_KINDS

from kernel_statistic_oracles import rbf_factors, shapley_of_pairs


class DenseWeights:
    """A weight provider over a dense symmetric W (the protocol of MMDWeights and HSICWeights)."""

    row_temporaries = 1

    def __init__(self, W):
        self.W = W
        self.n_samples = W.shape[0]

    def rows(self, start, stop):
        return self.W[start:stop].copy()


def symmetric_weights(rng, n):
    W = rng.normal(size=(n, n))
    return W + W.T


@pytest.mark.parametrize("backend", [CpuBackend(), ArrayBackend(np)], ids=["numba", "array twin"])
@pytest.mark.parametrize("method", ["prefix_suffix", "quadrature"])
def test_equals_enumeration_for_every_block_size(backend, method):
    rng = np.random.default_rng(0)
    n, d = 9, 4
    U = rng.normal(size=(n, d))
    sigma = rng.uniform(0.5, 2.0, size=d)
    W = symmetric_weights(rng, n)
    expected = shapley_of_pairs(W - np.diag(np.diag(W)), rbf_factors(U, U, sigma))  # diagonal pairs: all factors 1
    kinds, gammas = np.full(d, FACTOR_KINDS["rbf"], np.int8), 1.0 / (2.0 * sigma**2)
    for rows in (1, 2, 4, 9, 50):
        got = statistic_shapley(U, DenseWeights(W), kinds, gammas, backend, method, rows, progress=rows == 2)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * np.abs(W).sum())


def test_a_diagonal_weight_contributes_nothing():
    rng = np.random.default_rng(1)
    U = rng.normal(size=(6, 3))
    kinds, gammas = np.zeros(3, np.int8), np.ones(3)
    phi = statistic_shapley(U, DenseWeights(np.diag(rng.normal(size=6))), kinds, gammas, CpuBackend(), "quadrature", 2)
    np.testing.assert_array_equal(phi, 0.0)


@pytest.mark.parametrize("statistic", ["hsic", "mmd"])
def test_tiles_in_parallel_and_on_dask_give_bit_identical_attributions(statistic, dask_client):
    """Fixed tiles summed in a fixed order: n_jobs and the joblib backend do not change a bit."""
    import joblib
    import sklearn

    from sklearn_shapq import HSICAttribution, MMDAttribution

    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 5))
    y = X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=300)

    def fit(**options):
        with sklearn.config_context(working_memory=1):  # about 100 rows per tile: several tiles
            if statistic == "hsic":
                return HSICAttribution(progress=False, **options).fit(X, y).attributions_
            return MMDAttribution(progress=False, **options).fit(X[:150], X[150:] + 0.3).attributions_

    serial = fit()
    np.testing.assert_array_equal(fit(n_jobs=2), serial)
    with joblib.parallel_config(backend="dask"):
        np.testing.assert_array_equal(fit(n_jobs=-1), serial)
