"""What the model explainers share: cloning that keeps the model, names, shap-style calls."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone


class ModelExplainerMixin:
    """Shared methods of explainers of a fitted ``model`` whose ``explain(X)`` gives an Explanation."""

    def __sklearn_clone__(self) -> Any:
        """Clone the parameters but keep the same (fitted) model: it is what is explained."""
        params = {key: clone(value, safe=False) for key, value in self.get_params(deep=False).items()}
        params["model"] = self.model
        return type(self)(**params)

    def _expected_names(self) -> list[str] | None:
        """Column names a DataFrame must have: those of ``fit``, else the model's own."""
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            names = getattr(self.model, "feature_names_in_", None)
        return None if names is None else [str(n) for n in names]

    def __call__(self, X: Any) -> Any:
        """Explain rows of ``X`` (shap's calling convention): the same as ``explain(X)``."""
        return self.explain(X)

    def shap_values(self, X: Any) -> np.ndarray:
        """Shapley values of ``X`` as an array of shape (n, d) or (n, d, k)."""
        return self.explain(X).values
