"""Explain a gradient-boosted classifier on scikit-learn's breast-cancer data and draw shap plots.

Run: ``python examples/explain_classifier.py [--out DIR]``. The explainer returns the positive
class's margin (log-odds), so values plus base value equal ``model.predict(X, output_margin=True)``.
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import shap
import xgboost
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from sklearn_shapq import PermutationShapExplainer

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="example_output")
args = parser.parse_args()

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
model = xgboost.XGBClassifier(n_estimators=100, max_depth=3, random_state=0).fit(X_train, y_train)

explainer = PermutationShapExplainer(model, max_evals=1000, background_size=100, random_state=0, progress=True)
explanation = explainer.fit(X_train).explain(X_test.iloc[:50])
margin = model.predict(X_test.iloc[:50], output_margin=True)
diagnostics = explanation.diagnostics  # what this explain call measured
print(
    f"sampler={diagnostics['sampler']}, evaluations per row={int(diagnostics['n_evals'].max())}, "
    f"model rows={diagnostics['n_model_rows']} in {diagnostics['n_model_calls']} model calls"
)
print("efficiency error:", np.abs(explanation.values.sum(1) + explanation.base_values - margin).max())
print("largest standard error:", float(explanation.error_std.max()))

out = Path(args.out)
out.mkdir(exist_ok=True)
for name, draw in {
    "classifier_beeswarm.png": lambda: shap.plots.beeswarm(explanation, show=False),
    "classifier_waterfall.png": lambda: shap.plots.waterfall(explanation[0], show=False),
    "classifier_scatter.png": lambda: shap.plots.scatter(explanation[:, "worst radius"], show=False),
}.items():
    draw()
    plt.gcf().savefig(out / name, dpi=100, bbox_inches="tight")
    plt.close("all")
print("plots in", out.resolve())
