"""Every sampler through the explainer: exactness, efficiency, unbiasedness, errors, early stopping."""

import numpy as np
import pytest
from scipy.stats import t as student_t

from sklearn_shapq import PermutationShapExplainer

from brute_force import brute_force_shapley, interventional_value, random_polynomial_model

WALKS = ("mc", "antithetic", "orthogonal", "sobol", "herding", "sbq")
BASELINES = ("owen", "owen_halved", "stratified")


def _truth(f, X, background):
    d = X.shape[1]
    return np.array([brute_force_shapley(lambda s, x=x: interventional_value(f, x, background, s), d) for x in X])


def _pairwise_model(d, rng):
    a, b = rng.normal(size=d), np.triu(rng.normal(size=(d, d)), 1)
    return lambda Z: Z @ a + np.einsum("ni,ij,nj->n", Z, b, Z)


@pytest.fixture(scope="module")
def game():
    rng = np.random.default_rng(5)
    d = 5
    f = random_polynomial_model(d, rng)
    background, X = rng.normal(size=(8, d)), rng.normal(size=(3, d))
    return f, background, X, _truth(f, X, background)


@pytest.mark.parametrize("sampler", WALKS)
@pytest.mark.parametrize("max_evals", [6, 30, 101])
def test_walks_are_exactly_efficient(sampler, max_evals, game):
    f, background, X, _ = game
    if max_evals < 2 + 2 * 4 and sampler in ("antithetic", "orthogonal"):
        pytest.skip("below one pair")
    explainer = PermutationShapExplainer(
        f, sampler=sampler, max_evals=max_evals, background_size=None, random_state=0
    ).fit(background)
    explanation = explainer.explain(X)
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, f(X), atol=1e-10, rtol=0)


@pytest.mark.parametrize("sampler", WALKS + BASELINES)
def test_additive_games_are_exact(sampler):
    rng = np.random.default_rng(1)
    d = 6
    coef = rng.normal(size=d)
    background, X = rng.normal(size=(7, d)), rng.normal(size=(4, d))
    budget = 8 * d * d if sampler == "stratified" else 60
    values = (
        PermutationShapExplainer(
            lambda Z: Z @ coef, sampler=sampler, max_evals=budget, background_size=None, random_state=0
        )
        .fit(background)
        .shap_values(X)
    )
    np.testing.assert_allclose(values, coef * (X - background.mean(0)), atol=1e-10)


@pytest.mark.parametrize("sampler", ["antithetic", "orthogonal", "owen_halved"])
@pytest.mark.parametrize("seed", [0, 1])
def test_pairwise_games_are_exact_with_reversal_pairs(sampler, seed):
    rng = np.random.default_rng(seed)
    d = 6
    f = _pairwise_model(d, rng)
    background, X = rng.normal(size=(5, d)), rng.normal(size=(3, d))
    values = (
        PermutationShapExplainer(f, sampler=sampler, max_evals=2 + 6 * (d - 1), background_size=None, random_state=seed)
        .fit(background)
        .shap_values(X)
    )
    np.testing.assert_allclose(values, _truth(f, X, background), atol=1e-10)


def test_a_third_order_term_breaks_pairwise_exactness(game):
    f, background, X, truth = game
    values = (
        PermutationShapExplainer(f, sampler="orthogonal", max_evals=2 + 4 * 4, background_size=None, random_state=0)
        .fit(background)
        .shap_values(X)
    )
    assert np.abs(values - truth).max() > 1e-6


@pytest.mark.parametrize("sampler", ["orthogonal", "sobol", "herding", "sbq"])
def test_unbiased_over_seeds(sampler, game):
    f, background, X, truth = game
    budget = 2 + 4 * 4  # 4 orderings
    runs = np.array(
        [
            PermutationShapExplainer(f, sampler=sampler, max_evals=budget, background_size=None, random_state=s)
            .fit(background)
            .shap_values(X[:1])[0]
            for s in range(150)
        ]
    )
    spread = runs.std(0, ddof=1) / np.sqrt(len(runs))
    assert (np.abs(runs.mean(0) - truth[0]) <= 4 * spread + 1e-12).all()


