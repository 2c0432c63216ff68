"""TopKShapley: selector conventions, local explanations, bad input."""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import joblib
import numpy as np
import pandas as pd
import pytest
import shap
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, LeaveOneOut, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_shapq import TopKShapley
from sklearn_shapq.algorithms import TOPK_ALGORITHMS, top_k_shapley
from sklearn_shapq.backends import resolve_backend
from sklearn_shapq.games import InterventionalGame, TableGame, make_model_function

from fitted_state import assert_same_state
from strict_twin import StrictBackend

N_FEATURES = 8
INFORMATIVE = [0, 3, 5]


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, N_FEATURES))
    y = 3.0 * X[:, 0] + 2.0 * X[:, 3] - 2.5 * X[:, 5] + 0.2 * rng.normal(size=240)
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(N_FEATURES)]), y


def warns_below_warm_up(expected: bool = True):
    """Expect TopKShapley's warning that max_evals does not cover the adaptive algorithm's warm-up (or none)."""
    return pytest.warns(UserWarning, match="does not cover .* warm-up") if expected else nullcontext()


def small(**params) -> TopKShapley:
    defaults = dict(n_features_to_select=3, cv=3, max_evals=120, t_min=5, random_state=0)
    defaults.update(params)
    return TopKShapley(LinearRegression(), **defaults)


@pytest.mark.parametrize("method", ["greedy_cmcs", "cmcs", "cmcs_at_k", "permutation", "stratified_svarm"])
def test_retrain_selector_finds_the_informative_features(regression, method):
    X, y = regression
    selector = small(algorithm=method).fit(X, y)
    assert sorted(selector.top_k_.tolist()) == INFORMATIVE
    assert selector.get_support().tolist() == [j in INFORMATIVE for j in range(N_FEATURES)]
    assert selector.n_evals_ <= 120
    assert selector.shapley_values_.shape == selector.stderr_.shape == (N_FEATURES,)
    # the global game's corners: R² of a constant predictor and of the full model on the same folds
    assert selector.empty_value_ < 0.0 < selector.full_value_
    assert selector.full_value_ == pytest.approx(cross_val_score(LinearRegression(), X, y, cv=3).mean())


def test_selector_transform_names_and_pandas_output(regression):
    X, y = regression
    selector = small().set_output(transform="pandas").fit(X, y)
    out = selector.transform(X)
    assert isinstance(out, pd.DataFrame)
    assert out.columns.tolist() == ["f0", "f3", "f5"]
    assert selector.get_feature_names_out().tolist() == ["f0", "f3", "f5"]
    assert selector.feature_names_in_.tolist() == X.columns.tolist()


def test_marginal_game_needs_no_refits(regression):
    X, y = regression
    selector = small(game="marginal", background_size=60).fit(X, y)
    assert sorted(selector.top_k_.tolist()) == INFORMATIVE
    # v(N) is the fitted model's R² on the background rows, v(∅) that of its mean prediction
    rows = selector.background_
    model = selector.estimator_
    target = y[np.isin(X.to_numpy(), rows).all(axis=1)]
    assert selector.full_value_ == pytest.approx(model.score(rows, target))
    assert selector.empty_value_ <= 0.0


def test_marginal_classifier_without_probabilities_is_refused(regression):
    X, y = regression
    from sklearn.svm import LinearSVC

    with pytest.raises(ValueError, match="predict_proba"):
        TopKShapley(LinearSVC(), n_features_to_select=2, game="marginal", max_evals=40).fit(X, y > 0)


def test_same_random_state_same_result_and_clone(regression):
    X, y = regression
    a = small(algorithm="greedy_cmcs", max_evals=200).fit(X, y)
    b = clone(a).fit(X, y)
    np.testing.assert_array_equal(a.shapley_values_, b.shapley_values_)
    assert clone(a).get_params()["n_features_to_select"] == 3
    assert not hasattr(clone(a), "top_k_")


