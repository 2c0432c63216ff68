"""Combine independent sampling units into a Shapley estimate and its standard error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class UnitSamples:
    """Per-unit Shapley estimates of a block of explained rows.

    A unit is the independent sampling unit: one permutation for plain Monte Carlo, an antithetic
    pair, an orthogonal block. Standard errors are computed over units, never over the correlated
    permutations inside one.

    Attributes
    ----------
    values : array of shape (B, m, d, k)
        Weighted mean of the marginal contributions of each unit's permutations.
    weights : array of shape (m,)
        Total weight of each unit; the weights of all units sum to 1.
    """

    values: Any
    weights: Any


def combine_units(units: UnitSamples, xp: Any) -> tuple[Any, Any]:
    """Return the estimate Σ_u W_u ū_u and its standard error.

    The standard error is sqrt(m / (m − 1) · Σ_u W_u² (ū_u − φ̂)²), which is the usual
    s / sqrt(m) for equal weights W_u = 1/m. With a single unit it is NaN (not estimable).

    Parameters
    ----------
    units : UnitSamples
    xp : module
        Array namespace of ``units``.

    Returns
    -------
    estimate, stderr : arrays of shape (B, d, k)
    """
    w = units.weights[None, :, None, None]
    estimate = (w * units.values).sum(axis=1)
    m = units.values.shape[1]
    if m < 2:
        return estimate, xp.full(estimate.shape, xp.nan)
    spread = (w**2 * (units.values - estimate[:, None]) ** 2).sum(axis=1)
    return estimate, xp.sqrt(spread * (m / (m - 1)))