def test_block_standard_errors_are_calibrated():
    """Errors over independent orthogonal blocks cover the truth as a t interval with 9 dof would."""
    rng = np.random.default_rng(2024)
    d = 5
    hidden, bias, out = 0.8 * rng.normal(size=(d, 16)), 0.3 * rng.normal(size=16), rng.normal(size=16)

    def f(Z):  # a small tanh network: interactions of every order
        return np.tanh(Z @ hidden + bias) @ out

    background, X = rng.normal(size=(8, d)), rng.normal(size=(3, d))
    truth = _truth(f, X, background)
    covered = []
    for seed in range(60):
        explainer = PermutationShapExplainer(
            f, sampler="orthogonal", max_evals=2 + 80 * 4, background_size=None, random_state=seed
        ).fit(background)
        explanation = explainer.explain(X)
        covered.append(np.abs(explanation.values - truth) <= 1.96 * explanation.error_std)
    assert 0.85 <= np.mean(covered) <= 0.99  # ten blocks of 8 orderings: about 0.92 expected


@pytest.mark.parametrize("sampler", ["sobol", "herding", "sbq"])
def test_shared_design_errors_are_conservative(sampler, game):
    f, background, X, truth = game
    explanation = (
        PermutationShapExplainer(f, sampler=sampler, max_evals=2 + 40 * 4, background_size=None, random_state=0)
        .fit(background)
        .explain(X)
    )
    assert (explanation.error_std > 0).all()
    ratios = []
    for seed in range(30):
        values = (
            PermutationShapExplainer(f, sampler=sampler, max_evals=2 + 40 * 4, background_size=None, random_state=seed)
            .fit(background)
            .shap_values(X)
        )
        ratios.append((values - truth) ** 2)
    rmse = np.sqrt(np.mean(ratios, axis=0))
    assert np.median(explanation.error_std / rmse) >= 0.8  # reported errors do not understate


@pytest.mark.parametrize("sampler", WALKS)
def test_early_stopping(sampler, game):
    f, background, X, _ = game
    budget = 2 + 200 * 4  # orthogonal: 25 blocks, enough to pass the 10-unit minimum

    def explain(tol):
        explainer = PermutationShapExplainer(
            f, sampler=sampler, max_evals=budget, tol=tol, background_size=None, random_state=0
        ).fit(background)
        return explainer, explainer.explain(X)

    loose, explanation = explain(1e3)
    assert (loose.n_evals_per_row_ < budget).all() and loose.n_evals_ == loose.n_evals_per_row_.max()
    assert (explanation.error_std < 1e3).all()
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, f(X), atol=1e-10)
    strict, strict_explanation = explain(1e-9)
    full, full_explanation = explain(None)
    assert (full.n_evals_per_row_ == full.n_evals_).all() and budget - 8 < full.n_evals_ <= budget
    # a row stops early only when its errors really are below tol (exact rows have zero spread)
    stopped = strict.n_evals_per_row_ < full.n_evals_
    assert (strict_explanation.error_std[stopped] < 1e-9).all()
    np.testing.assert_allclose(strict_explanation.values[~stopped], full_explanation.values[~stopped], atol=1e-12)


@pytest.mark.parametrize("sampler", WALKS + BASELINES)
def test_values_do_not_depend_on_batching(sampler, game):
    f, background, X, _ = game
    budget = 8 * 25 if sampler == "stratified" else 120

    def run(batch_size, n_jobs):
        return (
            PermutationShapExplainer(
                f, sampler=sampler, max_evals=budget, batch_size=batch_size, n_jobs=n_jobs, random_state=3
            )
            .fit(background)
            .shap_values(X)
        )

    np.testing.assert_array_equal(run("auto", None), run(8, 2))