def test_prefit_estimator_is_kept_by_clone_and_must_be_fitted(regression):
    X, y = regression
    model = LinearRegression().fit(X, y)
    selector = TopKShapley(model, n_features_to_select=2, prefit=True, max_evals=40, cv=3)
    assert clone(selector).estimator is model
    with pytest.raises(NotFittedError, match="prefit=True"):
        TopKShapley(LinearRegression(), prefit=True, n_features_to_select=2).fit(X, y)


def test_grid_search_over_k_in_a_pipeline(regression):
    X, y = regression
    pipe = make_pipeline(small(algorithm="cmcs", max_evals=80), LinearRegression())
    search = GridSearchCV(pipe, {"topkshapley__n_features_to_select": [1, 3, 6]}, cv=3).fit(X, y)
    assert search.best_params_["topkshapley__n_features_to_select"] in (3, 6)
    assert search.best_estimator_[0].transform(X).shape[1] == search.best_params_["topkshapley__n_features_to_select"]


def test_default_estimator_for_classes_is_logistic(regression):
    X, y = regression
    selector = TopKShapley(n_features_to_select=2, cv=3, max_evals=60, t_min=4, random_state=0).fit(X, y > 0)
    assert selector.estimator_.steps[-1][0] == "logisticregression"
    assert 0.0 < selector.empty_value_ < 1.0  # the prior's accuracy


@pytest.mark.parametrize(
    ("params", "fit_y", "error", "match"),
    [
        (dict(n_features_to_select=0), True, InvalidParameterError, "'n_features_to_select' parameter"),
        (dict(n_features_to_select=N_FEATURES + 1), True, ValueError, "n_features_to_select must be"),
        (dict(n_features_to_select=2.5), True, InvalidParameterError, "'n_features_to_select' parameter"),
        (dict(algorithm="shapley"), True, InvalidParameterError, "'algorithm' parameter"),
        (dict(game="both"), True, InvalidParameterError, "'game' parameter"),
        (dict(ranking="up"), True, InvalidParameterError, "'ranking' parameter"),
        (dict(rounds_per_decision=0), True, InvalidParameterError, "'rounds_per_decision' parameter"),
        (dict(epsilon=0.01, algorithm="svarm"), True, ValueError, "PAC"),
        (dict(epsilon=-1.0), True, InvalidParameterError, "'epsilon' parameter"),
        (dict(max_evals=1), True, InvalidParameterError, "'max_evals' parameter"),
        (dict(device="tpu"), True, InvalidParameterError, "'device' parameter"),
        (dict(n_jobs=0), True, InvalidParameterError, "'n_jobs' parameter"),
        (dict(delta=1.5), True, InvalidParameterError, "'delta' parameter"),
        (dict(t_min=1), True, InvalidParameterError, "'t_min' parameter"),
        (dict(batch_size=0), True, InvalidParameterError, "'batch_size' parameter"),
        (dict(progress="yes"), True, InvalidParameterError, "'progress' parameter"),
        (dict(memory=3), True, InvalidParameterError, "'memory' parameter"),
        (dict(), False, ValueError, "requires y to be passed"),
    ],
)
def test_bad_input_gets_clear_errors(regression, params, fit_y, error, match):
    X, y = regression
    with pytest.raises(error, match=match):
        small(**params).fit(X, y if fit_y else None)


def test_explain_before_fit_and_transform_without_global_game(regression):
    X, y = regression
    with pytest.raises(NotFittedError):
        small().explain(X)
    model = LinearRegression().fit(X, y)
    prefit = TopKShapley(model, n_features_to_select=2, prefit=True, max_evals=60, t_min=5).fit(X)  # explain only
    assert prefit.explain(X.iloc[:2]).values.shape == (2, N_FEATURES)
    with pytest.raises(ValueError, match="selects nothing"):
        prefit.transform(X)


