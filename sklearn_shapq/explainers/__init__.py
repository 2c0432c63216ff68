"""Public explainers."""

from sklearn_shapq.explainers._dual_model import ProductKernelModel
from sklearn_shapq.explainers._exact_paths import EXACT_PATHS
from sklearn_shapq.explainers._permutation import PermutationShapExplainer
from sklearn_shapq.explainers._product_kernel_explainer import ProductKernelShapExplainer

__all__ = ["EXACT_PATHS", "PermutationShapExplainer", "ProductKernelModel", "ProductKernelShapExplainer"]
