"""Generated data for the examples, the demo and the benchmarks: no download needed."""

from sklearn_shapq.datasets._census_table import make_census_pipeline, make_census_table

__all__ = ["make_census_pipeline", "make_census_table"]
