"""The tree path through a link (a boosted classifier's probability, a forest's log-odds, a log link): enumerated."""

from itertools import combinations
from math import factorial

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
)

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.backends import TreeArrays, linked_tree_table, tree_predict
from sklearn_shapq.backends._linked_trees import _zeta_transform
from sklearn_shapq.explainers._tree_models import extract_trees
from tests.brute_force import brute_force_shapley, faith_interactions, interventional_value

xgboost = pytest.importorskip("xgboost")
lightgbm = pytest.importorskip("lightgbm")

D = 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, D))
    X[:, 4] = np.round(X[:, 4])  # ties with thresholds
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.5 * X[:, 3] ** 2 + X[:, 4] + 0.3 * rng.normal(size=300)
    missing = X.copy()
    missing[rng.random(X.shape) < 0.1] = np.nan
    return X, missing, y


def _softmax(margin):
    shifted = np.exp(margin - margin.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def _logit(p):
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p / (1 - p))


MODEL_NAMES = [
    "histogram_probability_nan",
    "histogram_log_odds",
    "forest_log_odds",
    "boosting_class_probabilities",
    "xgboost_class_probabilities",
    "xgboost_probability",
    "lightgbm_probability",
    "histogram_poisson",
    "xgboost_poisson",
    "lightgbm_poisson",
]


@pytest.fixture(scope="module")
def models(data):
    """(model, ``output``, the explained output written from the model's public API, the data) by name."""
    X, missing, y = data
    labels, classes = y > 0.5, np.digitize(y, [0.0, 1.0])
    counts = np.round(np.exp(y / 3))
    histogram = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(missing, labels)
    forest = RandomForestClassifier(15, max_depth=6, random_state=0).fit(X, labels)
    boosting = GradientBoostingClassifier(n_estimators=15, random_state=0).fit(X, classes)
    booster_classes = xgboost.XGBClassifier(n_estimators=15, max_depth=4).fit(X, classes)
    booster = xgboost.XGBClassifier(n_estimators=15, max_depth=4).fit(missing, labels)
    light = lightgbm.LGBMClassifier(n_estimators=15, num_leaves=8, verbose=-1).fit(X, labels)
    poisson = HistGradientBoostingRegressor(loss="poisson", max_iter=20, random_state=0).fit(X, counts)
    light_poisson = lightgbm.LGBMRegressor(n_estimators=15, num_leaves=8, objective="poisson", verbose=-1)
    light_poisson.fit(X, counts)
    booster_poisson = xgboost.XGBRegressor(n_estimators=15, max_depth=4, objective="count:poisson").fit(X, counts)
    return {
        "histogram_probability_nan": (histogram, "probability", lambda r: histogram.predict_proba(r)[:, 1], missing),
        "histogram_log_odds": (histogram, "log_odds", lambda r: _logit(histogram.predict_proba(r)[:, 1]), X),
        "forest_log_odds": (forest, "auto", lambda r: _logit(forest.predict_proba(r)[:, 1]), X),
        "boosting_class_probabilities": (boosting, "probability", boosting.predict_proba, X),
        "xgboost_class_probabilities": (
            booster_classes,
            "probability",
            lambda r: _softmax(booster_classes.predict(r, output_margin=True).astype(float)),
            X,
        ),
        "xgboost_probability": (booster, "probability", lambda r: booster.predict_proba(r)[:, 1], missing),
        "lightgbm_probability": (light, "probability", lambda r: light.predict_proba(r)[:, 1], X),
        "histogram_poisson": (poisson, "auto", poisson.predict, X),
        "xgboost_poisson": (booster_poisson, "auto", booster_poisson.predict, X),
        "lightgbm_poisson": (light_poisson, "auto", light_poisson.predict, X),
    }


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_auto_gives_the_enumerated_values_of_the_linked_game(models, name):
    model, output, predict, X = models[name]
    rows, background = X[:3], X[100:120]
    explainer = PermutationShapExplainer(model, output=output, background_size=None, progress=False).fit(background)
    assert (explainer.algorithm_, explainer.max_evals_, explainer.background_parts_) == ("tree", 0, 1)
    explanation = explainer.explain(rows)
    values = explanation.values.reshape(3, D, -1)
    # xgboost sums its leaves in float32: its game is known to float32 only
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if name.startswith("xgboost") else {"rtol": 1e-9, "atol": 1e-12}
    for x, phi in zip(rows, values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(predict, x, background, s), D)
        np.testing.assert_allclose(phi, expected.reshape(D, -1), **tolerance)
    total = values.sum(axis=1) + explanation.base_values.reshape(3, -1)
    np.testing.assert_allclose(total, np.asarray(predict(rows)).reshape(3, -1), **tolerance)
    np.testing.assert_array_equal(explanation.error_std, 0.0)
    assert (explanation.diagnostics["n_model_calls"], explanation.diagnostics["n_model_rows"]) == (1, 3)


