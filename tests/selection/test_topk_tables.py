"""TopKShapley on real tables: raw DataFrames in explain, missing values, feature groups."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression

from sklearn_shapq import TopKShapley

from brute_force import brute_force_shapley, interventional_frame_value
from table_helpers import census_pipeline, people


def test_local_explain_of_a_raw_table_agrees_with_brute_force():
    frame, y = people(300, seed=20)
    model = census_pipeline(frame, y)
    background, rows = frame.iloc[:30], frame.iloc[[90, 91, 90]]
    explainer = TopKShapley(
        model,
        n_features_to_select=2,
        prefit=True,
        algorithm="cmcs",
        max_evals=4000,
        background_size=None,
        random_state=0,
        progress=False,
    ).fit(background)
    explanation = explainer.explain(rows)
    exact = np.array(
        [
            brute_force_shapley(
                lambda s, r=r: interventional_frame_value(model.decision_function, rows.iloc[[r]], background, s), 5
            )
            for r in range(2)
        ]
    )
    assert (np.abs(explanation.values[:2] - exact) <= 6 * explanation.error_std[:2] + 1e-9).all()
    # duplicates and a row alone use the same coalitions; the pipeline's dense BLAS product may
    # still sum a row differently in another batch (an ulp; tested: a row-wise model is exact), hence the tolerance
    np.testing.assert_allclose(explanation.values[0], explanation.values[2], rtol=1e-13, atol=1e-15)
    alone = explainer.explain(rows.iloc[[1]])
    np.testing.assert_allclose(alone.values[0], explanation.values[1], rtol=1e-13, atol=1e-15)
    assert explanation.display_data[0, 1] == rows.workclass.iloc[0]


def test_the_selector_takes_missing_values_when_its_estimator_does():
    rng = np.random.default_rng(21)
    X = rng.normal(size=(400, 6))
    y = 3 * X[:, 0] - 2 * X[:, 4] + 0.1 * rng.normal(size=400)
    X[rng.random(X.shape) < 0.1] = np.nan
    selector = TopKShapley(
        HistGradientBoostingRegressor(max_iter=30),
        n_features_to_select=2,
        cv=3,
        max_evals=150,
        t_min=5,
        random_state=0,
        progress=False,
    )
    assert sorted(selector.fit(X, y).get_support(indices=True).tolist()) == [0, 4]
    assert selector.transform(X).shape == (400, 2)  # transform takes what fit took (a Pipeline step)
    with pytest.raises(ValueError, match=r"missing values \(NaN\) .* LinearRegression does not take missing values"):
        TopKShapley(LinearRegression(), n_features_to_select=2, cv=3, max_evals=150, t_min=5, progress=False).fit(X, y)


def test_the_selector_keeps_or_drops_a_group_whole():
    rng = np.random.default_rng(22)
    X = pd.DataFrame(rng.normal(size=(300, 5)), columns=["a", "b", "c", "d", "e"])
    y = X.b + X.d + 0.3 * X.a + 0.1 * rng.normal(size=300)
    selector = TopKShapley(
        LinearRegression(),
        n_features_to_select=1,
        feature_groups={"bd": ["b", "d"]},
        cv=3,
        max_evals=100,
        t_min=5,
        random_state=0,
    )
    selector.set_params(progress=False).fit(X, y)
    assert selector.feature_groups_.names == ["a", "bd", "c", "e"]
    assert selector.top_k_.tolist() == [1]
    assert selector.get_support().tolist() == [False, True, False, True, False]
    assert list(selector.get_feature_names_out()) == ["b", "d"]
    assert selector.shapley_values_.shape == (4,)
    explanation = selector.explain(X.iloc[:2])
    assert explanation.feature_names == ["a", "bd", "c", "e"] and explanation.values.shape == (2, 4)


def test_transform_after_an_explain_only_fit_says_why_it_selects_nothing():
    frame, y = people(100, seed=25)
    explainer = TopKShapley(census_pipeline(frame, y), n_features_to_select=2, prefit=True, progress=False).fit(frame)
    with pytest.raises(ValueError, match="selects nothing"):
        explainer.transform(frame)


@pytest.mark.parametrize("game", ["retrain", "marginal"])
def test_the_selector_refuses_string_columns_with_the_reason(game):
    frame, y = people(100, seed=23)
    model = census_pipeline(frame, y)
    with pytest.raises(TypeError, match=r"selector \(fit with y, either game\) takes numeric columns only"):
        TopKShapley(model, n_features_to_select=2, prefit=True, game=game, progress=False).fit(frame, y)


def test_k_counts_players():
    X = np.random.default_rng(24).normal(size=(50, 4))
    with pytest.raises(
        ValueError, match=r"n_features_to_select must be between 1 and 2 \(the features, a group counting as one\)"
    ):
        TopKShapley(LinearRegression(), n_features_to_select=3, feature_groups={"g": [0, 1, 2]}, progress=False).fit(
            X, X[:, 0]
        )


def test_local_explain_of_rows_in_other_dtypes_explains_them_as_passed():
    """string / object-with-pd.NA columns reach the model as passed (they were recast to fit's dtypes)."""
    frame, y = people(300, seed=21)
    model = census_pipeline(frame, y)
    background = frame.iloc[:30]
    missing = np.flatnonzero(frame.workclass.isna())[:2]
    rows = frame.iloc[missing].astype({"workclass": "string"}).reset_index(drop=True)
    explainer = TopKShapley(
        model,
        n_features_to_select=2,
        prefit=True,
        algorithm="cmcs",
        max_evals=4000,
        background_size=None,
        random_state=0,
        progress=False,
    ).fit(background)
    explanation = explainer.explain(rows)
    cast = background.astype({"workclass": "string"})
    exact = np.array(
        [
            brute_force_shapley(
                lambda s, r=r: interventional_frame_value(model.decision_function, rows.iloc[[r]], cast, s), 5
            )
            for r in range(2)
        ]
    )
    assert (np.abs(explanation.values - exact) <= 6 * explanation.error_std + 1e-9).all()
    sums = explanation.values.sum(1) + explanation.base_values
    assert (
        np.abs(sums - model.decision_function(rows)).max()
        < np.abs(sums - model.decision_function(frame.iloc[missing])).max()
    )
