"""ProductKernelShapExplainer on scikit-learn models: efficiency, axioms, games, API and errors."""

import matplotlib
import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern, WhiteKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_param_validation

from sklearn_shapq import DeviceUnavailableError, PermutationShapExplainer, ProductKernelShapExplainer

from brute_force import brute_force_shapley, interventional_value
from fitted_state import assert_call_changes_nothing, threaded_results

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
    exact = PermutationShapExplainer(model, algorithm="exact", background_size=None).fit(background)
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
        ProductKernelShapExplainer(model, value_function=value_function, algorithm=m, background_size=8, random_state=0)
        .fit(X)
        .shap_values(X[:4])
        for m in ("auto", "prefix_suffix", "quadrature", "brute_force")
    ]
    for other in results[1:]:
        np.testing.assert_allclose(other, results[0], atol=1e-10)


GROUPED_KERNELS = ["rbf", "laplacian", "cauchy", "rbf", "laplacian", "cauchy"]
GROUPED_COLUMNS = list("abcdef")


def dual_model(x, anchors, alpha, gammas, intercept):
    """f(x) = b + Σ_i α_i Π_j k_j(x_j, X_ij) for the kernels of GROUPED_KERNELS, written out."""
    diff = x[:, None, :] - anchors[None]
    kinds = np.array(GROUPED_KERNELS)
    factors = np.where(
        kinds == "rbf",
        np.exp(-gammas * diff**2),
        np.where(kinds == "laplacian", np.exp(-gammas * np.abs(diff)), 1.0 / (1.0 + gammas * diff**2)),
    )
    return factors, intercept + np.prod(factors, axis=2) @ alpha


GROUPINGS = [  # feature_groups, and the players they make: (name, columns), ordered by first column
    ({"bdf": ["d", "b", "f"]}, [("a", [0]), ("bdf", [1, 3, 5]), ("c", [2]), ("e", [4])]),
    ({"bdf": [3, 1, -1]}, [("a", [0]), ("bdf", [1, 3, 5]), ("c", [2]), ("e", [4])]),
    ({"fe": ["f", "e"], "bd": [3, "b"]}, [("a", [0]), ("bd", [1, 3]), ("c", [2]), ("fe", [4, 5])]),
]


@pytest.mark.parametrize("method", ["prefix_suffix", "quadrature", "brute_force"])
@pytest.mark.parametrize("value_function", ["pkex", "interventional"])
@pytest.mark.parametrize("feature_groups, players", GROUPINGS)
def test_feature_groups_match_brute_force_of_the_grouped_game(feature_groups, players, value_function, method):
    rng = np.random.default_rng(12)
    anchors, alpha = rng.normal(size=(9, 6)), rng.normal(size=9)
    gammas, intercept = rng.uniform(0.2, 1.5, size=6), 0.7
    background = pd.DataFrame(rng.normal(size=(4, 6)), columns=GROUPED_COLUMNS)
    x = rng.normal(size=(3, 6))
    explainer = ProductKernelShapExplainer.from_dual(
        alpha,
        anchors,
        kernel=GROUPED_KERNELS,
        gamma=gammas,
        intercept=intercept,
        value_function=value_function,
        algorithm=method,
        background_size=None,
        feature_groups=feature_groups,
    ).fit(background)
    explanation = explainer.explain(pd.DataFrame(x, columns=GROUPED_COLUMNS))
    assert explanation.feature_names == [name for name, _ in players]
    for row, values, data in zip(x, explanation.values, explanation.data, strict=True):

        def value(coalition, row=row):
            present = np.zeros(6, bool)
            for p in coalition:
                present[players[p][1]] = True
            if value_function == "pkex":  # absent factors are 1
                factors = dual_model(row[None], anchors, alpha, gammas, intercept)[0][0]
                return intercept + np.prod(np.where(present, factors, 1.0), axis=1) @ alpha
            rows = np.where(present, row, background.to_numpy())  # absent columns from the background rows
            return dual_model(rows, anchors, alpha, gammas, intercept)[1].mean()

        np.testing.assert_allclose(values, brute_force_shapley(value, len(players)), rtol=0, atol=1e-10)
        f_x = dual_model(row[None], anchors, alpha, gammas, intercept)[1][0]
        assert values.sum() + explainer.expected_value_ == pytest.approx(f_x, abs=1e-10)
        expected_data = [row[columns[0]] if len(columns) == 1 else np.nan for _, columns in players]
        np.testing.assert_array_equal(data, expected_data)


