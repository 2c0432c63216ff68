"""sklearn_shapq: scikit-learn compatible Shapley-value explainers with shap-ready output.

``PermutationShapExplainer`` explains any model from sampled permutations (or exactly for small d),
batched across rows, permutations and coalitions; ``ProductKernelShapExplainer`` computes exact
Shapley values of product-kernel models (SVMs, kernel ridge, Gaussian processes) in polynomial
time. Both run on numba (CPU) or cupy (GPU).
"""

from sklearn_shapq.backends import DeviceUnavailableError
from sklearn_shapq.explainers import PermutationShapExplainer, ProductKernelModel, ProductKernelShapExplainer

__version__ = "0.1.0"

__all__ = [
    "DeviceUnavailableError",
    "PermutationShapExplainer",
    "ProductKernelModel",
    "ProductKernelShapExplainer",
    "__version__",
]