def test_the_table_holds_the_linked_trees_on_every_hybrid_row(data):
    X, missing, y = data
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(missing, np.digitize(y, [0.0, 1.0]))
    trees = extract_trees(model, 3, "margin")
    offset = (model.decision_function(missing[:40]) - tree_predict(trees, missing[:40])).mean(axis=0)
    x, background = missing[:2], missing[40:47]
    table = linked_tree_table(trees, x, background, offset, np.arange(D), D, "softmax", log_odds=True, clip=1e-12)
    for row in range(2):
        for code in range(1 << D):
            hybrid = background.copy()
            members = [j for j in range(D) if code >> j & 1]
            hybrid[:, members] = x[row, members]
            expected = _logit(model.predict_proba(hybrid)).mean(axis=0)
            np.testing.assert_allclose(table[row, code], expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_players", range(9))
@pytest.mark.parametrize("n_outputs", [1, 3])
def test_the_zeta_transform_sums_each_coalitions_subsets(n_players, n_outputs):
    """Players three at a time, then one at a time: every count of players, each remainder of three."""
    moebius = np.random.default_rng(n_players).normal(size=(1 << n_players, n_outputs))
    flat = moebius.ravel().copy()
    _zeta_transform(flat, n_players, n_outputs)
    expected = [moebius[[u for u in range(1 << n_players) if u & s == u]].sum(axis=0) for s in range(1 << n_players)]
    np.testing.assert_allclose(flat.reshape(-1, n_outputs), expected, rtol=1e-12, atol=1e-12)


def test_columns_of_no_player_always_take_the_background_rows_values(data):
    X, missing, y = data
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(missing, y > 0.5)
    trees = extract_trees(model, 1, "margin")
    offset = (model.decision_function(missing[:40]) - tree_predict(trees, missing[:40])[:, 0]).mean(keepdims=True)
    x, background = missing[:2], missing[40:47]
    players = np.array([1, -1, 0, -1, 2])  # columns 1 and 3 in no coalition; the others in a shuffled order
    table = linked_tree_table(trees, x, background, offset, players, 3, "sigmoid")
    for row in range(2):
        for code in range(1 << 3):
            hybrid = background.copy()
            members = [j for j in range(D) if players[j] >= 0 and code >> players[j] & 1]
            hybrid[:, members] = x[row, members]
            expected = model.predict_proba(hybrid)[:, 1].mean()
            np.testing.assert_allclose(table[row, code, 0], expected, rtol=1e-9, atol=1e-12)


def test_a_stump_through_exp_has_the_closed_form_values():
    stump = TreeArrays(
        feature=np.array([0, -1, -1]),
        threshold=np.zeros(3),
        left=np.array([1, -1, -1]),
        right=np.array([2, -1, -1]),
        missing_left=np.zeros(3, bool),
        value=np.array([[0.0], [0.0], [1.0]]),
        roots=np.array([0]),
        strict=False,
        float32_inputs=False,
        float32_sums=False,
        max_depth=1,
    )
    table = linked_tree_table(stump, np.array([[1.0, 3.0]]), np.array([[-1.0, 0.0]]), np.array([0.5]), [0, 1], 2, "exp")
    low, high = np.exp(0.5), np.exp(1.5)  # column 0 from x moves the leaf; column 1 never matters
    np.testing.assert_allclose(table[0, :, 0], [low, high, low, high])


def test_feature_groups_get_the_enumerated_values_of_the_groups(data):
    X, _, y = data
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(frame, y > 0.5)
    groups = {"ab": ["a", "b"], "de": ["d", "e"]}
    explainer = PermutationShapExplainer(
        model, output="probability", feature_groups=groups, background_size=None, progress=False
    )
    explanation = explainer.fit(frame.iloc[60:76]).explain(frame.iloc[:3])
    assert explainer.algorithm_ == "tree"
    members = [[0, 1], [2], [3, 4]]  # players by first column: ab, c, de
    background = X[60:76]

    def predict(rows):
        return model.predict_proba(pd.DataFrame(rows, columns=list("abcde")))[:, 1]

    for x, phi in zip(X[:3], explanation.values, strict=True):

        def value(players, x=x):
            columns = [c for p in players for c in members[p]]
            return interventional_value(predict, x, background, columns)[()]

        np.testing.assert_allclose(phi, brute_force_shapley(value, 3), rtol=1e-9, atol=1e-12)


def test_interactions_are_the_enumerated_pairs_whatever_the_budget(data):
    X, _, y = data
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y > 0.5)

    def predict(rows):
        return model.predict_proba(rows)[:, 1]

    background = X[60:72]
    explainer = PermutationShapExplainer(model, output="probability", background_size=None, progress=False)
    explainer.fit(background)
    sii = explainer.explain_interactions(X[:2], index="SII", max_evals=20)
    faith = explainer.explain_interactions(X[:2], index="FSII", max_evals=20)
    assert sii.diagnostics["exact"] and faith.diagnostics["exact"]
    for x, sii_matrix, faith_matrix in zip(X[:2], sii.values, faith.values, strict=True):
        table = np.array(
            [
                np.atleast_1d(interventional_value(predict, x, background, [j for j in range(D) if code >> j & 1]))
                for code in range(1 << D)
            ]
        )

        def v(s, table=table):
            return table[sum(1 << j for j in s), 0]

        for i, j in combinations(range(D), 2):  # SII_ij = Σ_S |S|!(d−|S|−2)!/(d−1)! ∇_ij(S)
            others = [c for c in range(D) if c not in (i, j)]
            expected = sum(
                factorial(size)
                * factorial(D - size - 2)
                / factorial(D - 1)
                * (v(s + (i, j)) - v(s + (i,)) - v(s + (j,)) + v(s))
                for size in range(D - 1)
                for s in combinations(others, size)
            )
            np.testing.assert_allclose(sii_matrix[i, j], expected, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(faith_matrix, faith_interactions(table)[:, :, 0], rtol=1e-8, atol=1e-10)
    shap_matrix = explainer.explain_interactions(X[:2]).values
    np.testing.assert_allclose(shap_matrix.sum(axis=2), explainer.explain(X[:2]).values, atol=1e-12)


def test_a_row_alone_is_bit_identical_to_the_row_in_a_batch_beyond_one_block(data, monkeypatch):
    from sklearn_shapq.explainers import _exact_paths

    X, _, y = data
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y > 0.5)
    explainer = PermutationShapExplainer(model, output="probability", background_size=30, random_state=0)
    explainer.set_params(progress=False).fit(X)
    monkeypatch.setattr(_exact_paths, "LINKED_TABLE_BYTES", 3 * 8 * (1 << D))  # blocks of 3 rows
    batch = explainer.explain(X[:8]).values
    for row in range(8):
        np.testing.assert_array_equal(explainer.explain(X[row : row + 1]).values[0], batch[row])


