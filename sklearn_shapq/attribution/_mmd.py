"""``MMDAttribution``: exact Shapley attribution of MMD²(P, Q) to features, with a permutation test."""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import validate_data

from sklearn_shapq._progress import progress_bar
from sklearn_shapq._random import make_generator
from sklearn_shapq._validation import (
    DEVICE,
    KERNEL_CATEGORY_HINT,
    KERNEL_NAN_HINT,
    N_JOBS,
    PROGRESS,
    RANDOM_STATE,
    RENAMED,
    check_data,
    default_feature_names,
    refuse_missing_values,
    refuse_non_numeric_columns,
    renamed,
    renamed_parameter,
)
from sklearn_shapq.attribution._bandwidth import kernel_factors, unit_scaled
from sklearn_shapq.attribution._common import (
    ALGORITHM,
    BANDWIDTH,
    KERNEL,
    STATISTIC,
    GlobalAttributionMixin,
    attribute_statistic,
    feature_groups_of,
)
from sklearn_shapq.backends import factor_tensor
from sklearn_shapq.games import MMDWeights


def permuted_mmd2(
    U: np.ndarray,
    n: int,
    kinds: np.ndarray,
    gammas: np.ndarray,
    labels: np.ndarray,
    unbiased: bool,
    progress: bool = False,
) -> np.ndarray:
    """MMD² for several splits of the pooled sample at once, from one blocked pass over its Gram matrix.

    ``labels`` (N, P) marks the n rows of each split's first sample of ``U`` (N, d); returns (P,).
    """
    size, m = U.shape[0], U.shape[0] - n
    first = labels.astype(np.float64)
    within_x = np.zeros(labels.shape[1])
    within_z = np.zeros(labels.shape[1])
    across = np.zeros(labels.shape[1])
    # per row: the (N, d) factors and the (N,) Gram row; (P,) sums to either sample and products
    step = get_chunk_n_rows(8 * (size * (U.shape[1] + 1) + 6 * labels.shape[1]), max_n_rows=size)
    with progress_bar(progress, size, "permutation test", "row") as bar:
        for start in range(0, size, step):
            rows = slice(start, min(start + step, size))
            gram = np.prod(factor_tensor(U[rows], U, kinds, gammas), axis=2)  # (rows, N)
            to_first = gram @ first  # Σ_b K_ab 1[b in X_p]
            to_second = gram.sum(axis=1, keepdims=True) - to_first
            within_x += (first[rows] * to_first).sum(axis=0)
            within_z += ((1.0 - first[rows]) * to_second).sum(axis=0)
            across += (first[rows] * to_second).sum(axis=0)
            bar.update(gram.shape[0])
    if unbiased:  # drop the unit diagonal
        return (within_x - n) / (n * (n - 1)) + (within_z - m) / (m * (m - 1)) - 2.0 * across / (n * m)
    return within_x / n**2 + within_z / m**2 - 2.0 * across / (n * m)