def test_local_explanations_of_a_linear_model_are_exact_and_ranked_by_magnitude(regression):
    X, y = regression
    model = LinearRegression().fit(X, y)
    explainer = TopKShapley(
        model, n_features_to_select=2, prefit=True, algorithm="cmcs", max_evals=2 + 3 * (N_FEATURES + 1)
    )
    explanation = explainer.fit(X).explain(X.iloc[:5])
    assert isinstance(explanation, shap.Explanation)
    # an additive game: every extended marginal contribution is the Shapley value
    exact = model.coef_ * (X.iloc[:5].to_numpy() - explainer.background_.mean(axis=0))
    np.testing.assert_allclose(explanation.values, exact, atol=1e-9)
    background = pd.DataFrame(explainer.background_, columns=X.columns)
    np.testing.assert_allclose(explanation.base_values, model.predict(background).mean())
    assert explanation.feature_names == X.columns.tolist()
    expected = np.argsort(-np.abs(exact), axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(explanation.diagnostics["top_k"], expected)
    n_evals = explanation.diagnostics["n_evals"]
    assert n_evals.shape == (5,) and (n_evals <= 2 + 3 * (N_FEATURES + 1)).all()
    np.testing.assert_allclose(explanation.error_std, 0.0, atol=1e-9)


def test_local_rows_match_single_row_games(regression):
    """Rows explained together are estimates of each row's own exact game values."""
    X, y = regression
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y > 0)
    explainer = TopKShapley(model, n_features_to_select=3, prefit=True, max_evals=300, random_state=3).fit(X)
    rows = X.iloc[:4].to_numpy()
    explanation = explainer.explain(X.iloc[:4])
    backend = resolve_backend("cpu")
    game = InterventionalGame(make_model_function(model, "auto", backend), explainer.background_, rows)
    table = game.shapley_values()[:, :, 0]
    assert np.abs(explanation.values - table).mean() < 0.25 * np.abs(table).mean()


def test_multiclass_explains_each_rows_predicted_class_or_a_target():
    X, y = load_iris(return_X_y=True)
    model = LogisticRegression(max_iter=1000).fit(X, y)
    explainer = TopKShapley(model, n_features_to_select=2, prefit=True, max_evals=100, t_min=5, random_state=0).fit(X)
    targets = explainer.explain(X[[0, 60, 120]]).diagnostics["targets"]
    np.testing.assert_array_equal(targets, model.predict(X[[0, 60, 120]]))
    np.testing.assert_array_equal(explainer.set_params(target=2).explain(X[:2]).diagnostics["targets"], [2, 2])
    with pytest.raises(ValueError, match="target"):
        explainer.set_params(target=7).explain(X[:2])


def test_pac_mode_reports_whether_the_rule_held():
    """PAC mode on a synthetic game through the estimator layer TopKShapley uses."""
    table = np.zeros(1 << 4)
    codes = np.arange(1 << 4)
    for j, weight in enumerate([1.0, 0.5, 0.2, 0.1]):
        table += weight * ((codes >> j) & 1)
    result = top_k_shapley(TableGame(table), 2, "cmcs_at_k", max_evals=None, epsilon=1e-9, t_min=5)
    assert result.pac_satisfied[0]
    assert sorted(result.top_k[0].tolist()) == [0, 1]


def _explain_on(device, regression, method):
    X, y = regression
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y > 0)
    explainer = TopKShapley(
        model,
        n_features_to_select=3,
        prefit=True,
        max_evals=200,
        t_min=5,  # 200 evaluations cover the warm-up: the adaptive phase runs on both backends
        algorithm=method,
        random_state=1,
        device=device,
    )
    return explainer.fit(X).explain(X.iloc[:6]), explainer


