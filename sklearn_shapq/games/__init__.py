"""Games: value functions v(S) evaluated on batches of coalitions; the only layer that calls models."""

from sklearn_shapq.games._interventional import InterventionalGame
from sklearn_shapq.games._kernel_statistics import HSICWeights, MMDWeights, target_kernel_rows
from sklearn_shapq.games._models import OUTPUTS, ModelFunction, make_model_function
from sklearn_shapq.games._product_kernel import KernelComponent, KernelExpansion, ProductKernelGame

__all__ = [
    "OUTPUTS",
    "HSICWeights",
    "InterventionalGame",
    "KernelComponent",
    "KernelExpansion",
    "MMDWeights",
    "ModelFunction",
    "ProductKernelGame",
    "make_model_function",
    "target_kernel_rows",
]
