"""Estimators: turn evaluations of a game into Shapley estimates and standard errors."""

from sklearn_shapq.estimators._exact import exact_shapley, shapley_from_table
from sklearn_shapq.estimators._owen import owen_plan, owen_shapley
from sklearn_shapq.estimators._permutation_walk import permutation_walk, prefix_masks
from sklearn_shapq.estimators._product_kernel_shapley import (
    PRODUCT_KERNEL_METHODS,
    product_kernel_shapley,
    resolve_product_kernel_method,
)
from sklearn_shapq.estimators._source_walk import walk_source
from sklearn_shapq.estimators._statistic_shapley import statistic_shapley
from sklearn_shapq.estimators._stratified import stratified_plan, stratified_shapley
from sklearn_shapq.estimators._topk import (
    PAC_METHODS,
    TOPK_METHODS,
    cmcs_coalition_probability,
    draw_cmcs_coalitions,
    extended_marginals,
    top_k_shapley,
)
from sklearn_shapq.estimators._topk_metrics import binary_precision, inclusion_exclusion_error, ratio_precision
from sklearn_shapq.estimators._topk_state import TopKResult
from sklearn_shapq.estimators._units import UnitSamples, combine_units

__all__ = [
    "PAC_METHODS",
    "PRODUCT_KERNEL_METHODS",
    "TOPK_METHODS",
    "TopKResult",
    "binary_precision",
    "cmcs_coalition_probability",
    "draw_cmcs_coalitions",
    "extended_marginals",
    "inclusion_exclusion_error",
    "ratio_precision",
    "top_k_shapley",
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
