"""scikit-learn conventions of PermutationShapExplainer: params, fitted state, input checks."""

import copy
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import check_is_fitted

from sklearn_shapq import PermutationShapExplainer

from fitted_state import assert_same_state

NAMES = ["a", "b", "c", "d", "e"]
PARAMS = [
    "model",
    "algorithm",
    "max_evals",
    "tol",
    "lam",
    "n_candidates",
    "allow_nan",
    "feature_groups",
    "background_parts",
    "background_size",
    "output",
    "device",
    "batch_size",
    "random_state",
    "progress",
    "n_jobs",
    "sampler",
]


@pytest.fixture(scope="module")
def data():
    X, y = make_friedman1(n_samples=100, n_features=5, noise=0.5, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def frame(data):
    X, _ = data
    return pd.DataFrame(X, columns=NAMES)


@pytest.fixture(scope="module")
def forest(data):
    X, y = data
    return RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def ridge(data):
    X, y = data
    return Ridge().fit(X, y)


def _sampled(model, **params):
    params = {"algorithm": "antithetic", "max_evals": 30, "background_size": 20, "random_state": 0, **params}
    return PermutationShapExplainer(model, **params)


# --------------------------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------------------------


def test_get_params_lists_the_init_parameters(forest):
    explainer = PermutationShapExplainer(forest)
    params = explainer.get_params(deep=False)
    assert sorted(params) == sorted(PARAMS)
    assert params["model"] is forest
    assert params["algorithm"] == "auto"
    assert params["max_evals"] == "auto"
    assert params["background_size"] == 100
    assert params["random_state"] is None
    # deep params reach into the model
    assert explainer.get_params(deep=True)["model__n_estimators"] == 10


def test_init_stores_params_unchanged(forest):
    generator = np.random.default_rng(0)
    values = {
        "algorithm": "antithetic",
        "max_evals": 40,
        "background_size": None,
        "output": "predict",
        "device": "cpu",
        "batch_size": 512,
        "random_state": generator,
        "progress": False,
    }
    explainer = PermutationShapExplainer(forest, **values)
    params = explainer.get_params(deep=False)
    assert params["model"] is forest
    for name, value in values.items():
        assert params[name] is value, name


def test_clone_gives_unfitted_copy_with_same_params(forest, data):
    X, _ = data
    explainer = _sampled(forest).fit(X)
    copy = clone(explainer)
    assert type(copy) is PermutationShapExplainer
    assert copy is not explainer
    params, copied = explainer.get_params(deep=False), copy.get_params(deep=False)
    for name in PARAMS:
        if name != "model":
            assert copied[name] == params[name], name
    assert copied["model"].get_params() == forest.get_params()
    assert not hasattr(copy, "background_")
    with pytest.raises(NotFittedError):
        check_is_fitted(copy)


def test_clone_with_frozen_model_explains_the_same(forest, data):
    X, _ = data
    explainer = _sampled(FrozenEstimator(forest))
    a = explainer.fit(X).explain(X[:3]).values
    b = clone(explainer).fit(X).explain(X[:3]).values
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, _sampled(forest).fit(X).explain(X[:3]).values)


def test_clone_of_explainer_with_fitted_model_can_fit(forest, data):
    X, _ = data
    explainer = _sampled(forest)
    a = explainer.fit(X).explain(X[:3]).values
    b = clone(explainer).fit(X).explain(X[:3]).values
    np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------------------------
# fitted state
# --------------------------------------------------------------------------------------------


def test_explaining_before_fit_raises_not_fitted(forest, data):
    X, _ = data
    explainer = _sampled(forest)
    with pytest.raises(NotFittedError):
        explainer.explain(X[:2])
    with pytest.raises(NotFittedError):
        explainer.shap_values(X[:2])
    with pytest.raises(NotFittedError):
        explainer(X[:2])


