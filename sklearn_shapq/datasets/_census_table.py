"""A generated census-like raw table for the demo, the example and the benchmark (no download)."""

from __future__ import annotations

import numpy as np


def make_census_table(n_rows: int = 2000, random_state: int = 0) -> tuple:
    """Return a table like the adult census one, and a binary target that depends on most columns.

    Columns: ``age`` (int), ``workclass`` (strings, 10% missing), ``education`` (ordered
    category), ``occupation`` (strings), ``hours`` (float, 15% NaN), ``married`` (bool),
    ``capital`` (float).

    Returns the table (n_rows, 7) and y (n_rows,).

    Examples
    --------
    >>> table, y = make_census_table(5)
    >>> list(table.columns), table.shape, y.shape
    (['age', 'workclass', 'education', 'occupation', 'hours', 'married', 'capital'], (5, 7), (5,))
    """
    import pandas as pd

    rng = np.random.default_rng(random_state)
    table = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n_rows),
            "workclass": pd.Series(rng.choice(["private", "self", "gov", None], n_rows, p=[0.6, 0.15, 0.15, 0.1])),  # type: ignore[arg-type]
            "education": pd.Categorical(
                rng.choice(["school", "college", "bachelor", "master"], n_rows),
                categories=["school", "college", "bachelor", "master"],
                ordered=True,
            ),
            "occupation": pd.Series(rng.choice(["sales", "tech", "care", "craft", "admin"], n_rows)),
            "hours": np.where(rng.random(n_rows) < 0.15, np.nan, rng.normal(40, 8, n_rows)),
            "married": rng.random(n_rows) < 0.5,
            "capital": rng.exponential(1000, n_rows),
        }
    )
    score = (
        table.age / 30
        + (table.workclass == "self")
        + table.education.cat.codes / 2
        + (table.occupation == "tech")
        + table.married
        + np.nan_to_num(table.hours - 40) / 10
    )
    return table, (score + rng.normal(0, 0.5, n_rows) > score.median()).astype(int).to_numpy()


def make_census_pipeline(table, y):  # noqa: ANN001, ANN201
    """Return a Pipeline that takes the raw table, fitted: one-hot strings, imputed numbers, logistic regression.

    Columns are picked by dtype, so any subset of the census table's columns works.

    Examples
    --------
    >>> table, y = make_census_table(200)
    >>> model = make_census_pipeline(table[["age", "workclass", "married"]], y)
    >>> model.predict_proba(table[["age", "workclass", "married"]].iloc[:2]).shape
    (2, 2)
    """
    from pandas.api.types import is_bool_dtype, is_numeric_dtype
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    numbers = [c for c, t in table.dtypes.items() if is_bool_dtype(t) or is_numeric_dtype(t)]
    encode = ColumnTransformer(
        [
            ("categories", OneHotEncoder(handle_unknown="ignore"), [c for c in table.columns if c not in numbers]),
            ("numbers", make_pipeline(SimpleImputer(), StandardScaler()), numbers),
        ]
    )
    return make_pipeline(encode, LogisticRegression(max_iter=1000)).fit(table, y)
