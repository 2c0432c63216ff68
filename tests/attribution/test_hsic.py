"""HSICAttribution: brute force, textbook statistic, selector API, parameters, state."""

import matplotlib
import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

from sklearn_shapq import HSICAttribution
from sklearn_shapq.attribution._common import block_rows
from sklearn_shapq.backends import ArrayBackend
from sklearn_shapq.games import HSICWeights

from brute_force import brute_force_shapley
from fitted_state import assert_call_changes_nothing, threaded_results
from kernel_statistic_oracles import hsic_textbook, hsic_weights, rbf_factors, shapley_of_pairs

matplotlib.use("Agg")


@pytest.mark.parametrize("statistic", ["biased", "unbiased"])
@pytest.mark.parametrize("target", ["rbf", "delta"])
def test_matches_brute_force_and_textbook(target, statistic):
    rng = np.random.default_rng(7)
    n, d = 14, 5
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 3, size=n) if target == "delta" else X[:, 0] * X[:, 1] + rng.normal(size=n)
    sigma = rng.uniform(0.5, 2.0, size=d)
    fitted = HSICAttribution(bandwidth_x=sigma, kernel_y=target, bandwidth_y=1.5, statistic=statistic).fit(X, y)
    L = (y[:, None] == y[None, :]).astype(float) if target == "delta" else np.exp(-((y[:, None] - y) ** 2) / 4.5)
    factors = rbf_factors(X, X, sigma)
    unbiased = statistic == "unbiased"
    textbook = hsic_textbook(np.prod(factors, axis=2), L, unbiased)
    W = hsic_weights(L, unbiased)
    assert W.sum() == pytest.approx(0.0, abs=1e-14)  # v(∅) = 0
    np.testing.assert_allclose(fitted.attributions_, shapley_of_pairs(W, factors), rtol=0, atol=1e-13)
    assert fitted.hsic_ == pytest.approx(textbook, rel=1e-12)
    assert fitted.attributions_.sum() == pytest.approx(textbook, rel=1e-10)


GROUPINGS = [  # feature_groups, and the players they make: (name, columns), ordered by first column
    ({"bd": ["d", "b"]}, [("a", [0]), ("bd", [1, 3]), ("c", [2]), ("e", [4])]),
    ({"bde": [3, 1, -1]}, [("a", [0]), ("bde", [1, 3, 4]), ("c", [2])]),
    ({"ce": ["e", 2], "ab": [0, "b"]}, [("ab", [0, 1]), ("ce", [2, 4]), ("d", [3])]),
]


@pytest.mark.parametrize("device", ["cpu", ArrayBackend(np)], ids=["numba", "array twin"])
@pytest.mark.parametrize("method", ["prefix_suffix", "quadrature"])
@pytest.mark.parametrize("statistic", ["biased", "unbiased"])
@pytest.mark.parametrize("feature_groups, players", GROUPINGS)
def test_feature_groups_match_brute_force_of_the_grouped_statistic(feature_groups, players, statistic, method, device):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(14, 5))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.3 * rng.normal(size=14)
    sigma = rng.uniform(0.5, 2.0, size=5)
    fitted = HSICAttribution(
        bandwidth_x=sigma,
        kernel_y="rbf",
        bandwidth_y=1.5,
        statistic=statistic,
        feature_groups=feature_groups,
        algorithm=method,
        device=device,
    ).fit(pd.DataFrame(X, columns=list("abcde")), y)
    L = np.exp(-((y[:, None] - y) ** 2) / 4.5)
    factors = rbf_factors(X, X, sigma)

    def value(coalition):  # HSIC on the columns of the coalition's players
        columns = [j for p in coalition for j in players[p][1]]
        return hsic_textbook(np.prod(factors[:, :, columns], axis=2), L, statistic == "unbiased")

    expected = brute_force_shapley(value, len(players))
    np.testing.assert_allclose(fitted.attributions_, expected, rtol=0, atol=1e-10)
    assert fitted.attributions_.sum() == pytest.approx(value(range(len(players))), abs=1e-10)
    assert fitted.feature_groups_.names == fitted.explain().feature_names == [name for name, _ in players]


