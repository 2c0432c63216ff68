"""Model adapters, through PermutationShapExplainer and through ``make_model_function``."""

import warnings

import numpy as np
import pandas as pd
import pytest
import shap
import xgboost as xgb
from sklearn.datasets import load_iris, make_classification, make_friedman1, make_regression
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.backends import resolve_backend
from sklearn_shapq.games import make_model_function

EFFICIENCY_ATOL = 1e-10


def _explain(model, X_background, X_explain, **params):
    params = {"background_size": 20, "random_state": 0, **params}
    explainer = PermutationShapExplainer(model, **params).fit(X_background)
    return explainer, explainer.explain(X_explain)


def _efficiency_gap(explanation, target):
    """Largest |sum_j phi_j + base - target| over rows (and outputs)."""
    return float(np.max(np.abs(explanation.values.sum(axis=1) + explanation.base_values - target)))


def _log_odds(p):
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p) - np.log1p(-p)


@pytest.fixture(scope="module")
def regression():
    X, y = make_regression(n_samples=120, n_features=5, n_informative=5, noise=0.5, random_state=0)
    return X, (y - y.mean()) / y.std()


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(n_samples=150, n_features=6, n_informative=4, n_redundant=1, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def iris():
    data = load_iris(as_frame=True)
    names = np.asarray(data.target_names)
    return data.data, names[data.target.to_numpy()]


@pytest.fixture(scope="module")
def cpu():
    return resolve_backend("cpu")


# --------------------------------------------------------------------------------------------
# scikit-learn regressors
# --------------------------------------------------------------------------------------------


def test_linear_regressor_matches_closed_form(regression):
    X, y = regression
    model = Ridge(alpha=1.0).fit(X, y)
    explainer, exp = _explain(model, X, X[:6], algorithm="exact")
    # interventional Shapley values of a linear model: coef_j (x_j - mean_bg x_j)
    expected = model.coef_ * (X[:6] - explainer.background_.mean(axis=0))
    np.testing.assert_allclose(exp.values, expected, atol=1e-10)
    assert exp.values.shape == (6, 5)
    assert exp.base_values.shape == (6,)
    assert explainer.expected_value_ == pytest.approx(model.predict(explainer.background_).mean(), abs=1e-12)
    assert _efficiency_gap(exp, model.predict(X[:6])) < EFFICIENCY_ATOL
    assert exp.output_names is None


@pytest.mark.parametrize("algorithm", ["exact", "mc", "antithetic"])
def test_random_forest_regressor_efficiency(regression, algorithm):
    X, y = regression
    model = RandomForestRegressor(n_estimators=15, max_depth=4, random_state=0).fit(X, y)
    explainer, exp = _explain(model, X, X[:5], algorithm=algorithm, max_evals=40)
    assert explainer.algorithm_ == algorithm
    assert exp.values.shape == (5, 5)
    # every walk telescopes: efficiency is exact whatever the algorithm
    assert _efficiency_gap(exp, model.predict(X[:5])) < EFFICIENCY_ATOL
    assert np.abs(exp.values).max() > 1e-3


def test_multi_output_regressor(regression):
    X, y = regression
    Y = np.column_stack([y, X[:, 0] * X[:, 1]])
    model = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, Y)
    explainer, exp = _explain(model, X, X[:4], algorithm="exact")
    assert exp.values.shape == (4, 5, 2)
    assert exp.base_values.shape == (4, 2)
    assert explainer.n_outputs_ == 2
    assert np.shape(explainer.expected_value_) == (2,)
    np.testing.assert_allclose(explainer.expected_value_, model.predict(explainer.background_).mean(axis=0))
    assert len(exp.output_names) == 2
    assert _efficiency_gap(exp, model.predict(X[:4])) < EFFICIENCY_ATOL
    # each output is explained exactly as if it were alone
    for j in range(2):
        _, single = _explain(lambda Z, j=j: model.predict(Z)[:, j], X, X[:4], algorithm="exact")
        np.testing.assert_allclose(exp.values[:, :, j], single.values, atol=1e-12)


# --------------------------------------------------------------------------------------------
# scikit-learn classifiers
# --------------------------------------------------------------------------------------------


