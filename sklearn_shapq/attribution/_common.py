"""Shared plumbing of the kernel-statistic attributions: parameters, blocks, the computation."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from sklearn_shapq._explanation import make_explanation
from sklearn_shapq._validation import check_positive_int, default_feature_names
from sklearn_shapq.attribution._bandwidth import kernel_factors, resolve_bandwidths
from sklearn_shapq.backends import resolve_backend
from sklearn_shapq.backends._product_kernel import METHODS
from sklearn_shapq.estimators import resolve_product_kernel_method, statistic_shapley

_AUTO_BLOCK_ELEMENTS = 1 << 22  # weights of one block of rows: 32 MiB of float64


def block_rows(batch_size: Any, n_samples: int) -> int:
    """Rows per block: ``batch_size`` or, for "auto", 32 MiB of weights."""
    if batch_size == "auto":
        return max(1, _AUTO_BLOCK_ELEMENTS // max(1, n_samples))
    return check_positive_int(batch_size, "batch_size")


def attribute_statistic(
    U: np.ndarray, weights: Any, kernel: str, bandwidth: Any, method: str, device: str, batch_size: Any, name: str
) -> tuple[np.ndarray, float, np.ndarray]:
    """Shapley attributions of Σ_ab W_ab K(u_a, u_b) and the statistic itself.

    Parameters
    ----------
    U : array of shape (N, d)
    weights : weight provider
    kernel, bandwidth : the product kernel on U (see :func:`resolve_bandwidths`)
    method : {"auto", "prefix_suffix", "quadrature"}
    device, batch_size : as in the public classes
    name : str
        Name of the bandwidth parameter in messages.

    Returns
    -------
    attributions : ndarray of shape (d,)
    statistic : float
        v(N) = Σ of the attributions, since v(∅) = Σ W = 0 (the tests check it against the
        textbook formulas).
    bandwidths : ndarray of shape (d,)
    """
    if method not in ("auto", *METHODS):
        raise ValueError(f"method must be one of {('auto', *METHODS)}, got {method!r}.")
    bandwidths = resolve_bandwidths(bandwidth, U, name)
    kinds, gammas = kernel_factors(kernel, bandwidths)
    rows = block_rows(batch_size, U.shape[0])
    backend = resolve_backend(device)
    with backend.activate():
        resolved = resolve_product_kernel_method(method, U.shape[1], backend.is_gpu)
        attributions = statistic_shapley(U, weights, kinds, gammas, backend, resolved, rows)
    return attributions, float(attributions.sum()), bandwidths


class GlobalAttributionMixin:
    """``explain()`` for estimators whose fitted ``attributions_`` explain no particular row."""

    def explain(self) -> Any:
        """Return the attributions as a one-row ``shap.Explanation`` (base value 0) for shap's plots.

        Use ``explain()[0]`` with ``shap.plots.bar`` to keep the signs (a 2-D Explanation is
        plotted as mean absolute values).
        """
        check_is_fitted(self, "attributions_")
        d = self.n_features_in_
        names = default_feature_names(d, getattr(self, "feature_names_in_", None))
        return make_explanation(self.attributions_.reshape(1, d, 1), np.zeros((1, 1)), None, names)
