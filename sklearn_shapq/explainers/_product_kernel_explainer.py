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
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_shapq._explanation import make_explanation
from sklearn_shapq._feature_groups import resolve_feature_groups
from sklearn_shapq._progress import progress_bar
from sklearn_shapq._row_explainer import background_subsample
from sklearn_shapq._validation import (
    DEVICE,
    KERNEL_NAN_HINT,
    PROGRESS,
    RANDOM_STATE,
    RENAMED,
    check_data,
    check_fitted_features,
    default_feature_names,
    renamed,
    renamed_parameter,
)
from sklearn_shapq.algorithms import (
    EXACT_ONLY_INDICES,
    PRODUCT_KERNEL_ALGORITHMS,
    check_interaction_index,
    check_product_kernel_players,
    product_kernel_interactions,
    product_kernel_shapley,
    resolve_product_kernel_algorithm,
)
from sklearn_shapq.backends import ANCHORS_PER_CHUNK, resolve_backend
from sklearn_shapq.dask import is_dask_collection, lazy_explain, lazy_interactions
from sklearn_shapq.explainers._base import ModelExplainerMixin
from sklearn_shapq.explainers._dual_model import ProductKernelModel
from sklearn_shapq.explainers._kernel_models import check_reconstruction, expansion_from_dual, extract_expansion
from sklearn_shapq.games import KernelExpansion, ProductKernelGame

VALUE_FUNCTIONS = ("pkex", "baseline", "interventional")
_CHECK_ROWS = 32  # rows of the reconstruction self-check in fit
_MIN_BLOCK_ROWS = 256  # explained rows per kernel call at least (the progress bar takes ~100 steps above that)
_MIN_INTERACTION_ROWS = 16  # explained rows per interaction call at least
_COSTLY_OPERATIONS = 5e9  # per explained row: warn above this many for the interventional game