def test_binary_classifier_with_decision_function(binary):
    X, y = binary
    model = LogisticRegression().fit(X, y)
    explainer, exp = _explain(model, X, X[:6], algorithm="exact")
    assert exp.values.shape == (6, 6)
    assert exp.base_values.shape == (6,)
    assert exp.output_names is None
    assert isinstance(explainer.expected_value_, float)
    assert _efficiency_gap(exp, model.decision_function(X[:6])) < EFFICIENCY_ATOL
    # closed form of a linear margin
    expected = model.coef_[0] * (X[:6] - explainer.background_.mean(axis=0))
    np.testing.assert_allclose(exp.values, expected, atol=1e-10)
    # the log-odds of predict_proba of a logistic regression is its margin
    _, log_odds = _explain(model, X, X[:6], algorithm="exact", output="log_odds")
    np.testing.assert_allclose(log_odds.values, exp.values, atol=1e-8)


def test_binary_classifier_probability_output(binary):
    X, y = binary
    model = LogisticRegression().fit(X, y)
    _, exp = _explain(model, X, X[:6], algorithm="exact", output="probability")
    assert exp.values.shape == (6, 6)
    assert _efficiency_gap(exp, model.predict_proba(X[:6])[:, 1]) < EFFICIENCY_ATOL


def test_binary_classifier_without_decision_function(binary):
    X, y = binary
    model = RandomForestClassifier(n_estimators=20, min_samples_leaf=3, random_state=0).fit(X, y)
    assert not hasattr(model, "decision_function")
    proba = model.predict_proba(X[:5])[:, 1]

    explainer, exp = _explain(model, X, X[:5], algorithm="exact")
    assert exp.values.shape == (5, 6)
    assert _efficiency_gap(exp, _log_odds(proba)) < 1e-9
    assert explainer.expected_value_ == pytest.approx(
        _log_odds(model.predict_proba(explainer.background_)[:, 1]).mean(), abs=1e-10
    )

    explainer, exp = _explain(model, X, X[:5], algorithm="exact", output="probability")
    assert exp.values.shape == (5, 6)
    assert _efficiency_gap(exp, proba) < EFFICIENCY_ATOL
    assert explainer.expected_value_ == pytest.approx(model.predict_proba(explainer.background_)[:, 1].mean())


def test_multiclass_classifier(iris):
    X, y = iris
    model = LogisticRegression(max_iter=500).fit(X, y)
    X_explain = X.iloc[::30]
    explainer, exp = _explain(model, X, X_explain)
    assert exp.values.shape == (5, 4, 3)
    assert exp.base_values.shape == (5, 3)
    assert exp.output_names == ["setosa", "versicolor", "virginica"]
    assert explainer.output_names_ == ["setosa", "versicolor", "virginica"]
    assert np.shape(explainer.expected_value_) == (3,)
    assert _efficiency_gap(exp, model.decision_function(X_explain)) < EFFICIENCY_ATOL
    # sliced by class name
    np.testing.assert_array_equal(exp[:, :, "virginica"].values, exp.values[:, :, 2])

    _, proba = _explain(model, X, X_explain, output="probability")
    assert proba.values.shape == (5, 4, 3)
    assert _efficiency_gap(proba, model.predict_proba(X_explain)) < EFFICIENCY_ATOL
    # probabilities sum to one, so by linearity the attributions sum to zero over classes
    np.testing.assert_allclose(proba.values.sum(axis=2), 0.0, atol=1e-10)


def test_multiclass_classifier_log_odds(iris):
    X, y = iris
    model = RandomForestClassifier(n_estimators=10, min_samples_leaf=5, random_state=0).fit(X, y)
    _, exp = _explain(model, X, X.iloc[::30])
    assert exp.values.shape == (5, 4, 3)
    assert exp.output_names == ["setosa", "versicolor", "virginica"]
    assert _efficiency_gap(exp, _log_odds(model.predict_proba(X.iloc[::30]))) < 1e-9