def test_fitted_attributes_end_with_underscore(forest, frame):
    explainer = _sampled(forest)
    assert set(vars(explainer)) == set(PARAMS)
    assert explainer.fit(frame) is explainer
    public = {k for k in vars(explainer) if k not in PARAMS and not k.startswith("_")}
    expected = {"background_", "n_features_in_", "feature_names_in_", "feature_names_", "n_outputs_"}
    expected |= {"output_names_", "expected_value_"}
    assert expected <= public
    assert all(k.endswith("_") for k in public), public
    assert explainer.algorithm_ == "antithetic" and explainer.max_evals_ == 30
    before = copy.deepcopy(vars(explainer))
    diagnostics = explainer.explain(frame.iloc[:2]).diagnostics
    assert_same_state(before, vars(explainer))  # explain changes nothing; what it measured is returned
    assert diagnostics["algorithm"] == "antithetic"
    np.testing.assert_array_equal(diagnostics["n_evals"], 2 + 2 * 3 * (5 - 1))  # three pairs of 2 (d - 1)
    assert diagnostics["n_model_rows"] > 0
    assert explainer.n_features_in_ == 5


def test_background_subsample(forest, data):
    X, _ = data
    explainer = _sampled(forest, background_size=20).fit(X)
    assert explainer.background_.shape == (20, 5)
    # rows of X, each once
    matches = (explainer.background_[:, None, :] == X[None, :, :]).all(axis=2)
    assert np.all(matches.sum(axis=1) == 1)
    assert len(set(np.argmax(matches, axis=1))) == 20
    # same int seed, same background; another seed, another one
    np.testing.assert_array_equal(_sampled(forest, background_size=20).fit(X).background_, explainer.background_)
    other = _sampled(forest, background_size=20, random_state=1).fit(X).background_
    assert not np.array_equal(other, explainer.background_)
    # None or a size above n keeps every row
    np.testing.assert_array_equal(_sampled(forest, background_size=None).fit(X).background_, X)
    np.testing.assert_array_equal(_sampled(forest, background_size=500).fit(X).background_, X)


def test_expected_value_is_mean_output_on_background(forest, ridge, data):
    X, y = data
    explainer = _sampled(forest).fit(X)
    assert isinstance(explainer.expected_value_, float)
    assert explainer.expected_value_ == pytest.approx(forest.predict(explainer.background_).mean(), abs=1e-12)
    explainer = _sampled(ridge, background_size=None).fit(X)
    assert explainer.expected_value_ == pytest.approx(ridge.predict(X).mean(), abs=1e-12)
    exp = explainer.explain(X[:3])
    np.testing.assert_array_equal(exp.base_values, np.full(3, explainer.expected_value_))

    iris = load_iris()
    classifier = LogisticRegression(max_iter=500).fit(iris.data, iris.target)
    explainer = _sampled(classifier).fit(iris.data)
    assert explainer.expected_value_.shape == (3,)
    np.testing.assert_allclose(
        explainer.expected_value_, classifier.decision_function(explainer.background_).mean(axis=0), atol=1e-12
    )


def test_pickle_round_trip_gives_identical_values(forest, frame):
    explainer = _sampled(forest, random_state=7).fit(frame)
    first = explainer.explain(frame.iloc[:4])
    restored = pickle.loads(pickle.dumps(explainer))
    np.testing.assert_array_equal(restored.background_, explainer.background_)
    assert restored.feature_names_ == NAMES
    second = restored.explain(frame.iloc[:4])
    np.testing.assert_array_equal(second.values, first.values)
    np.testing.assert_array_equal(second.base_values, first.base_values)
    np.testing.assert_array_equal(second.lower_bounds, first.lower_bounds)


def test_int_random_state_is_reproducible_and_none_is_not(forest, data):
    X, _ = data
    explainer = _sampled(forest, random_state=5).fit(X)
    np.testing.assert_array_equal(explainer.explain(X[:4]).values, explainer.explain(X[:4]).values)
    free = _sampled(forest, random_state=None, background_size=None).fit(X)
    assert not np.array_equal(free.explain(X[:4]).values, free.explain(X[:4]).values)


