"""PermutationShapExplainer's "auto" takes a product-kernel model's exact values: checked by enumeration."""

import warnings
from itertools import combinations
from math import factorial

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

from sklearn_shapq import PermutationShapExplainer
from tests.brute_force import brute_force_shapley, interventional_value

D = 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, D))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.5 * X[:, 3] ** 2 + 0.1 * rng.normal(size=120)
    return X, y


@pytest.fixture(scope="module")
def models(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the GP's length scale of the noise feature reaches its bound
        return {
            "svr": SVR(C=3.0).fit(X, y),
            "kernel_ridge": KernelRidge(kernel="laplacian", alpha=0.5, gamma=0.2).fit(X, y),
            "gp": GaussianProcessRegressor(ConstantKernel() * RBF(np.ones(D)) + WhiteKernel(0.1)).fit(X, y),
            "scaled_svr": make_pipeline(StandardScaler(), SVR(C=3.0)).fit(X * 3.0 + 1.0, y),
        }


@pytest.mark.parametrize("name", ["svr", "kernel_ridge", "gp", "scaled_svr"])
def test_auto_gives_the_enumerated_values_of_the_interventional_game(data, models, name):
    X, _ = data
    model = models[name]
    rows, background = (X[:4] * 3.0 + 1.0, X[60:80] * 3.0 + 1.0) if name == "scaled_svr" else (X[:4], X[60:80])
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    assert explainer.algorithm_ == "product_kernel"
    assert (explainer.max_evals_, explainer.background_parts_) == (0, 1)
    explanation = explainer.explain(rows)
    for x, phi in zip(rows, explanation.values, strict=True):
        expected = brute_force_shapley(lambda s, x=x: interventional_value(model.predict, x, background, s)[()], D)
        np.testing.assert_allclose(phi, expected, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, model.predict(rows), atol=1e-10)
    np.testing.assert_array_equal(explanation.error_std, 0.0)
    diagnostics = explanation.diagnostics
    assert diagnostics["algorithm"] == "product_kernel"
    np.testing.assert_array_equal(diagnostics["n_evals"], 0)
    assert diagnostics["n_model_calls"] == 2  # the checks that the model is unchanged: ours and the dual form's


def test_a_row_alone_is_bit_identical_to_the_row_in_a_batch(data, models):
    X, _ = data
    explainer = PermutationShapExplainer(models["gp"], background_size=30, random_state=0, progress=False)
    batch = explainer.fit(X).explain(X[:7]).values
    for row in range(7):
        np.testing.assert_array_equal(explainer.explain(X[row : row + 1]).values[0], batch[row])


def test_feature_groups_by_name_get_the_enumerated_values_of_the_groups(data):
    X, y = data
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = SVR(C=3.0).fit(X, y)  # fitted without names: the groups name the explainer's columns
    groups = {"ab": ["a", "b"], "de": ["d", "e"]}
    explainer = PermutationShapExplainer(model, feature_groups=groups, background_size=None, progress=False)
    explanation = explainer.fit(frame.iloc[60:76]).explain(frame.iloc[:3])
    assert explainer.algorithm_ == "product_kernel"
    members = [[0, 1], [2], [3, 4]]  # players by first column: ab, c, de
    background = X[60:76]
    for x, phi in zip(X[:3], explanation.values, strict=True):

        def value(players, x=x):
            columns = [c for p in players for c in members[p]]
            return interventional_value(model.predict, x, background, columns)[()]

        np.testing.assert_allclose(phi, brute_force_shapley(value, 3), rtol=1e-9, atol=1e-10)
    assert explanation.feature_names == ["ab", "c", "de"]


def test_a_dataframe_model_is_explained_without_warnings(data):
    X, y = data
    frame = pd.DataFrame(X, columns=list("abcde"))
    model = make_pipeline(StandardScaler(), SVR()).fit(frame, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explanation = PermutationShapExplainer(model, background_size=20, progress=False).fit(frame).explain(frame[:3])
    assert explanation.feature_names == list("abcde")
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, model.predict(frame[:3]))


def test_interactions_are_the_exact_pairs_whatever_the_budget(data):
    X, y = data
    model = SVR(C=3.0).fit(X, y)
    background = X[60:72]
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    interactions = explainer.explain_interactions(X[:2], index="SII", max_evals=20)
    assert interactions.diagnostics["exact"]
    np.testing.assert_array_equal(interactions.error_std, 0.0)
    for x, matrix in zip(X[:2], interactions.values, strict=True):

        def v(s, x=x):
            return interventional_value(model.predict, x, background, s)[()]

        # SII_01 enumerated: Σ_S |S|!(d−|S|−2)!/(d−1)! ∇_01(S), over S ⊆ {2, 3, 4}
        expected = 0.0
        for size in range(D - 1):
            for s in combinations([2, 3, 4], size):
                weight = factorial(size) * factorial(D - size - 2) / factorial(D - 1)
                expected += weight * (v(s + (0, 1)) - v(s + (0,)) - v(s + (1,)) + v(s))
        np.testing.assert_allclose(matrix[0, 1], expected, rtol=1e-9, atol=1e-10)
    shap_matrix = explainer.explain_interactions(X[:2]).values
    np.testing.assert_allclose(shap_matrix.sum(axis=2), explainer.explain(X[:2]).values, atol=1e-10)


def test_another_output_than_the_dual_form_samples(data):
    X, y = data
    classifier = GaussianProcessClassifier(random_state=0).fit(X[:60], y[:60] > 0)
    sampled = PermutationShapExplainer(classifier, background_size=10, progress=False).fit(X)
    assert sampled.algorithm_ != "product_kernel"  # "auto": the log-odds, not the latent mean of the dual form
    forced = PermutationShapExplainer(classifier, algorithm="product_kernel", background_size=10, progress=False)
    with pytest.raises(ValueError, match="does not reproduce the explained output"):
        forced.fit(X)
    margin = PermutationShapExplainer(SVC().fit(X, y > 0), background_size=10, progress=False).fit(X)
    assert margin.algorithm_ == "product_kernel"  # "auto": an SVC's margin, its decision function


def test_other_models_sample_and_refuse_the_explicit_path(data):
    X, y = data
    forest = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    assert PermutationShapExplainer(forest, background_size=10, progress=False).fit(X).algorithm_ != "product_kernel"
    with pytest.raises(TypeError, match="not supported|SVR"):
        PermutationShapExplainer(forest, algorithm="product_kernel", background_size=10, progress=False).fit(X)
    explicit = PermutationShapExplainer(SVR().fit(X, y), algorithm="leverage", background_size=10, progress=False)
    assert explicit.fit(X).algorithm_ == "leverage"  # an explicit estimator is kept


def test_a_model_refitted_in_place_is_refused(data):
    X, y = data
    model = SVR(C=3.0).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=10, progress=False).fit(X)
    model.fit(X, -y)
    with pytest.raises(ValueError, match="refitted or changed in place"):
        explainer.explain(X[:2])
