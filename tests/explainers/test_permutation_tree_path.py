"""PermutationShapExplainer's "auto" takes a tree model's exact values: checked by enumeration."""

import warnings
from itertools import combinations
from math import factorial

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, QuantileTransformer
from sklearn.svm import SVR
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from sklearn_shapq import PermutationShapExplainer
from tests.brute_force import brute_force_shapley, faith_interactions, interventional_value
from tests.exact_path_checks import assert_auto_takes_the_enumerated_values

xgboost = pytest.importorskip("xgboost")

D = 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, D))
    X[:, 4] = np.round(X[:, 4])  # ties with thresholds: "<" (xgboost) against "<=" (scikit-learn) matters
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.5 * X[:, 3] ** 2 + X[:, 4] + 0.1 * rng.normal(size=300)
    missing = X.copy()
    missing[rng.random(X.shape) < 0.1] = np.nan
    return X, missing, y


MODEL_NAMES = [
    "tree_nan",
    "forest",
    "extra_trees_probability",
    "forest_classes",
    "boosting_margin",
    "boosting_classes",
    "histogram_nan",
    "histogram_classes",
    "xgboost_nan",
    "xgboost_classes",
    "xgboost_dart",
    "bagging",
    "bagging_classes",
]


@pytest.fixture(scope="module")
def models(data):
    """(model, ``output``, the explained output as a function of rows, the data) by name: every kind read."""
    X, missing, y = data
    labels, classes = (y > 0).astype(int), np.digitize(y, [-0.5, 0.8])
    tree = DecisionTreeRegressor(max_depth=7, random_state=0).fit(missing, y)
    forest = RandomForestRegressor(20, max_depth=9, random_state=0).fit(X, y)
    extra_trees = ExtraTreesClassifier(10, max_depth=8, random_state=0).fit(X, labels)
    forest_classes = RandomForestClassifier(10, max_depth=6, random_state=0).fit(X, classes)
    boosting = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(X, labels)
    boosting_classes = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X, classes)
    histogram = HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(missing, y)
    histogram_classes = HistGradientBoostingClassifier(max_iter=15, random_state=0).fit(X, classes)
    booster = xgboost.XGBRegressor(n_estimators=30, max_depth=6).fit(missing, y)
    booster_classes = xgboost.XGBClassifier(n_estimators=15, max_depth=4).fit(X, classes)
    with warnings.catch_warnings():  # xgboost 3.4 deprecates booster="dart" for gbtree's dropout parameters
        warnings.simplefilter("ignore", UserWarning)
        dart = xgboost.XGBRegressor(n_estimators=20, max_depth=4, booster="dart", rate_drop=0.5, random_state=0)
        dart.fit(X, y)
    bagging = BaggingRegressor(DecisionTreeRegressor(max_depth=6), 15, max_features=0.6, random_state=0).fit(X, y)
    bagging_classes = BaggingClassifier(
        DecisionTreeClassifier(max_depth=5), 10, max_features=0.8, bootstrap_features=True, random_state=0
    ).fit(X, classes)  # each tree on a subset of the columns, in another order, some repeated
    return {
        "tree_nan": (tree, "auto", tree.predict, missing),
        "forest": (forest, "auto", forest.predict, X),
        "extra_trees_probability": (extra_trees, "probability", lambda r: extra_trees.predict_proba(r)[:, 1], X),
        "forest_classes": (forest_classes, "probability", forest_classes.predict_proba, X),
        "boosting_margin": (boosting, "auto", boosting.decision_function, X),
        "boosting_classes": (boosting_classes, "auto", boosting_classes.decision_function, X),
        "histogram_nan": (histogram, "auto", histogram.predict, missing),
        "histogram_classes": (histogram_classes, "auto", histogram_classes.decision_function, X),
        "xgboost_nan": (booster, "auto", booster.predict, missing),
        "xgboost_classes": (booster_classes, "auto", lambda r: booster_classes.predict(r, output_margin=True), X),
        "xgboost_dart": (dart, "auto", dart.predict, X),  # each tree weighed by its dropout weight
        "bagging": (bagging, "auto", bagging.predict, X),
        "bagging_classes": (bagging_classes, "probability", bagging_classes.predict_proba, X),
    }


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_auto_gives_the_enumerated_values_of_the_interventional_game(models, name):
    model, output, predict, X = models[name]
    # xgboost sums its leaves in float32: its game is known to float32 only
    tolerance = {"rtol": 1e-5, "atol": 1e-5} if name.startswith("xgboost") else {"rtol": 1e-9, "atol": 1e-12}
    explanation = assert_auto_takes_the_enumerated_values(
        model, output, predict, X[:3], X[100:120], "tree", **tolerance
    )
    diagnostics = explanation.diagnostics
    assert diagnostics["algorithm"] == "tree"
    assert (diagnostics["n_model_calls"], diagnostics["n_model_rows"]) == (1, 3)  # the check that it is unchanged


