"""The "auto" of PermutationShapExplainer takes a tree ensemble's exact values (TreeSHAP), checked by enumeration."""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestClassifier, RandomForestRegressor

from sklearn_shapq import PermutationShapExplainer
from tests.brute_force import brute_force_shapley, interventional_value

D = 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, D))
    y = X[:, 0] * X[:, 1] + np.where(X[:, 2] > 0, X[:, 3], -1.0) + 0.1 * rng.normal(size=300)
    return X, y


def _enumerated(f, rows, background, d=D):
    return np.array([brute_force_shapley(lambda s, x=x: interventional_value(f, x, background, s), d) for x in rows])


def test_a_forest_gets_the_enumerated_values_of_its_interventional_game(data):
    X, y = data
    model = RandomForestRegressor(n_estimators=20, max_depth=6, random_state=0).fit(X, y)
    background = X[100:130]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert (explainer.algorithm_, explainer.max_evals_, explainer.background_parts_) == ("tree", 0, 1)
    explanation = explainer.explain(X[:4])
    # shap reads the leaves as float32: 1e-7 relative
    expected = _enumerated(model.predict, X[:4], background)
    np.testing.assert_allclose(explanation.values, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, model.predict(X[:4]), rtol=1e-7)
    np.testing.assert_array_equal(explanation.error_std, 0.0)
    assert explanation.diagnostics["algorithm"] == "tree"
    assert (explanation.diagnostics["n_model_rows"], explanation.diagnostics["n_model_calls"]) == (4, 1)


def test_xgboost_margins_and_a_forest_s_probabilities(data):
    xgboost = pytest.importorskip("xgboost")
    X, y = data
    background = X[100:120]
    booster = xgboost.XGBClassifier(n_estimators=30, max_depth=4, random_state=0).fit(X, y > 0)
    explainer = PermutationShapExplainer(booster, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "tree"  # "auto": the margin
    margin = lambda rows: booster.predict(rows, output_margin=True)  # noqa: E731
    values = explainer.explain(X[:3]).values
    np.testing.assert_allclose(values, _enumerated(margin, X[:3], background), atol=2e-5)  # float32 leaves

    forest = RandomForestClassifier(n_estimators=10, max_depth=5, random_state=0).fit(X, y > 0)
    log_odds = PermutationShapExplainer(forest, background_size=None, progress=False).fit(background)
    assert log_odds.algorithm_ != "tree"  # the log-odds of a forest's probability are no sum over its trees
    probability = PermutationShapExplainer(forest, output="probability", background_size=None, progress=False)
    assert probability.fit(background).algorithm_ == "tree"
    values = probability.explain(X[:3]).values
    expected = _enumerated(lambda rows: forest.predict_proba(rows)[:, 1], X[:3], background)
    np.testing.assert_allclose(values, expected, rtol=1e-6, atol=1e-8)


def test_missing_values_reach_the_trees_as_the_model_takes_them(data):
    xgboost = pytest.importorskip("xgboost")
    X, y = data
    X = X.copy()
    X[::3, 1] = np.nan
    model = xgboost.XGBRegressor(n_estimators=30, max_depth=4, random_state=0).fit(X, y)
    background = X[100:124]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "tree"
    rows = X[:4]  # rows 0 and 3 miss feature 1
    np.testing.assert_allclose(explainer.explain(rows).values, _enumerated(model.predict, rows, background), atol=2e-5)


def test_a_histogram_boosting_model_samples(data):
    """shap's interventional values of HistGradientBoostingRegressor are off by 1e-2: the path refuses it."""
    X, y = data
    model = HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=10, progress=False).fit(X)
    assert explainer.algorithm_ not in ("tree", "product_kernel")
    with pytest.raises(TypeError, match="takes scikit-learn's"):
        PermutationShapExplainer(model, algorithm="tree", background_size=10, progress=False).fit(X)


def test_groups_sample_and_the_explicit_path_refuses_them(data):
    X, y = data
    model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    groups = {"first": [0, 1]}
    grouped = PermutationShapExplainer(model, feature_groups=groups, background_size=10, progress=False).fit(X)
    assert grouped.algorithm_ not in ("tree", "product_kernel")
    forced = PermutationShapExplainer(
        model, algorithm="tree", feature_groups=groups, background_size=10, progress=False
    )
    with pytest.raises(ValueError, match="single features"):
        forced.fit(X)
    with pytest.raises(TypeError, match="takes scikit-learn's"):
        PermutationShapExplainer(lambda rows: rows.sum(1), algorithm="tree", background_size=10).fit(X)


def test_a_row_alone_is_bit_identical_to_the_row_in_a_batch(data):
    X, y = data
    model = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=25, random_state=0, progress=False).fit(X)
    batch = explainer.explain(X[:6]).values
    for row in range(6):
        np.testing.assert_array_equal(explainer.explain(X[row : row + 1]).values[0], batch[row])


def test_sampled_interactions_take_the_exact_values_as_their_rows_sums(data):
    X, y = data
    model = RandomForestRegressor(n_estimators=10, max_depth=5, random_state=0).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=20, random_state=0, progress=False).fit(X)
    interactions = explainer.explain_interactions(X[:3], max_evals=20)  # sampled pairs: 2^5 > 20
    assert not interactions.diagnostics["exact"]
    np.testing.assert_allclose(interactions.values.sum(axis=2), explainer.explain(X[:3]).values, atol=1e-10)


def test_a_model_refitted_in_place_is_refused(data):
    X, y = data
    model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=10, progress=False).fit(X)
    model.fit(X, -y)
    with pytest.raises(ValueError, match="refitted or changed in place"):
        explainer.explain(X[:2])