def test_feature_groups_are_selected_and_ranked_whole():
    rng = np.random.default_rng(12)
    X = pd.DataFrame(rng.normal(size=(60, 6)), columns=[f"c{j}" for j in range(6)])
    y = X["c1"] * X["c4"] + 0.1 * rng.normal(size=60)
    selector = HSICAttribution(n_features_to_select=1, feature_groups={"pair": ["c1", "c4"]}).fit(X, y)
    assert selector.feature_groups_.names == ["c0", "pair", "c2", "c3", "c5"]
    assert selector.attributions_.shape == selector.ranking_.shape == (5,) and selector.ranking_[1] == 1
    np.testing.assert_array_equal(selector.get_support(), [False, True, False, False, True, False])
    assert list(selector.get_feature_names_out()) == ["c1", "c4"]
    assert HSICAttribution(feature_groups={"pair": [1, 4]}).fit(X, y).n_features_to_select_ == 1  # 20% of 5
    with pytest.raises(ValueError, match="n_features_to_select must be between 1 and 5"):
        HSICAttribution(n_features_to_select=6, feature_groups={"pair": [1, 4]}).fit(X, y)


@pytest.mark.parametrize(
    "feature_groups, match",
    [
        ({"g": ["c0", "height"]}, "'height', which is not a column"),
        ({"g": ["c0", "c1"], "h": ["c2", 1]}, "'c1' appears in groups 'g' and 'h'"),
    ],
)
def test_bad_feature_groups_are_refused_in_fit(feature_groups, match):
    rng = np.random.default_rng(13)
    X = pd.DataFrame(rng.normal(size=(20, 3)), columns=["c0", "c1", "c2"])
    with pytest.raises(ValueError, match=match):
        HSICAttribution(feature_groups=feature_groups).fit(X, rng.normal(size=20))


def test_small_worked_example():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [3.0, 1.0]])
    y = np.array([0.0, 1.0, 4.0, 9.0])
    fitted = HSICAttribution(bandwidth_x=1.0, kernel_y="rbf", bandwidth_y=np.sqrt(5.0)).fit(X, y)  # exp(−0.1 Δy²)
    L = np.exp(-0.1 * (y[:, None] - y) ** 2)
    K = np.prod(rbf_factors(X, X, [1.0, 1.0]), axis=2)
    assert fitted.attributions_.sum() == pytest.approx(hsic_textbook(K, L, False), rel=1e-12)


def test_constant_target_gives_zero_hsic():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 5))
    fitted = HSICAttribution(kernel_y="rbf").fit(X, np.full(40, 3.0))
    np.testing.assert_allclose(fitted.attributions_, 0.0, atol=1e-15)
    assert fitted.hsic_ == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("method", ["prefix_suffix", "quadrature"])
def test_working_memory_blocks_do_not_change_the_attributions(method):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 6))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2]
    whole = HSICAttribution(algorithm=method).fit(X, y)  # one block: 60 rows fit in 1 GiB
    with sklearn.config_context(working_memory=60 * 8 * 8 * 7 / 2**20):  # 7 rows of 8 temporaries of 60 float64
        assert block_rows(60, HSICWeights(y[:, None], "rbf", 1.0, False).row_temporaries) == 7
        blocked = HSICAttribution(algorithm=method).fit(X, y)
    np.testing.assert_allclose(blocked.attributions_, whole.attributions_, rtol=0, atol=1e-12 * abs(whole.hsic_))
    auto = HSICAttribution().fit(X, y)
    np.testing.assert_allclose(auto.attributions_, whole.attributions_, rtol=1e-12)


@pytest.mark.slow
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
    assert selector.kernel_y_ == "delta" and selector.n_features_to_select_ == 2
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


@pytest.mark.parametrize("k, expected", [(1, 1), (4, 4), (10, 10), (0.05, 1), (0.35, 4), (1.0, 10)])
def test_features_to_select_as_count_or_fraction(k, expected):
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(30, 10)), rng.normal(size=30)
    selector = HSICAttribution(n_features_to_select=k).fit(X, y)
    assert selector.n_features_to_select_ == expected == selector.transform(X).shape[1]


def test_grid_search_in_a_pipeline():
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[::4], y[::4]
    pipeline = make_pipeline(StandardScaler(), HSICAttribution(), SVC())
    search = GridSearchCV(pipeline, {"hsicattribution__n_features_to_select": [2, 5]}, cv=3).fit(X, y)
    assert search.best_params_["hsicattribution__n_features_to_select"] in (2, 5)
    assert search.best_estimator_[-1].n_features_in_ == search.best_params_["hsicattribution__n_features_to_select"]


def test_explain_and_transform_change_nothing_and_threads_agree():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(40, 6))
    y = X[:, 0] - X[:, 3] ** 2
    selector = HSICAttribution(n_features_to_select=2).fit(X, y)
    explanation = assert_call_changes_nothing(selector, lambda s: s.explain())
    assert_call_changes_nothing(selector, lambda s: s.transform(X))
    assert_call_changes_nothing(selector, lambda s: s.get_support())
    for other in threaded_results(selector.explain):
        np.testing.assert_array_equal(other.values, explanation.values)
    fits = threaded_results(lambda: clone(selector).fit(X, y).attributions_)
    for attributions in fits:
        np.testing.assert_array_equal(attributions, selector.attributions_)