def test_beyond_the_enumerated_players_auto_samples_and_the_explicit_path_refuses():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 17))
    model = HistGradientBoostingClassifier(max_iter=5).fit(X, X[:, 0] + X[:, 16] > 0)
    sampled = PermutationShapExplainer(model, output="probability", background_size=10, progress=False).fit(X)
    assert sampled.algorithm_ != "tree"
    (reason,) = sampled.exact_refusals_  # why "auto" sampled: the tree path's own refusal
    assert reason.startswith("tree: HistGradientBoostingClassifier's output 'probability'") and "here 17" in reason
    margin = PermutationShapExplainer(model, output="margin", background_size=10, progress=False).fit(X)
    assert margin.algorithm_ == "tree"  # a sum over the trees: any number of players
    assert margin.exact_refusals_ == []
    forced = PermutationShapExplainer(model, output="probability", algorithm="tree", background_size=10)
    with pytest.raises(ValueError, match="2\\^p coalitions, for p <= 16"):
        forced.set_params(progress=False).fit(X)
    grouped = PermutationShapExplainer(
        model,
        output="probability",
        feature_groups={"first": list(range(9)), "rest": list(range(9, 17))},
        background_size=10,
        progress=False,
    ).fit(X)
    assert grouped.algorithm_ == "tree"