def test_pipeline(binary):
    X, y = binary
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    explainer, exp = _explain(pipe, X, X[:6], algorithm="exact")
    assert exp.values.shape == (6, 6)
    assert _efficiency_gap(exp, pipe.decision_function(X[:6])) < EFFICIENCY_ATOL
    scaler, lr = pipe[0], pipe[-1]
    expected = lr.coef_[0] / scaler.scale_ * (X[:6] - explainer.background_.mean(axis=0))
    np.testing.assert_allclose(exp.values, expected, atol=1e-10)


def _frame(X):
    return pd.DataFrame(X, columns=[f"col_{j}" for j in range(X.shape[1])])


@pytest.mark.parametrize("pass_frame", [True, False], ids=["frame", "ndarray"])
@pytest.mark.parametrize("kind", ["forest", "pipeline", "logistic"])
def test_model_fitted_on_dataframe_gets_no_feature_name_warning(binary, kind, pass_frame):
    X, y = binary
    df = _frame(X)
    if kind == "forest":
        model = RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0).fit(df, y)
    elif kind == "pipeline":
        model = make_pipeline(StandardScaler(), LogisticRegression()).fit(df, y)
    else:
        model = LogisticRegression().fit(df, y)
    data = df if pass_frame else X
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explainer = PermutationShapExplainer(model, background_size=20, random_state=0, max_evals=30).fit(data)
        exp = explainer.explain(data[:4])
    assert exp.feature_names == list(df.columns)
    target = model.predict(df[:4]) if kind == "forest" else model.decision_function(df[:4])
    assert _efficiency_gap(exp, target) < EFFICIENCY_ATOL


# --------------------------------------------------------------------------------------------
# plain callables
# --------------------------------------------------------------------------------------------


def test_callable_single_output(regression):
    X, _ = regression
    weights = np.arange(1.0, 6.0)
    seen = []

    def f(Z):
        seen.append((type(Z), Z.dtype, Z.ndim))
        return Z @ weights

    explainer, exp = _explain(f, X, X[:4], algorithm="exact")
    assert exp.values.shape == (4, 5)
    np.testing.assert_allclose(exp.values, weights * (X[:4] - explainer.background_.mean(axis=0)), atol=1e-10)
    assert set(seen) == {(np.ndarray, np.dtype(np.float64), 2)}
    assert explainer.feature_names_ == [f"x{j}" for j in range(5)]


def test_callable_multi_output(regression):
    X, _ = regression

    def f(Z):
        return np.column_stack([Z.sum(axis=1), Z[:, 0] * Z[:, 1], np.sin(Z[:, 2])])

    explainer, exp = _explain(f, X, X[:4], algorithm="antithetic", max_evals=30)
    assert exp.values.shape == (4, 5, 3)
    assert exp.base_values.shape == (4, 3)
    assert explainer.n_outputs_ == 3
    assert len(exp.output_names) == 3
    assert _efficiency_gap(exp, f(X[:4])) < EFFICIENCY_ATOL
    # features 3 and 4 are dummies of the second and third outputs
    np.testing.assert_allclose(exp.values[:, 3:, 1:], 0.0, atol=1e-12)
    # the additive first output is exact even from sampled orderings
    np.testing.assert_allclose(exp.values[:, :, 0], X[:4] - explainer.background_.mean(axis=0), atol=1e-10)


def test_callable_with_bad_output_shape_raises(regression):
    X, _ = regression
    with pytest.raises(ValueError, match="shape"):
        PermutationShapExplainer(lambda Z: np.ones((Z.shape[0], 2, 2)), background_size=10).fit(X)
    with pytest.raises(ValueError, match="shape"):
        PermutationShapExplainer(lambda Z: np.ones(Z.shape[0] + 1), background_size=10).fit(X)


