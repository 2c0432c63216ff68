"""The network path on kernel machines: a unit per anchor, the kernel (not a product over the features) its profile."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import (
    RBF,
    ConstantKernel,
    DotProduct,
    Matern,
    RationalQuadratic,
    WhiteKernel,
)
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR, NuSVR, OneClassSVM

from sklearn_shapq import PermutationShapExplainer
from tests.exact_path_checks import (
    assert_auto_takes_the_enumerated_values,
    assert_groups_and_faith_pairs_are_enumerated,
)

D = 5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(160, D)) * [1.0, 3.0, 0.5, 1.0, 2.0] + [0.0, 40.0, 0.0, -3.0, 0.0]
    y = X[:, 0] * (X[:, 1] - 40) / 3 + np.sin(X[:, 2] * 2) + X[:, 4] / 2 + 0.2 * rng.normal(size=160)
    return X, y


def _scaled(model):
    return make_pipeline(StandardScaler(), model)


MODELS = {  # the model, its explained output, its target ("class": y > 0, "none": unsupervised)
    "gp_matern_half": (_scaled(GaussianProcessRegressor(Matern(nu=0.5) + WhiteKernel(), normalize_y=True)), "y"),
    "gp_matern_ard": (
        _scaled(
            GaussianProcessRegressor(ConstantKernel() * Matern(np.ones(D), nu=1.5) + WhiteKernel(), normalize_y=True)
        ),
        "y",
    ),
    "gp_matern_raw_units": (
        GaussianProcessRegressor(2.0 * Matern([1.0, 3.0, 0.5, 1.0, 2.0], nu=2.5) + 0.5, optimizer=None, alpha=0.1),
        "y",
    ),
    "gp_rational_quadratic": (
        _scaled(GaussianProcessRegressor(ConstantKernel() * RationalQuadratic() + WhiteKernel(), normalize_y=True)),
        "y",
    ),
    "gp_dot_product_squared": (_scaled(GaussianProcessRegressor(DotProduct() ** 2 + WhiteKernel())), "y"),
    "kernel_ridge_poly": (_scaled(KernelRidge(kernel="poly", degree=3)), "y"),
    "kernel_ridge_sigmoid": (_scaled(KernelRidge(kernel="sigmoid", gamma=0.1)), "y"),
    "kernel_ridge_gp_kernel": (_scaled(KernelRidge(kernel=Matern(nu=2.5))), "y"),
    "svr_poly": (_scaled(SVR(kernel="poly", C=10.0)), "y"),
    "nusvr_sigmoid": (_scaled(NuSVR(kernel="sigmoid", gamma=0.05)), "y"),
    "svc_poly_margin": (_scaled(SVC(kernel="poly", coef0=1.0)), "class"),
    "one_class_svm_poly": (_scaled(OneClassSVM(kernel="poly", coef0=1.0)), "none"),
}


def _fitted(name, data):
    model, target = MODELS[name]
    X, y = data
    with warnings.catch_warnings():  # a GP's optimizer at its bounds
        warnings.simplefilter("ignore", ConvergenceWarning)
        if target == "none":
            return model.fit(X)
        return model.fit(X, y > 0 if target == "class" else y)


def _explained(model):
    final = model.steps[-1][1] if hasattr(model, "steps") else model
    return ("margin", model.decision_function) if isinstance(final, (SVC, OneClassSVM)) else ("auto", model.predict)


@pytest.mark.parametrize("name", list(MODELS))
def test_kernel_machines_take_the_network_path_and_equal_brute_force(name, data):
    model = _fitted(name, data)
    output, predict = _explained(model)
    X, _ = data
    # rows at and off the training rows (an anchor's distance 0, where a Matérn ν = 1/2 has an infinite slope)
    rows = np.vstack([X[:2], X[150:] + 0.3])
    assert_auto_takes_the_enumerated_values(model, output, predict, rows, X[100:115], "network", atol=1e-9)


def test_one_vs_one_decision_values_of_three_classes(data):
    X, y = data
    model = _scaled(SVC(kernel="poly", degree=2, decision_function_shape="ovo")).fit(X, np.digitize(y, [-1, 1]))
    explanation = assert_auto_takes_the_enumerated_values(
        model, "margin", model.decision_function, X[:3], X[100:112], "network"
    )
    assert explanation.values.shape == (3, D, 3)


def test_groups_and_faith_pairs_of_a_matern_process(data):
    model = _fitted("gp_matern_ard", data)
    X, _ = data
    assert_groups_and_faith_pairs_are_enumerated(model, "auto", X, model.predict, slice(60, 72), "network")


def test_a_dataframe_keeps_its_names(data):
    model = _fitted("kernel_ridge_poly", data)
    X, _ = data
    frame = pd.DataFrame(X, columns=list("abcde"))
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(frame.iloc[100:110])
    explanation = explainer.explain(frame.iloc[:2])
    assert explainer.algorithm_ == "network" and list(explanation.feature_names) == list("abcde")
    np.testing.assert_allclose(
        explanation.values.sum(axis=1) + explanation.base_values, model.predict(frame.iloc[:2]), rtol=1e-10
    )


def test_an_rbf_process_stays_on_the_product_kernel_path(data):
    X, y = data
    model = _scaled(GaussianProcessRegressor(ConstantKernel() * RBF() + WhiteKernel(), normalize_y=True)).fit(X, y)
    assert PermutationShapExplainer(model, background_size=10, progress=False).fit(X).algorithm_ == "product_kernel"
    by_units = PermutationShapExplainer(model, algorithm="network", background_size=None, progress=False)
    by_units.fit(X[100:110])
    by_kernel = PermutationShapExplainer(model, background_size=None, progress=False).fit(X[100:110])
    np.testing.assert_allclose(by_units.explain(X[:2]).values, by_kernel.explain(X[:2]).values, atol=1e-10)


@pytest.mark.parametrize(
    "kernel, reason",
    [
        (RBF() + Matern(nu=1.5), "sums several kernels"),
        (RBF() * Matern(nu=1.5), "multiplies two kernels"),
        (Matern(nu=2.0), "nu=2.0 is not read"),
    ],
)
def test_kernels_not_read_as_units_sample(kernel, reason, data):
    X, y = data
    model = GaussianProcessRegressor(kernel, optimizer=None, alpha=0.1).fit(X[:60], y[:60])
    sampled = PermutationShapExplainer(model, background_size=10, progress=False).fit(X)
    assert sampled.algorithm_ not in ("network", "product_kernel")
    with pytest.raises(TypeError, match=reason):
        PermutationShapExplainer(model, algorithm="network", background_size=10, progress=False).fit(X)


def test_a_probability_is_not_read_as_units(data):
    X, y = data
    model = _scaled(SVC(kernel="poly", probability=True, random_state=0)).fit(X, y > 0)
    with pytest.raises(ValueError, match="output 'probability' is not read from its kernel's units"):
        PermutationShapExplainer(model, output="probability", algorithm="network", background_size=10).fit(X)


def test_the_work_bound_takes_a_polynomial_further_than_a_sigmoid():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 14))
    target = X[:, 0] * X[:, 1]
    polynomial = KernelRidge(kernel="poly", degree=2).fit(X, target)  # by products: 2^14 coalitions fit the bound
    assert PermutationShapExplainer(polynomial, background_size=5, progress=False).fit(X).algorithm_ == "network"
    sigmoid = KernelRidge(kernel="sigmoid", gamma=0.01).fit(X, target)  # an exp per unit: 12 players
    sampled = PermutationShapExplainer(sigmoid, background_size=5, progress=False).fit(X)
    assert sampled.algorithm_ != "network"
    assert any("at most 12 players" in refusal for refusal in sampled.exact_refusals_)
    with pytest.raises(ValueError, match="kernel's units"):
        PermutationShapExplainer(sigmoid, algorithm="network", background_size=5, progress=False).fit(X)


def test_a_model_refitted_in_place_is_refused(data):
    X, y = data
    model = _scaled(KernelRidge(kernel="poly", degree=2)).fit(X, y)
    explainer = PermutationShapExplainer(model, background_size=10, progress=False).fit(X)
    assert explainer.algorithm_ == "network"
    model.fit(X, -y)
    with pytest.raises(ValueError, match="refitted or changed in place"):
        explainer.explain(X[:2])


@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
def test_a_calibrated_svc_probability_is_its_units_through_the_calibration(method, data):
    X, y = data
    model = CalibratedClassifierCV(_scaled(SVC()), method=method, ensemble=False).fit(X, y > 0)
    assert_auto_takes_the_enumerated_values(
        model, "probability", lambda rows: model.predict_proba(rows)[:, 1], X[:3], X[100:112], "ensemble"
    )


def test_hybrid_rows_at_anchors_are_exact_for_a_matern_half_kernel():
    """Hybrid rows exactly at training rows (a grid, a length scale of 0.001): u = 0 there, where √u has an infinite
    slope, so a distance expanded as ‖q‖² − 2q·s + ‖s‖² was off by 1e-5 (a review); summed term by term it is 0."""
    rng = np.random.default_rng(5)
    grid = np.array(np.meshgrid(*[np.arange(6.0)] * 3)).reshape(3, -1).T
    X = grid[rng.choice(len(grid), 150, replace=False)]
    model = GaussianProcessRegressor(Matern(length_scale=0.001, nu=0.5), optimizer=None, alpha=1e-6)
    model.fit(X, X.sum(axis=1) + rng.normal(size=150))
    background, rows = X[:10] + [0.5, 0.0, 0.0], X[10:13] + [0.0, 0.5, 0.0]
    assert_auto_takes_the_enumerated_values(model, "auto", model.predict, rows, background, "network")
    explainer = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
    explainer.explain(X[10:13])  # training rows themselves: no false "refitted" refusal


def test_a_refusal_names_the_kernels_units(data):
    X, y = data
    model = _scaled(SVC(kernel="sigmoid", gamma=0.05)).fit(X, np.digitize(y, [-1, 1]))  # "ovr": not the pairs read
    with pytest.raises(ValueError, match="its kernel's units"):
        PermutationShapExplainer(model, output="margin", algorithm="network", background_size=10).fit(X)


def test_a_pca_folds_into_a_dot_product_kernel_not_into_a_distance(data):
    from sklearn.decomposition import PCA

    X, y = data
    polynomial = make_pipeline(StandardScaler(), PCA(3), KernelRidge(kernel="poly", degree=2)).fit(X, y)
    assert_auto_takes_the_enumerated_values(polynomial, "auto", polynomial.predict, X[:2], X[100:112], "network")
    matern = make_pipeline(StandardScaler(), PCA(3), GaussianProcessRegressor(Matern(), optimizer=None)).fit(X, y)
    with pytest.raises(ValueError, match="a distance, after steps that mix the columns"):
        PermutationShapExplainer(matern, algorithm="network", background_size=10, progress=False).fit(X)
