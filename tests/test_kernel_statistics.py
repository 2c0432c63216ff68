"""HSICAttribution and MMDAttribution: brute force, textbook statistics, invariances, sklearn API."""

import matplotlib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import check_estimator

from sklearn_shapq import HSICAttribution, MMDAttribution

from brute_force import brute_force_shapley

matplotlib.use("Agg")


def rbf_factors(A, B, sigma):
    """k_j(a_j, b_j) = exp(−(a_j − b_j)² / (2σ_j²)) for all pairs: (len(A), len(B), d)."""
    return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2) / (2.0 * np.asarray(sigma) ** 2))


def shapley_of_pairs(weights, factors):
    """Brute force over coalitions of v(S) = Σ_ab W_ab Π_{j∈S} factors_abj."""
    d = factors.shape[2]
    return brute_force_shapley(lambda s: (weights * np.prod(factors[:, :, list(s)], axis=2)).sum(), d)


def mmd2_textbook(X, Z, sigma, unbiased):
    kxx = np.prod(rbf_factors(X, X, sigma), axis=2)
    kzz = np.prod(rbf_factors(Z, Z, sigma), axis=2)
    kxz = np.prod(rbf_factors(X, Z, sigma), axis=2)
    n, m = len(X), len(Z)
    if unbiased:
        return (kxx.sum() - n) / (n * (n - 1)) + (kzz.sum() - m) / (m * (m - 1)) - 2 * kxz.sum() / (n * m)
    return kxx.mean() + kzz.mean() - 2 * kxz.mean()


def hsic_textbook(K, L, unbiased):
    n = K.shape[0]
    if not unbiased:
        H = np.eye(n) - 1.0 / n
        return np.trace(K @ H @ L @ H) / (n - 1) ** 2
    Kt, Lt = K - np.diag(np.diag(K)), L - np.diag(np.diag(L))
    one = np.ones(n)
    middle = (one @ Kt @ one) * (one @ Lt @ one) / ((n - 1) * (n - 2))
    return (np.trace(Kt @ Lt) + middle - 2 / (n - 2) * one @ Kt @ Lt @ one) / (n * (n - 3))


def mmd_weights(n, m, unbiased):
    N = n + m
    W = np.empty((N, N))
    W[:n, :n] = 1 / (n * (n - 1)) if unbiased else 1 / n**2
    W[n:, n:] = 1 / (m * (m - 1)) if unbiased else 1 / m**2
    W[:n, n:] = W[n:, :n] = -1 / (n * m)
    if unbiased:
        np.fill_diagonal(W, 0.0)
    return W


@pytest.mark.parametrize("unbiased", [True, False])
@pytest.mark.parametrize("d", [1, 3, 6])
def test_mmd_matches_brute_force_and_textbook(d, unbiased):
    rng = np.random.default_rng(d)
    X, Z = rng.normal(size=(12, d)), rng.normal(size=(9, d)) * 1.3 + 0.2
    sigma = rng.uniform(0.5, 2.0, size=d)
    fitted = MMDAttribution(bandwidth=sigma, estimator="unbiased" if unbiased else "biased").fit(X, Z)
    U = np.r_[X, Z]
    W = mmd_weights(12, 9, unbiased)
    factors = rbf_factors(U, U, sigma)
    assert (W * np.ones_like(W)).sum() == pytest.approx(0.0, abs=1e-14)  # v(∅) = 0
    np.testing.assert_allclose(fitted.attributions_, shapley_of_pairs(W, factors), rtol=0, atol=1e-13)
    textbook = mmd2_textbook(X, Z, sigma, unbiased)
    assert fitted.mmd2_ == pytest.approx(textbook, rel=1e-12)
    assert fitted.attributions_.sum() == pytest.approx(textbook, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("unbiased", [False, True])
@pytest.mark.parametrize("target", ["rbf", "delta"])
def test_hsic_matches_brute_force_and_textbook(target, unbiased):
    rng = np.random.default_rng(7)
    n, d = 14, 5
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 3, size=n) if target == "delta" else X[:, 0] * X[:, 1] + rng.normal(size=n)
    sigma = rng.uniform(0.5, 2.0, size=d)
    fitted = HSICAttribution(
        bandwidth_x=sigma, kernel_y=target, bandwidth_y=1.5, estimator="unbiased" if unbiased else "biased"
    ).fit(X, y)
    L = (y[:, None] == y[None, :]).astype(float) if target == "delta" else np.exp(-((y[:, None] - y) ** 2) / 4.5)
    factors = rbf_factors(X, X, sigma)
    K = np.prod(factors, axis=2)
    textbook = hsic_textbook(K, L, unbiased)
    # the game's weights from the textbook statistic being linear in K: W_ab = ∂ statistic / ∂ K_ab
    W = np.empty((n, n))
    for a in range(n):
        for b in range(n):
            E = np.zeros((n, n))
            E[a, b] = 1.0
            W[a, b] = hsic_textbook(E, L, unbiased) if not unbiased or a != b else 0.0
    assert W.sum() == pytest.approx(0.0, abs=1e-14)  # v(∅) = 0
    np.testing.assert_allclose(fitted.attributions_, shapley_of_pairs(W, factors), rtol=0, atol=1e-13)
    assert fitted.hsic_ == pytest.approx(textbook, rel=1e-12)
    assert fitted.attributions_.sum() == pytest.approx(textbook, rel=1e-10)


