"""product_kernel_shapley and its method rule: enumeration of the game, sums of components, limits in d."""

import numpy as np
import pytest

from sklearn_shapq.algorithms import product_kernel_shapley, resolve_product_kernel_algorithm
from sklearn_shapq.backends import ArrayBackend, CpuBackend
from sklearn_shapq.backends._product_kernel import FACTOR_KINDS
from sklearn_shapq.games import KernelComponent, KernelExpansion, ProductKernelGame

from brute_force import brute_force_shapley


def component(rng, d, n, k=1):
    kinds = rng.choice([FACTOR_KINDS["rbf"], FACTOR_KINDS["laplacian"], FACTOR_KINDS["cauchy"]], size=d)
    return KernelComponent(
        rng.normal(size=(n, d)), rng.normal(size=(n, k)), kinds.astype(np.int8), rng.uniform(0.1, 2, d)
    )


def factors(c, rows):
    """k_cj(x_j, X_cij) for rows (A, d) and the component's anchors: (A, n, d), written out."""
    diff = rows[:, None, :] - c.anchors[None]
    rbf, laplacian = np.exp(-c.gammas * diff**2), np.exp(-c.gammas * np.abs(diff))
    cauchy = 1 / (1 + c.gammas * diff**2)
    return np.where(
        c.kinds == FACTOR_KINDS["rbf"], rbf, np.where(c.kinds == FACTOR_KINDS["laplacian"], laplacian, cauchy)
    )


def model_output(expansion, rows):
    """f(x) = b + Σ_c Σ_i w_ci Π_j k_cj(x_j, X_cij)."""
    return expansion.intercept + sum(np.prod(factors(c, rows), axis=2) @ c.weights for c in expansion.components)


@pytest.mark.parametrize("references", [None, 1, 3])
@pytest.mark.parametrize("backend", [CpuBackend(), ArrayBackend(np)], ids=["numba", "array twin"])
def test_every_method_equals_subset_enumeration_of_a_two_component_expansion(backend, references):
    """v(S) = b + Σ_c Σ_i w_ci mean_l f with absent features at reference rows (none: factor 1)."""
    rng = np.random.default_rng(0 if references is None else references)
    d = 4
    expansion = KernelExpansion([component(rng, d, 6, k=2), component(rng, d, 5, k=2)], np.array([0.5, -1.0]))
    refs = None if references is None else rng.normal(size=(references, d))
    x = rng.normal(size=(3, d))
    expected = np.empty((3, d, 2))
    for row, xr in enumerate(x):

        def value(s, xr=xr):
            if refs is None:  # the PKeX game: an absent factor is 1
                terms = [np.prod(factors(c, xr[None])[0][:, list(s)], axis=1) @ c.weights for c in expansion.components]
                return expansion.intercept + sum(terms)
            rows = refs.copy()
            rows[:, list(s)] = xr[list(s)]
            return model_output(expansion, rows).mean(axis=0)

        expected[row] = brute_force_shapley(value, d)
    game = ProductKernelGame(expansion, backend.to_device(x), refs, backend)
    for method in ("prefix_suffix", "quadrature", "brute_force"):
        got = backend.to_numpy(product_kernel_shapley(game, np.arange(len(x)), method))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12, err_msg=method)
    full = model_output(expansion, x)
    np.testing.assert_allclose(expected.sum(axis=1) + backend.to_numpy(game.empty_value), full, atol=1e-12)
    np.testing.assert_allclose(backend.to_numpy(game.full_value), full, atol=1e-12)


@pytest.mark.parametrize("d", [1, 16, 512, 513, 1000, 1001])
def test_auto_rule_and_limits_in_d(d):
    expected = "prefix_suffix" if d <= 512 else "quadrature"
    assert resolve_product_kernel_algorithm("auto", d, on_gpu=False) == expected
    assert resolve_product_kernel_algorithm("auto", d, on_gpu=True) == "quadrature"
    assert resolve_product_kernel_algorithm("quadrature", d, on_gpu=False) == "quadrature"
    if d <= 16:
        assert resolve_product_kernel_algorithm("brute_force", d, on_gpu=False) == "brute_force"
    else:
        with pytest.raises(ValueError, match="brute_force"):
            resolve_product_kernel_algorithm("brute_force", d, on_gpu=False)
    if d <= 1000:
        assert resolve_product_kernel_algorithm("prefix_suffix", d, on_gpu=True) == "prefix_suffix"
    else:
        with pytest.raises(ValueError, match="overflows"):
            resolve_product_kernel_algorithm("prefix_suffix", d, on_gpu=False)
