"""Pack results into a ``shap.Explanation`` that shap's plots take as is."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import t as student_t

if TYPE_CHECKING:
    from sklearn_shapq._feature_groups import FeatureGroups
    from sklearn_shapq.games import TableCodec


def make_explanation(
    values: np.ndarray,
    base_values: np.ndarray,
    data: np.ndarray | None,
    feature_names: list[str],
    *,
    output_names: list[str] | None = None,
    display_data: np.ndarray | None = None,
    error_std: np.ndarray | None = None,
    error_dof: np.ndarray | None = None,
    compute_time: float | None = None,
    diagnostics: dict | None = None,
):
    """Build a ``shap.Explanation`` following the project's contract.

    Parameters
    ----------
    values : array of shape (n, d, k)
        Shapley values; k = 1 is returned as (n, d).
    base_values : array of shape (n, k)
        Base value of each row; k = 1 is returned as (n,).
    data : array of shape (n, d) or None
        The explained rows (numeric ndarray, never a DataFrame); None for a global attribution
        that explains no particular row.
    feature_names : list of d str
    output_names : list of k str, optional
        Names of the outputs when k > 1.
    display_data : object array of shape (n, d), optional
        The rows' cells as the user knows them (strings, categories) when ``data`` holds codes
        (shap's convention: plots color and place by ``data`` and label by ``display_data``).
    error_std : array like ``values``, optional
        Standard errors; sets ``lower_bounds``/``upper_bounds`` to 95% intervals.
    error_dof : array of shape (n,), optional
        Degrees of freedom of each row's standard errors (independent units − 1): the intervals
        use Student's t quantile, which matters when few units back an error (e.g. Owen's two
        runs). None or inf: the normal quantile.
    compute_time : float, optional
        Seconds spent.
    diagnostics : dict, optional
        What the call measured (estimator used, evaluations per row, model rows), set as the
        Explanation's ``diagnostics`` attribute (slices of the Explanation do not carry it).

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
        dof = np.full(len(values), np.inf) if error_dof is None else np.asarray(error_dof, dtype=float)
        quantile = student_t.ppf(0.975, np.maximum(dof, 1.0)).reshape((-1,) + (1,) * (values.ndim - 1))
        kwargs.update(
            error_std=error_std,
            lower_bounds=values - quantile * error_std,
            upper_bounds=values + quantile * error_std,
        )
    explanation = shap.Explanation(
        values=values,
        base_values=base_values,
        data=None if data is None else np.asarray(data),
        feature_names=list(feature_names),
        output_names=None if single else list(output_names),
        display_data=display_data,
        compute_time=compute_time,
        **kwargs,
    )
    if diagnostics is not None:
        explanation.diagnostics = diagnostics
    return explanation


def explanation_data(
    array: np.ndarray, codec: TableCodec | None, groups: FeatureGroups | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Return the Explanation's ``data`` and ``display_data`` of explained rows (codes, or cells).

    Without groups: the columns' codes, and the cells when the data is a raw table. With groups:
    one column per player (:meth:`FeatureGroups.player_data`: a group's ``data`` is NaN), and a
    group's ``display_data`` is its cells joined by ", " (a string, as shap's plots label with).
    """
    cells = None if codec is None else codec.cells(array)
    if groups is None:
        return array, cells
    cells = array.astype(object) if cells is None else cells
    display = np.empty((array.shape[0], groups.n_players), dtype=object)
    for player, members in enumerate(groups.members):  # a loop over the few players
        if members.size == 1:
            display[:, player] = cells[:, members[0]]
        else:
            display[:, player] = [", ".join(map(str, row)) for row in cells[:, members]]
    return groups.player_data(array), display
