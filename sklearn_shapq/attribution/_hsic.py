"""``HSICAttribution``: exact Shapley attribution of HSIC(X, y) to features, and a feature selector."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, _fit_context
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from sklearn_shapq._validation import (
    DEVICE,
    KERNEL_CATEGORY_HINT,
    KERNEL_NAN_HINT,
    N_JOBS,
    PROGRESS,
    RENAMED,
    default_feature_names,
    is_class_target,
    refuse_missing_values,
    refuse_non_numeric_columns,
    renamed,
    renamed_parameter,
    selected_count,
)
from sklearn_shapq.attribution._bandwidth import median_distance, unit_scaled
from sklearn_shapq.attribution._common import (
    ALGORITHM,
    BANDWIDTH,
    KERNEL,
    STATISTIC,
    GlobalAttributionMixin,
    attribute_statistic,
    feature_groups_of,
)
from sklearn_shapq.games import HSICWeights


class HSICAttribution(GlobalAttributionMixin, SelectorMixin, BaseEstimator):
    """Exact Shapley attribution of the Hilbert–Schmidt independence criterion HSIC(X, y).

    v(S) = HSIC from the features in S has exact Shapley values in O(n² d²) (Mohammadi et al.
    2025), summing to the statistic. Uninformative features get negative attributions, so
    players are ranked by signed attribution; as a selector it keeps the best-ranked.

    Parameters
    ----------
    kernel_x : {"rbf", "laplacian"}, default="rbf"
        Per-feature factor of the product kernel on X.
    bandwidth_x : {"median_per_feature", "median"}, float or array of shape (d,), default="median_per_feature"
        σ_j of the factors exp(−(a−b)²/(2σ_j²)) (rbf) or exp(−|a−b|/σ_j) (laplacian):
        "median_per_feature" the median ``|x_aj − x_bj|`` of each feature, "median" (the paper's)
        one σ for all, which blurs interactions at large d.
    kernel_y : {"auto", "delta", "rbf"}, default="auto"
        Kernel on the target; "auto": delta for class labels (not floats), else rbf.
    bandwidth_y : "median" or float, default="median"
        σ of the rbf target kernel.
    statistic : {"biased", "unbiased"}, default="biased"
        "biased", (n − 1)⁻² tr(KHLH) (the paper's), or "unbiased" (Song et al. 2012, n >= 4).
    n_features_to_select : int or float, default=0.2
        Players (features, or feature groups) kept by ``transform``: a count (at most the number
        of players p), or a fraction of p in (0, 1] (the paper's top 20%). A kept group keeps all
        its columns.
    feature_groups : dict or None, default=None
        {group name: [columns by name or index]}: one player per group; attributions stay exact.
    algorithm : {"auto", "prefix_suffix", "quadrature"}, default="auto"
        Algorithm per pair of samples (see :class:`ProductKernelShapExplainer`).
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
    progress : bool, default=True
        Show a progress bar once ``fit`` has run 3 s.
    n_jobs : int or None, default=None
        Tiles of the pair sum evaluated at once by joblib; the result is bit-identical for any value.
    method : str
        Deprecated: renamed ``algorithm`` in 1.0; removed in 1.1.

    Attributes
    ----------
    attributions_ : ndarray of shape (n_players,)
        Summing to ``hsic_``.
    hsic_ : float
    ranking_ : ndarray of shape (n_players,)
        Rank by attribution (1 = largest), as ``RFE.ranking_``.
    feature_groups_ : FeatureGroups
    bandwidths_ : ndarray of shape (d,)
    bandwidth_y_ : float or None
        None for the delta kernel.
    kernel_y_ : str
    n_features_to_select_ : int
        Number of features ``transform`` keeps.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X is a DataFrame.

    Notes
    -----
    Pair weights come in blocks of rows sized by scikit-learn's ``working_memory``: no n × n matrix is held.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 6))
    >>> y = X[:, 0] * X[:, 1] + np.sin(X[:, 2])
    >>> selector = HSICAttribution(n_features_to_select=3).fit(X, y)
    >>> sorted(selector.get_support(indices=True).tolist())
    [0, 1, 2]
    >>> bool(np.isclose(selector.attributions_.sum(), selector.hsic_))
    True
    """

    _parameter_constraints: dict = {
        "kernel_x": KERNEL,
        "bandwidth_x": BANDWIDTH,
        "kernel_y": [StrOptions({"auto", "delta", "rbf"})],
        "bandwidth_y": [StrOptions({"median"}), Interval(Real, 0, None, closed="neither")],
        "statistic": STATISTIC,
        "n_features_to_select": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
        ],
        "feature_groups": [dict, None],
        "algorithm": ALGORITHM,
        "method": renamed(ALGORITHM),
        "device": DEVICE,
        "progress": PROGRESS,
        "n_jobs": N_JOBS,
    }

    def __init__(
        self,
        *,
        kernel_x: str = "rbf",
        bandwidth_x: Any = "median_per_feature",
        kernel_y: str = "auto",
        bandwidth_y: Any = "median",
        statistic: str = "biased",
        n_features_to_select: int | float = 0.2,
        feature_groups: dict | None = None,
        algorithm: str = "auto",
        device: str = "cpu",
        progress: bool = True,
        n_jobs: int | None = None,
        method: str = RENAMED,
    ) -> None:
        self.kernel_x = kernel_x
        self.bandwidth_x = bandwidth_x
        self.kernel_y = kernel_y
        self.bandwidth_y = bandwidth_y
        self.statistic = statistic
        self.n_features_to_select = n_features_to_select
        self.feature_groups = feature_groups
        self.algorithm = algorithm
        self.method = method
        self.device = device
        self.progress = progress
        self.n_jobs = n_jobs

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def _target_kernel(self, y: np.ndarray) -> tuple[np.ndarray, str, float | None, float]:
        """Return the target as (n, p) floats, its kernel, the rbf σ and the γ of the target as returned."""
        kind = self.kernel_y
        try:
            if kind == "auto":
                kind = "delta" if is_class_target(y) else "rbf"
            if kind == "delta":
                codes = np.unique(y, return_inverse=True, axis=0 if y.ndim == 2 else None)[1]
        except TypeError as error:  # labels numpy cannot order
            kinds = sorted({type(label).__name__ for label in np.asarray(y, dtype=object).ravel()})
            raise TypeError(
                f"y mixes labels of types {kinds} that cannot be compared: give labels of one type "
                "(e.g. y.astype(str))."
            ) from error
        if kind == "delta":
            if np.unique(codes).size < 2:
                raise ValueError("HSIC with a delta target kernel needs at least two classes in y.")
            return codes.reshape(-1, 1).astype(np.float64), kind, None, 0.0
        try:
            values = np.asarray(y, dtype=np.float64).reshape(y.shape[0], -1)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"kernel_y='rbf' needs a numeric y, got labels such as {str(np.asarray(y).ravel()[0])!r}: use "
                "kernel_y='delta' (or 'auto') for class labels."
            ) from error
        sigma = median_distance(values) if self.bandwidth_y == "median" else float(self.bandwidth_y)
        if not np.isfinite(sigma) and self.bandwidth_y == "median":
            raise ValueError(
                "bandwidth_y='median': the median distance between targets is too large for float64: rescale y."
            )
        scaled, unit = unit_scaled(values, np.full(values.shape[1], sigma), "bandwidth_y", ["y"] * values.shape[1])
        return scaled, kind, sigma, 1.0 / (2.0 * float(unit[0]) ** 2)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> HSICAttribution:
        """Attribute HSIC(X, y) to the features of X.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)
        y : array-like of shape (n,) or (n, p)
            Class labels (delta kernel) or numeric targets.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Bad data or ``feature_groups``, too many features to select, or bad bandwidths.
        TypeError
            Labels in y that cannot be compared.
        """
        minimum = 4 if self.statistic == "unbiased" else 2
        refuse_non_numeric_columns(X, "X", KERNEL_CATEGORY_HINT)
        _refuse_missing_targets(y)
        X, y = validate_data(
            self,
            X,
            y,
            dtype=np.float64,
            multi_output=True,
            ensure_min_samples=minimum,
            y_numeric=False,
            ensure_all_finite="allow-nan",
        )
        refuse_missing_values(X, "X", KERNEL_NAN_HINT, getattr(self, "feature_names_in_", None))
        groups = feature_groups_of(self, X.shape[1])
        n_selected = selected_count(self.n_features_to_select, groups.n_players)
        target, kind, sigma_y, gamma_y = self._target_kernel(y)
        weights = HSICWeights(target, kind, gamma_y, self.statistic == "unbiased")
        self.attributions_, self.hsic_, self.bandwidths_ = attribute_statistic(
            X,
            weights,
            self.kernel_x,
            self.bandwidth_x,
            renamed_parameter(self, "method", "algorithm"),
            self.device,
            self.progress,
            "bandwidth_x",
            groups,
            self.n_jobs,
            default_feature_names(X.shape[1], getattr(self, "feature_names_in_", None)),
        )
        order = np.argsort(-self.attributions_, kind="stable")
        self.ranking_ = np.empty(groups.n_players, dtype=int)
        self.ranking_[order] = np.arange(1, groups.n_players + 1)
        self.feature_groups_ = groups
        self.kernel_y_, self.bandwidth_y_ = kind, sigma_y
        self.n_features_to_select_ = n_selected
        return self

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "attributions_")
        return (self.ranking_ <= self.n_features_to_select_)[self.feature_groups_.player_of_column]


def _refuse_missing_targets(y: Any) -> None:
    """Raise a ValueError naming y when it has missing targets (None, NaN, pandas NA or NaT)."""
    try:
        missing = np.asarray(pd.isna(y if hasattr(y, "iloc") else np.asarray(y, dtype=object)), dtype=bool)
    except (TypeError, ValueError):
        return  # not array-like: validate_data says what is wrong
    if missing.ndim == 0 or not missing.any():
        return
    rows = np.flatnonzero(missing.reshape(missing.shape[0], -1).any(axis=1))
    raise ValueError(
        f"y has missing values (None, NaN or NA) in {rows.size} rows, first at row {rows[0]}: HSIC compares the "
        "targets of every pair of rows, so every row needs one. Drop those rows from X and y, or impute y."
    )
