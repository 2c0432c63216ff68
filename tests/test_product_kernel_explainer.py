"""ProductKernelShapExplainer on scikit-learn models: efficiency, axioms, games, API and errors."""

import matplotlib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern, WhiteKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM

from sklearn_shapq import DeviceUnavailableError, PermutationShapExplainer, ProductKernelShapExplainer

from brute_force import brute_force_shapley, interventional_value

matplotlib.use("Agg")

D = 5


@pytest.fixture(scope="module")
def regression():
    X, y = make_regression(n_samples=80, n_features=D, noise=0.5, random_state=0)
    return X / X.std(axis=0), y / y.std() * 3.0 + 10.0


@pytest.fixture(scope="module")
def classification():
    X, y = make_classification(n_samples=90, n_features=D, n_informative=3, n_classes=3, random_state=0)
    return X, y


def regressors(X, y):
    ard = ConstantKernel(4.0) * RBF(length_scale=np.linspace(0.5, 3.0, D)) + WhiteKernel(0.1)
    two_products = ConstantKernel(2.0) * RBF(1.0) + ConstantKernel(0.5) * RBF(np.full(D, 3.0))
    return {
        "SVR": (SVR(C=10.0, gamma="scale").fit(X, y), "predict"),
        "NuSVR": (NuSVR(C=5.0).fit(X, y), "predict"),
        "KernelRidge rbf": (KernelRidge(kernel="rbf", gamma=0.2, alpha=0.1).fit(X, y), "predict"),
        "KernelRidge laplacian": (KernelRidge(kernel="laplacian", gamma=0.3).fit(X, y), "predict"),
        "KernelRidge multi-output": (
            KernelRidge(kernel="rbf", gamma=0.2).fit(X, np.c_[y, -2 * y + X[:, 0]]),
            "predict",
        ),
        "GPR ARD normalize_y": (GaussianProcessRegressor(ard, normalize_y=True, optimizer=None).fit(X, y), "predict"),
        "GPR sum of products": (GaussianProcessRegressor(two_products, optimizer=None).fit(X, y), "predict"),
        "Pipeline scalers + SVR": (
            make_pipeline(StandardScaler(), MinMaxScaler(), SVR(C=10.0)).fit(X * 7.0 + 3.0, y),
            "predict",
        ),
        "Pipeline MaxAbs + KRR": (
            make_pipeline(MaxAbsScaler(), KernelRidge(kernel="laplacian", gamma=0.5)).fit(X, y),
            "predict",
        ),
    }


def classifiers(X, y):
    binary = (y == 1).astype(int)
    return {
        "SVC binary": (SVC(C=3.0).fit(X, binary), "decision_function"),
        "NuSVC binary": (NuSVC(nu=0.3).fit(X, binary), "decision_function"),
        "OneClassSVM": (OneClassSVM(nu=0.2, gamma=0.3).fit(X), "decision_function"),
        "GPC binary": (GaussianProcessClassifier(1.0 * RBF(1.0), optimizer=None).fit(X, binary), None),
        "GPC multiclass": (GaussianProcessClassifier(RBF(1.0), optimizer=None).fit(X, y), None),
        "SVC multiclass": (SVC(C=3.0, decision_function_shape="ovo").fit(X, y), "decision_function"),
    }


def explained_output(explainer, model, method, X):
    if method is None:  # GP classifiers: the latent mean is what is explained
        return explainer.model_output(X)
    return getattr(model, method)(X)


@pytest.mark.parametrize("value_function", ["pkex", "baseline", "interventional"])
def test_efficiency_for_every_supported_model(regression, classification, value_function):
    models = {**regressors(*regression), **classifiers(*classification)}
    for name, (model, method) in models.items():
        X = regression[0] if name in regressors(*regression) else classification[0]
        if name == "Pipeline scalers + SVR":
            X = X * 7.0 + 3.0
        explainer = ProductKernelShapExplainer(model, value_function=value_function, background_size=20).fit(X)
        explanation = explainer.explain(X[:6])
        output = np.asarray(explained_output(explainer, model, method, X[:6]), dtype=float)
        total = explanation.values.sum(axis=1) + explanation.base_values
        scale = max(1.0, np.abs(output).max())
        np.testing.assert_allclose(total, output.reshape(total.shape), rtol=0, atol=1e-8 * scale, err_msg=name)


