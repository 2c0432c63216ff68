"""The permutation explainer's sampler and budget policy: resolve_sampler and auto_max_evals."""

import pytest

from sklearn_shapq.estimators import SHAPLEY_ESTIMATORS
from sklearn_shapq.explainers._auto_sampler import (
    LEVERAGE_MAX_FEATURES,
    LEVERAGE_MIN_EVALS_PER_FEATURE,
    auto_max_evals,
    resolve_sampler,
)


def test_auto_max_evals():
    assert auto_max_evals(1) == auto_max_evals(16) == 500  # shap's default
    assert auto_max_evals(26) == 502  # ten antithetic pairs beyond
    assert auto_max_evals(100) == 2 + 20 * 99


@pytest.mark.parametrize(
    ("sampler", "max_evals", "d", "expected"),
    [
        ("exact", "auto", 6, ("exact", 64)),
        ("exact", 64, 6, ("exact", 64)),
        ("auto", "auto", 5, ("exact", 500)),
        ("auto", 500, 8, ("exact", 500)),  # 2^8 <= 500
        ("auto", 2**30, 30, ("exact", 2**30)),
        ("auto", 500, 9, ("leverage_cv", 500)),  # Leverage SHAP: the lowest measured error
        ("auto", 2 + 1000 * 15, 16, ("leverage_cv", 2 + 1000 * 15)),
        ("auto", 2 + 3000 * 15, 16, ("leverage", 2 + 3000 * 15)),  # the surrogates would outgrow 256 MiB per row
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
        ("mc", 2, 1, ("exact", 2)),  # one feature: every sampler is exact with 2 evaluations
        ("owen", "auto", 1, ("exact", 500)),
        ("antithetic", 100, 10, ("antithetic", 100)),
        ("stratified", 800, 10, ("stratified", 800)),
    ],
)
def test_resolve_sampler(sampler, max_evals, d, expected):
    assert resolve_sampler(sampler, max_evals, d) == expected
    name, budget = expected
    assert name in SHAPLEY_ESTIMATORS
    assert SHAPLEY_ESTIMATORS[name].refusal(name, budget, d) is None


@pytest.mark.parametrize("sampler", sorted(SHAPLEY_ESTIMATORS))
@pytest.mark.parametrize("d", [3, 10])
def test_budget_below_the_minimum_is_a_clear_error(sampler, d):
    minimum = SHAPLEY_ESTIMATORS[sampler].minimum_evals(sampler, d)
    with pytest.raises(ValueError, match="below the minimum"):
        resolve_sampler(sampler, minimum - 1, d)
    assert resolve_sampler(sampler, minimum, d) == (sampler, minimum)


def test_sampler_limits_are_errors():
    with pytest.raises(ValueError, match="2\\^40"):
        resolve_sampler("exact", 10**15, 40)
    with pytest.raises(ValueError, match="2\\^31"):
        resolve_sampler("exact", "auto", 31)
    with pytest.raises(ValueError, match="herding"):
        resolve_sampler("sbq", 2 + 2001 * 9, 10)
    assert resolve_sampler("sbq", 2 + 2000 * 9, 10) == ("sbq", 2 + 2000 * 9)
    assert resolve_sampler("sbq", 2 + 5000 * 3, 4) == ("sbq", 2 + 5000 * 3)  # d! <= n: enumeration
    with pytest.raises(ValueError, match="MiB"):
        resolve_sampler("herding", 2 + 70_000 * 999, 1000)


def test_auto_never_picks_a_sampler_that_refuses():
    for d in (2, 3, 8, 9, 15, 16, 17, 31, 200):
        for budget in (4, 50, 500, 5000, 50_000, 2_000_000):
            if budget < d + 1:
                continue
            name, spent = resolve_sampler("auto", budget, d)
            assert SHAPLEY_ESTIMATORS[name].refusal(name, spent, d) is None, (d, budget, name)
