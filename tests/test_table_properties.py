"""Property-based tests: a raw table is explained as the user passed it, or refused by column name.

The contract ("no silent wrong answer") for DataFrames explained by
:class:`~sklearn_shapq.PermutationShapExplainer` and by ``TopKShapley(prefit=True).explain``:

(a) values + base_values == f(X as passed) to 1e-10, for every exactly efficient algorithm; the
    base value is the mean of f over the background as passed to ``fit`` (``expected_value_``,
    and ``base_values`` where the explained dtypes are the background's);
(b) ``algorithm="exact"`` gives the brute-force Shapley values of the interventional game built in
    this file with pandas alone (no package code) to 1e-10, when the explained frame has the
    background's dtypes; where it has others, those of the same game on the background cast to
    the explained dtypes (``astype``, strictly), the rule the user guide documents for tables;
(c) otherwise, where a cell cannot be represented (strings at fit and numbers at explain,
    datetimes, …), a TypeError or ValueError whose message names the column.
Any other exception, or any other number, is a failure.

Tables have 1-5 columns (2^d coalitions stay cheap to enumerate), 2-6 background rows and 1-3
explained rows, over float64, int64, bool, Int64, Float64, boolean, ``str`` (pandas 3's default
string dtype), ``string`` (python storage), ``string[pyarrow]``, object (mixed scalars: 1, True,
1.0, "1", -0.0, numpy scalars), ordered and unordered categories and datetimes (naive and UTC),
each with every missing value the dtype holds (None, NaN, pd.NA, pd.NaT). Some explained columns
get another dtype than the background's (Int64 at fit, float64 at explain; ``str`` then
``string``; categories reordered; strings then numbers; …). Models are plain functions of the
cells that tell None from NaN from pd.NA, 1 from True from 1.0, -0.0 from 0.0, one dtype from
another and, through ``.cat.codes``, one order of categories from another.

Hypothesis profiles are registered in ``tests/conftest.py``: "ci", the default (100 examples a
test, derandomized so that CI is reproducible, no example database; about 20 s on 2 cores when
everything passes, longer while hypothesis shrinks a failure), and "long" (2000 examples a test,
random draws, for hunting failures; bound it with ``timeout``)::

    HYPOTHESIS_PROFILE=long timeout 1800 python -m pytest tests/test_table_properties.py

A failure prints the falsifying case as Python code (frames, model, explainer) that reruns it
after ``from test_table_properties import *`` with ``tests/`` on the path.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import pandas as pd
from hypothesis import given, note
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, RegressorMixin

from sklearn_shapq import PermutationShapExplainer, TopKShapley
from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS

from brute_force import brute_force_shapley

ATOL = 1e-10

# ---------------------------------------------------------------- the dtype matrix

FLOATS = (1.0, 0.0, -0.0, 2.0, 1.5, -2.25)
INTS = (1, 0, 2, -3)
BOOLS = (True, False)
STRINGS = ("a", "b", "1", "", "True", "é")
OBJECTS = (1, True, 1.0, "1", 0, False, 0.0, -0.0, "a", np.float64(1.0), np.int64(1), np.True_)
DATES = (pd.Timestamp("2020-01-01"), pd.Timestamp("2021-06-15 12:30"))
UTC_DATES = tuple(date.tz_localize("UTC") for date in DATES)
CATEGORY_POOLS = (STRINGS, INTS)
ANY_MISSING = (None, np.nan, pd.NA, pd.NaT)

KINDS: dict[str, tuple[tuple, tuple]] = {  # dtype -> (values, the missing values it takes)
    "float64": (FLOATS, (None, np.nan)),
    "int64": (INTS, ()),
    "bool": (BOOLS, ()),
    "Int64": (INTS, (None, np.nan, pd.NA)),
    "Float64": (FLOATS, (None, np.nan, pd.NA)),
    "boolean": (BOOLS, (None, np.nan, pd.NA)),
    "str": (STRINGS, ANY_MISSING),
    "string": (STRINGS, ANY_MISSING),
    "string[pyarrow]": (STRINGS, ANY_MISSING),
    "object": (OBJECTS, ANY_MISSING),
    "category": ((), ANY_MISSING),  # values: the column's categories
    "datetime64[ns]": (DATES, ANY_MISSING),
    "datetime64[ns, UTC]": (UTC_DATES, ANY_MISSING),
}
if importlib.util.find_spec("pyarrow") is None:  # pandas 3 does not require it
    del KINDS["string[pyarrow]"]
DATETIME_KINDS = frozenset(("datetime64[ns]", "datetime64[ns, UTC]"))

NEAR_KINDS = {  # dtypes a user plausibly explains a column in after fitting on another
    "float64": ("Float64", "int64", "object", "str"),
    "int64": ("float64", "Int64", "bool", "object"),
    "bool": ("boolean", "int64", "object"),
    "Int64": ("float64", "int64", "Float64", "object"),
    "Float64": ("float64", "Int64"),
    "boolean": ("bool", "object"),
    "str": ("string", "string[pyarrow]", "object", "int64", "category"),
    "string": ("str", "string[pyarrow]", "object", "float64"),
    "string[pyarrow]": ("string", "str"),
    "object": ("str", "float64", "string"),
    "category": ("category reordered", "category flipped", "object", "str"),
    "datetime64[ns]": ("datetime64[ns, UTC]", "object", "str"),
    "datetime64[ns, UTC]": ("datetime64[ns]", "object"),
}
NEAR_KINDS = {
    kind: tuple(k for k in near if k in KINDS or k.startswith("category")) for kind, near in NEAR_KINDS.items()
}


def cell_source(cell) -> str:
    """Python source of a cell (for the falsifying example)."""
    for missing, source in ((None, "None"), (pd.NA, "pd.NA"), (pd.NaT, "pd.NaT")):
        if cell is missing:
            return source
    if type(cell) is float and np.isnan(cell):
        return "np.nan"
    if isinstance(cell, pd.Timestamp):
        return f"pd.Timestamp({str(cell)!r})"
    return repr(cell)


@dataclass(frozen=True)
class Column:
    """A column as drawn: its dtype, its cells (values and missing values as written) and its categories."""

    kind: str
    cells: tuple
    categories: tuple | None = None
    ordered: bool = False

    def series(self) -> pd.Series:
        if self.kind == "category":
            return pd.Series(pd.Categorical(list(self.cells), categories=list(self.categories), ordered=self.ordered))
        return pd.Series(list(self.cells), dtype=self.kind)

    def source(self) -> str:
        cells = "[" + ", ".join(map(cell_source, self.cells)) + "]"
        if self.kind == "category":
            return f"pd.Categorical({cells}, categories={list(self.categories)!r}, ordered={self.ordered})"
        return f"pd.Series({cells}, dtype={self.kind!r})"


def dtype_key(dtype) -> tuple:
    """What makes two dtypes the same to a model: repr, string storage, categories in their order."""
    if isinstance(dtype, pd.CategoricalDtype):
        return ("category", tuple(dtype.categories), dtype.ordered)
    return (repr(dtype), getattr(dtype, "storage", None))


@dataclass(frozen=True)
class TableCase:
    """A background frame and explained rows, column by column (repr: the code that builds them)."""

    names: tuple
    fit: tuple
    explain: tuple
    index: tuple

    def background(self) -> pd.DataFrame:
        return pd.DataFrame({name: column.series() for name, column in zip(self.names, self.fit, strict=True)})

    def rows(self) -> pd.DataFrame:
        frame = pd.DataFrame({name: column.series() for name, column in zip(self.names, self.explain, strict=True)})
        frame.index = list(self.index)
        return frame

    @property
    def same_dtypes(self) -> bool:
        return not self.mismatched

    @property
    def numeric_path(self) -> bool:
        """A background of float64 columns only takes the numeric path: the model gets float64 rows."""
        return all(column.kind == "float64" for column in self.fit)

    def model_rows(self) -> pd.DataFrame:
        """The explained rows as the model gets them: as passed; on the numeric path, as float64.

        The documented contract of a float64 fit: number and bool columns at explain (ints, nullable
        numbers, bools) reach the model as float64, exactly (NaN for a missing cell; ints beyond
        2^53 are refused); any other column is refused naming it.
        """
        rows = self.rows()
        if not self.numeric_path:
            return rows
        return pd.DataFrame(rows.to_numpy(dtype=np.float64, na_value=np.nan), columns=rows.columns, index=rows.index)

    @property
    def mismatched(self) -> list:
        """Columns whose explained dtype is not the background's."""
        background, rows = self.background(), self.rows()
        return [c for c in self.names if dtype_key(background[c].dtype) != dtype_key(rows[c].dtype)]

    @property
    def suspects(self) -> list:
        """Columns that may be refused: another dtype at explain, or datetimes."""
        pairs = zip(self.names, self.fit, self.explain, strict=True)
        dates = {c for c, fit, explain in pairs if DATETIME_KINDS.intersection((fit.kind, explain.kind))}
        return sorted(set(self.mismatched) | dates)

    def _repr_pretty_(self, printer, cycle) -> None:  # hypothesis prints the falsifying case with this
        printer.text(repr(self))

    def __repr__(self) -> str:
        def frame(columns, index=None):
            body = ", ".join(f"{n!r}: {c.source()}" for n, c in zip(self.names, columns, strict=True))
            return "pd.DataFrame({" + body + "}" + ("" if index is None else f", index={list(index)!r}") + ")"

        return f"\n    background = {frame(self.fit)}\n    X = {frame(self.explain, self.index)}\n"


