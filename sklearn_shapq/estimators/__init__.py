"""Estimators: turn evaluations of a game into Shapley estimates, standard errors and top-k sets.

Every estimator family is a class registered by name: :data:`SHAPLEY_ESTIMATORS` for Shapley
values (exact, permutation walks of every registered sampler, Leverage SHAP, Owen, stratified) and
:data:`TOPK_ESTIMATORS` for top-k identification (the CMCS family and the paper's baselines).
Importing this package registers them all.
"""

from sklearn_shapq.estimators import _topk_cmcs, _topk_permutation, _topk_svarm  # noqa: F401  (registration)
from sklearn_shapq.estimators._exact import ExactEstimator, exact_shapley
from sklearn_shapq.estimators._leverage import KernelShapEstimator, LeverageEstimator, leverage_pairs
from sklearn_shapq.estimators._leverage_control_variate import LeverageControlVariateEstimator
from sklearn_shapq.estimators._moments import RunningMoments
from sklearn_shapq.estimators._owen import OwenEstimator, owen_plan, owen_units
from sklearn_shapq.estimators._permutation_walk import walk_gains, walk_units
from sklearn_shapq.estimators._product_kernel_shapley import (
    PRODUCT_KERNEL_METHODS,
    product_kernel_shapley,
    resolve_product_kernel_method,
)
from sklearn_shapq.estimators._registry import (
    SHAPLEY_ESTIMATORS,
    ShapleyEstimate,
    ShapleyEstimator,
    register_estimator,
)
from sklearn_shapq.estimators._statistic_shapley import statistic_shapley
from sklearn_shapq.estimators._stratified import StratifiedEstimator, stratified_plan, stratified_shapley
from sklearn_shapq.estimators._topk import top_k_shapley
from sklearn_shapq.estimators._topk_base import TOPK_ESTIMATORS, TopKEstimator, register_topk
from sklearn_shapq.estimators._topk_cmcs import cmcs_coalition_probability, cmcs_coalitions, extended_marginals
from sklearn_shapq.estimators._topk_leverage import LeverageTopK
from sklearn_shapq.estimators._topk_metrics import binary_precision, inclusion_exclusion_error, ratio_precision
from sklearn_shapq.estimators._topk_state import TopKResult
from sklearn_shapq.estimators._units import UnitSamples, combine_units
from sklearn_shapq.estimators._walk_estimator import PermutationWalkEstimator, register_sampler

__all__ = [
    "PRODUCT_KERNEL_METHODS",
    "SHAPLEY_ESTIMATORS",
    "TOPK_ESTIMATORS",
    "ExactEstimator",
    "KernelShapEstimator",
    "LeverageControlVariateEstimator",
    "LeverageEstimator",
    "LeverageTopK",
    "OwenEstimator",
    "PermutationWalkEstimator",
    "RunningMoments",
    "ShapleyEstimate",
    "ShapleyEstimator",
    "StratifiedEstimator",
    "TopKEstimator",
    "TopKResult",
    "UnitSamples",
    "binary_precision",
    "cmcs_coalition_probability",
    "cmcs_coalitions",
    "combine_units",
    "exact_shapley",
    "leverage_pairs",
    "extended_marginals",
    "inclusion_exclusion_error",
    "owen_plan",
    "owen_units",
    "product_kernel_shapley",
    "ratio_precision",
    "register_estimator",
    "register_sampler",
    "register_topk",
    "resolve_product_kernel_method",
    "statistic_shapley",
    "stratified_plan",
    "stratified_shapley",
    "top_k_shapley",
    "walk_gains",
    "walk_units",
]
