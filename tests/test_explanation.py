"""Explanations from PermutationShapExplainer go into shap's plots as they are."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import shap  # noqa: E402
from matplotlib.container import ErrorbarContainer  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from sklearn.datasets import load_iris, make_friedman1  # noqa: E402
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from sklearn_shapq import PermutationShapExplainer  # noqa: E402

N_EXPLAIN = 8
N_FEATURES = 5
NAMES = ["age", "dose", "weight", "height", "score"]
CLASSES = ["setosa", "versicolor", "virginica"]


@pytest.fixture(autouse=True)
def _close_figures():
    plt.close("all")
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def regression_data():
    X, y = make_friedman1(n_samples=120, n_features=N_FEATURES, noise=0.5, random_state=0)
    return pd.DataFrame(X, columns=NAMES), y


@pytest.fixture(scope="module")
def forest(regression_data):
    df, y = regression_data
    return RandomForestRegressor(n_estimators=15, max_depth=4, random_state=0).fit(df.to_numpy(), y)


@pytest.fixture(scope="module")
def sampled(regression_data, forest):
    """A sampled explanation of a DataFrame: non-zero error bars."""
    df, _ = regression_data
    explainer = PermutationShapExplainer(
        forest, algorithm="antithetic", max_evals=40, background_size=25, random_state=0
    ).fit(df)
    return explainer.explain(df.iloc[:N_EXPLAIN])


@pytest.fixture(scope="module")
def exact_from_array(regression_data, forest):
    df, _ = regression_data
    X = df.to_numpy()
    explainer = PermutationShapExplainer(forest, algorithm="exact", background_size=25, random_state=0).fit(X)
    return explainer.explain(X[:N_EXPLAIN])


@pytest.fixture(scope="module")
def multiclass():
    data = load_iris(as_frame=True)
    y = np.asarray(data.target_names)[data.target.to_numpy()]
    model = LogisticRegression(max_iter=500).fit(data.data, y)
    explainer = PermutationShapExplainer(model, background_size=20, random_state=0).fit(data.data)
    return explainer.explain(data.data.iloc[::19])


def _texts(fig):
    return " ".join(t.get_text() for t in fig.findobj(Text))


def _n_errorbars(fig):
    return sum(isinstance(c, ErrorbarContainer) for ax in fig.axes for c in ax.containers)


def _top_feature(exp):
    return exp.feature_names[int(np.argmax(np.abs(exp.values).mean(axis=0)))]


# --------------------------------------------------------------------------------------------
# the Explanation contract
# --------------------------------------------------------------------------------------------


def test_contract_dataframe_input(sampled):
    assert isinstance(sampled, shap.Explanation)
    assert sampled.values.shape == (N_EXPLAIN, N_FEATURES)
    assert sampled.base_values.shape == (N_EXPLAIN,)
    assert type(sampled.data) is np.ndarray
    assert sampled.data.shape == (N_EXPLAIN, N_FEATURES)
    assert sampled.data.dtype == np.float64
    assert isinstance(sampled.feature_names, list)
    assert sampled.feature_names == NAMES
    assert all(type(name) is str for name in sampled.feature_names)
    assert sampled.output_names is None
    assert sampled.lower_bounds.shape == sampled.values.shape
    assert sampled.upper_bounds.shape == sampled.values.shape
    assert sampled.error_std.shape == sampled.values.shape
    # an algorithm gives a real interval around the estimate (zero only where every pair agrees)
    width = sampled.upper_bounds - sampled.lower_bounds
    assert np.all(width >= 0)
    assert np.mean(width > 0) > 0.8
    np.testing.assert_allclose((sampled.lower_bounds + sampled.upper_bounds) / 2, sampled.values, atol=1e-12)
    assert isinstance(sampled.compute_time, float)


def test_contract_ndarray_input(exact_from_array, regression_data):
    df, _ = regression_data
    exp = exact_from_array
    assert type(exp.data) is np.ndarray
    np.testing.assert_array_equal(exp.data, df.to_numpy()[:N_EXPLAIN])
    assert exp.feature_names == [f"x{j}" for j in range(N_FEATURES)]
    assert exp.lower_bounds.shape == exp.values.shape
    assert exp.upper_bounds.shape == exp.values.shape
    # exact values: zero-width intervals
    np.testing.assert_array_equal(exp.lower_bounds, exp.values)
    np.testing.assert_array_equal(exp.upper_bounds, exp.values)


def test_contract_multiclass(multiclass):
    n = multiclass.values.shape[0]
    assert multiclass.values.shape == (n, 4, 3)
    assert multiclass.base_values.shape == (n, 3)
    assert multiclass.output_names == CLASSES
    assert multiclass.lower_bounds.shape == multiclass.values.shape
    assert multiclass.upper_bounds.shape == multiclass.values.shape
    assert type(multiclass.data) is np.ndarray
    assert multiclass.data.shape == (n, 4)


def test_indexing_by_feature_name(sampled):
    column = sampled[:, "dose"]
    np.testing.assert_array_equal(column.values, sampled.values[:, 1])
    np.testing.assert_array_equal(column.data, sampled.data[:, 1])
    np.testing.assert_array_equal(column.lower_bounds, sampled.lower_bounds[:, 1])
    row = sampled[0]
    assert row.values.shape == (N_FEATURES,)
    assert float(row.base_values) == sampled.base_values[0]
    assert sampled[2, "score"].values == sampled.values[2, 4]


def test_indexing_multiclass(multiclass):
    by_name = multiclass[:, :, "versicolor"]
    by_index = multiclass[:, :, 1]
    np.testing.assert_array_equal(by_name.values, multiclass.values[:, :, 1])
    np.testing.assert_array_equal(by_index.values, by_name.values)
    np.testing.assert_array_equal(by_name.base_values, multiclass.base_values[:, 1])
    cell = multiclass[:, "petal length (cm)", 2]
    np.testing.assert_array_equal(cell.values, multiclass.values[:, 2, 2])


# --------------------------------------------------------------------------------------------
# single-output plots
# --------------------------------------------------------------------------------------------


def _plot(kind, exp):
    name = _top_feature(exp)
    if kind == "bar":
        shap.plots.bar(exp, show=False)
    elif kind == "bar_row":
        shap.plots.bar(exp[0], show=False)
    elif kind == "beeswarm":
        shap.plots.beeswarm(exp, show=False)
    elif kind == "waterfall":
        shap.plots.waterfall(exp[0], show=False)
    elif kind == "scatter":
        shap.plots.scatter(exp[:, name], show=False)
    elif kind == "heatmap":
        shap.plots.heatmap(exp, show=False)
    elif kind == "force":
        shap.plots.force(exp[0], matplotlib=True, show=False)
    else:
        raise AssertionError(kind)
    return name


PLOTS = ["bar", "bar_row", "beeswarm", "waterfall", "scatter", "heatmap", "force"]


@pytest.mark.parametrize("kind", PLOTS)
@pytest.mark.parametrize("source", ["sampled", "exact_from_array"])
def test_single_output_plots(kind, source, request):
    exp = request.getfixturevalue(source)
    name = _plot(kind, exp)
    assert plt.get_fignums(), "no figure was drawn"
    # the most important feature is named somewhere on the figure
    assert name in _texts(plt.gcf())


def test_waterfall_draws_error_bars_of_sampled_values(sampled):
    shap.plots.waterfall(sampled[0], show=False)
    # one error bar per displayed feature (d <= max_display)
    assert _n_errorbars(plt.gcf()) == N_FEATURES


def test_waterfall_without_bounds_draws_no_error_bars(sampled):
    row = sampled[0]
    bare = shap.Explanation(row.values, row.base_values, row.data, feature_names=row.feature_names)
    shap.plots.waterfall(bare, show=False)
    assert _n_errorbars(plt.gcf()) == 0


def test_waterfall_with_single_sampling_unit(regression_data, forest):
    # one antithetic pair: standard errors (and bounds) are NaN; the plot still draws
    df, _ = regression_data
    explainer = PermutationShapExplainer(
        forest, algorithm="antithetic", max_evals=2 * N_FEATURES, background_size=25, random_state=0
    ).fit(df)
    exp = explainer.explain(df.iloc[:2])
    assert np.isnan(exp.lower_bounds).all()
    shap.plots.waterfall(exp[0], show=False)
    assert _top_feature(exp[:1]) in _texts(plt.gcf())


def test_waterfall_with_mc_sampler(regression_data, forest):
    df, _ = regression_data
    explainer = PermutationShapExplainer(forest, algorithm="mc", max_evals=30, background_size=25, random_state=1)
    exp = explainer.fit(df).explain(df.iloc[:3])
    assert np.all(exp.upper_bounds > exp.lower_bounds)
    shap.plots.waterfall(exp[1], show=False)
    assert _n_errorbars(plt.gcf()) == N_FEATURES


# --------------------------------------------------------------------------------------------
# multiclass: slice one output, then plot
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", PLOTS)
@pytest.mark.parametrize("output", [0, 2, "virginica"])
def test_multiclass_sliced_plots(multiclass, kind, output):
    sliced = multiclass[:, :, output]
    assert sliced.values.ndim == 2
    assert sliced.base_values.shape == (multiclass.values.shape[0],)
    name = _plot(kind, sliced)
    assert plt.get_fignums()
    assert name in _texts(plt.gcf())


def test_multiclass_waterfall_of_one_cell(multiclass):
    shap.plots.waterfall(multiclass[0, :, "setosa"], show=False)
    assert plt.get_fignums()
    assert "petal length (cm)" in _texts(plt.gcf())
