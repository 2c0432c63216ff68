"""What every explainer of rows shares: the rows as the model gets them, their keys, the Explanation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sklearn_shapq._explanation import explanation_data, make_explanation
from sklearn_shapq._feature_groups import FeatureGroups
from sklearn_shapq._random import make_generator
from sklearn_shapq._validation import check_fitted_features, check_table, missing_value_policy, require_dataframe
from sklearn_shapq.games import TableCodec, keyed_content
from sklearn_shapq.samplers import draw_seed, row_keys


def background_subsample(n_rows: int, background_size: int | None, random_state: Any) -> np.ndarray | None:
    """Return the sorted rows kept as background (stream 0 of ``random_state``), or None to keep all.

    Examples
    --------
    >>> background_subsample(5, 3, 0).tolist(), background_subsample(5, 10, 0), background_subsample(5, None, 0)
    ([2, 3, 4], None, None)
    """
    if background_size is None or n_rows <= background_size:
        return None
    rng = make_generator(random_state, stream=0)
    return np.sort(rng.choice(n_rows, background_size, replace=False))


@dataclass
class ExplainedRows:
    """Rows to explain, checked against ``fit``.

    Attributes
    ----------
    array : ndarray of shape (n_rows, n_features)
        Floats, or a table's codes.
    codec : TableCodec or None
        The table's codes, in the explained rows' dtypes (None for arrays).
    background : ndarray of shape (n_background, n_features)
        The fitted background, coded like ``array``.
    """

    array: np.ndarray
    codec: TableCodec | None
    background: np.ndarray


class RowExplainerMixin:
    """``explain(X)`` of a fitted model on rows of X, against a fitted background.

    The class sets in ``fit``: ``background_``, ``_codec``, ``n_features_in_``,
    ``feature_groups_`` (and ``feature_names_in_`` for a DataFrame); it has the parameters
    ``allow_nan``, ``feature_groups`` and ``random_state``, and says which model ``explain``
    calls (:meth:`_explained_model`).
    """

    # for type checkers: what the class sets in fit, its parameters, and its explain(X)
    background_: np.ndarray
    _codec: TableCodec | None
    n_features_in_: int
    feature_groups_: FeatureGroups
    allow_nan: Any
    feature_groups: dict | None
    random_state: Any
    explain: Callable[[Any], Any]
    _explained_model: Callable[[], Any]  # the fitted model explain explains, defined by each class

    def _expected_names(self) -> list[str] | None:
        """Column names a DataFrame must have: those of ``fit``, else the model's own."""
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            names = getattr(self._explained_model(), "feature_names_in_", None)
        return None if names is None else [str(n) for n in names]

    def _explained_rows(self, X: Any) -> ExplainedRows:
        """Check ``X`` against ``fit`` and return it with the background in its dtypes."""
        if self._codec is not None:
            require_dataframe(X, self._codec)
        check_fitted_features(self, X)  # scikit-learn's feature count and names checks
        if self._codec is not None:
            _refuse_reordered_columns(X, self._codec.columns)
        codec, background = (
            (None, self.background_) if self._codec is None else self._codec.aligned(X, self.background_)
        )
        array, _, codec = check_table(
            X,
            n_features=self.n_features_in_,
            feature_names=self._expected_names(),
            codec=codec,
            tables=codec is not None,
            **missing_value_policy(self.allow_nan, self._explained_model()),
        )
        return ExplainedRows(array, codec, background)

    def _row_keys(self, rows: ExplainedRows, stream: int) -> tuple[int, np.ndarray]:
        """Return the call's seed (stream ``stream`` of ``random_state``) and each row's key (seed and content)."""
        seed = draw_seed(make_generator(self.random_state, stream=stream))
        return seed, row_keys(seed, keyed_content(rows.array, rows.codec))

    def _explanation(
        self, array: np.ndarray, codec: TableCodec | None, values: np.ndarray, base_values: np.ndarray, **fields: Any
    ) -> Any:
        """Return the ``shap.Explanation`` of rows ``array`` (coded by ``codec``), their players and ``fields``."""
        groups = self.feature_groups_
        data, display_data = explanation_data(array, codec, None if self.feature_groups is None else groups)
        return make_explanation(values, base_values, data, groups.names, display_data=display_data, **fields)

    def __call__(self, X: Any) -> Any:
        """Explain rows of ``X`` (shap's calling convention): the same as ``explain(X)``."""
        return self.explain(X)

    def shap_values(self, X: Any) -> np.ndarray:
        """Shapley values of ``X`` as an array of shape (n_rows, n_players) or (n_rows, n_players, n_outputs)."""
        return self.explain(X).values


def _refuse_reordered_columns(X: Any, fitted: Any) -> None:
    """Refuse a table whose columns are fit's in another order (labels scikit-learn does not check: not strings).

    Its rows are coded by position and reach the model under fit's labels, which would misname every cell.
    """
    columns = list(getattr(X, "columns", []))
    fitted = list(fitted)
    if columns != fitted and len(columns) == len(fitted) and set(map(repr, columns)) == set(map(repr, fitted)):
        raise ValueError(
            f"X has fit's columns in another order ({columns[:6]} against {fitted[:6]}): pass them as in fit, "
            "X[fitted_columns]."
        )