def test_call_equals_explain(forest, data):
    X, _ = data
    explainer = _sampled(forest).fit(X)
    a, b = explainer(X[:4]), explainer.explain(X[:4])
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.base_values, b.base_values)
    np.testing.assert_array_equal(a.upper_bounds, b.upper_bounds)
    assert a.feature_names == b.feature_names


def test_shap_values_returns_ndarray(forest, data):
    X, _ = data
    explainer = _sampled(forest).fit(X)
    values = explainer.shap_values(X[:4])
    assert type(values) is np.ndarray
    assert values.shape == (4, 5)
    np.testing.assert_array_equal(values, explainer.explain(X[:4]).values)

    iris = load_iris()
    classifier = LogisticRegression(max_iter=500).fit(iris.data, iris.target)
    values = _sampled(classifier).fit(iris.data).shap_values(iris.data[:3])
    assert type(values) is np.ndarray
    assert values.shape == (3, 4, 3)


def test_batch_size_does_not_change_values(forest, data):
    X, _ = data
    small = _sampled(forest, batch_size=7).fit(X).explain(X[:5]).values
    large = _sampled(forest).fit(X).explain(X[:5]).values
    np.testing.assert_allclose(small, large, atol=1e-12)


# --------------------------------------------------------------------------------------------
# pandas
# --------------------------------------------------------------------------------------------


def test_pandas_in_names_out(forest, frame):
    explainer = _sampled(forest).fit(frame)
    assert isinstance(explainer.feature_names_in_, np.ndarray)
    assert list(explainer.feature_names_in_) == NAMES
    assert explainer.feature_names_ == NAMES
    exp = explainer.explain(frame.iloc[:3])
    assert exp.feature_names == NAMES
    assert type(exp.data) is np.ndarray
    np.testing.assert_array_equal(exp.data, frame.to_numpy()[:3])
    # explaining an ndarray after a DataFrame fit keeps the names, with scikit-learn's warning
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        assert explainer.explain(frame.to_numpy()[:3]).feature_names == NAMES


def test_refit_on_ndarray_forgets_feature_names(forest, frame):
    explainer = _sampled(forest).fit(frame)
    explainer.fit(frame.to_numpy())
    assert not hasattr(explainer, "feature_names_in_")
    assert explainer.feature_names_ == [f"x{j}" for j in range(5)]


def test_dataframe_columns_in_another_order_raise(forest, frame):
    explainer = _sampled(forest).fit(frame)
    with pytest.raises(ValueError, match="feature names"):
        explainer.explain(frame[["b", "a", "c", "d", "e"]].iloc[:3])
    renamed = frame.rename(columns={"e": "z"})
    with pytest.raises(ValueError, match="feature names"):
        explainer.explain(renamed.iloc[:3])


# --------------------------------------------------------------------------------------------
# input validation
# --------------------------------------------------------------------------------------------


def test_n_features_mismatch_raises(forest, data):
    X, _ = data
    explainer = _sampled(forest).fit(X)
    with pytest.raises(ValueError, match="features"):
        explainer.explain(X[:3, :4])
    with pytest.raises(ValueError, match="features"):
        explainer.explain(np.hstack([X[:3], X[:3, :1]]))


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinity_raises(forest, data, bad):
    X, _ = data
    dirty = X[:30].copy()
    dirty[4, 2] = bad
    with pytest.raises(ValueError, match=r"contains infinity \(1 entries, first at row 4, column 2\)"):
        _sampled(forest).fit(dirty)
    explainer = _sampled(forest).fit(X)
    with pytest.raises(ValueError, match="contains infinity"):
        explainer.explain(dirty[:6])
    with pytest.raises(ValueError, match="contains infinity"):
        explainer.explain(pd.DataFrame(dirty[:6]))


