"""Public explainers."""

from sklearn_shapq.explainers._dual_model import ProductKernelModel
from sklearn_shapq.explainers._permutation import PermutationShapExplainer
from sklearn_shapq.explainers._product_kernel_explainer import ProductKernelShapExplainer

__all__ = ["PermutationShapExplainer", "ProductKernelModel", "ProductKernelShapExplainer"]
