"""scikit-learn's estimator checks on the five public classes (one ``parametrize_with_checks``).

Each expected failure below is a check that does not apply to the class's contract, with the reason;
every other check must pass. Also here: the feature-name checks scikit-learn runs on its own
transformers only, and feature names as ``validate_data`` sets them. What the checks do not cover (a
kept model on clone, bit-identical values after pickling, parameter constraints, ...) is tested next
to each class.
"""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.svm import SVR
from sklearn.utils.estimator_checks import (
    check_dataframe_column_names_consistency,
    check_transformer_get_feature_names_out,
    check_transformer_get_feature_names_out_pandas,
    parametrize_with_checks,
)

from sklearn_shapq import (
    HSICAttribution,
    MMDAttribution,
    PermutationShapExplainer,
    ProductKernelShapExplainer,
    TopKShapley,
)


class _RowSumAndSquares:
    """Two features of a row of any width (a module-level class: a fitted explainer pickles, test ids are stable)."""

    def __call__(self, X):
        X = np.asarray(X, dtype=np.float64)
        return np.column_stack([X.sum(axis=1), (X**2).sum(axis=1)])

    def __repr__(self):
        return "row_sum_and_squares"


def _any_width_model():
    """A fitted scikit-learn model that predicts rows of any number of features, as the checks pass.

    An explainer explains its model as fitted; a model of a fixed width could only be explained on
    checks' data of that width.
    """
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = X[:, 0] + X[:, 1] ** 2
    return make_pipeline(FunctionTransformer(_RowSumAndSquares()), LinearRegression()).fit(X, y)


_KERNEL_MODEL_FEATURES = 3  # the width most of the checks' data have


def _product_kernel_model():
    """A fitted SVR (a product-kernel model: RBF) on 3 features."""
    X = np.random.default_rng(1).normal(size=(30, _KERNEL_MODEL_FEATURES))
    return SVR().fit(X, X[:, 0] - X[:, 1] * X[:, 2])


# The checks that pass data of another width than the product-kernel model's 3 features.
_OTHER_WIDTH = "explains an SVR fitted on 3 features: the check's data has another number of features"
_FIXED_WIDTH_CHECKS = {
    "check_estimators_overwrite_params": _OTHER_WIDTH,
    "check_estimators_fit_returns_self": _OTHER_WIDTH,
    "check_readonly_memmap_input": _OTHER_WIDTH,
    "check_n_features_in_after_fitting": _OTHER_WIDTH,
    "check_positive_only_tag_during_fit": _OTHER_WIDTH,
    "check_estimators_dtypes": _OTHER_WIDTH,
    "check_dtype_object": _OTHER_WIDTH,
    "check_fit2d_1sample": _OTHER_WIDTH,
    "check_fit_idempotent": _OTHER_WIDTH,
    "check_fit_check_is_fitted": _OTHER_WIDTH,
    "check_n_features_in": _OTHER_WIDTH,
}

# MMDAttribution.fit(X, Z) takes a second sample Z of X's features; the checks pass a target y of
# shape (n,) in its place, so every check that fits with a target fails on Z.
_NOT_A_SAMPLE = "fit(X, Z) takes a second 2-D sample of X's features, and the check passes a 1-D target"
_TWO_SAMPLE_CHECKS = dict.fromkeys(
    [
        "check_fit_score_takes_y",
        "check_estimators_overwrite_params",
        "check_dont_overwrite_parameters",
        "check_estimators_fit_returns_self",
        "check_readonly_memmap_input",
        "check_n_features_in_after_fitting",
        "check_positive_only_tag_during_fit",
        "check_estimators_dtypes",
        "check_dtype_object",
        "check_pipeline_consistency",
        "check_estimators_nan_inf",
        "check_estimators_pickle",
        "check_f_contiguous_array_estimator",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_fit2d_1feature",
        "check_dict_unchanged",
        "check_fit_idempotent",
        "check_fit_check_is_fitted",
        "check_n_features_in",
        "check_fit2d_predict1d",
    ],
    _NOT_A_SAMPLE,
)


def _expected_failed_checks(estimator):
    if isinstance(estimator, ProductKernelShapExplainer):
        return _FIXED_WIDTH_CHECKS
    if isinstance(estimator, MMDAttribution):
        return _TWO_SAMPLE_CHECKS
    return {}


@parametrize_with_checks(
    [
        PermutationShapExplainer(_any_width_model()),
        ProductKernelShapExplainer(_product_kernel_model()),
        HSICAttribution(),
        MMDAttribution(),
        # the default n_features_to_select=5 exceeds the checks' 1 to 4 features; LinearRegression
        # refits fast on the checks' class labels (the default estimator would be a logistic regression)
        TopKShapley(LinearRegression(), n_features_to_select=1),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# Feature-name checks that scikit-learn runs on its own transformers, not in parametrize_with_checks:
# columns other than fit's raise its ValueError; get_feature_names_out checks input_features. The
# product-kernel explainer (3 features) takes only the 3-feature data of the get_feature_names_out checks.
_NAME_CHECKS = [
    check_dataframe_column_names_consistency,
    check_transformer_get_feature_names_out,
    check_transformer_get_feature_names_out_pandas,
]
_NAMED = [
    PermutationShapExplainer(_any_width_model()),
    HSICAttribution(),
    TopKShapley(LinearRegression(), n_features_to_select=1),
]
_NAME_CASES = [(estimator, check) for estimator in _NAMED for check in _NAME_CHECKS] + [
    (ProductKernelShapExplainer(_product_kernel_model()), check) for check in _NAME_CHECKS[1:]
]


@pytest.mark.parametrize(
    "estimator, check",
    _NAME_CASES,
    ids=[f"{type(estimator).__name__}-{check.__name__}" for estimator, check in _NAME_CASES],
)
def test_feature_name_checks(estimator, check):
    check(type(estimator).__name__, estimator)


@pytest.mark.parametrize(
    "make",
    [
        lambda: PermutationShapExplainer(_any_width_model(), progress=False),
        lambda: TopKShapley(LinearRegression().fit(np.eye(5), np.arange(5.0)), prefit=True, progress=False),
    ],
    ids=["PermutationShapExplainer", "TopKShapley-prefit"],
)
def test_feature_names_follow_scikit_learn(make):
    """feature_names_in_ as validate_data sets it: string column names only; mixed names are refused."""
    import pandas as pd

    X = np.random.default_rng(2).normal(size=(12, 5))
    named = make().fit(pd.DataFrame(X, columns=list("abcde")))
    assert list(named.feature_names_in_) == list("abcde") and named.n_features_in_ == 5
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        named.explain(X[:2])
    numbered = make().fit(pd.DataFrame(X))
    assert not hasattr(numbered, "feature_names_in_") and numbered.n_features_in_ == 5
    with pytest.raises(TypeError, match=r"column names that are strings and column names that are not \(\[0\]\)"):
        make().fit(pd.DataFrame(X, columns=[0, "b", "c", "d", "e"]))
