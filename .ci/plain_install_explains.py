"""CI: a plain install (no extras: no xgboost, no matplotlib) explains a scikit-learn model."""

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge

from sklearn_shapq import PermutationShapExplainer

X, y = load_diabetes(return_X_y=True)
explanation = PermutationShapExplainer(Ridge().fit(X, y), random_state=0, progress=False).fit(X[:50]).explain(X[:3])
assert np.allclose(explanation.values.sum(1) + explanation.base_values, Ridge().fit(X, y).predict(X[:3]))
print("a plain install explains a scikit-learn model:", explanation.values.shape)
