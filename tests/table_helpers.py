"""The census-like raw table of :mod:`sklearn_shapq.datasets`, cut to five columns for brute force."""

from sklearn_shapq.datasets import make_census_pipeline as census_pipeline
from sklearn_shapq.datasets import make_census_table

__all__ = ["census_pipeline", "people"]

PEOPLE_COLUMNS = ["age", "workclass", "education", "hours", "married"]


def people(n, seed=0):
    """Ints, strings with missing entries, an ordered category, NaN floats and bools (5 columns), and a label."""
    table, y = make_census_table(n, random_state=seed)
    return table[PEOPLE_COLUMNS], y
