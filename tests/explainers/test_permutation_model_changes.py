"""A model changed after fit is refused before any value is computed, never explained against a stale base value."""

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import AdaBoostClassifier
from sklearn.linear_model import Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.explainers import _permutation


@pytest.fixture
def diabetes():
    return load_diabetes(return_X_y=True)


def test_a_model_refitted_in_place_is_refused(diabetes):
    X, y = diabetes
    model = KNeighborsRegressor(metric="cosine").fit(X, y)  # sampled: no exact path reads it
    explainer = PermutationShapExplainer(model, background_size=30, random_state=0, progress=False).fit(X)
    before = explainer.explain(X[:3])
    model.fit(X, -y)  # the same object: the base value's sign flips, caught before any value
    with pytest.raises(ValueError, match="outputs on the background differ from those at fit"):
        explainer.explain(X[:3])
    explainer.fit(X)
    after = explainer.explain(X[:3])
    np.testing.assert_allclose(after.values, -before.values, atol=1e-8)
    np.testing.assert_allclose(after.values.sum(1) + after.base_values, model.predict(X[:3]), atol=1e-8)


def test_a_model_refitted_on_other_features_is_refused_naming_the_count(diabetes):
    X, y = diabetes
    model = KNeighborsRegressor(metric="cosine").fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=30, progress=False).fit(X)
    model.fit(X[:, :5], y)
    with pytest.raises(ValueError, match="now takes 5 features, but 10"):
        explainer.explain(X[:3])


def test_a_model_with_another_number_of_outputs_is_refused(diabetes):
    X, _ = diabetes
    outputs = {"k": 1}
    explainer = PermutationShapExplainer(
        lambda Z: np.repeat(Z[:, :1], outputs["k"], axis=1), background_size=30, progress=False
    ).fit(X)
    outputs["k"] = 3  # it was a broadcast error deep in the exact estimator
    with pytest.raises(ValueError, match="now gives 3 outputs, but 1"):
        explainer.explain(X[:3])


def test_the_check_rides_on_the_first_model_call(diabetes):
    X, y = diabetes
    model = Ridge().fit(X, y)
    calls = []

    def f(Z):
        calls.append(len(Z))
        return model.predict(Z)

    explainer = PermutationShapExplainer(f, background_size=30, max_evals=200, progress=False).fit(X)
    calls.clear()
    explanation = explainer.explain(X[:2])
    # the background and v(N) of the first block's rows (one or both, by the estimator's memory), in one of
    # the first two calls: the overlapped blocks may call v(N) of the next block first (order by threads)
    assert sum(c in (30 + 1, 30 + 2) for c in calls) == 1 and any(c in (30 + 1, 30 + 2) for c in calls[:2])
    assert sum(calls) == explanation.diagnostics["n_model_rows"]
    assert len(calls) == explanation.diagnostics["n_model_calls"]


def test_predicting_string_labels_is_refused_with_the_outputs_that_work():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    X[0, 0] = np.nan  # it was a false "failed on rows with missing values"
    model = DecisionTreeClassifier(random_state=0).fit(X, np.where(X[:, 1] > 0, "yes", "no"))
    with pytest.raises(ValueError, match=r"labels are not numbers \(\['no', 'yes'\]\).*'probability'"):
        PermutationShapExplainer(model, output="predict").fit(X)


def test_the_progress_bar_moves_within_one_row(diabetes, monkeypatch):
    """A one-row explain with a large budget advances the bar with every model call, over model rows."""
    X, y = diabetes
    model = KNeighborsRegressor(metric="cosine").fit(X, y)
    bars = []

    class Recorder:
        def __init__(self, enabled, total, desc, unit):
            self.total, self.steps = total, []
            bars.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n):
            self.steps.append(n)

    monkeypatch.setattr(_permutation, "progress_bar", Recorder)
    explainer = PermutationShapExplainer(model, background_size=20, max_evals=2000, batch_size=500).fit(X)
    explanation = explainer.explain(X[:1])
    (bar,) = bars
    assert explanation.diagnostics["algorithm"] == "exact"
    assert bar.total == (2**10 + 1) * 20 and len(bar.steps) >= 20  # exact: 2^10 coalitions, not the budget's 2000
    assert sum(bar.steps) == explanation.diagnostics["n_model_rows"] <= bar.total


def test_an_exact_path_refuses_a_refit_that_keeps_the_explained_rows_outputs():
    """A refit that changes the model only where the background reaches it: its state (hashed) is checked."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    model = DecisionTreeRegressor(max_depth=1).fit(X, 2.0 * (X[:, 0] > 1))
    background, rows = X[:20], X[X[:, 0] < 0][:2]
    assert (background[:, 0] > 1).any()
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "tree"
    model.fit(X, 3.0 * (X[:, 0] > 1))  # the explained rows' outputs stay 0
    with pytest.raises(ValueError, match="refitted or changed in place"):
        explainer.explain(rows)
    with pytest.raises(ValueError, match="refitted or changed in place"):
        explainer.explain_interactions(rows)


def test_an_exact_path_refuses_a_refit_that_keeps_every_checked_output():
    """Perfect fits before and after: the background's and the rows' outputs agree, the hybrid rows' do not."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    model = AdaBoostClassifier(DecisionTreeClassifier(max_features=1, random_state=0), n_estimators=5).fit(X, y)
    background, rows = X[:10], X[20:22]
    explainer = PermutationShapExplainer(model, output="margin", background_size=None, progress=False)
    assert explainer.fit(background).algorithm_ == "tree"
    before = model.decision_function(np.vstack([background, rows]))
    model.set_params(estimator__random_state=1).fit(X, y)
    np.testing.assert_array_equal(model.decision_function(np.vstack([background, rows])), before)
    with pytest.raises(ValueError, match="state differs .* refitted or changed in place"):
        explainer.explain(rows)


def test_the_fingerprint_ignores_a_search_tree_s_counters_and_sees_a_refit():
    X = np.random.default_rng(1).normal(size=(300, 3))
    model = KNeighborsRegressor(algorithm="kd_tree").fit(X, X[:, 0])
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(X[:8])
    assert explainer.algorithm_ == "neighbors"
    model.predict(X[:50])  # the k-d tree counts its queries
    explainer.explain(X[10:12])
    model.fit(X, X[:, 1])
    with pytest.raises(ValueError, match="refitted or changed in place"):
        explainer.explain(X[10:12])