@pytest.mark.parametrize("twin", ["numpy", "strict"])
@pytest.mark.parametrize("method", list(TOPK_ALGORITHMS))
def test_array_namespace_twin_gives_the_cpu_results(regression, method, twin):
    """The CUDA backend's array code, run with numpy, drives the same games to the same values.

    The strict twin holds device arrays to cupy's rules (no host array meets one, none is turned
    into a host array implicitly), so each method's local explanation runs on cupy as it does here.
    Bit for bit, but for leverage's floats (to 1e-12): on the CPU its normal equations are numba
    kernels that add in another order.
    """
    from sklearn_shapq.backends import ArrayBackend

    cpu, _ = _explain_on("cpu", regression, method)
    twin, _ = _explain_on(ArrayBackend(np, "numpy-twin") if twin == "numpy" else StrictBackend(), regression, method)
    tolerance = {"rtol": 1e-12, "atol": 1e-14} if method == "leverage" else {"rtol": 0, "atol": 0}
    np.testing.assert_allclose(twin.values, cpu.values, **tolerance)
    np.testing.assert_allclose(twin.error_std, cpu.error_std, **tolerance)
    for name in ("top_k", "n_evals", "pac_satisfied", "targets"):
        np.testing.assert_array_equal(twin.diagnostics[name], cpu.diagnostics[name])


@pytest.mark.gpu
@pytest.mark.parametrize("method", list(TOPK_ALGORITHMS))
def test_cuda_gives_the_cpu_results(regression, method):
    """The same draws give the same values on the GPU, to rounding; adaptive methods agree within their errors.

    An adaptive method's choices compare sums that cupy's weighted ``bincount`` adds by atomics, in another
    order than numpy: where two players tie (a tree's unused features: 0 on one device, 1e-17 on the
    other), the two devices may choose differently and then sample other coalitions (seen on an H100).
    """
    cuda, _ = _explain_on("cuda", regression, method)
    cpu, _ = _explain_on("cpu", regression, method)
    if not TOPK_ALGORITHMS[method].adaptive:
        np.testing.assert_allclose(cuda.values, cpu.values, rtol=1e-9, atol=1e-9)
        np.testing.assert_array_equal(cuda.diagnostics["top_k"], cpu.diagnostics["top_k"])
        return
    assert np.isfinite(cuda.values).all() and cuda.values.shape == cpu.values.shape
    allowed = 5 * np.hypot(cuda.error_std, cpu.error_std) + 1e-9
    assert (np.abs(cuda.values - cpu.values) <= allowed).all()


def test_target_is_a_class_label_for_classifiers_and_refused_for_a_single_output(regression):
    X, y = load_iris(return_X_y=True)
    model = LogisticRegression(max_iter=1000).fit(X, y + 1)  # classes 1, 2, 3: labels are not indices
    explainer = TopKShapley(model, n_features_to_select=2, prefit=True, max_evals=160, t_min=5, random_state=0).fit(X)
    for label in (1, 2, 3):
        targets = explainer.set_params(target=label).explain(X[:2]).diagnostics["targets"]
        np.testing.assert_array_equal(targets, [label - 1, label - 1])
    with pytest.raises(ValueError, match="one of the classes"):
        explainer.set_params(target=0).explain(X[:2])
    Xr, yr = regression
    single = TopKShapley(
        LinearRegression().fit(Xr, yr), n_features_to_select=2, prefit=True, target=1, max_evals=60, t_min=2
    )
    with pytest.raises(ValueError, match="single output"):
        single.fit(Xr).explain(Xr.iloc[:2])


def test_budget_below_the_warm_up_warns(regression):
    X, y = regression
    with pytest.warns(UserWarning, match="warm-up"):
        small(max_evals=60, t_min=30).fit(X, y)
    assert small().set_params(max_evals="auto")._budget(N_FEATURES) == 2 + (5 + 20) * (N_FEATURES + 1)


FITS = []


class CountingRegression(LinearRegression):
    """A linear regression that records its fits (to see which scores were recomputed)."""

    def fit(self, X, y, sample_weight=None):
        FITS.append(X.shape[1])
        return super().fit(X, y, sample_weight)


