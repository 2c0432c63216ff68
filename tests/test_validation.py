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