def test_pkex_base_value_is_intercept_plus_weight_sum(regression):
    X, y = regression
    svr = SVR(C=10.0).fit(X, y)
    assert ProductKernelShapExplainer(svr).fit().expected_value_ == pytest.approx(svr.intercept_[0], abs=1e-9)
    krr = KernelRidge(kernel="rbf", gamma=0.2).fit(X, y)
    assert ProductKernelShapExplainer(krr).fit().expected_value_ == pytest.approx(krr.dual_coef_.sum(), rel=1e-12)


def test_interventional_equals_exact_enumeration(regression):
    X, y = regression
    model = make_pipeline(StandardScaler(), SVR(C=10.0, gamma=0.3)).fit(X, y)
    background = X[:12]
    ours = ProductKernelShapExplainer(model, value_function="interventional", background_size=None).fit(background)
    exact = PermutationShapExplainer(model, sampler="exact", background_size=None).fit(background)
    x = X[40:43]
    phi = ours.explain(x)
    np.testing.assert_allclose(phi.values, exact.explain(x).values, atol=1e-9)
    assert ours.expected_value_ == pytest.approx(exact.expected_value_, rel=1e-12)
    oracle = brute_force_shapley(lambda s: interventional_value(model.predict, x[0], background, s), D)
    np.testing.assert_allclose(phi.values[0], oracle, atol=1e-9)


def test_baseline_game_uses_the_reference_row(regression):
    X, y = regression
    model = SVR(C=10.0).fit(X, y)
    reference = X[:1]
    explainer = ProductKernelShapExplainer(model, value_function="baseline").fit(reference)
    x = X[5]
    oracle = brute_force_shapley(lambda s: interventional_value(model.predict, x, reference, s), D)
    np.testing.assert_allclose(explainer.shap_values(x[None])[0], oracle, atol=1e-10)
    mean_reference = ProductKernelShapExplainer(model, value_function="baseline").fit(X)
    np.testing.assert_allclose(mean_reference.references_, X.mean(axis=0, keepdims=True))


@pytest.mark.parametrize("value_function", ["pkex", "interventional"])
def test_all_methods_agree_on_a_model(regression, value_function):
    X, y = regression
    model = GaussianProcessRegressor(ConstantKernel(2.0) * RBF(np.linspace(0.5, 2, D)), optimizer=None).fit(X, y)
    results = [
        ProductKernelShapExplainer(model, value_function=value_function, method=m, background_size=8, random_state=0)
        .fit(X)
        .shap_values(X[:4])
        for m in ("auto", "prefix_suffix", "quadrature", "brute_force")
    ]
    for other in results[1:]:
        np.testing.assert_allclose(other, results[0], atol=1e-10)


def test_symmetry_and_permutation_of_features():
    rng = np.random.default_rng(0)
    anchors = rng.normal(size=(20, 4))
    anchors[:, 1] = anchors[:, 0]
    alpha = rng.normal(size=20)
    gammas = np.array([0.5, 0.5, 1.0, 2.0])
    x = rng.normal(size=(3, 4))
    x[:, 1] = x[:, 0]
    phi = ProductKernelShapExplainer.from_dual(alpha, anchors, gamma=gammas).fit().shap_values(x)
    np.testing.assert_allclose(phi[:, 0], phi[:, 1], rtol=1e-13)
    order = np.array([3, 1, 0, 2])
    permuted = ProductKernelShapExplainer.from_dual(alpha, anchors[:, order], gamma=gammas[order]).fit()
    np.testing.assert_allclose(permuted.shap_values(x[:, order]), phi[:, order], rtol=1e-12, atol=1e-15)


def test_null_players_get_exactly_zero():
    rng = np.random.default_rng(1)
    anchors = rng.normal(size=(15, 4))
    anchors[:, 3] = 2.5  # constant across anchors and explained rows
    x = rng.normal(size=(3, 4))
    x[:, 3] = 2.5
    explainer = ProductKernelShapExplainer.from_dual(rng.normal(size=15), anchors, gamma=[1.0, 0.0, 0.5, 1.0]).fit()
    phi = explainer.shap_values(x)
    assert np.all(phi[:, 1] == 0.0) and np.all(phi[:, 3] == 0.0)
    assert np.all(phi[:, 0] != 0.0)


