"""Explaining dask collections lazily, one eager ``explain`` per block, with an eager run's values.

See the user guide's "Scaling out on Dask" for layouts and guarantees.
"""

from __future__ import annotations

import copy
import sys
from numbers import Integral
from typing import Any

import numpy as np

from sklearn_shapq._validation import check_table

SCATTER_BYTES = 10 * 2**20
"""Fitted explainers larger than this are scattered to the workers once, instead of sent in the graph."""

_PARTS = ("values", "error_std", "base_values")


def is_dask_collection(X: Any) -> bool:
    """Whether ``X`` is a dask Array or DataFrame (dask is only imported when the caller already did)."""
    if "dask" not in sys.modules:
        return False
    import dask

    return dask.is_dask_collection(X)


def value_layout(explainer: Any) -> tuple[list[str], int, bool]:
    """Return the players' names, ``n_outputs``, and whether values carry an output axis (not for TopKShapley)."""
    players = [str(name) for name in explainer.feature_groups_.names]
    outputs = getattr(explainer, "n_outputs_", None)
    if outputs is None:
        return players, 1, False
    return players, outputs, outputs > 1


def lazy_explain(explainer: Any, X: Any) -> Any:
    """Return the lazy Shapley values of a dask Array (dask Array out) or DataFrame (dask DataFrame out)."""
    return lazy_estimates(explainer, X)["values"]


def lazy_estimates(explainer: Any, X: Any) -> dict[str, Any]:
    """Return lazy ``values``, ``error_std`` and ``base_values`` of a dask collection, from one explain per block.

    Parameters
    ----------
    explainer : fitted PermutationShapExplainer, ProductKernelShapExplainer or TopKShapley
    X : dask Array of shape (n, d) or dask DataFrame with d columns

    Returns
    -------
    dict
        For a dask Array: ``values`` and ``error_std`` of shape (n, n_players) or
        (n, n_players, n_outputs), ``base_values`` (n,) or (n, n_outputs). For a dask DataFrame:
        DataFrames with X's index and columns named by ``get_feature_names_out`` (suffix
        "__error_std"; "base_value"). Compute them together to explain each block once.

    Raises
    ------
    TypeError
        ``X`` is not a dask Array or DataFrame.
    ValueError
        ``X`` does not have the fitted columns.

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_shapq import PermutationShapExplainer
    >>> X = np.random.default_rng(0).normal(size=(40, 3))
    >>> explainer = PermutationShapExplainer(LinearRegression().fit(X, X[:, 0]), progress=False).fit(X)
    >>> estimates = lazy_estimates(explainer, da.from_array(X, chunks=10))
    >>> estimates["values"].shape, estimates["base_values"].shape
    ((40, 3), (40,))
    >>> bool(np.array_equal(estimates["values"].compute(), explainer.explain(X).values))
    True
    """
    players, outputs, output_axis = value_layout(explainer)
    _check_collection(explainer, X)
    worker_copy = _shipped(explainer)
    width = len(players) * outputs
    if _is_dask_dataframe(X):
        import pandas as pd

        names = _value_columns(explainer, players, output_axis)
        base_names = (
            [f"base_value__{name}" for name in _output_names(explainer, outputs)] if output_axis else ["base_value"]
        )
        std_names = [f"{name}__error_std" for name in names]
        columns = names + std_names + base_names
        meta = pd.DataFrame({name: pd.Series(dtype=np.float64) for name in columns})
        restore = _dask_string_conversions(explainer, X)
        wide = X.map_partitions(_partition_estimates, worker_copy, columns, restore, meta=meta)
        return {"values": wide[names], "error_std": wide[std_names], "base_values": wide[base_names]}
    stacked = X.rechunk({1: -1}).map_blocks(
        _block_estimates,
        worker_copy,
        dtype=np.float64,
        meta=np.empty((0, 0)),
        chunks=(X.chunks[0], (2 * width + outputs,)),
    )
    cube = (len(players), outputs) if output_axis else (len(players),)
    return {
        "values": _columns(stacked, 0, width, cube),
        "error_std": _columns(stacked, width, 2 * width, cube),
        "base_values": _columns(stacked, 2 * width, 2 * width + outputs, (outputs,) if output_axis else ()),
    }


