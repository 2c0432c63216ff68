"""Global score games: retrained cross-validated scores and marginal scores of a fitted model."""

import joblib
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, log_loss, r2_score
from sklearn.model_selection import KFold, LeaveOneOut, StratifiedKFold, cross_val_score
from sklearn.preprocessing import StandardScaler

from sklearn_shapq.algorithms import top_k_shapley
from sklearn_shapq.backends import CpuBackend
from sklearn_shapq.games import InterventionalGame, MarginalScoreGame, RetrainGame, make_model_function

from brute_force import interventional_value
from game_helpers import as_mask


def _diabetes(n=200, seed=0):
    X, y = load_diabetes(return_X_y=True)
    rows = np.random.default_rng(seed).choice(len(y), n, replace=False)
    return X[rows], y[rows]


class CountingRidge(Ridge):
    """Ridge that counts its fits in a class attribute (clones share it)."""

    fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        return super().fit(X, y, sample_weight)


# ---------------------------------------------------------------- retrain games


def test_retrain_game_regressor_matches_cross_val_score():
    X, y = _diabetes(seed=11)
    d = X.shape[1]
    cv = KFold(4, shuffle=True, random_state=0)
    game = RetrainGame(Ridge(alpha=0.5), X, y, cv=cv, scoring=None, n_jobs=None)
    assert (game.n_players, game.n_games, game.n_outputs) == (d, 1, 1)
    empty, full = np.zeros(d, bool), np.ones(d, bool)
    subset = as_mask([0, 2, 3], d)
    values = game(np.stack([empty, full, subset, full, subset, subset]))[:, 0]
    np.testing.assert_allclose(values[0], cross_val_score(DummyRegressor(), X[:, :1], y, cv=cv).mean(), rtol=1e-12)
    np.testing.assert_allclose(values[1], cross_val_score(Ridge(alpha=0.5), X, y, cv=cv).mean(), rtol=1e-12)
    np.testing.assert_allclose(values[2], cross_val_score(Ridge(alpha=0.5), X[:, subset], y, cv=cv).mean())
    np.testing.assert_array_equal(values[[3, 4, 5]], values[[1, 2, 2]])
    assert values[0] <= 0.0 < values[1]  # a constant predictor has R^2 <= 0 out of fold
    assert game.n_evals[0] == 6  # repeated coalitions are charged ...
    assert game.n_unique == 3  # ... but scored once
    game(np.stack([full, empty]))
    assert (game.n_evals[0], game.n_unique) == (8, 3)
    # the cached corners are the same scores, charged once
    np.testing.assert_array_equal(game.empty_value[0, 0], values[0])
    np.testing.assert_array_equal(game.full_value[0, 0], values[1])
    assert (game.n_evals[0], game.n_unique) == (10, 3)


def test_retrain_game_default_cv_and_scoring():
    X, y = _diabetes(seed=12)
    d = X.shape[1]
    game = RetrainGame(Ridge(), X, y, cv=5, scoring="neg_mean_absolute_error", n_jobs=None)
    expected = cross_val_score(Ridge(), X, y, cv=5, scoring="neg_mean_absolute_error").mean()
    np.testing.assert_allclose(game(np.ones((1, d), bool))[:, 0], [expected], rtol=1e-12)


def test_retrain_game_classifier():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X[:300, :5])  # scaled: lbfgs converges in a few steps
    y = y[:300]
    d = X.shape[1]
    model = LogisticRegression()
    game = RetrainGame(model, X, y, cv=3, scoring=None, n_jobs=None)
    values = game(np.stack([np.zeros(d, bool), np.ones(d, bool)]))[:, 0]
    folds = StratifiedKFold(3)  # what cv=3 means for a classifier
    dummy = cross_val_score(DummyClassifier(strategy="prior"), X[:, :1], y, cv=folds).mean()
    np.testing.assert_allclose(values, [dummy, cross_val_score(model, X, y, cv=folds).mean()], rtol=1e-12)
    # the prior classifier's accuracy is the majority share of each test fold
    majority = np.mean([np.mean(y[test] == np.bincount(y[train]).argmax()) for train, test in folds.split(X, y)])
    np.testing.assert_allclose(values[0], majority, rtol=1e-12)