def test_feature_groups_by_index_on_arrays_and_names_of_the_fitted_groups(regression):
    X, y = regression
    model = SVR(C=10.0).fit(X, y)
    grouped = ProductKernelShapExplainer(model, feature_groups={"x13": [3, 1]}).fit(X)
    assert grouped.feature_groups_.names == ["x0", "x13", "x2", "x4"]
    assert grouped.feature_names_ == [f"x{j}" for j in range(D)]
    explanation = grouped.explain(X[:4])
    assert explanation.values.shape == (4, 4) and explanation.feature_names == grouped.feature_groups_.names
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, model.predict(X[:4]), atol=1e-9)


@pytest.mark.parametrize(
    "feature_groups, match",
    [
        ({"g": ["f0", "height"]}, "'height', which is not a column"),
        ({"g": ["f0", "f1"], "h": ["f2", 1]}, "'f1' appears in groups 'g' and 'h'"),
        ({"g": [7]}, "column index 7, but there are 5 columns"),
    ],
)
def test_bad_feature_groups_are_refused_in_fit(regression, feature_groups, match):
    X, y = regression
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(D)])
    explainer = ProductKernelShapExplainer(SVR().fit(frame, y), feature_groups=feature_groups)
    with pytest.raises(ValueError, match=match):
        explainer.fit(frame)


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


def test_clone_blocks_and_progress_do_not_change_results(regression):
    X, y = regression
    model = SVR(C=10.0).fit(X, y)
    explainer = ProductKernelShapExplainer(model, progress=False).fit(X)
    copy = clone(explainer)
    assert copy.model is model and copy.get_params()["progress"] is False
    reference = ProductKernelShapExplainer(model).fit(X).shap_values(X[:7])
    # a row of d = 5, one output: 8 (5 + (4 + 1 chunk of support vectors) 5) = 240 bytes; 3 rows per call
    with sklearn.config_context(working_memory=720 / 2**20):
        assert explainer._block_rows(7) == 3
        np.testing.assert_array_equal(explainer.shap_values(X[:7]), reference)  # blocks change no bit
    assert explainer._block_rows(7) == 256  # the default 1 GiB: capped at 256 rows per call


def test_method_is_resolved_in_fit():
    rng = np.random.default_rng(0)
    for d, method, expected in [
        (4, "auto", "prefix_suffix"),
        (600, "auto", "quadrature"),
        (4, "brute_force", "brute_force"),
        (4, "quadrature", "quadrature"),
    ]:
        explainer = ProductKernelShapExplainer.from_dual(rng.normal(size=3), rng.normal(size=(3, d)), algorithm=method)
        fitted = explainer.fit()
        assert fitted.algorithm_ == expected and fitted.device_ == "cpu"
    with pytest.raises(ValueError, match="brute_force"):
        ProductKernelShapExplainer.from_dual(np.ones(3), np.zeros((3, 20)), algorithm="brute_force").fit()
    with pytest.raises(ValueError, match="overflows"):
        ProductKernelShapExplainer.from_dual(np.ones(3), np.zeros((3, 1001)), algorithm="prefix_suffix").fit()


@pytest.mark.parametrize("value_function", ["pkex", "baseline", "interventional"])
def test_explain_changes_nothing_on_the_explainer(regression, value_function):
    X, y = regression
    explainer = ProductKernelShapExplainer(
        SVR(C=10.0).fit(X, y), value_function=value_function, background_size=10, random_state=0
    ).fit(X)
    explanation = assert_call_changes_nothing(explainer, lambda e: e.explain(X[:4]))
    assert_call_changes_nothing(explainer, lambda e: e(X[:4]))
    assert_call_changes_nothing(explainer, lambda e: e.shap_values(X[:4]))
    assert_call_changes_nothing(explainer, lambda e: e.model_output(X[:4]))
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, explainer.model.predict(X[:4]))


@pytest.mark.parametrize("value_function", ["pkex", "interventional"])
def test_threads_give_the_serial_values(regression, value_function):
    X, y = regression
    model = KernelRidge(kernel="rbf", gamma=0.2).fit(X, np.c_[y, -y])
    explainer = ProductKernelShapExplainer(model, value_function=value_function, background_size=10).fit(X)
    serial = explainer.shap_values(X[:30])
    for values in threaded_results(lambda: explainer.shap_values(X[:30])):
        np.testing.assert_array_equal(values, serial)


@pytest.mark.parametrize(
    "name, value",
    [
        ("model", "SVR"),
        ("value_function", "observational"),
        ("method", "newton"),
        ("background_size", 0),
        ("feature_groups", ["f0"]),
        ("device", "tpu"),
        ("random_state", "seed"),
        ("progress", "yes"),
    ],
)
def test_invalid_parameters_raise_invalid_parameter_error(regression, name, value):
    X, y = regression
    explainer = ProductKernelShapExplainer(SVR().fit(X, y)).set_params(**{name: value})
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        explainer.fit(X)


