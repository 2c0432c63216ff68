"""Estimators: turn evaluations of a game into Shapley estimates and standard errors."""

from sklearn_shapq.estimators._exact import exact_shapley, shapley_from_table
from sklearn_shapq.estimators._permutation_walk import permutation_walk, prefix_masks
from sklearn_shapq.estimators._units import UnitSamples, combine_units

__all__ = [
    "UnitSamples",
    "combine_units",
    "exact_shapley",
    "permutation_walk",
    "prefix_masks",
    "shapley_from_table",
]
