"""Input checks shared by the public classes, and the constraints of their shared parameters (``doc/glossary.md``)."""

from __future__ import annotations

import inspect
import re
import sys
import warnings
from collections.abc import Mapping
from numbers import Integral
from pathlib import Path
from types import FrameType
from typing import Any

import joblib
import numpy as np
import scipy.sparse
import sklearn
from sklearn.utils._param_validation import Hidden, Interval, RealNotInt, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import validate_data

from sklearn_shapq.backends import ArrayBackend
from sklearn_shapq.games import TableCodec, refuse_inexact_integers, takes_missing_values


def _is_dataframe(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def check_data(
    X: Any,
    *,
    name: str = "X",
    n_features: int | None = None,
    feature_names: list[str] | None = None,
    allow_nan: bool = False,
    nan_hint: str = "",
) -> tuple[np.ndarray, list[str] | None]:
    """Validate a 2-D numeric data set and return it as float64 with its column names.

    ``name`` is used in messages; ``n_features`` and ``feature_names`` are ``fit``'s; ``allow_nan``
    lets NaN pass (never infinity), ``nan_hint`` extends its error. Returns (n, d) float64 and the
    names or None; a TypeError for non-numeric or sparse data, a ValueError for bad shapes or values.
    """
    _refuse_sparse(X, name)
    _refuse_complex(X, name)
    names = None
    if _is_dataframe(X):
        names = _column_names(X, name)
        refuse_non_numeric_columns(X, name)
        for column, dtype in zip(names, X.dtypes, strict=True):
            if getattr(dtype, "kind", "") in "iu":
                refuse_inexact_integers(X[column].to_numpy(dtype=np.float64, na_value=0.0), name, column)
        array = X.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        raw = X if hasattr(X, "dtype") else None
        try:
            array = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be numeric: {exc}") from exc
        if raw is not None and getattr(raw.dtype, "kind", "") in "iu":
            refuse_inexact_integers(array, name, None)
    _check_array(array, name, n_features, allow_nan, nan_hint, names)
    _check_names(names, feature_names, name)
    return np.ascontiguousarray(array), names


def check_table(
    X: Any,
    *,
    name: str = "X",
    n_features: int | None = None,
    feature_names: list[str] | None = None,
    codec: TableCodec | None = None,
    tables: bool = True,
    allow_nan: bool = False,
    nan_hint: str = "",
) -> tuple[np.ndarray, list[str] | None, TableCodec | None]:
    """Validate data that may be a raw table and return it as float64 codes.

    Arguments as :func:`check_data`, plus ``fit``'s ``codec`` and ``tables`` (whether a DataFrame of
    non-floats gets a new codec). Returns the data or codes (n, d), the names, and the codec
    (extended by new levels; None for numbers).
    """
    if codec is None and not (tables and _has_columns_besides_floats(X)):
        return (
            *check_data(
                X, name=name, n_features=n_features, feature_names=feature_names, allow_nan=allow_nan, nan_hint=nan_hint
            ),
            None,
        )
    if codec is not None:
        require_dataframe(X, codec, name)
    names = _column_names(X, name)
    _check_names(names, feature_names, name)
    if codec is None:
        codec, array = TableCodec.from_frame(X)
    else:
        codec, array = codec.encode(X, name)
    _check_array(array, name, n_features, allow_nan, nan_hint, names)
    return array, names, codec


def _column_names(X: Any, name: str) -> list[str]:
    """Return the DataFrame's column names as strings, each once (a repeated name would make columns ambiguous)."""
    names = [str(c) for c in X.columns]
    if len(set(names)) < len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{name} has columns named alike {repeated}: give each column its own name.")
    if len({isinstance(c, str) for c in X.columns}) > 1:  # refused by scikit-learn's feature-name checks
        others = [c for c in X.columns if not isinstance(c, str)][:5]
        raise TypeError(
            f"{name} has column names that are strings and column names that are not ({others!r}): name every "
            "column by a string (X.columns = X.columns.astype(str)), or none."
        )
    return names


def _refuse_sparse(X: Any, name: str) -> None:
    if scipy.sparse.issparse(X):
        raise TypeError(
            f"{name} is a sparse matrix; the explainers need dense rows (they copy cells between rows). "
            "Densify it with X.toarray() (or pass a DataFrame)."
        )


def _refuse_complex(X: Any, name: str) -> None:
    """Raise scikit-learn's ValueError for complex data (a float64 copy would drop the imaginary parts)."""
    dtypes = X.dtypes if _is_dataframe(X) else [getattr(X, "dtype", None)]
    if any(getattr(dtype, "kind", "") == "c" for dtype in dtypes):
        raise ValueError(
            f"Complex data not supported: {name} has complex values; pass their real and imaginary parts as "
            "columns of their own."
        )


def _has_columns_besides_floats(X: Any) -> bool:
    """Whether ``X`` is a DataFrame with a column that is not of a numpy float dtype."""
    return _is_dataframe(X) and not all(isinstance(t, np.dtype) and t.kind == "f" for t in X.dtypes)


def refuse_non_numeric_columns(X: Any, name: str, hint: str = "encode them as numbers first.") -> None:
    """Raise a TypeError naming the string or category columns of a DataFrame ``X``, and ``hint``."""
    if not _is_dataframe(X):
        return
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    bad = [str(c) for c, t in zip(X.columns, X.dtypes, strict=True) if not (is_numeric_dtype(t) or is_bool_dtype(t))]
    if bad:
        raise TypeError(f"{name} has non-numeric columns {bad}; {hint}")


def has_non_numeric_columns(X: Any) -> bool:
    """Whether ``X`` is a DataFrame with a column that is neither numeric nor bool."""
    if not _is_dataframe(X):
        return False
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    return not all(is_numeric_dtype(t) or is_bool_dtype(t) for t in X.dtypes)


def _check_array(
    array: np.ndarray, name: str, n_features: int | None, allow_nan: bool, nan_hint: str, columns: list | None = None
) -> None:
    if array.ndim != 2:
        raise ValueError(_not_two_dimensional(name, array.shape))
    if array.shape[0] == 0:  # scikit-learn's words (its estimator checks read them)
        raise ValueError(f"{name} has 0 sample(s) (shape={array.shape}) while a minimum of 1 is required.")
    if array.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={array.shape}) while a minimum of 1 is required.")
    if not allow_nan:
        refuse_missing_values(array, name, nan_hint, columns)
    infinite = np.isinf(array)
    if infinite.any():
        rows, cols = np.nonzero(infinite)
        raise ValueError(f"{name} contains infinity ({_where(rows, cols, columns)}).")
    if n_features is not None and array.shape[1] != n_features:
        raise ValueError(f"{name} has {array.shape[1]} features, but the explainer was fitted with {n_features}.")


