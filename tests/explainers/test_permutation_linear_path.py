"""The linear path of "auto": a linear model's values in closed form, a logistic probability by enumeration."""

from itertools import combinations
from math import factorial

import numpy as np
import pandas as pd
import pytest
from sklearn.cross_decomposition import PLSRegression
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import (
    LinearRegression,
    LogisticRegression,
    PoissonRegressor,
    RANSACRegressor,
    Ridge,
    SGDClassifier,
)
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, QuantileTransformer, StandardScaler

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.backends import linked_linear_table
from tests.brute_force import brute_force_shapley, faith_interactions, interventional_value
from tests.exact_path_checks import assert_auto_takes_the_enumerated_values

D = 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, D)) * [1.0, 2.0, 0.5, 1.0, 3.0] + [0.0, 1.0, -1.0, 0.0, 2.0]
    margin = X @ [1.0, -0.5, 2.0, 0.0, 0.3] + 0.5 * rng.normal(size=300)
    return X, margin


def _logit(p):
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p / (1 - p))


MODEL_NAMES = [
    "logistic_probability",
    "logistic_log_odds",
    "logistic_margin",
    "multinomial_probabilities",
    "linear_regression",
    "ridge_two_targets",
    "poisson",
    "pls_two_targets",
    "ransac",
    "discriminant_probability",
    "discriminant_probabilities",
    "naive_bayes_probability",
    "naive_bayes_log_odds",
    "naive_bayes_probabilities",
]


@pytest.fixture(scope="module")
def models(data):
    """(model, ``output``, the explained output written from the model's public API) by name."""
    X, margin = data
    labels, classes = margin > 0, np.digitize(margin, [-1.0, 1.0])
    logistic = make_pipeline(QuantileTransformer(n_quantiles=50), LogisticRegression()).fit(X, labels)
    multinomial = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, classes)
    regression = LinearRegression().fit(X, margin)
    ridge = Ridge().fit(X, np.column_stack([margin, X[:, 0] - X[:, 4]]))
    poisson = PoissonRegressor().fit(X, np.round(np.exp(margin / 4)))
    discriminant = LinearDiscriminantAnalysis().fit(X, labels)
    pls = PLSRegression(n_components=2).fit(X, np.column_stack([margin, X[:, 0] * X[:, 1]]))
    ransac = RANSACRegressor(random_state=0).fit(X, margin)
    bayes = make_pipeline(QuantileTransformer(n_quantiles=50), GaussianNB()).fit(X, labels)
    bayes_classes = GaussianNB().fit(X, classes)
    discriminants = make_pipeline(StandardScaler(), LinearDiscriminantAnalysis(solver="lsqr")).fit(X, classes)
    return {
        "logistic_probability": (logistic, "probability", lambda r: logistic.predict_proba(r)[:, 1]),
        "logistic_log_odds": (logistic, "log_odds", lambda r: _logit(logistic.predict_proba(r)[:, 1])),
        "logistic_margin": (logistic, "auto", logistic.decision_function),
        "multinomial_probabilities": (multinomial, "probability", multinomial.predict_proba),
        "linear_regression": (regression, "auto", regression.predict),
        "ridge_two_targets": (ridge, "auto", ridge.predict),
        "poisson": (poisson, "auto", poisson.predict),
        "pls_two_targets": (pls, "auto", pls.predict),
        "ransac": (ransac, "auto", ransac.predict),
        "discriminant_probability": (discriminant, "probability", lambda r: discriminant.predict_proba(r)[:, 1]),
        "discriminant_probabilities": (discriminants, "probability", discriminants.predict_proba),
        "naive_bayes_probability": (bayes, "probability", lambda r: bayes.predict_proba(r)[:, 1]),
        "naive_bayes_log_odds": (bayes, "auto", lambda r: _logit(bayes.predict_proba(r)[:, 1])),
        "naive_bayes_probabilities": (bayes_classes, "probability", bayes_classes.predict_proba),
    }


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_auto_gives_the_enumerated_values_of_the_interventional_game(data, models, name):
    X, _ = data
    model, output, predict = models[name]
    explanation = assert_auto_takes_the_enumerated_values(model, output, predict, X[:3], X[100:120], "linear")
    assert (explanation.diagnostics["n_model_calls"], explanation.diagnostics["n_model_rows"]) == (1, 3)


