"""Combine independent sampling units into a Shapley estimate and its standard error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class UnitSamples:
    """Per-unit Shapley estimates of a block of rows; standard errors are taken over these independent units.

    Attributes
    ----------
    values : array of shape (B, m, d, n_outputs)
    weights : array of shape (m,)
        Total weight of each unit, summing to 1.
    """

    values: Any
    weights: Any


def combine_units(units: UnitSamples, xp: Any) -> tuple[Any, Any]:
    """Return the estimate Σ_u W_u ū_u and its standard error.

    Standard error sqrt(m / (m − 1) · Σ_u W_u² (ū_u − φ̂)²) (s / sqrt(m) for equal weights); NaN for one unit.

    Returns
    -------
    estimate, stderr : arrays of shape (B, d, n_outputs)
    """
    w = units.weights[None, :, None, None]
    estimate = (w * units.values).sum(axis=1)
    m = units.values.shape[1]
    if m < 2:
        return estimate, xp.full(estimate.shape, xp.nan)
    spread = (w**2 * (units.values - estimate[:, None]) ** 2).sum(axis=1)
    return estimate, xp.sqrt(spread * (m / (m - 1)))