def test_linearity_over_concatenated_models():
    rng = np.random.default_rng(2)
    a1, a2 = rng.normal(size=(10, 3)), rng.normal(size=(7, 3))
    w1, w2 = rng.normal(size=10), rng.normal(size=7)
    gamma = np.array([0.3, 1.0, 2.0])
    x = rng.normal(size=(4, 3))

    def phi(w, a):
        return ProductKernelShapExplainer.from_dual(w, a, gamma=gamma, kernel="laplacian").fit().shap_values(x)

    np.testing.assert_allclose(phi(np.r_[w1, w2], np.r_[a1, a2]), phi(w1, a1) + phi(w2, a2), atol=1e-13)


def test_multiclass_outputs_and_names(classification):
    X, y = classification
    model = SVC(decision_function_shape="ovo").fit(X, y)
    explanation = ProductKernelShapExplainer(model).fit(X).explain(X[:3])
    assert explanation.values.shape == (3, D, 3) and explanation.base_values.shape == (3, 3)
    assert len(explanation.output_names) == 3


def test_pandas_names_float32_and_plots(regression):
    X, y = regression
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(D)])
    model = SVR(C=10.0).fit(frame, y)
    explainer = ProductKernelShapExplainer(model).fit(frame)
    explanation = explainer.explain(frame.iloc[:4].astype(np.float32))
    assert explanation.feature_names == list(frame.columns)
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, model.predict(frame.iloc[:4]))
    import shap

    shap.plots.waterfall(explanation[0], show=False)
    shap.plots.bar(explanation, show=False)
    matplotlib.pyplot.close("all")


def test_clone_batches_and_progress_do_not_change_results(regression):
    X, y = regression
    model = SVR(C=10.0).fit(X, y)
    explainer = ProductKernelShapExplainer(model, batch_size=3, progress=True).fit(X)
    copy = clone(explainer)
    assert copy.model is model and copy.get_params()["batch_size"] == 3
    np.testing.assert_allclose(
        explainer.shap_values(X[:7]), ProductKernelShapExplainer(model).fit(X).shap_values(X[:7]), atol=1e-13
    )


def test_reproducible_background_subsample(regression):
    X, y = regression
    model = SVR().fit(X, y)

    def fit(seed):
        return ProductKernelShapExplainer(
            model, value_function="interventional", background_size=10, random_state=seed
        ).fit(X)

    np.testing.assert_array_equal(fit(3).references_, fit(3).references_)
    assert not np.array_equal(fit(3).references_, fit(4).references_)


def test_bad_input_and_unsupported_models(regression):
    X, y = regression
    model = SVR().fit(X, y)
    with pytest.raises(TypeError, match="[Pp]roduct|support"):
        ProductKernelShapExplainer(SVR(kernel="poly").fit(X, y)).fit(X)
    with pytest.raises(TypeError, match="[Pp]roduct|support"):
        ProductKernelShapExplainer(GaussianProcessRegressor(Matern(), optimizer=None).fit(X, y)).fit(X)
    with pytest.raises(TypeError, match="[Pp]roduct|support"):
        ProductKernelShapExplainer(KernelRidge(kernel="polynomial").fit(X, y)).fit(X)
    with pytest.raises(NotFittedError):
        ProductKernelShapExplainer(SVR()).fit(X)
    with pytest.raises(NotFittedError):
        ProductKernelShapExplainer(model).explain(X)
    bad = X[:3].copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ProductKernelShapExplainer(model).fit(X).explain(bad)
    with pytest.raises(ValueError, match="features"):
        ProductKernelShapExplainer(model).fit(X).explain(X[:, :3])
    with pytest.raises(ValueError, match="reference data"):
        ProductKernelShapExplainer(model, value_function="baseline").fit()
    with pytest.raises(ValueError, match="value_function"):
        ProductKernelShapExplainer(model, value_function="observational").fit(X)
    with pytest.raises(ValueError, match="method"):
        ProductKernelShapExplainer(model, method="newton").fit(X)
    with pytest.raises(ValueError, match="brute_force"):
        ProductKernelShapExplainer.from_dual(np.ones(3), np.zeros((3, 20)), method="brute_force").fit().explain(
            np.zeros((1, 20))
        )


def test_cuda_is_a_clear_error_without_a_gpu_and_exact_with_one(regression):
    from sklearn_shapq.backends._device import _cuda_device_count

    X, y = regression
    explainer = ProductKernelShapExplainer(SVR().fit(X, y), device="cuda")
    if _cuda_device_count() == 0:
        with pytest.raises(DeviceUnavailableError):
            explainer.fit(X)
    else:
        np.testing.assert_allclose(
            explainer.fit(X).shap_values(X[:3]), ProductKernelShapExplainer(explainer.model).fit(X).shap_values(X[:3])
        )
