"""Permutations from points on the sphere: the zero-sum embedding, orthogonal codes, Sobol points."""

import math

import numpy as np

from sklearn_shapq.samplers import mallows_kernel, sample_permutations
from sklearn_shapq.samplers._sphere import (
    orthogonal_orderings,
    polar_inverse_cdf,
    polar_to_cartesian,
    sobol_sphere_points,
    sphere_orderings,
    zero_sum_embedding,
)

from game_helpers import permutation_pvalue

ALPHA = 1e-3


def test_zero_sum_embedding_is_the_dense_basis():
    d = 7
    basis = np.zeros((d - 1, d))
    for k in range(1, d):
        basis[k - 1, :k] = 1
        basis[k - 1, k] = -k
        basis[k - 1] /= np.sqrt(k * (k + 1))
    np.testing.assert_allclose(basis @ basis.T, np.eye(d - 1), atol=1e-12)
    points = np.random.default_rng(0).normal(size=(5, d - 1))
    embedded = zero_sum_embedding(points)
    np.testing.assert_allclose(embedded, points @ basis, atol=1e-12)
    np.testing.assert_allclose(embedded.sum(axis=1), 0, atol=1e-12)


def test_sobol_points_lie_on_the_sphere_with_uniform_second_moments():
    d = 6
    points = sobol_sphere_points(4096, d, np.random.default_rng(0))
    np.testing.assert_allclose(np.linalg.norm(points, axis=1), 1, atol=1e-12)
    np.testing.assert_allclose((points**2).mean(axis=0), 1 / (d - 1), atol=0.01)


def test_antipode_is_the_reversed_ordering():
    points = np.random.default_rng(0).normal(size=(20, 8))
    np.testing.assert_array_equal(sphere_orderings(-points), sphere_orderings(points)[:, ::-1])


def test_misprinted_polar_map_is_detected():
    """The corrected polar map is uniform; the paper's Algorithm 4 as printed (``i < d − 2``) is not."""
    rng = np.random.default_rng(0)  # d = 5: angles of S^3 with densities sin^2, sin^1 and the azimuth
    u = rng.random((3000, 3))
    angles = np.column_stack([polar_inverse_cdf(u[:, 0], 2), polar_inverse_cdf(u[:, 1], 1), 2 * np.pi * u[:, 2]])
    points = polar_to_cartesian(angles)
    assert permutation_pvalue(sphere_orderings(points)) > ALPHA
    points[:, -2] /= np.cos(angles[:, -1])  # drop the last cos factor, as the misprint does
    assert permutation_pvalue(sphere_orderings(points)) < ALPHA


def test_orthogonal_is_uniform_per_slot():
    for d in (4, 5):
        rng = np.random.default_rng(d)
        blocks = orthogonal_orderings(rng.standard_normal((40 * math.factorial(d), d - 1, d - 1)))
        assert blocks.shape[1] == 2 * (d - 1)
        for slot in range(blocks.shape[1]):
            assert permutation_pvalue(blocks[:, slot]) > ALPHA


def test_orthogonal_block_cut_short_is_a_prefix_of_the_whole_block():
    rng = np.random.default_rng(1)
    gaussians = rng.standard_normal((3, 6, 6))
    whole = orthogonal_orderings(gaussians)
    np.testing.assert_array_equal(orthogonal_orderings(gaussians[:, :, :2]), whole[:, :4])


def test_orthogonal_block_pairs_are_reverses_and_nearly_uncorrelated():
    d = 40
    block = sample_permutations("orthogonal", 2 * (d - 1), d, random_state=0)[0]
    np.testing.assert_array_equal(block[1::2], block[0::2, ::-1])
    kendall = 1 - 2 * (-np.log(mallows_kernel(block[0::2], block[0::2], 1.0)))  # K_tau from lam = 1
    off_diagonal = kendall[~np.eye(d - 1, dtype=bool)]
    assert np.abs(off_diagonal).max() <= 0.5 + 0.1  # Theorem 2: |K_tau| <= 1/2 + o(1)
