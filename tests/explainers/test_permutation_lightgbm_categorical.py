"""LightGBM's categorical splits (``categorical_feature=``): each sends the categories it lists left, read exactly."""

import numpy as np
import pytest

from sklearn_shapq.backends import tree_predict
from sklearn_shapq.explainers._tree_models import extract_trees
from tests.exact_path_checks import assert_auto_takes_the_enumerated_values

lightgbm = pytest.importorskip("lightgbm")

ODD_VALUES = np.array([-0.5, -0.99, -1.0, -3.0, 2.7, 0.3, 1e10, -1e10, np.inf, -np.inf, np.nan])
"""Values LightGBM reads by their integer part (−0.5 as 0), or sends right (NaN, −1 or less, unlisted)."""


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    n = 3000
    X = np.column_stack(
        [
            rng.integers(0, 30, n).astype(float),  # many categories: sets of them split
            rng.normal(size=n),
            rng.integers(0, 4, n).astype(float),  # few categories: one-vs-rest splits
            rng.normal(size=n),
            rng.integers(0, 300, n).astype(float),  # more categories than a histogram model's 256 codes
        ]
    )
    X[::13, 0] = np.nan
    score = 2.0 * np.isin(X[:, 0], [1, 3, 5, 7, 20]) + X[:, 1] * (X[:, 2] == 2) + X[:, 3] + (X[:, 4] % 7 == 0)
    return X, score + rng.normal(scale=0.1, size=n)


def _with_odd_values(rows, columns):
    """``rows`` with the odd values in turn, one a row, in ``columns`` in turn."""
    rows = rows.copy()
    for k, value in enumerate(ODD_VALUES[: len(rows)]):
        rows[k, columns[k % len(columns)]] = value
    return rows


@pytest.mark.parametrize("kind", ["regressor", "classifier", "multiclass"])
def test_the_trees_sum_is_the_models_raw_score_on_any_value(data, kind):
    X, y = data
    target = {"regressor": y, "classifier": y > np.median(y), "multiclass": np.digitize(y, np.quantile(y, [0.3, 0.7]))}
    estimator = lightgbm.LGBMRegressor if kind == "regressor" else lightgbm.LGBMClassifier
    model = estimator(n_estimators=20, min_child_samples=5, verbose=-1).fit(
        X, target[kind], categorical_feature=[0, 2, 4]
    )
    n_outputs = 3 if kind == "multiclass" else 1
    trees = extract_trees(model, n_outputs, "predict" if kind == "regressor" else "margin")
    assert trees.category_left.shape[0] > 0
    rows = _with_odd_values(X[:60], [0, 2, 4])
    sums = tree_predict(trees, rows)
    raw = model.predict(rows, raw_score=True).reshape(sums.shape)
    difference = raw - sums
    np.testing.assert_allclose(difference, np.broadcast_to(difference[-1], difference.shape), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("kind", "output"), [("regressor", "predict"), ("classifier", "probability")])
def test_auto_takes_the_tree_path(data, kind, output):
    X, y = data
    estimator = lightgbm.LGBMRegressor if kind == "regressor" else lightgbm.LGBMClassifier
    target = y if kind == "regressor" else y > np.median(y)
    model = estimator(n_estimators=30, min_child_samples=5, verbose=-1).fit(X, target, categorical_feature=[0, 2, 4])

    def predict(rows):
        return model.predict(rows) if kind == "regressor" else model.predict_proba(rows)[:, 1]

    background = _with_odd_values(X[100:112], [0, 2])
    background[~np.isfinite(background) & ~np.isnan(background)] = 5.0  # the explainer refuses infinite values
    rows = np.vstack([_with_odd_values(X[:3], [4, 2, 0]), [[2.7, 0.1, -0.5, 0.2, 250.0]]])
    assert_auto_takes_the_enumerated_values(model, output, predict, rows, background, "tree")


def test_splits_that_it_cannot_read_are_refused(data, monkeypatch):
    from sklearn_shapq.explainers import _tree_models

    X, y = data
    model = lightgbm.LGBMRegressor(n_estimators=5, min_child_samples=5, verbose=-1).fit(X, y, categorical_feature=[0])
    monkeypatch.setattr(_tree_models, "LIGHTGBM_MAX_CATEGORY", 2)  # it splits {1, 3, 5, 7, 20} from the rest
    with pytest.raises(ValueError, match="categories outside 0-1"):
        extract_trees(model, 1, "predict")
