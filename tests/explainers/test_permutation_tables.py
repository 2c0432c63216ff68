"""Raw tables: string, category, bool and missing cells, against brute force over DataFrame cell swaps."""

import numpy as np
import pandas as pd
import pytest
import shap
import xgboost
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS

from brute_force import brute_force_shapley, interventional_frame_value
from table_helpers import census_pipeline, people


def brute_force_rows(predict, rows, background):
    d = rows.shape[1]
    return np.array(
        [
            brute_force_shapley(lambda s, r=r: interventional_frame_value(predict, rows.iloc[[r]], background, s), d)
            for r in range(len(rows))
        ]
    )


def test_pipeline_on_strings_with_missing_entries_is_exact():
    frame, y = people(300)
    model = census_pipeline(frame, y)
    background, rows = frame.iloc[:40], frame.iloc[[50, 51, 57]]
    explainer = PermutationShapExplainer(model, algorithm="exact", background_size=None, random_state=0, progress=False)
    explanation = explainer.fit(background).explain(rows)
    expected = brute_force_rows(model.decision_function, rows, background)
    np.testing.assert_allclose(explanation.values, expected, atol=1e-10)
    np.testing.assert_allclose(
        explanation.values.sum(1) + explanation.base_values, model.decision_function(rows), atol=1e-10
    )
    assert explanation.feature_names == list(frame.columns)
    assert explanation.display_data[:, 1].tolist() == rows.workclass.tolist()
    # numbers and category codes as floats, a string column's cells as they are (shap's own convention)
    assert explanation.data.dtype == object and explanation.data[:, 1].tolist() == rows.workclass.tolist()
    numbers = [j for j, name in enumerate(frame.columns) if name != "workclass"]
    assert np.array(explanation.data[:, numbers], dtype=np.float64).dtype == np.float64


def test_category_dtype_model_is_exact():
    frame, y = people(400, seed=1)
    frame = frame.drop(columns="workclass")
    model = HistGradientBoostingClassifier(categorical_features="from_dtype", max_iter=20, random_state=0).fit(frame, y)
    background, rows = frame.iloc[:30], frame.iloc[[100, 101]]
    explainer = PermutationShapExplainer(model, algorithm="exact", background_size=None, progress=False).fit(background)
    explanation = explainer.explain(rows)
    np.testing.assert_allclose(
        explanation.values, brute_force_rows(model.decision_function, rows, background), atol=1e-10
    )


def test_xgboost_with_categories_from_a_dataframe():
    frame, y = people(400, seed=2)
    frame = frame.drop(columns="workclass")
    model = xgboost.XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True, tree_method="hist").fit(
        frame, y
    )
    background, rows = frame.iloc[:25], frame.iloc[[200, 201]]
    explainer = PermutationShapExplainer(model, algorithm="exact", background_size=None, progress=False).fit(background)
    margin = lambda data: model.predict(data, output_margin=True)  # noqa: E731
    np.testing.assert_allclose(explainer.explain(rows).values, brute_force_rows(margin, rows, background), atol=1e-6)


@pytest.fixture(scope="module")
def diabetes_with_missing():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X = X[:, :6].copy()
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    return X, y


@pytest.mark.parametrize("kind", ["xgboost", "hist_gradient_boosting"])
def test_boosters_take_missing_values_exactly(diabetes_with_missing, kind):
    X, y = diabetes_with_missing
    if kind == "xgboost":
        model = xgboost.XGBRegressor(n_estimators=30, max_depth=3).fit(X, y)
    else:
        model = HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X, y)
    background, rows = X[:30], X[[40, 41, 42]]
    assert np.isnan(rows).any() and np.isnan(background).any()
    explainer = PermutationShapExplainer(model, algorithm="exact", background_size=None, progress=False).fit(background)
    explanation = explainer.explain(rows)
    columns = [f"c{j}" for j in range(X.shape[1])]
    frame = lambda a: pd.DataFrame(a, columns=columns)  # noqa: E731
    expected = brute_force_rows(lambda data: model.predict(data.to_numpy()), frame(rows), frame(background))
    np.testing.assert_allclose(explanation.values, expected, atol=1e-6 if kind == "xgboost" else 1e-10)
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, model.predict(rows), atol=1e-6)
    if kind == "xgboost":  # the same game as shap's interventional TreeSHAP, missing values and all
        tree = shap.TreeExplainer(model, background, feature_perturbation="interventional")
        np.testing.assert_allclose(
            explanation.values, tree.shap_values(rows, check_additivity=False), rtol=1e-5, atol=1e-4
        )