def _not_two_dimensional(name: str, shape: tuple) -> str:
    """Return the error of data that is not 2-D ("Reshape your data", as scikit-learn says it)."""
    return (
        f"{name} must be 2-D (n_samples, n_features), got shape {shape}. Reshape your data: X.reshape(1, -1) "
        "for a single row, X.reshape(-1, 1) for a single feature."
    )


def require_dataframe(X: Any, codec: TableCodec, name: str = "X") -> None:
    """Refuse data that is not a DataFrame where ``fit`` coded string or category columns (``codec``).

    Call it before :func:`check_fitted_features`, whose warning about missing feature names would
    come first otherwise.
    """
    if not _is_dataframe(X):
        raise TypeError(
            f"{name} must be a DataFrame: the explainer was fitted on a DataFrame with string or category "
            f"columns {codec.coded_columns}."
        )


def check_fitted_features(estimator: Any, X: Any) -> None:
    """Check the number and names of the features of ``X`` against ``fit``'s, as scikit-learn does.

    Calls ``validate_data(estimator, X, reset=False, skip_check_array=True)``: another count than
    ``n_features_in_`` raises scikit-learn's ValueError, and so do a DataFrame's columns other than
    ``feature_names_in_``; X without names after a fit with names (or the reverse) warns. X is not
    converted (a raw table keeps its string and category columns); data that is not 2-D is refused
    first. Call it in ``explain`` / ``transform`` before X is read, after any dask branch.
    """
    shaped = X if hasattr(X, "shape") else np.asarray(X, dtype=object)  # lists: only their shape is read
    if len(shaped.shape) != 2:
        raise ValueError(_not_two_dimensional("X", shaped.shape))
    validate_data(estimator, shaped, reset=False, skip_check_array=True)


