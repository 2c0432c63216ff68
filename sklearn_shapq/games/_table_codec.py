"""Raw tables as float64 codes for the games, and masked rows back to the model's DataFrame."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

_NUMBER, _NULLABLE, _CATEGORY, _LEVELS = "number", "nullable", "category", "levels"


@dataclass(frozen=True)
class TableCodec:
    """How the columns of a DataFrame are coded as float64 and decoded back.

    Numbers and bools (nullable ones with NaN for ``<NA>``) are their own codes; categories their
    category index; other columns the index of the value among those seen, a missing cell
    −1 − the index of its kind of missing value (None, NaN, ``pd.NA`` each decode to themselves).

    Attributes
    ----------
    columns, dtypes : list
        Column labels and original dtypes.
    kinds : list of str
        How each column is coded.
    levels : list of ndarray or None
        Values of each "levels" column, in order of first appearance.
    missing : list of tuple or None
        The kinds of missing value seen in each "levels" column.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"colour": ["red", None, "blue"], "size": [1, 2, 3]})
    >>> codec, codes = TableCodec.from_frame(frame)
    >>> codes.tolist()
    [[0.0, 1.0], [-1.0, 2.0], [1.0, 3.0]]
    >>> codec.decode(codes[[2, 0]]).values.tolist()
    [['blue', 3], ['red', 1]]
    """

    columns: list
    dtypes: list
    kinds: list[str]
    levels: list[Any]  # ndarray for a "levels" column, None for the other kinds
    missing: list[Any]  # tuple for a "levels" column, None for the other kinds

    @property
    def unordered(self) -> np.ndarray:
        """Which columns' codes carry no order (string and object columns: levels by first appearance)."""
        return np.array([kind == _LEVELS for kind in self.kinds], dtype=bool)

    @property
    def coded_columns(self) -> list:
        """The columns coded by level or category (those that are not numbers)."""
        return [c for c, kind in zip(self.columns, self.kinds, strict=True) if kind in (_CATEGORY, _LEVELS)]

    @classmethod
    def from_frame(cls, frame: Any) -> tuple[TableCodec, np.ndarray]:
        """Learn the coding of ``frame``'s columns; return it with the codes of ``frame``."""
        kinds = [_kind(dtype, column) for column, dtype in zip(frame.columns, frame.dtypes, strict=True)]
        d = len(kinds)
        codec = cls(list(frame.columns), list(frame.dtypes), kinds, [None] * d, [None] * d)
        for j, kind in enumerate(kinds):
            if kind == _LEVELS:
                codec.levels[j], codec.missing[j] = np.empty(0, dtype=object), ()
        return codec.encode(frame)

    def encode(self, frame: Any, name: str = "X") -> tuple[TableCodec, np.ndarray]:
        """Return a copy extended by levels first seen in ``frame``, and ``frame``'s codes (n, d).

        Raises
        ------
        TypeError
            A column of another kind than in fit.
        ValueError
            Values outside a category column's categories; missing or fractional values in an int or bool column.
        """
        codes = np.empty((frame.shape[0], len(self.columns)))
        levels, missing = list(self.levels), list(self.missing)
        for j, (kind, dtype) in enumerate(zip(self.kinds, self.dtypes, strict=True)):
            column = frame.iloc[:, j]
            if kind == _CATEGORY:
                cells = _category_codes(column, dtype, f"Column {self.columns[j]!r} of {name}")
                codes[:, j] = np.where(cells < 0, np.nan, cells)
            elif kind == _LEVELS:
                codes[:, j], levels[j], missing[j] = _level_codes(
                    column, levels[j], missing[j], f"Column {self.columns[j]!r} of {name}"
                )
            else:
                if _kind(column.dtype, self.columns[j]) not in (_NUMBER, _NULLABLE):
                    raise TypeError(
                        f"Column {self.columns[j]!r} of {name} has dtype {column.dtype}, but the explainer was "
                        f"fitted with numbers ({dtype})."
                    )
                codes[:, j] = column.to_numpy(dtype=np.float64, na_value=np.nan)
                if getattr(column.dtype, "kind", "") in "iu":  # numpy and nullable ints
                    refuse_inexact_integers(np.nan_to_num(codes[:, j]), name, self.columns[j])
                if (
                    kind == _NUMBER
                    and np.dtype(dtype).kind in "biu"
                    and not np.array_equal(codes[:, j], np.round(codes[:, j]))
                ):
                    raise ValueError(
                        f"Column {self.columns[j]!r} of {name} has missing or fractional values, but the explainer "
                        f"was fitted with {dtype}: make it a float (or nullable Int64) column in both."
                    )
        same = all(new is old for new, old in zip(levels + missing, self.levels + self.missing, strict=True))
        return (self if same else replace(self, levels=levels, missing=missing)), codes

    def aligned(self, frame: Any, background: np.ndarray, name: str = "X") -> tuple[TableCodec, np.ndarray]:
        """Return a codec and background codes (N, d) that give ``frame``'s columns their own dtypes.

        So the model is explained on the rows as passed: where a column's dtype differs from fit's,
        the background's cells are cast to it and coded anew; else this codec and ``background``.

        Raises
        ------
        TypeError
            Naming the column, a background cell that the new dtype cannot hold.
        """
        dtypes = list(getattr(frame, "dtypes", []))
        names = [str(c) for c in getattr(frame, "columns", [])]
        if names != [str(c) for c in self.columns] or all(map(_same_dtype, dtypes, self.dtypes)):
            return self, background
        cells = self.decode(background)
        for j, (fitted, wanted) in enumerate(zip(self.dtypes, dtypes, strict=True)):
            if not _same_dtype(fitted, wanted):
                cells.isetitem(j, _cast_cells(cells.iloc[:, j], wanted, f"Column {self.columns[j]!r} of {name}"))
        codec, codes = TableCodec.from_frame(cells)
        return codec, codes

    def decode(self, codes: np.ndarray) -> Any:
        """Return the DataFrame whose codes are ``codes`` (n, d): original columns and dtypes."""
        import pandas as pd

        data = {}
        for j, (kind, dtype) in enumerate(zip(self.kinds, self.dtypes, strict=True)):
            column = codes[:, j]
            if kind == _NUMBER:
                data[j] = column if dtype == np.float64 else column.astype(dtype)
            elif kind == _NULLABLE:
                data[j] = pd.array(column, dtype=dtype)
            elif kind == _CATEGORY:
                data[j] = pd.Categorical.from_codes(np.where(np.isnan(column), -1, column).astype(np.intp), dtype=dtype)
            else:
                data[j] = self._level_values(j, column, dtype)
        frame = pd.DataFrame(data, copy=False)
        frame.columns = self.columns
        return frame

    def cells(self, codes: np.ndarray) -> np.ndarray:
        """Return the cells of ``codes`` (n, d) as an object array for display (a missing level as its text)."""
        frame = self.decode(codes)
        cells = frame.astype(object).where(frame.notna(), np.nan).to_numpy(copy=True)
        for j, kind in enumerate(self.kinds):
            if kind in (_CATEGORY, _LEVELS):
                column = frame.iloc[:, j].astype(object)
                missing = column.isna().to_numpy()
                cells[missing, j] = [str(cell) for cell in column.to_numpy()[missing]]
        return cells

    def key_rows(self, codes: np.ndarray) -> np.ndarray:
        """Return rows to key by content: the codes, with a level's code replaced by its value's hash (order-free)."""
        import pandas as pd

        rows = codes.copy()
        for j, kind in enumerate(self.kinds):
            if kind == _LEVELS:
                names = [repr(v) for v in self.levels[j]] + [f"missing {type(v).__name__}" for v in self.missing[j]]
                hashes = pd.util.hash_array(np.array(names, dtype=object)) >> np.uint64(11)  # 53 bits: exact floats
                rows[:, j] = hashes[self._level_index(j, codes[:, j])].astype(np.float64)
        return rows

    def _level_index(self, j: int, column: np.ndarray) -> np.ndarray:
        """Index of each code in the levels followed by the kinds of missing value."""
        return np.where(column < 0, self.levels[j].size - 1 - column, column).astype(np.intp)

    def _level_values(self, j: int, column: np.ndarray, dtype: Any) -> Any:
        import pandas as pd

        table = np.empty(self.levels[j].size + len(self.missing[j]), dtype=object)
        table[: self.levels[j].size], table[self.levels[j].size :] = self.levels[j], self.missing[j]
        return pd.Series(table[self._level_index(j, column)], dtype=dtype, copy=False)  # object stays object