def test_the_table_is_the_linked_margin_on_every_hybrid_row(data):
    X, margin = data
    model = LogisticRegression().fit(X, np.digitize(margin, [-1.0, 1.0]))
    x, background = X[:2], X[50:56]
    table = linked_linear_table(model.coef_.T, x, background, model.intercept_, np.arange(D), D, "softmax")
    for row in range(2):
        for code in range(1 << D):
            hybrid = background.copy()
            members = [j for j in range(D) if code >> j & 1]
            hybrid[:, members] = x[row, members]
            np.testing.assert_allclose(table[row, code], model.predict_proba(hybrid).mean(axis=0), rtol=1e-12)


def test_columns_of_no_player_always_take_the_background_rows_values_in_the_table(data):
    X, margin = data
    model = LogisticRegression().fit(X, margin > 0)
    x, background = X[:2], X[50:56]
    players = np.array([-1, 1, 0, -1, 1])  # columns 0 and 3 in no coalition; 1 and 4 one player
    table = linked_linear_table(model.coef_.T, x, background, model.intercept_, players, 2, "sigmoid")
    for row in range(2):
        for code in range(1 << 2):
            hybrid = background.copy()
            members = [j for j in range(D) if players[j] >= 0 and code >> players[j] & 1]
            hybrid[:, members] = x[row, members]
            expected = model.predict_proba(hybrid)[:, 1].mean()
            np.testing.assert_allclose(table[row, code, 0], expected, rtol=1e-12)


def test_the_interp_link_table_is_the_interpolated_margin_on_every_hybrid_row(data):
    X, margin = data
    coef, offset = np.array([[1.0], [-0.5], [2.0], [0.0], [0.3]]), np.array([0.2])
    knots = np.array([[-3.0, -1.0, 0.5, 2.0], [0.0, 0.1, 0.7, 1.0]])
    x, background = X[:2], X[50:56]
    table = linked_linear_table(coef, x, background, offset, np.arange(D), D, "interp", knots=knots)
    for row in range(2):
        for code in range(1 << D):
            hybrid = background.copy()
            members = [j for j in range(D) if code >> j & 1]
            hybrid[:, members] = x[row, members]
            expected = np.interp(hybrid @ coef[:, 0] + offset[0], knots[0], knots[1]).mean()
            np.testing.assert_allclose(table[row, code, 0], expected, rtol=1e-12)


def test_a_naive_bayes_grouped_features_get_the_enumerated_values_of_the_groups(data):
    X, margin = data
    model = GaussianNB().fit(X, np.digitize(margin, [-1.0, 1.0]))
    frame = pd.DataFrame(X, columns=list("abcde"))
    explainer = PermutationShapExplainer(
        model, output="probability", feature_groups={"ae": ["a", "e"], "bd": ["b", "d"]}, background_size=None
    ).fit(frame.iloc[60:76])
    assert explainer.algorithm_ == "linear"
    members = [[0, 4], [1, 3], [2]]  # players by first column: ae, bd, c
    background = X[60:76]
    for x, phi in zip(X[:3], explainer.explain(frame.iloc[:3]).values, strict=True):

        def value(players, x=x):
            columns = [c for p in players for c in members[p]]
            return interventional_value(model.predict_proba, x, background, columns)

        np.testing.assert_allclose(phi, brute_force_shapley(value, 3), rtol=1e-9, atol=1e-12)