@pytest.mark.parametrize("algorithm", sorted(SHAPLEY_ALGORITHMS))
def test_every_sampler_on_a_raw_table(algorithm):
    """Efficiency to rounding for the efficient samplers; the others (Owen, stratified) within their error bars."""
    frame, y = people(200, seed=3)
    model = census_pipeline(frame, y)
    explainer = PermutationShapExplainer(model, algorithm=algorithm, max_evals=400, random_state=0, progress=False)
    explanation = explainer.fit(frame.iloc[:50]).explain(frame.iloc[100:104])
    total = explanation.values.sum(1) + explanation.base_values
    target = model.decision_function(frame.iloc[100:104])
    if SHAPLEY_ALGORITHMS[algorithm].efficient:
        np.testing.assert_allclose(total, target, atol=1e-10)
    else:
        assert (np.abs(total - target) <= 6 * np.sqrt((explanation.error_std**2).sum(1)) + 1e-9).all()


def test_a_row_alone_equals_the_row_in_a_batch_with_unseen_strings():
    """Keys hash a string's value, not its code: a level first seen in the batch changes nothing."""
    frame, y = people(200, seed=4)
    model = census_pipeline(frame, y)
    explainer = PermutationShapExplainer(model, algorithm="mc", max_evals=60, random_state=0, progress=False)
    explainer.fit(frame.iloc[:50].assign(workclass="private"))
    rows = frame.iloc[[60, 61, 62, 63]].copy()
    rows["workclass"] = ["unseen", "self", "gov", "self"]
    alone = explainer.explain(rows.iloc[[3]])
    batch = explainer.explain(rows)
    np.testing.assert_array_equal(batch.values[3], alone.values[0])
    twice = explainer.explain(rows.iloc[[3, 0, 3]])
    np.testing.assert_array_equal(twice.values[0], twice.values[2])
    np.testing.assert_array_equal(twice.values[0], alone.values[0])


def test_explain_leaves_the_fitted_levels_alone():
    frame, y = people(100, seed=5)
    model = census_pipeline(frame, y)
    explainer = PermutationShapExplainer(model, max_evals=40, random_state=0, progress=False).fit(frame.iloc[:20])
    levels = [None if lv is None else lv.copy() for lv in explainer._codec.levels]
    explainer.explain(frame.iloc[[30]].assign(workclass="never seen"))
    for before, after in zip(levels, explainer._codec.levels, strict=True):
        assert (before is None and after is None) or before.tolist() == after.tolist()


# ---------------------------------------------------------------- errors


def test_missing_values_into_a_model_that_cannot_take_them():
    frame, y = people(100, seed=6)
    numbers = frame[["age", "hours"]]
    model = LogisticRegression().fit(numbers.fillna(0), y)
    with pytest.raises(ValueError, match="LogisticRegression failed on rows with missing values"):
        PermutationShapExplainer(model, progress=False).fit(numbers)
    with pytest.raises(ValueError, match="allow_nan=False"):
        PermutationShapExplainer(model, allow_nan=False, progress=False).fit(numbers)


def test_a_callable_takes_missing_values_only_when_it_says_so():
    X = np.array([[1.0, np.nan], [0.0, 2.0], [3.0, 1.0]])
    f = lambda Z: np.nansum(Z, axis=1)  # noqa: E731
    with pytest.raises(ValueError, match="missing values .* Pass allow_nan=True"):
        PermutationShapExplainer(f, progress=False).fit(X)
    explanation = PermutationShapExplainer(f, allow_nan=True, algorithm="exact", progress=False).fit(X).explain(X)
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, f(X))


def test_a_model_returning_nan_is_an_error_not_nan_values():
    X = np.random.default_rng(0).normal(size=(20, 3))
    f = lambda Z: np.where(Z[:, 0] > 1.0, np.nan, Z.sum(axis=1))  # noqa: E731
    explainer = PermutationShapExplainer(f, progress=False).fit(X[X[:, 0] <= 1.0])
    with pytest.raises(ValueError, match="<lambda> returned NaN or infinity for"):
        explainer.explain(np.array([[2.0, 0.0, 0.0]]))


