"""Pack results into a ``shap.Explanation`` that shap's plots take as is."""

from __future__ import annotations

import numpy as np

Z_95 = 1.959963984540054
"""Two-sided 95% normal quantile used for ``lower_bounds`` / ``upper_bounds``."""


def make_explanation(
    values: np.ndarray,
    base_values: np.ndarray,
    data: np.ndarray,
    feature_names: list[str],
    *,
    output_names: list[str] | None = None,
    error_std: np.ndarray | None = None,
    compute_time: float | None = None,
):
    """Build a ``shap.Explanation`` following the project's contract.

    Parameters
    ----------
    values : array of shape (n, d, k)
        Shapley values; k = 1 is returned as (n, d).
    base_values : array of shape (n, k)
        Base value of each row; k = 1 is returned as (n,).
    data : array of shape (n, d)
        The explained rows (numeric ndarray, never a DataFrame).
    feature_names : list of d str
    output_names : list of k str, optional
        Names of the outputs when k > 1.
    error_std : array like ``values``, optional
        Standard errors; sets ``lower_bounds``/``upper_bounds`` to a 95% normal interval.
    compute_time : float, optional
        Seconds spent.

    Returns
    -------
    shap.Explanation
    """
    import shap

    k = values.shape[-1]
    single = k == 1
    if single:
        values, base_values = values[..., 0], base_values[..., 0]
        error_std = None if error_std is None else error_std[..., 0]
    elif output_names is None:
        output_names = [f"output {j}" for j in range(k)]
    kwargs = {}
    if error_std is not None:
        kwargs.update(
            error_std=error_std,
            lower_bounds=values - Z_95 * error_std,
            upper_bounds=values + Z_95 * error_std,
        )
    return shap.Explanation(
        values=values,
        base_values=base_values,
        data=np.asarray(data),
        feature_names=list(feature_names),
        output_names=None if single else list(output_names),
        compute_time=compute_time,
        **kwargs,
    )
