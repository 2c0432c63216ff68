"""Public explainers."""

from sklearn_shapq.explainers._permutation import PermutationShapExplainer

__all__ = ["PermutationShapExplainer"]