@pytest.mark.parametrize(
    "name, value",
    [
        ("kernel_x", "cosine"),
        ("bandwidth_x", "silverman"),
        ("kernel_y", "linear"),
        ("bandwidth_y", -1.0),
        ("statistic", "U"),
        ("n_features_to_select", 0),
        ("feature_groups", ["x0"]),
        ("method", "brute_force"),
        ("device", "tpu"),
        ("progress", "yes"),
    ],
)
def test_invalid_parameters_raise_invalid_parameter_error(name, value):
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        HSICAttribution(**{name: value}).fit(X, y)


def test_every_parameter_is_constrained():
    assert set(HSICAttribution._parameter_constraints) == set(HSICAttribution().get_params())
    check_param_validation("HSICAttribution", HSICAttribution())  # a bad type and a bad value per parameter


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
    with pytest.raises(ValueError, match="sample"):
        HSICAttribution(statistic="unbiased").fit(X[:3], y[:3])
    with pytest.raises(ValueError, match="two classes"):
        HSICAttribution(kernel_y="delta").fit(X, np.zeros(20))
    with pytest.raises(ValueError, match="n_features_to_select"):
        HSICAttribution(n_features_to_select=4).fit(X, y)
    with pytest.raises(ValueError, match="bandwidth_x"):
        HSICAttribution(bandwidth_x=[1.0, -1.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match="bandwidth_x"):
        HSICAttribution(bandwidth_x=[1.0, 1.0]).fit(X, y)


@pytest.mark.gpu
def test_cuda_equals_cpu():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(50, 7))
    y = X[:, 0] * X[:, 1]
    cpu = HSICAttribution().fit(X, y)
    cuda = HSICAttribution(device="cuda").fit(X, y)
    np.testing.assert_allclose(cuda.attributions_, cpu.attributions_, rtol=1e-10, atol=1e-14)


def test_a_float_target_with_whole_values_gets_the_rbf_kernel():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    assert HSICAttribution(n_features_to_select=3).fit(X[:200], y[:200]).kernel_y_ == "rbf"
    assert HSICAttribution(n_features_to_select=3).fit(X[:200], (y[:200] > 140).astype(int)).kernel_y_ == "delta"
    assert HSICAttribution(kernel_y="delta", n_features_to_select=3).fit(X[:200], y[:200] > 140).kernel_y_ == "delta"


# ---------------------------------------------------------------- no silent wrong answer


MISSING_TARGETS = {
    "object None": lambda: np.array(["a", "b"] * 10, dtype=object),
    "list None": lambda: [1.5, -0.5] * 10,
    "float NaN": lambda: np.tile([1.5, -0.5], 10),
    "category": lambda: pd.Series(["a", "b"] * 10, dtype="category"),
    "string NA": lambda: pd.Series(["a", "b"] * 10, dtype="string"),
    "Int64 NA": lambda: pd.Series([1, 2] * 10, dtype="Int64"),
    "2-D": lambda: np.tile([[1.5, 0.0], [-0.5, 1.0]], (10, 1)),
}


@pytest.mark.parametrize("kind", MISSING_TARGETS)
def test_missing_targets_are_refused_naming_y(kind):
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = MISSING_TARGETS[kind]()
    if isinstance(y, list):
        y[3] = None
    elif isinstance(y, pd.Series):
        y = y.where(y.index != 3)
    elif y.dtype == object:
        y[3] = None
    else:
        y[3] = np.nan
    with pytest.raises(ValueError, match=r"y has missing values \(None, NaN or NA\) in 1 rows, first at row 3"):
        HSICAttribution().fit(X, y)


def test_labels_of_mixed_types_and_non_numeric_rbf_targets_are_refused_naming_y():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(TypeError, match=r"y mixes labels of types \['int', 'str'\]"):
        HSICAttribution().fit(X, np.array(["a", 1] * 10, dtype=object))
    with pytest.raises(ValueError, match="kernel_y='rbf' needs a numeric y, got labels such as 'a'"):
        HSICAttribution(kernel_y="rbf").fit(X, np.array(["a", "b"] * 10))


def _hsic_brute_force(X, y, bandwidths, sigma_y, unbiased=False):
    L = np.exp(-((y[:, None] - y) ** 2) / (2.0 * sigma_y**2))
    return shapley_of_pairs(hsic_weights(L, unbiased), rbf_factors(X, X, bandwidths))


