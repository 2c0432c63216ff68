"""The permutation explainer's policy: algorithm and budget (resolve_algorithm, auto_max_evals), background parts."""

import numpy as np
import pytest

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS
from sklearn_shapq.explainers._auto_algorithm import (
    CONTROL_VARIATE_COALITIONS,
    LEVERAGE_MAX_FEATURES,
    LEVERAGE_MIN_EVALS_PER_FEATURE,
    REGRESSION_SPLIT_FEATURES,
    auto_max_evals,
    resolve_algorithm,
    resolve_parts,
)


def test_auto_max_evals():
    assert auto_max_evals(1) == auto_max_evals(16) == 500  # shap's default
    assert auto_max_evals(26) == 502  # ten antithetic pairs beyond
    assert auto_max_evals(100) == 2 + 20 * 99


@pytest.mark.parametrize(
    ("algorithm", "max_evals", "d", "expected"),
    [
        ("exact", "auto", 6, ("exact", 64)),
        ("exact", 64, 6, ("exact", 64)),
        ("auto", "auto", 5, ("exact", 500)),
        ("auto", 500, 8, ("exact", 500)),  # 2^8 <= 500
        ("auto", 2**30, 30, ("exact", 2**30)),
        ("auto", 500, 9, ("leverage_cv", 500)),  # Leverage SHAP: the lowest measured error
        ("auto", 2 + 1000 * 15, 16, ("leverage_cv", 2 + 1000 * 15)),
        ("auto", 2 + 2 * 100_000, 20, ("leverage", 200_002)),  # the surrogates would outgrow 256 MiB per row
        ("auto", 2**16, 16, ("exact", 2**16)),
        ("auto", 500, 30, ("leverage_cv", 500)),
        ("auto", 2000, LEVERAGE_MAX_FEATURES, ("leverage_cv", 2000)),
        ("auto", 2000, LEVERAGE_MAX_FEATURES + 1, ("orthogonal", 2000)),  # beyond the measured d
        ("auto", 10**7, 40, ("orthogonal", 10**7)),  # the regression would outgrow 256 MiB per row
        ("auto", LEVERAGE_MIN_EVALS_PER_FEATURE * 16, 16, ("leverage_cv", 48)),
        ("auto", LEVERAGE_MIN_EVALS_PER_FEATURE * 16 - 1, 16, ("orthogonal", 47)),  # 2d: as many pairs as unknowns
        ("auto", 20, 9, ("orthogonal", 20)),
        ("auto", 20, 16, ("mc", 20)),  # below one pair of orderings (2 + 2 · 15)
        ("auto", "auto", 100, ("leverage_cv", 2 + 20 * 99)),
        ("auto", "auto", 120, ("orthogonal", 2 + 20 * 119)),
        ("mc", 2, 1, ("exact", 2)),  # one feature: every algorithm is exact with 2 evaluations
        ("owen", "auto", 1, ("exact", 500)),
        ("antithetic", 100, 10, ("antithetic", 100)),
        ("stratified", 800, 10, ("stratified", 800)),
    ],
)
def test_resolve_algorithm(algorithm, max_evals, d, expected):
    """With one background row nothing can be split: the shared coalitions' choices."""
    assert resolve_algorithm(algorithm, max_evals, d) == (*expected, 1)
    name, budget = expected
    assert name in SHAPLEY_ALGORITHMS
    assert SHAPLEY_ALGORITHMS[name].refusal(budget, d) is None


@pytest.mark.parametrize("algorithm", sorted(SHAPLEY_ALGORITHMS))
@pytest.mark.parametrize("d", [3, 10])
def test_budget_below_the_minimum_is_a_clear_error(algorithm, d):
    minimum = SHAPLEY_ALGORITHMS[algorithm].minimum_evals(d)
    with pytest.raises(ValueError, match="below the minimum"):
        resolve_algorithm(algorithm, minimum - 1, d)
    assert resolve_algorithm(algorithm, minimum, d)[:2] == (algorithm, minimum)


def test_sampler_limits_are_errors():
    with pytest.raises(ValueError, match="2\\^40"):
        resolve_algorithm("exact", 10**15, 40)
    with pytest.raises(ValueError, match="2\\^31"):
        resolve_algorithm("exact", "auto", 31)
    with pytest.raises(ValueError, match="herding"):
        resolve_algorithm("sbq", 2 + 2001 * 9, 10)
    assert resolve_algorithm("sbq", 2 + 2000 * 9, 10)[:2] == ("sbq", 2 + 2000 * 9)
    assert resolve_algorithm("sbq", 2 + 5000 * 3, 4)[:2] == ("sbq", 2 + 5000 * 3)  # d! <= n: enumeration
    with pytest.raises(ValueError, match="MiB"):
        resolve_algorithm("herding", 2 + 70_000 * 999, 1000)


def test_auto_never_picks_a_sampler_that_refuses():
    for d in (2, 3, 8, 9, 15, 16, 17, 31, 200):
        for budget in (4, 50, 500, 5000, 50_000, 2_000_000):
            if budget < d + 1:
                continue
            for n_background in (1, 100):
                name, spent, _ = resolve_algorithm("auto", budget, d, n_background=n_background)
                assert SHAPLEY_ALGORITHMS[name].refusal(spent, d) is None, (d, budget, name)