KERNEL_NAN_HINT = (
    "Kernels are computed on every cell, and a missing cell has no value there: impute the missing values "
    "first (e.g. SimpleImputer in a Pipeline before this step)."
)
"""Why the kernel classes (product-kernel explainer, HSIC, MMD) refuse missing values."""


KERNEL_CATEGORY_HINT = (
    "kernels are computed on numbers: encode them first (e.g. OneHotEncoder or OrdinalEncoder in a Pipeline "
    "before this step)."
)
"""Why the kernel classes refuse string and category columns."""


def refuse_missing_values(array: np.ndarray, name: str, hint: str = "", columns: list | None = None) -> None:
    """Raise a ValueError saying where ``array`` has NaN (by column name when ``columns`` are given), and ``hint``.

    Examples
    --------
    >>> refuse_missing_values(np.array([[1.0, np.nan]]), "X", "Impute them.")
    Traceback (most recent call last):
    ...
    ValueError: X contains missing values (NaN) (1 entries, first at row 0, column 1). Impute them.
    """
    missing = np.isnan(array)
    if missing.any():
        rows, cols = np.nonzero(missing)
        raise ValueError(
            f"{name} contains missing values (NaN) ({_where(rows, cols, columns)})." + (f" {hint}" if hint else "")
        )


def _where(rows: np.ndarray, cols: np.ndarray, columns: list | None) -> str:
    column = f"column {cols[0]}" if columns is None else f"column {columns[cols[0]]!r}"
    return f"{rows.size} entries, first at row {rows[0]}, {column}"


def _check_names(names: list[str] | None, feature_names: list[str] | None, name: str) -> None:
    if names is not None and feature_names is not None and names != [str(n) for n in feature_names]:
        raise ValueError(
            f"The feature names of {name} must be the model's features in the same order: got {names}, "
            f"expected {[str(n) for n in feature_names]}."
        )


def missing_value_policy(allow_nan: str | bool, model: Any) -> dict:
    """Return ``check_table``'s ``allow_nan`` and ``nan_hint`` for a class's ``allow_nan`` and model.

    "auto": NaN passes to estimators and boosters, not to a plain callable.
    """
    if allow_nan != "auto":
        allow = bool(allow_nan)
        hint = "allow_nan=False: impute the missing values first, or set allow_nan='auto'."
    else:
        allow = takes_missing_values(model) or hasattr(model, "fit")
        hint = "Pass allow_nan=True if the model takes NaN, or impute the missing values first."
    return {"allow_nan": allow, "nan_hint": hint}


def default_feature_names(d: int, *candidates: Any) -> list[str]:
    """Return the first list of d names among ``candidates``, else "x0" … "x{d-1}"."""
    for names in candidates:
        if names is not None and len(names) == d:
            return [str(n) for n in names]
    return [f"x{j}" for j in range(d)]


class RegistryNames(StrOptions):
    """Constraint of a parameter naming a registry entry: the names registered at validation, and ``extra``."""

    def __init__(self, registry: Mapping[str, Any], extra: tuple = ()) -> None:
        self.registry, self.extra = registry, frozenset(extra)
        super().__init__(set(self.extra) | set(registry))

    @property
    def options(self) -> set:
        """The valid names now."""
        return set(self.extra) | set(self.registry)

    @options.setter
    def options(self, value: set) -> None:  # StrOptions.__init__ sets it; the registry is the source
        pass


class _DeviceString(StrOptions):
    """Constraint of ``device``: "cpu", "auto", "cuda" or "cuda:N" (a StrOptions that also takes "cuda:N")."""

    def __init__(self) -> None:
        super().__init__({"cpu", "cuda", "auto"})

    def is_satisfied_by(self, val: Any) -> bool:
        return isinstance(val, str) and _DEVICE_PATTERN.match(val.strip().lower()) is not None

    def __str__(self) -> str:
        return "a str among 'cpu', 'cuda', 'cuda:N' or 'auto'"


_DEVICE_PATTERN = re.compile(r"^(cpu|auto|cuda(:\d+)?)$")

DEVICE = [_DeviceString(), Hidden(ArrayBackend)]
"""``_parameter_constraints`` entry of ``device`` (a backend object is taken too, for the numpy twin in tests)."""

