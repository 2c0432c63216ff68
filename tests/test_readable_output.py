"""What a user reads: features by name in top-k results, and plot colours that follow the levels' order."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression

from sklearn_shapq import PermutationShapExplainer, TopKShapley


@pytest.fixture(scope="module")
def diabetes():
    return load_diabetes(return_X_y=True, as_frame=True)


def test_top_k_players_are_named_in_fit_and_explain(diabetes):
    X, y = diabetes
    selector = TopKShapley(
        LinearRegression(), n_features_to_select=3, cv=3, max_evals=200, t_min=5, random_state=0, progress=False
    ).fit(X, y)
    assert selector.top_k_names_.tolist() == X.columns[selector.top_k_].tolist()
    explanation = selector.explain(X.iloc[:4])
    top_k, names = explanation.diagnostics["top_k"], explanation.diagnostics["top_k_names"]
    assert names.shape == top_k.shape == (4, 3)
    assert (names == X.columns.to_numpy()[top_k]).all()


def test_grouped_top_k_names_are_the_groups(diabetes):
    X, y = diabetes
    groups = {"blood": ["s1", "s2", "s3", "s4", "s5", "s6"]}
    selector = TopKShapley(
        LinearRegression(), n_features_to_select=2, feature_groups=groups, cv=3, max_evals=100, t_min=5, random_state=0
    ).set_params(progress=False)
    names = selector.fit(X, y).top_k_names_.tolist()
    assert set(names) <= {"blood", "age", "sex", "bmi", "bp"} and "blood" in names


def test_unordered_levels_are_grey_and_categories_follow_their_order():
    rng = np.random.default_rng(0)
    n = 60
    frame = pd.DataFrame(
        {
            "city": rng.choice(["Oslo", "Bergen", "Tromsø"], n),  # strings: no order
            "size": pd.Categorical(rng.choice(["S", "M", "L"], n), categories=["S", "M", "L"], ordered=True),
            "x": rng.normal(size=n),
        }
    )
    rank = {"S": 0.0, "M": 1.0, "L": 2.0}

    def model(table):
        return np.asarray(table["x"]) + np.asarray(table["size"].map(rank), dtype=float)

    explanation = PermutationShapExplainer(model, max_evals=20, random_state=0, progress=False).fit(frame)
    explanation = explanation.explain(frame.iloc[:10])
    # strings stay strings (shap greys them), never codes in order of first appearance
    assert explanation.data.dtype == object and explanation.data[:, 0].tolist() == frame.city.iloc[:10].tolist()
    assert explanation.display_data[:, 0].tolist() == frame.city.iloc[:10].tolist()
    assert explanation.data[:, 1].tolist() == frame["size"].iloc[:10].cat.codes.astype(float).tolist()  # S < M < L
    assert explanation.data[:, 2].tolist() == frame.x.iloc[:10].tolist()


@pytest.mark.filterwarnings("error")
def test_shap_plots_grey_string_columns_and_place_levels_in_order():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import shap

    size = pd.Categorical(["S", "M", "L", "M"] * 5, categories=["S", "M", "L"], ordered=True)
    frame = pd.DataFrame({"city": ["Oslo", "Bergen", "Tromsø", "Oslo"] * 5, "size": size, "x": np.arange(20.0)})

    def model(table):
        return np.asarray(table["x"]) + (table["city"] == "Oslo") + np.asarray(table["size"].cat.codes, dtype=float)

    explainer = PermutationShapExplainer(model, progress=False)
    explanation = explainer.set_params(random_state=0).fit(frame).explain(frame)
    ax = shap.plots.beeswarm(explanation, show=False, plot_size=None)
    grey = [
        c for c in ax.collections if len(c.get_offsets()) and np.allclose(c.get_facecolor()[:, :3], 0.4667, atol=0.01)
    ]
    assert sum(len(c.get_offsets()) for c in grey) == 20  # the city column's points, drawn in shap's grey
    plt.close("all")
    ax = shap.plots.scatter(explanation[:, "city"], show=False)
    assert sum(len(c.get_offsets()) for c in ax.collections) == 20
    assert {t.get_text() for t in ax.get_xticklabels()} == {"Oslo", "Bergen", "Tromsø"}
    plt.close("all")
    ax = shap.plots.scatter(explanation[:, "size"], show=False)
    ticks = sorted((t.get_position()[0], t.get_text()) for t in ax.get_xticklabels())
    assert [text for _, text in ticks] == ["S", "M", "L"]  # placed in the categories' order
    plt.close("all")
