"""Product-kernel expansions of fitted scikit-learn models and of dual coefficients, checked against the model."""

from __future__ import annotations

import copy
from itertools import combinations
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Kernel, Product, Sum, WhiteKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM
from sklearn.utils.validation import check_is_fitted

from sklearn_shapq.backends import FACTOR_KINDS
from sklearn_shapq.games import KernelComponent, KernelExpansion

SUPPORTED_MODELS = (
    "SVR, NuSVR, SVC, NuSVC (binary or one-vs-one multiclass decision values) and OneClassSVM with "
    'kernel="rbf"; KernelRidge with kernel="rbf" or "laplacian"; GaussianProcessRegressor and '
    "GaussianProcessClassifier (binary or one_vs_rest latent means) whose kernels are sums and products of "
    "RBF (isotropic or ARD), ConstantKernel and WhiteKernel; and a Pipeline of StandardScaler, MinMaxScaler, "
    "MaxAbsScaler or RobustScaler steps ending in one of these"
)
"""What :func:`extract_expansion` accepts (used in error messages)."""

_ALTERNATIVE = (
    "Use PermutationShapExplainer for other models, or expansion_from_dual for a custom product-kernel expansion."
)
_CHECK_ROWS = 64  # rows compared by check_reconstruction
_RBF = FACTOR_KINDS["rbf"]
_LAPLACIAN = FACTOR_KINDS["laplacian"]


def extract_expansion(model: Any) -> KernelExpansion:
    """Extract the product-kernel expansion f(x) = Σ_c Σ_i w_ci Π_j k_cj(x_j, X_cij) + b of a fitted model.

    Parameters
    ----------
    model : fitted estimator
        One of :data:`SUPPORTED_MODELS`: SVR, NuSVR, KernelRidge (``predict``); SVC, NuSVC,
        OneClassSVM (``decision_function``; a multiclass SVC one output per one-vs-one pair, "p vs q");
        GaussianProcessRegressor (posterior mean); GaussianProcessClassifier (latent means); or a
        Pipeline of per-feature scalers and one of these (folded into the kernel scales).

    Returns
    -------
    KernelExpansion

    Raises
    ------
    TypeError
        The model, its kernel or a pipeline step is not supported.
    sklearn.exceptions.NotFittedError
        The model is not fitted.
    """
    if isinstance(model, Pipeline):
        return _from_pipeline(model)
    _check_supported_and_fitted(model)
    if isinstance(model, (SVR, NuSVR, SVC, NuSVC, OneClassSVM)):
        return _from_libsvm(model)
    if isinstance(model, KernelRidge):
        return _from_kernel_ridge(model)
    if isinstance(model, GaussianProcessRegressor):
        return _from_gp_regressor(model)
    return _from_gp_classifier(model)


def model_output(model: Any, X: Any) -> np.ndarray:
    """Compute the model's own value of what :func:`extract_expansion` explains, on rows ``X``.

    ``X`` (A, d) in the model's input units; returns (A, n_outputs).
    """
    if isinstance(model, Pipeline):
        for _, step in _transform_steps(model):
            X = step.transform(X)
        return model_output(model.steps[-1][1], X)
    _check_supported_and_fitted(model)
    if isinstance(model, (SVC, NuSVC)) and len(model.classes_) > 2:
        ovo = copy.copy(model)  # decision_function reads the shape at call time
        ovo.decision_function_shape = "ovo"
        output = ovo.decision_function(X)
    elif isinstance(model, (SVC, NuSVC, OneClassSVM)):
        output = model.decision_function(X)
    elif isinstance(model, GaussianProcessClassifier):
        X = np.asarray(X, dtype=np.float64)
        output = np.column_stack(
            [member.kernel_(X, member.X_train_) @ (member.y_train_ - member.pi_) for member in _gpc_members(model)]
        )
    else:
        output = model.predict(X)
    output = np.asarray(output, dtype=np.float64)
    return output.reshape(output.shape[0], -1)


