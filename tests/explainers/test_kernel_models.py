"""Product-kernel expansions of fitted scikit-learn models: reconstruction, refusals and validation."""

import copy

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.decomposition import PCA
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, DotProduct, Matern, RationalQuadratic, WhiteKernel
from sklearn.gaussian_process.kernels import ConstantKernel as C
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM

from sklearn_shapq.backends._product_kernel import FACTOR_KINDS
from sklearn_shapq.explainers._kernel_models import (
    check_reconstruction,
    expansion_from_dual,
    extract_expansion,
    model_output,
)
from sklearn_shapq.games._kernel_expansion import KernelExpansion

RTOL = 1e-10


def _regression(d=5, n=80, n_targets=1, seed=0):
    """A smooth non-linear target of features with different scales and centres; X_test is 20 more rows."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n + 20, d))
    targets = [np.sin(2 * Z[:, t % d]) + Z[:, (t + 1) % d] * Z[:, (t + 2) % d] + 3.0 for t in range(n_targets)]
    y = np.column_stack(targets) + 0.1 * rng.normal(size=(n + 20, n_targets))
    X = Z * np.linspace(0.5, 3.0, d) + np.arange(d)
    return X[:n], (y[:n, 0] if n_targets == 1 else y[:n]), X[n:]


def _classification(n_classes=2, d=5, n=90, seed=0):
    X, y = make_classification(
        n_samples=n + 20,
        n_features=d,
        n_informative=3,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        random_state=seed,
    )
    return X[:n], y[:n], X[n:]


def _assert_reconstructs(model, X_test, public=None):
    """The expansion equals model_output (and model_output the public method) to RTOL relative."""
    expansion = extract_expansion(model)
    assert isinstance(expansion, KernelExpansion)
    expected = model_output(model, X_test)
    assert expected.ndim == 2 and expected.shape == (X_test.shape[0], expansion.n_outputs)
    scale = max(1.0, np.max(np.abs(expected)))
    np.testing.assert_allclose(expansion.predict(X_test), expected, rtol=0, atol=RTOL * scale)
    if public is not None:
        np.testing.assert_allclose(expected, np.reshape(public(X_test), expected.shape), rtol=0, atol=1e-12 * scale)
    assert check_reconstruction(expansion, model, X_test, rtol=RTOL) <= RTOL * scale
    return expansion


# --- support vector machines ---------------------------------------------------------------------------------


@pytest.mark.parametrize("estimator", [SVR(C=3.0, gamma="scale"), NuSVR(gamma=0.05, nu=0.4)])
def test_svr_family(estimator):
    X, y, X_test = _regression()
    model = estimator.fit(X, y)
    expansion = _assert_reconstructs(model, X_test, model.predict)
    assert expansion.n_outputs == 1 and expansion.output_names is None
    assert expansion.description == f"{type(estimator).__name__}.predict"
    (component,) = expansion.components
    assert np.all(component.kinds == FACTOR_KINDS["rbf"])
    assert np.allclose(component.gammas, model._gamma)
    assert abs(expansion.weight_sum()[0]) < 1e-8  # the SVR dual constraint: Σα = 0


@pytest.mark.parametrize("estimator", [SVC(C=2.0), NuSVC(nu=0.3, gamma=0.1)])
def test_binary_svc_family(estimator):
    X, y, X_test = _classification()
    model = estimator.fit(X, np.where(y == 1, "yes", "no"))
    expansion = _assert_reconstructs(model, X_test, model.decision_function)
    positive = expansion.predict(X_test)[:, 0] > 0
    assert np.array_equal(model.predict(X_test) == model.classes_[1], positive)


@pytest.mark.parametrize("estimator", [SVC(C=2.0, gamma=0.2), NuSVC(nu=0.2)])
def test_multiclass_svc_one_vs_one(estimator):
    X, y, X_test = _classification(n_classes=3)
    labels = np.array(["a", "b", "c"])[y]
    model = estimator.fit(X, labels)
    ovo = copy.copy(model)
    ovo.decision_function_shape = "ovo"
    expansion = _assert_reconstructs(model, X_test, ovo.decision_function)
    assert expansion.output_names == ["a vs b", "a vs c", "b vs c"]
    assert model.decision_function_shape == "ovr"  # the model itself is untouched
    # positive values vote for the first class of the pair: the votes give the predicted classes
    values = expansion.predict(X_test)
    votes = np.zeros((X_test.shape[0], 3))
    for column, (p, q) in enumerate([(0, 1), (0, 2), (1, 2)]):
        votes[:, p] += values[:, column] > 0
        votes[:, q] += values[:, column] <= 0
    assert np.array_equal(model.classes_[votes.argmax(axis=1)], model.predict(X_test))


def test_one_class_svm():
    X, _, X_test = _regression()
    model = OneClassSVM(gamma=0.05, nu=0.3).fit(X)
    expansion = _assert_reconstructs(model, X_test, model.decision_function)
    assert expansion.weight_sum()[0] == pytest.approx(0.3 * X.shape[0])  # Σα = ν·n


def test_svm_fitted_on_sparse_data():
    from scipy import sparse

    X, y, X_test = _regression()
    model = SVR(gamma=0.1).fit(sparse.csr_matrix(X), y)
    _assert_reconstructs(model, X_test, model.predict)  # libsvm converts dense rows itself


# --- kernel ridge --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "kind"),
    [
        ({"kernel": "rbf", "gamma": 0.05}, "rbf"),
        ({"kernel": "rbf"}, "rbf"),  # gamma=None: 1/n_features
        ({"kernel": "laplacian", "gamma": 0.2}, "laplacian"),
        ({"kernel": "laplacian"}, "laplacian"),
        ({"kernel": "rbf", "gamma": 0.05, "kernel_params": {"gamma": 9.0}}, "rbf"),  # ignored for strings
    ],
)
def test_kernel_ridge(params, kind):
    X, y, X_test = _regression()
    model = KernelRidge(alpha=0.3, **params).fit(X, y)
    expansion = _assert_reconstructs(model, X_test, model.predict)
    (component,) = expansion.components
    assert np.all(component.kinds == FACTOR_KINDS[kind])
    assert np.allclose(component.gammas, params.get("gamma", 1 / X.shape[1]))
    assert np.array_equal(expansion.intercept, [0.0])


def test_kernel_ridge_multi_output():
    X, y, X_test = _regression(n_targets=3)
    model = KernelRidge(kernel="rbf", gamma=0.05, alpha=0.1).fit(X, y)
    expansion = _assert_reconstructs(model, X_test, model.predict)
    assert expansion.n_outputs == 3
    assert expansion.output_names == ["output 0", "output 1", "output 2"]


# --- Gaussian processes --------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # the unused feature's length scale
def test_gpr_ard_with_noise_and_normalize_y():
    X, y, X_test = _regression(d=4)
    kernel = C(2.0) * RBF(length_scale=np.ones(4)) + WhiteKernel(0.1)
    model = GaussianProcessRegressor(kernel, normalize_y=True, random_state=0).fit(X, 10 * y + 40)
    expansion = _assert_reconstructs(model, X_test, model.predict)
    (component,) = expansion.components  # the WhiteKernel term is dropped
    length_scale = model.kernel_.k1.k2.length_scale
    assert np.allclose(component.gammas, 0.5 / length_scale**2)
    assert len(np.unique(component.gammas)) == 4
    assert component.gammas[3] < 1e-8  # the target ignores feature 3: ARD makes it (almost) a null player
    assert expansion.intercept[0] == pytest.approx(np.mean(10 * y + 40))


def test_gpr_sum_of_products_and_nested_products():
    X, y, X_test = _regression(d=4)
    kernel = C(1.5) * RBF(2.0) + RBF(np.full(4, 4.0)) * C(0.5) * RBF(3.0) + C(0.3)
    model = GaussianProcessRegressor(kernel, alpha=1e-2, optimizer=None).fit(X, y)
    expansion = _assert_reconstructs(model, X_test, model.predict)
    assert len(expansion.components) == 3
    assert np.allclose(expansion.components[1].gammas, 0.5 / 4.0**2 + 0.5 / 3.0**2)  # RBF·RBF: γ adds
    assert np.array_equal(expansion.components[2].gammas, np.zeros(4))  # a constant term: all null players


def test_gpr_default_kernel_and_multi_output():
    X, y, X_test = _regression(d=4, n_targets=2)
    model = GaussianProcessRegressor(alpha=1e-2, normalize_y=True, optimizer=None).fit(X, y)
    expansion = _assert_reconstructs(model, X_test, model.predict)
    assert expansion.n_outputs == 2 and expansion.output_names == ["output 0", "output 1"]


def test_gpc_binary_latent_mean():
    X, y, X_test = _classification(d=4)
    model = GaussianProcessClassifier(C(2.0) * RBF(np.ones(4)), optimizer=None).fit(X, y)
    expansion = _assert_reconstructs(model, X_test, lambda rows: model.latent_mean_and_variance(rows)[0])
    assert expansion.n_outputs == 1 and expansion.description == "GaussianProcessClassifier latent mean"
    positive = expansion.predict(X_test)[:, 0] > 0
    assert np.array_equal(model.predict(X_test) == model.classes_[1], positive)


def test_gpc_one_vs_rest():
    X, y, X_test = _classification(n_classes=3, d=4)
    model = GaussianProcessClassifier(RBF(1.5) + WhiteKernel(0.1), optimizer=None).fit(X, y + 1)
    expansion = _assert_reconstructs(model, X_test)
    assert expansion.output_names == ["1", "2", "3"]
    assert len(expansion.components) == 3
    for column, (component, member) in enumerate(
        zip(expansion.components, model.base_estimator_.estimators_, strict=True)
    ):
        latent = member.latent_mean_and_variance(X_test)[0]
        np.testing.assert_allclose(component.kernel_rows(X_test) @ component.weights[:, column], latent, atol=1e-12)


def test_gpc_one_vs_one_refused():
    X, y, _ = _classification(n_classes=3, d=4)
    model = GaussianProcessClassifier(RBF(1.0), optimizer=None, multi_class="one_vs_one").fit(X, y)
    with pytest.raises(TypeError, match="one_vs_one"):
        extract_expansion(model)


# --- pipelines -----------------------------------------------------------------------------------------------


def test_pipeline_standard_scaler_svr():
    X, y, X_test = _regression()
    model = make_pipeline(StandardScaler(), SVR(C=3.0)).fit(X, y)
    expansion = _assert_reconstructs(model, X_test, model.predict)
    svr = model[-1]
    scaler = model[0]
    (component,) = expansion.components
    np.testing.assert_allclose(component.gammas, svr._gamma / scaler.scale_**2)
    np.testing.assert_allclose(component.anchors, scaler.inverse_transform(svr.support_vectors_))
    assert expansion.description == "Pipeline(StandardScaler) -> SVR.predict"


def test_pipeline_two_scalers_laplacian_kernel_ridge():
    X, y, X_test = _regression()
    model = make_pipeline(
        MinMaxScaler(feature_range=(-1, 2)), "passthrough", MaxAbsScaler(), KernelRidge(kernel="laplacian", gamma=0.4)
    )
    model.fit(X, y)
    expansion = _assert_reconstructs(model, X_test, model.predict)
    assert np.all(expansion.components[0].kinds == FACTOR_KINDS["laplacian"])


@pytest.mark.parametrize(
    "scaler",
    [
        StandardScaler(with_mean=False),
        StandardScaler(with_std=False),
        RobustScaler(),
        RobustScaler(with_centering=False),
    ],
)
def test_pipeline_scaler_options(scaler):
    X, y, X_test = _classification(n_classes=3)
    model = make_pipeline(scaler, SVC(gamma=0.3)).fit(X, y)
    _assert_reconstructs(model, X_test)


def test_pipeline_gpr_and_one_class_svm():
    X, y, X_test = _regression(d=4)
    gpr = make_pipeline(StandardScaler(), GaussianProcessRegressor(C(1.0) * RBF(np.ones(4)), optimizer=None))
    _assert_reconstructs(gpr.fit(X, y), X_test, gpr.predict)
    ocsvm = make_pipeline(MinMaxScaler(), OneClassSVM(gamma=2.0)).fit(X)
    _assert_reconstructs(ocsvm, X_test, ocsvm.decision_function)


# --- refusals ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kernel", [Matern(1.0), C(1.0) * RationalQuadratic(), DotProduct() + WhiteKernel(), RBF(1.0) ** 2]
)
def test_gp_kernels_that_are_not_product_kernels(kernel):
    X, y, _ = _regression(d=4, n=40)
    model = GaussianProcessRegressor(kernel, optimizer=None, alpha=1e-2).fit(X, y)
    with pytest.raises(TypeError, match="RBF"):
        extract_expansion(model)


@pytest.mark.parametrize(
    "estimator",
    [
        SVR(kernel="poly"),
        NuSVC(kernel="linear"),
        OneClassSVM(kernel="sigmoid"),
        SVR(kernel=rbf_kernel),
        KernelRidge(kernel="polynomial"),
        KernelRidge(kernel="linear"),
        KernelRidge(kernel=lambda a, b: np.exp(-np.sum((a - b) ** 2))),
        RandomForestRegressor(n_estimators=3),
        make_pipeline(PCA(3), SVR()),
    ],
)
def test_unsupported_models(estimator):
    X, y, _ = _regression(n=40)
    model = estimator.fit(X, y > np.median(y) if isinstance(estimator, NuSVC) else y)
    with pytest.raises(TypeError, match="PermutationShapExplainer") as info:
        extract_expansion(model)
    assert "KernelRidge" in str(info.value)


def test_minmax_scaler_with_clip_refused():
    X, y, _ = _regression(n=40)
    model = make_pipeline(MinMaxScaler(clip=True), SVR()).fit(X, y)
    with pytest.raises(TypeError, match="clip"):
        extract_expansion(model)


@pytest.mark.parametrize(
    "estimator",
    [
        SVR(),
        SVC(),
        OneClassSVM(),
        KernelRidge(kernel="rbf"),
        GaussianProcessRegressor(),
        GaussianProcessClassifier(),
        make_pipeline(StandardScaler(), SVR()),
    ],
)
def test_unfitted_models(estimator):
    with pytest.raises(NotFittedError):
        extract_expansion(estimator)
    with pytest.raises(NotFittedError):
        model_output(estimator, np.zeros((2, 3)))


# --- check_reconstruction ------------------------------------------------------------------------------------


def test_check_reconstruction_rejects_a_wrong_expansion():
    X, y, X_test = _regression()
    model = SVR(gamma=0.1).fit(X, y)
    right = extract_expansion(model)
    assert check_reconstruction(right, model, X_test) < 1e-10
    (component,) = right.components
    wrong = expansion_from_dual(component.weights, component.anchors, gamma=0.1 * 1.01, intercept=right.intercept)
    with pytest.raises(ValueError, match="does not reproduce SVR"):
        check_reconstruction(wrong, model, X_test)
    bad_shape = expansion_from_dual(np.ones((5, 2)), X[:5])
    with pytest.raises(ValueError, match="shape"):
        check_reconstruction(bad_shape, model, X_test)


def test_check_reconstruction_rejects_nan():
    X, y, X_test = _regression()
    model = KernelRidge(kernel="rbf").fit(X, y)
    expansion = extract_expansion(model)
    expansion.intercept[:] = np.nan
    with pytest.raises(ValueError, match="does not reproduce"):
        check_reconstruction(expansion, model, X_test)


# --- expansion_from_dual -------------------------------------------------------------------------------------


def test_expansion_from_dual_matches_direct_formula():
    rng = np.random.default_rng(0)
    X_fit, alpha, x = rng.normal(size=(30, 3)), rng.normal(size=(30, 2)), rng.normal(size=(7, 3))
    length_scale = np.array([0.5, 1.0, 2.0])
    expansion = expansion_from_dual(
        alpha, X_fit, kernel=["rbf", "laplacian", "cauchy"], length_scale=length_scale, amplitude=2.0, intercept=[1, -1]
    )
    diff = x[:, None, :] - X_fit[None]
    factors = np.stack(
        [
            np.exp(-(diff[..., 0] ** 2) / (2 * 0.5**2)),
            np.exp(-np.abs(diff[..., 1]) / 1.0),
            1 / (1 + diff[..., 2] ** 2 / 2.0**2),
        ],
        axis=-1,
    )
    expected = 2.0 * factors.prod(axis=-1) @ alpha + np.array([1, -1])
    np.testing.assert_allclose(expansion.predict(x), expected, rtol=1e-13)
    assert expansion.output_names == ["output 0", "output 1"]


def test_expansion_from_dual_defaults():
    rng = np.random.default_rng(1)
    X_fit, alpha = rng.normal(size=(20, 4)), rng.normal(size=20)
    expansion = expansion_from_dual(alpha, X_fit)
    (component,) = expansion.components
    assert component.weights.shape == (20, 1)
    assert np.allclose(component.gammas, 0.25)
    assert np.all(component.kinds == FACTOR_KINDS["rbf"])
    np.testing.assert_allclose(expansion.predict(X_fit[:3])[:, 0], rbf_kernel(X_fit[:3], X_fit, gamma=0.25) @ alpha)
    gammas = expansion_from_dual(alpha, X_fit, kernel="laplacian", gamma=[0, 1, 2, 3]).components[0].gammas
    assert np.array_equal(gammas, [0, 1, 2, 3])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"kernel": "matern"}, TypeError, "Unknown kernel factor 'matern'"),
        ({"kernel": "poly"}, TypeError, "cauchy"),
        ({"kernel": ["rbf", "rbf", "linear"]}, TypeError, "'linear'"),
        ({"kernel": rbf_kernel}, TypeError, "sequence"),
        ({"kernel": ["rbf", "rbf"]}, ValueError, "2 per-feature factors for 3"),
        ({"gamma": 1.0, "length_scale": 1.0}, ValueError, "not both"),
        ({"gamma": -1.0}, ValueError, "non-negative"),
        ({"gamma": [1.0, 2.0]}, ValueError, "shape"),
        ({"gamma": np.nan}, ValueError, "NaN"),
        ({"length_scale": [1.0, 0.0, 1.0]}, ValueError, "positive"),
        ({"amplitude": -2.0}, ValueError, "amplitude"),
        ({"intercept": [1.0, 2.0]}, ValueError, "intercept"),
    ],
)
def test_expansion_from_dual_validation(kwargs, error, match):
    X_fit, alpha = np.zeros((4, 3)), np.ones(4)
    with pytest.raises(error, match=match):
        expansion_from_dual(alpha, X_fit, **kwargs)


@pytest.mark.parametrize(
    ("alpha", "X_fit", "match"),
    [
        (np.ones(5), np.zeros((4, 3)), "dual_coef must have shape"),
        (np.ones((4, 2, 1)), np.zeros((4, 3)), "dual_coef must have shape"),
        (np.ones(4), np.zeros(4), "2-D"),
        (np.array([1.0, np.nan, 0, 0]), np.zeros((4, 3)), "dual_coef contains NaN"),
        (np.ones(4), np.full((4, 3), np.inf), "X_fit contains NaN"),
    ],
)
def test_expansion_from_dual_shapes(alpha, X_fit, match):
    with pytest.raises(ValueError, match=match):
        expansion_from_dual(alpha, X_fit)


@pytest.mark.filterwarnings("error")
def test_check_reconstruction_with_a_dataframe():
    pd = pytest.importorskip("pandas")
    X, y, X_test = _regression()
    columns = [f"f{j}" for j in range(X.shape[1])]
    model = make_pipeline(StandardScaler(), KernelRidge(kernel="rbf", gamma=0.1)).fit(
        pd.DataFrame(X, columns=columns), y
    )
    expansion = extract_expansion(model)
    assert check_reconstruction(expansion, model, pd.DataFrame(X_test, columns=columns)) < 1e-10
    assert expansion._checked
