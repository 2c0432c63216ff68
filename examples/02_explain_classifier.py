"""
Explain a gradient-boosted classifier
=====================================

An xgboost classifier on scikit-learn's breast-cancer data, explained by
:class:`~sklearn_shapq.PermutationShapExplainer` and drawn with shap's plots. The explainer returns
the positive class's margin (log-odds), so values plus base value equal
``model.predict(X, output_margin=True)``. The margin is a sum of trees: ``algorithm="auto"``
reads them and returns exact values (``algorithm_`` "tree", no sampled coalitions, standard errors
zero); ``algorithm="leverage_cv"`` would estimate them from model calls, with standard errors.
The probability (``output="probability"``, a sigmoid of the margin) is exact too up to 16
features or feature groups, by enumerating their coalitions; with these 30 features it is sampled.

Run: ``python examples/02_explain_classifier.py``.
"""

# %%
# Fit the model and explain 50 test rows
# --------------------------------------
import matplotlib.pyplot as plt
import numpy as np
import shap
import xgboost
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from sklearn_shapq import PermutationShapExplainer

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
model = xgboost.XGBClassifier(n_estimators=100, max_depth=3, random_state=0).fit(X_train, y_train)

explainer = PermutationShapExplainer(model, background_size=100, random_state=0)
explanation = explainer.fit(X_train).explain(X_test.iloc[:50])
margin = model.predict(X_test.iloc[:50], output_margin=True)
diagnostics = explanation.diagnostics  # what this explain call measured
print(
    f"algorithm={diagnostics['algorithm']}, evaluations per row={int(diagnostics['n_evals'].max())}, "
    f"model rows={diagnostics['n_model_rows']} in {diagnostics['n_model_calls']} model calls"
)
print("efficiency error:", np.abs(explanation.values.sum(1) + explanation.base_values - margin).max())
print("largest standard error:", float(explanation.error_std.max()))

# %%
# Every row at once: a beeswarm plot
# ----------------------------------
shap.plots.beeswarm(explanation, show=False)
plt.show()

# %%
# One row: a waterfall plot
# -------------------------
shap.plots.waterfall(explanation[0], show=False)
plt.show()

# %%
# One feature against its values: a scatter plot
# ----------------------------------------------
shap.plots.scatter(explanation[:, "worst radius"], show=False)
plt.show()
