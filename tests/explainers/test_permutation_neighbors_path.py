"""The neighbours path of "auto": a k-NN model's game enumerated from its training rows, near ties asked of it."""

from itertools import combinations
from math import factorial

import numpy as np
import pandas as pd
import pytest
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_shapq import PermutationShapExplainer
from tests.brute_force import brute_force_shapley, interventional_value
from tests.exact_path_checks import assert_auto_takes_the_enumerated_values

D = 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(200, D)) * [1.0, 3.0, 0.5, 1.0, 2.0]
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + X[:, 4] + 0.3 * rng.normal(size=200)
    return X, y


MODEL_NAMES = [
    "scaled_regressor",
    "manhattan",
    "minkowski_3",
    "binary_probability",
    "class_probabilities",
    "distance_regressor",
    "distance_probabilities",
]


@pytest.fixture(scope="module")
def models(data):
    """(model, ``output``, the explained output from the model's public API) by name."""
    X, y = data
    scaled = make_pipeline(StandardScaler(), KNeighborsRegressor(n_neighbors=7)).fit(X, y)
    manhattan = KNeighborsRegressor(n_neighbors=4, p=1).fit(X, y)
    minkowski = KNeighborsRegressor(n_neighbors=5, p=3).fit(X, y)
    binary = KNeighborsClassifier(n_neighbors=9).fit(X, y > 0)
    classes = make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=6)).fit(X, np.digitize(y, [-1, 1]))
    distance = KNeighborsRegressor(n_neighbors=6, weights="distance", p=1.5).fit(X, y)
    distance_classes = make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=8, weights="distance"))
    distance_classes.fit(X, np.digitize(y, [-1, 1]))
    return {
        "scaled_regressor": (scaled, "auto", scaled.predict),
        "manhattan": (manhattan, "auto", manhattan.predict),
        "minkowski_3": (minkowski, "auto", minkowski.predict),
        "binary_probability": (binary, "probability", lambda r: binary.predict_proba(r)[:, 1]),
        "class_probabilities": (classes, "probability", classes.predict_proba),
        "distance_regressor": (distance, "auto", distance.predict),
        "distance_probabilities": (distance_classes, "probability", distance_classes.predict_proba),
    }


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_auto_gives_the_enumerated_values_of_the_interventional_game(data, models, name):
    X, _ = data
    model, output, predict = models[name]
    assert_auto_takes_the_enumerated_values(model, output, predict, X[:3], X[100:115], "neighbors")


def test_near_ties_are_decided_by_the_model_itself(data):
    X, y = data
    coarse = np.round(X)  # many equal distances: the model's own choice of neighbours decides them
    model = KNeighborsRegressor(n_neighbors=5, algorithm="brute").fit(coarse, y)
    rows, background = coarse[:3] + 0.25, coarse[100:112] + 0.25  # no row is a training row
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "neighbors"
    explanation = explainer.explain(rows)
    assert explanation.diagnostics["n_model_calls"] == 2  # the check, and the near ties in one call
    assert explanation.diagnostics["n_model_rows"] > 3
    for x, phi in zip(rows, explanation.values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(model.predict, x, background, s)[()], D)
        np.testing.assert_allclose(phi, expected, rtol=1e-9, atol=1e-12)


def test_feature_groups_and_pairs_are_the_enumerated_ones(data):
    X, y = data
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = KNeighborsRegressor(n_neighbors=6).fit(frame, y)

    def predict(rows):
        return model.predict(pd.DataFrame(rows, columns=list("abcde")))

    background = X[60:72]
    grouped = PermutationShapExplainer(
        model, feature_groups={"ab": ["a", "b"], "de": ["d", "e"]}, background_size=None, progress=False
    ).fit(frame.iloc[60:72])
    assert grouped.algorithm_ == "neighbors"
    members = [[0, 1], [2], [3, 4]]
    for x, phi in zip(X[:2], grouped.explain(frame.iloc[:2]).values, strict=True):

        def value(players, x=x):
            return interventional_value(predict, x, background, [c for p in players for c in members[p]])[()]

        np.testing.assert_allclose(phi, brute_force_shapley(value, 3), rtol=1e-9, atol=1e-12)
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(frame.iloc[60:72])
    sii = explainer.explain_interactions(frame.iloc[:2], index="SII", max_evals=20)
    assert sii.diagnostics["exact"]
    for x, matrix in zip(X[:2], sii.values, strict=True):
        table = {
            code: interventional_value(predict, x, background, [j for j in range(D) if code >> j & 1])[()]
            for code in range(1 << D)
        }
        for i, j in combinations(range(D), 2):
            others = [c for c in range(D) if c not in (i, j)]
            expected = 0.0
            for size in range(D - 1):
                for s in combinations(others, size):
                    code = sum(1 << c for c in s)
                    gain = table[code | 1 << i | 1 << j] - table[code | 1 << i] - table[code | 1 << j] + table[code]
                    expected += factorial(size) * factorial(D - size - 2) / factorial(D - 1) * gain
            np.testing.assert_allclose(matrix[i, j], expected, rtol=1e-9, atol=1e-12)


def test_a_row_alone_is_bit_identical_to_the_row_in_a_batch(data):
    X, y = data
    model = KNeighborsRegressor(n_neighbors=5).fit(np.round(X, 1), y)
    explainer = PermutationShapExplainer(model, background_size=25, random_state=0, progress=False).fit(X)
    batch = explainer.explain(X[:6]).values
    for row in range(6):
        np.testing.assert_array_equal(explainer.explain(X[row : row + 1]).values[0], batch[row])