# --------------------------------------------------------------------------------------------
# make_model_function directly
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "output", "resolved"),
    [
        ("ridge", "auto", "predict"),
        ("logistic", "auto", "margin"),
        ("logistic", "probability", "probability"),
        ("forest", "auto", "log_odds"),
        ("forest", "probability", "probability"),
        ("callable", "auto", "callable"),
        ("xgb_regressor", "auto", "predict"),
        ("xgb_classifier", "auto", "margin"),
        ("xgb_classifier", "log_odds", "log_odds"),
    ],
)
def test_make_model_function_resolves_output(binary, cpu, kind, output, resolved):
    X, y = binary
    models = {
        "ridge": lambda: Ridge().fit(X, y),
        "logistic": lambda: LogisticRegression().fit(X, y),
        "forest": lambda: RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y),
        "callable": lambda: lambda Z: Z[:, 0],
        "xgb_regressor": lambda: xgb.XGBRegressor(n_jobs=1, n_estimators=5, max_depth=2).fit(X, y),
        "xgb_classifier": lambda: xgb.XGBClassifier(n_jobs=1, n_estimators=5, max_depth=2).fit(X, y),
    }
    fn = make_model_function(models[kind](), output, cpu)
    assert fn.output == resolved
    assert fn.output_names is None
    out = fn(X[:7])
    assert isinstance(out, np.ndarray)
    assert out.shape == (7, 1)
    assert out.dtype == np.float64


def test_make_model_function_values(binary, iris, cpu):
    X, y = binary
    lr = LogisticRegression().fit(X, y)
    np.testing.assert_allclose(make_model_function(lr, "auto", cpu)(X[:5])[:, 0], lr.decision_function(X[:5]))
    np.testing.assert_allclose(make_model_function(lr, "probability", cpu)(X[:5])[:, 0], lr.predict_proba(X[:5])[:, 1])
    Xi, yi = iris
    multi = LogisticRegression(max_iter=500).fit(Xi, yi)
    fn = make_model_function(multi, "auto", cpu)
    assert fn.output_names == ["setosa", "versicolor", "virginica"]
    np.testing.assert_allclose(fn(Xi.to_numpy()[:5]), multi.decision_function(Xi[:5]))


# --------------------------------------------------------------------------------------------
# xgboost
# --------------------------------------------------------------------------------------------


def test_xgb_regressor(regression):
    X, y = regression
    model = xgb.XGBRegressor(n_jobs=1, n_estimators=20, max_depth=3).fit(X, y)
    explainer, exp = _explain(model, X, X[:5], max_evals=40)
    assert exp.values.shape == (5, 5)
    assert _efficiency_gap(exp, model.predict(X[:5]).astype(np.float64)) < 1e-9
    assert explainer.expected_value_ == pytest.approx(float(model.predict(explainer.background_).mean()), abs=1e-5)


