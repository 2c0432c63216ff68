"""The quadratic path of "auto": a quadratic margin's game enumerated (a quadratic discriminant, a linear model on
degree-2 polynomial features)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.covariance import EllipticEnvelope
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LogisticRegression, PoissonRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, PolynomialFeatures, QuantileTransformer, StandardScaler

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.backends import linked_quadratic_table
from tests.exact_path_checks import (
    assert_auto_takes_the_enumerated_values,
    assert_groups_and_faith_pairs_are_enumerated,
)

D = 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, D)) * [1.0, 2.0, 0.5, 1.0, 3.0] + [0.0, 1.0, -1.0, 0.0, 2.0]
    score = X[:, 0] * X[:, 1] - X[:, 2] ** 2 + 0.3 * X[:, 4] + 0.5 * rng.normal(size=300)
    return X, score


def _logit(p):
    return np.log(p / (1 - p))


MODEL_NAMES = [
    "probability",
    "log_odds",
    "margin",
    "class_probabilities",
    "scaled_margins",
    "polynomial_logistic",
    "polynomial_interactions_classes",
    "polynomial_poisson",
    "elliptic_envelope",
    "scaled_elliptic_envelope",
]


@pytest.fixture(scope="module")
def models(data):
    """(model, ``output``, the explained output written from the model's public API) by name."""
    X, score = data
    labels, classes = score > 0, np.digitize(score, [-1.0, 1.0])
    binary = make_pipeline(StandardScaler(), QuadraticDiscriminantAnalysis(reg_param=0.05)).fit(X, labels)
    three = QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, classes)
    scaled = make_pipeline(StandardScaler(), QuadraticDiscriminantAnalysis()).fit(X, classes)
    polynomial = make_pipeline(
        StandardScaler(), PolynomialFeatures(2), StandardScaler(), LogisticRegression(max_iter=1000)
    ).fit(X, labels)
    interactions = make_pipeline(
        PolynomialFeatures(2, interaction_only=True, include_bias=False), MinMaxScaler(), LogisticRegression()
    ).fit(X, classes)
    poisson = make_pipeline(StandardScaler(), PolynomialFeatures(2), PoissonRegressor()).fit(
        X, np.round(np.exp(np.clip(score / 4, -2, 2)))
    )
    envelope = EllipticEnvelope(random_state=0).fit(X)
    scaled_envelope = make_pipeline(StandardScaler(), EllipticEnvelope(random_state=0)).fit(X)
    return {
        "elliptic_envelope": (envelope, "auto", envelope.decision_function),  # auto: an outlier detector's score
        "scaled_elliptic_envelope": (scaled_envelope, "margin", scaled_envelope.decision_function),
        "polynomial_logistic": (polynomial, "probability", lambda r: polynomial.predict_proba(r)[:, 1]),
        "polynomial_interactions_classes": (interactions, "probability", interactions.predict_proba),
        "polynomial_poisson": (poisson, "auto", poisson.predict),
        "probability": (binary, "probability", lambda r: binary.predict_proba(r)[:, 1]),
        "log_odds": (binary, "log_odds", lambda r: _logit(binary.predict_proba(r)[:, 1])),
        "margin": (binary, "margin", binary.decision_function),
        "class_probabilities": (three, "probability", three.predict_proba),
        "scaled_margins": (scaled, "margin", scaled.decision_function),
    }


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_auto_gives_the_enumerated_values_of_the_interventional_game(data, models, name):
    X, _ = data
    model, output, predict = models[name]
    explanation = assert_auto_takes_the_enumerated_values(model, output, predict, X[:3], X[100:120], "quadratic")
    assert (explanation.diagnostics["n_model_calls"], explanation.diagnostics["n_model_rows"]) == (1, 3)


