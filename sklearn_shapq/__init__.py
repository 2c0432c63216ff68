"""sklearn_shapq: scikit-learn compatible Shapley-value explainers with shap-ready output.

``PermutationShapExplainer`` (any model), ``ProductKernelShapExplainer`` (exact, kernel models),
``HSICAttribution`` and ``MMDAttribution`` (exact kernel statistics) and ``TopKShapley`` (the k
most important features).
"""

from sklearn_shapq._registry import register
from sklearn_shapq.attribution import HSICAttribution, MMDAttribution
from sklearn_shapq.backends import DeviceUnavailableError
from sklearn_shapq.explainers import PermutationShapExplainer, ProductKernelModel, ProductKernelShapExplainer
from sklearn_shapq.selection import TopKShapley

__version__ = "1.0.0"

__all__ = [
    "DeviceUnavailableError",
    "HSICAttribution",
    "MMDAttribution",
    "PermutationShapExplainer",
    "ProductKernelModel",
    "ProductKernelShapExplainer",
    "TopKShapley",
    "__version__",
    "register",
]