@pytest.mark.parametrize("statistic", ["biased", "unbiased"])
@pytest.mark.parametrize("bandwidth", ["median_per_feature", "median"])
def test_a_constant_column_gets_zero_and_the_others_their_brute_force_values(bandwidth, statistic):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(14, 4))
    X[:, 2] = 7.0
    y = X[:, 0] * X[:, 1] + rng.normal(size=14)
    fitted = HSICAttribution(bandwidth_x=bandwidth, kernel_y="rbf", statistic=statistic).fit(X, y)
    assert fitted.attributions_[2] == 0.0  # a null player (median_per_feature: an infinite bandwidth, factor 1)
    expected = _hsic_brute_force(X, y, fitted.bandwidths_, fitted.bandwidth_y_, statistic == "unbiased")
    np.testing.assert_allclose(fitted.attributions_, expected, rtol=0, atol=1e-13)


@pytest.mark.parametrize("scale", [1e200, 1e-200, 3e155])
def test_extreme_scales_give_the_attributions_of_the_rescaled_data(scale):
    # once: a column (or y) near 1e±155 overflowed its squared distances: zero attributions, or NaN
    rng = np.random.default_rng(6)
    X = rng.normal(size=(30, 4))
    y = X[:, 1] + 0.3 * rng.normal(size=30)
    reference = HSICAttribution(kernel_y="rbf").fit(X, y).attributions_
    scaled = X.copy()
    scaled[:, 1] *= scale
    for kernel in ("rbf", "laplacian"):
        plain = HSICAttribution(kernel_x=kernel, kernel_y="rbf").fit(X, y).attributions_
        fitted = HSICAttribution(kernel_x=kernel, kernel_y="rbf").fit(scaled, y)  # the per-feature rule: invariant
        np.testing.assert_allclose(fitted.attributions_, plain, rtol=1e-9, atol=1e-15)
        assert fitted.bandwidths_[1] == pytest.approx(scale * HSICAttribution().fit(X, y).bandwidths_[1], rel=1e-12)
    np.testing.assert_allclose(HSICAttribution(kernel_y="rbf").fit(X, y * scale).attributions_, reference, rtol=1e-9)


def test_a_nearly_constant_column_keeps_a_finite_bandwidth():
    # every evenly spaced row of the median rule sees 0: once an infinite bandwidth, a zero attribution
    from sklearn_shapq.attribution._bandwidth import MAX_MEDIAN_ROWS, _rows_for_median

    n = 3 * MAX_MEDIAN_ROWS
    rng = np.random.default_rng(8)
    X = np.c_[np.zeros(n), rng.normal(size=n)]
    rare = np.setdiff1d(np.arange(n), np.linspace(0, n - 1, MAX_MEDIAN_ROWS).astype(int))[::25]
    X[rare, 0] = rng.uniform(1.0, 2.0, size=rare.size)
    assert (_rows_for_median(X)[:, 0] == 0).all()
    y = X[:, 0] + 0.01 * rng.normal(size=n)
    fitted = HSICAttribution(kernel_y="rbf").fit(X, y)
    assert np.isfinite(fitted.bandwidths_).all()
    sigma = fitted.bandwidths_
    L = np.exp(-((y[:, None] - y) ** 2) / (2.0 * fitted.bandwidth_y_**2))
    factors = rbf_factors(X, X, sigma)

    def v(players):
        return hsic_textbook(np.prod(factors[:, :, list(players)], axis=2), L, False)

    first = 0.5 * (v([0]) - v([])) + 0.5 * (v([0, 1]) - v([1]))  # two players: the Shapley formula
    assert fitted.attributions_[0] == pytest.approx(first, rel=1e-9)
    assert fitted.attributions_[0] > fitted.attributions_[1]


def test_a_bandwidth_that_overflows_a_column_is_refused_naming_it():
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(20, 3)) * 1e10, columns=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"bandwidth_x: column 'b' divided by its bandwidth 1e-300 overflows"):
        HSICAttribution(bandwidth_x=[1.0, 1e-300, 1.0]).fit(X, rng.normal(size=20))
    with pytest.raises(ValueError, match=r"bandwidth_y: column 'y' divided by its bandwidth 1e-310 overflows"):
        HSICAttribution(kernel_y="rbf", bandwidth_y=1e-310).fit(X, rng.normal(size=20))


def test_non_finite_attributions_are_an_error_naming_the_players(monkeypatch):
    import sklearn_shapq.attribution._common as common

    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(20, 3)), columns=["a", "b", "c"])
    monkeypatch.setattr(common, "statistic_shapley", lambda *args: np.array([0.1, np.nan, np.inf]))
    with pytest.raises(ValueError, match=r"The attributions of \['b', 'c'\] came out NaN or infinite"):
        HSICAttribution().fit(X, rng.normal(size=20))