@st.composite
def columns(draw, kind: str, n: int, categories: tuple | None = None, ordered: bool = False) -> Column:
    """A column of ``kind`` with n cells: values of the kind, or any missing value it holds."""
    values, missing = KINDS[kind]
    if kind == "category" and categories is None:
        pool = draw(st.sampled_from(CATEGORY_POOLS))
        categories = tuple(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4, unique=True)))
        ordered = draw(st.booleans())
    if kind == "category":
        values = categories
    cell = st.sampled_from(values) if not missing else st.one_of(st.sampled_from(values), st.sampled_from(missing))
    return Column(kind, tuple(draw(st.lists(cell, min_size=n, max_size=n))), categories, ordered)


@st.composite
def column_pairs(
    draw, n_background: int, n_explained: int, mismatch: bool | str, kind: str | None = None
) -> tuple[Column, Column]:
    """A background column (of ``kind``, else any) and the explained rows' column: mostly the same dtype."""
    kind = kind or draw(st.sampled_from(tuple(KINDS)))
    fit = draw(columns(kind, n_background))
    explain_kind = kind
    if mismatch == "always" or (mismatch and draw(st.sampled_from((False, False, True)))):
        explain_kind = draw(st.sampled_from((*NEAR_KINDS[kind], "any")))
        if explain_kind == "any":
            explain_kind = draw(st.sampled_from(tuple(KINDS)))
    if explain_kind == "category" and kind == "category":
        explain = draw(columns("category", n_explained, fit.categories, fit.ordered))
    elif explain_kind == "category reordered":
        explain = draw(columns("category", n_explained, tuple(draw(st.permutations(fit.categories))), fit.ordered))
    elif explain_kind == "category flipped":
        explain = draw(columns("category", n_explained, fit.categories, not fit.ordered))
    elif kind == "category" and explain_kind in ("object", "str"):  # the categories' values, as objects or strings
        cells = draw(st.lists(st.sampled_from(fit.categories), min_size=n_explained, max_size=n_explained))
        explain = Column(explain_kind, tuple(cells if explain_kind == "object" else map(str, cells)))
    else:
        explain = draw(columns(explain_kind, n_explained))
    return fit, explain


