"""Compute backends (numpy + numba, or cupy) from ``device=``; cupy is imported only when asked for."""

from sklearn_shapq.backends._array_ops import ArrayBackend, repeat_counts, scipy_special
from sklearn_shapq.backends._cpu import CpuBackend
from sklearn_shapq.backends._device import DeviceUnavailableError, resolve_backend
from sklearn_shapq.backends._feistel import FEISTEL_ROUNDS, GOLDEN_RATIO_64, UINT64_ONE, mix64, ordering_keys
from sklearn_shapq.backends._linked_linear import linked_linear_table
from sklearn_shapq.backends._linked_quadratic import linked_quadratic_table
from sklearn_shapq.backends._linked_trees import LINKS, apply_link, linked_tree_table
from sklearn_shapq.backends._neighbor_tables import neighbor_table, neighbor_weights
from sklearn_shapq.backends._network_tables import (
    ACTIVATIONS,
    HIDDEN_ACTIVATIONS,
    KERNEL_PROFILES,
    network_sums,
    network_table,
)
from sklearn_shapq.backends._product_kernel import (
    ANCHORS_PER_CHUNK,
    FACTOR_KINDS,
    PREFIX_SUFFIX_MAX_FEATURES,
    PRODUCT_KERNEL_BACKEND_ALGORITHMS,
    factor_tensor,
)
from sklearn_shapq.backends._product_kernel_interactions import (
    PAIR_INDICES,
    pair_interactions_array,
    pair_interactions_threaded,
)
from sklearn_shapq.backends._tree_shapley import TreeArrays, node_depths, tree_leaf_sums, tree_predict

__all__ = [
    "ANCHORS_PER_CHUNK",
    "FACTOR_KINDS",
    "FEISTEL_ROUNDS",
    "GOLDEN_RATIO_64",
    "ACTIVATIONS",
    "HIDDEN_ACTIVATIONS",
    "KERNEL_PROFILES",
    "PAIR_INDICES",
    "PREFIX_SUFFIX_MAX_FEATURES",
    "PRODUCT_KERNEL_BACKEND_ALGORITHMS",
    "UINT64_ONE",
    "ArrayBackend",
    "LINKS",
    "TreeArrays",
    "CpuBackend",
    "DeviceUnavailableError",
    "factor_tensor",
    "mix64",
    "neighbor_table",
    "neighbor_weights",
    "network_sums",
    "network_table",
    "node_depths",
    "ordering_keys",
    "pair_interactions_array",
    "pair_interactions_threaded",
    "repeat_counts",
    "resolve_backend",
    "scipy_special",
    "apply_link",
    "linked_linear_table",
    "linked_quadratic_table",
    "linked_tree_table",
    "tree_leaf_sums",
    "tree_predict",
]