def test_xgb_regressor_on_dataframe(regression):
    X, y = regression
    df = _frame(X)
    model = xgb.XGBRegressor(n_jobs=1, n_estimators=10, max_depth=3).fit(df, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, from_frame = _explain(model, df, df[:4], algorithm="exact")
        _, from_array = _explain(model, X, X[:4], algorithm="exact")
    assert from_frame.feature_names == list(df.columns)
    assert from_array.feature_names == list(df.columns)
    np.testing.assert_allclose(from_frame.values, from_array.values, atol=1e-12)


def test_xgb_binary_classifier_margin(binary):
    X, y = binary
    model = xgb.XGBClassifier(n_jobs=1, n_estimators=20, max_depth=3).fit(X, y)
    explainer, exp = _explain(model, X, X[:5], max_evals=40)
    assert exp.values.shape == (5, 6)
    assert exp.output_names is None
    margin = model.predict(X[:5], output_margin=True).astype(np.float64)
    assert _efficiency_gap(exp, margin) < 1e-9

    _, prob = _explain(model, X, X[:5], max_evals=40, output="probability")
    assert _efficiency_gap(prob, model.predict_proba(X[:5])[:, 1].astype(np.float64)) < 1e-6
    _, log_odds = _explain(model, X, X[:5], max_evals=40, output="log_odds")
    # log-odds are recomputed from float32 probabilities
    assert _efficiency_gap(log_odds, margin) < 1e-4


def test_xgb_multiclass_classifier(iris):
    X, y = iris
    labels = np.unique(y, return_inverse=True)[1]
    model = xgb.XGBClassifier(n_jobs=1, n_estimators=10, max_depth=2).fit(X.to_numpy(), labels)
    X_explain = X.to_numpy()[::30]
    explainer, exp = _explain(model, X.to_numpy(), X_explain)
    assert exp.values.shape == (5, 4, 3)
    assert exp.base_values.shape == (5, 3)
    assert exp.output_names == ["0", "1", "2"]
    assert _efficiency_gap(exp, model.predict(X_explain, output_margin=True).astype(np.float64)) < 1e-9

    _, prob = _explain(model, X.to_numpy(), X_explain, output="probability")
    assert prob.values.shape == (5, 4, 3)
    # we apply the softmax in float64 to xgboost's float32 margins; xgboost's own proba is float32
    assert _efficiency_gap(prob, model.predict_proba(X_explain).astype(np.float64)) < 1e-6


def test_xgb_booster(regression, iris):
    X, y = regression
    booster = xgb.train({"max_depth": 3, "eta": 0.3, "nthread": 1}, xgb.DMatrix(X, label=y), num_boost_round=10)
    explainer, exp = _explain(booster, X, X[:4], algorithm="exact")
    assert exp.values.shape == (4, 5)
    assert _efficiency_gap(exp, booster.predict(xgb.DMatrix(X[:4])).astype(np.float64)) < 1e-9
    assert explainer.feature_names_ == [f"x{j}" for j in range(5)]

    Xi, yi = iris
    labels = np.unique(yi, return_inverse=True)[1]
    params = {"objective": "multi:softprob", "num_class": 3, "max_depth": 2, "nthread": 1}
    multi = xgb.train(params, xgb.DMatrix(Xi.to_numpy(), label=labels), num_boost_round=5)
    _, exp = _explain(multi, Xi.to_numpy(), Xi.to_numpy()[::50])
    assert exp.values.shape == (3, 4, 3)
    margin = multi.predict(xgb.DMatrix(Xi.to_numpy()[::50]), output_margin=True).astype(np.float64)
    assert _efficiency_gap(exp, margin) < 1e-9


def test_xgb_early_stopping_uses_best_iteration(regression):
    X, y = regression
    model = xgb.XGBRegressor(n_jobs=1, n_estimators=60, max_depth=3, learning_rate=0.5, early_stopping_rounds=2)
    model.fit(X[:80], y[:80], eval_set=[(X[80:], y[80:])], verbose=False)
    assert model.best_iteration < 59  # early stopping happened, so all trees != best trees
    _, exp = _explain(model, X, X[:4], max_evals=30)
    assert _efficiency_gap(exp, model.predict(X[:4]).astype(np.float64)) < 1e-9


def test_xgb_softmax_objective_probability(iris):
    X, y = iris
    labels = np.unique(y, return_inverse=True)[1]
    model = xgb.XGBClassifier(n_jobs=1, n_estimators=5, max_depth=2, objective="multi:softmax").fit(
        X.to_numpy(), labels
    )
    X_explain = X.to_numpy()[::50]
    try:
        _, exp = _explain(model, X.to_numpy(), X_explain, output="probability")
    except ValueError:
        return  # refusing the output is acceptable too
    assert exp.values.shape == (3, 4, 3)
    assert _efficiency_gap(exp, model.predict_proba(X_explain).astype(np.float64)) < 1e-6


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_xgb_logitraw_objective_log_odds(binary):
    X, y = binary
    model = xgb.XGBClassifier(n_jobs=1, n_estimators=5, max_depth=2, objective="binary:logitraw").fit(X, y)
    try:
        explainer, exp = _explain(model, X, X[:3], algorithm="exact", output="log_odds")
    except ValueError:
        return  # refusing the output is acceptable too
    assert np.isfinite(explainer.expected_value_)
    assert np.isfinite(exp.values).all()
    assert _efficiency_gap(exp, model.predict(X[:3], output_margin=True).astype(np.float64)) < 1e-4


# --------------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    [Ridge(), LogisticRegression(), RandomForestClassifier(), make_pipeline(StandardScaler(), Ridge())],
    ids=["ridge", "logistic", "forest", "pipeline"],
)
def test_unfitted_sklearn_model_raises_at_fit(regression, model):
    X, _ = regression
    explainer = PermutationShapExplainer(model, background_size=10)
    with pytest.raises(NotFittedError):
        explainer.fit(X)
    assert not hasattr(explainer, "background_")