def lazy_interactions(explainer: Any, X: Any, **options: Any) -> Any:
    """Return the lazy interaction matrices of a dask collection, one ``explain_interactions`` per block.

    Rows are keyed by their content, so every block gives what an eager call on the same rows gives.

    Parameters
    ----------
    explainer : fitted PermutationShapExplainer or ProductKernelShapExplainer
    X : dask Array of shape (n, d) or dask DataFrame with d columns
    **options
        Passed to ``explain_interactions`` (``index``, and ``max_evals`` for the permutation explainer).

    Returns
    -------
    dask Array
        The ``values`` of ``explain_interactions``: (n, n_players, n_players) or (n, n_players,
        n_players, n_outputs), chunked by X's row blocks (of unknown sizes for a DataFrame).

    Raises
    ------
    TypeError
        ``X`` is not a dask Array or DataFrame.
    ValueError
        ``X`` does not have the fitted columns.

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_shapq import PermutationShapExplainer
    >>> X = np.random.default_rng(0).normal(size=(40, 3))
    >>> explainer = PermutationShapExplainer(LinearRegression().fit(X, X[:, 0]), progress=False).fit(X)
    >>> lazy = lazy_interactions(explainer, da.from_array(X, chunks=10), index="SII")
    >>> lazy.shape
    (40, 3, 3)
    >>> bool(np.array_equal(lazy.compute(), explainer.explain_interactions(X, index="SII").values))
    True
    """
    import dask
    import dask.array as da

    players, outputs, output_axis = value_layout(explainer)
    _check_collection(explainer, X)
    worker_copy = _shipped(explainer)
    matrix = (len(players), len(players)) + ((outputs,) if output_axis else ())
    if _is_dask_dataframe(X):
        restore = _dask_string_conversions(explainer, X)
        blocks = [
            da.from_delayed(
                dask.delayed(_partition_interactions)(partition, worker_copy, restore, options),
                shape=(np.nan, *matrix),
                dtype=np.float64,
                meta=np.empty((0,) * (1 + len(matrix))),
            )
            for partition in X.to_delayed()
        ]
        return da.concatenate(blocks, axis=0)
    return X.rechunk({1: -1}).map_blocks(
        _block_interactions,
        worker_copy,
        options,
        dtype=np.float64,
        meta=np.empty((0,) * (1 + len(matrix))),
        new_axis=list(range(2, 1 + len(matrix))),
        chunks=(X.chunks[0], *((size,) for size in matrix)),
    )


def _block_interactions(block: np.ndarray, explainer: Any, options: dict[str, Any]) -> np.ndarray:
    if block.shape[0] == 0:
        players, outputs, output_axis = value_layout(explainer)
        return np.empty((0, len(players), len(players)) + ((outputs,) if output_axis else ()))
    return np.asarray(explainer.explain_interactions(block, **options).values, dtype=np.float64)


def _partition_interactions(
    partition: Any, explainer: Any, restore: dict[int, tuple], options: dict[str, Any]
) -> np.ndarray:
    return _block_interactions(_restored(partition, restore), explainer, options)


