"""``ProductKernelShapExplainer``: exact Shapley values of product-kernel models (PKeX-Shapley)."""

from __future__ import annotations

import time
import warnings
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from sklearn_shapq._explanation import make_explanation
from sklearn_shapq._feature_groups import resolve_feature_groups
from sklearn_shapq._progress import progress_bar
from sklearn_shapq._random import make_generator
from sklearn_shapq._validation import (
    DEVICE,
    KERNEL_NAN_HINT,
    PROGRESS,
    RANDOM_STATE,
    check_data,
    default_feature_names,
)
from sklearn_shapq.algorithms import (
    PRODUCT_KERNEL_METHODS,
    product_kernel_shapley,
    resolve_product_kernel_method,
)
from sklearn_shapq.backends import resolve_backend
from sklearn_shapq.backends._product_kernel import ANCHORS_PER_CHUNK
from sklearn_shapq.dask import is_dask_collection, lazy_explain
from sklearn_shapq.explainers._base import ModelExplainerMixin
from sklearn_shapq.explainers._dual_model import ProductKernelModel
from sklearn_shapq.explainers._kernel_models import check_reconstruction, expansion_from_dual, extract_expansion
from sklearn_shapq.games import KernelExpansion, ProductKernelGame

VALUE_FUNCTIONS = ("pkex", "baseline", "interventional")
_CHECK_ROWS = 32  # rows of the reconstruction self-check in fit
_MIN_BLOCK_ROWS = 256  # explained rows per kernel call at least (the progress bar takes ~100 steps above that)
_COSTLY_OPERATIONS = 5e9  # per explained row: warn above this many for the interventional game