@pytest.mark.parametrize("model", [xgb.XGBRegressor(), xgb.XGBClassifier()], ids=["regressor", "classifier"])
def test_unfitted_xgboost_model_raises_at_fit(regression, model):
    X, _ = regression
    with pytest.raises(NotFittedError):
        PermutationShapExplainer(model, background_size=10).fit(X)


def test_margin_without_decision_function_raises(binary):
    X, y = binary
    model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="decision_function"):
        PermutationShapExplainer(model, output="margin", background_size=10).fit(X)


def test_probability_output_of_regressor_raises(regression):
    X, y = regression
    with pytest.raises(ValueError, match="predict_proba"):
        PermutationShapExplainer(Ridge().fit(X, y), output="probability", background_size=10).fit(X)
    with pytest.raises(ValueError, match="classification"):
        model = xgb.XGBRegressor(n_jobs=1, n_estimators=3).fit(X, y)
        PermutationShapExplainer(model, output="log_odds", background_size=10).fit(X)
    with pytest.raises(ValueError, match="callable"):
        PermutationShapExplainer(lambda Z: Z[:, 0], output="probability", background_size=10).fit(X)


@pytest.mark.parametrize("output", ["raw", "proba", "", None])
def test_unknown_output_raises(regression, cpu, output):
    X, y = regression
    model = Ridge().fit(X, y)
    with pytest.raises(ValueError, match="output"):
        PermutationShapExplainer(model, output=output, background_size=10).fit(X)
    with pytest.raises(ValueError, match="output"):
        make_model_function(model, output, cpu)


@pytest.mark.parametrize("model", [object(), 3.0, "model", np.ones(3)], ids=["object", "float", "str", "array"])
def test_non_callable_model_raises_type_error(regression, cpu, model):
    X, _ = regression
    with pytest.raises(TypeError):
        PermutationShapExplainer(model, background_size=10).fit(X)
    with pytest.raises(TypeError):
        make_model_function(model, "auto", cpu)


def test_background_columns_in_other_order_than_model(regression):
    X, y = regression
    df = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    model = Ridge(alpha=1e-6).fit(df, 1.0 * df.a + 10.0 * df.b + 100.0 * df.c)
    shuffled = df[["c", "a", "b"]]
    try:
        _, exp = _explain(model, shuffled, shuffled[:4], algorithm="exact")
    except ValueError:
        return  # refusing the mismatch is acceptable too
    assert exp.feature_names == ["c", "a", "b"]
    assert _efficiency_gap(exp, model.predict(df[:4])) < 1e-8
    # "c" carries the weight 100
    assert np.all(np.abs(exp.values[:, 0]) > np.abs(exp.values[:, 1:]).max(axis=1))


def test_explained_frame_columns_checked_against_model_names(regression):
    X, y = regression
    df = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    model = Ridge(alpha=1e-6).fit(df, 1.0 * df.a + 10.0 * df.b + 100.0 * df.c)
    explainer = PermutationShapExplainer(model, algorithm="exact", background_size=20, random_state=0).fit(X[:, :3])
    assert explainer.feature_names_ == ["a", "b", "c"]
    shuffled = df[["c", "a", "b"]][:4]
    # names where fit had none: scikit-learn's warning, then the model's own names decide
    with pytest.warns(UserWarning, match="X has feature names, but PermutationShapExplainer was fitted without"):
        try:
            exp = explainer.explain(shuffled)
        except ValueError:
            return  # refusing the mismatch is acceptable too
    assert _efficiency_gap(exp, model.predict(df[:4])) < 1e-8


# --------------------------------------------------------------------------------------------
# accuracy against shap.TreeExplainer (interventional) on xgboost
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tree_data():
    # Friedman #1 has interactions (sin(pi x0 x1), (x2 - 1/2)^2), so sampled orderings make errors
    X, y = make_friedman1(n_samples=200, n_features=8, noise=0.5, random_state=1)
    y = (y - y.mean()) / y.std()
    return X, y, X[:30], X[100:105]