def test_missing_values_reach_a_model_that_takes_them_unless_refused(forest, data):
    X, _ = data
    dirty = X[:30].copy()
    dirty[4, 2] = np.nan  # a random forest takes NaN (scikit-learn >= 1.4)
    explanation = _sampled(forest).fit(dirty).explain(dirty[:6])
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, forest.predict(dirty[:6]))
    with pytest.raises(ValueError, match=r"missing values \(NaN\) \(1 entries, first at row 4, column 2\)"):
        _sampled(forest, allow_nan=False).fit(dirty)


def test_one_dimensional_input_raises(forest, data):
    X, _ = data
    with pytest.raises(ValueError, match="2-D"):
        _sampled(forest).fit(X[:, 0])
    explainer = _sampled(forest).fit(X)
    with pytest.raises(ValueError, match="2-D"):
        explainer.explain(X[0])
    with pytest.raises(ValueError, match="2-D"):
        explainer.explain(X[None])


def test_empty_input_raises(forest, data):
    X, _ = data
    explainer = _sampled(forest).fit(X)
    with pytest.raises(ValueError):
        explainer.explain(X[:0])
    with pytest.raises(ValueError):
        _sampled(forest).fit(X[:, :0])


@pytest.mark.parametrize("dtype", [object, "str", "category"])
def test_string_columns_after_a_numeric_fit_raise_type_error_naming_them(forest, frame, dtype):
    strings = frame.assign(c=pd.Series(["low", "high"] * 50, dtype=dtype))
    explainer = _sampled(forest).fit(frame)
    with pytest.raises(TypeError, match=r"non-numeric columns \['c'\]"):
        explainer.explain(strings.iloc[:3])


def test_a_string_array_is_not_a_table(forest):
    with pytest.raises(TypeError, match="must be numeric"):
        _sampled(forest).fit(np.array([["x", "y", "z", "u", "v"]] * 3))


@pytest.mark.parametrize("dtype", ["Int64", "Float64"])
def test_nullable_numeric_columns_are_accepted(data, frame, dtype):
    nullable = frame.assign(c=(frame["c"] * 10).round().astype(dtype))
    # a table with nullable columns reaches the model as DataFrames: a model fitted on the same columns
    forest = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(nullable, data[1])
    explainer = _sampled(forest).fit(nullable)
    exp = explainer.explain(nullable.iloc[:3])
    np.testing.assert_array_equal(exp.data, nullable.iloc[:3].to_numpy(dtype=np.float64))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("max_evals", 0),
        ("max_evals", -1),
        ("max_evals", "lots"),
        ("max_evals", 12.5),
        ("max_evals", True),
        ("background_size", 0),
        ("background_size", -5),
        ("background_size", 2.5),
        ("background_size", "all"),
        ("batch_size", 0),
        ("batch_size", -1),
        ("batch_size", "big"),
        ("output", "proba"),
        ("device", "tpu"),
        ("random_state", -1),
        ("random_state", "seed"),
        ("n_jobs", 0),
        ("n_jobs", 1.5),
        ("progress", "yes"),
        ("tol", -0.1),
        ("lam", -1.0),
        ("n_candidates", 0),
        ("algorithm", "shapley"),
    ],
)
def test_invalid_params_raise_at_fit(forest, data, name, value):
    X, _ = data
    explainer = _sampled(forest, **{name: value})
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        explainer.fit(X)
    # params set on a fitted explainer are checked when it explains
    fitted = _sampled(forest).fit(X)
    fitted.set_params(**{name: value})
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        fitted.explain(X[:2])


