"""What the model explainers share: cloning that keeps the model, names, shap-style calls, Pipeline steps."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted

from sklearn_shapq.dask import is_dask_collection


class ModelExplainerMixin(TransformerMixin):
    """Shared methods of explainers of a fitted ``model`` whose ``explain(X)`` gives an Explanation.

    As a transformer (a Pipeline step), ``fit(X)`` keeps X as background and ``transform(X)``
    returns the Shapley values of X's rows: (n, d) for one output; for k outputs (n, k·d), the d
    values of the first output, then those of the second, … ``get_feature_names_out`` names the
    columns (the players, prefixed by "output__" for k outputs) and ``set_output`` works as in
    scikit-learn. So ``make_pipeline(PermutationShapExplainer(model), KMeans())`` clusters rows
    by what drives their predictions.
    """

    def __sklearn_clone__(self) -> Any:
        """Clone the parameters but keep the same (fitted) model: it is what is explained."""
        params = {key: clone(value, safe=False) for key, value in self.get_params(deep=False).items()}
        params["model"] = self.model
        copy = type(self)(**params)
        if hasattr(self, "_sklearn_output_config"):  # set_output survives clone, as in scikit-learn
            copy._sklearn_output_config = dict(self._sklearn_output_config)
        return copy

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

    def transform(self, X: Any) -> np.ndarray:
        """Return the Shapley values of the rows of ``X`` as features: (n, d), or (n, k·d) for k outputs.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)

        Returns
        -------
        ndarray of shape (n, n_players) or (n, k · n_players)
            Columns as :meth:`get_feature_names_out` names them.
        """
        if is_dask_collection(X):
            raise TypeError("transform takes in-memory data; explain(X) of a dask collection gives the values lazily.")
        values = np.asarray(self.explain(X).values)
        if values.ndim == 2:
            return values
        return values.transpose(0, 2, 1).reshape(values.shape[0], -1)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the columns of :meth:`transform`: the players, prefixed by the output for k outputs.

        Parameters
        ----------
        input_features : ignored
            The names come from ``fit`` (feature groups included).

        Returns
        -------
        ndarray of str
        """
        check_is_fitted(self, "n_outputs_")
        groups = getattr(self, "feature_groups_", None)
        players = list(self.feature_names_ if groups is None else groups.names)
        if self.n_outputs_ == 1:
            return np.asarray(players, dtype=object)
        outputs = self.output_names_ or [f"output{j}" for j in range(self.n_outputs_)]
        return np.asarray([f"{output}__{player}" for output in outputs for player in players], dtype=object)