def _rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


@pytest.mark.parametrize("kind", ["regressor", "classifier"])
def test_xgboost_error_falls_with_budget_against_tree_explainer(tree_data, kind):
    X, y, bg, X_explain = tree_data
    d = X.shape[1]
    if kind == "regressor":
        model = xgb.XGBRegressor(n_jobs=1, n_estimators=30, max_depth=3, random_state=0).fit(X, y)
    else:
        model = xgb.XGBClassifier(n_jobs=1, n_estimators=30, max_depth=3, random_state=0).fit(X, y > np.median(y))
    tree = shap.TreeExplainer(model, data=bg, feature_perturbation="interventional")
    reference = np.asarray(tree.shap_values(X_explain), dtype=np.float64)
    assert reference.shape == (5, d)

    exact = PermutationShapExplainer(model, algorithm="exact", background_size=None).fit(bg)
    exact_values = exact.explain(X_explain).values
    scale = max(1.0, np.abs(reference).max())
    np.testing.assert_allclose(exact_values, reference, atol=1e-5 * scale)
    assert exact.expected_value_ == pytest.approx(float(np.ravel(tree.expected_value)[0]), abs=1e-5 * scale)

    errors = {}
    for budget in (2 * d, 40 * d):
        rmses = []
        for seed in range(3):
            explainer = PermutationShapExplainer(
                model,
                algorithm="antithetic",
                max_evals=budget,
                background_size=None,
                random_state=seed,
                background_parts=1,
            ).fit(bg)
            rmses.append(_rmse(explainer.explain(X_explain).values, reference))
        errors[budget] = np.mean(rmses)
    exact_error = _rmse(exact_values, reference)
    # 1 antithetic pair vs 22 pairs: the error should shrink by about sqrt(22) ~ 4.7
    assert errors[40 * d] < 0.5 * errors[2 * d]
    assert exact_error < 0.01 * errors[40 * d]
    assert errors[2 * d] > 5e-3  # the cheap estimate really is an estimate


def test_xgb_classifier_predict_output_is_refused(regression):
    X, y = regression
    model = xgb.XGBClassifier(n_jobs=1, n_estimators=3).fit(X, (y > np.median(y)).astype(int))
    with pytest.raises(ValueError, match="class labels"):
        PermutationShapExplainer(model, output="predict", background_size=10).fit(X)


def test_ovo_decision_function_gets_generic_output_names():
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC

    X, y = make_classification(n_samples=120, n_features=4, n_informative=4, n_redundant=0, n_classes=4, random_state=0)
    model = SVC(decision_function_shape="ovo").fit(X, y)  # 4 classes -> 6 pairwise columns
    explainer = PermutationShapExplainer(model, algorithm="exact", background_size=10).fit(X)
    assert explainer.n_outputs_ == 6
    assert explainer.output_names_ is None
    assert explainer.explain(X[:2]).output_names == [f"output {j}" for j in range(6)]


def test_a_failure_that_is_not_about_missing_values_is_not_put_on_them(cpu):
    """With NaN in the rows, a model failing for another reason raised a false "failed on rows with missing values"."""

    def broken(rows):
        raise KeyError("no column 'age'")

    def refusing(rows):
        raise ValueError("Input X contains NaN.")

    with pytest.raises(KeyError, match="no column 'age'"):
        make_model_function(broken, "auto", cpu)(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="failed on rows with missing values"):
        make_model_function(refusing, "auto", cpu)(np.array([[np.nan, 1.0]]))


def test_a_lightgbm_classifier_margin_is_its_raw_score(binary, iris):
    lightgbm = pytest.importorskip("lightgbm")
    for X, y in (binary, iris):
        X, y = np.asarray(X, dtype=float), np.asarray(y)
        model = lightgbm.LGBMClassifier(n_estimators=10, verbose=-1).fit(X, y)
        fn = make_model_function(model, "auto", resolve_backend("cpu"))
        assert fn.output == "margin"
        np.testing.assert_array_equal(
            np.asarray(fn(X[:5])).reshape(5, -1), model.predict(X[:5], raw_score=True).reshape(5, -1)
        )
