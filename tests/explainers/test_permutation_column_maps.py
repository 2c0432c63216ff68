"""Exact paths after steps that widen the table (one-hot encoders in a ColumnTransformer), on raw tables too."""

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
    VotingRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    Binarizer,
    KBinsDiscretizer,
    OneHotEncoder,
    OrdinalEncoder,
    SplineTransformer,
    StandardScaler,
)
from sklearn.svm import SVC, SVR
from sklearn.tree import DecisionTreeRegressor

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.explainers._column_maps import check_column_sources, column_sources
from tests.brute_force import brute_force_shapley, faith_interactions, interventional_frame_value
from tests.exact_path_checks import assert_auto_takes_the_enumerated_values

COLUMNS = ["colour", "size", "shape", "weight", "count"]


@pytest.fixture(scope="module")
def table():
    """A raw table: a string column, a categorical one, floats and a small integer column."""
    rng = np.random.default_rng(4)
    n = 300
    frame = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.normal(size=n),
            "shape": pd.Categorical(rng.choice(["square", "circle"], n)),
            "weight": rng.normal(size=n),
            "count": rng.integers(0, 4, n).astype(float),
        }
    )
    target = 2.0 * (frame.colour == "red") + frame["size"] * (frame["shape"] == "square") + frame.weight
    return frame, target + 0.1 * rng.normal(size=n)


def _encoder():
    return ColumnTransformer(
        [
            ("categories", OneHotEncoder(handle_unknown="ignore"), ["colour", "shape"]),
            ("numbers", make_pipeline(SimpleImputer(), StandardScaler()), ["size", "weight"]),
        ],
        remainder="passthrough",
    )


def _enumerated_values(predict, frame, background, rows):
    """Brute force over the table's columns: the hybrid rows written as DataFrames, no package code."""
    values = []
    for i in range(len(rows)):

        def value(coalition, i=i):
            hybrid = background.copy()
            for j in coalition:
                hybrid[frame.columns[j]] = rows.iloc[i, j]
            hybrid = hybrid.astype(frame.dtypes.to_dict())
            return np.mean(predict(hybrid), axis=0)

        values.append(brute_force_shapley(value, frame.shape[1]))
    return np.array(values)


