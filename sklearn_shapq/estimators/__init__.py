"""Estimators: turn evaluations of a game into Shapley estimates and standard errors."""

from sklearn_shapq.estimators._exact import exact_shapley, shapley_from_table
from sklearn_shapq.estimators._kernel_statistics import statistic_shapley
from sklearn_shapq.estimators._owen import owen_plan, owen_shapley
from sklearn_shapq.estimators._permutation_walk import permutation_walk, prefix_masks
from sklearn_shapq.estimators._product_kernel import (
    PRODUCT_KERNEL_METHODS,
    product_kernel_shapley,
    resolve_product_kernel_method,
)
from sklearn_shapq.estimators._source_walk import walk_source
from sklearn_shapq.estimators._stratified import stratified_plan, stratified_shapley
from sklearn_shapq.estimators._units import UnitSamples, combine_units

__all__ = [
    "PRODUCT_KERNEL_METHODS",
    "UnitSamples",
    "combine_units",
    "exact_shapley",
    "owen_plan",
    "owen_shapley",
    "permutation_walk",
    "prefix_masks",
    "product_kernel_shapley",
    "resolve_product_kernel_method",
    "shapley_from_table",
    "statistic_shapley",
    "stratified_plan",
    "stratified_shapley",
    "walk_source",
]