def refuse_inexact_integers(values: np.ndarray, name: str, column: Any = None) -> None:
    """Refuse, naming the column, integers beyond 2^53, which float64 rows cannot hold exactly."""
    if values.size and float(np.abs(values).max()) >= 2.0**53:  # 2^53 + 1 arrives as 2^53
        where = name if column is None else f"Column {column!r} of {name}"
        raise ValueError(
            f"{where} holds integers beyond 2^53, which the explainer's float64 rows cannot hold exactly: convert "
            "them to floats, or to strings if they are identifiers."
        )


def keyed_content(array: np.ndarray, codec: TableCodec | None) -> np.ndarray:
    """Rows whose bits :func:`~sklearn_shapq.samplers.row_keys` keys: numbers, or a table's key rows."""
    return array if codec is None else codec.key_rows(array)


def _same_dtype(first: Any, second: Any) -> bool:
    """Whether two column dtypes are the same, categories and their order included."""
    if str(first) == "category" and str(second) == "category":
        return (
            first.ordered == second.ordered
            and first.categories.dtype == second.categories.dtype
            and first.categories.equals(second.categories)
        )
    return first == second and type(first) is type(second)


def _cast_cells(column: Any, dtype: Any, what: str) -> Any:
    """``column`` cast to ``dtype``, refused where a cell would change (a missing cell may change its kind)."""
    fitted = _described(column.dtype)
    message = f"{what} has dtype {_described(dtype)}, but the explainer was fitted with {fitted}, and"
    if str(dtype) == "category":  # a cell outside the categories: refused here, before pandas warns and drops it
        outside = (column.notna() & ~column.astype(object).isin(list(dtype.categories))).to_numpy()
        if outside.any():
            cell = _shown(column.iloc[int(np.flatnonzero(outside)[0])])
            raise TypeError(
                f"{message} the background's cell {cell!r} is not among its categories {list(dtype.categories)}: "
                "pass the dtype of fit."
            )
    try:
        # via objects to a category dtype: pandas keeps a categorical column as it is for categories in any order
        cast = (column.astype(object) if str(dtype) == "category" else column).astype(dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{message} the background cannot be cast to it ({exc}): pass the dtype of fit.") from exc
    if not _same_dtype(cast.dtype, dtype):  # pandas may fall back to objects (a category with missing cells to bool)
        raise TypeError(
            f"{message} the background cannot be held in it (it became {cast.dtype}): pass the dtype of fit."
        )
    missing = column.isna().to_numpy()
    before, after = column.to_numpy(dtype=object)[~missing], cast.to_numpy(dtype=object)[~missing]
    changed = cast.isna().to_numpy() != missing
    changed[~missing] |= before != after
    if changed.any():
        row = int(np.flatnonzero(changed)[0])
        before, after = _shown(column.iloc[row]), _shown(cast.iloc[row])
        raise TypeError(
            f"{message} the background's cell {before!r} would become {after!r} in it: pass the dtype of fit."
        )
    return cast


def _shown(cell: Any) -> Any:
    """Return a cell as error messages show it: numpy scalars as Python's."""
    return cell.item() if isinstance(cell, np.generic) else cell


def _described(dtype: Any) -> str:
    """Return a dtype as error messages name it: a category dtype with its categories."""
    if str(dtype) != "category":
        return str(dtype)
    return f"{'ordered ' if dtype.ordered else ''}category {list(dtype.categories)}"


def _kind(dtype: Any, column: Any = None) -> str:
    from pandas.api.types import is_bool_dtype, is_extension_array_dtype, is_numeric_dtype

    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        return _NUMBER
    if str(dtype) == "category":  # before the nullable kinds: pandas calls a category of bools a bool dtype
        return _CATEGORY
    if is_extension_array_dtype(dtype) and (is_numeric_dtype(dtype) or is_bool_dtype(dtype)):
        return _NULLABLE
    if isinstance(dtype, np.dtype) and dtype.kind == "c":
        raise TypeError(f"Column {column!r} has dtype {dtype}, which cannot be explained: convert it to real numbers.")
    return _LEVELS  # strings, objects, dates and durations: each distinct cell a level


def _category_codes(column: Any, dtype: Any, what: str) -> np.ndarray:
    """Category codes (float, −1 if missing) of ``column`` under the fitted ``dtype``; other values are an error."""
    import pandas as pd

    same = str(column.dtype) == "category" and column.dtype.categories.equals(dtype.categories)
    if not (same and column.dtype.ordered == dtype.ordered):  # unordered dtypes compare equal in any order
        unknown = set(column.dropna().unique()) - set(dtype.categories)
        if unknown:
            raise ValueError(
                f"{what} has values {sorted(map(str, unknown))} that are not among the categories the explainer "
                f"was fitted with, {list(dtype.categories)}; map them to those first."
            )
        return pd.Categorical(column.to_numpy(dtype=object), dtype=dtype).codes.astype(np.float64)
    return column.cat.codes.to_numpy(dtype=np.float64)


def _level_codes(
    column: Any, levels: np.ndarray, missing: tuple, what: str = "A column"
) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Codes of a "levels" column's cells, extending the levels (1, True and 1.0 are three) and missing kinds."""
    import pandas as pd

    cells = column.to_numpy(dtype=object)
    absent = column.isna().to_numpy()
    values = cells[~absent]
    try:
        keys = _typed(np.concatenate([levels, values]))
        level_keys, keys = keys[: levels.size], keys[levels.size :]
        positions = (
            pd.Index(level_keys, tupleize_cols=False).get_indexer(keys) if levels.size else np.full(keys.size, -1)
        )
        new = positions < 0
        if new.any():
            _, first = np.unique(pd.factorize(pd.Index(keys[new], tupleize_cols=False))[0], return_index=True)
            levels = np.concatenate([levels, values[new][first]])
            level_keys = np.concatenate([level_keys, keys[new][first]])
            positions = pd.Index(level_keys, tupleize_cols=False).get_indexer(keys)
    except TypeError as exc:  # unhashable cells: lists, dicts, arrays
        raise TypeError(f"{what} holds cells that cannot be compared as values ({exc}): make them scalars.") from exc
    codes = np.empty(cells.shape[0])
    codes[~absent] = positions
    if absent.any():  # a loop over the missing cells only: None, NaN and pd.NA stay what they were
        kinds = [type(v) for v in missing]
        for row in np.flatnonzero(absent):
            if type(cells[row]) not in kinds:
                kinds.append(type(cells[row]))
                missing = (*missing, cells[row])
            codes[row] = -1 - kinds.index(type(cells[row]))
    return codes, levels, missing


_TYPE_OF = np.frompyfunc(type, 1, 1)


def _typed(values: np.ndarray) -> np.ndarray:
    """Return keys that tell equal values of other types (and -0.0 from 0.0) apart: (type, sign, value) where needed."""
    types = _TYPE_OF(values)
    kinds = set(types.tolist())
    floats = np.isin(types, [t for t in kinds if issubclass(t, (float, np.floating))])
    negative_zeros = floats.any() and bool(np.signbit(values[floats].astype(np.float64)).any())  # -0.0 == 0.0
    if len(kinds) <= 1 and not negative_zeros:
        return values
    keys = np.empty(values.size, dtype=object)
    signs = np.zeros(values.size, dtype=bool)
    signs[floats] = np.signbit(values[floats].astype(np.float64))
    keys[:] = list(zip(types, signs.tolist(), values, strict=True))
    return keys
