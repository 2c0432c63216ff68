"""Coalition games: counting, validation, closed forms and the model games (local, retrain, marginal score)."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, log_loss, r2_score
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.preprocessing import StandardScaler

from sklearn_shapq.backends import CpuBackend
from sklearn_shapq.estimators import top_k_shapley
from sklearn_shapq.estimators._exact import MAX_EXACT_FEATURES
from sklearn_shapq.games import (
    CallableGame,
    CoalitionGame,
    InterventionalGame,
    LocalModelGame,
    MarginalScoreGame,
    RetrainGame,
    TableGame,
    UnanimityGame,
    make_model_function,
    planted_unanimity_game,
)

from brute_force import brute_force_shapley, interventional_value


def all_masks(d):
    codes = np.arange(2**d)
    return ((codes[:, None] >> np.arange(d)) & 1).astype(bool)


def as_mask(players, d):
    mask = np.zeros(d, dtype=bool)
    mask[list(players)] = True
    return mask


# ---------------------------------------------------------------- protocol and counters


def test_table_game_values_and_per_game_counts():
    d = 3
    rng = np.random.default_rng(0)
    tables = rng.normal(size=(2, 2**d))
    game = TableGame(tables)
    assert (game.n_players, game.n_games) == (d, 2)
    masks = all_masks(d)
    games = np.array([0, 1, 1, 0, 1, 1, 1, 0])
    np.testing.assert_array_equal(game(masks, games), tables[games, np.arange(2**d)])
    np.testing.assert_array_equal(game.n_evals, [3, 5])
    assert game.n_calls == 1
    game(masks[:2])  # default: game 0
    np.testing.assert_array_equal(game.n_evals, [5, 5])
    assert game.n_calls == 2
    assert game(np.zeros((0, d), dtype=bool)).shape == (0,)  # nothing evaluated, nothing counted
    assert game.n_calls == 2
    game.reset_counts()
    np.testing.assert_array_equal(game.n_evals, [0, 0])
    assert game.n_calls == 0


def test_table_game_bit_order_and_shared_table():
    # bit j of the index is player j: v({0}) = 1, v({1}) = 2, v({0, 1}) = 4
    game = TableGame([0.0, 1.0, 2.0, 4.0], n_games=3)
    assert game.n_games == 3
    masks = np.array([[True, False], [False, True], [True, True], [False, False]])
    np.testing.assert_array_equal(game(masks, np.array([0, 1, 2, 2])), [1.0, 2.0, 4.0, 0.0])
    np.testing.assert_array_equal(game.n_evals, [1, 1, 2])
    np.testing.assert_allclose(game.shapley_values(), [[1.5, 2.5]] * 3)


@pytest.mark.parametrize("d", [1, 2, 4, 6])
def test_table_game_shapley_matches_brute_force(d):
    rng = np.random.default_rng(d)
    tables = rng.normal(size=(2, 2**d))
    game = TableGame(tables)
    bits = 1 << np.arange(d)
    for g in range(2):
        expected = brute_force_shapley(lambda s, g=g: tables[g, int(bits[list(s)].sum())], d)
        np.testing.assert_allclose(game.shapley_values()[g], expected, atol=1e-12)
    assert game.n_evals.sum() == 0  # exact values are not charged


@pytest.mark.parametrize(
    ("table", "n_games", "match"),
    [
        ([1.0, 2.0, 3.0], None, "2\\^d"),
        ([1.0], None, "2\\^d"),
        ([], None, "2\\^d"),
        (5.0, None, "2\\^d"),
        (np.zeros((1, 2, 4)), None, "2\\^d"),
        ([0.0, np.nan], None, "NaN"),
        ([0.0, np.inf, 1.0, 2.0], None, "NaN or infinity"),
        (np.zeros((3, 4)), 2, "does not match"),
        ([0.0, 1.0], 0, "at least one"),
    ],
)
def test_table_game_validation(table, n_games, match):
    with pytest.raises(ValueError, match=match):
        TableGame(table, n_games=n_games)


def test_call_validation():
    game = TableGame(np.arange(8.0), n_games=2)
    with pytest.raises(ValueError, match="masks must have shape"):
        game(np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="masks must have shape"):
        game(np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="games must have shape"):
        game(np.ones((2, 3), dtype=bool), np.array([0]))
    with pytest.raises(ValueError, match="game indices"):
        game(np.ones((2, 3), dtype=bool), np.array([0, 2]))
    with pytest.raises(ValueError, match="game indices"):
        game(np.ones((1, 3), dtype=bool), np.array([-1]))
    np.testing.assert_array_equal(game.n_evals, [0, 0])  # failed calls are not counted
    with pytest.raises(ValueError, match="at least one player"):
        CallableGame(lambda m: m.sum(axis=1), n_players=0)
    with pytest.raises(TypeError, match="abstract"):
        CoalitionGame(2)


# ---------------------------------------------------------------- unanimity and callable games


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_unanimity_shapley_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    d = 7
    carriers = rng.random((10, d)) < 0.35
    carriers[np.arange(10), rng.integers(0, d, 10)] = True  # non-empty
    coefficients = rng.normal(size=10)
    game = UnanimityGame(carriers, coefficients, n_games=2)
    closed = game.shapley_values()
    assert closed.shape == (2, d)
    # the base class enumerates 2^d coalitions; a callable wrapper uses it
    enumerated = CallableGame(lambda m: game.evaluate(m, np.zeros(len(m), np.intp)), d).shapley_values()
    np.testing.assert_allclose(closed, np.repeat(enumerated, 2, axis=0), atol=1e-12)
    brute = brute_force_shapley(
        lambda s: sum(c for r, c in zip(carriers, coefficients, strict=True) if set(np.flatnonzero(r)) <= set(s)), d
    )
    np.testing.assert_allclose(closed[0], brute, atol=1e-12)
    masks = all_masks(d)
    expected = (carriers[None, :, :] <= masks[:, None, :]).all(axis=2) @ coefficients
    np.testing.assert_allclose(game(masks), expected, atol=1e-12)


def test_unanimity_validation():
    with pytest.raises(ValueError, match="at least one player"):
        UnanimityGame([[True, False], [False, False]], [1.0, 2.0])
    with pytest.raises(ValueError, match="carriers must be"):
        UnanimityGame([[True, False]], [1.0, 2.0])
    with pytest.raises(ValueError, match="carriers must be"):
        UnanimityGame([True, False], [1.0])


def test_planted_unanimity_game():
    game = planted_unanimity_game(12, 3, np.random.default_rng(123), n_games=4)
    assert (game.n_players, game.n_games) == (12, 4)
    assert game.carriers.shape == (27, 12)
    sizes = game.carriers.sum(axis=1)
    assert sizes[:24].min() >= 1 and sizes[:24].max() <= 4
    np.testing.assert_array_equal(sizes[24:], 1)  # the planted singletons, on distinct players
    assert len(set(np.flatnonzero(game.carriers[24:].any(axis=0)))) == 3
    np.testing.assert_array_equal(game.coefficients[24:], 1.5)
    assert np.abs(game.coefficients[:24]).max() <= 1.0
    again = planted_unanimity_game(12, 3, np.random.default_rng(123))
    np.testing.assert_array_equal(again.carriers, game.carriers)
    np.testing.assert_array_equal(game.shapley_values()[0], game.shapley_values()[3])
    # with the spec's recipe the boosted players lead at this seed
    phi = game.shapley_values()[0]
    boosted = np.flatnonzero(game.carriers[24:].any(axis=0))
    assert set(np.argsort(-phi)[:3]) == set(boosted)
    small = planted_unanimity_game(3, 1, np.random.default_rng(0), n_terms=5, max_order=8)
    assert small.carriers.sum(axis=1).max() <= 3  # orders capped at the number of players


def test_callable_game_shapes_and_games_argument():
    seen = []

    def f(masks, games):
        seen.append(games.copy())
        return (masks.sum(axis=1) + 10 * games)[:, None]  # (m, 1) is accepted

    game = CallableGame(f, n_players=3, n_games=2)
    values = game(np.ones((3, 3), dtype=bool), np.array([1, 0, 1]))
    np.testing.assert_array_equal(values, [13.0, 3.0, 13.0])
    np.testing.assert_array_equal(seen[0], [1, 0, 1])
    np.testing.assert_array_equal(game.n_evals, [1, 2])
    np.testing.assert_allclose(game.shapley_values(), [[1.0, 1.0, 1.0]] * 2)

    bad = CallableGame(lambda m: np.zeros((len(m), 2)), n_players=2)
    with pytest.raises(ValueError, match="returned shape"):
        bad(np.ones((4, 2), dtype=bool))
    with pytest.raises(TypeError, match="callable"):
        CallableGame("not a function", n_players=2)


def test_symmetric_square_game_closed_form():
    # v(S) = |S|^2: phi_i = d for every player
    for d in (2, 3, 5, 8):
        phi = CallableGame(lambda m: m.sum(axis=1) ** 2.0, d).shapley_values()
        np.testing.assert_allclose(phi, np.full((1, d), float(d)), atol=1e-12)


def test_enumeration_refuses_large_games():
    game = CallableGame(lambda m: m.sum(axis=1), MAX_EXACT_FEATURES + 1)
    with pytest.raises(ValueError, match="not feasible"):
        game.shapley_values()


# ---------------------------------------------------------------- local model game


def test_local_model_game_regressor():
    X, y = load_diabetes(return_X_y=True)
    X = X[:, :5]
    model = Ridge(alpha=0.1).fit(X, y)
    background, rows = X[:20], X[100:103]
    inner = InterventionalGame(make_model_function(model, "predict", CpuBackend()), background)
    game = LocalModelGame(inner, rows, np.zeros(3, dtype=np.intp))
    d = X.shape[1]
    assert (game.n_players, game.n_games) == (d, 3)
    full = np.ones((3, d), dtype=bool)
    empty = np.zeros((3, d), dtype=bool)
    np.testing.assert_allclose(game(full, np.arange(3)), model.predict(rows), rtol=1e-12)
    np.testing.assert_allclose(game(empty, np.arange(3)), np.full(3, model.predict(background).mean()), rtol=1e-12)
    rng = np.random.default_rng(0)
    masks = rng.random((12, d)) < 0.5
    games = rng.integers(0, 3, 12)
    expected = [
        interventional_value(model.predict, rows[g], background, np.flatnonzero(m))
        for m, g in zip(masks, games, strict=True)
    ]
    np.testing.assert_allclose(game(masks, games), expected, rtol=1e-10)
    np.testing.assert_array_equal(game.n_evals, np.bincount(games, minlength=3) + 2)
    # the game's exact Shapley values are the interventional ones (efficiency: f(x) - E f)
    phi = game.shapley_values()
    for g in range(3):
        brute = brute_force_shapley(lambda s, g=g: interventional_value(model.predict, rows[g], background, s), d)
        np.testing.assert_allclose(phi[g], brute, atol=1e-10)


def test_local_model_game_picks_each_rows_output():
    rng = np.random.default_rng(1)
    d = 4
    background = rng.normal(size=(8, d))
    rows = rng.normal(size=(3, d))

    def f(Z):
        return np.column_stack([Z[:, 0] * Z[:, 1], Z[:, 2] - Z[:, 3], Z.sum(axis=1)])

    inner = InterventionalGame(make_model_function(f, "predict", CpuBackend()), background)
    outputs = np.array([2, 0, 1])
    game = LocalModelGame(inner, rows, outputs)
    masks = rng.random((9, d)) < 0.5
    games = np.repeat(np.arange(3), 3)
    expected = [
        interventional_value(f, rows[g], background, np.flatnonzero(m))[outputs[g]]
        for m, g in zip(masks, games, strict=True)
    ]
    np.testing.assert_allclose(game(masks, games), expected, rtol=1e-12)
    np.testing.assert_allclose(game(np.ones((3, d), bool), np.arange(3)), f(rows)[np.arange(3), outputs])


# ---------------------------------------------------------------- global score games


def _diabetes(n=200, seed=0):
    X, y = load_diabetes(return_X_y=True)
    # a slice no other test uses: retrain scores are memoised across games on the same data
    rows = np.random.default_rng(seed).choice(len(y), n, replace=False)
    return X[rows], y[rows]


def test_retrain_game_regressor_matches_cross_val_score():
    X, y = _diabetes(seed=11)
    d = X.shape[1]
    cv = KFold(4, shuffle=True, random_state=0)
    game = RetrainGame(Ridge(alpha=0.5), X, y, cv=cv, scoring=None, n_jobs=None)
    unique_before = game.n_unique
    empty, full = np.zeros(d, bool), np.ones(d, bool)
    subset = as_mask([0, 2, 3], d)
    values = game(np.stack([empty, full, subset, full, subset, subset]))
    np.testing.assert_allclose(values[0], cross_val_score(DummyRegressor(), X[:, :1], y, cv=cv).mean(), rtol=1e-12)
    np.testing.assert_allclose(values[1], cross_val_score(Ridge(alpha=0.5), X, y, cv=cv).mean(), rtol=1e-12)
    np.testing.assert_allclose(values[2], cross_val_score(Ridge(alpha=0.5), X[:, subset], y, cv=cv).mean())
    np.testing.assert_array_equal(values[[3, 4, 5]], values[[1, 2, 2]])
    assert values[0] <= 0.0 < values[1]  # a constant predictor has R^2 <= 0 out of fold
    assert game.n_evals[0] == 6  # repeated coalitions are charged ...
    assert game.n_unique - unique_before == 3  # ... but scored once
    game(np.stack([full, empty]))
    assert (game.n_evals[0], game.n_unique - unique_before) == (8, 3)


def test_retrain_game_default_cv_and_scoring():
    X, y = _diabetes(seed=12)
    d = X.shape[1]
    game = RetrainGame(Ridge(), X, y, cv=5, scoring="neg_mean_absolute_error", n_jobs=None)
    full = np.ones((1, d), bool)
    expected = cross_val_score(Ridge(), X, y, cv=5, scoring="neg_mean_absolute_error").mean()
    np.testing.assert_allclose(game(full), [expected], rtol=1e-12)


def test_retrain_game_classifier():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X[:300, :5])  # scaled: lbfgs converges in a few steps
    y = y[:300]
    d = X.shape[1]
    model = LogisticRegression()
    game = RetrainGame(model, X, y, cv=3, scoring=None, n_jobs=None)
    values = game(np.stack([np.zeros(d, bool), np.ones(d, bool)]))
    folds = StratifiedKFold(3)  # what cv=3 means for a classifier
    dummy = cross_val_score(DummyClassifier(strategy="prior"), X[:, :1], y, cv=folds).mean()
    np.testing.assert_allclose(values, [dummy, cross_val_score(model, X, y, cv=folds).mean()], rtol=1e-12)
    # the prior classifier's accuracy is the majority share of each test fold
    majority = np.mean([np.mean(y[test] == np.bincount(y[train]).argmax()) for train, test in folds.split(X, y)])
    np.testing.assert_allclose(values[0], majority, rtol=1e-12)


def test_retrain_game_in_top_k_shapley():
    X, y = _diabetes(n=150, seed=13)
    game = RetrainGame(Ridge(), X, y, cv=3, scoring=None, n_jobs=None)
    result = top_k_shapley(game, 3, "cmcs", max_evals=40, random_state=0)
    assert result.n_evals[0] == game.n_evals[0] <= 40
    assert game.n_unique <= 40
    assert np.isfinite(result.values).all()


def _regressor_game(n_background=30):
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:120, :4], y[:120]
    model = Ridge(alpha=0.1).fit(X, y)
    inner = InterventionalGame(make_model_function(model, "predict", CpuBackend()), X[:n_background])
    return model, X, y, inner


def test_marginal_score_game_regressor():
    model, X, y, inner = _regressor_game()
    background = X[:30]
    d = X.shape[1]
    game = MarginalScoreGame(inner, X, y, scoring=None, classes=None)
    empty, full = np.zeros(d, bool), np.ones(d, bool)
    subset = as_mask([1, 3], d)
    values = game(np.stack([empty, full, subset, subset]))
    # v(N): every row completed by itself, i.e. the model's own score
    np.testing.assert_allclose(values[1], model.score(X, y), rtol=1e-12)
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
    inner = InterventionalGame(make_model_function(clf, "probability", CpuBackend()), X[::10])
    d = X.shape[1]
    accuracy = MarginalScoreGame(inner, X, y, scoring=None, classes=clf.classes_)
    values = accuracy(np.stack([np.zeros(d, bool), np.ones(d, bool)]))
    np.testing.assert_allclose(values[1], clf.score(X, y), rtol=1e-12)
    mean_proba = clf.predict_proba(X[::10])[:, 1].mean()
    np.testing.assert_allclose(values[0], accuracy_score(y, np.full(len(y), int(mean_proba > 0.5))), rtol=1e-12)
    nll = MarginalScoreGame(inner, X, y, scoring="neg_log_loss", classes=clf.classes_)
    values = nll(np.stack([np.zeros(d, bool), np.ones(d, bool)]))
    np.testing.assert_allclose(values[1], -log_loss(y, clf.predict_proba(X)), rtol=1e-10)
    np.testing.assert_allclose(values[0], -log_loss(y, np.full(len(y), mean_proba)), rtol=1e-10)


def test_marginal_score_game_multiclass():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    clf = LogisticRegression().fit(X, y)
    background = X[::7]
    inner = InterventionalGame(make_model_function(clf, "probability", CpuBackend()), background)
    game = MarginalScoreGame(inner, X, y, scoring=None, classes=clf.classes_)
    d = X.shape[1]
    subset = as_mask([2], d)
    values = game(np.stack([np.zeros(d, bool), np.ones(d, bool), subset]))
    np.testing.assert_allclose(values[1], clf.score(X, y), rtol=1e-12)
    majority = clf.predict_proba(background).mean(axis=0).argmax()
    np.testing.assert_allclose(values[0], np.mean(y == majority), rtol=1e-12)
    completed = np.repeat(background[None], len(X), axis=0)  # (rows, background, d)
    completed[:, :, 2] = X[:, None, 2]
    proba = clf.predict_proba(completed.reshape(-1, d)).reshape(len(X), len(background), -1).mean(axis=1)
    np.testing.assert_allclose(values[2], np.mean(y == proba.argmax(axis=1)), rtol=1e-12)
