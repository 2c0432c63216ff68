"""``ProductKernelModel``: a product-kernel expansion given by its dual form, usable as a model."""

from __future__ import annotations

from typing import Any

import numpy as np

from sklearn_shapq._validation import check_data
from sklearn_shapq.games import KernelExpansion


class ProductKernelModel:
    """f(x) = Σ_c Σ_i w_ci Π_j k_cj(x_j, X_cij) + b, from dual coefficients (e.g. a custom model).

    Built by :meth:`ProductKernelShapExplainer.from_dual` from a ``KernelExpansion``; other
    explainers can use its :meth:`predict`.
    """

    def __init__(self, expansion: KernelExpansion) -> None:
        self.expansion = expansion
        self.n_features_in_ = expansion.n_features

    def __sklearn_is_fitted__(self) -> bool:
        """Return True: a dual form is fitted by construction."""
        return True

    def __repr__(self) -> str:
        n = sum(c.anchors.shape[0] for c in self.expansion.components)
        return (
            f"ProductKernelModel(n_anchors={n}, n_features={self.n_features_in_}, n_outputs={self.expansion.n_outputs})"
        )

    def predict(self, X: Any) -> np.ndarray:
        """Model output of rows ``X``: (n,) for one output, else (n, n_outputs)."""
        array, _ = check_data(X, n_features=self.n_features_in_)
        out = self.expansion.predict(array)
        return out[:, 0] if out.shape[1] == 1 else out