def test_small_worked_examples():
    P = np.array([[0.0, 0.0], [1.0, 0.5], [0.2, 1.0]])
    Q = np.array([[2.0, 0.0], [1.5, 1.5]])
    for estimator, unbiased in (("unbiased", True), ("biased", False)):
        fitted = MMDAttribution(bandwidth=1.0, estimator=estimator).fit(P, Q)  # exp(−0.5 (a − b)²)
        U = np.r_[P, Q]
        expected = shapley_of_pairs(mmd_weights(3, 2, unbiased), rbf_factors(U, U, [1.0, 1.0]))
        np.testing.assert_allclose(fitted.attributions_, expected, rtol=1e-12)
        assert fitted.attributions_.sum() == pytest.approx(mmd2_textbook(P, Q, 1.0, unbiased), rel=1e-12)
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0]])
    y = np.array([0.0, 1.0, 4.0, 9.0])
    fitted = HSICAttribution(bandwidth_x=1.0, kernel_y="rbf", bandwidth_y=np.sqrt(5.0)).fit(X, y)  # exp(−0.1 Δy²)
    L = np.exp(-0.1 * (y[:, None] - y) ** 2)
    K = np.prod(rbf_factors(X, X, [1.0, 1.0]), axis=2)
    assert fitted.attributions_.sum() == pytest.approx(hsic_textbook(K, L, False), rel=1e-12)


def test_mmd_invariances():
    rng = np.random.default_rng(1)
    X, Z = rng.normal(size=(30, 4)), rng.normal(size=(25, 4)) + [0, 0, 0.5, 1.0]
    forward = MMDAttribution(bandwidth="median_per_feature").fit(X, Z)
    backward = MMDAttribution(bandwidth="median_per_feature").fit(Z, X)
    np.testing.assert_allclose(forward.attributions_, backward.attributions_, rtol=1e-12)
    same = MMDAttribution(estimator="biased").fit(X, X.copy())
    assert same.mmd2_ == pytest.approx(0.0, abs=1e-14)
    np.testing.assert_allclose(same.attributions_, 0.0, atol=1e-14)


def test_constant_target_gives_zero_hsic():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 5))
    fitted = HSICAttribution(kernel_y="rbf").fit(X, np.full(40, 3.0))
    np.testing.assert_allclose(fitted.attributions_, 0.0, atol=1e-15)
    assert fitted.hsic_ == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("method", ["prefix_suffix", "quadrature"])
def test_blocked_and_unblocked_agree(method):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 6))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2]
    whole = HSICAttribution(method=method, batch_size=60).fit(X, y)
    blocked = HSICAttribution(method=method, batch_size=7).fit(X, y)
    np.testing.assert_allclose(blocked.attributions_, whole.attributions_, rtol=0, atol=1e-12 * abs(whole.hsic_))
    auto = HSICAttribution().fit(X, y)
    np.testing.assert_allclose(auto.attributions_, whole.attributions_, rtol=1e-12)


