"""sklearn_shapq: scikit-learn compatible Shapley-value explainers with shap-ready output.

``PermutationShapExplainer`` (any model), ``ProductKernelShapExplainer`` (exact, kernel models),
``HSICAttribution`` and ``MMDAttribution`` (exact kernel statistics) and ``TopKShapley`` (the k
most important features).

The public names are imported on first use (PEP 562): ``import sklearn_shapq`` alone, or
``sklearn-shapq --version``, does not load scikit-learn and numba.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "1.0.0"

_PUBLIC = {
    "DeviceUnavailableError": "sklearn_shapq.backends",
    "HSICAttribution": "sklearn_shapq.attribution",
    "MMDAttribution": "sklearn_shapq.attribution",
    "PermutationShapExplainer": "sklearn_shapq.explainers",
    "ProductKernelModel": "sklearn_shapq.explainers",
    "ProductKernelShapExplainer": "sklearn_shapq.explainers",
    "TopKShapley": "sklearn_shapq.selection",
    "register": "sklearn_shapq._registry",
}
"""Each public name and the module that defines it."""

_SUBPACKAGES = frozenset(
    {"algorithms", "attribution", "backends", "dask", "datasets", "explainers", "games", "samplers", "selection"}
)

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

if TYPE_CHECKING:
    from sklearn_shapq._registry import register
    from sklearn_shapq.attribution import HSICAttribution, MMDAttribution
    from sklearn_shapq.backends import DeviceUnavailableError
    from sklearn_shapq.explainers import PermutationShapExplainer, ProductKernelModel, ProductKernelShapExplainer
    from sklearn_shapq.selection import TopKShapley


def __getattr__(name: str) -> Any:
    """Import a public name, or a subpackage, on first access."""
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC, *_SUBPACKAGES})