def check_reconstruction(expansion: KernelExpansion, model: Any, X: Any, rtol: float = 1e-8) -> float:
    """Check that an expansion reproduces the model's output on (the first 64) rows of ``X``.

    Parameters
    ----------
    expansion : KernelExpansion
    model : fitted estimator
    X : array-like of shape (A, d)
        Rows in the model's input units.
    rtol : float, default=1e-8
        Allowed max |difference|, relative to max(1, max |model output|).

    Returns
    -------
    float
        The max absolute difference.

    Raises
    ------
    ValueError
        The difference exceeds the tolerance, is not finite, or the shapes differ.
    """
    rows = X.iloc[:_CHECK_ROWS] if hasattr(X, "iloc") else np.asarray(X)[:_CHECK_ROWS]
    difference = check_outputs(
        expansion, np.asarray(rows, dtype=np.float64), model_output(model, rows), type(model).__name__, rtol
    )
    expansion._checked = True
    return difference


def check_outputs(
    expansion: KernelExpansion, rows: np.ndarray, expected: np.ndarray, name: str, rtol: float = 1e-8
) -> float:
    """Check that an expansion gives ``expected`` (A, n_outputs) on ``rows`` (A, d); return the max |difference|.

    ``name`` says what gave ``expected`` in the error. The tolerance is :func:`check_reconstruction`'s.

    Raises
    ------
    ValueError
        The difference exceeds the tolerance, is not finite, or the shapes differ.
    """
    reconstructed = np.asarray(expansion.predict(rows))
    if reconstructed.shape != expected.shape:
        raise ValueError(
            f"The kernel expansion ({expansion.description}) gives outputs of shape {reconstructed.shape}, "
            f"but {name} gives {expected.shape}."
        )
    difference = float(np.max(np.abs(reconstructed - expected)))
    scale = max(1.0, float(np.max(np.abs(expected))))
    if not difference <= rtol * scale:
        raise ValueError(
            f"The kernel expansion ({expansion.description}) does not reproduce {name}: max |difference| "
            f"{difference:.3g} on {expected.shape[0]} rows, relative {difference / scale:.3g} > rtol={rtol:g}. "
            f"The model's kernel or conventions differ from what the extraction assumed. {_ALTERNATIVE}"
        )
    return difference


def expansion_from_dual(
    dual_coef: Any,
    X_fit: Any,
    *,
    kernel: str | list[str] | tuple[str, ...] = "rbf",
    gamma: float | Any | None = None,
    length_scale: float | Any | None = None,
    amplitude: float = 1.0,
    intercept: float | Any = 0.0,
) -> KernelExpansion:
    """Build f(x) = amplitude · Σ_i dual_coef_i Π_j k_j(x_j, X_fit_ij) + intercept from custom dual coefficients.

    Parameters
    ----------
    dual_coef : array-like of shape (n,) or (n, n_outputs)
        Coefficients of the anchors.
    X_fit : array-like of shape (n, d)
        Anchors (training or support points).
    kernel : {"rbf", "laplacian", "cauchy"} or sequence of d of them, default="rbf"
        Factor of every feature, or of each feature: rbf exp(−γ(a−b)²), laplacian exp(−γ|a−b|),
        cauchy 1/(1+γ(a−b)²).
    gamma : float or array-like of shape (d,), optional
        Factor scales γ_j ≥ 0. Default 1/d when ``length_scale`` is not given either.
    length_scale : float or array-like of shape (d,), optional
        Length scales ℓ_j > 0 instead of ``gamma``: γ = 1/(2ℓ²) (rbf), 1/ℓ (laplacian), 1/ℓ² (cauchy).
    amplitude : float, default=1.0
        Kernel amplitude c ≥ 0, folded into the weights.
    intercept : float or array-like of shape (n_outputs,), default=0.0

    Returns
    -------
    KernelExpansion

    Raises
    ------
    TypeError
        An unknown kernel factor.
    ValueError
        Wrong shapes, non-finite values, negative scales, or both ``gamma`` and ``length_scale``.
    """
    anchors = _finite_array(X_fit, "X_fit")
    if anchors.ndim != 2 or anchors.shape[0] == 0 or anchors.shape[1] == 0:
        raise ValueError(f"X_fit must be a non-empty 2-D array (n, d), got shape {anchors.shape}.")
    n, d = anchors.shape
    weights = _finite_array(dual_coef, "dual_coef")
    if weights.ndim not in (1, 2) or weights.shape[0] != n:
        raise ValueError(f"dual_coef must have shape ({n},) or ({n}, k) to match X_fit, got {weights.shape}.")
    weights = weights.reshape(n, -1)
    k = weights.shape[1]
    amplitude = float(_finite_array(amplitude, "amplitude"))
    if amplitude < 0:
        raise ValueError(f"amplitude must be non-negative, got {amplitude}.")
    kinds = _factor_kinds(kernel, d)
    gammas = _factor_scales(kinds, gamma, length_scale, d)
    intercept = _finite_array(intercept, "intercept")
    if intercept.ndim > 1 or intercept.size not in (1, k):
        raise ValueError(f"intercept must be a scalar or have shape ({k},), got {intercept.shape}.")
    return KernelExpansion(
        components=[KernelComponent(anchors, amplitude * weights, kinds, gammas)],
        intercept=np.broadcast_to(intercept.reshape(-1), (k,)).copy(),
        output_names=_output_names(k),
        description="expansion_from_dual",
    )


