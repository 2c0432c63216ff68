"""Feature groups in PermutationShapExplainer: one player per group, exact against brute force over groups."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from sklearn_shapq import PermutationShapExplainer

from brute_force import brute_force_shapley, interventional_frame_value, interventional_value, random_polynomial_model
from table_helpers import census_pipeline, people


def test_groups_on_a_raw_table_are_exact_against_brute_force_over_groups():
    frame, y = people(300, seed=11)
    model = census_pipeline(frame, y)
    groups = {"work": ["workclass", "hours"], "person": [0, "married"]}  # by name and by index
    background, rows = frame.iloc[:30], frame.iloc[[80, 81]]
    explainer = PermutationShapExplainer(
        model, algorithm="exact", feature_groups=groups, background_size=None, progress=False
    ).fit(background)
    explanation = explainer.explain(rows)
    players = [[0, 4], [1, 3], [2]]  # ordered by their first column: person (age), work (workclass), education
    assert explanation.feature_names == ["person", "work", "education"]

    def grouped_value(r, coalition):
        columns = [j for p in coalition for j in players[p]]
        return interventional_frame_value(model.decision_function, rows.iloc[[r]], background, columns)

    expected = np.array([brute_force_shapley(lambda s, r=r: grouped_value(r, s), 3) for r in range(2)])
    np.testing.assert_allclose(explanation.values, expected, atol=1e-10)
    assert explanation.display_data[0, 1] == f"{rows.workclass.iloc[0]}, {rows.hours.iloc[0]}"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import shap

    for draw in (
        lambda: shap.plots.waterfall(explanation[0], show=False),
        lambda: shap.plots.bar(explanation[0], show=False),
        lambda: shap.plots.bar(explanation, show=False),
        lambda: shap.plots.force(explanation[0], matplotlib=True, show=False),
    ):
        draw()
        plt.close("all")
    assert np.isnan(explanation.data[:, :2]).all() and explanation.display_data[0, 2] == rows.education.iloc[0]


@pytest.mark.parametrize("algorithm", ["antithetic", "orthogonal", "sbq", "owen"])
def test_groups_with_sampled_estimators_on_arrays(algorithm):
    rng = np.random.default_rng(12)
    d = 7
    f = random_polynomial_model(d, rng)
    X = rng.normal(size=(40, d))
    groups = {"g": [1, 4, 6], "h": [2, 3]}
    explainer = PermutationShapExplainer(
        f,
        algorithm=algorithm,
        max_evals=2000,
        feature_groups=groups,
        background_size=None,
        random_state=0,
        progress=False,
    ).fit(X[:20])
    explanation = explainer.explain(X[20:22])
    assert explanation.feature_names == ["x0", "g", "h", "x5"]
    players = [[0], [1, 4, 6], [2, 3], [5]]
    exact = np.array(
        [
            brute_force_shapley(
                lambda s, r=r: interventional_value(f, X[20 + r], X[:20], [j for p in s for j in players[p]]), 4
            )
            for r in range(2)
        ]
    )
    np.testing.assert_allclose(explanation.values, exact, atol=6 * explanation.error_std.max() + 1e-9)
    assert explanation.values.shape == (2, 4)


def test_a_linear_model_gives_each_group_the_sum_of_its_columns():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(60, 5))
    model = LinearRegression().fit(X, X @ [1.0, -2.0, 0.5, 3.0, 1.5])
    plain = PermutationShapExplainer(model, algorithm="exact", progress=False).fit(X).explain(X[:3])
    grouped = PermutationShapExplainer(model, algorithm="exact", feature_groups={"ab": [0, 1]}, progress=False)
    values = grouped.fit(X).explain(X[:3]).values
    np.testing.assert_allclose(values[:, 0], plain.values[:, :2].sum(1), atol=1e-10)
    np.testing.assert_allclose(values[:, 1:], plain.values[:, 2:], atol=1e-10)


@pytest.mark.parametrize(
    ("groups", "match"), [({"g": ["nope"]}, "not a column"), ({"g": [0], "h": [0, 1]}, "in groups 'g' and 'h'")]
)
def test_bad_groups_are_refused_in_fit(groups, match):
    X = np.random.default_rng(0).normal(size=(10, 3))
    model = LinearRegression().fit(X, X[:, 0])
    with pytest.raises(ValueError, match=match):
        PermutationShapExplainer(model, feature_groups=groups, progress=False).fit(X)


def test_changing_groups_after_fit_asks_for_a_new_fit():
    X = np.random.default_rng(0).normal(size=(10, 3))
    explainer = PermutationShapExplainer(LinearRegression().fit(X, X[:, 0]), progress=False).fit(X)
    explainer.set_params(feature_groups={"g": [0, 1]})
    with pytest.raises(ValueError, match="feature_groups or background_parts changed since fit"):
        explainer.explain(X[:1])