@st.composite
def tables(draw, mismatch: bool | str = False, max_columns: int = 5) -> TableCase:
    """Background (2-6 rows) and explained rows (1-3) of 1-5 columns.

    ``mismatch``: False, the explained dtypes are the background's; True, a third of the
    explained columns draw another dtype; "first", the first column always draws one.
    """
    d = draw(st.integers(1, max_columns))
    n_background, n_explained = draw(st.integers(2, 6)), draw(st.integers(1, 3))
    kind = draw(st.one_of(st.none(), st.sampled_from(tuple(KINDS))))  # half the tables: one dtype (all float64, …)
    first = "always" if mismatch == "first" else mismatch
    pairs = [draw(column_pairs(n_background, n_explained, first if j == 0 else bool(mismatch), kind)) for j in range(d)]
    index = draw(st.sampled_from(("range", "shuffled")))
    rows = list(range(n_explained))
    if index == "shuffled":
        rows = [10 + 3 * r for r in draw(st.permutations(rows))]
    return TableCase(
        tuple(f"c{j}" for j in range(d)), tuple(p[0] for p in pairs), tuple(p[1] for p in pairs), tuple(rows)
    )


# ---------------------------------------------------------------- models: functions of the cells

ASPECTS = ("repr", "type", "dtype", "code")
"""What a model sees of a cell: its repr (-0.0, None, nan, <NA>, NaT, '1'), its exact type
(int / bool / float / numpy scalars), its column's dtype (with string storage and categories in
their order) and a categorical cell's code (which depends on the order of the categories)."""