@pytest.mark.parametrize("seed", [0, 1])
def test_distance_weights_are_exact_at_near_duplicates_and_at_zero_on_columns_of_any_scale(seed):
    """A hybrid row that is a training row, among columns of scale 1e4 (the walk's running sums leave it at
    about 1e-8, not zero), with a near-duplicate 1e-7 away: scikit-learn takes the row alone."""
    rng = np.random.default_rng(seed)
    scale = np.array([1e4, 1e4, 1e4, 1.0, 1.0])
    X, y = rng.normal(size=(30, 5)) * scale, rng.normal(size=30)
    background, x = X[:8], rng.normal(size=(1, 5)) * scale
    hybrid = background[0].copy()
    hybrid[:3] = x[0, :3]  # the hybrid of players {0, 1, 2} with background row 0
    near = hybrid + rng.normal(size=(4, 5)) * [0, 0, 0, 0.1, 0.1]
    near[0] = hybrid + [0, 0, 0, 1e-7, 0]  # a near-duplicate: weighed by 1 / distance, not taken as at zero
    model = KNeighborsRegressor(n_neighbors=3, weights="distance").fit(
        np.vstack([X, hybrid, near]), np.r_[y, 5.0, -np.ones(4)]
    )
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "neighbors"
    expected = brute_force_shapley(lambda s: interventional_value(model.predict, x[0], background, s)[()], 5)
    np.testing.assert_allclose(explainer.explain(x).values[0], expected, rtol=1e-12, atol=1e-12)


def test_distance_weights_of_rows_at_distance_zero_are_scikit_learns(data):
    """Explained and background rows that are training rows: the hybrids at ∅ and N are training rows, whose
    distance the walk's running sums leave at rounding, not zero; they count alone, as in scikit-learn."""
    X, y = data
    model = KNeighborsRegressor(n_neighbors=5, weights="distance").fit(X, y)
    rows, background = X[:3], X[100:112]
    explanation = PermutationShapExplainer(model, background_size=None, progress=False).fit(background).explain(rows)
    for x, phi in zip(rows, explanation.values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(model.predict, x, background, s)[()], D)
        np.testing.assert_allclose(phi, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values, y[:3], rtol=1e-13)


@pytest.mark.parametrize(
    ("make", "output", "match"),
    [
        (lambda: KNeighborsRegressor(weights=lambda distances: 1 / (1 + distances)), "auto", "weights=<function"),
        (lambda: KNeighborsRegressor(metric="cosine"), "auto", "metric 'cosine'"),
        (lambda: KNeighborsClassifier(), "log_odds", "not read from its neighbours"),
    ],
)
def test_what_is_not_read_samples_and_the_explicit_path_refuses(data, make, output, match):
    X, y = data
    model = make().fit(X, y > 0 if output == "log_odds" else y)
    sampled = PermutationShapExplainer(model, output=output, background_size=10, progress=False).fit(X)
    assert sampled.algorithm_ != "neighbors"
    with pytest.raises(ValueError, match=match):
        PermutationShapExplainer(model, output=output, algorithm="neighbors", background_size=10).fit(X)


def test_beyond_the_enumerated_work_auto_samples_and_the_explicit_path_refuses():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 17))
    model = KNeighborsRegressor().fit(X, X[:, 0])
    assert PermutationShapExplainer(model, background_size=10, progress=False).fit(X).algorithm_ != "neighbors"
    with pytest.raises(ValueError, match="p <= 16 players"):
        PermutationShapExplainer(model, algorithm="neighbors", background_size=10, progress=False).fit(X)


def test_a_model_refitted_in_place_is_refused(data):
    X, y = data
    model = KNeighborsRegressor().fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=20, progress=False).fit(X)
    model.fit(X, -y)
    with pytest.raises(ValueError, match="refitted or changed in place"):
        explainer.explain(X[:2])


def test_a_model_fitted_on_sparse_rows_samples_and_the_explicit_path_refuses(data):
    from scipy import sparse

    X, y = data
    model = KNeighborsRegressor().fit(sparse.csr_matrix(X), y)
    assert PermutationShapExplainer(model, background_size=10, progress=False).fit(X).algorithm_ != "neighbors"
    with pytest.raises(TypeError, match="sparse rows"):
        PermutationShapExplainer(model, algorithm="neighbors", background_size=10, progress=False).fit(X)


def test_small_blocks_give_the_same_values(data, monkeypatch):
    from sklearn_shapq.explainers import _exact_paths

    X, y = data
    model = KNeighborsRegressor(n_neighbors=5).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=20, random_state=0, progress=False).fit(X)
    expected = explainer.explain(X[:5]).values
    monkeypatch.setattr(_exact_paths, "LINKED_TABLE_BYTES", 8 * X.size)  # one row per block, check included
    again = PermutationShapExplainer(model, background_size=20, random_state=0, progress=False).fit(X)
    np.testing.assert_array_equal(again.explain(X[:5]).values, expected)


def test_a_row_whose_own_neighbours_tie_is_explained(data):
    X, y = data
    coarse = np.round(X)
    model = KNeighborsRegressor(n_neighbors=5, algorithm="brute").fit(coarse, y)
    background = coarse[100:112] + 0.25
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    path = explainer._exact_path
    _, tied = path._predict_with_ties(coarse[:60])
    row = coarse[:60][tied][:1]  # its own k-th and (k+1)-th training rows are equally far
    assert row.shape[0] == 1
    values = explainer.explain(row).values[0]
    expected = brute_force_shapley(lambda s: interventional_value(model.predict, row[0], background, s)[()], D)
    np.testing.assert_allclose(values, expected, rtol=1e-9, atol=1e-12)