def test_every_parameter_is_constrained():
    explainer = ProductKernelShapExplainer.from_dual(np.ones(4), np.eye(4, 5), progress=False)
    assert set(ProductKernelShapExplainer._parameter_constraints) == set(explainer.get_params(deep=False))
    check_param_validation("ProductKernelShapExplainer", explainer)  # a bad type and a bad value per parameter


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


def test_cuda_without_a_gpu_is_a_clear_error_at_fit(regression, monkeypatch):
    from sklearn_shapq.backends import _device

    monkeypatch.setattr(_device, "_cuda_device_count", lambda: 0)
    X, y = regression
    for device in ("cuda", "cuda:1"):
        with pytest.raises(DeviceUnavailableError):
            ProductKernelShapExplainer(SVR().fit(X, y), device=device).fit(X)
    assert ProductKernelShapExplainer(SVR().fit(X, y), device="auto").fit(X).device_ == "cpu"


@pytest.mark.gpu
@pytest.mark.parametrize("value_function", ["pkex", "interventional"])
def test_cuda_equals_cpu(regression, value_function):
    X, y = regression
    model = SVR().fit(X, y)
    params = {"value_function": value_function, "background_size": 10, "random_state": 0}  # one background
    cuda = ProductKernelShapExplainer(model, device="cuda", **params).fit(X)
    cpu = ProductKernelShapExplainer(model, **params).fit(X)
    assert cuda.device_ == "cuda:0" and cuda.algorithm_ == "quadrature"
    np.testing.assert_allclose(cuda.shap_values(X[:9]), cpu.shap_values(X[:9]), rtol=1e-10, atol=1e-12)
    assert cuda.expected_value_ == pytest.approx(cpu.expected_value_, rel=1e-12)


@pytest.mark.parametrize("value_function", ["pkex", "baseline", "interventional"])
def test_the_cuda_backends_array_code_gives_the_cpu_values(regression, value_function, monkeypatch):
    """The CUDA path (its array code, on the strict twin: cupy's rules with numpy) equals the CPU to rounding."""
    from sklearn_shapq.explainers import _product_kernel_explainer

    from strict_twin import StrictBackend

    X, y = regression
    model = SVR().fit(X, y)
    params = {"value_function": value_function, "background_size": 10, "random_state": 0}
    cpu = ProductKernelShapExplainer(model, **params).fit(X)
    twin = StrictBackend()
    monkeypatch.setattr(_product_kernel_explainer, "resolve_backend", lambda device: twin)
    on_twin = ProductKernelShapExplainer(model, **params).fit(X)
    assert on_twin.algorithm_ == "quadrature"
    np.testing.assert_allclose(on_twin.shap_values(X[:9]), cpu.shap_values(X[:9]), rtol=1e-10, atol=1e-12)
    assert on_twin.expected_value_ == pytest.approx(cpu.expected_value_, rel=1e-12)


def test_costly_interventional_game_warns_at_the_callers_line(monkeypatch):
    from sklearn_shapq.explainers import _product_kernel_explainer

    monkeypatch.setattr(_product_kernel_explainer, "_COSTLY_OPERATIONS", 1)
    rng = np.random.default_rng(0)
    explainer = ProductKernelShapExplainer.from_dual(
        np.ones(3), rng.normal(size=(3, 2)), value_function="interventional"
    )
    with pytest.warns(UserWarning, match="background_size") as record:
        explainer.fit(rng.normal(size=(5, 2)))
    assert record[0].filename == __file__


@pytest.mark.parametrize("value_function", ["baseline", "interventional"])
def test_a_row_alone_is_bit_identical_to_the_row_in_a_batch(value_function):
    """A row's sum over the support vectors is chunked by a fixed size, never by the batch."""
    X, y = make_regression(900, 6, noise=1.0, random_state=3)
    model = SVR(C=10.0, gamma=0.05).fit(X[:700], y[:700])  # several hundred support vectors: several chunks
    explainer = ProductKernelShapExplainer(model, value_function=value_function, progress=False).fit(X[:30])
    batch = explainer.explain(X[700:780]).values
    for row in (0, 13, 79):
        np.testing.assert_array_equal(explainer.explain(X[700 + row : 701 + row]).values[0], batch[row])


def test_a_model_refitted_in_place_is_refused_before_any_value():
    """The dual form read in fit would explain the model as it was, with values summing to its old output."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 4))
    y = X[:, 0] - X[:, 1] ** 2
    model = SVR(gamma=0.3).fit(X, y)
    explainer = ProductKernelShapExplainer(model, progress=False).fit(X)
    model.fit(X, -y)
    with pytest.raises(ValueError, match="differs from the dual form read in fit"):
        explainer.explain(X[:3])
    explanation = explainer.fit(X).explain(X[:3])
    np.testing.assert_allclose(explanation.values.sum(1) + explanation.base_values, model.predict(X[:3]), atol=1e-8)
