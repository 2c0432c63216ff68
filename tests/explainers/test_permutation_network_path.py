"""The network path of "auto": a multilayer perceptron's game on every coalition, from its layers' weights."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_shapq import PermutationShapExplainer
from tests.brute_force import brute_force_shapley, interventional_value
from tests.exact_path_checks import (
    assert_auto_takes_the_enumerated_values,
    assert_groups_and_faith_pairs_are_enumerated,
)

D = 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, D)) * [1.0, 3.0, 0.5, 1.0, 2.0]
    y = X[:, 0] * X[:, 1] / 3 + np.sin(X[:, 2] * 2) + X[:, 4] / 2 + 0.2 * rng.normal(size=300)
    return X, y


def _fitted(model, X, y):
    with warnings.catch_warnings():  # short fits: the tests need a network, not a converged one
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


MODEL_NAMES = [
    "scaled_tanh_regressor",
    "poisson_regressor",
    "two_outputs_identity_regressor",
    "binary_probability",
    "binary_log_odds_logistic",
    "class_probabilities",
    "class_log_odds",
]


@pytest.fixture(scope="module")
def models(data):
    """(model, ``output``, the explained output from the model's public API) by name."""
    X, y = data
    tanh = _fitted(
        make_pipeline(StandardScaler(), MLPRegressor(hidden_layer_sizes=(12, 6), activation="tanh", random_state=0)),
        X,
        y,
    )
    poisson = _fitted(MLPRegressor(loss="poisson", hidden_layer_sizes=(8,), random_state=0), X, np.exp(y / 2))
    two = _fitted(MLPRegressor(hidden_layer_sizes=(6, 5, 4), activation="identity", random_state=0), X, np.c_[y, -y])
    binary = _fitted(MLPClassifier(hidden_layer_sizes=(10,), random_state=0), X, y > 0)
    logistic = _fitted(MLPClassifier(hidden_layer_sizes=(7,), activation="logistic", random_state=0), X, y > 0)
    classes = _fitted(
        make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(9, 4), random_state=0)),
        X,
        np.digitize(y, [-1, 1]),
    )

    def log_odds(proba):
        p = np.clip(proba, 1e-12, 1 - 1e-12)
        return np.log(p / (1 - p))

    return {
        "scaled_tanh_regressor": (tanh, "auto", tanh.predict),
        "poisson_regressor": (poisson, "auto", poisson.predict),
        "two_outputs_identity_regressor": (two, "auto", two.predict),
        "binary_probability": (binary, "probability", lambda r: binary.predict_proba(r)[:, 1]),
        "binary_log_odds_logistic": (logistic, "auto", lambda r: log_odds(logistic.predict_proba(r)[:, 1])),
        "class_probabilities": (classes, "probability", classes.predict_proba),
        "class_log_odds": (classes, "log_odds", lambda r: log_odds(classes.predict_proba(r))),
    }


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_auto_gives_the_enumerated_values_of_the_interventional_game(data, models, name):
    X, _ = data
    model, output, predict = models[name]
    assert_auto_takes_the_enumerated_values(model, output, predict, X[:3], X[100:115], "network", atol=1e-11)


def test_past_eight_players_every_coalition_is_the_models_own(data):
    """Ten players: the coalitions span several blocks of the low players' sums."""
    X, y = data
    rng = np.random.default_rng(1)
    wide = np.c_[X, rng.normal(size=(X.shape[0], 5))]
    model = _fitted(MLPClassifier(hidden_layer_sizes=(16, 8), random_state=0), wide, y > 0)
    rows, background = wide[:2], wide[100:104]
    explainer = PermutationShapExplainer(model, output="probability", background_size=None, progress=False)
    explainer.fit(background)
    assert explainer.algorithm_ == "network"
    table = explainer._exact_path._table(rows)
    for x, row_table in zip(rows, table, strict=True):
        expected = [
            interventional_value(
                lambda r: model.predict_proba(r)[:, 1], x, background, [j for j in range(10) if code >> j & 1]
            )
            for code in range(1 << 10)
        ]
        np.testing.assert_allclose(row_table[:, 0], expected, rtol=1e-12, atol=1e-14)
    phi = explainer.explain(rows[:1]).values[0]
    expected = brute_force_shapley(
        lambda s: interventional_value(lambda r: model.predict_proba(r)[:, 1], rows[0], background, s)[()], 10
    )
    np.testing.assert_allclose(phi, expected, rtol=1e-10, atol=1e-13)


def test_feature_groups_and_faith_pairs_are_enumerated(data):
    X, y = data
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = _fitted(MLPRegressor(hidden_layer_sizes=(10,), random_state=0), frame, y)

    def predict(rows):
        return model.predict(pd.DataFrame(rows, columns=list("abcde")))

    assert_groups_and_faith_pairs_are_enumerated(model, "auto", X, predict, slice(60, 72), "network")


def test_an_ensemble_with_a_network_member_is_the_weighted_sum_of_the_members_paths(data):
    from sklearn.ensemble import VotingRegressor
    from sklearn.linear_model import Ridge

    X, y = data
    mlp = MLPRegressor(hidden_layer_sizes=(10,), random_state=0)
    model = _fitted(VotingRegressor([("mlp", mlp), ("ols", Ridge())], weights=[2.0, 1.0]), X, y)
    assert_auto_takes_the_enumerated_values(model, "auto", model.predict, X[:2], X[100:112], "ensemble", atol=1e-11)


def test_a_log_transformed_target_is_the_exp_of_the_networks_score(data):
    from sklearn.compose import TransformedTargetRegressor

    X, y = data
    mlp = make_pipeline(StandardScaler(), MLPRegressor(hidden_layer_sizes=(8,), random_state=0))
    model = _fitted(TransformedTargetRegressor(mlp, func=np.log, inverse_func=np.exp), X, np.exp(y / 3))
    assert_auto_takes_the_enumerated_values(model, "auto", model.predict, X[:2], X[100:112], "ensemble", atol=1e-11)