@pytest.mark.parametrize(
    ("max_evals", "d", "n_background", "expected"),
    [
        (300, 10, 100, ("leverage_cv", 300, 20)),  # split: a surrogate per part, 6000 / 300 parts
        (500, 12, 100, ("leverage_cv", 500, 10)),  # 6000 / 500 = 12: the largest divisor of 100 below
        (100, 8, 50, ("leverage", 100, 50)),  # below 20d: no surrogates on split games
        (103, 8, 50, ("leverage", 103, 50)),  # 40% of 2^8: split too (it was shared before 2026-11-27)
        (160, 8, 50, ("leverage_cv", 160, 25)),  # from 20d a surrogate per part: 6000 / 160 parts
        (255, 8, 50, ("leverage_cv", 255, 10)),  # all but v(N) and v(∅): still split, 6000 / 255 parts
        (500, 8, 50, ("exact", 500, 1)),
        (300, 20, 100, ("leverage", 300, 50)),  # 100 · 10 / 20: the regression's parts, below 20d
        (400, 20, 100, ("leverage_cv", 400, 10)),  # min(100 · 10 / 20, 6000 / 400): the surrogates' parts
        (500, 30, 100, ("orthogonal", 500, 100)),  # split, above d = 24: walks on every background row
        (2000, 100, 50, ("orthogonal", 2000, 50)),
        (2000, 120, 50, ("orthogonal", 2000, 50)),  # walks cost O(d) a coalition: every background row
        (20, 16, 100, ("mc", 20, 100)),
        (300, 10, 7, ("leverage_cv", 300, 7)),
        (500, 22, 7, ("leverage_cv", 500, 1)),  # 7 is prime: one part or seven, so the shared control variate
    ],
)
def test_auto_splits_the_background_where_it_measured_better(max_evals, d, n_background, expected):
    assert resolve_algorithm("auto", max_evals, d, n_background=n_background) == expected


def test_regressions_get_fewer_parts_at_large_d_and_walks_every_background_row():
    for d in (4, 10, 11, 25, 60, 100):
        parts = resolve_parts("auto", "leverage", d, None, 100)
        assert 100 % parts == 0 and parts <= max(1, 100 * min(1, REGRESSION_SPLIT_FEATURES / d))
        assert resolve_parts("auto", "orthogonal", d, None, 100) == 100
    assert resolve_parts("auto", "leverage", REGRESSION_SPLIT_FEATURES, None, 100) == 100


@pytest.mark.parametrize("algorithm", ["sobol", "herding", "sbq", "leverage_cv", "exact"])
def test_auto_does_not_split_shared_designs_exact_values_or_the_control_variate(algorithm):
    assert resolve_parts("auto", algorithm, 10, None, 100) == 1


def test_an_explicit_control_variate_gets_parts_whose_surrogates_see_a_bounded_number_of_coalitions():
    for budget in (40, 100, 300, 1000, 10_000):
        for d in (6, 10, 20):
            parts = resolve_parts("auto", "leverage_cv", d, None, 120, budget)
            assert 120 % parts == 0 and (parts == 1 or parts * budget <= CONTROL_VARIATE_COALITIONS)
            assert parts <= max(1, 120 * min(1, REGRESSION_SPLIT_FEATURES / d))
    assert resolve_algorithm("leverage_cv", 300, 10, n_background=100) == ("leverage_cv", 300, 20)
    assert resolve_algorithm("auto", 500, 9, n_background=100) == ("leverage_cv", 500, 10)  # auto's: the same parts


def test_auto_does_not_split_with_tol_and_an_explicit_split_refuses_it():
    assert resolve_algorithm("auto", 500, 12, tol=0.01, n_background=100)[2] == 1
    assert resolve_parts("auto", "orthogonal", 12, 0.01, 100) == 1
    with pytest.raises(ValueError, match="early stopping"):
        resolve_parts(4, "orthogonal", 12, 0.01, 100)


def test_explicit_parts_are_checked():
    assert resolve_parts(4, "leverage_cv", 12, None, 100) == 4
    assert resolve_parts(4, "exact", 12, None, 100) == 1  # nothing to split: exact values
    with pytest.raises(ValueError, match="background_parts=3 must divide the 100 background rows"):
        resolve_parts(3, "leverage", 12, None, 100)
    with pytest.raises(ValueError, match="shared by every game"):
        resolve_parts(4, "sbq", 12, None, 100)
    assert resolve_algorithm("auto", 103, 8, 2, n_background=50) == ("leverage", 103, 2)  # asked to split


def test_tol_with_auto_takes_a_walk_that_stops_early_or_exact_values():
    """A review's case: tol with the default algorithm was refused at every d up to 100 (auto took a regression)."""
    assert resolve_algorithm("auto", 500, 12, tol=0.01, n_background=100) == ("orthogonal", 500, 1)
    assert resolve_algorithm("auto", 20, 12, tol=0.01, n_background=100)[0] == "mc"
    rng = np.random.default_rng(0)
    for d, path in ((3, "exact"), (9, "orthogonal")):
        X = rng.normal(size=(40, d))
        explainer = PermutationShapExplainer(
            lambda Z: Z.sum(axis=1) + Z[:, 0] * Z[:, 1], tol=0.01, background_size=20, random_state=0, progress=False
        ).fit(X)
        explanation = explainer.explain(X[:3])
        assert explainer.algorithm_ == path
        expected = X[:3].sum(axis=1) + X[:3, 0] * X[:3, 1]
        np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values, expected, atol=1e-12)