@pytest.mark.filterwarnings("error::UserWarning")  # explain(ndarray) after a raw-table fit: refused, not warned first
def test_dataframe_columns_reordered_against_fit():
    frame, y = people(100, seed=7)
    model = census_pipeline(frame, y)
    explainer = PermutationShapExplainer(model, max_evals=40, progress=False).fit(frame)
    with pytest.raises(ValueError, match="same order"):
        explainer.explain(frame[list(reversed(frame.columns))].iloc[:2])
    with pytest.raises(TypeError, match="must be a DataFrame"):
        explainer.explain(frame.to_numpy()[:2])


def test_other_categories_than_in_fit_are_refused():
    frame, y = people(100, seed=8)
    frame = frame.drop(columns="workclass")
    model = HistGradientBoostingClassifier(categorical_features="from_dtype", max_iter=5).fit(frame, y)
    explainer = PermutationShapExplainer(model, max_evals=40, progress=False).fit(frame)
    other = frame.iloc[:2].assign(education=pd.Categorical(["school", "phd"]))
    with pytest.raises(TypeError, match=r"Column 'education' of X has dtype category \['phd', 'school'\].* cell '"):
        explainer.explain(other)


def test_a_table_on_a_gpu_is_refused_before_any_work():
    frame, y = people(60, seed=9)
    model = census_pipeline(frame, y)
    from sklearn_shapq.backends import ArrayBackend

    class FakeGpu(ArrayBackend):
        is_gpu = True

    with pytest.raises(ValueError, match="explained on the CPU"):
        PermutationShapExplainer(model, device=FakeGpu(np, "fake-gpu"), progress=False).fit(frame)


def test_float_dataframes_keep_the_fast_path():
    frame, y = people(60, seed=10)
    numbers = frame[["age", "hours"]].astype(float).fillna(40.0)
    model = LinearRegression().fit(numbers, y)
    explainer = PermutationShapExplainer(model, algorithm="exact", progress=False).fit(numbers)
    assert explainer._codec is None
    explanation = explainer.explain(numbers.iloc[:3])
    assert explanation.display_data is None
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, model.predict(numbers.iloc[:3]))


def test_int_and_bool_columns_reach_the_model_with_their_dtypes():
    frame, _ = people(60, seed=10)
    numbers = frame[["age", "married"]]
    seen = []

    def model(rows):
        seen.append(tuple(str(t) for t in rows.dtypes))
        return rows["age"].to_numpy() / 10.0 + 2.0 * rows["married"].to_numpy()

    explanation = (
        PermutationShapExplainer(model, algorithm="exact", progress=False).fit(numbers).explain(numbers.iloc[:3])
    )
    assert set(seen) == {("int64", "bool")}
    expected = np.column_stack(
        [(numbers.age.iloc[:3] - numbers.age.mean()) / 10.0, 2.0 * (numbers.married.iloc[:3] - numbers.married.mean())]
    )
    np.testing.assert_allclose(explanation.values, expected, atol=1e-12)


