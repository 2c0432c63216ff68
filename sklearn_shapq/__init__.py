"""sklearn_shapq: scikit-learn compatible Shapley-value explainers with shap-ready output.

``PermutationShapExplainer`` explains any model from sampled permutations (or exactly for small d),
batched across rows, permutations and coalitions; ``ProductKernelShapExplainer`` computes exact
Shapley values of product-kernel models (SVMs, kernel ridge, Gaussian processes) in polynomial
time; ``HSICAttribution`` and ``MMDAttribution`` attribute kernel dependence and two-sample
statistics to features exactly (HSIC doubles as a feature selector); ``TopKShapley`` finds the k
most important features in few evaluations (CMCS), as a feature selector or per explained row.
All run on numba (CPU) or cupy (GPU).
"""

from sklearn_shapq.attribution import HSICAttribution, MMDAttribution
from sklearn_shapq.backends import DeviceUnavailableError
from sklearn_shapq.explainers import PermutationShapExplainer, ProductKernelModel, ProductKernelShapExplainer
from sklearn_shapq.selection import TopKShapley

__version__ = "0.1.0"

__all__ = [
    "DeviceUnavailableError",
    "HSICAttribution",
    "MMDAttribution",
    "PermutationShapExplainer",
    "ProductKernelModel",
    "ProductKernelShapExplainer",
    "TopKShapley",
    "__version__",
]
