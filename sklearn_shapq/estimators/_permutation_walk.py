"""The weighted permutation walk: Shapley estimates from orderings with weights summing to 1."""

from __future__ import annotations

from typing import Any

from sklearn_shapq.estimators._units import UnitSamples

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
    weights: Any,
    unit_size: int,
    *,
    max_mask_bytes: int = DEFAULT_MASK_BYTES,
) -> UnitSamples:
    """Walk every ordering of every explained row and collect per-unit marginal contributions.

    For ordering p with weight w, feature p[t] receives w · (v(p[:t+1]) − v(p[:t])). The sum over a
    walk telescopes to v(N) − v(∅), so any weights summing to 1 give exactly efficient estimates.
    v(∅) and v(N) are cached: each ordering costs d − 1 new evaluations of v.

    Parameters
    ----------
    game : callable
        ``game(x, masks)`` with masks (B, C, d) → values (B, C, k); has ``empty_value`` (k,).
    x : array of shape (B, d)
        Explained rows.
    full_value : array of shape (B, k)
        v(N) of each row.
    orderings : int array of shape (B, n, d)
        Row b's orderings; consecutive groups of ``unit_size`` form the independent units.
    weights : array of shape (n,)
        Weight of each ordering (shared by all rows), summing to 1.
    unit_size : int
        Orderings per independent unit (1 for Monte Carlo, 2 for antithetic pairs).
    max_mask_bytes : int
        Bound on coalition masks built at once; larger walks run in blocks of units.

    Returns
    -------
    UnitSamples
    """
    xp = game.backend.xp
    n_rows, n_orderings, d = orderings.shape
    if n_orderings % unit_size:
        raise ValueError(f"{n_orderings} orderings do not split into units of {unit_size}.")
    n_units = n_orderings // unit_size
    k = int(full_value.shape[1])
    units_per_block = max(1, max_mask_bytes // max(1, n_rows * unit_size * (d - 1) * d))
    unit_weights = weights.reshape(n_units, unit_size).sum(axis=1)
    unit_values = xp.empty((n_rows, n_units, d, k), dtype=full_value.dtype)
    for first in range(0, n_units, units_per_block):
        last = min(first + units_per_block, n_units)
        block = slice(first * unit_size, last * unit_size)
        ranks = xp.argsort(orderings[:, block], axis=-1)
        n_block = ranks.shape[1]
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
        w = weights[block].reshape(1, last - first, unit_size, 1, 1)
        grouped = contributions.reshape(n_rows, last - first, unit_size, d, k)
        unit_values[:, first:last] = (w * grouped).sum(axis=2) / unit_weights[None, first:last, None, None]
    return UnitSamples(unit_values, unit_weights)