def test_a_model_refitted_in_place_is_refused(data):
    X, _, y = data
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y > 0.5)
    explainer = PermutationShapExplainer(model, output="probability", background_size=20, progress=False).fit(X)
    model.set_params(max_iter=12).fit(X, y > 0.0)
    with pytest.raises(ValueError, match="refitted or changed in place"):
        explainer.explain(X[:2])


@pytest.mark.parametrize(
    ("make", "labels", "output", "described", "margin_advice"),
    [
        (
            lambda: RandomForestClassifier(3, max_depth=3, random_state=0),
            True,
            "log_odds",
            "the log-odds of its",
            False,
        ),
        (lambda: HistGradientBoostingRegressor(loss="poisson", max_iter=3), False, "predict", "an exp link", False),
        (lambda: HistGradientBoostingClassifier(max_iter=3), True, "probability", "a sigmoid link", True),
    ],
)
def test_beyond_the_enumerated_players_the_refusal_names_the_link_and_only_outputs_the_model_has(
    make, labels, output, described, margin_advice
):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 17))
    target = X[:, 0] + X[:, 16] > 0 if labels else np.round(np.exp(X[:, 0] / 2))
    model = make().fit(X, target)
    forced = PermutationShapExplainer(model, output=output, algorithm="tree", background_size=10, progress=False)
    with pytest.raises(ValueError, match="p <= 16 players") as refusal:
        forced.fit(X)
    assert described in str(refusal.value)
    assert ("output='margin'" in str(refusal.value)) == margin_advice


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_the_margin_of_a_log_link_regressor_is_its_trees_sum_at_any_number_of_players(data, library):
    X, _, y = data
    counts = np.round(np.exp(y / 3))
    if library == "xgboost":
        model = xgboost.XGBRegressor(n_estimators=10, max_depth=3, objective="count:poisson").fit(X, counts)

        def margin(rows):
            return model.predict(rows, output_margin=True).astype(float)

    else:
        model = lightgbm.LGBMRegressor(n_estimators=10, num_leaves=7, objective="poisson", verbose=-1).fit(X, counts)

        def margin(rows):
            return model.predict(rows, raw_score=True)

    rows, background = X[:2], X[100:115]
    explainer = PermutationShapExplainer(model, output="margin", background_size=None, progress=False)
    assert explainer.fit(background).algorithm_ == "tree"
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if library == "xgboost" else {"rtol": 1e-9, "atol": 1e-12}
    for x, phi in zip(rows, explainer.explain(rows).values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(margin, x, background, s)[()], D)
        np.testing.assert_allclose(phi, expected, **tolerance)


def test_two_classes_scored_by_a_softmax_are_refused_with_a_reason(data):
    X, _, y = data
    model = lightgbm.LGBMClassifier(n_estimators=5, objective="multiclass", num_class=2, verbose=-1).fit(X, y > 0)
    sampled = PermutationShapExplainer(model, output="probability", background_size=10, progress=False).fit(X)
    assert sampled.algorithm_ != "tree"
    forced = PermutationShapExplainer(model, output="probability", algorithm="tree", background_size=10)
    with pytest.raises(ValueError, match="has 2 columns where the explained output has 1"):
        forced.set_params(progress=False).fit(X)
