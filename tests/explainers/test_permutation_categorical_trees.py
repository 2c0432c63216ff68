"""Histogram gradient boosting with categorical features: its own encoding and categorical splits, read exactly."""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.backends import tree_predict
from sklearn_shapq.explainers._tree_models import extract_trees
from tests.brute_force import brute_force_shapley, interventional_frame_value
from tests.exact_path_checks import (
    assert_auto_takes_the_enumerated_values,
    assert_groups_and_faith_pairs_are_enumerated,
)


@pytest.fixture(scope="module")
def coded():
    """Five numeric columns, 0 and 3 category codes (3 with NaN); rows with a code never seen in fit."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 5))
    X[:, 0] = rng.integers(0, 6, 400)
    X[:, 3] = rng.choice([2.0, 5.0, 7.0, 11.0], 400)
    X[rng.random(400) < 0.1, 3] = np.nan
    y = np.where(np.isin(X[:, 0], [1, 4]), 2.0, -1.0) + X[:, 1] * (X[:, 3] == 5.0) + np.sin(X[:, 2]) + X[:, 4]
    rows = X[300:304].copy()
    rows[0, 0], rows[1, 3] = 9.0, 3.0  # unknown categories: the way of NaN
    return X, y, rows


def _classifier(X, y):
    return HistGradientBoostingClassifier(max_iter=25, categorical_features=[0, 3], random_state=0).fit(X, y > 0.5)


def test_the_trees_give_the_model_s_raw_scores_on_known_unknown_and_missing_codes(coded):
    X, y, rows = coded
    model = HistGradientBoostingRegressor(max_iter=25, categorical_features=[0, 3], random_state=0).fit(X, y)
    trees = extract_trees(model, 1, "predict")
    assert (trees.category_of_node >= 0).any()
    inputs = model._preprocessor.transform(np.vstack([X, rows]))
    expected = model.predict(np.vstack([X, rows])) - model._baseline_prediction[0]
    np.testing.assert_allclose(tree_predict(trees, inputs)[:, 0], expected, rtol=1e-12, atol=1e-12)
    # codes the encoding never gives (it maps unknown categories to NaN): the model's own predictors on them
    codes = inputs[:40].copy()
    codes[:10, :2] = [[6.0, 4.0], [-1.0, -3.0], [255.0, 300.0], [5.5, 3.5], [0.0, 4.0]] * 2
    known, bitset_of_column = model._bin_mapper.make_known_categories_bitsets()
    own = sum(tree[0].predict(codes, known, bitset_of_column, 1) for tree in model._predictors)
    np.testing.assert_allclose(tree_predict(trees, codes)[:, 0], own, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("output", ["predict", "probability"])
def test_auto_takes_the_tree_path_of_categorical_splits(coded, output):
    X, y, rows = coded
    if output == "predict":  # the trees' sum: the leaf tables
        model = HistGradientBoostingRegressor(max_iter=25, categorical_features=[0, 3], random_state=0).fit(X, y)
        predict = model.predict
    else:  # through the sigmoid: the coalitions enumerated
        model = _classifier(X, y)

        def predict(data):
            return model.predict_proba(data)[:, 1]

    assert_auto_takes_the_enumerated_values(model, output, predict, rows, X[:12], "tree")


def test_groups_and_exact_pairs_with_categorical_splits(coded):
    X, y, _ = coded
    model = _classifier(X, y)
    assert_groups_and_faith_pairs_are_enumerated(
        model, "probability", X, lambda data: model.predict_proba(data)[:, 1], np.arange(100, 110), "tree"
    )


@pytest.fixture(scope="module")
def frame():
    """A raw table: category columns by dtype (one missing in places), a string column, floats."""
    rng = np.random.default_rng(2)
    n = 300
    table = pd.DataFrame(
        {
            "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n), ["red", "green", "blue", "pink"]),
            "size": rng.normal(size=n),
            "city": rng.choice(["Lyon", "Oslo", "Lima", "Kobe"], n),
            "shape": pd.Categorical(rng.choice(["square", "circle", None], n)),
            "weight": rng.normal(size=n),
        }
    )
    target = 2.0 * (table.colour == "red") + table["size"] * (table["shape"] == "square") + (table.city == "Oslo")
    return table, target + table.weight


def _frame_values(predict, background, rows):
    return np.array(
        [
            brute_force_shapley(
                lambda coalition, i=i: interventional_frame_value(predict, rows.iloc[[i]], background, coalition),
                background.shape[1],
            )
            for i in range(len(rows))
        ]
    )


def test_categories_by_dtype_on_a_raw_table(frame):
    table, target = frame
    data = table.drop(columns="city")
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(data, target > 1.0)
    background = data.iloc[:10]
    rows = data.iloc[40:43].copy()
    rows.loc[rows.index[0], "colour"] = "pink"  # a category of the dtype never seen in fit: the way of NaN
    explainer = PermutationShapExplainer(model, output="probability", background_size=None, progress=False)
    assert explainer.fit(background).algorithm_ == "tree"
    expected = _frame_values(lambda rows_: model.predict_proba(rows_)[:, 1], background, rows)
    np.testing.assert_allclose(explainer.explain(rows).values, expected, rtol=1e-9, atol=1e-12)


def test_a_pipeline_that_encodes_strings_for_the_model_s_categorical_features(frame):
    table, target = frame
    encode = ColumnTransformer([("codes", OrdinalEncoder(), ["city"])], remainder="passthrough")
    model = make_pipeline(encode, HistGradientBoostingRegressor(max_iter=20, categorical_features=[0], random_state=0))
    data = table[["size", "city", "weight"]]
    model.fit(data, target)
    background, rows = data.iloc[:10], data.iloc[50:53]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "tree"
    np.testing.assert_allclose(
        explainer.explain(rows).values, _frame_values(model.predict, background, rows), rtol=1e-9, atol=1e-12
    )


def test_a_refit_on_other_categories_is_refused_at_explain(frame):
    table, target = frame
    data = table.drop(columns="city")
    model = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(data, target)
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(data.iloc[:10])
    assert explainer.algorithm_ == "tree"
    model.fit(data, -target)
    with pytest.raises(ValueError, match="refitted"):
        explainer.explain(data.iloc[20:22])