def _unsupported(what: str) -> TypeError:
    return TypeError(
        f"{what} is not a product-kernel model that can be explained exactly. Supported: {SUPPORTED_MODELS}. "
        f"{_ALTERNATIVE}"
    )


def _check_supported_and_fitted(model: Any) -> None:
    """Raise TypeError unless ``model`` is a supported estimator (not a Pipeline), NotFittedError unless fitted."""
    supported = (SVR, NuSVR, SVC, NuSVC, OneClassSVM, KernelRidge, GaussianProcessRegressor, GaussianProcessClassifier)
    if not isinstance(model, supported):
        raise _unsupported(type(model).__name__)
    # An unfitted GaussianProcessRegressor predicts from its prior, so its tags say it needs no fit.
    check_is_fitted(model, "alpha_" if isinstance(model, GaussianProcessRegressor) else None)


def _output_names(k: int) -> list[str] | None:
    return None if k == 1 else [f"output {t}" for t in range(k)]


def _dense(array: Any) -> np.ndarray:
    """Copy a dense or scipy-sparse array to a dense float64 array."""
    return np.array(array.toarray() if sparse.issparse(array) else array, dtype=np.float64)


def _uniform_component(anchors: np.ndarray, weights: np.ndarray, kind: int, gamma: Any) -> KernelComponent:
    d = anchors.shape[1]
    gammas = np.broadcast_to(np.asarray(gamma, dtype=np.float64), (d,)).copy()
    return KernelComponent(anchors, weights, np.full(d, kind, dtype=np.int8), gammas)


# --- support vector machines ------------------------------------------------------------------------------------


def dual_coefficients(
    model: SVR | NuSVR | SVC | NuSVC | OneClassSVM | KernelRidge | GaussianProcessRegressor,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str] | None]:
    """Return a kernel machine's dual form: f(x) = k(x, anchors) @ weights + intercept, whatever its kernel.

    Parameters
    ----------
    model : fitted SVR, NuSVR, SVC, NuSVC, OneClassSVM, KernelRidge or GaussianProcessRegressor
        A multiclass SVC or NuSVC: one output per one-vs-one pair; a Gaussian process: its posterior mean
        (``normalize_y`` undone).

    Returns
    -------
    anchors : ndarray of shape (n, d)
    weights : ndarray of shape (n, k)
    intercept : ndarray of shape (k,)
    names : list of str or None
        The outputs' names where there are several.
    """
    if isinstance(model, KernelRidge):
        anchors = _dense(model.X_fit_)
        weights = np.asarray(model.dual_coef_, dtype=np.float64).reshape(anchors.shape[0], -1).copy()
        return anchors, weights, np.zeros(weights.shape[1]), _output_names(weights.shape[1])
    if isinstance(model, GaussianProcessRegressor):
        anchors = _dense(model.X_train_)
        alpha = np.asarray(model.alpha_, dtype=np.float64).reshape(anchors.shape[0], -1)
        k = alpha.shape[1]
        weights = alpha * np.asarray(model._y_train_std, dtype=np.float64).reshape(-1)  # normalize_y undone
        intercept = np.broadcast_to(np.asarray(model._y_train_mean, dtype=np.float64).reshape(-1), (k,)).copy()
        return anchors, weights, intercept, _output_names(k)
    anchors = _dense(model.support_vectors_)
    dual = _dense(model.dual_coef_)
    intercept = np.asarray(model.intercept_, dtype=np.float64)
    if isinstance(model, (SVC, NuSVC)) and len(model.classes_) > 2:
        weights, names = _one_vs_one_weights(model, dual)
        return anchors, weights, intercept.copy(), names
    return anchors, dual[0][:, None], intercept[:1].copy(), None


