"""What the model explainers share: cloning that keeps the model, names, shap-style calls, Pipeline steps."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import TransformerMixin, clone
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from sklearn_shapq._row_explainer import RowExplainerMixin
from sklearn_shapq.dask import is_dask_collection


class ModelExplainerMixin(RowExplainerMixin, TransformerMixin):
    """Shared methods of explainers of a fitted ``model`` whose ``explain(X)`` gives an Explanation.

    As a Pipeline step, ``fit(X)`` keeps X as background and ``transform(X)`` returns the Shapley
    values of X's rows, output by output, named by ``get_feature_names_out``.
    """

    def __sklearn_clone__(self) -> Any:
        """Clone the parameters but keep the same (fitted) model: it is what is explained."""
        params = {key: clone(value, safe=False) for key, value in self.get_params(deep=False).items()}
        params["model"] = self.model
        copy = type(self)(**params)
        if hasattr(self, "_sklearn_output_config"):  # set_output survives clone, as in scikit-learn
            copy._sklearn_output_config = dict(self._sklearn_output_config)
        return copy

    def shap_interaction_values(self, X: Any) -> np.ndarray:
        """SHAP interaction values of ``X``, as ``shap.TreeExplainer.shap_interaction_values`` gives them.

        The same as ``explain_interactions(X, index="shap").values``: (n, p, p) or (n, p, p,
        n_outputs), each row of a matrix summing to the feature's Shapley value; a dask Array for a
        dask collection ``X``.
        """
        interactions = self.explain_interactions(X, index="shap")
        return interactions if is_dask_collection(interactions) else interactions.values

    def _explained_model(self) -> Any:
        """Return the fitted model ``explain`` explains: ``model``."""
        return self.model

    def transform(self, X: Any) -> np.ndarray:
        """Return the Shapley values of the rows of ``X`` as features: (n, n_players · n_outputs), output by output."""
        if is_dask_collection(X):
            raise TypeError("transform takes in-memory data; explain(X) of a dask collection gives the values lazily.")
        values = np.asarray(self.explain(X).values)
        if values.ndim == 2:
            return values
        return values.transpose(0, 2, 1).reshape(values.shape[0], -1)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the columns of :meth:`transform`: the players, prefixed by the output when there are several."""
        check_is_fitted(self, "n_outputs_")
        _check_feature_names_in(self, input_features)  # given input_features must be fit's, as in scikit-learn
        groups = getattr(self, "feature_groups_", None)
        players = list(self.feature_names_ if groups is None else groups.names)
        if self.n_outputs_ == 1:
            return np.asarray(players, dtype=object)
        outputs = self.output_names_ or [f"output{j}" for j in range(self.n_outputs_)]
        return np.asarray([f"{output}__{player}" for output in outputs for player in players], dtype=object)