def test_feature_groups_get_the_enumerated_values_of_the_groups(data):
    X, _, y = data
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = RandomForestRegressor(10, max_depth=8, random_state=0).fit(X, y)
    groups = {"ab": ["a", "b"], "de": ["d", "e"]}
    explainer = PermutationShapExplainer(model, feature_groups=groups, background_size=None, progress=False)
    explanation = explainer.fit(frame.iloc[60:76]).explain(frame.iloc[:3])
    assert explainer.algorithm_ == "tree"
    members = [[0, 1], [2], [3, 4]]  # players by first column: ab, c, de
    background = X[60:76]
    for x, phi in zip(X[:3], explanation.values, strict=True):

        def value(players, x=x):
            columns = [c for p in players for c in members[p]]
            return interventional_value(model.predict, x, background, columns)[()]

        np.testing.assert_allclose(phi, brute_force_shapley(value, 3), rtol=1e-9, atol=1e-12)
    assert explanation.feature_names == ["ab", "c", "de"]


def _coalition_table(predict, x, background):
    """v(S) of every coalition, code bit j = player j: (2^D, k)."""
    return np.array(
        [
            np.atleast_1d(interventional_value(predict, x, background, [j for j in range(D) if code >> j & 1]))
            for code in range(1 << D)
        ]
    )


def test_interactions_are_the_enumerated_pairs_whatever_the_budget(data):
    X, _, y = data
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    background = X[60:72]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    sii = explainer.explain_interactions(X[:2], index="SII", max_evals=20)
    faith = explainer.explain_interactions(X[:2], index="FSII", max_evals=20)
    assert sii.diagnostics["exact"] and faith.diagnostics["exact"]
    np.testing.assert_array_equal(sii.error_std, 0.0)
    for x, sii_matrix, faith_matrix in zip(X[:2], sii.values, faith.values, strict=True):
        table = _coalition_table(model.predict, x, background)

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


def test_a_row_alone_is_bit_identical_to_the_row_in_a_batch(data):
    X, _, y = data
    model = RandomForestRegressor(10, random_state=0).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=30, random_state=0, progress=False).fit(X)
    batch = explainer.explain(X[:9]).values
    for row in range(9):
        np.testing.assert_array_equal(explainer.explain(X[row : row + 1]).values[0], batch[row])


@pytest.mark.parametrize(
    ("model_name", "output"),
    [
        ("logistic_link", "predict"),  # xgboost's reg:logistic: a sigmoid link of a regressor, not read
        ("forest", "predict"),  # the label: on unanimous votes it equals the probability, elsewhere not
    ],
)
def test_outputs_the_trees_do_not_give_sample_and_refuse_the_explicit_path(data, model_name, output):
    X, _, y = data
    model = {
        "logistic_link": lambda: xgboost.XGBRegressor(n_estimators=5, objective="reg:logistic").fit(
            X, 1 / (1 + np.exp(-y))
        ),
        "forest": lambda: RandomForestClassifier(5, random_state=0).fit(X, y > 0),
    }[model_name]()
    sampled = PermutationShapExplainer(model, output=output, background_size=10, progress=False).fit(X)
    assert sampled.algorithm_ not in ("tree", "product_kernel")
    forced = PermutationShapExplainer(model, output=output, algorithm="tree", background_size=10, progress=False)
    with pytest.raises(ValueError, match="neither a sum over its trees nor a link"):
        forced.fit(X)


def test_early_stopping_explains_the_trees_xgboost_predicts_with(data):
    X, _, y = data
    model = xgboost.XGBRegressor(n_estimators=300, learning_rate=0.5, early_stopping_rounds=2)
    model.fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])], verbose=False)
    assert model.best_iteration < 299
    explainer = PermutationShapExplainer(model, background_size=20, progress=False).fit(X)
    assert explainer.algorithm_ == "tree"
    explanation = explainer.explain(X[:3])
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, model.predict(X[:3]), atol=1e-5)


def test_other_models_refuse_the_explicit_path(data):
    X, _, y = data
    with pytest.raises(TypeError, match="not a tree model"):
        PermutationShapExplainer(SVR().fit(X, y), algorithm="tree", background_size=10, progress=False).fit(X)


def test_a_model_refitted_in_place_is_refused(data):
    X, _, y = data
    model = RandomForestRegressor(5, random_state=0).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=10, progress=False).fit(X)
    model.fit(X, -y)
    with pytest.raises(ValueError, match="refitted or changed in place"):
        explainer.explain(X[:2])


def test_xgboost_values_are_efficient_to_its_float32_outputs_and_alone_as_in_a_batch(data):
    X, _, y = data
    model = xgboost.XGBRegressor(n_estimators=40, max_depth=5).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=30, progress=False).fit(X)
    explanation = explainer.explain(X[:6])
    assert explainer.algorithm_ == "tree"
    outputs = model.predict(X[:6]).astype(np.float64)  # float32 sums: 1e-7 from the trees' float64 sum
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, outputs, rtol=0, atol=1e-12)
    for row in range(6):
        np.testing.assert_array_equal(explainer.explain(X[row : row + 1]).values[0], explanation.values[row])


