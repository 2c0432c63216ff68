"""Parameters renamed in 1.0: the old name still works for one release, with a FutureWarning and the same values."""

import warnings

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LinearRegression

from sklearn_shapq import (
    HSICAttribution,
    MMDAttribution,
    PermutationShapExplainer,
    ProductKernelShapExplainer,
    TopKShapley,
)

RNG = np.random.default_rng(0)
X = RNG.normal(size=(60, 5))
Y = X[:, 0] + 2 * X[:, 1] * X[:, 2] + 0.1 * RNG.normal(size=60)
LINEAR = LinearRegression().fit(X, Y)
KERNEL = KernelRidge(kernel="rbf", gamma=0.3).fit(X, Y)


def permutation(**params):
    explainer = PermutationShapExplainer(LINEAR, max_evals=40, random_state=0, progress=False, **params).fit(X)
    return explainer.explain(X[:4]).values, explainer.algorithm_


def top_k(**params):
    selector = TopKShapley(LinearRegression(), cv=3, max_evals=80, t_min=3, random_state=0, progress=False, **params)
    selector.fit(X, Y)
    return selector.shapley_values_, selector.top_k_, selector.explain(X[:3]).values


def product_kernel(**params):
    explainer = ProductKernelShapExplainer(KERNEL, progress=False, **params).fit()
    return explainer.explain(X[:4]).values, explainer.algorithm_


def hsic(**params):
    return HSICAttribution(progress=False, **params).fit(X, Y).attributions_


def mmd(**params):
    return MMDAttribution(progress=False, **params).fit(X[:30], X[30:] + 0.5).attributions_


RENAMES = [
    pytest.param(permutation, "sampler", "algorithm", "orthogonal", id="PermutationShapExplainer-sampler"),
    pytest.param(top_k, "method", "algorithm", "cmcs", id="TopKShapley-method"),
    pytest.param(top_k, "k", "n_features_to_select", 2, id="TopKShapley-k"),
    pytest.param(product_kernel, "method", "algorithm", "quadrature", id="ProductKernelShapExplainer-method"),
    pytest.param(hsic, "method", "algorithm", "quadrature", id="HSICAttribution-method"),
    pytest.param(mmd, "method", "algorithm", "quadrature", id="MMDAttribution-method"),
]


def same(a, b):
    if isinstance(a, tuple):
        return all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    return a == b


@pytest.mark.parametrize(("run", "old", "new", "value"), RENAMES)
def test_the_old_name_warns_and_gives_the_new_names_values(run, old, new, value):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # the new name warns of nothing
        expected = run(**{new: value})
    with pytest.warns(FutureWarning, match=f"{old}= was renamed {new}= in sklearn_shapq 1.0 .* pass {new}=") as record:
        got = run(**{old: value})
    assert same(got, expected)
    assert {warning.filename for warning in record} == {__file__}  # the user's line, not the package's or sklearn's


@pytest.mark.parametrize(("run", "old", "new", "value"), RENAMES)
def test_both_names_at_once_are_refused(run, old, new, value):
    other = {permutation: "exact", top_k: "permutation"}.get(run, "prefix_suffix") if new == "algorithm" else 3
    with pytest.raises(ValueError, match=f"{old}= was renamed {new}= .* not both"):
        run(**{old: value, new: other})


@pytest.mark.parametrize(("run", "old", "new", "value"), RENAMES)
def test_a_bad_value_under_the_old_name_is_refused_naming_it(run, old, new, value):
    with pytest.raises(ValueError, match=f"'{old}' parameter"):
        run(**{old: "no such thing" if isinstance(value, str) else 0})


@pytest.mark.parametrize(
    ("params", "named"),
    [({"cv": 3}, "cv"), ({"game": "marginal", "scoring": "r2"}, "game, scoring"), ({"memory": "/tmp/x"}, "memory")],
)
def test_explain_only_fit_refuses_the_selectors_parameters(params, named):
    explainer = TopKShapley(LINEAR, prefit=True, n_features_to_select=2, max_evals=60, progress=False, **params)
    with pytest.raises(ValueError, match=f"^{named} only apply to the selector"):
        explainer.fit(X)
    explainer.set_params(**TopKShapley().get_params()).set_params(estimator=LINEAR, prefit=True, progress=False)
    assert explainer.fit(X).explain(X[:2]).values.shape == (2, 5)