class ProductKernelShapExplainer(ModelExplainerMixin, BaseEstimator):
    """Exact Shapley values of product-kernel models in polynomial time (PKeX-Shapley).

    For a model f(x) = Σ_i α_i Π_j k_j(x_j, X_ij) + b (an SVM, kernel ridge or Gaussian process
    whose kernel is a product over features: RBF, ARD RBF, Laplacian) the Shapley values of each
    explained row are computed exactly in O(n d²) per row and model component, with no sampling.

    Parameters
    ----------
    model : fitted estimator or ProductKernelModel
        ``SVR``, ``NuSVR``, ``SVC``/``NuSVC`` (decision function; multiclass: one output per
        one-vs-one pair, the libsvm one-vs-one decision values whatever
        ``decision_function_shape`` says, since the "ovr" shape is not linear in the kernel),
        ``OneClassSVM``, ``KernelRidge`` (rbf, laplacian; multi-output),
        ``GaussianProcessRegressor`` (RBF incl. ARD, ``ConstantKernel * RBF``, sums of them,
        ``+ WhiteKernel``, ``normalize_y``), ``GaussianProcessClassifier`` (latent mean; one
        output per class when multiclass), a ``Pipeline`` of ``StandardScaler`` /
        ``MinMaxScaler`` / ``MaxAbsScaler`` steps followed by one of these (explained in the
        original units), or a dual form from :meth:`from_dual`. Other kernels (Matern,
        polynomial, DotProduct, RationalQuadratic…) are not products over features and raise a
        TypeError.
    value_function : {"pkex", "baseline", "interventional"}, default="pkex"
        The game of an explained row x:

        - "pkex" (the paper's): an absent feature's kernel factor is 1, v(S) = b + Σ_i α_i
          Π_{j∈S} k_j(x_j, X_ij). Needs no background; the base value is b + Σα (the intercept
          for SVMs, an arbitrary number for kernel ridge and GPs, not the mean prediction).
        - "baseline": absent features take the values of one reference row r, v(S) =
          f(x_S, r_rest). The reference is ``fit``'s X when it has one row, else its column means.
        - "interventional": v(S) = mean over background rows z of f(x_S, z_rest), exactly the
          game of :class:`PermutationShapExplainer` (``sampler="exact"``) and of shap's
          interventional explainers, at O(N n d²) per row for N background rows.
    method : {"auto", "prefix_suffix", "quadrature", "brute_force"}, default="auto"
        "prefix_suffix": prefix elementary symmetric polynomials times μ-weighted suffix sums
        (exact; overflows beyond d ≈ 1000). "quadrature": Gauss–Legendre on ⌈d/2⌉ nodes of the
        Beta-integral form (exact for the polynomial; never overflows; the GPU kernel).
        "brute_force": all 2^d coalitions (d <= 16, an oracle). "auto": prefix_suffix on the CPU
        for d <= 512, else quadrature.
    background_size : int or None, default=100
        Background rows kept from ``fit``'s X for "interventional" (a reproducible random
        subsample); None keeps all.
    feature_groups : dict {str: list of column names or indices} or None, default=None
        Columns explained together, e.g. ``{"colour": ["colour_red", "colour_blue"]}``: each
        group is one player, so a coalition holds all or none of its columns. Columns are named as
        in ``feature_names_`` or given by position; each may be in one group only. Players are
        ordered by their first column (a group takes the place of its first member) and every
        column no group names stays a player of its own. Values stay exact: a group's kernel
        factor is the product of its columns' factors. Explanations have one value per player,
        named by ``feature_groups_.names``. None: every column is a player.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        numba kernels on the CPU, cupy kernels on CUDA; "auto" picks a GPU when one is visible.
        Resolved once, in ``fit`` (``device_``).
    random_state : None, int, numpy Generator or RandomState, default=None
        Seed of the background subsample.
    progress : bool, default=True
        Show a progress bar over explained rows; it appears only once ``explain`` has run 3 s.

    Attributes
    ----------
    expansion_ : KernelExpansion
        The model's dual form: components (anchors, weights, per-feature kernel factors) and
        intercept.
    expected_value_ : float or ndarray of shape (k,)
        v(∅), the base value of every explanation.
    reconstruction_error_ : float
        Largest absolute difference between the dual form and the model's own output on the
        rows checked in ``fit`` (``fit`` raises above 1e-8 relative).
    references_ : ndarray of shape (L, d) or None
        The reference row ("baseline") or background rows ("interventional").
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``fit`` got a DataFrame.
    feature_names_ : list of str
        Names of the d columns.
    feature_groups_ : FeatureGroups
        The players: ``names`` (a group's name or a lone column's name) and ``player_of_column``.
    n_outputs_ : int
    output_names_ : list of str or None
    method_ : {"prefix_suffix", "quadrature", "brute_force"}
        The algorithm ``method`` resolves to for the players on ``device_``, used by ``explain``.
    device_ : str
        The device ``fit`` resolved ("cpu" or "cuda:N").

    Notes
    -----
    No model is called while explaining, so there is no ``batch_size``: explained rows are handed
    to the kernels in blocks whose temporaries fit in scikit-learn's ``working_memory``
    (``sklearn.set_config(working_memory=MiB)``), and the kernels bound their own device memory.
    ``explain`` changes nothing on the explainer, so one fitted explainer can serve several threads.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.svm import SVR
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = SVR(C=100.0).fit(X, y)
    >>> explainer = ProductKernelShapExplainer(model).fit(X)
    >>> explanation = explainer.explain(X.iloc[:5])
    >>> explanation.values.shape, explanation.feature_names[:2]
    ((5, 10), ['age', 'sex'])
    >>> bool(np.allclose(explanation.values.sum(1) + explanation.base_values, model.predict(X.iloc[:5])))
    True
    """

    _parameter_constraints: dict = {
        "model": [HasMethods(["predict"])],
        "value_function": [StrOptions(set(VALUE_FUNCTIONS))],
        "method": [StrOptions(set(PRODUCT_KERNEL_METHODS))],
        "background_size": [Interval(Integral, 1, None, closed="left"), None],
        "feature_groups": [dict, None],
        "device": DEVICE,
        "random_state": RANDOM_STATE,
        "progress": PROGRESS,
    }

    def __init__(
        self,
        model: Any,
        *,
        value_function: str = "pkex",
        method: str = "auto",
        background_size: int | None = 100,
        feature_groups: dict | None = None,
        device: str = "cpu",
        random_state: Any = None,
        progress: bool = True,
    ) -> None:
        self.model = model
        self.value_function = value_function
        self.method = method
        self.background_size = background_size
        self.feature_groups = feature_groups
        self.device = device
        self.random_state = random_state
        self.progress = progress

    @classmethod
    def from_dual(
        cls,
        dual_coef: Any,
        X_fit: Any,
        *,
        kernel: Any = "rbf",
        gamma: Any = None,
        length_scale: Any = None,
        amplitude: float = 1.0,
        intercept: Any = 0.0,
        **params: Any,
    ) -> ProductKernelShapExplainer:
        """Explainer of a custom expansion f(x) = amplitude Σ_i α_i Π_j k_j(x_j, X_ij) + intercept.

        Parameters
        ----------
        dual_coef : array of shape (n,) or (n, k)
        X_fit : array of shape (n, d)
            Anchors (training points).
        kernel : {"rbf", "laplacian", "cauchy"} or sequence of d of them
            Factor of every feature, or of each feature.
        gamma, length_scale : float or array of shape (d,), optional
            Factor scales: rbf exp(−γ(a−b)²) with γ = 1/(2ℓ²), laplacian exp(−γ|a−b|) with
            γ = 1/ℓ, cauchy 1/(1+γ(a−b)²) with γ = 1/ℓ². Default γ = 1/d.
        amplitude : float, default=1.0
        intercept : float or array of shape (k,), default=0.0
        **params
            Parameters of the explainer (``value_function``, ``method``, ``device``…).

        Returns
        -------
        ProductKernelShapExplainer
            Not yet fitted; its ``model`` is a :class:`ProductKernelModel`.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, -1.0], [2.0, 2.0, 0.0]])
        >>> explainer = ProductKernelShapExplainer.from_dual([1.0, -2.0, 0.5], X, gamma=[1.0, 0.5, 2.0]).fit()
        >>> phi = explainer.shap_values(np.array([[0.5, 0.5, 0.5]]))
        >>> bool(np.isclose(phi.sum() + explainer.expected_value_, explainer.model.predict([[0.5, 0.5, 0.5]])[0]))
        True
        """
        expansion = expansion_from_dual(
            dual_coef,
            X_fit,
            kernel=kernel,
            gamma=gamma,
            length_scale=length_scale,
            amplitude=amplitude,
            intercept=intercept,
        )
        return cls(ProductKernelModel(expansion), **params)

    def _expansion(self, check_rows: np.ndarray | None) -> tuple[KernelExpansion, float, Any]:
        """Return the model's dual form, its reconstruction error on ``check_rows`` and the rows checked."""
        if isinstance(self.model, ProductKernelModel):
            return self.model.expansion, 0.0, None
        expansion = extract_expansion(self.model)
        if check_rows is None:
            check_rows = expansion.components[0].anchors
        rows = check_rows[:_CHECK_ROWS]
        names = getattr(self.model, "feature_names_in_", None)
        if names is not None:  # the model was fitted on a DataFrame: give it one
            import pandas as pd

            rows = pd.DataFrame(rows, columns=list(names))
        return expansion, check_reconstruction(expansion, self.model, rows), rows

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any = None, y: Any = None) -> ProductKernelShapExplainer:
        """Read the model's dual form, check it against the model, and compute the base value.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, d), optional
            Reference data: the reference row ("baseline") or the background set
            ("interventional"); required for those. With "pkex" it is optional and only gives
            feature names and rows for the self-check.
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        sklearn.utils._param_validation.InvalidParameterError
            A parameter of the wrong type or out of range (a ValueError naming it).
        TypeError
            For a model or kernel that is not a product over features.
        ValueError
            When the dual form does not reproduce the model's output (relative error > 1e-8),
            ``method`` cannot run on the players ("brute_force" above 16, "prefix_suffix" above
            1000), or ``feature_groups`` names a column that does not exist or a column twice.
        DeviceUnavailableError
            ``device`` asks for CUDA where there is none.
        """
        model_names = getattr(self.model, "feature_names_in_", None)
        array, names = None, None
        if X is not None:
            array, names = check_data(X, name="X", feature_names=model_names, nan_hint=KERNEL_NAN_HINT)
        if array is None and self.value_function != "pkex":
            raise ValueError(
                f"value_function={self.value_function!r} needs reference data: call fit(X) with the background rows."
            )
        expansion, error, self._checked_rows = self._expansion(array)
        d = expansion.n_features
        if array is not None and array.shape[1] != d:
            raise ValueError(f"X has {array.shape[1]} features, but the model has {d}.")
        feature_names = default_feature_names(d, names, model_names)
        groups = resolve_feature_groups(self.feature_groups, feature_names)
        references = None
        if self.value_function == "baseline":
            references = array.mean(axis=0, keepdims=True)
        elif self.value_function == "interventional":
            references = array
            if self.background_size is not None and array.shape[0] > self.background_size:
                rng = make_generator(self.random_state, stream=0)
                references = array[np.sort(rng.choice(array.shape[0], self.background_size, replace=False))]
            n_anchors = sum(c.anchors.shape[0] for c in expansion.components)
            if references.shape[0] * n_anchors * d * d > _COSTLY_OPERATIONS:
                warnings.warn(
                    f"The interventional game costs about N·n·d² = {references.shape[0] * n_anchors * d * d:.1e} "
                    "operations per explained row; lower background_size if this is too slow.",
                    UserWarning,
                    stacklevel=3,  # the caller of fit, past _fit_context's wrapper
                )
        backend = resolve_backend(self.device)
        method = resolve_product_kernel_method(self.method, groups.n_players, backend.is_gpu)
        with backend.activate():
            game = ProductKernelGame(expansion, np.zeros((1, d)), references, backend, groups)
            empty = backend.to_numpy(game.empty_value[0])
        self.method_ = method
        self.device_ = backend.name
        self.expansion_ = expansion
        self.reconstruction_error_ = float(error)
        self.references_ = references
        self.n_features_in_ = d
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.feature_names_ = feature_names
        self.feature_groups_ = groups
        self.n_outputs_ = expansion.n_outputs
        self.output_names_ = expansion.output_names
        self.expected_value_ = float(empty[0]) if self.n_outputs_ == 1 else empty
        self._empty_value = empty
        self._fitted_model = self.model
        return self

    def explain(self, X: Any) -> Any:
        """Explain rows of ``X`` exactly.

        The explainer is not changed (what ``fit`` resolved is used), so concurrent calls from
        several threads are safe.

        Parameters
        ----------
        X : array-like, DataFrame, dask Array or dask DataFrame of shape (n, d)
            A dask collection is explained lazily, block by block (see :mod:`sklearn_shapq.dask`).

        Returns
        -------
        shap.Explanation
            ``values`` (n, p) or (n, p, k), one per player (p = d without ``feature_groups``),
            ``base_values`` (n,) or (n, k), ``feature_names`` (``feature_groups_.names``) and
            ``data`` (n, p): the explained rows, where a group of several columns has NaN (it has
            no one value). Values plus base value equal the model output.
        dask Array or dask DataFrame
            For a dask collection ``X``: the values, lazily (:mod:`sklearn_shapq.dask`).
        """
        check_is_fitted(self, "expansion_")
        if self.model is not self._fitted_model:
            raise ValueError("model changed since fit: call fit again.")
        if self._checked_rows is not None:  # a model refitted in place: the dual form of fit is another model's
            try:
                check_reconstruction(self.expansion_, self.model, self._checked_rows)
            except ValueError as exc:
                raise ValueError(
                    f"The model's output differs from the dual form read in fit: it was refitted or changed in place "
                    f"since fit. Call fit again. ({exc})"
                ) from exc
        if is_dask_collection(X):
            return lazy_explain(self, X)
        start_time = time.perf_counter()
        array, _ = check_data(
            X, n_features=self.n_features_in_, feature_names=self._expected_names(), nan_hint=KERNEL_NAN_HINT
        )
        n_rows = array.shape[0]
        step = self._block_rows(n_rows)
        backend = resolve_backend(self.device_)
        groups = self.feature_groups_
        values = np.empty((n_rows, groups.n_players, self.n_outputs_))
        with backend.activate():
            game = ProductKernelGame(self.expansion_, backend.to_device(array), self.references_, backend, groups)
            with progress_bar(self.progress, n_rows, "explaining", "row") as bar:
                for start in range(0, n_rows, step):
                    rows = np.arange(start, min(start + step, n_rows))
                    values[rows] = backend.to_numpy(product_kernel_shapley(game, rows, self.method_))
                    bar.update(rows.size)
        return make_explanation(
            values,
            np.broadcast_to(self._empty_value, (n_rows, self.n_outputs_)).copy(),
            groups.player_data(array),
            groups.names,
            output_names=self.output_names_,
            compute_time=time.perf_counter() - start_time,
        )

    def _block_rows(self, n_rows: int) -> int:
        """Explained rows per kernel call: their temporaries fit in scikit-learn's ``working_memory``.

        Per row: the row, its values and the kernel's partial sums (p × k for each chunk of
        :data:`ANCHORS_PER_CHUNK` anchors of each component, p players), plus the 2^p-coalition
        table of "brute_force". At most a hundredth of the rows (at least 256) go in one call, so
        the progress bar moves.
        """
        d, p, k = self.n_features_in_, self.feature_groups_.n_players, self.n_outputs_
        chunks = sum(-(-component.anchors.shape[0] // ANCHORS_PER_CHUNK) for component in self.expansion_.components)
        row_bytes = 8 * (d + (4 + chunks) * p * k)
        if self.method_ == "brute_force":
            row_bytes += 8 * (3 * k + d) * 2**p
        return get_chunk_n_rows(row_bytes, max_n_rows=max(_MIN_BLOCK_ROWS, -(-n_rows // 100)))

    def model_output(self, X: Any) -> np.ndarray:
        """Return the explained output f(x) of rows ``X`` from the dual form: (n,) or (n, k)."""
        check_is_fitted(self, "expansion_")
        array, _ = check_data(
            X, n_features=self.n_features_in_, feature_names=self._expected_names(), nan_hint=KERNEL_NAN_HINT
        )
        out = self.expansion_.predict(array)
        return out[:, 0] if out.shape[1] == 1 else out
