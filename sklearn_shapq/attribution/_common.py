"""Shared plumbing of the kernel-statistic attributions: constraints, block sizes, the computation."""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from sklearn_shapq._explanation import make_explanation
from sklearn_shapq._feature_groups import FeatureGroups, resolve_feature_groups
from sklearn_shapq._validation import default_feature_names
from sklearn_shapq.algorithms import resolve_product_kernel_algorithm, statistic_shapley
from sklearn_shapq.attribution._bandwidth import (
    BANDWIDTH_RULES,
    KERNELS,
    kernel_factors,
    resolve_bandwidths,
    unit_scaled,
)
from sklearn_shapq.backends import PRODUCT_KERNEL_BACKEND_ALGORITHMS, resolve_backend

KERNEL = [StrOptions(set(KERNELS))]
"""``_parameter_constraints`` entry of the per-feature kernel (``kernel_x`` of HSIC, ``kernel`` of MMD)."""

BANDWIDTH = [StrOptions(set(BANDWIDTH_RULES)), Interval(Real, 0, None, closed="neither"), "array-like"]
"""Per-feature bandwidths: a median rule, one positive number, or d positive numbers (checked in fit)."""

ALGORITHM = [StrOptions({"auto", *PRODUCT_KERNEL_BACKEND_ALGORITHMS})]
"""Algorithm per pair of samples."""

STATISTIC = [StrOptions({"biased", "unbiased"})]
"""Which estimate of the statistic is attributed (``statistic``)."""

_ESTIMATOR_ROW_TEMPORARIES = 3  # (N,) float64 rows per block row in statistic_shapley: triu, doubled, device copy


def block_rows(n_samples: int, row_temporaries: int) -> int:
    """Rows of samples per block so that a block's temporaries fit in scikit-learn's ``working_memory``.

    ``row_temporaries`` float64 arrays of ``n_samples`` entries are held per row; returns 1 … N.

    Examples
    --------
    >>> import sklearn
    >>> with sklearn.config_context(working_memory=1):
    ...     block_rows(1000, 5)
    16
    """
    row_bytes = 8 * n_samples * (row_temporaries + _ESTIMATOR_ROW_TEMPORARIES)
    return get_chunk_n_rows(row_bytes, max_n_rows=n_samples)


def feature_groups_of(estimator: Any, d: int) -> FeatureGroups:
    """Resolve ``estimator.feature_groups`` against its column names (``feature_names_in_``, else "x0" …)."""
    names = default_feature_names(d, getattr(estimator, "feature_names_in_", None))
    return resolve_feature_groups(estimator.feature_groups, names)


def attribute_statistic(
    U: np.ndarray,
    weights: Any,
    kernel: str,
    bandwidth: Any,
    algorithm: str,
    device: str,
    progress: bool,
    name: str,
    feature_groups: FeatureGroups,
    n_jobs: int | None = None,
    columns: Any = None,
) -> tuple[np.ndarray, float, np.ndarray]:
    """Shapley attributions of Σ_ab W_ab K(u_a, u_b) and the statistic itself.

    ``U`` (N, d) and a weight provider (``rows(start, stop)``, ``row_temporaries``); the other
    arguments as in the public classes. Returns the attributions (n_players,), the statistic
    (their sum: v(∅) = 0) and the bandwidths (d,); a ValueError for overflowing bandwidths or
    non-finite attributions.
    """
    bandwidths = resolve_bandwidths(bandwidth, U, name, columns)
    U, unit = unit_scaled(U, bandwidths, name, columns)  # the same kernel, computed without overflow
    kinds, gammas = kernel_factors(kernel, unit)
    rows = block_rows(U.shape[0], weights.row_temporaries)
    backend = resolve_backend(device)
    with backend.activate():
        resolved = resolve_product_kernel_algorithm(algorithm, feature_groups.n_players, backend.is_gpu)
        attributions = statistic_shapley(
            U, weights, kinds, gammas, backend, resolved, rows, progress, feature_groups.player_of_column, n_jobs
        )
    bad = ~np.isfinite(attributions)
    if bad.any():  # a safety net: finite data and bounded kernels give finite sums
        players = [feature_groups.names[j] for j in np.flatnonzero(bad)]
        raise ValueError(f"The attributions of {players} came out NaN or infinite: rescale those columns.")
    return attributions, float(attributions.sum()), bandwidths


class GlobalAttributionMixin:
    """``explain()`` for estimators whose fitted ``attributions_`` explain no particular row."""

    feature_groups_: FeatureGroups  # set by the estimator's fit
    attributions_: np.ndarray

    def explain(self) -> Any:
        """Return the attributions as a one-row ``shap.Explanation`` (base value 0) for shap's plots.

        ``shap.plots.bar(explain()[0])`` keeps the signs (a 2-D Explanation is plotted as mean absolute values).

        Returns
        -------
        shap.Explanation
            ``values`` of shape (1, n_players), named by ``feature_groups_.names``.
        """
        check_is_fitted(self, "attributions_")
        names = self.feature_groups_.names
        return make_explanation(self.attributions_.reshape(1, -1, 1), np.zeros((1, 1)), None, names)