def test_a_naive_bayes_log_odds_are_additive_at_any_number_of_players():
    """Two classes' log-odds are the margin itself, linear in the terms: no enumeration, so 20 players are exact.

    The game is additive, so φ_i = v({i}) − v(∅), written from the model's own probabilities."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 20))
    model = GaussianNB().fit(X, X[:, 0] + X[:, 1] > 0)
    background, rows = X[:20], X[50:53]
    explainer = PermutationShapExplainer(model, output="log_odds", background_size=None).fit(background)
    assert explainer.algorithm_ == "linear"

    def log_odds(r):
        p = model.predict_proba(r)[:, 1]
        return np.log(p / (1 - p))

    for x, phi in zip(rows, explainer.explain(rows).values, strict=True):
        empty = interventional_value(log_odds, x, background, [])
        expected = [interventional_value(log_odds, x, background, [i]) - empty for i in range(20)]
        np.testing.assert_allclose(phi, expected, rtol=1e-9, atol=1e-11)


def test_feature_groups_and_pairs_are_the_enumerated_ones(data):
    X, margin = data
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = LogisticRegression().fit(frame, margin > 0)

    def predict(rows):
        return model.predict_proba(pd.DataFrame(rows, columns=list("abcde")))[:, 1]

    groups = {"ab": ["a", "b"], "de": ["d", "e"]}
    grouped = PermutationShapExplainer(
        model, output="probability", feature_groups=groups, background_size=None, progress=False
    ).fit(frame.iloc[60:76])
    assert grouped.algorithm_ == "linear"
    members = [[0, 1], [2], [3, 4]]  # players by first column: ab, c, de
    background = X[60:76]
    for x, phi in zip(X[:3], grouped.explain(frame.iloc[:3]).values, strict=True):

        def value(players, x=x):
            columns = [c for p in players for c in members[p]]
            return interventional_value(predict, x, background, columns)[()]

        np.testing.assert_allclose(phi, brute_force_shapley(value, 3), rtol=1e-9, atol=1e-12)
    explainer = PermutationShapExplainer(model, output="probability", background_size=None, progress=False)
    explainer.fit(frame.iloc[60:76])
    sii = explainer.explain_interactions(frame.iloc[:2], index="SII", max_evals=20)
    faith = explainer.explain_interactions(frame.iloc[:2], index="FSII", max_evals=20)
    assert sii.diagnostics["exact"]
    for x, sii_matrix, faith_matrix in zip(X[:2], sii.values, faith.values, strict=True):
        table = np.array(
            [
                np.atleast_1d(interventional_value(predict, x, background, [j for j in range(D) if code >> j & 1]))
                for code in range(1 << D)
            ]
        )
        for i, j in combinations(range(D), 2):
            others = [c for c in range(D) if c not in (i, j)]
            expected = sum(
                factorial(len(s))
                * factorial(D - len(s) - 2)
                / factorial(D - 1)
                * (
                    table[sum(1 << c for c in (*s, i, j)), 0]
                    - table[sum(1 << c for c in (*s, i)), 0]
                    - table[sum(1 << c for c in (*s, j)), 0]
                    + table[sum(1 << c for c in s), 0]
                )
                for size in range(D - 1)
                for s in combinations(others, size)
            )
            np.testing.assert_allclose(sii_matrix[i, j], expected, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(faith_matrix, faith_interactions(table)[:, :, 0], rtol=1e-8, atol=1e-10)


def test_an_additive_game_has_no_pairs_and_its_values_on_the_diagonal(data):
    X, margin = data
    model = LinearRegression().fit(X, margin)
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(X[:30])
    values = explainer.explain(X[:2]).values
    for index in ("shap", "SII", "STII", "FSII"):
        matrix = explainer.explain_interactions(X[:2], index=index).values
        np.testing.assert_allclose(matrix[:, range(D), range(D)], values, atol=1e-12)
        np.testing.assert_array_equal(matrix.sum(axis=2) - matrix[:, range(D), range(D)], 0.0)
    expected = (X[:2] - X[:30].mean(axis=0)) * model.coef_  # φ_i = w_i (x_i − E z_i)
    np.testing.assert_allclose(values, expected, rtol=1e-12, atol=1e-12)


def test_what_the_weights_do_not_give_samples_and_the_explicit_path_refuses(data):
    X, margin = data
    one_vs_rest = SGDClassifier(loss="log_loss", random_state=0).fit(X, np.digitize(margin, [-1.0, 1.0]))
    sampled = PermutationShapExplainer(one_vs_rest, output="probability", background_size=10, progress=False)
    assert sampled.fit(X).algorithm_ not in ("linear", "tree", "product_kernel")  # normalized one-vs-rest
    forced = PermutationShapExplainer(one_vs_rest, output="probability", algorithm="linear", background_size=10)
    with pytest.raises(ValueError, match="does not give the explained output"):
        forced.set_params(progress=False).fit(X)
    mixing = make_pipeline(PolynomialFeatures(2), LinearRegression()).fit(X, margin)
    with pytest.raises(TypeError, match="not read as column-wise"):
        PermutationShapExplainer(mixing, algorithm="linear", background_size=10, progress=False).fit(X)
    wide = np.random.default_rng(0).normal(size=(100, 17))
    logistic = LogisticRegression().fit(wide, wide[:, 0] > 0)
    assert PermutationShapExplainer(logistic, output="probability", background_size=10, progress=False).fit(
        wide
    ).algorithm_ not in ("linear",)
    assert PermutationShapExplainer(logistic, background_size=10, progress=False).fit(wide).algorithm_ == "linear"
    with pytest.raises(ValueError, match="2\\^p coalitions, for p <= 16"):
        PermutationShapExplainer(
            logistic, output="probability", algorithm="linear", background_size=10, progress=False
        ).fit(wide)


def test_a_model_refitted_in_place_is_refused(data):
    X, margin = data
    model = LogisticRegression().fit(X, margin > 0)
    explainer = PermutationShapExplainer(model, output="probability", background_size=20, progress=False).fit(X)
    model.fit(X, margin > 1)
    with pytest.raises(ValueError, match="differs from what was read from it in fit \\(its weights"):
        explainer.explain(X[:2])


def test_sparse_weights_and_linear_svms_are_read(data):
    from sklearn.svm import LinearSVC

    X, margin = data
    sparse = LogisticRegression().fit(X, margin > 0).sparsify()
    svm = LinearSVC().fit(X, np.digitize(margin, [-1.0, 1.0]))
    rows, background = X[:2], X[40:55]
    for model, output, predict in (
        (sparse, "probability", lambda r: sparse.predict_proba(r)[:, 1]),
        (svm, "auto", svm.decision_function),
    ):
        explainer = PermutationShapExplainer(model, output=output, background_size=None, progress=False)
        assert explainer.fit(background).algorithm_ == "linear"
        values = explainer.explain(rows).values.reshape(2, D, -1)
        for x, phi in zip(rows, values, strict=True):
            expected = brute_force_shapley(lambda s, x=x, f=predict: interventional_value(f, x, background, s), D)
            np.testing.assert_allclose(phi, expected.reshape(D, -1), rtol=1e-9, atol=1e-12)


def _naive_bayes_far_apart():
    """Two classes far apart: a row whose features push hard both ways has coalitions past the clip (|m| > 27.6)."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 400)
    X = rng.normal(size=(400, 2)) + np.where(labels[:, None] == 1, 2.0, -2.0)
    return GaussianNB().fit(X, labels), rng.normal(size=(20, 2)) * 0.5


