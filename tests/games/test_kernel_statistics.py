"""MMDWeights and HSICWeights: the pair weights of MMD² and HSIC, block by block, against the textbook."""

import numpy as np
import pytest

from sklearn_shapq.games import HSICWeights, MMDWeights, target_kernel_rows

from kernel_statistic_oracles import hsic_weights, mmd_weights


def blocks(provider, step):
    n = provider.n_samples
    return np.vstack([provider.rows(start, min(start + step, n)) for start in range(0, n, step)])


@pytest.mark.parametrize("unbiased", [True, False])
def test_mmd_weights_equal_the_textbook_matrix(unbiased):
    provider = MMDWeights(5, 4, unbiased)
    for step in (1, 3, 9):
        np.testing.assert_allclose(blocks(provider, step), mmd_weights(5, 4, unbiased), rtol=1e-15)


@pytest.mark.parametrize("unbiased", [True, False])
@pytest.mark.parametrize("kind", ["delta", "rbf"])
def test_hsic_weights_are_the_derivative_of_the_textbook_statistic(kind, unbiased):
    rng = np.random.default_rng(0)
    n = 10
    y = rng.integers(0, 3, size=(n, 1)).astype(float) if kind == "delta" else rng.normal(size=(n, 2))
    gamma = 0.0 if kind == "delta" else 0.7
    L = target_kernel_rows(y, slice(0, n), kind, gamma)
    if kind == "delta":
        np.testing.assert_array_equal(L, y == y.T)
    else:
        np.testing.assert_allclose(L, np.exp(-gamma * ((y[:, None] - y[None]) ** 2).sum(axis=2)), rtol=1e-15)
    provider = HSICWeights(y, kind, gamma, unbiased)
    expected = hsic_weights(L, unbiased)
    for step in (1, 4, 10):
        np.testing.assert_allclose(blocks(provider, step), expected, rtol=1e-12, atol=1e-15)
    assert provider.row_temporaries == 4 + y.shape[1]