def test_a_pipeline_of_column_wise_steps_before_the_trees_gets_the_enumerated_values(data):
    _, missing, y = data
    frame = pd.DataFrame(missing, columns=list("abcde"))
    model = make_pipeline(
        SimpleImputer(), QuantileTransformer(n_quantiles=40), RandomForestRegressor(10, max_depth=8, random_state=0)
    ).fit(frame, y)
    background, rows = frame.iloc[100:120], frame.iloc[:3]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "tree"
    explanation = explainer.explain(rows)
    for x, phi in zip(rows.to_numpy(), explanation.values, strict=True):
        expected = brute_force_shapley(
            lambda s, x=x: interventional_value(
                lambda r: model.predict(pd.DataFrame(r, columns=list("abcde"))), x, background.to_numpy(), s
            )[()],
            D,
        )
        np.testing.assert_allclose(phi, expected, rtol=1e-9, atol=1e-12)


def test_a_pipeline_that_mixes_columns_samples_and_refuses_the_explicit_path(data):
    X, _, y = data
    model = make_pipeline(PolynomialFeatures(), RandomForestRegressor(5, random_state=0)).fit(X, y)
    assert PermutationShapExplainer(model, background_size=10, progress=False).fit(X).algorithm_ != "tree"
    with pytest.raises(TypeError, match="not read as column-wise"):
        PermutationShapExplainer(model, algorithm="tree", background_size=10, progress=False).fit(X)


def test_rows_beyond_one_block_are_the_rows_explained_alone(data):
    X, _, y = data
    model = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=10, progress=False).fit(X)
    many = np.concatenate([X, X])[:300]  # 300 rows: two blocks of the tree path
    values = explainer.explain(many).values
    np.testing.assert_array_equal(values[250:300], explainer.explain(many[250:300]).values)


def test_xgboost_missing_value_is_explained_as_missing(data):
    X, _, y = data
    zeros = X.copy()
    zeros[np.abs(X) < 0.3] = 0.0  # xgboost reads these as missing
    model = xgboost.XGBRegressor(n_estimators=20, max_depth=4, missing=0.0).fit(zeros, y)
    rows, background = zeros[:2], zeros[100:116]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "exact"  # not the tree path: it reads NaN as missing only
    for x, phi in zip(rows, explainer.explain(rows).values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(model.predict, x, background, s)[()], D)
        np.testing.assert_allclose(phi, expected, atol=1e-5)


def test_lightgbm_regressors_get_the_enumerated_values_and_what_is_not_read_samples(data):
    lightgbm = pytest.importorskip("lightgbm")
    X, missing, y = data
    model = lightgbm.LGBMRegressor(n_estimators=40, num_leaves=15, verbose=-1).fit(missing, y)
    rows, background = np.vstack([missing[:2], X[2:3]]), missing[100:120]  # NaN in rows and background
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "tree"
    for x, phi in zip(rows, explainer.explain(rows).values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(model.predict, x, background, s)[()], D)
        np.testing.assert_allclose(phi, expected, rtol=1e-9, atol=1e-12)
    for unread in (
        lightgbm.LGBMRegressor(n_estimators=5, verbose=-1, zero_as_missing=True).fit(X, y),
        lightgbm.LGBMRegressor(n_estimators=5, verbose=-1, linear_tree=True).fit(X, y),
        lightgbm.LGBMRegressor(n_estimators=5, verbose=-1, objective="cross_entropy").fit(X, y > 0),  # a sigmoid
    ):
        sampled = PermutationShapExplainer(unread, background_size=10, progress=False)
        assert sampled.fit(X).algorithm_ != "tree"
        with pytest.raises(ValueError, match="not read here|neither a sum over its trees"):
            PermutationShapExplainer(unread, algorithm="tree", background_size=10, progress=False).fit(X)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_lightgbm_classifiers_are_explained_on_their_raw_score_exactly(data, n_classes):
    lightgbm = pytest.importorskip("lightgbm")
    X, missing, y = data
    labels = np.digitize(y, [0.0] if n_classes == 2 else [-0.5, 0.8])
    model = lightgbm.LGBMClassifier(n_estimators=20, num_leaves=7, verbose=-1).fit(missing, labels)
    rows, background = missing[:2], missing[100:116]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "tree"  # "auto": the margin, LightGBM's raw score
    values = explainer.explain(rows).values.reshape(2, D, -1)

    def margin(data):
        return model.predict(data, raw_score=True)

    for x, phi in zip(rows, values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(margin, x, background, s), D)
        np.testing.assert_allclose(phi, expected.reshape(D, -1), rtol=1e-9, atol=1e-12)
