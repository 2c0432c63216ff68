"""How an explained output follows from a model's additive structure, and the column-wise steps before it.

Shared by the exact paths that read a model's structure (its trees, its linear margin): the link from
the structure's sum to the explained output (:class:`OutputLink`) and the Pipeline steps that keep
each column one player's (:func:`column_wise_preprocessing`, :func:`preprocessed`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class OutputLink:
    """How an explained output follows from a model's additive part m (trees' sum, linear margin) plus a constant c.

    Attributes
    ----------
    raw_output : str or None
        The model's output that is m + c ("predict", "margin" or "probability"); None: log of the
        explained output, before ``after`` (a log link).
    link : str
        The map from m + c to the explained output (:data:`~sklearn_shapq.backends.LINKS`).
    log_odds : bool
        Then the log-odds of the clipped result (a classifier's ``output="log_odds"``).
    after : tuple of float
        (a, b): the explained output is a · (the above) + b; (−1, −offset) for an isolation forest's score,
        −exp(m) − offset.
    """

    raw_output: str | None
    link: str
    log_odds: bool = False
    after: tuple[float, float] = (1.0, 0.0)

    def apply_after(self, values: np.ndarray) -> np.ndarray:
        """Return a · values + b (``after``), or ``values`` itself where ``after`` is (1, 0)."""
        scale, shift = self.after
        return values if (scale, shift) == (1.0, 0.0) else scale * values + shift

    def undo_after(self, outputs: np.ndarray) -> np.ndarray:
        """Return (outputs − b) / a: the link's own output, before ``after``."""
        scale, shift = self.after
        return outputs if (scale, shift) == (1.0, 0.0) else (outputs - shift) / scale


def margin_links(n_outputs: int) -> dict[str, OutputLink]:
    """Return how a classifier's margin gives its explained outputs: itself, its probability, its log-odds.

    One output (a binary classifier's positive class) through the sigmoid, several through the softmax.

    Examples
    --------
    >>> margin_links(1)["log_odds"]
    OutputLink(raw_output='margin', link='sigmoid', log_odds=True, after=(1.0, 0.0))
    """
    class_link = "sigmoid" if n_outputs == 1 else "softmax"
    return {
        "margin": OutputLink("margin", "identity"),
        "probability": OutputLink("margin", class_link),
        "log_odds": OutputLink("margin", class_link, log_odds=True),
    }


def column_wise_preprocessing(model: Any) -> tuple[Any, Any]:
    """Split a Pipeline into its column-wise steps and its last step; another model: (None, model).

    A column-wise step maps each column to one column from that column alone (scalers, quantile and
    power transforms, ordinal binning, imputation without indicators), so a tree or a linear model on
    its outputs splits on, or weighs, the same players as on its inputs.

    Raises
    ------
    TypeError
        A step that is not column-wise (it may mix or add columns).
    """
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import (
        KBinsDiscretizer,
        MaxAbsScaler,
        MinMaxScaler,
        PowerTransformer,
        QuantileTransformer,
        RobustScaler,
        StandardScaler,
    )

    if not isinstance(model, Pipeline):
        return None, model
    column_wise = (MaxAbsScaler, MinMaxScaler, PowerTransformer, QuantileTransformer, RobustScaler, StandardScaler)
    for name, step in model.steps[:-1]:
        imputer = type(step) is SimpleImputer and not step.add_indicator
        ordinal = type(step) is KBinsDiscretizer and step.encode == "ordinal"
        if not (type(step) in column_wise or imputer or ordinal or step in (None, "passthrough")):
            raise TypeError(
                f"The Pipeline's step {name!r} ({type(step).__name__}) is not read as column-wise: the tree and "
                "linear paths take scalers, quantile and power transforms, ordinal binning and SimpleImputer before "
                "the model."
            )
    return model[:-1], model.steps[-1][1]


def preprocessed(preprocessing: Any, rows: np.ndarray) -> np.ndarray:
    """Return ``rows`` through ``preprocessing`` (named columns where it was fitted on a DataFrame), as float64."""
    if preprocessing is None:
        return rows
    names = getattr(preprocessing, "feature_names_in_", None)
    if names is not None:
        import pandas as pd

        rows = pd.DataFrame(rows, columns=list(names))
    transformed = preprocessing.transform(rows)
    if hasattr(transformed, "toarray"):  # a sparse one-hot encoding
        transformed = transformed.toarray()
    return np.asarray(transformed, dtype=np.float64)
