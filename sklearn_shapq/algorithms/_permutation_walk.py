"""The permutation walk: marginal contributions of every feature along orderings, per sampling unit."""

from __future__ import annotations

from typing import Any

import numpy as np


def walk_gains(path: Any, ranks: Any, xp: Any) -> Any:
    """Marginal contribution of every feature from the values along its walks.

    ``path`` (..., d + 1, n_outputs) holds v(∅), the prefixes and v(N) of the orderings ``ranks``
    (..., d); returns (..., d, n_outputs).
    """
    steps = path[..., 1:, :] - path[..., :-1, :]  # step t adds the feature at position t
    return xp.take_along_axis(steps, ranks[..., None].astype(xp.int64), axis=-2)


def walk_units(game: Any, games: Any, orderings: Any, bounds: np.ndarray) -> Any:
    """Walk orderings of some games and return the mean contributions of each sampling unit.

    Each ordering costs d − 1 new evaluations; every walk telescopes, so the estimates are efficient.

    ``orderings`` (B, n, d); unit u holds orderings ``bounds[u]`` … ``bounds[u + 1] − 1``. Returns
    (B, m, d, n_outputs).
    """
    xp = game.backend.xp
    n_rows, n_orderings, d = orderings.shape
    k = game.n_outputs
    ranks = xp.argsort(orderings, axis=-1)
    inner = game.prefix_grid(games, ranks)
    path = xp.concatenate(
        [
            xp.broadcast_to(game.empty_value[games][:, None, None, :], (n_rows, n_orderings, 1, k)),
            inner,
            xp.broadcast_to(game.full_value[games][:, None, None, :], (n_rows, n_orderings, 1, k)),
        ],
        axis=2,
    )
    return unit_means(walk_gains(path, ranks, xp), bounds, xp)


def unit_means(contributions: Any, bounds: np.ndarray, xp: Any) -> Any:
    """Means over consecutive groups of axis 1 (group u = ``bounds[u]`` … ``bounds[u + 1] − 1``)."""
    sizes = np.diff(bounds)
    if np.all(sizes == sizes[0]):
        n_rows, n, d, k = contributions.shape
        return contributions.reshape(n_rows, n // sizes[0], sizes[0], d, k).mean(axis=2)
    totals = xp.cumsum(contributions, axis=1)
    totals = xp.concatenate([xp.zeros_like(totals[:, :1]), totals], axis=1)
    ends, starts = xp.asarray(bounds[1:]), xp.asarray(bounds[:-1])
    return (totals[:, ends] - totals[:, starts]) / xp.asarray(sizes, dtype=contributions.dtype)[:, None, None]