def test_naive_bayes_log_odds_past_the_clip_are_the_clipped_ones():
    """A review's case: the margin itself had [50.2, -54.9] where the clipped log-odds give [25.3, -30.0]."""
    model, background = _naive_bayes_far_apart()
    rows = np.array([[10.0, -10.0], [0.3, -0.2], [5.0, 0.1]])  # past the clip; within it; confident (log-odds 21)
    # the model's own log-odds near p = 1 carry its rounding over p (1 - p): 2e-5 at log-odds 21
    explanation = assert_auto_takes_the_enumerated_values(
        model, "log_odds", lambda r: _logit(model.predict_proba(r)[:, 1]), rows, background, "linear", atol=1e-4
    )
    assert abs(explanation.values[0, 0] - 25.28) < 0.01


def test_naive_bayes_log_odds_past_the_clip_with_too_many_players_are_refused():
    model, background = _naive_bayes_far_apart()
    wide = np.hstack([np.zeros((300, 18)), np.random.default_rng(1).normal(size=(300, 2))])
    wide_model = GaussianNB().fit(
        wide + np.random.default_rng(2).normal(size=wide.shape) * 0.1, model.predict(wide[:, 18:])
    )
    explainer = PermutationShapExplainer(wide_model, background_size=None, progress=False).fit(wide[:20])
    assert explainer.algorithm_ == "linear"
    explainer.explain(wide[20:22])  # within the clip: the margin's values
    far = wide[:1].copy()
    far[0, 18:] = [40.0, -40.0]
    with pytest.raises(ValueError, match="reach, on some coalitions, the clip"):
        explainer.explain(far)


@pytest.mark.parametrize("polynomial", [False, True])
def test_a_log_link_is_read_from_the_model_even_where_one_background_row_fits_both_links(data, polynomial):
    """A review's case: with one background row the identity fitted the background as well as exp did."""
    X, margin = data
    model = PoissonRegressor().fit(X, np.round(np.exp(margin / 4)))
    if polynomial:
        model = make_pipeline(PolynomialFeatures(2), PoissonRegressor(max_iter=500)).fit(
            X, np.round(np.exp(margin / 4))
        )
    baseline = np.median(X, axis=0, keepdims=True)
    path = "quadratic" if polynomial else "linear"
    assert_auto_takes_the_enumerated_values(model, "predict", model.predict, X[:3], baseline, path)
