"""Samplers: permutations (as orderings), their discrepancy, and randomness keyed by a row's content."""

from sklearn_shapq.samplers._api import sample_permutations
from sklearn_shapq.samplers._blas import single_threaded_blas
from sklearn_shapq.samplers._coalitions import sized_coalitions
from sklearn_shapq.samplers._keyed import (
    KeyedStream,
    draw_seed,
    keyed_orderings,
    keyed_uniforms,
    row_keys,
    split_keys,
    substream_keys,
)
from sklearn_shapq.samplers._keyed_subsets import keyed_distinct_items, keyed_sized_coalitions
from sklearn_shapq.samplers._mallows import DEFAULT_LAMBDA, discrepancy, mallows_kernel, mallows_mean
from sklearn_shapq.samplers._sources import (
    DEFAULT_CANDIDATES,
    ORDERING_SOURCES,
    OrderingSource,
    make_source,
)

__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_LAMBDA",
    "ORDERING_SOURCES",
    "KeyedStream",
    "OrderingSource",
    "discrepancy",
    "draw_seed",
    "keyed_distinct_items",
    "keyed_orderings",
    "keyed_sized_coalitions",
    "keyed_uniforms",
    "make_source",
    "mallows_kernel",
    "mallows_mean",
    "row_keys",
    "split_keys",
    "sample_permutations",
    "single_threaded_blas",
    "sized_coalitions",
    "substream_keys",
]
