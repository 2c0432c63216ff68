"""KernelComponent, KernelExpansion and ProductKernelGame: v(S) from the definition, v(∅), refusals."""

import numpy as np
import pytest

from sklearn_shapq.backends import ArrayBackend
from sklearn_shapq.games import KernelComponent, KernelExpansion, ProductKernelGame


def rbf_expansion(rng, d=4, n=6, k=2):
    gammas = rng.uniform(0.1, 1.0, size=d)
    anchors, weights = rng.normal(size=(n, d)), rng.normal(size=(n, k))
    expansion = KernelExpansion([KernelComponent(anchors, weights, np.zeros(d, np.int8), gammas)], rng.normal(size=k))
    return expansion, anchors, weights, gammas


def rbf_output(rows, anchors, weights, gammas, intercept):
    """f(x) = b + Σ_i w_i exp(−Σ_j γ_j (x_j − X_ij)²)."""
    return intercept + np.exp(-(((rows[:, None, :] - anchors[None]) ** 2) * gammas).sum(axis=2)) @ weights


@pytest.mark.parametrize("n_references", [0, 1, 3])
def test_values_of_coalitions_follow_the_definition(n_references):
    rng = np.random.default_rng(n_references)
    expansion, anchors, weights, gammas = rbf_expansion(rng)
    d = anchors.shape[1]
    references = rng.normal(size=(n_references, d)) if n_references else None
    x = rng.normal(size=(2, d))
    game = ProductKernelGame(expansion, x, references, ArrayBackend(np))
    masks = rng.random(size=(2, 5, d)) < 0.5
    values = game.grid(np.arange(2), masks)
    for r in range(2):
        for c in range(5):
            present = masks[r, c]
            if references is None:  # absent factors are 1: drop the absent features from the kernel
                expected = rbf_output(x[r : r + 1, present], anchors[:, present], weights, gammas[present], 0)[0]
                expected = expected + expansion.intercept
            else:  # absent features take the reference rows' values, averaged
                rows = np.where(present, x[r], references)
                expected = rbf_output(rows, anchors, weights, gammas, expansion.intercept).mean(axis=0)
            np.testing.assert_allclose(values[r, c], expected, rtol=1e-12)
    np.testing.assert_allclose(game.full_value, rbf_output(x, anchors, weights, gammas, expansion.intercept))
    if references is None:
        np.testing.assert_allclose(game.empty_value[0], expansion.intercept + weights.sum(axis=0))
    else:
        expected = rbf_output(references, anchors, weights, gammas, expansion.intercept).mean(axis=0)
        np.testing.assert_allclose(game.empty_value[0], expected)


def test_kernel_rows_in_blocks_equal_one_block(monkeypatch):
    from sklearn_shapq.games import _kernel_expansion

    rng = np.random.default_rng(0)
    expansion, *_ = rbf_expansion(rng, n=30)
    rows = rng.normal(size=(25, 4))
    whole = expansion.predict(rows)
    monkeypatch.setattr(_kernel_expansion, "_BLOCK_BYTES", 1)  # one row per block
    np.testing.assert_array_equal(expansion.predict(rows), whole)


def test_malformed_components_are_refused():
    anchors, weights = np.zeros((4, 3)), np.ones((4, 1))
    kinds, gammas = np.zeros(3, np.int8), np.ones(3)
    with pytest.raises(ValueError, match="kinds"):
        KernelComponent(anchors, weights, np.array([0, 1, 7], np.int8), gammas)
    with pytest.raises(ValueError, match="weights"):
        KernelComponent(anchors, np.ones(4), kinds, gammas)
    with pytest.raises(ValueError, match="kinds and gammas"):
        KernelComponent(anchors, weights, kinds[:2], gammas)
    with pytest.raises(ValueError, match="non-negative"):
        KernelComponent(anchors, weights, kinds, -gammas)