def test_retrain_scores_are_kept_per_game_or_in_an_explicit_memory(regression, tmp_path):
    """No hidden global cache: a fit scores in its own game; memory= shares scores across fits."""
    X, y = regression
    params = dict(n_features_to_select=3, cv=3, max_evals=80, t_min=5, random_state=0, algorithm="cmcs")
    first = TopKShapley(CountingRegression(), **params).fit(X, y)
    FITS.clear()
    TopKShapley(CountingRegression(), **params).fit(X, y)
    assert len(FITS) > 3 * 10  # without memory= every coalition is scored again (3 folds each)
    memory = joblib.Memory(tmp_path / "scores", verbose=0)
    cached = TopKShapley(CountingRegression(), memory=memory, **params).fit(X, y)
    FITS.clear()
    again = TopKShapley(CountingRegression(), memory=memory, **params).fit(X, y)
    assert len(FITS) == 1  # only the final estimator_ is fitted: every score came from the memory
    np.testing.assert_array_equal(cached.shapley_values_, first.shapley_values_)
    np.testing.assert_array_equal(again.shapley_values_, first.shapley_values_)


def test_retrain_scores_differ_between_estimator_classes(regression):
    from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

    from sklearn_shapq.games import RetrainGame

    X, y = regression
    X = X.to_numpy()
    mask = np.zeros((1, N_FEATURES), dtype=bool)
    mask[0, [0, 3]] = True
    forest = RetrainGame(RandomForestRegressor(5, bootstrap=False, random_state=0), X, y, 3, None, None)
    extra = RetrainGame(ExtraTreesRegressor(5, random_state=0), X, y, 3, None, None)
    assert forest(mask)[0, 0] != extra(mask)[0, 0]


def test_explain_changes_no_attribute_and_is_thread_safe(regression):
    X, y = regression
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y > 0)
    explainer = small(algorithm="greedy_cmcs", max_evals=200).fit(X, y > 0)
    before = copy.deepcopy(vars(explainer))
    serial = explainer.explain(X.iloc[:6]).values
    assert_same_state(before, vars(explainer))
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: explainer.explain(X.iloc[:6]).values, range(4)))
    for values in results:
        np.testing.assert_array_equal(values, serial)
    assert_same_state(before, vars(explainer))
    assert model is not None


@pytest.mark.parametrize(
    ("method", "rounds_per_decision"),
    [(m, 1) for m in ("greedy_cmcs", "cmcs", "cmcs_at_k", "permutation", "sampling_shap_at_k", "svarm")]
    + [("greedy_cmcs", 4), ("cmcs_at_k", 3), ("greedy_cmcs", "auto"), ("sampling_shap_at_k", "auto")],
)
def test_a_row_alone_equals_the_row_in_any_batch_and_duplicates_agree(regression, method, rounds_per_decision):
    X, y = regression
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y > 0)
    explainer = TopKShapley(
        model,
        n_features_to_select=3,
        prefit=True,
        algorithm=method,
        max_evals=150,
        t_min=5,
        rounds_per_decision=rounds_per_decision,
        random_state=4,
    ).fit(X)
    rows = X.iloc[[5, 1, 5, 2, 7]]
    batch = explainer.explain(rows)
    alone = explainer.explain(X.iloc[[5]])
    np.testing.assert_array_equal(batch.values[0], alone.values[0])
    np.testing.assert_array_equal(batch.values[2], alone.values[0])
    np.testing.assert_array_equal(batch.diagnostics["top_k"][0], alone.diagnostics["top_k"][0])
    moved = explainer.explain(X.iloc[[2, 7, 1, 5]])
    np.testing.assert_array_equal(moved.values[3], alone.values[0])


