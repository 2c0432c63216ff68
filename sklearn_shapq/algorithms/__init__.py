"""Estimators: turn evaluations of a game into Shapley estimates, standard errors and top-k sets.

Every algorithm is one class registered by name with :func:`sklearn_shapq.register`:
:data:`SHAPLEY_ALGORITHMS` for Shapley values (exact, the permutation walk over every registered
ordering source, Leverage SHAP, Owen, stratified) and :data:`TOPK_ALGORITHMS` for top-k
identification (the CMCS family and the paper's baselines). Importing this package registers them all.
"""

from sklearn_shapq.algorithms import _topk_cmcs, _topk_permutation, _topk_svarm  # noqa: F401  (registration)
from sklearn_shapq.algorithms._background_parts import BackgroundPartsMerge
from sklearn_shapq.algorithms._exact import ExactAlgorithm, exact_shapley
from sklearn_shapq.algorithms._interaction_sampling import (
    PAIR_INDICES,
    PairEstimate,
    border_evals,
    minimum_pair_evals,
    pair_design,
    regression_adjusted,
    regression_players,
    sampled_pair_bytes,
    sampled_pair_interactions,
)
from sklearn_shapq.algorithms._leverage import KernelShapAlgorithm, LeverageAlgorithm, leverage_pairs
from sklearn_shapq.algorithms._leverage_control_variate import LeverageControlVariateAlgorithm
from sklearn_shapq.algorithms._moments import RunningMoments, satterthwaite_dof
from sklearn_shapq.algorithms._owen import OwenAlgorithm, OwenHalvedAlgorithm, owen_plan, owen_units
from sklearn_shapq.algorithms._permutation_walk import walk_gains, walk_units
from sklearn_shapq.algorithms._product_kernel_interactions import (
    EXACT_ONLY_INDICES,
    INTERACTION_INDICES,
    MAX_FSII_PLAYERS,
    check_interaction_index,
    check_product_kernel_players,
    enumerated_interactions,
    interaction_matrix,
    interactions_from_table,
    product_kernel_interactions,
)
from sklearn_shapq.algorithms._product_kernel_shapley import (
    PRODUCT_KERNEL_ALGORITHMS,
    product_kernel_shapley,
    resolve_product_kernel_algorithm,
)
from sklearn_shapq.algorithms._registry import SHAPLEY_ALGORITHMS, RowParts, ShapleyAlgorithm, ShapleyEstimate
from sklearn_shapq.algorithms._statistic_shapley import statistic_shapley
from sklearn_shapq.algorithms._stratified import StratifiedAlgorithm, stratified_plan, stratified_shapley
from sklearn_shapq.algorithms._topk import top_k_shapley
from sklearn_shapq.algorithms._topk_base import TOPK_ALGORITHMS, TopKAlgorithm
from sklearn_shapq.algorithms._topk_cmcs import cmcs_coalition_probability, cmcs_coalitions, extended_marginals
from sklearn_shapq.algorithms._topk_leverage import LeverageTopK
from sklearn_shapq.algorithms._topk_metrics import binary_precision, inclusion_exclusion_error, ratio_precision
from sklearn_shapq.algorithms._topk_state import TopKResult
from sklearn_shapq.algorithms._tree_shapley import leaf_tables, tree_interactions, tree_shapley_values
from sklearn_shapq.algorithms._units import UnitSamples, combine_units
from sklearn_shapq.algorithms._walk_algorithm import PermutationWalkAlgorithm

__all__ = [
    "BackgroundPartsMerge",
    "EXACT_ONLY_INDICES",
    "INTERACTION_INDICES",
    "MAX_FSII_PLAYERS",
    "PAIR_INDICES",
    "PRODUCT_KERNEL_ALGORITHMS",
    "SHAPLEY_ALGORITHMS",
    "TOPK_ALGORITHMS",
    "ExactAlgorithm",
    "KernelShapAlgorithm",
    "LeverageControlVariateAlgorithm",
    "LeverageAlgorithm",
    "LeverageTopK",
    "OwenAlgorithm",
    "OwenHalvedAlgorithm",
    "PairEstimate",
    "PermutationWalkAlgorithm",
    "RowParts",
    "RunningMoments",
    "ShapleyEstimate",
    "ShapleyAlgorithm",
    "StratifiedAlgorithm",
    "TopKAlgorithm",
    "TopKResult",
    "UnitSamples",
    "binary_precision",
    "check_interaction_index",
    "check_product_kernel_players",
    "cmcs_coalition_probability",
    "cmcs_coalitions",
    "combine_units",
    "enumerated_interactions",
    "exact_shapley",
    "leaf_tables",
    "leverage_pairs",
    "extended_marginals",
    "inclusion_exclusion_error",
    "interaction_matrix",
    "interactions_from_table",
    "owen_plan",
    "owen_units",
    "border_evals",
    "minimum_pair_evals",
    "pair_design",
    "product_kernel_interactions",
    "product_kernel_shapley",
    "ratio_precision",
    "regression_adjusted",
    "regression_players",
    "sampled_pair_bytes",
    "sampled_pair_interactions",
    "satterthwaite_dof",
    "resolve_product_kernel_algorithm",
    "statistic_shapley",
    "stratified_plan",
    "stratified_shapley",
    "top_k_shapley",
    "tree_interactions",
    "tree_shapley_values",
    "walk_gains",
    "walk_units",
]