MODELS = {
    "forest": (lambda: RandomForestRegressor(10, max_depth=5, random_state=0), "auto", "tree"),
    "ridge": (Ridge, "auto", "linear"),
    "logistic_probability": (LogisticRegression, "probability", "linear"),
    "boosting_probability": (lambda: HistGradientBoostingClassifier(max_iter=20), "probability", "tree"),
    "neighbours": (lambda: KNeighborsRegressor(5), "auto", "neighbors"),
    "svr": (lambda: SVR(C=3.0), "auto", "product_kernel"),
    "voting": (
        lambda: VotingRegressor([("tree", DecisionTreeRegressor(max_depth=4)), ("ridge", Ridge())]),
        "auto",
        "ensemble",
    ),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_a_raw_table_one_hot_encoded_takes_the_exact_path_of_its_model(table, name):
    frame, target = table
    make, output, path = MODELS[name]
    labels = target > 1.0 if output == "probability" else target
    model = make_pipeline(_encoder(), make()).fit(frame, labels)
    background, rows = frame.iloc[:12], frame.iloc[100:103]
    explainer = PermutationShapExplainer(model, output=output, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == path
    explanation = explainer.explain(rows)

    def predict(data):
        return model.predict_proba(data)[:, 1] if output == "probability" else model.predict(data)

    expected = _enumerated_values(predict, frame, background, rows)
    np.testing.assert_allclose(explanation.values, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values, predict(rows), rtol=1e-9)
    assert explanation.feature_names == COLUMNS


def test_a_kernel_model_after_encoders_that_drop_a_column_gives_its_pairs_exactly(table):
    frame, target = table
    encoder = ColumnTransformer(
        [("categories", OneHotEncoder(), ["colour", "shape"]), ("numbers", StandardScaler(), ["size", "weight"])]
    )  # "count" is dropped: a null player
    model = make_pipeline(encoder, SVC(C=2.0)).fit(frame, target > 1.0)
    background, rows = frame.iloc[:8], frame.iloc[100:102]
    explainer = PermutationShapExplainer(model, output="margin", background_size=None, progress=False)
    explanation = explainer.fit(background).explain(rows)
    assert explainer.algorithm_ == "product_kernel"
    expected = _enumerated_values(model.decision_function, frame, background, rows)
    np.testing.assert_allclose(explanation.values, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(explanation.values[:, 4], 0.0)
    faith = explainer.explain_interactions(rows, index="FSII", max_evals=20)
    assert faith.diagnostics["exact"]
    for i in range(2):
        table_ = np.array(
            [
                interventional_frame_value(
                    model.decision_function, rows.iloc[[i]], background, [j for j in range(5) if code >> j & 1]
                )
                for code in range(1 << 5)
            ]
        )
        np.testing.assert_allclose(faith.values[i], faith_interactions(table_[:, None])[:, :, 0], rtol=1e-8, atol=1e-10)


def test_numeric_columns_one_hot_encoded_and_feature_groups(table):
    frame, target = table
    numeric = frame.assign(
        colour=frame.colour.map({"red": 0.0, "green": 1.0, "blue": 2.0}), shape=frame["shape"].cat.codes
    )
    encoder = ColumnTransformer(
        [("one_hot", OneHotEncoder(drop="first"), ["colour", "count"])], remainder="passthrough"
    )
    model = make_pipeline(encoder, RandomForestRegressor(8, max_depth=4, random_state=0)).fit(numeric, target)
    background, rows = numeric.iloc[:10], numeric.iloc[50:52]
    groups = {"look": ["colour", "shape"], "mass": ["weight", "count"]}
    explainer = PermutationShapExplainer(model, feature_groups=groups, background_size=None, progress=False)
    explanation = explainer.fit(background).explain(rows)
    assert explainer.algorithm_ == "tree"
    members = [[0, 2], [1], [3, 4]]  # players by first column: look, size, mass
    for i in range(2):

        def value(players, i=i):
            hybrid = background.copy()
            for column in [c for p in players for c in members[p]]:
                hybrid.iloc[:, column] = rows.iloc[i, column]
            return model.predict(hybrid).mean()

        np.testing.assert_allclose(explanation.values[i], brute_force_shapley(value, 3), rtol=1e-9, atol=1e-12)


def test_column_sources_trace_encoders_pipelines_and_the_remainder(table):
    frame, _ = table
    encoder = ColumnTransformer(
        [
            ("one_hot", OneHotEncoder(drop="first"), ["colour", "shape"]),  # 2 + 1 columns
            ("dropped", "drop", ["size"]),
            ("ordinal", OrdinalEncoder(), ["count"]),
        ],
        remainder="passthrough",  # weight
    ).fit(frame)
    np.testing.assert_array_equal(column_sources(encoder, 5), [0, 0, 2, 4, 3])
    np.testing.assert_array_equal(
        column_sources(make_pipeline(encoder, StandardScaler()).fit(frame), 5), [0, 0, 2, 4, 3]
    )


def _logistic_probability(model):
    return lambda rows: model.predict_proba(rows)[:, 1]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:Bins whose width are too small")  # "count" (0-3) loses bins: widths differ
@pytest.mark.parametrize(
    ("make", "path", "output"),
    [
        (lambda: make_pipeline(SplineTransformer(n_knots=4), Ridge()), "linear", "auto"),
        (
            lambda: make_pipeline(SplineTransformer(include_bias=False, extrapolation="linear"), LogisticRegression()),
            "linear",
            "probability",
        ),
        (lambda: make_pipeline(KBinsDiscretizer(n_bins=4, encode="onehot-dense"), Ridge()), "linear", "auto"),
        (lambda: make_pipeline(KBinsDiscretizer(n_bins=3), DecisionTreeRegressor(max_depth=4)), "tree", "auto"),
        (lambda: make_pipeline(Binarizer(threshold=0.2), LogisticRegression()), "linear", "probability"),
        (
            lambda: make_pipeline(
                StandardScaler(), SplineTransformer(n_knots=3), MLPRegressor(hidden_layer_sizes=(6,), random_state=0)
            ),
            "network",
            "auto",
        ),
    ],
)
def test_splines_binning_and_binarizers_are_column_wise_steps(table, make, path, output):
    frame, target = table
    numbers = frame[["size", "weight", "count"]].to_numpy()
    model = make().fit(numbers, target > 0 if output == "probability" else target)
    predict = _logistic_probability(model) if output == "probability" else model.predict
    assert_auto_takes_the_enumerated_values(model, output, predict, numbers[:3], numbers[100:115], path, atol=1e-11)


def test_steps_that_mix_columns_sample_and_the_explicit_path_refuses(table):
    frame, target = table
    numbers = frame[["size", "weight", "count"]]
    model = make_pipeline(PCA(2), DecisionTreeRegressor(max_depth=3)).fit(numbers, target)
    sampled = PermutationShapExplainer(model, background_size=10, progress=False).fit(numbers)
    assert sampled.algorithm_ not in ("tree", "linear")
    with pytest.raises(TypeError, match="not read as column-wise"):
        PermutationShapExplainer(model, algorithm="tree", background_size=10).fit(numbers)


def test_a_wrong_trace_is_caught_on_the_background():
    rng = np.random.default_rng(0)
    background = rng.normal(size=(20, 3))
    inputs = np.column_stack([background[:, 0], background[:, 0] + background[:, 1], background[:, 2]])
    with pytest.raises(TypeError, match="one by one"):
        check_column_sources(
            lambda rows: np.column_stack([rows[:, 0], rows[:, 0] + rows[:, 1], rows[:, 2]]),
            background,
            inputs,
            np.array([0, 1, 2]),
        )


def test_a_model_that_takes_the_raw_table_itself_is_read_through_its_own_encoding(table):
    frame, target = table
    categorical = frame.drop(columns="colour")
    model = HistGradientBoostingClassifier(max_iter=10, categorical_features="from_dtype").fit(categorical, target > 1)
    background, rows = categorical.iloc[:10], categorical.iloc[60:62]
    explainer = PermutationShapExplainer(model, output="probability", background_size=None, progress=False)
    assert explainer.fit(background).algorithm_ == "tree"
    expected = _enumerated_values(lambda data: model.predict_proba(data)[:, 1], categorical, background, rows)
    np.testing.assert_allclose(explainer.explain(rows).values, expected, rtol=1e-9, atol=1e-12)


def test_another_model_that_gets_category_columns_itself_is_not_read(table):
    lightgbm = pytest.importorskip("lightgbm")
    frame, target = table
    categorical = frame.drop(columns="colour")
    model = lightgbm.LGBMRegressor(n_estimators=5, min_child_samples=5, verbose=-1).fit(categorical, target)
    explainer = PermutationShapExplainer(model, algorithm="tree", background_size=None, progress=False)
    with pytest.raises(TypeError, match="raw table's category or string columns itself"):
        explainer.fit(categorical.iloc[:10])


def test_a_kernel_member_after_a_reordering_column_transformer_keeps_the_players_order(table):
    frame, target = table
    numbers = frame[["size", "weight", "count"]]
    scale_last = ColumnTransformer([("scaled", StandardScaler(), ["size"])], remainder="passthrough")
    model = make_pipeline(scale_last, VotingRegressor([("svr", SVR(C=3.0)), ("ridge", Ridge())])).fit(numbers, target)
    background, rows = numbers.iloc[:10], numbers.iloc[60:62]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "ensemble"
    expected = _enumerated_values(model.predict, numbers, background, rows)
    np.testing.assert_allclose(explainer.explain(rows).values, expected, rtol=1e-8, atol=1e-10)


@pytest.mark.filterwarnings("ignore:Skipping features without any observed values")
def test_an_imputer_that_drops_a_column_missing_in_fit_maps_the_others(table):
    frame, target = table
    numbers = frame[["size", "weight", "count"]].assign(weight=np.nan)
    model = make_pipeline(SimpleImputer(), Ridge()).fit(numbers, target)  # "weight" is dropped
    np.testing.assert_array_equal(column_sources(model[:-1], 3), [0, 2])
    background, rows = numbers.iloc[:10], numbers.iloc[60:62]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "linear"
    expected = _enumerated_values(model.predict, numbers, background, rows)
    np.testing.assert_allclose(explainer.explain(rows).values, expected, rtol=1e-9, atol=1e-12)


def test_a_one_step_pipeline_on_a_raw_table_takes_the_tree_path(table):
    frame, target = table
    categorical = frame.drop(columns="colour")
    model = make_pipeline(HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype"))
    model.fit(categorical, target)
    background, rows = categorical.iloc[:10], categorical.iloc[60:62]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "tree"
    expected = _enumerated_values(model.predict, categorical, background, rows)
    np.testing.assert_allclose(explainer.explain(rows).values, expected, rtol=1e-9, atol=1e-12)


def test_steps_refitted_in_place_are_refused_at_explain(table):
    frame, target = table
    model = make_pipeline(_encoder(), Ridge()).fit(frame, target)
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(frame.iloc[:10])
    model[0].fit(frame.assign(size=frame["size"] * 10.0))
    with pytest.raises(ValueError, match="refitted"):
        explainer.explain(frame.iloc[20:22])


def test_a_calibrated_pipeline_on_a_raw_table_takes_its_folds_paths(table):
    frame, target = table
    model = CalibratedClassifierCV(make_pipeline(_encoder(), LogisticRegression()), cv=3).fit(frame, target > 1.0)
    background, rows = frame.iloc[:10], frame.iloc[70:72]
    explainer = PermutationShapExplainer(model, output="probability", background_size=None, progress=False)
    explanation = explainer.fit(background).explain(rows)
    assert explainer.algorithm_ == "ensemble"
    expected = _enumerated_values(lambda data: model.predict_proba(data)[:, 1], frame, background, rows)
    np.testing.assert_allclose(explanation.values, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.filterwarnings("ignore:Skipping features without any observed values")
def test_a_constant_imputer_drops_a_column_missing_in_fit_as_scikit_learn_does(table):
    frame, target = table
    numbers = frame[["size", "weight", "count"]].assign(weight=np.nan)
    model = make_pipeline(SimpleImputer(strategy="constant", fill_value=0.0), Ridge()).fit(numbers, target)
    width = model[:-1].transform(numbers.iloc[:2]).shape[1]
    assert column_sources(model[:-1], 3).size == width
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(numbers.iloc[:10])
    assert explainer.algorithm_ == "linear"
    expected = _enumerated_values(model.predict, numbers, numbers.iloc[:10], numbers.iloc[60:62])
    np.testing.assert_allclose(explainer.explain(numbers.iloc[60:62]).values, expected, rtol=1e-9, atol=1e-12)


def test_a_one_step_pipeline_of_an_ensemble_on_a_raw_table_takes_its_members_paths(table):
    frame, target = table
    model = make_pipeline(VotingRegressor([("ridge", make_pipeline(_encoder(), Ridge()))])).fit(frame, target)
    background, rows = frame.iloc[:10], frame.iloc[70:72]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "ensemble"
    expected = _enumerated_values(model.predict, frame, background, rows)
    np.testing.assert_allclose(explainer.explain(rows).values, expected, rtol=1e-9, atol=1e-12)
