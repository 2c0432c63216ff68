"""Explain a model of a raw table: string columns with missing entries, a category, NaN, bools.

Run: ``python examples/explain_raw_table.py [--out DIR]``. The table is generated (census-like,
no download). The model is a Pipeline that encodes the table itself (OneHotEncoder on strings
and the category, SimpleImputer + StandardScaler on numbers), so the explainer works on the raw
columns: masked rows take whole cells from background rows and reach the model as DataFrames
with the original dtypes. Then the two columns of a person's job are explained as one group, and
the rows are clustered by their Shapley values in a Pipeline.
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import shap
from sklearn.cluster import KMeans
from sklearn.pipeline import make_pipeline

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.datasets import make_census_pipeline, make_census_table

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="example_output")
args = parser.parse_args()

table, y = make_census_table(2000, random_state=0)
print(table.head(), "\n")
print("dtypes:", dict(table.dtypes.astype(str)), "missing cells:", int(table.isna().sum().sum()))
model = make_census_pipeline(table, y)

explainer = PermutationShapExplainer(model, random_state=0).fit(table.iloc[:100])
explanation = explainer.explain(table.iloc[100:300])
error = np.abs(explanation.values.sum(1) + explanation.base_values - model.decision_function(table.iloc[100:300]))
print(f"\n{explainer.sampler_} Shapley values of 200 rows; efficiency error {error.max():.1e}")
print("row 0:", dict(zip(explanation.feature_names, explanation.display_data[0], strict=True)))
print("its values:", dict(zip(explanation.feature_names, explanation.values[0].round(3).tolist(), strict=True)))

grouped = PermutationShapExplainer(model, feature_groups={"job": ["workclass", "occupation"]}, random_state=0)
job = grouped.fit(table.iloc[:100]).explain(table.iloc[100:300])
print("\nwith a group:", job.feature_names, "row 0:", job.values[0].round(3))

clusters = make_pipeline(
    PermutationShapExplainer(model, random_state=0, progress=False), KMeans(3, n_init=5, random_state=0)
)
labels = clusters.fit(table.iloc[:300]).predict(table.iloc[300:400])
print("\nclusters of rows in Shapley space:", np.bincount(labels))

out = Path(args.out)
out.mkdir(parents=True, exist_ok=True)
for name, draw in {
    "table_beeswarm.png": lambda: shap.plots.beeswarm(explanation, show=False),
    "table_waterfall.png": lambda: shap.plots.waterfall(explanation[0], show=False),
    "table_scatter_workclass.png": lambda: shap.plots.scatter(explanation[:, "workclass"], show=False),
}.items():
    draw()
    plt.gcf().savefig(out / name, dpi=110, bbox_inches="tight")
    plt.close("all")
    print("wrote", out / name)
