"""Raw tables as numbers for the games, and back to the model's DataFrame.

The interventional game copies whole cells between rows; it does so on a float64 matrix. A
:class:`TableCodec` makes that matrix from a DataFrame with string, category, bool and numeric
columns (a non-numeric cell becomes the index of its level) and turns masked rows back into a
DataFrame with the original columns and dtypes (categories and their levels kept) just before
the model sees them, in the same large batches as numeric data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

_NUMBER, _NULLABLE, _CATEGORY, _LEVELS = "number", "nullable", "category", "levels"


@dataclass(frozen=True)
class TableCodec:
    """How the columns of a DataFrame are coded as float64 and decoded back.

    Column kinds: numpy numbers and bools are their own codes; pandas nullable numbers
    (``Int64``, ``Float64``, ``boolean``) too, with NaN for ``<NA>``; ``category`` columns are
    coded by their category index, NaN when missing; any other column (strings, objects, pandas
    ``str``) by the index of its value among the values seen so far, and a missing cell by
    −1 − the index of its kind of missing value (None, NaN, ``pd.NA``: each decodes to itself).

    Attributes
    ----------
    columns : list
        Column labels as the model knows them.
    dtypes : list
        Original dtype of each column.
    kinds : list of str
        How each column is coded.
    levels : list of ndarray or None
        Values of each "levels" column, in order of first appearance (None for the other kinds).
    missing : list of tuple or None
        The kinds of missing value seen in each "levels" column (None, NaN, ``pd.NA``, …).

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
    levels: list[np.ndarray | None]
    missing: list[tuple | None]

    @property
    def coded_columns(self) -> list:
        """The columns coded by level or category (those that are not numbers)."""
        return [c for c, kind in zip(self.columns, self.kinds, strict=True) if kind in (_CATEGORY, _LEVELS)]

    @classmethod
    def from_frame(cls, frame: Any) -> tuple[TableCodec, np.ndarray]:
        """Learn the coding of ``frame``'s columns; return it with the codes of ``frame``."""
        kinds = [_kind(dtype) for dtype in frame.dtypes]
        d = len(kinds)
        codec = cls(list(frame.columns), list(frame.dtypes), kinds, [None] * d, [None] * d)
        for j, kind in enumerate(kinds):
            if kind == _LEVELS:
                codec.levels[j], codec.missing[j] = np.empty(0, dtype=object), ()
        return codec.encode(frame)

    def encode(self, frame: Any, name: str = "X") -> tuple[TableCodec, np.ndarray]:
        """Return the codec extended by levels first seen in ``frame``, and ``frame``'s codes (n, d).

        The codec itself is left as it is (a fitted explainer's codec does not change in
        ``explain``); codes of earlier data stay valid under the extended codec.

        Raises
        ------
        TypeError
            A column of another kind than in fit (strings where numbers were).
        ValueError
            Values outside a category column's categories, or missing or fractional values in an
            int or bool column.
        """
        codes = np.empty((frame.shape[0], len(self.columns)))
        levels, missing = list(self.levels), list(self.missing)
        for j, (kind, dtype) in enumerate(zip(self.kinds, self.dtypes, strict=True)):
            column = frame.iloc[:, j]
            if kind == _CATEGORY:
                cells = _category_codes(column, dtype, f"Column {self.columns[j]!r} of {name}")
                codes[:, j] = np.where(cells < 0, np.nan, cells)
            elif kind == _LEVELS:
                codes[:, j], levels[j], missing[j] = _level_codes(column, levels[j], missing[j])
            else:
                if _kind(column.dtype) not in (_NUMBER, _NULLABLE):
                    raise TypeError(
                        f"Column {self.columns[j]!r} of {name} has dtype {column.dtype}, but the explainer was "
                        f"fitted with numbers ({dtype})."
                    )
                codes[:, j] = column.to_numpy(dtype=np.float64, na_value=np.nan)
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
        """Return the cells of ``codes`` (n, d) as an object array, for display.

        Numbers stay numbers (NaN when missing); a missing string or category cell is shown as
        its text ("None", "nan", "<NA>"), so such a column holds strings only and shap's plots
        label it by name.
        """
        frame = self.decode(codes)
        cells = frame.astype(object).where(frame.notna(), np.nan).to_numpy(copy=True)
        for j, kind in enumerate(self.kinds):
            if kind in (_CATEGORY, _LEVELS):
                column = frame.iloc[:, j].astype(object)
                missing = column.isna().to_numpy()
                cells[missing, j] = [str(cell) for cell in column.to_numpy()[missing]]
        return cells

    def key_rows(self, codes: np.ndarray) -> np.ndarray:
        """Return rows to key by content: the codes, with a hash of the value for a level's code.

        For :func:`~sklearn_shapq.samplers.row_keys`. A level's code depends on the order values
        were seen in; its hash does not, so a row gets the same key alone or in any batch.
        """
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


def keyed_content(array: np.ndarray, codec: TableCodec | None) -> np.ndarray:
    """Rows whose bits :func:`~sklearn_shapq.samplers.row_keys` keys: numbers, or a table's key rows."""
    return array if codec is None else codec.key_rows(array)


def _kind(dtype: Any) -> str:
    from pandas.api.types import is_bool_dtype, is_extension_array_dtype, is_numeric_dtype

    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        return _NUMBER
    if is_extension_array_dtype(dtype) and (is_numeric_dtype(dtype) or is_bool_dtype(dtype)):
        return _NULLABLE
    if str(dtype) == "category":
        return _CATEGORY
    if isinstance(dtype, np.dtype) and dtype.kind in "mMc":
        raise TypeError(f"Columns of dtype {dtype} cannot be explained: convert them to numbers first.")
    return _LEVELS


def _category_codes(column: Any, dtype: Any, what: str) -> np.ndarray:
    """Category codes (float, −1 if missing) of ``column`` under the fitted ``dtype``.

    Another categorical dtype, strings or objects are recoded to the fitted categories (as the
    models do); a value that is not one of them is an error that lists them.
    """
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


def _level_codes(column: Any, levels: np.ndarray, missing: tuple) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Codes of a "levels" column's cells, with the levels and kinds of missing value extended by new ones."""
    import pandas as pd

    cells = column.to_numpy(dtype=object)
    absent = column.isna().to_numpy()
    values = cells[~absent]
    positions = pd.Index(levels).get_indexer(values) if levels.size else np.full(values.size, -1)
    new = pd.unique(values[positions < 0])
    if new.size:
        levels = np.concatenate([levels, np.asarray(new, dtype=object)])
        positions = pd.Index(levels).get_indexer(values)
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