# string columns are NaN in an Explanation's data (shap greys them): numpy warns inside shap's beeswarm and violin
@pytest.mark.filterwarnings("ignore:All-NaN slice encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered in greater:RuntimeWarning")  # shap's jitter, NaN cells
def test_every_shap_plot_draws_a_raw_table_explanation():
    """shap's plots but the violin, which needs numbers in every column (as with shap's own explainers)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frame, y = people(200, seed=14)
    model = census_pipeline(frame, y)
    explanation = (
        PermutationShapExplainer(model, max_evals=100, random_state=0, progress=False)
        .fit(frame)
        .explain(frame.iloc[:30])
    )
    plots = {
        "waterfall": lambda: shap.plots.waterfall(explanation[0], show=False),
        "bar": lambda: shap.plots.bar(explanation, show=False),
        "beeswarm": lambda: shap.plots.beeswarm(explanation, show=False),
        "heatmap": lambda: shap.plots.heatmap(explanation, show=False),
        "scatter strings": lambda: shap.plots.scatter(explanation[:, "workclass"], show=False),
        "scatter category": lambda: shap.plots.scatter(explanation[:, "education"], show=False),
        "scatter numbers": lambda: shap.plots.scatter(explanation[:, "hours"], show=False),
        "force": lambda: shap.plots.force(explanation[0], matplotlib=True, show=False),
        "decision": lambda: shap.decision_plot(
            explanation.base_values[0], explanation.values, feature_names=explanation.feature_names, show=False
        ),
    }
    for name, draw in plots.items():
        draw()
        assert plt.get_fignums(), name
        if name in ("scatter strings", "scatter category"):  # every row drawn, none lost to a missing x
            assert sum(len(c.get_offsets()) for c in plt.gca().collections) == 30, name
        plt.close("all")


def test_distinct_missing_values_reach_the_model_as_they_were():
    """None and NaN in a string column are different cells to some models: each is passed as it is."""
    background = pd.DataFrame({"c": pd.Series(["a", None, np.nan, "b"], dtype=object), "x": [1.0, 2, 3, 4]})

    def f(frame):
        kind = frame["c"].map(lambda v: 5.0 if v is None else (7.0 if isinstance(v, float) else 0.0))
        return kind.to_numpy() + frame["x"].to_numpy()

    explainer = PermutationShapExplainer(f, allow_nan=True, algorithm="exact", progress=False).fit(background)
    assert explainer.expected_value_ == pytest.approx(f(background).mean())
    rows = pd.DataFrame({"c": pd.Series([None, np.nan, "a"], dtype=object), "x": [0.0, 0, 0]})
    explanation = explainer.explain(rows)
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, f(rows), atol=1e-12)


def _exact_against_brute_force(predict, background, rows, **params):
    """Exact values of ``rows`` as passed, against brute force on the background cast to their dtypes."""
    explainer = PermutationShapExplainer(
        predict, algorithm="exact", background_size=None, random_state=0, progress=False, **params
    )
    explanation = explainer.fit(background).explain(rows)
    cast = background.astype(object).astype(dict(rows.dtypes))  # via objects: categories take the new order
    np.testing.assert_allclose(explanation.values, brute_force_rows(predict, rows, cast), atol=1e-10)
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, predict(rows), atol=1e-10)
    return explanation


def _with_pd_na(column):
    return column.astype(object).where(column.notna(), pd.NA)


@pytest.mark.parametrize(
    "change",
    [
        lambda rows: rows.assign(workclass=_with_pd_na(rows.workclass)),  # object with pd.NA, fitted str with NaN
        lambda rows: rows.astype({"workclass": "string"}),  # string (pd.NA), fitted str
        lambda rows: rows.astype({"workclass": object}),
        lambda rows: rows.astype({"age": "Int64", "hours": "Float64"}),
        lambda rows: rows.astype({"age": np.float64}),
    ],
    ids=["object-pd.NA", "string", "object", "nullable", "int-as-float"],
)
def test_a_table_in_other_dtypes_at_explain_is_explained_as_passed(change):
    """The model's own output on the rows as passed is what is explained (it was the rows recast to fit's dtypes)."""
    frame, y = people(300, seed=3)
    model = census_pipeline(frame, y)
    missing = np.flatnonzero(frame.workclass.isna())[:2].tolist() + np.flatnonzero(frame.hours.isna())[:2].tolist()
    rows = change(frame.iloc[[0, *missing]].reset_index(drop=True))
    _exact_against_brute_force(model.decision_function, frame.iloc[:12], rows, allow_nan=True)


def test_categories_in_another_order_at_explain_reach_the_model_in_that_order():
    """A model reading category codes (as boosters do) sees the explained rows' own codes."""
    levels = ["lo", "mid", "hi"]
    background = pd.DataFrame(
        {"c": pd.Categorical(["lo", "mid", "hi", "lo"], categories=levels), "x": [1.0, 2.0, 3.0, 4.0]}
    )

    def by_codes(frame):
        return frame["c"].cat.codes.to_numpy() * 10.0 + frame["x"].to_numpy()

    rows = background.iloc[:3].assign(c=pd.Categorical(["lo", "mid", "hi"], categories=levels[::-1]))
    _exact_against_brute_force(by_codes, background, rows)