def test_retrain_scores_are_memoised_per_game_and_shared_through_joblib_memory(tmp_path):
    X, y = _diabetes(n=120, seed=14)
    d = X.shape[1]
    masks = np.stack([np.ones(d, bool), as_mask([1, 4], d), as_mask([1, 4], d)])
    n_folds = 3

    CountingRidge.fits = 0
    first = RetrainGame(CountingRidge(), X, y, cv=n_folds, scoring=None, n_jobs=None)
    values = first(masks)
    assert CountingRidge.fits == 2 * n_folds  # two distinct coalitions
    second = RetrainGame(CountingRidge(), X, y, cv=n_folds, scoring=None, n_jobs=None)
    np.testing.assert_array_equal(second(masks), values)
    assert CountingRidge.fits == 4 * n_folds  # without memory, nothing is shared between games

    memory = joblib.Memory(tmp_path, verbose=0)
    CountingRidge.fits = 0
    cached = RetrainGame(CountingRidge(), X, y, cv=n_folds, scoring=None, n_jobs=None, memory=memory)
    np.testing.assert_array_equal(cached(masks), values)
    assert CountingRidge.fits == 2 * n_folds
    again = RetrainGame(CountingRidge(), X, y, cv=n_folds, scoring=None, n_jobs=None, memory=memory)
    np.testing.assert_array_equal(again(masks), values)
    assert CountingRidge.fits == 2 * n_folds  # read back from the joblib cache
    assert again.n_evals[0] == 3  # still charged as evaluations
    other = RetrainGame(CountingRidge(alpha=3.0), X, y, cv=n_folds, scoring=None, n_jobs=None, memory=memory)
    assert not np.array_equal(other(masks[:1]), values[:1])  # other parameters, other scores
    assert CountingRidge.fits == 3 * n_folds


def test_retrain_game_parallel_scores_equal_serial():
    X, y = _diabetes(n=100, seed=15)
    d = X.shape[1]
    masks = np.random.default_rng(0).random((6, d)) < 0.5
    serial = RetrainGame(Ridge(), X, y, cv=3, scoring=None, n_jobs=None)(masks)
    parallel = RetrainGame(Ridge(), X, y, cv=3, scoring=None, n_jobs=2)(masks)
    np.testing.assert_array_equal(parallel, serial)


def test_retrain_game_in_top_k_shapley():
    X, y = _diabetes(n=150, seed=13)
    game = RetrainGame(Ridge(), X, y, cv=3, scoring=None, n_jobs=None)
    result = top_k_shapley(game, 3, "cmcs", max_evals=40, random_state=0)
    assert result.n_evals[0] == game.n_evals[0] <= 40
    assert game.n_unique <= 40
    assert np.isfinite(result.values).all()


# ---------------------------------------------------------------- marginal score games


def _regressor_game(n_background=30):
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:120, :4], y[:120]
    model = Ridge(alpha=0.1).fit(X, y)
    inner = InterventionalGame(make_model_function(model, "predict", CpuBackend()), X[:n_background], X)
    return model, X, y, inner


def test_marginal_score_game_regressor():
    model, X, y, inner = _regressor_game()
    background = X[:30]
    d = X.shape[1]
    game = MarginalScoreGame(inner, y, scoring=None, classes=None)
    assert (game.n_players, game.n_games) == (d, 1)
    empty, full = np.zeros(d, bool), np.ones(d, bool)
    subset = as_mask([1, 3], d)
    values = game(np.stack([empty, full, subset, subset]))[:, 0]
    np.testing.assert_allclose(values[1], model.score(X, y), rtol=1e-12)  # v(N): the model's own score
    constant = np.full(len(y), model.predict(background).mean())
    np.testing.assert_allclose(values[0], r2_score(y, constant), rtol=1e-12)
    marginal = [interventional_value(model.predict, x, background, [1, 3]) for x in X]
    np.testing.assert_allclose(values[2], r2_score(y, marginal), rtol=1e-10)
    assert values[3] == values[2]
    assert (game.n_evals[0], game.n_unique) == (4, 3)


def test_marginal_score_game_binary_classifier():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X[:, :6])
    clf = LogisticRegression().fit(X, y)
    inner = InterventionalGame(make_model_function(clf, "probability", CpuBackend()), X[::10], X)
    d = X.shape[1]
    accuracy = MarginalScoreGame(inner, y, scoring=None, classes=clf.classes_)
    values = accuracy(np.stack([np.zeros(d, bool), np.ones(d, bool)]))[:, 0]
    np.testing.assert_allclose(values[1], clf.score(X, y), rtol=1e-12)
    mean_proba = clf.predict_proba(X[::10])[:, 1].mean()
    np.testing.assert_allclose(values[0], accuracy_score(y, np.full(len(y), int(mean_proba > 0.5))), rtol=1e-12)
    nll = MarginalScoreGame(inner, y, scoring="neg_log_loss", classes=clf.classes_)
    values = nll(np.stack([np.zeros(d, bool), np.ones(d, bool)]))[:, 0]
    np.testing.assert_allclose(values[1], -log_loss(y, clf.predict_proba(X)), rtol=1e-10)
    np.testing.assert_allclose(values[0], -log_loss(y, np.full(len(y), mean_proba)), rtol=1e-10)


