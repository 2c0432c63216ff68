"""Shapley estimates of a block of rows from an ordering source, with optional early stopping."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sklearn_shapq.estimators._permutation_walk import permutation_walk
from sklearn_shapq.estimators._units import UnitSamples, combine_units

TOL_ROUNDS = 10
"""With a tolerance, units are walked in about this many rounds, checking errors after each."""

TOL_MIN_UNITS = 10
"""No row stops before this many units: an error from fewer is too noisy to stop on."""


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

    Without ``tol`` every row walks all units. With ``tol`` the units are walked in rounds (the
    first of at least :data:`TOL_MIN_UNITS` units); after each round, a row whose standard errors
    are all below ``tol`` stops and keeps the estimate of the units walked so far (weighted by
    ``source.unit_weights``, which sum to 1, so it stays exactly efficient). When the units walked
    weigh every permutation equally (a complete enumeration), the values are exact and their
    standard errors 0.

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
    n_units : int ndarray of shape (B,)
        Units walked by each row.
    """
    backend = game.backend
    xp = backend.xp
    n_rows, d = x.shape
    k = int(full_value.shape[1])
    n_units = source.n_units
    bounds = np.asarray(source.unit_bounds)
    step = n_units if tol is None else math.ceil(n_units / TOL_ROUNDS)
    first_check = n_units if tol is None else max(TOL_MIN_UNITS, step)
    unit_values = xp.empty((n_rows, n_units, d, k), dtype=full_value.dtype)
    estimate = xp.empty((n_rows, d, k), dtype=full_value.dtype)
    stderr = xp.empty((n_rows, d, k), dtype=full_value.dtype)
    units_used = np.full(n_rows, n_units)
    active = np.arange(n_rows)
    first = 0
    while first < n_units and active.size:
        last = min(n_units, first + step if first else first_check)
        here = backend.to_device(active)
        orderings = source.orderings(rows[active], first, last, backend)
        unit_values[here, first:last] = permutation_walk(
            game, x[here], full_value[here], orderings, bounds[first : last + 1] - bounds[first]
        )
        first = last
        if first < n_units:
            values, errors = _combine(source, unit_values[here, :first], xp, backend)
            converged = xp.all((errors < tol).reshape(len(active), -1), axis=1)
            done = backend.to_numpy(converged)
            if done.any():
                finished = backend.to_device(active[done])
                estimate[finished], stderr[finished] = values[converged], errors[converged]
                units_used[active[done]] = first
                active = active[~done]
    if active.size:
        here = backend.to_device(active)
        estimate[here], stderr[here] = _combine(source, unit_values[here], xp, backend)
    return estimate, stderr, units_used


def _combine(source: Any, unit_values: Any, xp: Any, backend: Any) -> tuple[Any, Any]:
    """Estimate and standard errors of the first ``unit_values.shape[1]`` units of ``source``."""
    n_units = unit_values.shape[1]
    values, errors = combine_units(UnitSamples(unit_values, backend.to_device(source.unit_weights(n_units))), xp)
    return values, xp.zeros_like(errors) if source.is_exact(n_units) else errors
