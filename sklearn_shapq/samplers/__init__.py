"""Samplers: permutations (as orderings) and keyed randomness for the estimators; they know nothing of models.

``ORDERING_SOURCES`` registers every permutation sampler by name; ``sample_permutations`` draws a
weighted set of orderings with any of them; ``mallows_kernel`` and ``discrepancy`` measure how
well a set covers the permutations (the paper's Eq. 8); ``keyed_orderings`` is the keyed bijective
generator, identical on cpu and cuda; ``row_keys`` and ``KeyedStream`` key every draw by a row's
content, so that a row's estimate never depends on its position in a batch.
"""

from sklearn_shapq.samplers._api import sample_permutations
from sklearn_shapq.samplers._coalitions import sized_coalitions
from sklearn_shapq.samplers._keyed import (
    KeyedStream,
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
    register_source,
)

__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_LAMBDA",
    "ORDERING_SOURCES",
    "KeyedStream",
    "OrderingSource",
    "discrepancy",
    "keyed_distinct_items",
    "keyed_orderings",
    "keyed_sized_coalitions",
    "keyed_uniforms",
    "make_source",
    "mallows_kernel",
    "mallows_mean",
    "register_source",
    "row_keys",
    "split_keys",
    "sample_permutations",
    "sized_coalitions",
    "substream_keys",
]
