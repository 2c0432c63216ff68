"""The weighted permutation walk: Shapley estimates from orderings with weights summing to 1."""

from __future__ import annotations

from typing import Any

import numpy as np

DEFAULT_MASK_BYTES = 64 * 2**20
"""Most bytes of coalition masks built at once."""


def prefix_masks(ranks: Any, xp: Any) -> Any:
    """Coalitions visited by a walk along each ordering, without ∅ and N.

    Parameters
    ----------
    ranks : int array of shape (..., d)
        Position of each feature in its ordering (the rank vector, ``argsort`` of the ordering).

    Returns
    -------
    bool array of shape (..., d − 1, d)
        Step t (t = 1 … d − 1) holds the first t features of the ordering.
    """
    d = ranks.shape[-1]
    steps = xp.arange(1, d)
    return ranks[..., None, :] < steps[:, None]


def permutation_walk(
    game: Any,
    x: Any,
    full_value: Any,
    orderings: Any,
    unit_bounds: np.ndarray,
    *,
    max_mask_bytes: int = DEFAULT_MASK_BYTES,
) -> Any:
    """Walk every ordering of every explained row; return the mean marginal contributions per unit.

    Along ordering p, feature p[t] receives v(p[:t+1]) − v(p[:t]). The contributions of one walk
    sum to v(N) − v(∅), so any unit weights summing to 1 give exactly efficient estimates
    (:func:`~sklearn_shapq.estimators.combine_units`). v(∅) and v(N) are cached: each ordering
    costs d − 1 new evaluations of v.

    Parameters
    ----------
    game : callable
        ``game(x, masks)`` with masks (B, C, d) → values (B, C, k); has ``empty_value`` (k,).
    x : array of shape (B, d)
        Explained rows.
    full_value : array of shape (B, k)
        v(N) of each row.
    orderings : int array of shape (B, n, d)
        Row b's orderings.
    unit_bounds : int ndarray of shape (m + 1,)
        Unit u holds orderings ``unit_bounds[u]`` … ``unit_bounds[u + 1] − 1`` (from 0 to n).
    max_mask_bytes : int
        Bound on coalition masks built at once; larger walks run in blocks of units.

    Returns
    -------
    array of shape (B, m, d, k)
        Mean contribution of each unit's orderings.
    """
    xp = game.backend.xp
    n_rows, n_orderings, d = orderings.shape
    unit_bounds = np.asarray(unit_bounds)
    if unit_bounds[0] != 0 or unit_bounds[-1] != n_orderings or np.any(np.diff(unit_bounds) < 1):
        raise ValueError("unit_bounds must rise strictly from 0 to the number of orderings.")
    n_units = len(unit_bounds) - 1
    k = int(full_value.shape[1])
    orderings_per_block = max(1, max_mask_bytes // max(1, n_rows * (d - 1) * d))
    unit_values = xp.empty((n_rows, n_units, d, k), dtype=full_value.dtype)
    first = 0
    while first < n_units:
        last = max(first + 1, int(np.searchsorted(unit_bounds, unit_bounds[first] + orderings_per_block, "right")) - 1)
        last = min(last, n_units)
        start, stop = int(unit_bounds[first]), int(unit_bounds[last])
        ranks = xp.argsort(orderings[:, start:stop], axis=-1)
        n_block = stop - start
        masks = prefix_masks(ranks, xp).reshape(n_rows, n_block * (d - 1), d)
        inner = game(x, masks).reshape(n_rows, n_block, d - 1, k)
        path = xp.concatenate(
            [
                xp.broadcast_to(game.empty_value, (n_rows, n_block, 1, k)),
                inner,
                xp.broadcast_to(full_value[:, None, None, :], (n_rows, n_block, 1, k)),
            ],
            axis=2,
        )
        steps = path[:, :, 1:] - path[:, :, :-1]  # (B, n_block, d, k): step t adds feature p[t]
        contributions = xp.take_along_axis(steps, ranks[..., None].astype(xp.int64), axis=2)
        unit_values[:, first:last] = _unit_means(contributions, unit_bounds[first : last + 1] - start, xp)
        first = last
    return unit_values


def _unit_means(contributions: Any, bounds: np.ndarray, xp: Any) -> Any:
    """Means over consecutive groups of axis 1 (group u = ``bounds[u]`` … ``bounds[u + 1] − 1``)."""
    sizes = np.diff(bounds)
    if np.all(sizes == sizes[0]):
        n_rows, n, d, k = contributions.shape
        return contributions.reshape(n_rows, n // sizes[0], sizes[0], d, k).mean(axis=2)
    totals = xp.cumsum(contributions, axis=1)
    totals = xp.concatenate([xp.zeros_like(totals[:, :1]), totals], axis=1)
    ends, starts = xp.asarray(bounds[1:]), xp.asarray(bounds[:-1])
    return (totals[:, ends] - totals[:, starts]) / xp.asarray(sizes, dtype=contributions.dtype)[:, None, None]