def test_marginal_score_game_multiclass():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    clf = LogisticRegression().fit(X, y)
    background = X[::7]
    inner = InterventionalGame(make_model_function(clf, "probability", CpuBackend()), background, X)
    game = MarginalScoreGame(inner, y, scoring=None, classes=clf.classes_)
    d = X.shape[1]
    subset = as_mask([2], d)
    values = game(np.stack([np.zeros(d, bool), np.ones(d, bool), subset]))[:, 0]
    np.testing.assert_allclose(values[1], clf.score(X, y), rtol=1e-12)
    majority = clf.predict_proba(background).mean(axis=0).argmax()
    np.testing.assert_allclose(values[0], np.mean(y == majority), rtol=1e-12)
    completed = np.repeat(background[None], len(X), axis=0)  # (rows, background, d)
    completed[:, :, 2] = X[:, None, 2]
    proba = clf.predict_proba(completed.reshape(-1, d)).reshape(len(X), len(background), -1).mean(axis=1)
    np.testing.assert_allclose(values[2], np.mean(y == proba.argmax(axis=1)), rtol=1e-12)


@pytest.mark.parametrize("scoring", [None, "neg_mean_squared_error"])
def test_marginal_score_game_scores_new_coalitions_in_one_model_pass(scoring):
    model, X, y, inner = _regressor_game(n_background=10)
    d = X.shape[1]
    game = MarginalScoreGame(inner, y, scoring=scoring, classes=None)
    masks = np.random.default_rng(0).random((5, d)) < 0.5
    calls = inner.n_model_calls
    game(masks)
    assert inner.n_model_calls - calls == -(-5 * len(X) // inner.pairs_per_call)
    calls = inner.n_model_calls
    game(masks)  # all memoised: no model call
    assert inner.n_model_calls == calls


# ---------------------------------------------------------------- undefined scores


def _nan_score(estimator, X, y):
    return np.nan


def _inf_score(estimator, X, y):
    return -np.inf


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
def test_retrain_game_refuses_undefined_scores_naming_scoring_and_cv():
    X, y = _diabetes(n=12, seed=3)
    d = X.shape[1]
    game = RetrainGame(Ridge(), X, y, cv=LeaveOneOut(), scoring=None, n_jobs=None)
    with pytest.raises(ValueError, match=r"scoring=None \(the default, 'r2'\) gave NaN on a fold of cv=LeaveOneOut"):
        game(np.ones((1, d), bool))
    with pytest.raises(ValueError, match="the empty coalition"):  # v(∅) is scored first in a top-k run
        top_k_shapley(game, 2, "cmcs", max_evals=50)
    game = RetrainGame(Ridge(), X, y, cv=3, scoring=_inf_score, n_jobs=None)
    match = r"scoring=<function _inf_score .*> gave -inf on a fold of cv=3 \(the features \[1, 2\]\)"
    with pytest.raises(ValueError, match=match):
        game(as_mask([1, 2], d)[None])
    assert game.n_unique == 0  # nothing undefined is kept


def test_marginal_score_game_refuses_undefined_scores_naming_scoring():
    model, X, y, _ = _regressor_game()
    one_row = InterventionalGame(make_model_function(model, "predict", CpuBackend()), X[:30], X[:1])
    game = MarginalScoreGame(one_row, y[:1], scoring=None, classes=None)
    d = X.shape[1]
    with pytest.warns(UndefinedMetricWarning), pytest.raises(ValueError, match=r"'r2'\) gave NaN on the 1 rows"):
        game(np.ones((1, d), bool))
    _, _, _, inner = _regressor_game()
    game = MarginalScoreGame(inner, y, scoring=_nan_score, classes=None)
    with pytest.raises(ValueError, match=r"scoring=<function _nan_score .*> gave NaN on the \d+ rows"):
        game(np.ones((1, d), bool))
