"""Budget rules and accounting: the model sees exactly the rows reported."""

import numpy as np
import pytest

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.explainers._budget import auto_max_evals, minimum_evals, plan_budget


class CountingModel:
    def __init__(self, d):
        self.coef = np.linspace(-1, 1, d)
        self.rows = 0
        self.calls = 0

    def __call__(self, Z):
        self.rows += len(Z)
        self.calls += 1
        return np.tanh(Z @ self.coef) * Z[:, 0]


@pytest.mark.parametrize(
    ("sampler", "max_evals", "d", "expected"),
    [
        ("exact", 64, 6, ("exact", 0, 64)),
        ("auto", 500, 8, ("exact", 0, 256)),
        ("auto", 500, 9, ("sbq", 62, 2 + 62 * 8)),
        ("auto", 2000, 17, ("orthogonal", 124, 2 + 124 * 16)),
        ("auto", 20, 16, ("mc", 1, 17)),
        ("auto", 2 + 1500 * 14, 15, ("herding", 1500, 2 + 1500 * 14)),  # SBQ beyond 1000 orderings: herding
        ("mc", 100, 10, ("mc", 10, 92)),
        ("sobol", 100, 10, ("sobol", 10, 92)),
        ("herding", 100, 10, ("herding", 10, 92)),
        ("sbq", 100, 10, ("sbq", 10, 92)),
        ("antithetic", 100, 10, ("antithetic", 10, 92)),
        ("orthogonal", 100, 10, ("orthogonal", 10, 92)),
        ("antithetic", 101, 11, ("antithetic", 8, 82)),  # odd remainder left unused
        ("owen", 100, 4, ("owen", 10, 100)),  # 2 runs x 10 grid points x (d + 1)
        ("owen_halved", 100, 4, ("owen_halved", 10, 100)),
        ("owen_halved", 95, 4, ("owen_halved", 8, 80)),  # grid rounded down to an even size
        ("stratified", 801, 10, ("stratified", 400, 800)),
        ("mc", 2, 1, ("exact", 0, 2)),
    ],
)
def test_plan_budget(sampler, max_evals, d, expected):
    plan = plan_budget(sampler, max_evals, d)
    assert (plan.sampler, plan.size, plan.n_evals) == expected
    assert plan.n_evals <= max_evals


def test_sbq_size_is_capped():
    with pytest.raises(ValueError, match="herding"):
        plan_budget("sbq", 2 + 2001 * 9, 10)
    assert plan_budget("sbq", 2 + 2000 * 9, 10).size == 2000
    assert plan_budget("sbq", 2 + 5000 * 3, 4).size == 5000  # d! <= n: enumeration, no greedy steps


def test_auto_budget():
    assert auto_max_evals(16) == 500
    assert auto_max_evals(100) == 2 + 20 * 99
    assert plan_budget("auto", "auto", 100).size == 20


@pytest.mark.parametrize(
    "sampler",
    ["mc", "antithetic", "orthogonal", "sobol", "herding", "sbq", "owen", "owen_halved", "stratified", "exact"],
)
@pytest.mark.parametrize("d", [3, 10])
def test_budget_below_minimum_is_a_clear_error(sampler, d):
    with pytest.raises(ValueError, match="below the minimum"):
        plan_budget(sampler, minimum_evals(sampler, d) - 1, d)
    plan_budget(sampler, minimum_evals(sampler, d), d)


def test_unknown_sampler():
    with pytest.raises(ValueError, match="Unknown sampler"):
        plan_budget("sobolev", 100, 5)
    with pytest.raises(ValueError, match="Unknown sampler"):
        PermutationShapExplainer(lambda Z: Z[:, 0], sampler="qmc").fit(np.zeros((2, 3))).explain(np.ones((1, 3)))


def test_exact_refuses_large_d():
    with pytest.raises(ValueError, match="2\\^40"):
        plan_budget("exact", 10**15, 40)


@pytest.mark.parametrize(
    ("sampler", "batch_size"),
    [
        ("exact", "auto"),
        ("antithetic", 97),
        ("mc", 1),
        ("orthogonal", 50),
        ("sobol", "auto"),
        ("herding", 40),
        ("sbq", "auto"),
        ("owen", 30),
        ("owen_halved", "auto"),
        ("stratified", 26),
    ],
)
def test_model_sees_exactly_the_reported_rows(sampler, batch_size):
    d, n_background, n_rows = 7, 13, 5
    rng = np.random.default_rng(0)
    model = CountingModel(d)
    explainer = PermutationShapExplainer(
        model, sampler=sampler, max_evals=400, batch_size=batch_size, background_size=None, random_state=0
    ).fit(rng.normal(size=(n_background, d)))
    assert model.rows == n_background  # fit: the base value, once
    model.rows = model.calls = 0
    explainer.explain(rng.normal(size=(n_rows, d)))
    assert explainer.n_model_rows_ == model.rows
    assert 400 - 4 * (d + 1) < explainer.n_evals_ <= 400 or sampler == "exact"  # rounding to whole units
    # walks: v(empty) comes from fit and v(N) is one model row per explained row; the baselines send
    # every coalition (empty and full ones included) through the game
    new_evals = explainer.n_evals_ - (0 if sampler in ("owen", "owen_halved", "stratified") else 2)
    assert model.rows == n_rows * (new_evals * n_background + 1)
    if batch_size != "auto":
        assert model.calls >= model.rows / max(batch_size, n_background)


def test_large_batches_few_model_calls():
    d, n_background = 10, 50
    model = CountingModel(d)
    rng = np.random.default_rng(0)
    explainer = PermutationShapExplainer(
        model, sampler="antithetic", max_evals=200, background_size=None, random_state=0
    ).fit(rng.normal(size=(n_background, d)))
    model.calls = 0
    explainer.explain(rng.normal(size=(40, d)))
    # 40 rows x 198 coalitions x 50 background rows = 396,000 model rows fit one auto batch
    assert model.calls <= 3


@pytest.mark.parametrize("batch_size", ["auto", 200])
def test_threaded_model_calls_same_values_and_counts(batch_size):
    d, n_background = 6, 20
    rng = np.random.default_rng(0)
    background, X = rng.normal(size=(n_background, d)), rng.normal(size=(9, d))
    results = []
    for n_jobs in (None, 2, -1):
        model = CountingModel(d)
        explainer = PermutationShapExplainer(
            model, sampler="antithetic", max_evals=60, batch_size=batch_size, n_jobs=n_jobs, random_state=0
        ).fit(background)
        model.rows = 0
        explanation = explainer.explain(X)
        assert model.rows == explainer.n_model_rows_ == 9 * ((explainer.n_evals_ - 2) * n_background + 1)
        results.append(explanation.values)
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])
    with pytest.raises(ValueError, match="n.jobs"):
        PermutationShapExplainer(CountingModel(d), n_jobs=0).fit(background)
