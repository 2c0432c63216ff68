"""A small census-like raw table (strings with missing entries, a category, NaN floats, bools) and its model."""

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler


def people(n, seed=0):
    """A small census-like table: ints, strings with missing entries, an ordered category, NaN floats, bools."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "workclass": pd.Series(
                rng.choice(["private", "self", "gov", None], n, p=[0.5, 0.2, 0.2, 0.1]), dtype=object
            ),
            "education": pd.Categorical(
                rng.choice(["hs", "bsc", "msc"], n), categories=["hs", "bsc", "msc"], ordered=True
            ),
            "hours": np.where(rng.random(n) < 0.15, np.nan, rng.normal(40, 8, n)),
            "married": rng.random(n) < 0.5,
        }
    )
    score = frame.age / 40 + (frame.workclass == "self") + frame.married + (frame.education == "msc")
    return frame, (score + rng.normal(0, 0.3, n) > 2.0).astype(int)


def census_pipeline(frame, y):
    encode = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore"), ["workclass", "education"]),
            ("num", make_pipeline(SimpleImputer(), StandardScaler()), ["age", "hours", "married"]),
        ]
    )
    return make_pipeline(encode, LogisticRegression()).fit(frame, y)
