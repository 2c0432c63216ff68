"""Exact Shapley values by enumeration against brute force and the Shapley axioms."""

import numpy as np
import pytest

from sklearn_shapq.algorithms import exact_shapley
from sklearn_shapq.games import TableGame

from brute_force import brute_force_shapley, random_polynomial_model
from game_helpers import interventional_game, run_estimator, truth


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7])
def test_exact_matches_brute_force(d):
    rng = np.random.default_rng(d)
    f = random_polynomial_model(d, rng)
    background, X = rng.normal(size=(15, d)), rng.normal(size=(4, d))
    game = interventional_game(f, background, X)
    phi = exact_shapley(game, np.arange(4))
    assert phi.shape == (4, d, 1)
    np.testing.assert_allclose(phi[..., 0], truth(f, X, background), atol=1e-10, rtol=0)
    np.testing.assert_array_equal(game.n_evals, 2**d)  # every coalition once, the corners included
    np.testing.assert_allclose(phi[..., 0].sum(axis=1), f(X) - f(background).mean(), atol=1e-10)


def test_exact_on_a_table_and_a_subset_of_games():
    d = 6
    tables = np.random.default_rng(0).normal(size=(3, 2**d))
    game = TableGame(tables)
    phi = exact_shapley(game, np.array([2, 0]))
    bits = 1 << np.arange(d)
    for row, g in enumerate([2, 0]):
        expected = brute_force_shapley(lambda s, g=g: tables[g, int(bits[list(s)].sum())], d)
        np.testing.assert_allclose(phi[row, :, 0], expected, atol=1e-12)
    np.testing.assert_array_equal(game.n_evals, [2**d, 2, 2**d])  # game 1's corners come with the others'


def test_exact_multi_output_matches_brute_force():
    rng = np.random.default_rng(11)
    d = 4
    fs = [random_polynomial_model(d, rng) for _ in range(3)]

    def f(Z):
        return np.column_stack([g(Z) for g in fs])

    background, X = rng.normal(size=(10, d)), rng.normal(size=(2, d))
    estimate, _ = run_estimator("exact", interventional_game(f, background, X), 2**d)
    assert estimate.values.shape == (2, d, 3)
    np.testing.assert_allclose(estimate.values, truth(f, X, background), atol=1e-10)
    np.testing.assert_array_equal(estimate.stderr, 0.0)
    np.testing.assert_array_equal(estimate.dof, np.inf)
    np.testing.assert_array_equal(estimate.n_evals, 2**d)


@pytest.mark.parametrize("max_mask_bytes", [1, 100, 10_000])
def test_chunking_changes_nothing(max_mask_bytes):
    d = 7
    tables = np.random.default_rng(1).normal(size=(2, 2**d))
    whole = exact_shapley(TableGame(tables), np.arange(2))
    game = TableGame(tables)
    chunked = exact_shapley(game, np.arange(2), max_mask_bytes=max_mask_bytes)
    np.testing.assert_array_equal(chunked, whole)
    np.testing.assert_array_equal(game.n_evals, 2**d)
    if max_mask_bytes == 1:
        assert game.n_calls == 2**d - 2  # one coalition per call


def test_symmetry_dummy_and_linearity():
    d = 5

    def f(Z):  # players 0 and 1 symmetric; player 4 a dummy
        return Z[:, 0] * Z[:, 1] + Z[:, 0] + Z[:, 1] + Z[:, 2] * Z[:, 3] ** 2

    x = np.array([[1.5, 1.5, 0.3, -2.0, 7.0]])
    phi = exact_shapley(interventional_game(f, np.zeros((1, d)), x), np.array([0]))[0, :, 0]
    assert phi[4] == 0.0
    assert phi[0] == pytest.approx(phi[1], abs=1e-12)

    rng = np.random.default_rng(9)
    f1, f2 = random_polynomial_model(d, rng), random_polynomial_model(d, rng)
    background, X = rng.normal(size=(10, d)), rng.normal(size=(3, d))

    def phi_of(g):
        return exact_shapley(interventional_game(g, background, X), np.arange(3))

    np.testing.assert_allclose(phi_of(lambda Z: 2 * f1(Z) - 3 * f2(Z)), 2 * phi_of(f1) - 3 * phi_of(f2), atol=1e-12)


def test_linear_model_with_a_zero_background_gives_the_coefficients():
    d = 6
    coef = np.arange(1.0, d + 1)
    phi = exact_shapley(interventional_game(lambda Z: Z @ coef, np.zeros((1, d)), np.ones((2, d))), np.arange(2))
    np.testing.assert_allclose(phi[..., 0], np.tile(coef, (2, 1)), atol=1e-12)
