"""Samplers: permutations (as orderings) for the permutation estimators; they know nothing of models.

``sample_permutations`` draws a weighted set of orderings with any method; ``mallows_kernel`` and
``discrepancy`` measure how well a set covers the permutations (the paper's Eq. 8);
``keyed_orderings`` is the keyed bijective generator, identical on cpu and cuda.
"""

from sklearn_shapq.samplers._api import DEFAULT_CANDIDATES, SAMPLERS, sample_permutations
from sklearn_shapq.samplers._keyed import keyed_orderings
from sklearn_shapq.samplers._mallows import DEFAULT_LAMBDA, discrepancy, mallows_kernel, mallows_mean
from sklearn_shapq.samplers._sources import OrderingSource, make_source

__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_LAMBDA",
    "SAMPLERS",
    "OrderingSource",
    "discrepancy",
    "keyed_orderings",
    "make_source",
    "mallows_kernel",
    "mallows_mean",
    "sample_permutations",
]