@pytest.mark.parametrize("sampler", WALKS)
@pytest.mark.parametrize("d", [1, 2, 3])
def test_small_d(sampler, d):
    rng = np.random.default_rng(d)
    f = _pairwise_model(d, rng)
    background, X = rng.normal(size=(4, d)), rng.normal(size=(3, d))
    values = (
        PermutationShapExplainer(f, sampler=sampler, max_evals=40, background_size=None, random_state=0)
        .fit(background)
        .shap_values(X)
    )
    if d == 1 or (d == 2 and sampler != "mc") or sampler in ("antithetic", "orthogonal"):  # pairs of reverses
        np.testing.assert_allclose(values, _truth(f, X, background), atol=1e-10)
    np.testing.assert_allclose(values.sum(1), f(X) - f(background).mean(), atol=1e-10)


def test_invalid_sampler_parameters(game):
    f, background, _, _ = game
    for params, match in [
        ({"tol": 0}, "tol"),
        ({"tol": 0.1, "sampler": "owen"}, "early stopping"),
        ({"tol": 0.1, "sampler": "stratified"}, "early stopping"),
        ({"lam": -1.0}, "lam"),
        ({"n_candidates": 0}, "n_candidates"),
    ]:
        with pytest.raises(ValueError, match=match):
            PermutationShapExplainer(f, **params).fit(background)


def test_early_stopping_waits_for_ten_units():
    """Two agreeing units must not stop a row: their error estimate is too noisy."""
    rng = np.random.default_rng(0)
    d = 4
    f = random_polynomial_model(d, rng)
    background, X = rng.normal(size=(6, d)), np.repeat(rng.normal(size=(1, d)), 50, axis=0)
    explainer = PermutationShapExplainer(
        f, sampler="antithetic", max_evals=2 + 40 * 3, tol=10.0, background_size=None, random_state=0
    ).fit(background)
    explanation = explainer.explain(X)
    assert (explainer.n_evals_per_row_ == 2 + 20 * 3).all()  # stopped at the first check: 10 pairs
    quantile = (explanation.upper_bounds - explanation.values) / explanation.error_std
    np.testing.assert_allclose(quantile[explanation.error_std > 1e-9], student_t.ppf(0.975, 9))


@pytest.mark.parametrize(("sampler", "d", "budget"), [("sbq", 4, 182), ("herding", 4, 182), ("sobol", 2, 40)])
def test_complete_designs_are_exact_with_zero_error(sampler, d, budget):
    rng = np.random.default_rng(0)
    f = random_polynomial_model(d, rng)
    background, X = rng.normal(size=(6, d)), rng.normal(size=(3, d))
    explainer = PermutationShapExplainer(
        f, sampler=sampler, max_evals=budget, background_size=None, random_state=0
    ).fit(background)
    explanation = explainer.explain(X)
    np.testing.assert_allclose(explanation.values, _truth(f, X, background), atol=1e-10)
    assert (explanation.error_std == 0).all()
    stopping = PermutationShapExplainer(
        f, sampler=sampler, max_evals=budget, tol=1e-6, background_size=None, random_state=0
    ).fit(background)
    stopping.explain(X)
    if d == 4:  # stops at the first check with all 24 orderings walked, not at the budget's 60
        assert (stopping.n_evals_per_row_ == 2 + 28 * 3).all()


def test_owen_intervals_use_student_t_over_two_runs(game):
    f, background, X, truth = game
    covered = []
    for seed in range(40):
        explanation = (
            PermutationShapExplainer(f, sampler="owen_halved", max_evals=240, background_size=None, random_state=seed)
            .fit(background)
            .explain(X)
        )
        spread = explanation.error_std > 1e-9
        quantile = (explanation.upper_bounds - explanation.values)[spread] / explanation.error_std[spread]
        np.testing.assert_allclose(quantile, student_t.ppf(0.975, 1))
        covered.append((explanation.lower_bounds <= truth + 1e-12) & (truth - 1e-12 <= explanation.upper_bounds))
    assert np.mean(covered) >= 0.8  # normal intervals cover about 0.7; the q-grid's bias is not covered