def test_the_table_is_the_margin_on_every_hybrid_row_whatever_the_players():
    rng = np.random.default_rng(3)
    quadratic, linear, offset = rng.normal(size=(D, D, 2)), rng.normal(size=(D, 2)), rng.normal(size=2)
    x, background = rng.normal(size=(2, D)), rng.normal(size=(4, D))
    player_of_column = np.array([0, 1, 1, 2, 0])  # groups: {0, 4}, {1, 2}, {3}
    table = linked_quadratic_table((quadratic, linear), x, background, offset, player_of_column, 3, "identity")
    for row in range(2):
        for code in range(1 << 3):
            hybrid = background.copy()
            columns = [j for j in range(D) if code >> player_of_column[j] & 1]
            hybrid[:, columns] = x[row, columns]
            margin = offset + hybrid @ linear + np.einsum("nj,jmk,nm->nk", hybrid, quadratic, hybrid)
            np.testing.assert_allclose(table[row, code], margin.mean(axis=0), rtol=1e-12, atol=1e-12)


def test_the_table_of_each_rows_own_players_and_background_parts_is_the_margin_on_its_hybrid_rows():
    rng = np.random.default_rng(4)
    quadratic, linear, offset = rng.normal(size=(D, D, 1)), rng.normal(size=(D, 1)), rng.normal(size=1)
    x, background = rng.normal(size=(2, D)), rng.normal(size=(6, D))
    players = np.array([[0, -1, 1, 1, -1], [-1, 0, 0, 1, 1]])  # each row its own; −1: in no coalition
    table = linked_quadratic_table((quadratic, linear), x, background, offset, players, 2, "sigmoid", parts=3)
    assert table.shape == (6, 4, 1)
    for row in range(2):
        for part in range(3):
            rows_of_part = background[2 * part : 2 * part + 2]
            for code in range(1 << 2):
                hybrid = rows_of_part.copy()
                columns = [j for j in range(D) if players[row, j] >= 0 and code >> players[row, j] & 1]
                hybrid[:, columns] = x[row, columns]
                margin = offset + hybrid @ linear + np.einsum("nj,jmk,nm->nk", hybrid, quadratic, hybrid)
                expected = (1 / (1 + np.exp(-margin))).mean(axis=0)
                np.testing.assert_allclose(table[row * 3 + part, code], expected, rtol=1e-12, atol=1e-14)


def test_feature_groups_and_pairs_are_the_enumerated_ones(data):
    X, score = data
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = QuadraticDiscriminantAnalysis(reg_param=0.05).fit(frame, score > 0)

    def predict(rows):
        return model.predict_proba(pd.DataFrame(rows, columns=list("abcde")))[:, 1]

    assert_groups_and_faith_pairs_are_enumerated(model, "probability", X, predict, slice(60, 76), "quadratic")


def test_beyond_sixteen_players_auto_samples_and_the_explicit_path_refuses():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 17))
    model = QuadraticDiscriminantAnalysis().fit(X, X[:, 0] * X[:, 1] > 0)
    sampled = PermutationShapExplainer(model, output="margin", background_size=10, progress=False).fit(X)
    assert sampled.algorithm_ != "quadratic"
    with pytest.raises(ValueError, match="at most 16"):
        PermutationShapExplainer(model, output="margin", algorithm="quadratic", background_size=10).fit(X)


@pytest.mark.parametrize(
    ("steps", "error", "match"),
    [
        (lambda: [PolynomialFeatures(3), LogisticRegression(max_iter=5000)], ValueError, "degree 3"),
        (
            lambda: [PolynomialFeatures(2), QuantileTransformer(n_quantiles=20), LogisticRegression()],
            TypeError,
            "after",
        ),
    ],
)
def test_polynomials_not_read_sample_and_the_explicit_path_refuses(data, steps, error, match):
    X, score = data
    model = make_pipeline(*steps()).fit(X, score > 0)
    sampled = PermutationShapExplainer(model, output="probability", background_size=10, progress=False).fit(X)
    assert sampled.algorithm_ != "quadratic"
    with pytest.raises(error, match=match):
        PermutationShapExplainer(model, output="probability", algorithm="quadratic", background_size=10).fit(X)


def test_other_models_and_labels_are_refused_by_the_explicit_path(data):
    X, score = data
    with pytest.raises(TypeError, match="not a fitted quadratic discriminant"):
        PermutationShapExplainer(RandomForestRegressor(3).fit(X, score), algorithm="quadratic").fit(X[:10])
    model = QuadraticDiscriminantAnalysis().fit(X, score > 0)
    with pytest.raises(ValueError, match="class label"):
        PermutationShapExplainer(model, output="predict", algorithm="quadratic").fit(X[:10])