def test_equal_values_of_other_types_stay_apart():
    """1, True, 1.0 and "1" in an object column are four cells to a model, not one level."""
    background = pd.DataFrame({"c": pd.Series([1, True, 1.0, "1", None], dtype=object), "x": np.arange(5.0)})
    worth = {int: 1.0, bool: 2.0, float: 3.0, str: 4.0, type(None): 5.0}

    def by_type(frame):
        return frame["c"].map(lambda v: worth[type(v)]).to_numpy() * (1 + frame["x"].to_numpy())

    explanation = _exact_against_brute_force(by_type, background, background.iloc[[3, 0, 2, 1]], allow_nan=True)
    assert explanation.display_data[:, 0].tolist() == ["1", 1, 1.0, True]


def test_negative_zero_in_an_object_column_is_a_level_of_its_own():
    background = pd.DataFrame({"c": pd.Series([0.0, -0.0, "x"], dtype=object), "x": [1.0, 2.0, 3.0]})

    def by_sign(frame):
        signs = frame["c"].map(lambda v: float(isinstance(v, float) and np.signbit(v))).to_numpy()
        return signs * frame["x"].to_numpy() + frame["x"].to_numpy()

    _exact_against_brute_force(by_sign, background, background.iloc[[1, 0]], allow_nan=True)


def test_integers_beyond_two_to_the_53_are_refused_naming_the_column():
    frame = pd.DataFrame({"id": [2**60, 3, 4], "s": ["a", "b", "c"], "x": [1.0, 2.0, 3.0]})
    explainer = PermutationShapExplainer(lambda f: f["x"].to_numpy(), progress=False)
    with pytest.raises(ValueError, match=r"Column 'id' of X holds integers beyond 2\^53"):
        explainer.fit(frame)
    with pytest.raises(ValueError, match=r"Column 'id' of X holds integers beyond 2\^53"):
        PermutationShapExplainer(lambda Z: Z[:, 1], progress=False).fit(frame[["id", "x"]])


@pytest.mark.parametrize(
    ("background", "rows", "message"),
    [
        (["a", "b"], pd.array([1, 2], dtype="Int64"), "the background cannot be cast"),
        ([1.5, 2.0], np.array([1, 2]), r"cell 1.5 would become 1 in it"),
        ([[1], [2]], None, "cannot be compared as values"),  # lists in cells
        (pd.Categorical([None, True]), np.array([False, True]), "cannot be held in it .it became object"),
    ],
    ids=["strings-as-ints", "fractions-as-ints", "lists", "category-with-missing-as-bool"],
)
def test_cells_that_cannot_be_represented_are_refused_naming_the_column(background, rows, message):
    fitted = pd.DataFrame(
        {"name": pd.Series(background, dtype=object if rows is None else None), "s": ["u", "v"], "x": [1.0, 2.0]}
    )
    explainer = PermutationShapExplainer(lambda frame: frame["x"].to_numpy(), allow_nan=True, progress=False)
    with pytest.raises(TypeError, match=f"Column 'name' of X .*{message}"):
        explainer.fit(fitted).explain(fitted.assign(name=rows))


@pytest.mark.filterwarnings("error")
def test_a_category_of_bools_reaches_the_model_as_its_cells():
    """pandas calls a category of bools a bool dtype: it must stay a category, True never decoded to missing."""
    frame = pd.DataFrame({"flag": pd.Categorical([None, True, True, None]), "x": [1.0, 2.0, 3.0, 4.0]})
    seen = []

    def model(table):
        seen.append(table["flag"])
        return table["x"].to_numpy() + 10.0 * table["flag"].eq(True).to_numpy(dtype=float)

    explanation = PermutationShapExplainer(model, allow_nan=True, progress=False).fit(frame).explain(frame)
    assert seen[0].tolist()[1:3] == [True, True] and str(seen[0].dtype) == "category"
    # additive game: each column's value is its term less the term's background mean
    assert np.allclose(explanation.base_values, 2.5 + 10.0 * 0.5)
    assert np.allclose(explanation.values[:, 0], 10.0 * (frame["flag"].eq(True).to_numpy() - 0.5))
    assert np.allclose(explanation.values[:, 1], frame["x"] - 2.5)