class MMDAttribution(GlobalAttributionMixin, BaseEstimator):
    """Exact Shapley attribution of the squared maximum mean discrepancy between two samples.

    v(S) = MMD² from the features in S has exact Shapley values in O((n + m)² d²) (Mohammadi et
    al. 2025), summing to the statistic; variables alike in both samples get small negative ones.

    Parameters
    ----------
    kernel : {"rbf", "laplacian"}, default="rbf"
    bandwidth : {"median", "median_per_feature"}, float or array of shape (d,), default="median"
        σ_j of the factors, from the pooled sample ("median": the paper's single σ).
    statistic : {"unbiased", "biased"}, default="unbiased"
        The U-statistic (the paper's; can be negative) or the V-statistic.
    n_permutations : int or None, default=None
        With an int, a permutation test of MMD² = 0 (``p_value_``).
    feature_groups : dict or None, default=None
        {group name: [columns by name or index]}: one player per group; attributions stay exact.
    algorithm : {"auto", "prefix_suffix", "quadrature"}, default="auto"
        Algorithm per pair of samples (see :class:`ProductKernelShapExplainer`).
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        The permutation test runs on the CPU.
    random_state : None, int, numpy Generator or RandomState, default=None
        Seed of the permutation test.
    progress : bool, default=True
        Show progress bars once a loop has run 3 s.
    n_jobs : int or None, default=None
        Tiles of the pair sum evaluated at once by joblib; the result is bit-identical for any value.
    method : str
        Deprecated: renamed ``algorithm`` in 1.0; removed in 1.1.

    Attributes
    ----------
    attributions_ : ndarray of shape (n_players,)
        Summing to ``mmd2_``.
    mmd2_ : float
    p_value_ : float or None
        (1 + #{permuted MMD² >= ``mmd2_``}) / (1 + n_permutations).
    feature_groups_ : FeatureGroups
    bandwidths_ : ndarray of shape (d,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X is a DataFrame.

    Notes
    -----
    Pair weights come in blocks of rows sized by scikit-learn's ``working_memory``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(150, 4))
    >>> Z = rng.normal(size=(150, 4))
    >>> Z[:, 3] = rng.standard_t(3, size=150) * 2
    >>> mmd = MMDAttribution(n_permutations=99, random_state=0).fit(X, Z)
    >>> int(np.argmax(mmd.attributions_)), bool(mmd.p_value_ < 0.05)
    (3, True)
    """

    # Not checked by sklearn.utils.estimator_checks.check_estimator: fit(X, Z) takes two samples of
    # the same features, while the checks call fit(X, y) with a target of shape (n,).
    _parameter_constraints: dict = {
        "kernel": KERNEL,
        "bandwidth": BANDWIDTH,
        "statistic": STATISTIC,
        "n_permutations": [Interval(Integral, 1, None, closed="left"), None],
        "feature_groups": [dict, None],
        "algorithm": ALGORITHM,
        "method": renamed(ALGORITHM),
        "device": DEVICE,
        "random_state": RANDOM_STATE,
        "progress": PROGRESS,
        "n_jobs": N_JOBS,
    }

    def __init__(
        self,
        *,
        kernel: str = "rbf",
        bandwidth: Any = "median",
        statistic: str = "unbiased",
        n_permutations: int | None = None,
        feature_groups: dict | None = None,
        algorithm: str = "auto",
        device: str = "cpu",
        random_state: Any = None,
        progress: bool = True,
        n_jobs: int | None = None,
        method: str = RENAMED,
    ) -> None:
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.statistic = statistic
        self.n_permutations = n_permutations
        self.feature_groups = feature_groups
        self.algorithm = algorithm
        self.method = method
        self.device = device
        self.random_state = random_state
        self.progress = progress
        self.n_jobs = n_jobs

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # fit(X, Z): Z, the second sample, comes where scikit-learn passes y
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, Z: Any) -> MMDAttribution:
        """Attribute MMD²(X, Z) to the features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)
            Sample from P.
        Z : array-like or DataFrame of shape (m, d)
            Sample from Q, with the same columns.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Bad data, a sample of fewer than 2 rows, bad ``feature_groups`` or bandwidths.
        """
        if Z is None:  # scikit-learn's words for a missing y (its estimator checks read them)
            raise ValueError(
                "MMDAttribution.fit(X, Z) needs the sample Z from Q. Expected array-like (array or non-string "
                "sequence), got None."
            )
        refuse_non_numeric_columns(X, "X", KERNEL_CATEGORY_HINT)
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2, ensure_all_finite="allow-nan")
        refuse_missing_values(X, "X", KERNEL_NAN_HINT, getattr(self, "feature_names_in_", None))
        groups = feature_groups_of(self, X.shape[1])
        names = getattr(self, "feature_names_in_", None)
        refuse_non_numeric_columns(Z, "Z", KERNEL_CATEGORY_HINT)
        Z, _ = check_data(
            Z,
            name="Z",
            n_features=X.shape[1],
            feature_names=None if names is None else list(names),
            nan_hint=KERNEL_NAN_HINT,
        )
        if Z.shape[0] < 2:
            raise ValueError("Z needs at least 2 samples.")
        unbiased = self.statistic == "unbiased"
        U = np.concatenate([X, Z])
        n = X.shape[0]
        columns = default_feature_names(X.shape[1], names)
        self.attributions_, self.mmd2_, self.bandwidths_ = attribute_statistic(
            U,
            MMDWeights(n, Z.shape[0], unbiased),
            self.kernel,
            self.bandwidth,
            renamed_parameter(self, "method", "algorithm"),
            self.device,
            self.progress,
            "bandwidth",
            groups,
            self.n_jobs,
            columns,
        )
        self.feature_groups_ = groups
        self.p_value_ = None
        if self.n_permutations is not None:
            rng = make_generator(self.random_state, stream=0)
            labels = np.zeros((U.shape[0], self.n_permutations), dtype=bool)
            for p in range(self.n_permutations):  # one random split per column
                labels[rng.permutation(U.shape[0])[:n], p] = True
            scaled, unit = unit_scaled(U, self.bandwidths_, "bandwidth", columns)  # as attribute_statistic
            kinds, gammas = kernel_factors(self.kernel, unit)
            null = permuted_mmd2(scaled, n, kinds, gammas, labels, unbiased, self.progress)
            self.p_value_ = float((1 + np.sum(null >= self.mmd2_ - 1e-12 * abs(self.mmd2_))) / (1 + null.size))
        return self
