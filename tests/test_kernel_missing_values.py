"""The kernel classes refuse missing values with their own message (not scikit-learn's HistGradientBoosting hint)."""

import numpy as np
import pytest
from sklearn.svm import SVR

from sklearn_shapq import HSICAttribution, MMDAttribution, ProductKernelShapExplainer


@pytest.fixture(scope="module")
def with_nan():
    X = np.random.default_rng(0).normal(size=(30, 4))
    dirty = X.copy()
    dirty[3, 2] = np.nan
    return X, dirty


def test_hsic_refuses_nan(with_nan):
    X, dirty = with_nan
    with pytest.raises(
        ValueError, match=r"X contains missing values \(NaN\) \(1 entries, first at row 3, column 2\)"
    ) as info:
        HSICAttribution(progress=False).fit(dirty, X[:, 0])
    assert "impute" in str(info.value) and "HistGradientBoosting" not in str(info.value)


def test_mmd_refuses_nan_in_either_sample(with_nan):
    X, dirty = with_nan
    with pytest.raises(ValueError, match="X contains missing values"):
        MMDAttribution(progress=False).fit(dirty, X)
    with pytest.raises(ValueError, match="Z contains missing values .* impute"):
        MMDAttribution(progress=False).fit(X, dirty)


def test_product_kernel_explainer_refuses_nan(with_nan):
    X, dirty = with_nan
    svr = SVR().fit(X, X[:, 0])
    with pytest.raises(ValueError, match="X contains missing values .* Kernels are computed on every cell"):
        ProductKernelShapExplainer(svr, value_function="interventional").fit(dirty)
    explainer = ProductKernelShapExplainer(svr).fit()
    with pytest.raises(ValueError, match="X contains missing values"):
        explainer.explain(dirty)


def test_infinity_is_refused_as_before(with_nan):
    X, _ = with_nan
    infinite = X.copy()
    infinite[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        HSICAttribution(progress=False).fit(infinite, X[:, 0])