def test_budget_below_sampler_minimum_raises(forest, data):
    X, _ = data
    with pytest.raises(ValueError, match="max_evals"):
        _sampled(forest, algorithm="antithetic", max_evals=9).fit(X)  # one pair on 5 features costs 10
    with pytest.raises(ValueError):
        _sampled(forest, algorithm="exact", max_evals=31).fit(X)
    fitted = _sampled(forest, algorithm="antithetic", max_evals=10).fit(X)
    with pytest.raises(ValueError, match="call fit again"):
        fitted.set_params(max_evals=12).explain(X[:2])  # the plan comes from fit


def test_unknown_sampler_raises(forest, data):
    X, _ = data
    with pytest.raises(ValueError, match="algorithm"):
        _sampled(forest, algorithm="sobolev").fit(X).explain(X[:2])


def test_unknown_sampler_raises_at_fit(forest, data):
    X, _ = data
    with pytest.raises(ValueError, match="algorithm"):
        _sampled(forest, algorithm="sobolev").fit(X)


def test_changing_model_or_output_after_fit_requires_refit(forest, data):
    X, _ = data
    explainer = _sampled(forest).fit(X)
    explainer.set_params(output="predict")
    with pytest.raises(ValueError, match="fit again"):
        explainer.explain(X[:2])
    assert explainer.fit(X).explain(X[:2]).values.shape == (2, X.shape[1])


def test_exact_with_auto_budget_for_ten_features():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 10))
    explainer = PermutationShapExplainer(lambda Z: Z[:, 0] * Z[:, 9], algorithm="exact", background_size=10)
    explanation = explainer.fit(X).explain(X[:2])
    np.testing.assert_array_equal(explanation.diagnostics["n_evals"], 2**10)
    np.testing.assert_allclose(explanation.values[:, 1:9], 0.0, atol=1e-15)


def test_sparse_input_gets_a_clear_error_in_every_class():
    import scipy.sparse

    from sklearn_shapq import HSICAttribution, MMDAttribution, ProductKernelShapExplainer, TopKShapley

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    y = X[:, 0] + 0.1 * rng.normal(size=40)
    sparse = scipy.sparse.csr_matrix(X)
    model = Ridge().fit(X, y)
    with pytest.raises(TypeError, match="sparse"):
        PermutationShapExplainer(model).fit(sparse)
    with pytest.raises(TypeError, match="sparse"):
        PermutationShapExplainer(model, max_evals=50).fit(X).explain(sparse)
    from sklearn.svm import SVR

    svr = SVR().fit(X, y)
    with pytest.raises(TypeError, match="sparse"):
        ProductKernelShapExplainer(svr).fit(X).explain(sparse)
    with pytest.raises(TypeError, match="[Ss]parse"):
        TopKShapley(Ridge(), n_features_to_select=2, max_evals=40, t_min=2, cv=2, progress=False).fit(sparse, y)
    with pytest.raises(TypeError, match="[Ss]parse"):
        HSICAttribution(n_features_to_select=2).fit(sparse, y)
    with pytest.raises(TypeError, match="[Ss]parse"):
        MMDAttribution().fit(sparse, X)


def test_auto_explains_an_outlier_detector_s_score_not_its_label():
    from sklearn.ensemble import IsolationForest
    from sklearn.svm import OneClassSVM

    X = np.random.default_rng(0).normal(size=(200, 4))
    for model, path in (
        (OneClassSVM(gamma=0.5).fit(X), "product_kernel"),
        (IsolationForest(random_state=0).fit(X), None),
    ):
        explainer = PermutationShapExplainer(model, background_size=20, random_state=0, progress=False).fit(X)
        explanation = explainer.explain(X[:3])
        total = explanation.values.sum(axis=1) + explanation.base_values
        np.testing.assert_allclose(total, model.decision_function(X[:3]), rtol=1e-9, atol=1e-12)
        assert path is None or explainer.algorithm_ == path
        labels = PermutationShapExplainer(model, output="predict", background_size=20, progress=False).fit(X)
        labelled = labels.explain(X[:3])
        np.testing.assert_allclose(labelled.values.sum(axis=1) + labelled.base_values, model.predict(X[:3]))