def test_a_float_target_with_whole_values_is_a_regression_target():
    """The diabetes target (floats with whole-number values) is not a 214-class label."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    assert (y == np.round(y)).all()
    selector = TopKShapley(n_features_to_select=3, cv=3, max_evals=300, t_min=5, random_state=0, progress=False).fit(
        X, y
    )
    assert selector.estimator_.__class__.__name__ == "RidgeCV"
    assert sorted(selector.top_k_.tolist()) == [2, 3, 8]  # bmi, bp, s5
    as_labels = TopKShapley(n_features_to_select=2, cv=3, max_evals=60, t_min=4, random_state=0, progress=False)
    assert as_labels.fit(X[:120], (y[:120] > 140).astype(int)).estimator_.steps[-1][0] == "logisticregression"


def test_set_output_survives_clone_and_grid_search(regression):
    X, y = regression
    selector = small(algorithm="cmcs", max_evals=80).set_output(transform="pandas")
    copy = clone(selector)
    assert isinstance(copy.fit(X, y).transform(X), pd.DataFrame)
    search = GridSearchCV(
        make_pipeline(selector, LinearRegression()), {"topkshapley__n_features_to_select": [2, 3]}, cv=2
    ).fit(X, y)
    out = search.best_estimator_[0].transform(X)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(
        search.best_estimator_[0].get_feature_names_out()
    )
    model = LinearRegression().fit(X, y)
    prefit = clone(TopKShapley(model, n_features_to_select=2, prefit=True).set_output(transform="pandas"))
    assert prefit.estimator is model and prefit._sklearn_output_config == {"transform": "pandas"}


# ---------------------------------------------------------------- no silent wrong answer


def _nan_scorer(estimator, X, y):
    return np.nan


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
@pytest.mark.parametrize(
    ("params", "match"),
    [
        # R² is undefined on one test row: every score NaN, and once a silent top k of NaNs
        (dict(cv=LeaveOneOut()), r"scoring=None \(the default, 'r2'\) gave NaN on a fold of cv=LeaveOneOut\(\)"),
        (dict(cv=LeaveOneOut(), scoring="r2"), r"scoring='r2' gave NaN on a fold of cv=LeaveOneOut\(\).*single row"),
        (dict(scoring=_nan_scorer), r"scoring=<function _nan_scorer.*> gave NaN on a fold of cv=3"),
        (dict(game="marginal", background_size=1), r"scoring=None \(the default, 'r2'\) gave NaN on the 1 rows"),
        (dict(game="marginal", scoring=_nan_scorer), r"scoring=<function _nan_scorer.*> gave NaN on the 60 rows"),
    ],
)
def test_an_undefined_score_is_an_error_in_fit_naming_scoring(regression, params, match):
    X, y = regression
    X, y = X.iloc[:60], y[:60]
    defaults = dict(background_size=60) if params.get("game") == "marginal" else {}
    with pytest.raises(ValueError, match=match):
        small(**{**defaults, **params}).fit(X, y)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
def test_an_undefined_classification_score_is_an_error():
    X, y = load_iris(return_X_y=True)
    selector = TopKShapley(
        LogisticRegression(max_iter=500), n_features_to_select=2, cv=LeaveOneOut(), scoring="roc_auc"
    )
    with pytest.raises(ValueError, match=r"scoring='roc_auc' gave NaN on a fold of cv=LeaveOneOut\(\)"):
        selector.set_params(max_evals=20, t_min=2, random_state=0, progress=False).fit(X[::5], y[::5] == 0)


@pytest.mark.parametrize("method", tuple(TOPK_ALGORITHMS))
def test_fit_refuses_a_budget_below_the_minimum_and_runs_at_it_in_both_modes(regression, method):
    X, y = regression
    d = N_FEATURES
    minimum = TOPK_ALGORITHMS[method].minimum_evals(d)
    match = rf"max_evals={minimum - 1} is below the minimum of {minimum} evaluations that algorithm '{method}' needs"
    FITS.clear()
    with pytest.raises(ValueError, match=match):  # the selector: before any refit
        TopKShapley(CountingRegression(), n_features_to_select=2, algorithm=method, max_evals=minimum - 1, cv=3).fit(
            X, y
        )
    assert FITS == []
    model = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match=match):  # explain only: in fit, before explain
        TopKShapley(model, n_features_to_select=2, algorithm=method, prefit=True, max_evals=minimum - 1).fit(X)
    at_minimum = dict(
        n_features_to_select=2, algorithm=method, max_evals=minimum, t_min=2, random_state=0, progress=False
    )
    # an adaptive algorithm's minimum is below its warm-up (t_min >= 2 rounds): it runs, and says it never adapts
    adaptive = TOPK_ALGORITHMS[method].adaptive
    with warns_below_warm_up(adaptive):
        selector = TopKShapley(LinearRegression(), game="marginal", background_size=40, **at_minimum).fit(X, y)
    assert np.isfinite(selector.shapley_values_).all() and selector.n_evals_ <= minimum
    with warns_below_warm_up(adaptive):
        explanation = TopKShapley(model, prefit=True, **at_minimum).fit(X).explain(X.iloc[:4])
    assert np.isfinite(explanation.values).all()
    assert (explanation.diagnostics["n_evals"] <= minimum).all()
    assert not (explanation.values == 0).all(axis=1).any()  # once: all zeros and an arbitrary top k


def test_the_issue_prefit_explain_with_two_evaluations_is_refused(regression):
    X, y = regression
    model = LinearRegression().fit(X, y)  # once: all-zero values, standard errors 0 and an arbitrary top k
    with pytest.raises(ValueError, match=r"max_evals=2 is below the minimum of 11 evaluations .* 'greedy_cmcs'"):
        TopKShapley(model, prefit=True, max_evals=2).fit(X).explain(X)  # 11: v(∅), v(N) and one round of 8 + 1


def test_pac_mode_refuses_a_budget_below_the_warm_up_in_fit(regression):
    X, y = regression
    warm_up = TOPK_ALGORITHMS["cmcs"].warm_up_evals(N_FEATURES, 5)
    with pytest.raises(ValueError, match=rf"max_evals={warm_up - 1} is below the {warm_up} evaluations of cmcs"):
        small(algorithm="cmcs", epsilon=0.1, max_evals=warm_up - 1).fit(X, y)


@pytest.mark.parametrize("method", tuple(TOPK_ALGORITHMS))
def test_a_single_feature_is_explained_exactly_by_every_method(method):
    # once: algorithm="leverage" sized its blocks with a regression over one player and crashed
    X = np.random.default_rng(0).normal(size=(30, 1))
    model = LinearRegression().fit(X, 2.0 * X[:, 0])
    explanation = (
        TopKShapley(model, n_features_to_select=1, prefit=True, algorithm=method, max_evals=4, progress=False)
        .fit(X)
        .explain(X[:3])
    )
    np.testing.assert_allclose(explanation.values[:, 0], 2.0 * (X[:3, 0] - X[:, 0].mean()), rtol=1e-12)


def test_a_gpu_asked_for_and_absent_fails_at_fit_in_either_mode(monkeypatch):
    """device is validated by fit, in selector mode too (where it is read by explain only)."""
    from sklearn_shapq import DeviceUnavailableError
    from sklearn_shapq.backends import _device

    monkeypatch.setattr(_device, "_cuda_device_count", lambda: 0)
    X = np.random.default_rng(0).normal(size=(40, 5))
    y = X[:, 0] + X[:, 1]
    with pytest.raises(DeviceUnavailableError):
        TopKShapley(LinearRegression(), n_features_to_select=2, device="cuda").fit(X, y)
    with pytest.raises(DeviceUnavailableError):
        TopKShapley(LinearRegression().fit(X, y), prefit=True, device="cuda").fit(X)
