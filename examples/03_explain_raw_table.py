"""
Explain a model of a raw table
==============================

String columns with missing entries, a category, NaN and bools, explained as they are. The table
is generated (census-like, no download). The model is a Pipeline that encodes the table itself
(OneHotEncoder on strings and the category, SimpleImputer + StandardScaler on numbers), so the
explainer works on the raw columns: masked rows take whole cells from background rows and reach
the model as DataFrames with the original dtypes. Then the two columns of a person's job are
explained as one group, and the rows are clustered by their Shapley values in a Pipeline.

Run: ``python examples/03_explain_raw_table.py``.
"""

# %%
# The table and its model
# -----------------------
import warnings

import matplotlib.pyplot as plt
import numpy as np
import shap
from sklearn.cluster import KMeans
from sklearn.pipeline import make_pipeline

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.datasets import make_census_pipeline, make_census_table

table, y = make_census_table(2000, random_state=0)
print(table.head())
print("dtypes:", dict(table.dtypes.astype(str)), "missing cells:", int(table.isna().sum().sum()))
model = make_census_pipeline(table, y)

# %%
# Shapley values of the raw columns
# ---------------------------------
explainer = PermutationShapExplainer(model, random_state=0).fit(table.iloc[:100])
explanation = explainer.explain(table.iloc[100:300])
error = np.abs(explanation.values.sum(1) + explanation.base_values - model.decision_function(table.iloc[100:300]))
print(f"{explainer.algorithm_} Shapley values of 200 rows; efficiency error {error.max():.1e}")
print("row 0:", dict(zip(explanation.feature_names, explanation.display_data[0], strict=True)))
print("its values:", dict(zip(explanation.feature_names, explanation.values[0].round(3).tolist(), strict=True)))

# %%
# A feature group, and clusters of rows in Shapley space
# ------------------------------------------------------
grouped = PermutationShapExplainer(model, feature_groups={"job": ["workclass", "occupation"]}, random_state=0)
job = grouped.fit(table.iloc[:100]).explain(table.iloc[100:300])
print("with a group:", job.feature_names, "row 0:", job.values[0].round(3))

clusters = make_pipeline(
    PermutationShapExplainer(model, random_state=0, progress=False), KMeans(3, n_init=5, random_state=0)
)
labels = clusters.fit(table.iloc[:300]).predict(table.iloc[300:400])
print("clusters of rows in Shapley space:", np.bincount(labels))

# %%
# Every row at once: a beeswarm
# -----------------------------
# Colours follow ``data``: numbers by value, a category by its declared order, bools 0/1; string
# columns (workclass, occupation) have no order, their ``data`` is NaN and their dots are grey
# (numpy, inside shap, warns "All-NaN slice" as it scales their colours: expected, so ignored here).
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "All-NaN slice encountered", RuntimeWarning)
    shap.plots.beeswarm(explanation, show=False)
plt.show()

# %%
# One row's waterfall, with its string cells
# ------------------------------------------
# The waterfall labels each value with the row's cell (``display_data``), strings included.
shap.plots.waterfall(explanation[0], show=False)
plt.show()

# %%
# A category column's values against its levels
# ---------------------------------------------
shap.plots.scatter(explanation[:, "education"], show=False)
plt.show()