def to_explanation(explainer: Any, X: Any, estimates: dict[str, Any]) -> Any:
    """Return the ``shap.Explanation`` of computed rows ``X`` and their computed ``estimates``.

    Parameters
    ----------
    explainer : the fitted explainer that made the estimates
    X : ndarray or DataFrame of shape (m, d)
        The explained rows (e.g. ``X_dask[:100].compute()``).
    estimates : dict
        Computed entries of :func:`lazy_estimates` for the same rows; ``values`` required,
        ``base_values`` default to ``expected_value_`` (pass them for TopKShapley).

    Returns
    -------
    shap.Explanation
    """
    players, outputs, output_axis = value_layout(explainer)
    codec = getattr(explainer, "_codec", None)
    array, _, codec = check_table(
        X,
        n_features=explainer.n_features_in_,
        codec=codec,
        tables=codec is not None,
        allow_nan=True,
    )
    rows = array.shape[0]

    def as_cube(name: str) -> np.ndarray | None:
        if name not in estimates:
            return None
        array = np.asarray(estimates[name], dtype=np.float64)
        if array.ndim == 3:  # the Array layout (m, p, k)
            return array
        if output_axis:  # the DataFrame layout (m, k p), output by output
            return array.reshape(rows, outputs, len(players)).transpose(0, 2, 1)
        return array.reshape(rows, len(players), 1)

    if "base_values" in estimates:
        base = np.asarray(estimates["base_values"], dtype=np.float64).reshape(rows, outputs)
    elif hasattr(explainer, "expected_value_"):
        base = np.broadcast_to(np.atleast_1d(explainer.expected_value_), (rows, outputs)).copy()
    else:
        raise ValueError(
            f"{type(explainer).__name__} explains each row's own output, whose base value differs by row: pass "
            "estimates['base_values'] (from lazy_estimates)."
        )
    return explainer._explanation(
        array,
        codec,
        as_cube("values"),
        base,
        output_names=getattr(explainer, "output_names_", None),
        error_std=as_cube("error_std"),
    )


def _shipped(explainer: Any) -> Any:
    """Return the fitted explainer as one graph node: progress off, a non-int ``random_state`` drawn to an int now."""
    import cloudpickle
    import dask

    from sklearn_shapq._random import make_generator

    worker_copy = copy.copy(explainer)
    worker_copy.progress = False
    if not isinstance(worker_copy.random_state, Integral):  # one seed for every block of this call
        worker_copy.random_state = int(make_generator(worker_copy.random_state).integers(2**32))
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        client = None
    if client is not None and len(cloudpickle.dumps(worker_copy)) > SCATTER_BYTES:
        return client.scatter(worker_copy, broadcast=True, hash=False)
    return dask.delayed(worker_copy, pure=True, traverse=False)


def _estimates(explainer: Any, rows: Any) -> np.ndarray:
    """One block's values, standard errors and base values, side by side: (m, (2 n_players + 1) n_outputs)."""
    explanation = explainer.explain(rows)
    m = explanation.values.shape[0]

    def flat(array: Any) -> np.ndarray:
        array = np.asarray(array, dtype=np.float64)
        if array.ndim == 3:  # (m, p, k) → output by output, as get_feature_names_out
            array = array.transpose(0, 2, 1)
        return array.reshape(m, -1)

    error_std = explanation.error_std
    values = flat(explanation.values)
    stderr = np.zeros_like(values) if error_std is None else flat(error_std)
    return np.concatenate([values, stderr, flat(explanation.base_values)], axis=1)


def _block_estimates(block: np.ndarray, explainer: Any) -> np.ndarray:
    if block.shape[0] == 0:
        players, outputs, _ = value_layout(explainer)
        return np.empty((0, 2 * len(players) * outputs + outputs))
    return _estimates(explainer, block)


def _partition_estimates(partition: Any, explainer: Any, columns: list[str], restore: dict[int, tuple]) -> Any:
    import pandas as pd

    if len(partition) == 0:
        return pd.DataFrame({name: pd.Series(dtype=np.float64) for name in columns}, index=partition.index)
    partition = _restored(partition, restore)
    return pd.DataFrame(_estimates(explainer, partition), index=partition.index, columns=columns)


