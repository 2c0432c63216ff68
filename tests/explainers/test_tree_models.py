"""Reading tree models: the trees' sum is the model's output up to a constant; what is not read is refused."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
)
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeClassifier

from sklearn_shapq.backends import TreeArrays, tree_predict
from sklearn_shapq.explainers._tree_models import extract_trees

xgboost = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4))
    X[:, 3] = np.round(X[:, 3] * 2) / 2  # values on the thresholds
    return X, X[:, 0] - X[:, 1] * X[:, 2] + X[:, 3]


@pytest.mark.parametrize(
    ("make", "output", "predict"),
    [
        (lambda: ExtraTreesRegressor(8, random_state=0), "predict", lambda m, X: m.predict(X)),
        (lambda: GradientBoostingRegressor(n_estimators=15, random_state=0), "predict", lambda m, X: m.predict(X)),
        (
            lambda: HistGradientBoostingRegressor(max_iter=15, loss="absolute_error"),
            "predict",
            lambda m, X: m.predict(X),
        ),
        (lambda: xgboost.XGBRegressor(n_estimators=10, max_depth=3), "predict", lambda m, X: m.predict(X)),
    ],
)
def test_the_trees_sum_to_the_output_up_to_a_constant(data, make, output, predict):
    X, y = data
    model = make().fit(X, y)
    trees = extract_trees(model, 1, output)
    difference = predict(model, X) - tree_predict(trees, X)[:, 0]
    assert np.ptp(difference) < (1e-5 if trees.float32_sums else 1e-12)


def test_dart_trees_are_weighed_by_their_dropout_weights(data):
    X, y = data
    with warnings.catch_warnings():  # xgboost 3.4 deprecates booster="dart" for gbtree's dropout parameters
        warnings.simplefilter("ignore", UserWarning)
        model = xgboost.XGBRegressor(n_estimators=20, max_depth=3, booster="dart", rate_drop=0.5, random_state=0)
        model.fit(X, y)
    trees = extract_trees(model, 1, "predict")
    difference = model.predict(X) - tree_predict(trees, X)[:, 0]
    assert np.ptp(difference) < 1e-5
    boosting = json.loads(model.get_booster().save_raw(raw_format="json"))["learner"]["gradient_booster"]
    weights = boosting.get("weight_drop") or boosting["model"]["weight_drop"]  # xgboost before 3.4, from 3.4
    assert np.ptp(weights) > 0.1  # unweighted trees would not sum to the output


def test_a_booster_alone_is_read(data):
    X, y = data
    booster = xgboost.XGBRegressor(n_estimators=5, max_depth=3).fit(X, y).get_booster()
    trees = extract_trees(booster, 1, "predict")
    difference = booster.inplace_predict(X) - tree_predict(trees, X)[:, 0]
    assert np.ptp(difference) < 1e-5


@pytest.mark.parametrize(
    ("make", "labels", "n_outputs", "output", "error", "match"),
    [
        (lambda: LinearRegression(), "y", 1, "predict", TypeError, "not a tree model"),
        (
            lambda: xgboost.XGBRegressor(n_estimators=3, objective="reg:logistic"),
            "fraction",
            1,
            "predict",
            ValueError,
            "neither a sum",
        ),
        (lambda: HistGradientBoostingClassifier(max_iter=3), "binary", 1, "predict", ValueError, "neither a sum"),
        (lambda: RandomForestClassifier(3, random_state=0), "three", 2, "probability", ValueError, "3 outputs"),
        (lambda: DecisionTreeClassifier(random_state=0), "two_columns", 2, "probability", ValueError, "multi-output"),
    ],
)
def test_what_is_not_read_is_refused(data, make, labels, n_outputs, output, error, match):
    X, y = data
    target = {
        "y": y,
        "fraction": 1 / (1 + np.exp(-y)),
        "binary": y > 0,
        "three": np.digitize(y, [-0.5, 0.5]),
        "two_columns": np.column_stack([y > 0, y > 1]),
    }[labels]
    with pytest.raises(error, match=match):
        extract_trees(make().fit(X, target), n_outputs, output)


def test_xgboost_categorical_splits_are_refused(data):
    xgboost = pytest.importorskip("xgboost")
    X, y = data
    frame = pd.DataFrame(X).assign(code=pd.Categorical(np.abs(np.round(X[:, 3] * 2)).astype(int)))
    model = xgboost.XGBRegressor(n_estimators=5, enable_categorical=True, tree_method="hist")
    model.fit(frame, y + frame.code.cat.codes % 2)
    with pytest.raises(ValueError, match="categorical splits"):
        extract_trees(model, 1, "predict")


def test_histogram_boosting_categorical_splits_are_read(data):
    X, y = data
    codes = X.copy()
    codes[:, 3] = np.abs(np.round(X[:, 3] * 2))
    model = HistGradientBoostingRegressor(max_iter=5, categorical_features=[3]).fit(codes, y + codes[:, 3] % 2)
    trees = extract_trees(model, 1, "predict")
    assert (trees.category_of_node >= 0).any()
    sums = tree_predict(trees, model._preprocessor.transform(codes))[:, 0] + model._baseline_prediction[0]
    np.testing.assert_allclose(sums, model.predict(codes), rtol=1e-12, atol=1e-12)


def test_ties_go_left_with_less_or_equal_and_right_with_less_than():
    stump = dict(
        feature=np.array([0, -1, -1]),
        threshold=np.array([0.5, 0.0, 0.0]),
        left=np.array([1, -1, -1]),
        right=np.array([2, -1, -1]),
        missing_left=np.array([False, False, False]),
        value=np.array([[0.0], [1.0], [2.0]]),
        roots=np.array([0]),
        float32_inputs=False,
        float32_sums=False,
        max_depth=1,
    )
    rows = np.array([[0.5], [np.nan], [0.4]])
    assert tree_predict(TreeArrays(strict=False, **stump), rows)[:, 0].tolist() == [1.0, 2.0, 1.0]
    assert tree_predict(TreeArrays(strict=True, **stump), rows)[:, 0].tolist() == [2.0, 2.0, 1.0]


def test_a_gradient_boosting_with_another_init_is_refused(data):
    from sklearn.linear_model import Ridge

    X, y = data
    model = GradientBoostingRegressor(n_estimators=5, init=Ridge()).fit(X, y)
    with pytest.raises(ValueError, match="init=Ridge"):
        extract_trees(model, 1, "predict")


def test_xgboost_with_another_missing_value_is_refused(data):
    X, y = data
    model = xgboost.XGBRegressor(n_estimators=5, missing=0.0).fit(X, y)
    with pytest.raises(ValueError, match="missing=0.0"):
        extract_trees(model, 1, "predict")


def test_xgboost_with_several_targets_gives_one_output_per_target(data):
    X, y = data
    model = xgboost.XGBRegressor(n_estimators=5, multi_strategy="one_output_per_tree").fit(X, np.c_[y, -2 * y])
    trees = extract_trees(model, 2, "predict")
    difference = model.predict(X) - tree_predict(trees, X)
    assert np.ptp(difference, axis=0).max() < 1e-5


def test_lightgbm_splits_it_reads_otherwise_are_refused_or_moved(data):
    lightgbm = pytest.importorskip("lightgbm")
    X, y = data
    early = lightgbm.LGBMClassifier(n_estimators=5, verbose=-1, pred_early_stop=True).fit(X, y > 0)
    with pytest.raises(ValueError, match="pred_early_stop"):  # predict sums only some trees, row by row
        extract_trees(early, 1, "margin")
    huge = np.c_[np.random.default_rng(0).choice([0.0, 3e301, 5e301], size=len(X)), X[:, 1]]
    clamped = lightgbm.LGBMRegressor(n_estimators=5, verbose=-1).fit(huge, X[:, 1] + (huge[:, 0] > 4e301))
    with pytest.raises(ValueError, match="1e300"):  # dump_model writes a threshold of 4e301 as 1e300
        extract_trees(clamped, 1, "predict")
    zero = float(np.float32(1e-35))  # LightGBM reads |x| <= this as 0, so -zero goes where 0 goes
    three = np.c_[np.random.default_rng(4).choice([-1.0, 0.0, 1.0], size=len(X)), X[:, 1]]
    model = lightgbm.LGBMRegressor(n_estimators=20, verbose=-1, min_gain_to_split=1e-3)
    model.fit(three, three[:, 1] + (three[:, 1] > 0) * (three[:, 0] >= 0) * 2.0)  # a split at -zero
    rows = np.array([[-zero, 1.0], [np.nextafter(-zero, -1.0), 1.0], [0.0, 1.0], [-1.0, 1.0]])
    trees = extract_trees(model, 1, "predict")
    difference = model.predict(rows) - tree_predict(trees, rows)[:, 0]
    assert np.ptp(difference) < 1e-9
