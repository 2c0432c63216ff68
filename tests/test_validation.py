"""Data checks shared by every class: their errors name the data, the columns and the fix."""

import numpy as np
import pandas as pd
import pytest

from sklearn_shapq import HSICAttribution, MMDAttribution, PermutationShapExplainer
from sklearn_shapq._validation import check_data, check_table


@pytest.mark.parametrize("check", [check_data, check_table])
@pytest.mark.parametrize("columns", [["a", "a", "b"], [1, "1", "b"]])
def test_columns_named_alike_are_refused(check, columns):
    frame = pd.DataFrame(np.ones((4, 3)), columns=columns)
    with pytest.raises(ValueError, match=r"X has columns named alike \['(a|1)'\]"):
        check(frame)


@pytest.mark.parametrize(
    "fit",
    [
        lambda frame: HSICAttribution().fit(frame, np.arange(20.0)),
        lambda frame: MMDAttribution().fit(frame, frame),
    ],
)
def test_the_kernel_classes_name_string_columns(fit):
    frame = pd.DataFrame({"city": ["x", "y"] * 10, "size": np.arange(20.0)})
    with pytest.raises(TypeError, match=r"X has non-numeric columns \['city'\]; kernels are computed on numbers"):
        fit(frame)


def test_a_model_returning_labels_is_named():
    rows = np.random.default_rng(0).normal(size=(20, 3))

    def labels(X):
        return np.array(["a"] * len(X))

    with pytest.raises(TypeError, match="labels returned outputs that are not numbers"):
        PermutationShapExplainer(labels, max_evals=20, progress=False).fit(rows)  # fit computes the base value


def test_a_table_with_fit_s_unnamed_columns_in_another_order_is_refused():
    """A review's case: integer labels, which scikit-learn does not check, were coded by position and reached the
    model under fit's labels (an explanation of other rows than those passed)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({0: rng.normal(size=20), 1: rng.normal(size=20) * 10, 2: rng.choice(["a", "b"], 20)})

    def model(table):
        return table[0].to_numpy() + (table[2] == "a").to_numpy()

    explainer = PermutationShapExplainer(model, algorithm="exact", background_size=None, progress=False).fit(X)
    with pytest.raises(ValueError, match="fit's columns in another order"):
        explainer.explain(X[[1, 0, 2]].iloc[:2])
    explanation = explainer.explain(X.iloc[:2])
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values, model(X.iloc[:2]))