def _dask_string_conversions(explainer: Any, X: Any) -> dict[int, tuple]:
    """Return the columns that dask's string conversion changed from ``fit``'s: {position: (dtype, missing)}."""
    import dask
    import pandas as pd

    codec = getattr(explainer, "_codec", None)
    if codec is None or dask.config.get("dataframe.convert-string") is False:
        return {}
    restore = {}
    for j, (fitted, dtype) in enumerate(zip(codec.dtypes, X.dtypes, strict=True)):
        converted = isinstance(dtype, pd.StringDtype) and dtype.na_value is pd.NA
        was_string = fitted == np.dtype(object) or (isinstance(fitted, pd.StringDtype) and fitted.na_value is not pd.NA)
        if converted and was_string:
            restore[j] = (fitted, codec.missing[j] or ())
    return restore


def _restored(partition: Any, restore: dict[int, tuple]) -> Any:
    """Return ``partition`` with the columns dask converted to ``string`` in their dtypes of fit again."""
    import pandas as pd

    if not restore:
        return partition
    partition = partition.copy()
    for j, (fitted, missing) in restore.items():
        column = partition.iloc[:, j]
        absent = column.isna().to_numpy()
        if fitted != np.dtype(object) or not absent.any():
            partition.isetitem(j, column.astype(fitted))
            continue
        if len(missing) != 1:
            kinds = " and ".join(repr(value) for value in missing) or "none"
            raise ValueError(
                f"dask converted column {partition.columns[j]!r} to string, its missing cells to <NA>; in fit the "
                f"column was object with the missing values {kinds}, so which one each cell was is lost. Create the "
                "collection under dask.config.set({'dataframe.convert-string': False})."
            )
        cells = column.astype(object).to_numpy(copy=True)
        cells[absent] = missing[0]
        partition.isetitem(j, pd.Series(cells, index=column.index, dtype=object))
    return partition


def _columns(stacked: Any, start: int, stop: int, trailing: tuple[int, ...]) -> Any:
    """Columns start:stop of the stacked estimates, each row reshaped to ``trailing`` (output by output)."""

    def take(block: np.ndarray) -> np.ndarray:
        piece = block[:, start:stop]
        if len(trailing) == 2:
            return piece.reshape(block.shape[0], trailing[1], trailing[0]).transpose(0, 2, 1)
        return piece.reshape(block.shape[0], *trailing)

    common = {"dtype": np.float64, "meta": np.empty((0,) * (1 + len(trailing)))}
    if len(trailing) == 2:
        return stacked.map_blocks(
            take, new_axis=2, chunks=(stacked.chunks[0], (trailing[0],), (trailing[1],)), **common
        )
    if not trailing:
        return stacked.map_blocks(take, drop_axis=1, chunks=(stacked.chunks[0],), **common)
    return stacked.map_blocks(take, chunks=(stacked.chunks[0], trailing), **common)


def _value_columns(explainer: Any, players: list[str], output_axis: bool) -> list[str]:
    if not output_axis:
        return players
    return [str(name) for name in explainer.get_feature_names_out()]


def _is_dask_dataframe(X: Any) -> bool:
    import dask.dataframe as dd

    return isinstance(X, dd.DataFrame)


def _check_collection(explainer: Any, X: Any) -> None:
    """Refuse, before any work, a collection that is not a 2-D dask Array or a DataFrame with the fitted columns."""
    import dask.array as da

    d = explainer.n_features_in_
    if _is_dask_dataframe(X):
        names = [str(c) for c in X.columns]
        fitted = getattr(explainer, "feature_names_in_", None)
        if len(names) != d or (fitted is not None and names != [str(c) for c in fitted]):
            expected = f"{d} columns" if fitted is None else f"the columns {[str(c) for c in fitted]}"
            raise ValueError(f"X must have {expected}, as in fit; the dask DataFrame has {names}.")
        return
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a dask Array or DataFrame to be explained lazily, got {type(X).__name__}.")
    if X.ndim != 2 or X.shape[1] != d:
        raise ValueError(f"X must be 2-D with {d} columns, as in fit; the dask Array has shape {X.shape}.")


def _output_names(explainer: Any, outputs: int) -> list[str]:
    names = getattr(explainer, "output_names_", None)
    return [str(name) for name in names] if names else [f"output{j}" for j in range(outputs)]
