"""Shapley estimates of a block of rows from an ordering source, with optional early stopping."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sklearn_shapq.estimators._permutation_walk import permutation_walk
from sklearn_shapq.estimators._units import UnitSamples, combine_units

TOL_ROUNDS = 10
"""With a tolerance, units are walked in about this many rounds, checking errors after each."""


def walk_source(
    game: Any,
    x: Any,
    full_value: Any,
    source: Any,
    rows: np.ndarray,
    *,
    tol: float | None = None,
) -> tuple[Any, Any, np.ndarray]:
    """Walk the orderings of ``source`` for explained rows ``rows`` and combine them per unit.

    Without ``tol`` every row walks all units. With ``tol`` the units are walked in rounds; after
    each round, a row whose standard errors are all below ``tol`` stops and keeps the estimate of
    the units walked so far (weighted by ``source.unit_weights``, which sum to 1, so it stays
    exactly efficient).

    Parameters
    ----------
    game : callable
        The game (see :func:`permutation_walk`).
    x : array of shape (B, d)
    full_value : array of shape (B, k)
    source : OrderingSource
        Orderings and units (``sklearn_shapq.samplers``).
    rows : int ndarray of shape (B,)
        Indices of these rows within the explain call (they address the orderings).
    tol : float or None
        Stop a row once every standard error of it is below ``tol``.

    Returns
    -------
    estimate, stderr : arrays of shape (B, d, k)
    n_orderings : int ndarray of shape (B,)
        Orderings walked by each row.
    """
    backend = game.backend
    xp = backend.xp
    n_rows, d = x.shape
    k = int(full_value.shape[1])
    n_units = source.n_units
    bounds = np.asarray(source.unit_bounds)
    step = n_units if tol is None else max(2, math.ceil(n_units / TOL_ROUNDS))
    unit_values = xp.empty((n_rows, n_units, d, k), dtype=full_value.dtype)
    estimate = xp.empty((n_rows, d, k), dtype=full_value.dtype)
    stderr = xp.empty((n_rows, d, k), dtype=full_value.dtype)
    units_used = np.full(n_rows, n_units)
    active = np.arange(n_rows)
    first = 0
    while first < n_units and active.size:
        last = min(n_units, first + step)
        here = backend.to_device(active)
        orderings = source.orderings(rows[active], first, last, backend)
        unit_values[here, first:last] = permutation_walk(
            game, x[here], full_value[here], orderings, bounds[first : last + 1] - bounds[first]
        )
        first = last
        if first < n_units:
            weights = backend.to_device(source.unit_weights(first))
            values, errors = combine_units(UnitSamples(unit_values[here, :first], weights), xp)
            converged = xp.all((errors < tol).reshape(len(active), -1), axis=1)
            done = backend.to_numpy(converged)
            if done.any():
                finished = backend.to_device(active[done])
                estimate[finished], stderr[finished] = values[converged], errors[converged]
                units_used[active[done]] = first
                active = active[~done]
    if active.size:
        here = backend.to_device(active)
        weights = backend.to_device(source.unit_weights(n_units))
        values, errors = combine_units(UnitSamples(unit_values[here], weights), xp)
        estimate[here], stderr[here] = values, errors
    return estimate, stderr, bounds[units_used]