def test_a_row_alone_is_bit_identical_to_the_row_in_a_batch(data):
    X, y = data
    model = _fitted(MLPRegressor(hidden_layer_sizes=(20, 10), random_state=0), X, y)
    explainer = PermutationShapExplainer(model, background_size=25, random_state=0, progress=False).fit(X)
    assert explainer.algorithm_ == "network"
    batch = explainer.explain(X[:6]).values
    for row in range(6):
        np.testing.assert_array_equal(explainer.explain(X[row : row + 1]).values[0], batch[row])


@pytest.mark.parametrize(
    ("make", "output", "match"),
    [
        (lambda: MLPClassifier(hidden_layer_sizes=(4,), max_iter=50), "predict", "not read from its layers"),
        (lambda: MLPClassifier(hidden_layer_sizes=(4,), max_iter=50), "multilabel", "multilabel"),
    ],
)
def test_what_is_not_read_samples_and_the_explicit_path_refuses(data, make, output, match):
    X, y = data
    labels = np.c_[y > 0, y > 1] if output == "multilabel" else y > 0
    output = "probability" if output == "multilabel" else output
    model = _fitted(make(), X, labels)
    sampled = PermutationShapExplainer(model, output=output, background_size=10, progress=False).fit(X)
    assert sampled.algorithm_ != "network"
    with pytest.raises(ValueError, match=match):
        PermutationShapExplainer(model, output=output, algorithm="network", background_size=10).fit(X)


def test_two_labels_are_two_outputs_not_a_binary_class(data):
    """A multilabel MLPClassifier of two labels has two probability columns that are no binary's: both explained
    (they were taken for one binary class, the second label's, silently)."""
    X, y = data
    model = _fitted(MLPClassifier(hidden_layer_sizes=(6,), max_iter=200, random_state=0), X, np.c_[y > 0, y > 1])
    explainer = PermutationShapExplainer(model, output="probability", background_size=None, progress=False)
    explanation = explainer.fit(X[100:110]).explain(X[:2])
    assert explainer.n_outputs_ == 2 and explainer.algorithm_ != "network"
    for x, phi in zip(X[:2], explanation.values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(model.predict_proba, x, X[100:110], s), D)
        np.testing.assert_allclose(phi, expected, rtol=1e-9, atol=1e-12)


def test_another_model_is_refused_by_the_explicit_path(data):
    from sklearn.linear_model import Ridge

    X, y = data
    with pytest.raises(TypeError, match="not a multilayer perceptron"):
        PermutationShapExplainer(Ridge().fit(X, y), algorithm="network", background_size=10).fit(X)


def test_beyond_the_enumerated_work_auto_samples_and_the_explicit_path_refuses():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 14))
    model = _fitted(MLPRegressor(hidden_layer_sizes=(100, 100), max_iter=5, random_state=0), X, X[:, 0])
    sampled = PermutationShapExplainer(model, background_size=10, progress=False).fit(X)
    assert sampled.algorithm_ != "network"
    assert any(reason.startswith("network: ") and "work per coalition" in reason for reason in sampled.exact_refusals_)
    with pytest.raises(ValueError, match=r"2\^p × \d+ \(its work per coalition\).* into at most 13 players"):
        PermutationShapExplainer(model, algorithm="network", background_size=10, progress=False).fit(X)
    narrow = _fitted(MLPRegressor(hidden_layer_sizes=(4,), max_iter=5, random_state=0), X, X[:, 0])
    assert PermutationShapExplainer(narrow, background_size=10, progress=False).fit(X).algorithm_ == "network"


def test_a_game_that_overflows_on_hybrid_rows_is_refused_not_nan(data):
    """A Poisson network's exp overflows on hybrids of a far row (the model gives inf there too): refused, as a
    sampled estimate refuses the model's infinite outputs, where it returned NaN values."""
    X, y = data
    model = _fitted(MLPRegressor(loss="poisson", hidden_layer_sizes=(8,), random_state=0), X, np.exp(y / 2))
    explainer = PermutationShapExplainer(model, background_size=20, progress=False).fit(X)
    far = X[:1] * 1e4
    background = explainer.background_
    with np.errstate(over="ignore"):
        hybrid_outputs = [
            model.predict(np.where([code >> j & 1 for j in range(D)], far, background)) for code in range(1 << D)
        ]
    assert not np.isfinite(hybrid_outputs).all()  # the model's own game is not finite there
    with pytest.raises(ValueError, match="NaN or infinite on hybrid rows of 1 of 1"):
        explainer.explain(far)
    assert np.isfinite(explainer.explain(X[:2]).values).all()


def test_a_model_refitted_in_place_is_refused(data):
    X, y = data
    model = _fitted(MLPRegressor(hidden_layer_sizes=(6,), max_iter=50, random_state=0), X, y)
    explainer = PermutationShapExplainer(model, background_size=20, progress=False).fit(X)
    _fitted(model, X, -y)
    with pytest.raises(ValueError, match="refitted or changed in place"):
        explainer.explain(X[:2])


def test_a_pca_before_the_network_folds_into_its_first_layer(data):
    from sklearn.decomposition import PCA

    X, y = data
    model = _fitted(
        make_pipeline(StandardScaler(), PCA(3, whiten=True), StandardScaler(), MLPClassifier((8,), random_state=0)),
        X,
        y > 0,
    )
    assert_auto_takes_the_enumerated_values(
        model, "probability", lambda rows: model.predict_proba(rows)[:, 1], X[:2], X[100:112], "network"
    )
