"""Estimators against brute force, closed forms and the Shapley axioms."""

import numpy as np
import pytest

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.backends import CpuBackend
from sklearn_shapq.estimators import combine_units, permutation_walk, shapley_from_table
from sklearn_shapq.estimators._units import UnitSamples
from sklearn_shapq.samplers import sample_permutations

from brute_force import brute_force_shapley, interventional_value, random_polynomial_model


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7])
def test_exact_matches_brute_force(d):
    rng = np.random.default_rng(d)
    f = random_polynomial_model(d, rng)
    background = rng.normal(size=(15, d))
    X = rng.normal(size=(4, d))
    explainer = PermutationShapExplainer(f, sampler="exact", background_size=None).fit(background)
    values = explainer.shap_values(X)
    for x, phi in zip(X, values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(f, x, background, s), d)
        np.testing.assert_allclose(phi, expected, atol=1e-10, rtol=0)
    assert explainer.n_evals_ == 2**d


def test_exact_multi_output_matches_brute_force():
    rng = np.random.default_rng(11)
    d = 4
    fs = [random_polynomial_model(d, rng) for _ in range(3)]

    def f(Z):
        return np.column_stack([g(Z) for g in fs])

    background = rng.normal(size=(10, d))
    x = rng.normal(size=(1, d))
    explanation = PermutationShapExplainer(f, sampler="exact", background_size=None).fit(background).explain(x)
    assert explanation.values.shape == (1, d, 3)
    expected = brute_force_shapley(lambda s: interventional_value(f, x[0], background, s), d)
    np.testing.assert_allclose(explanation.values[0], expected, atol=1e-10)


def test_shapley_from_table_closed_form_unanimity():
    # unanimity game on T: phi_i = 1/|T| for i in T, 0 otherwise
    d, T = 6, [1, 3, 4]
    codes = np.arange(2**d)
    present = ((codes[:, None] >> np.arange(d)) & 1).astype(bool)
    table = present[:, T].all(axis=1).astype(float)[None, :, None]
    phi = shapley_from_table(table, np)[0, :, 0]
    expected = np.zeros(d)
    expected[T] = 1 / 3
    np.testing.assert_allclose(phi, expected, atol=1e-15)


@pytest.mark.parametrize("sampler", ["mc", "antithetic"])
def test_additive_model_exact_with_one_unit(sampler):
    rng = np.random.default_rng(0)
    d = 9
    coef = rng.normal(size=d)

    def f(Z):
        return np.sin(Z) @ coef

    background = rng.normal(size=(20, d))
    X = rng.normal(size=(5, d))
    explainer = PermutationShapExplainer(f, sampler=sampler, max_evals=2 * d, background_size=None, random_state=1).fit(
        background
    )
    values = explainer.shap_values(X)
    expected = (np.sin(X) - np.sin(background).mean(0)) * coef
    np.testing.assert_allclose(values, expected, atol=1e-12)


def test_pairwise_model_exact_with_one_antithetic_pair():
    rng = np.random.default_rng(3)
    d = 8
    f = random_polynomial_model(d, rng, order=2, n_terms=20)
    background = rng.normal(size=(12, d))
    X = rng.normal(size=(3, d))
    explainer = PermutationShapExplainer(
        f, sampler="antithetic", max_evals=2 * d, background_size=None, random_state=4
    ).fit(background)
    values = explainer.shap_values(X)
    assert explainer.n_evals_ == 2 * d
    for x, phi in zip(X, values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(f, x, background, s), d)
        np.testing.assert_allclose(phi, expected, atol=1e-10)


def test_third_order_model_not_exact_with_one_pair():
    # guard against a test that cannot fail: antithetic exactness must break with 3-way terms
    rng = np.random.default_rng(5)
    d = 6

    def f(Z):
        return Z[:, 0] * Z[:, 1] * Z[:, 2] + Z[:, 3]

    background = rng.normal(size=(12, d))
    x = rng.normal(size=(1, d))
    explainer = PermutationShapExplainer(
        f, sampler="antithetic", max_evals=2 * d, background_size=None, random_state=0
    ).fit(background)
    expected = brute_force_shapley(lambda s: interventional_value(f, x[0], background, s), d)
    assert np.abs(explainer.shap_values(x)[0] - expected).max() > 1e-6


@pytest.mark.parametrize("sampler", ["exact", "mc", "antithetic"])
def test_efficiency_every_sampler(sampler):
    rng = np.random.default_rng(7)
    d = 7
    f = random_polynomial_model(d, rng, order=4)
    background = rng.normal(size=(25, d))
    X = rng.normal(size=(6, d))
    explanation = (
        PermutationShapExplainer(f, sampler=sampler, max_evals=200, background_size=None, random_state=0)
        .fit(background)
        .explain(X)
    )
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, f(X), atol=1e-10)
    np.testing.assert_allclose(explanation.base_values, f(background).mean(), atol=1e-12)