def _from_libsvm(model: SVR | NuSVR | SVC | NuSVC | OneClassSVM) -> KernelExpansion:
    name = type(model).__name__
    if model.kernel != "rbf":
        raise _unsupported(f"{name} with kernel={model.kernel!r}")
    anchors, weights, intercept, names = dual_coefficients(model)
    method = "predict" if isinstance(model, (SVR, NuSVR)) else "decision_function"
    pairs = " (one-vs-one)" if names is not None else ""
    return KernelExpansion(
        [_uniform_component(anchors, weights, _RBF, model._gamma)], intercept, names, f"{name}.{method}{pairs}"
    )


def _one_vs_one_weights(model: SVC | NuSVC, dual: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Weights (n_SV, n_pairs) of libsvm's one-vs-one layout (class p's coefficients in row q − 1, q's in row p)."""
    starts = np.concatenate([[0], np.cumsum(model.n_support_)])
    pairs = list(combinations(range(len(model.classes_)), 2))
    weights = np.zeros((dual.shape[1], len(pairs)))
    for column, (p, q) in enumerate(pairs):
        of_p, of_q = slice(starts[p], starts[p + 1]), slice(starts[q], starts[q + 1])
        weights[of_p, column] = dual[q - 1, of_p]
        weights[of_q, column] = dual[p, of_q]
    names = [f"{model.classes_[p]} vs {model.classes_[q]}" for p, q in pairs]
    return weights, names


# --- kernel ridge -----------------------------------------------------------------------------------------------


def _from_kernel_ridge(model: KernelRidge) -> KernelExpansion:
    # For string kernels sklearn passes only gamma/degree/coef0: kernel_params applies to callables alone.
    if not isinstance(model.kernel, str) or model.kernel not in ("rbf", "laplacian"):
        raise _unsupported(f"KernelRidge with kernel={model.kernel!r}")
    anchors, weights, intercept, names = dual_coefficients(model)
    gamma = 1.0 / anchors.shape[1] if model.gamma is None else float(model.gamma)
    return KernelExpansion(
        [_uniform_component(anchors, weights, FACTOR_KINDS[model.kernel], gamma)],
        intercept,
        names,
        "KernelRidge.predict",
    )


# --- Gaussian processes -----------------------------------------------------------------------------------------

_GP_KERNELS = "RBF (scalar or per-feature length_scale), ConstantKernel, WhiteKernel, and their sums and products"


def kernel_terms(kernel: Kernel) -> list[tuple[float, list[Kernel]]]:
    """Write a GP kernel off the training rows as Σ_t c_t Π k_tf: each term's amplitude and its kernel factors.

    Sums and products expand; a ConstantKernel is an amplitude (a term with no factors), a WhiteKernel drops out
    (zero off the training rows); any other kernel is a factor, for the caller to read or refuse.

    Examples
    --------
    >>> from sklearn.gaussian_process.kernels import Matern
    >>> [(c, [type(f).__name__ for f in factors]) for c, factors in kernel_terms(2.0 * (RBF() + Matern()) + 0.5)]
    [(2.0, ['RBF']), (2.0, ['Matern']), (0.5, [])]
    """
    kind = type(kernel)
    if kind is Sum:
        return kernel_terms(kernel.k1) + kernel_terms(kernel.k2)
    if kind is Product:
        return [(c1 * c2, f1 + f2) for c1, f1 in kernel_terms(kernel.k1) for c2, f2 in kernel_terms(kernel.k2)]
    if kind is WhiteKernel:
        return []
    if kind is ConstantKernel:
        return [(float(kernel.constant_value), [])]
    return [(1.0, [kernel])]


def _rbf_gammas(factors: list[Kernel], d: int) -> np.ndarray:
    """Return the per-feature γ of a product of RBF factors, Π_j exp(−γ_j (a_j − b_j)²) (none: all zero)."""
    gammas = np.zeros(d)
    for factor in factors:
        if type(factor) is not RBF:
            raise TypeError(
                f"The Gaussian-process kernel is not a sum of product kernels this explainer supports: "
                f"{type(factor).__name__} is not supported (supported: {_GP_KERNELS}). {_ALTERNATIVE}"
            )
        length_scale = np.asarray(factor.length_scale, dtype=np.float64).reshape(-1)
        if length_scale.size not in (1, d):
            raise ValueError(f"RBF length_scale has {length_scale.size} entries for {d} features.")
        gammas = gammas + 0.5 / length_scale**2
    return gammas


def _gp_components(kernel: Kernel, anchors: np.ndarray, weights: np.ndarray) -> list[KernelComponent]:
    """One RBF component per product term of ``kernel``, its amplitude folded into ``weights``."""
    d = anchors.shape[1]
    terms = [(amplitude, _rbf_gammas(factors, d)) for amplitude, factors in kernel_terms(kernel)]
    return [
        _uniform_component(anchors, amplitude * weights, _RBF, gammas)
        for amplitude, gammas in terms or [(0.0, np.zeros(d))]
    ]


def _from_gp_regressor(model: GaussianProcessRegressor) -> KernelExpansion:
    anchors, weights, intercept, names = dual_coefficients(model)
    return KernelExpansion(
        _gp_components(model.kernel_, anchors, weights), intercept, names, "GaussianProcessRegressor.predict"
    )


def _gpc_members(model: GaussianProcessClassifier) -> list[Any]:
    """Return the binary Laplace GPCs: one, or one per class for one_vs_rest."""
    base = model.base_estimator_
    if isinstance(base, OneVsRestClassifier):
        return list(base.estimators_)
    if len(model.classes_) > 2:
        raise TypeError(
            "GaussianProcessClassifier with multi_class='one_vs_one' is not supported: its decision combines "
            "pairwise votes. Fit it with multi_class='one_vs_rest' to explain one latent mean per class. "
            f"{_ALTERNATIVE}"
        )
    return [base]


def _from_gp_classifier(model: GaussianProcessClassifier) -> KernelExpansion:
    members = _gpc_members(model)
    k = len(members)
    components = []
    for column, member in enumerate(members):
        anchors = _dense(member.X_train_)
        weights = np.zeros((anchors.shape[0], k))
        weights[:, column] = member.y_train_ - member.pi_
        components += _gp_components(member.kernel_, anchors, weights)
    names = None if k == 1 else [str(c) for c in model.classes_]
    return KernelExpansion(components, np.zeros(k), names, "GaussianProcessClassifier latent mean")


# --- pipelines --------------------------------------------------------------------------------------------------


def _transform_steps(pipeline: Pipeline) -> list[tuple[str, Any]]:
    """Return the pipeline's transformers, without "passthrough"/None steps."""
    return [(name, step) for name, step in pipeline.steps[:-1] if step is not None and step != "passthrough"]


def _affine_map(name: str, step: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature (s, t) of a fitted scaler step: it maps x_j to s_j x_j + t_j."""
    if type(step) not in (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler):
        raise _unsupported(
            f"A Pipeline with the step {name!r} ({type(step).__name__}; only per-feature scalers keep the "
            "product structure in the original features)"
        )
    check_is_fitted(step)
    if isinstance(step, MinMaxScaler):
        if step.clip:
            raise _unsupported(f"A Pipeline with the step {name!r} (MinMaxScaler with clip=True is not affine)")
        return np.asarray(step.scale_, dtype=np.float64), np.asarray(step.min_, dtype=np.float64)
    if isinstance(step, MaxAbsScaler):
        return 1.0 / np.asarray(step.scale_, dtype=np.float64), np.zeros(1)
    if isinstance(step, StandardScaler):
        center = step.mean_ if step.with_mean else None  # mean_ is set even with with_mean=False
    else:
        center = step.center_
    scale = np.ones(1) if step.scale_ is None else 1.0 / np.asarray(step.scale_, dtype=np.float64)
    shift = np.zeros(1) if center is None else -scale * np.asarray(center, dtype=np.float64)
    return scale, shift


def _fold_affine(component: KernelComponent, scale: np.ndarray, shift: np.ndarray) -> KernelComponent:
    """Rewrite a component of scaled inputs u = s·x + t as a component of the original inputs x."""
    factor = np.where(component.kinds == _LAPLACIAN, np.abs(scale), scale**2)
    anchors = (component.anchors - shift) / scale
    return KernelComponent(anchors, component.weights, component.kinds, component.gammas * factor)


def _from_pipeline(pipeline: Pipeline) -> KernelExpansion:
    steps = _transform_steps(pipeline)
    scale, shift = np.ones(1), np.zeros(1)
    for name, step in steps:
        s, t = _affine_map(name, step)
        scale, shift = s * scale, s * shift + t
    inner = extract_expansion(pipeline.steps[-1][1])
    d = inner.n_features
    scale, shift = np.broadcast_to(scale, (d,)), np.broadcast_to(shift, (d,))
    components = [_fold_affine(component, scale, shift) for component in inner.components]
    names = ", ".join(type(step).__name__ for _, step in steps)
    description = f"Pipeline({names}) -> {inner.description}" if steps else inner.description
    return KernelExpansion(components, inner.intercept, inner.output_names, description)


# --- validation of custom expansions ----------------------------------------------------------------------------


def _finite_array(value: Any, name: str) -> np.ndarray:
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from exc
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinite values.")
    return array


def _factor_kinds(kernel: Any, d: int) -> np.ndarray:
    """int8 codes (d,) of one factor name or of d per-feature names."""
    names = [kernel] * d if isinstance(kernel, str) else kernel
    if not isinstance(names, (list, tuple, np.ndarray)):
        raise TypeError(f"kernel must be a factor name or a sequence of {d} of them, got {type(kernel).__name__}.")
    if len(names) != d:
        raise ValueError(f"kernel has {len(names)} per-feature factors for {d} features.")
    for factor in names:
        if not isinstance(factor, str) or factor not in FACTOR_KINDS:
            raise TypeError(
                f"Unknown kernel factor {factor!r}: supported per-feature factors are {sorted(FACTOR_KINDS)}. "
                "Kernels such as Matern, rational quadratic or polynomial are not product kernels. "
                f"{_ALTERNATIVE}"
            )
    return np.array([FACTOR_KINDS[factor] for factor in names], dtype=np.int8)


def _per_feature(value: Any, name: str, d: int) -> np.ndarray:
    array = _finite_array(value, name)
    if array.ndim > 1 or array.size not in (1, d):
        raise ValueError(f"{name} must be a scalar or have shape ({d},), got shape {array.shape}.")
    return np.broadcast_to(array.reshape(-1), (d,)).copy()


def _factor_scales(kinds: np.ndarray, gamma: Any, length_scale: Any, d: int) -> np.ndarray:
    """Per-feature γ_j from ``gamma`` or from ``length_scale`` (default γ = 1/d)."""
    if gamma is not None and length_scale is not None:
        raise ValueError("Give gamma or length_scale, not both.")
    if length_scale is None:
        gammas = _per_feature(1.0 / d if gamma is None else gamma, "gamma", d)
        if np.any(gammas < 0):
            raise ValueError("gamma must be non-negative.")
        return gammas
    scales = _per_feature(length_scale, "length_scale", d)
    if np.any(scales <= 0):
        raise ValueError("length_scale must be positive.")
    return np.where(kinds == _RBF, 0.5 / scales**2, np.where(kinds == _LAPLACIAN, 1.0 / scales, 1.0 / scales**2))