@cache
def unit(seed: int, tag: str, token: str) -> float:
    """A fixed pseudo-random number in [-1, 1) for (seed, tag, token): the model's lookup table."""
    digest = hashlib.blake2b(f"{seed}|{tag}|{token}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2.0**63 - 1.0


def tokens(column: pd.Series, aspects: tuple) -> list[str]:
    """Each cell of ``column`` as the text of the aspects the model looks at."""
    dtype = f"{column.dtype!r}/{getattr(column.dtype, 'storage', '')}"
    if isinstance(column.dtype, pd.CategoricalDtype):
        dtype += f"/{list(column.dtype.categories)!r}"
        codes = column.cat.codes.to_numpy().tolist()
    else:
        codes = [""] * len(column)
    parts = {"dtype": lambda cell, code: dtype, "type": lambda cell, code: repr(type(cell))}
    parts |= {"repr": lambda cell, code: repr(cell), "code": lambda cell, code: str(code)}
    cells = list(column)  # cell by cell: to_numpy(dtype=object) casts int categories to float when a cell is missing
    return ["|".join(parts[a](cell, code) for a in aspects) for cell, code in zip(cells, codes, strict=True)]


@dataclass
class CellModel:
    """f(row) = sum_j w(j, cell_j) + sum over pairs (j, k) of w'(j, cell_j) w''(k, cell_k), a lookup by cell.

    It takes a DataFrame, or an array of floats (the package's path for a table of float64
    columns only) as the float64 frame of the fitted columns. It records any frame that does not
    have the fitted columns in order (``problems``) rather than raising inside the package.
    """

    seed: int
    names: tuple
    aspects: tuple
    pairs: tuple
    problems: list = field(default_factory=list, repr=False, compare=False)

    def __call__(self, data) -> np.ndarray:
        if isinstance(data, pd.DataFrame):
            frame = data
            if list(frame.columns) != list(self.names):
                self.problems.append(f"the model got columns {list(frame.columns)}, not {list(self.names)}")
        else:
            frame = pd.DataFrame(np.asarray(data, dtype=np.float64), columns=list(self.names))
        out = np.zeros(len(frame))
        cells = [tokens(frame.iloc[:, j], self.aspects[j]) for j in range(len(self.names))]
        for j, column in enumerate(cells):
            out += [unit(self.seed, f"{j}", token) for token in column]
        for j, k in self.pairs:
            out += [
                unit(self.seed, f"{j}a", a) * unit(self.seed, f"{k}b", b)
                for a, b in zip(cells[j], cells[k], strict=True)
            ]
        return out


class CellEstimator(RegressorMixin, BaseEstimator):
    """A fitted regressor whose ``predict`` is a :class:`CellModel` (TopKShapley takes estimators only)."""

    def __init__(self, model=None):
        self.model = model

    def fit(self, X, y=None):
        return self

    def predict(self, X):
        return self.model(X)

    def __sklearn_is_fitted__(self):
        return True


@st.composite
def cell_models(draw, names: tuple) -> CellModel:
    d = len(names)
    aspects = tuple(
        tuple(a for a in ASPECTS if a in draw(st.sets(st.sampled_from(ASPECTS), min_size=1))) for _ in range(d)
    )
    pairs = draw(st.lists(st.tuples(st.integers(0, d - 1), st.integers(0, d - 1)), max_size=3))
    return CellModel(draw(st.integers(0, 2**16)), names, aspects, tuple(pairs))


@st.composite
def feature_groups(draw, names: tuple) -> dict | None:
    """None, or a few columns put in one or two groups ("g0", "g1"; by name)."""
    if len(names) < 2 or not draw(st.booleans()):
        return None
    labels = draw(st.lists(st.sampled_from((None, "g0", "g1")), min_size=len(names), max_size=len(names)))
    groups: dict = {}
    for name, label in zip(names, labels, strict=True):
        if label is not None:
            groups.setdefault(label, []).append(name)
    return groups or None


def players(names: tuple, groups: dict | None) -> tuple[list, list]:
    """Player names and their column positions, ordered by first column (as the package documents)."""
    label_of = {c: g for g, members in (groups or {}).items() for c in members}
    members: dict = {}
    for j, name in enumerate(names):
        members.setdefault(label_of.get(name, name), []).append(j)
    return list(members), list(members.values())


# ---------------------------------------------------------------- the oracle


def coalition_frame(x: pd.DataFrame, background: pd.DataFrame, from_x: set) -> pd.DataFrame:
    """The model's input for coalition S: every background row with the cells of S taken from the one-row frame x.

    The dtype rule: column j is x's column (its dtype, its cell repeated, taken by position so
    that the very object passed reaches the model) when j is in S, else the background's column.
    Every column keeps the dtype of the frame its cells come from: at S = N the frame is x exactly
    as passed, at S = ∅ the background exactly as passed. With the explained rows in the
    background's dtypes every coalition's frame has those dtypes. Where they differ, a frame
    mixing the two has no single right dtype (one model call holds many coalitions, so a column
    cannot keep both); the user guide's rule is to cast the background to the explained dtypes
    first, so the callers pass that cast background and every frame has x's dtypes again. Either
    way values + base = v(N) = f(x as passed), (a), and a dtype that cannot be carried must be
    refused by name, (c), never coerced.
    """
    n = len(background)
    parts = {
        j: (x.iloc[[0] * n, j] if j in from_x else background.iloc[:, j]).reset_index(drop=True)
        for j in range(background.shape[1])
    }
    frame = pd.DataFrame(parts)
    frame.columns = background.columns
    return frame


def cast_column(column: pd.Series, dtype) -> pd.Series:
    """``column`` in ``dtype`` as the user guide's rule casts a background column (ValueError: a cell cannot be held).

    ``astype``, corrected where it is lenient: an unordered categorical dtype compares equal to
    the same categories in another order, so ``astype`` would keep the old order (the categorical
    is rebuilt instead, and a value outside its categories is an error); ``astype`` turns a missing
    cell into True for bool (NaN is truthy), and gives an object column for a categorical with
    missing cells cast to bool.
    """
    if isinstance(dtype, pd.CategoricalDtype):
        cast = pd.Series(pd.Categorical(list(column), dtype=dtype), index=column.index)
        if (cast.isna() & column.notna()).any():
            raise ValueError("a value outside the categories")
        return cast
    if isinstance(dtype, np.dtype) and dtype.kind in "biu" and column.isna().any():
        raise ValueError(f"a missing cell cannot be held in {dtype}")
    cast = column.astype(dtype)
    if dtype_key(cast.dtype) != dtype_key(dtype):
        raise ValueError(f"astype gave {cast.dtype}, not {dtype}")
    return cast


def brute_force_values(f, rows: pd.DataFrame, background: pd.DataFrame, members: list) -> np.ndarray:
    """Shapley values of v(S) = mean over background rows of f(coalition frame of S), by enumeration."""

    def value(x: pd.DataFrame, coalition: tuple) -> float:
        from_x = {j for p in coalition for j in members[p]}
        return float(np.mean(f(coalition_frame(x, background, from_x))))

    return np.array(
        [brute_force_shapley(lambda s, x=rows.iloc[[r]]: value(x, s), len(members)) for r in range(len(rows))]
    )


# ---------------------------------------------------------------- running and judging


def attempt(case: TableCase, action):
    """Run ``action``; a TypeError or ValueError passes only for a case with a suspect column, and must name one."""
    try:
        return action()
    except (TypeError, ValueError) as exc:
        suspects = case.suspects
        message = f"{type(exc).__name__}: {exc}"
        assert suspects, f"refused a table whose dtypes it must explain: {message}"
        assert any(name in str(exc) for name in suspects), f"the error names none of the columns {suspects}: {message}"
        return None


def check_efficiency(run: Run, explanation, what: str) -> None:
    """(a): values + base = f(rows as passed); the base is mean f(background as passed) where the dtypes agree.

    Where an explained column has another dtype than the background's, the game of the rows as
    passed may recode the background in the explained dtypes (a design choice), and its v(∅)
    then differs from ``expected_value_``; it must still be one number for every row.
    """
    background, rows = run.case.background(), run.case.model_rows()
    base = np.asarray(explanation.base_values, dtype=float)
    if run.case.same_dtypes or run.case.numeric_path:
        expected = float(np.mean(run.model(background)))
        np.testing.assert_allclose(
            base, expected, atol=ATOL, rtol=0, err_msg=f"{what}: base values != mean f(background)"
        )
    else:
        assert np.ptp(base) <= ATOL, f"{what}: the rows have different base values {base}"
    np.testing.assert_allclose(
        explanation.values.sum(axis=1) + base,
        run.model(rows),
        atol=ATOL,
        rtol=0,
        err_msg=f"{what}: values + base != f(X as passed)",
    )


EFFICIENT_SAMPLERS = tuple(sorted(name for name, cls in SHAPLEY_ALGORITHMS.items() if cls.efficient))


@dataclass(frozen=True)
class Run:
    """One drawn check: the table, the model, and the explainer's class and parameters (repr: code to rerun it)."""

    case: TableCase
    model: CellModel
    explainer: str
    params: dict

    def make(self):
        cls = {"PermutationShapExplainer": PermutationShapExplainer, "TopKShapley": TopKShapley}[self.explainer]
        model = CellEstimator(self.model) if self.params.get("as_estimator") else self.model
        params = {key: value for key, value in self.params.items() if key != "as_estimator"}
        return cls(model, **params, background_size=None, random_state=0, progress=False)

    def players(self) -> tuple[list, list]:
        return players(self.case.names, self.params.get("feature_groups"))

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(repr(self))

    def __repr__(self) -> str:
        params = {key: value for key, value in self.params.items() if key != "as_estimator"}
        model = "CellEstimator(model)" if self.params.get("as_estimator") else "model"
        arguments = "".join(f", {key}={value!r}" for key, value in params.items())
        return (
            f"{self.case}    model = {self.model!r}\n"
            f"    explainer = {self.explainer}({model}{arguments}, background_size=None, random_state=0, "
            "progress=False)\n    explanation = explainer.fit(background).explain(X)\n"
        )


@st.composite
def exact_runs(draw, max_columns: int = 5) -> Run:
    """The exact explainer on a table whose explained rows have the background's dtypes."""
    case = draw(tables(mismatch=False, max_columns=max_columns))
    as_estimator = draw(st.booleans())
    params = {
        "algorithm": "exact",
        "feature_groups": draw(feature_groups(case.names)),
        "allow_nan": "auto" if as_estimator else True,
        "batch_size": draw(st.sampled_from(("auto", 1, 7))),
        "as_estimator": as_estimator,
    }
    return Run(case, draw(cell_models(case.names)), "PermutationShapExplainer", params)


@st.composite
def recast_runs(draw, max_columns: int = 5) -> Run:
    """The exact explainer on a table whose first explained column draws another dtype than the background's."""
    case = draw(tables(mismatch="first", max_columns=max_columns))
    params = {
        "algorithm": "exact",
        "feature_groups": draw(feature_groups(case.names)),
        "allow_nan": True,
        "batch_size": draw(st.sampled_from(("auto", 1, 7))),
    }
    return Run(case, draw(cell_models(case.names)), "PermutationShapExplainer", params)


@st.composite
def sampler_runs(draw, max_columns: int = 5) -> Run:
    """Any exactly efficient algorithm (at a small budget) on a table whose explained dtypes may differ."""
    case = draw(tables(mismatch=True, max_columns=max_columns))
    groups = draw(feature_groups(case.names))
    n_players, n_background = len(players(case.names, groups)[0]), len(case.fit[0].cells)
    algorithm = draw(st.sampled_from(("exact", "auto", *EFFICIENT_SAMPLERS)))
    if algorithm == "exact":
        max_evals = 2**n_players
    elif algorithm == "auto":
        max_evals = "auto"
    else:
        minimum = SHAPLEY_ALGORITHMS[algorithm].minimum_evals(n_players)
        max_evals = max(2, minimum) + draw(st.integers(0, 2 * n_players))
    splits = algorithm not in ("exact", "auto") and SHAPLEY_ALGORITHMS[algorithm].draws_per_game()
    params = {
        "algorithm": algorithm,
        "max_evals": max_evals,
        "feature_groups": groups,
        "allow_nan": True,
        "batch_size": draw(st.sampled_from(("auto", 1, 7))),
        "n_jobs": draw(st.sampled_from((None, 2))),
        "background_parts": draw(st.sampled_from(("auto", 1, n_background))) if splits else "auto",
    }
    return Run(case, draw(cell_models(case.names)), "PermutationShapExplainer", params)


@st.composite
def topk_runs(draw, max_columns: int = 5) -> Run:
    """TopKShapley(prefit=True) in explain mode with an exactly efficient method, all 2^d coalitions affordable."""
    case = draw(tables(mismatch=True, max_columns=max_columns))
    groups = draw(feature_groups(case.names))
    n_players = len(players(case.names, groups)[0])
    params = {
        "prefit": True,
        "n_features_to_select": draw(st.integers(1, n_players)),
        "algorithm": draw(st.sampled_from(("leverage", "permutation"))),
        "max_evals": 2**n_players + 2,
        "t_min": 2,
        "feature_groups": groups,
        "allow_nan": True,
        "as_estimator": True,
    }
    return Run(case, draw(cell_models(case.names)), "TopKShapley", params)


def explain(run: Run):
    """Fit on the background and explain the rows as passed; None if refused as the contract allows (c)."""
    case, model = run.case, run.model
    background, rows = case.background(), case.rows()
    note(f"background dtypes: {[str(t) for t in background.dtypes]}; X dtypes: {[str(t) for t in rows.dtypes]}")
    note(f"mismatched columns: {case.mismatched}; may be refused: {case.suspects}")
    explainer = run.make()
    if attempt(case, lambda: explainer.fit(background)) is None:
        return None
    if hasattr(explainer, "expected_value_"):
        base = float(np.mean(model(background)))
        assert abs(explainer.expected_value_ - base) <= ATOL, f"fit: base value {explainer.expected_value_} != {base}"
    explanation = attempt(case, lambda: explainer.explain(rows))
    if explanation is not None:
        assert explanation.feature_names == run.players()[0]
    return explanation


def check_brute_force(run: Run, explanation, atol: float = ATOL, background: pd.DataFrame | None = None) -> None:
    """(b): the values are the brute-force Shapley values of the table as passed (as float64 on the numeric path).

    ``background``: the background the game takes, if not the one passed to fit (cast to the explained dtypes).
    """
    rows = run.case.model_rows()
    np.testing.assert_allclose(
        explanation.values,
        brute_force_values(
            run.model, rows, run.case.background() if background is None else background, run.players()[1]
        ),
        atol=atol,
        rtol=0,
        err_msg="values != brute-force Shapley values of the table as passed"
        + ("" if background is None else ", with the background cast to the explained dtypes"),
    )


# ---------------------------------------------------------------- the properties


@given(run=sampler_runs())
def test_the_models_are_functions_of_each_row_alone(run):
    """The oracle's premise: a model's output for a row does not depend on the rows it is called with."""
    for frame in (run.case.background(), run.case.rows()):
        together = run.model(frame)
        alone = np.concatenate([run.model(frame.iloc[[r]]) for r in range(len(frame))])
        np.testing.assert_array_equal(together, alone)
        np.testing.assert_array_equal(run.model(frame.iloc[::-1])[::-1], together)
    assert not run.model.problems, run.model.problems


@given(run=exact_runs())
def test_exact_values_are_the_brute_force_values_of_the_table_as_passed(run):
    """(b) and (a), the rows in the background's dtypes: exact values to 1e-10 (or datetimes refused by name)."""
    explanation = explain(run)
    if explanation is not None:
        check_efficiency(run, explanation, "exact")
        check_brute_force(run, explanation)
    assert not run.model.problems, run.model.problems


@given(run=recast_runs())
def test_other_dtypes_at_explain_recast_the_background_as_documented(run):
    """(b) with other dtypes at explain, by the user guide's rule for tables (doc/user_guide.md).

    The background's cells are cast to the explained column's dtype (``astype``), the masked rows
    carry it, and the base value is f's mean on that background; a background that cannot be cast
    is refused, naming the column.
    """
    explanation = explain(run)
    if explanation is None or run.case.same_dtypes:
        return
    if run.case.numeric_path:  # a float64 fit: the rows reach the model as float64, the background as it was
        check_efficiency(run, explanation, "exact")
        check_brute_force(run, explanation)
        return
    background, rows = run.case.background(), run.case.rows()
    cast = background.copy()
    for name in run.case.mismatched:
        try:
            cast[name] = cast_column(background[name], rows[name].dtype)
        except (TypeError, ValueError) as exc:
            raise AssertionError(f"explained, but column {name!r} of the background cannot be cast: {exc!r}") from exc
    np.testing.assert_allclose(
        explanation.base_values,
        np.mean(run.model(cast)),
        atol=ATOL,
        rtol=0,
        err_msg="base values != mean f(background cast to the explained dtypes)",
    )
    check_efficiency(run, explanation, "exact")
    check_brute_force(run, explanation, background=cast)
    assert not run.model.problems, run.model.problems


@given(run=sampler_runs())
def test_every_efficient_sampler_explains_the_rows_as_passed(run):
    """(a) for every exactly efficient algorithm, the explained dtypes sometimes not the background's; else (c)."""
    explanation = explain(run)
    if explanation is not None:
        check_efficiency(run, explanation, f"algorithm={run.params['algorithm']!r}")
    assert not run.model.problems, run.model.problems


@given(run=topk_runs())
def test_topk_explain_sums_to_the_model_on_the_rows_as_passed(run):
    """TopKShapley(prefit=True).explain: (a) for its efficient methods, (b) for Leverage SHAP on every coalition."""
    explanation = explain(run)
    if explanation is not None:
        what = f"TopKShapley(algorithm={run.params['algorithm']!r})"
        check_efficiency(run, explanation, what)
        if run.params["algorithm"] == "leverage" and run.case.same_dtypes:  # every coalition: the exact values
            check_brute_force(run, explanation, atol=1e-8)
    assert not run.model.problems, run.model.problems
