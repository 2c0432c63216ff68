"""Samplers: permutations (as orderings) for the permutation estimators; they know nothing of models."""

from sklearn_shapq.samplers._api import SAMPLERS, sample_permutations
from sklearn_shapq.samplers._random_orderings import antithetic_orderings, random_orderings

__all__ = ["SAMPLERS", "antithetic_orderings", "random_orderings", "sample_permutations"]