N_JOBS = [Interval(Integral, None, -1, closed="right"), Interval(Integral, 1, None, closed="left"), None]
"""``n_jobs`` with joblib's semantics: None (1 outside a joblib context), -1 all cores, -2 all but one, …"""

RANDOM_STATE = ["random_state", np.random.Generator]
"""``random_state``: None, an int, a RandomState or a numpy Generator."""

PROGRESS = ["boolean"]
"""``progress``: show a delayed progress bar (True) or never (False)."""

BATCH_SIZE = [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})]
"""``batch_size``: the most rows handed to the model in one call, or "auto" (memory-bounded)."""

MAX_EVALS = [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"})]
"""``max_evals``: value-function evaluations per explained row (v(∅) and v(N) included), or "auto"."""


N_FEATURES_TO_SELECT = [Interval(Integral, 1, None, closed="left"), Interval(RealNotInt, 0, 1, closed="right")]
"""``n_features_to_select``: how many players a selector keeps, a count or a fraction of the players."""


def selected_count(n_features_to_select: int | float, n_players: int) -> int:
    """Return the players a selector keeps: the count (at most ``n_players``) or the fraction (at least 1).

    Examples
    --------
    >>> selected_count(3, 10), selected_count(0.25, 10), selected_count(0.01, 10)
    (3, 2, 1)
    """
    if isinstance(n_features_to_select, Integral):
        if n_features_to_select > n_players:
            raise ValueError(
                f"n_features_to_select must be between 1 and {n_players} (the features, a group counting as one), "
                f"got {n_features_to_select} for {n_players} feature(s)."
            )
        return int(n_features_to_select)
    return max(1, round(n_features_to_select * n_players))


RENAMED = "deprecated"
"""Default of a parameter renamed in 1.0: set, it is used under its new name with a FutureWarning."""


def renamed(constraints: list) -> list:
    """Return the constraints of a parameter renamed in 1.0: its new name's, and the hidden ``RENAMED`` default."""
    return [*constraints, Hidden(StrOptions({RENAMED}))]


def renamed_parameter(estimator: Any, old: str, new: str) -> Any:
    """Return the value of parameter ``new``, or of ``old`` (its name before 1.0) with a FutureWarning.

    Setting both is an error. ``old`` is removed in 1.1.
    """
    old_value = getattr(estimator, old)
    if isinstance(old_value, str) and old_value == RENAMED:
        return getattr(estimator, new)
    default = inspect.signature(type(estimator)).parameters[new].default
    if getattr(estimator, new) != default:
        raise ValueError(f"{old}= was renamed {new}= in sklearn_shapq 1.0: pass {new}= only, not both.")
    warnings.warn(
        f"{old}= was renamed {new}= in sklearn_shapq 1.0 and will be removed in 1.1: pass {new}={old_value!r}.",
        FutureWarning,
        stacklevel=_caller_outside_libraries(),
    )
    return old_value


def _caller_outside_libraries() -> int:
    """Return the ``stacklevel`` that points a warning raised by this function's caller at the user's code.

    Frames in this package and in scikit-learn (its ``fit`` wrapper) are skipped.
    """
    libraries = tuple(str(Path(str(module.__file__)).parent) for module in (sys.modules["sklearn_shapq"], sklearn))
    frame: FrameType | None = sys._getframe(1)  # level 1: the frame that calls warnings.warn
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(libraries):
        frame, level = frame.f_back, level + 1
    return level


def effective_n_jobs(n_jobs: int | None) -> int:
    """Return the number of workers ``n_jobs`` means, with joblib's semantics (the active backend included).

    Examples
    --------
    >>> effective_n_jobs(None), effective_n_jobs(1)
    (1, 1)
    """
    return int(joblib.effective_n_jobs(n_jobs))


def is_class_target(y: Any) -> bool:
    """Whether a target holds class labels: binary or multiclass labels that are not floats.

    A float target is a regression target even when its values are whole numbers (unlike ``type_of_target``).

    Examples
    --------
    >>> is_class_target(np.array([151.0, 75.0, 141.0])), is_class_target(np.array([0, 1, 1]))
    (False, True)
    >>> is_class_target(np.array(["a", "b", "a"], dtype=object))
    True
    """
    labels = np.asarray(y)
    if labels.dtype.kind == "f" or labels.dtype.kind == "c":
        return False
    return type_of_target(labels) in ("binary", "multiclass")