class ProductKernelShapExplainer(ModelExplainerMixin, BaseEstimator):
    """Exact Shapley values of product-kernel models in polynomial time (PKeX-Shapley).

    For f(x) = Σ_i α_i Π_j k_j(x_j, X_ij) + b (Mohammadi, Chau and Muandet 2025), exact values in
    O(n d²) per row and model component, with no sampling.

    Parameters
    ----------
    model : fitted estimator or ProductKernelModel
        ``SVR``, ``NuSVR``, ``SVC``/``NuSVC`` (one-vs-one decision values), ``OneClassSVM``,
        ``KernelRidge`` (rbf, laplacian), ``GaussianProcessRegressor`` (products of RBF and
        constants, ``+ WhiteKernel``), ``GaussianProcessClassifier`` (latent mean), a ``Pipeline``
        of per-feature scalers and one of these, or :meth:`from_dual`'s. Other kernels raise a TypeError.
    value_function : {"pkex", "baseline", "interventional"}, default="pkex"
        The game of a row x: "pkex", absent factors 1 (base value b + Σα, not the mean
        prediction); "baseline", absent features from one reference row (``fit``'s X if it has one
        row, else its column means); "interventional", the mean over background rows, as
        :class:`PermutationShapExplainer`'s game.
    algorithm : {"auto", "prefix_suffix", "quadrature", "brute_force"}, default="auto"
        "prefix_suffix": prefix elementary symmetric polynomials times μ-weighted suffix sums
        (exact; overflows beyond d ≈ 1000). "quadrature": Gauss–Legendre on ⌈d/2⌉ nodes of the
        Beta-integral form (exact for the polynomial; never overflows; the GPU kernel).
        "brute_force": all 2^d coalitions (d <= 16, an oracle). "auto": prefix_suffix on the CPU
        for d <= 512, else quadrature. :meth:`explain_interactions` uses the quadrature unless
        "brute_force".
    background_size : int or None, default=100
        Background rows kept for "interventional" (None keeps all).
    feature_groups : dict or None, default=None
        {group name: [columns by name or index]}: one player per group; values stay exact.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Resolved once, in ``fit``.
    random_state : None, int, numpy Generator or RandomState, default=None
        Seed of the background subsample.
    progress : bool, default=True
        Show a progress bar once ``explain`` has run 3 s.
    method : str
        Deprecated: renamed ``algorithm`` in 1.0; removed in 1.1.

    Attributes
    ----------
    expansion_ : KernelExpansion
        The model's dual form.
    expected_value_ : float or ndarray of shape (n_outputs,)
        v(∅), the base value.
    reconstruction_error_ : float
        Largest difference between the dual form and the model on the rows checked in ``fit``.
    references_ : ndarray of shape (L, d) or None
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``fit`` got a DataFrame.
    feature_names_ : list of str
    feature_groups_ : FeatureGroups
    n_outputs_ : int
    output_names_ : list of str or None
    algorithm_ : {"prefix_suffix", "quadrature", "brute_force"}
        The algorithm ``algorithm`` resolves to for the players on ``device_``, used by ``explain``.
    device_ : str
        "cpu" or "cuda:N".

    Notes
    -----
    No model is called while explaining: rows go in blocks sized by scikit-learn's ``working_memory``.

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
        "algorithm": [StrOptions(set(PRODUCT_KERNEL_ALGORITHMS))],
        "method": renamed([StrOptions(set(PRODUCT_KERNEL_ALGORITHMS))]),
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
        algorithm: str = "auto",
        background_size: int | None = 100,
        feature_groups: dict | None = None,
        device: str = "cpu",
        random_state: Any = None,
        progress: bool = True,
        method: str = RENAMED,
    ) -> None:
        self.model = model
        self.value_function = value_function
        self.algorithm = algorithm
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
        dual_coef : array of shape (n,) or (n, n_outputs)
        X_fit : array of shape (n, d)
            Anchors (training points).
        kernel : {"rbf", "laplacian", "cauchy"} or sequence of d of them
        gamma, length_scale : float or array of shape (d,), optional
            Factor scales, as in :func:`~sklearn_shapq.explainers._kernel_models.expansion_from_dual`;
            default γ = 1/d.
        amplitude : float, default=1.0
        intercept : float or array of shape (n_outputs,), default=0.0
        **params
            Parameters of the explainer (``value_function``, ``algorithm``, ``device``…).

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
        elif check_rows.shape[1] != expansion.n_features:  # before the model is called on them
            raise ValueError(f"X has {check_rows.shape[1]} feature(s), but the model has {expansion.n_features}.")
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
            The reference row or background set; with "pkex" optional (names and self-check rows).
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        TypeError
            A model or kernel that is not a product over features.
        ValueError
            A dual form that does not reproduce the model (relative error > 1e-8), an algorithm
            that cannot run on the players, or bad ``feature_groups``.
        DeviceUnavailableError
            CUDA asked for where there is none.
        """
        model_names = getattr(self.model, "feature_names_in_", None)
        array: Any  # an ndarray wherever value_function needs the reference rows (checked below)
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
            raise ValueError(f"X has {array.shape[1]} feature(s), but the model has {d}.")
        feature_names = default_feature_names(d, names, model_names)
        groups = resolve_feature_groups(self.feature_groups, feature_names)
        references = None
        if self.value_function == "baseline":
            references = array.mean(axis=0, keepdims=True)
        elif self.value_function == "interventional":
            keep = background_subsample(array.shape[0], self.background_size, self.random_state)
            references = array if keep is None else array[keep]
            n_anchors = sum(c.anchors.shape[0] for c in expansion.components)
            if references.shape[0] * n_anchors * d * d > _COSTLY_OPERATIONS:
                warnings.warn(
                    f"The interventional game costs about N·n·d² = {references.shape[0] * n_anchors * d * d:.1e} "
                    "operations per explained row; lower background_size if this is too slow.",
                    UserWarning,
                    stacklevel=3,  # the caller of fit, past _fit_context's wrapper
                )
        backend = resolve_backend(self.device)
        algorithm = renamed_parameter(self, "method", "algorithm")
        algorithm = resolve_product_kernel_algorithm(algorithm, groups.n_players, backend.is_gpu)
        with backend.activate():
            game = ProductKernelGame(expansion, np.zeros((1, d)), references, backend, groups)
            empty = backend.to_numpy(game.empty_value[0])
        self.algorithm_ = algorithm
        self.device_ = backend.name
        self.expansion_ = expansion
        self.reconstruction_error_ = float(error)
        self.references_ = references
        if X is not None:  # n_features_in_, feature_names_in_ (a DataFrame's string names)
            validate_data(self, X if names is not None else array, reset=True, skip_check_array=True)
        else:  # no data ("pkex"): the explainer takes the model's features
            self.n_features_in_ = d
            if model_names is not None:
                self.feature_names_in_ = np.asarray(model_names, dtype=object)
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
        """Explain rows of ``X`` exactly (thread-safe: the explainer is not changed).

        Parameters
        ----------
        X : array-like, DataFrame, dask Array or dask DataFrame of shape (n, d)

        Returns
        -------
        shap.Explanation
            ``values`` (n, n_players) or (n, n_players, n_outputs), ``base_values`` (n,) or
            (n, n_outputs), ``data`` (NaN for a group of several columns).
        dask Array or dask DataFrame
            For a dask collection ``X``, lazily.
        """
        self._check_model_unchanged()
        if is_dask_collection(X):
            return lazy_explain(self, X)
        start_time = time.perf_counter()
        array = self._checked_array(X)
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
                    values[rows] = backend.to_numpy(product_kernel_shapley(game, rows, self.algorithm_))
                    bar.update(rows.size)
        return make_explanation(
            values,
            np.broadcast_to(self._empty_value, (n_rows, self.n_outputs_)).copy(),
            groups.player_data(array),
            groups.names,
            output_names=self.output_names_,
            compute_time=time.perf_counter() - start_time,
        )

    def _check_model_unchanged(self) -> None:
        """Raise if the explainer is not fitted, or its model was replaced or refitted since ``fit``."""
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

    def _checked_array(self, X: Any) -> np.ndarray:
        """Rows ``X`` as a float array, checked against ``fit`` (feature count and names, missing values)."""
        check_fitted_features(self, X)  # scikit-learn's feature count and names checks
        array, _ = check_data(
            X, n_features=self.n_features_in_, feature_names=self._expected_names(), nan_hint=KERNEL_NAN_HINT
        )
        return array

    def explain_interactions(self, X: Any, *, index: str = "shap") -> Any:
        """Exact pairwise interactions of rows of ``X`` (thread-safe: the explainer is not changed).

        For every value function the game of a row is a sum of products over the players, whose
        pair interactions are Beta integrals of a polynomial of degree p − 1, exact with ⌈p/2⌉
        Gauss–Legendre nodes: O(n L p³) per row for n anchors and L references (L = 1 without),
        batched as matrix products. ``algorithm="brute_force"`` enumerates the 2^p coalitions instead.

        Parameters
        ----------
        X : array-like, DataFrame, dask Array or dask DataFrame of shape (n, d)
            A dask collection gives the values lazily, block by block, as a dask Array
            (:func:`~sklearn_shapq.dask.lazy_interactions`).
        index : {"shap", "k-SII", "SII", "STII", "FSII"}, default="shap"
            What the (p, p) matrix of a row holds, with SII the Shapley interaction index and φ the
            Shapley values of :meth:`explain`:

            - "shap": shap's ``shap_interaction_values`` convention, Φ_ij = SII_ij / 2 off the
              diagonal and Φ_ii = φ_i − Σ_{j≠i} Φ_ij; symmetric, row i sums to φ_i, the matrix to
              the output minus the base value.
            - "k-SII": SII_ij off the diagonal, the order-2 k-SII singletons φ_i − ½ Σ_{j≠i} SII_ij
              on it; the diagonal and the upper triangle sum to the output minus the base value.
            - "SII": SII_ij off the diagonal, φ_i (the SII of a singleton) on it; not efficient.
            - "STII": Shapley–Taylor of order 2, STII_ij off the diagonal and v({i}) − v(∅) on
              it; the diagonal and the upper triangle sum to the output minus the base value.
            - "FSII": Faith-Shap of order 2, the pairs and singletons of the order-2 polynomial
              closest to the game in the Shapley kernel's weights; the diagonal and the upper
              triangle sum to the output minus the base value. No closed form is known: the 2^p
              coalitions are enumerated, up to 16 players
              (:data:`~sklearn_shapq.algorithms.MAX_FSII_PLAYERS`).

        Returns
        -------
        shap.Explanation or dask Array
            ``values`` (n, n_players, n_players) or (n, n_players, n_players, n_outputs);
            ``base_values``, ``data`` and ``feature_names`` as :meth:`explain` gives them.

        Raises
        ------
        ValueError
            An ``index`` not listed above, or "FSII" of more than 16 players.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.svm import SVR
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(40, 4))
        >>> model = SVR().fit(X, X[:, 0] * X[:, 1])
        >>> explainer = ProductKernelShapExplainer(model).fit(X)
        >>> interactions = explainer.explain_interactions(X[:3])
        >>> interactions.values.shape
        (3, 4, 4)
        >>> bool(np.allclose(interactions.values.sum(axis=2), explainer.explain(X[:3]).values))
        True
        >>> bool(np.allclose(interactions.values.sum(axis=(1, 2)) + interactions.base_values, model.predict(X[:3])))
        True
        """
        check_interaction_index(index)
        self._check_model_unchanged()
        check_product_kernel_players(index, self.feature_groups_.n_players)
        if is_dask_collection(X):
            return lazy_interactions(self, X, index=index)
        start_time = time.perf_counter()
        array = self._checked_array(X)
        n_rows = array.shape[0]
        groups = self.feature_groups_
        p, k = groups.n_players, self.n_outputs_
        row_bytes = 8 * (self.n_features_in_ + 4 * p * p * k)
        if self.algorithm_ == "brute_force" or index in EXACT_ONLY_INDICES:
            row_bytes += 8 * (3 * k + p) * 2**p
        step = get_chunk_n_rows(row_bytes, max_n_rows=max(_MIN_INTERACTION_ROWS, -(-n_rows // 100)))
        backend = resolve_backend(self.device_)
        values = np.empty((n_rows, p, p, k))
        with backend.activate():
            game = ProductKernelGame(self.expansion_, backend.to_device(array), self.references_, backend, groups)
            with progress_bar(self.progress, n_rows, "explaining interactions", "row") as bar:
                for start in range(0, n_rows, step):
                    rows = np.arange(start, min(start + step, n_rows))
                    block = product_kernel_interactions(game, rows, index, self.algorithm_)
                    values[rows] = backend.to_numpy(block)
                    bar.update(rows.size)
        return make_explanation(
            values,
            np.broadcast_to(self._empty_value, (n_rows, k)).copy(),
            groups.player_data(array),
            groups.names,
            output_names=self.output_names_,
            compute_time=time.perf_counter() - start_time,
        )

    def _block_rows(self, n_rows: int) -> int:
        """Explained rows per kernel call: their temporaries fit in ``working_memory``."""
        d, p, k = self.n_features_in_, self.feature_groups_.n_players, self.n_outputs_
        chunks = sum(-(-component.anchors.shape[0] // ANCHORS_PER_CHUNK) for component in self.expansion_.components)
        row_bytes = 8 * (d + (4 + chunks) * p * k)
        if self.algorithm_ == "brute_force":
            row_bytes += 8 * (3 * k + d) * 2**p
        return get_chunk_n_rows(row_bytes, max_n_rows=max(_MIN_BLOCK_ROWS, -(-n_rows // 100)))

    def model_output(self, X: Any) -> np.ndarray:
        """Return the explained output f(x) of rows ``X`` from the dual form: (n,) or (n, n_outputs)."""
        check_is_fitted(self, "expansion_")
        check_fitted_features(self, X)
        array, _ = check_data(
            X, n_features=self.n_features_in_, feature_names=self._expected_names(), nan_hint=KERNEL_NAN_HINT
        )
        out = self.expansion_.predict(array)
        return out[:, 0] if out.shape[1] == 1 else out