def test_mmd_attributes_a_distribution_shift_to_the_shifted_variables():
    rng = np.random.default_rng(0)
    n, d = 300, 8
    X = rng.normal(size=(n, d))
    Z = rng.normal(size=(n, d))
    Z[:, d // 2 :] = rng.standard_t(3, size=(n, d // 2))  # same mean and location, heavier tails
    fitted = MMDAttribution(n_permutations=49, random_state=0).fit(X, Z)
    assert fitted.attributions_.sum() == pytest.approx(fitted.mmd2_, rel=1e-10)
    assert np.all(fitted.attributions_[d // 2 :] > 0)
    assert np.all(fitted.attributions_[: d // 2] < fitted.attributions_[d // 2 :].min())
    assert np.mean(fitted.attributions_[: d // 2]) < 0 < np.mean(fitted.attributions_[d // 2 :])
    assert fitted.p_value_ == pytest.approx(1 / 50)


def test_permutation_test_is_calibrated_under_the_null():
    p_values = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        X, Z = rng.normal(size=(40, 3)), rng.normal(size=(40, 3))
        p_values.append(MMDAttribution(n_permutations=49, random_state=seed).fit(X, Z).p_value_)
    assert 0.02 <= min(p_values) and np.mean(np.array(p_values) < 0.05) <= 0.15
    assert 0.3 < np.mean(p_values) < 0.7


def test_per_feature_bandwidth_finds_a_pure_interaction():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 30))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.1 * rng.normal(size=300)
    fitted = HSICAttribution(n_features_to_select=3).fit(X, y)
    assert set(fitted.get_support(indices=True)) == {0, 1, 2}
    assert fitted.ranking_[2] == 1


def test_selector_api_with_pandas_and_plots():
    rng = np.random.default_rng(4)
    X = pd.DataFrame(rng.normal(size=(80, 10)), columns=[f"c{j}" for j in range(10)])
    y = (X["c3"] + X["c7"] ** 2 > 1).astype(int)
    selector = HSICAttribution().fit(X, y)  # top 20%: 2 features
    assert selector.kernel_y_ == "delta"
    assert list(selector.get_feature_names_out()) == ["c3", "c7"]
    out = selector.set_output(transform="pandas").transform(X)
    assert list(out.columns) == ["c3", "c7"]
    explanation = selector.explain()
    assert explanation.values.shape == (1, 10) and explanation.feature_names[3] == "c3"
    assert np.all(explanation.base_values == 0)
    import shap

    shap.plots.bar(explanation, show=False)
    shap.plots.waterfall(explanation[0], show=False)
    matplotlib.pyplot.close("all")
    assert clone(selector).get_params() == selector.get_params()


def test_grid_search_in_a_pipeline():
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[::4], y[::4]
    pipeline = make_pipeline(StandardScaler(), HSICAttribution(), SVC())
    search = GridSearchCV(pipeline, {"hsicattribution__n_features_to_select": [2, 5]}, cv=3).fit(X, y)
    assert search.best_params_["hsicattribution__n_features_to_select"] in (2, 5)
    assert search.best_estimator_[-1].n_features_in_ == search.best_params_["hsicattribution__n_features_to_select"]


def test_sklearn_estimator_checks():
    # HSICAttribution passes scikit-learn's estimator checks; ConvergenceWarnings or skips aside,
    # no check is expected to fail.
    check_estimator(HSICAttribution())


def test_bad_input():
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    with pytest.raises(ValueError, match="inconsistent|samples"):
        HSICAttribution().fit(X, y[:-1])
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        HSICAttribution().fit(bad, y)
    with pytest.raises(ValueError, match="sample"):
        HSICAttribution().fit(X[:1], y[:1])
    with pytest.raises(ValueError, match="two classes"):
        HSICAttribution(kernel_y="delta").fit(X, np.zeros(20))
    with pytest.raises(ValueError, match="n_features_to_select"):
        HSICAttribution(n_features_to_select=4).fit(X, y)
    with pytest.raises(ValueError, match="bandwidth_x"):
        HSICAttribution(bandwidth_x=[1.0, -1.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        MMDAttribution().fit(X, X[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        MMDAttribution().fit(X, bad)
    with pytest.raises(ValueError, match="at least 2"):
        MMDAttribution().fit(X, X[:1])
    with pytest.raises(ValueError, match="n_permutations"):
        MMDAttribution(n_permutations=0).fit(X, X)
