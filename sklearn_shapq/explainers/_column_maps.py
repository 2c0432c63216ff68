"""Preprocessing whose every output column comes from one input column: encoders, scalers, binning, splines.

A Pipeline's steps before a tree, linear or k-NN model may widen the table (a ``ColumnTransformer`` that
one-hot encodes the categorical columns and scales the others) and the model's structure still splits on,
or weighs, its players: each output column belongs to the player of the input column it comes from. On
the hybrid row of a coalition (the explained row's columns on S, a background row's elsewhere) such steps
give the explained row's output columns on the columns of S and the background row's elsewhere, so the
exact paths run on the output columns with each column's player mapped through :func:`column_sources`;
:func:`check_column_sources` tests that property on background rows before a path is taken.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    SplineTransformer,
    StandardScaler,
)
from sklearn.utils import check_array

ONE_TO_ONE = (
    Binarizer,
    MaxAbsScaler,
    MinMaxScaler,
    OrdinalEncoder,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    StandardScaler,
)
"""Steps that map each column to one column from that column alone."""
CHECKED_PAIRS = 8
"""Pairs of background rows on which :func:`check_column_sources` compares the hybrid rows' outputs."""


def column_sources(step: Any, n_inputs: int) -> np.ndarray:
    """Return the input column each output column of a fitted ``step`` comes from: int array (n_outputs,).

    Parameters
    ----------
    step : fitted transformer, "passthrough" or None
        A one-to-one step (scalers, quantile and power transforms, ``Binarizer``, ``OrdinalEncoder``,
        ``SimpleImputer`` without indicators, ordinal ``KBinsDiscretizer``, an identity ``FunctionTransformer``),
        a ``OneHotEncoder``, a one-hot ``KBinsDiscretizer``, a ``SplineTransformer``, or a ``Pipeline`` or
        ``ColumnTransformer`` of such steps.
    n_inputs : int
        The step's input columns.

    Raises
    ------
    TypeError
        A step whose output columns may mix input columns (a PCA, a polynomial, a function).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.compose import ColumnTransformer
    >>> frame = pd.DataFrame({"colour": ["red", "blue", "green"], "size": [1.0, 2.0, 3.0]})
    >>> encoder = ColumnTransformer([("one_hot", OneHotEncoder(), ["colour"])], remainder="passthrough").fit(frame)
    >>> column_sources(encoder, 2).tolist()  # three colours, then the size
    [0, 0, 0, 1]
    """
    if type(step) is SimpleImputer and not step.add_indicator:
        return np.flatnonzero(~_dropped_by_imputer(step))
    if _is_one_to_one(step):
        return np.arange(n_inputs)
    if type(step) is OneHotEncoder:
        return np.repeat(np.arange(n_inputs), step._n_features_outs)
    if type(step) is KBinsDiscretizer and step.encode != "ordinal":  # a one-hot column per bin, column by column
        return np.repeat(np.arange(n_inputs), step.n_bins_)
    if type(step) is SplineTransformer:  # its splines' columns, column by column
        return np.repeat(np.arange(n_inputs), step.n_features_out_ // n_inputs)
    if type(step) is Pipeline:
        sources = np.arange(n_inputs)
        for _, inner in step.steps:
            sources = sources[column_sources(inner, sources.size)]
        return sources
    if type(step) is ColumnTransformer:
        return _column_transformer_sources(step)
    raise TypeError(
        f"The Pipeline's step {type(step).__name__} is not read as column-wise (each output column from one input "
        "column): the exact paths take scalers, quantile and power transforms, binarizers, binning, splines, "
        "SimpleImputer, OrdinalEncoder and OneHotEncoder, alone or in a ColumnTransformer."
    )


def _is_one_to_one(step: Any) -> bool:
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return True
    ordinal_bins = type(step) is KBinsDiscretizer and step.encode == "ordinal"
    # a ColumnTransformer's passed-through rest; a histogram gradient boosting model's check of its numeric columns
    identity = type(step) is FunctionTransformer and (step.func is None or _is_array_check(step.func))
    return type(step) in ONE_TO_ONE or ordinal_bins or identity


def _is_array_check(func: Any) -> bool:
    """Whether ``func`` is scikit-learn's ``check_array`` with keywords (it returns its input as an array)."""
    return isinstance(func, partial) and func.func is check_array and not func.args


def _dropped_by_imputer(imputer: SimpleImputer) -> np.ndarray:
    """Return which input columns a fitted SimpleImputer drops: those all missing in fit, unless it keeps them.

    Their statistics are missing (scikit-learn 1.9 drops them for the "constant" strategy too; earlier versions
    filled them with the constant, which is no missing statistic).
    """
    if imputer.keep_empty_features:
        return np.zeros(len(imputer.statistics_), dtype=bool)
    return np.asarray(pd.isna(imputer.statistics_), dtype=bool)


def _column_transformer_sources(transformer: ColumnTransformer) -> np.ndarray:
    pieces = transformer.output_indices_
    sources = np.full(max((piece.stop for piece in pieces.values()), default=0), -1, dtype=np.int64)
    for name, step, _ in transformer.transformers_:
        columns = np.asarray(transformer._transformer_to_input_indices[name], dtype=np.int64)
        if (isinstance(step, str) and step == "drop") or columns.size == 0:
            continue
        traced = column_sources(step, columns.size)
        if traced.size != pieces[name].stop - pieces[name].start:
            raise TypeError(f"The ColumnTransformer's {name!r} gives columns that could not be traced to its inputs.")
        sources[pieces[name]] = columns[traced]
    if (sources < 0).any():
        raise TypeError("The ColumnTransformer's output columns could not all be traced to an input column.")
    return sources


def check_column_sources(
    transform: Any, background: np.ndarray, inputs: np.ndarray, sources: np.ndarray, seed: int = 0
) -> None:
    """Check that ``transform`` gives hybrid rows of the background column by column through ``sources``.

    Two kinds of hybrid rows: for every input column whose background values differ, the first background
    row with that column from a row where it differs (all of the column's output columns must follow it, and
    no other); and :data:`CHECKED_PAIRS` pairs of background rows with a random coalition of columns each.
    The output of a hybrid row must be the first row's output on the columns whose source is in the
    coalition and the second's elsewhere (``inputs`` holds the background's outputs). A column constant
    on the background cannot be checked.

    Raises
    ------
    TypeError
        An output column that depends on more than its source column (the preprocessing is not read).
    """
    n, d = background.shape
    if n < 2:
        return
    rng = np.random.default_rng(seed)
    first, second = rng.integers(n, size=CHECKED_PAIRS), rng.integers(n, size=CHECKED_PAIRS)
    coalitions = rng.random((CHECKED_PAIRS, d)) < 0.5
    same = (background == background[0]) | (pd.isna(background) & pd.isna(background[0]))
    varied = np.flatnonzero(~same.all(axis=0))  # columns with another value than row 0's somewhere
    first = np.concatenate([first, np.zeros(varied.size, dtype=np.int64)])
    second = np.concatenate([second, np.argmin(same[:, varied], axis=0)])
    coalitions = np.concatenate([coalitions, np.arange(d)[None, :] != varied[:, None]])
    hybrid = np.where(coalitions, background[first], background[second])
    expected = np.where(coalitions[:, sources], inputs[first], inputs[second])
    if not np.allclose(transform(hybrid), expected, rtol=1e-12, atol=1e-12, equal_nan=True):
        raise TypeError("The Pipeline's steps before the model do not transform the columns one by one.")


class DecodedSteps:
    """A raw table's preprocessing on its codes: the codes decoded to the table, then the Pipeline's steps.

    Parameters
    ----------
    codec : TableCodec
        The explainer's codes of the table's category and string columns.
    steps : fitted Pipeline
        The model's steps before its last.
    """

    def __init__(self, codec: Any, steps: Any) -> None:
        self.codec, self.steps = codec, steps

    def transform(self, rows: Any) -> Any:
        """Return the steps' output on rows given by their codes, or as the decoded table (explained rows)."""
        return self.steps.transform(self.codec.decode(rows) if isinstance(rows, np.ndarray) else rows)