def test_symmetry_and_dummy():
    d = 5

    def f(Z):  # players 0 and 1 symmetric; player 4 a dummy
        return Z[:, 0] * Z[:, 1] + Z[:, 0] + Z[:, 1] + Z[:, 2] * Z[:, 3] ** 2

    background = np.zeros((1, d))
    x = np.array([[1.5, 1.5, 0.3, -2.0, 7.0]])
    for sampler in ("exact", "antithetic", "mc"):
        phi = (
            PermutationShapExplainer(f, sampler=sampler, max_evals=100, background_size=None, random_state=0)
            .fit(background)
            .shap_values(x)[0]
        )
        assert phi[4] == 0.0
        if sampler != "mc":
            assert phi[0] == pytest.approx(phi[1], abs=1e-12)


def test_linearity():
    rng = np.random.default_rng(9)
    d = 5
    f1, f2 = random_polynomial_model(d, rng), random_polynomial_model(d, rng)
    background, X = rng.normal(size=(10, d)), rng.normal(size=(3, d))

    def phi(f):
        return PermutationShapExplainer(f, sampler="exact", background_size=None).fit(background).shap_values(X)

    np.testing.assert_allclose(phi(lambda Z: 2 * f1(Z) - 3 * f2(Z)), 2 * phi(f1) - 3 * phi(f2), atol=1e-12)


def test_linear_model_binary_background_gives_coefficients():
    d = 6
    coef = np.arange(1.0, d + 1)
    explainer = PermutationShapExplainer(lambda Z: Z @ coef, sampler="mc", max_evals=50, random_state=0)
    phi = explainer.fit(np.zeros((1, d))).shap_values(np.ones((2, d)))
    np.testing.assert_allclose(phi, np.tile(coef, (2, 1)), atol=1e-12)


def test_estimates_are_unbiased_and_errors_calibrated():
    rng = np.random.default_rng(10)
    d = 6
    f = random_polynomial_model(d, rng, order=4)
    background, x = rng.normal(size=(10, d)), rng.normal(size=(1, d))
    exact = PermutationShapExplainer(f, sampler="exact", background_size=None).fit(background).shap_values(x)[0]
    for sampler in ("mc", "antithetic"):
        explainer = PermutationShapExplainer(f, sampler=sampler, max_evals=102, background_size=None)
        runs = [explainer.set_params(random_state=s).fit(background).explain(x) for s in range(200)]
        values = np.array([r.values[0] for r in runs])
        stderr = np.array([r.error_std[0] for r in runs])
        spread = values.std(0)
        # unbiased: the mean of 200 runs is within 4 standard errors of the exact value
        assert np.all(np.abs(values.mean(0) - exact) <= 4 * spread / np.sqrt(200) + 1e-12)
        # the reported standard error matches the spread across runs (within 25%)
        np.testing.assert_allclose(np.sqrt((stderr**2).mean(0)), spread, rtol=0.25)


def test_walk_weights_and_units():
    backend = CpuBackend()
    rng = np.random.default_rng(0)
    d = 4
    f = random_polynomial_model(d, rng)

    class Game:
        def __init__(self):
            self.backend = backend
            self.empty_value = np.array([0.0])

        def __call__(self, x, masks):
            return np.array([[[f(np.where(m, x[b], 0.0)[None])[0]] for m in masks[b]] for b in range(len(x))])

    x = rng.normal(size=(2, d))
    full = f(x)[:, None]
    orderings = np.stack([sample_permutations("mc", 6, d, random_state=seed)[0] for seed in (1, 2)])
    bounds = np.array([0, 1, 4, 6])  # units of unequal sizes
    unit_values = permutation_walk(Game(), x, full, orderings, bounds, max_mask_bytes=40)
    assert unit_values.shape == (2, 3, d, 1)
    per_ordering = permutation_walk(Game(), x, full, orderings, np.arange(7))
    for u in range(3):
        np.testing.assert_allclose(
            unit_values[:, u], per_ordering[:, bounds[u] : bounds[u + 1]].mean(1), atol=1e-12, rtol=0
        )
    estimate, _ = combine_units(UnitSamples(unit_values, np.array([0.2, 0.4, 0.4])), np)
    np.testing.assert_allclose(estimate[..., 0].sum(1), full[:, 0] - 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="unit_bounds"):
        permutation_walk(Game(), x, full, orderings, np.array([0, 3, 3, 6]))


def test_combine_units_single_unit_is_nan_and_equal_weights_give_sem():
    values = np.arange(12.0).reshape(1, 4, 3, 1)
    estimate, stderr = combine_units(UnitSamples(values, np.full(4, 0.25)), np)
    np.testing.assert_allclose(estimate[0, :, 0], values[0, :, :, 0].mean(0))
    np.testing.assert_allclose(stderr[0, :, 0], values[0, :, :, 0].std(0, ddof=1) / 2)
    _, single = combine_units(UnitSamples(values[:, :1], np.ones(1)), np)
    assert np.isnan(single).all()
