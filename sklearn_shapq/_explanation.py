"""Pack results into a ``shap.Explanation`` that shap's plots take as is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

    ``values`` (n, d, n_outputs) and ``base_values`` (n, n_outputs) drop the output axis for one
    output; ``data`` (n, d) is numeric or None, ``display_data`` the cells shap labels with;
    ``error_std`` sets 95% bounds (Student's t with ``error_dof`` (n,), else normal);
    ``diagnostics`` becomes the attribute of that name.
    """
    import shap

    k = values.shape[-1]
    single = k == 1
    if single:
        values, base_values = values[..., 0], base_values[..., 0]
        error_std = None if error_std is None else error_std[..., 0]
    elif output_names is None:
        output_names = [f"output {j}" for j in range(k)]
    kwargs: dict[str, Any] = {}
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
        output_names=None if single else list(output_names),  # type: ignore[arg-type]
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

    ``data`` holds numbers and category codes (the categories' order); where string or object
    columns (levels without an order) are explained, ``data`` is an object array holding their cells,
    as shap's own Explanation of such a DataFrame: the beeswarm greys them, a scatter plot places
    them by level, labelled. ``display_data`` holds every cell. With groups, a group's ``data`` is
    NaN and its ``display_data`` its cells joined by ", ".
    """
    cells = None if codec is None else codec.cells(array)
    unordered = np.zeros(array.shape[1], dtype=bool) if codec is None else codec.unordered
    if groups is None:
        return _levels_as_cells(array, cells, unordered), cells
    cells = array.astype(object) if cells is None else cells
    display = np.empty((array.shape[0], groups.n_players), dtype=object)
    for player, members in enumerate(groups.members):  # a loop over the few players
        if members.size == 1:
            display[:, player] = cells[:, members[0]]
        else:
            display[:, player] = [", ".join(map(str, row)) for row in cells[:, members]]
    lone_unordered = groups.player_data(unordered[None, :].astype(np.float64))[0] == 1.0  # NaN for a group
    return _levels_as_cells(groups.player_data(array), display, lone_unordered), display


def _levels_as_cells(data: np.ndarray, cells: np.ndarray | None, unordered: np.ndarray) -> np.ndarray:
    """Return ``data`` with the columns ``unordered`` replaced by their ``cells`` (an object array), if any."""
    if cells is None or not unordered.any():
        return data
    data = data.astype(object)
    data[:, unordered] = cells[:, unordered]
    return data
