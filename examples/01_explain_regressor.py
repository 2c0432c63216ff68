"""
Explain a regressor trained on your own DataFrame
=================================================

The simplest use: a pandas DataFrame you build, a scikit-learn regressor trained on it, and
:class:`~sklearn_shapq.PermutationShapExplainer` to say how much each column moved each
prediction away from the average prediction. ``fit`` takes the background rows (the "average"
the values are measured against), ``explain`` the rows to explain, and it returns a
``shap.Explanation`` that shap's plots draw. The values of a row plus the base value add up to
the model's prediction for that row.

Run: ``python examples/01_explain_regressor.py``.
"""

# %%
# A table, and a model of it
# --------------------------
# Apartment prices (thousands) from six columns: the price grows with the area, the more so near the
# centre, and falls with the building's age; the floor counts only with a lift; the balcony not at all.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import shap
from sklearn.ensemble import HistGradientBoostingRegressor

from sklearn_shapq import PermutationShapExplainer

rng = np.random.default_rng(0)
n = 1000
table = pd.DataFrame(
    {
        "area_m2": rng.uniform(30, 150, n).round(),
        "distance_km": rng.uniform(0, 20, n).round(1),
        "age_years": rng.integers(0, 80, n),
        "floor": rng.integers(0, 10, n),
        "lift": rng.integers(0, 2, n),
        "balcony": rng.integers(0, 2, n),
    }
)
price = (
    4 * table["area_m2"] * np.exp(-table["distance_km"] / 15)
    - 1.5 * table["age_years"]
    + 8 * table["floor"] * table["lift"]
    + rng.normal(0, 20, n)
)
model = HistGradientBoostingRegressor(random_state=0).fit(table.iloc[:800], price.iloc[:800])
print(table.head())

# %%
# Shapley values of 100 rows
# --------------------------
# 50 rows of the training data are the background. The model is a sum of trees, so
# ``algorithm="auto"`` reads them and computes the values exactly, without sampling
# (``algorithm_`` is "tree"); for another model, the 2^6 = 64 coalitions per row would fit the
# default budget and be enumerated.
explainer = PermutationShapExplainer(model, background_size=50, random_state=0).fit(table.iloc[:800])
rows = table.iloc[800:900]
explanation = explainer.explain(rows)
error = np.abs(explanation.values.sum(1) + explanation.base_values - model.predict(rows)).max()
print(f"algorithm: {explainer.algorithm_}")
print(f"base value (the mean prediction on the background): {explainer.expected_value_:.1f}")
print(f"values + base value = prediction, up to {error:.1e}")
mean_abs = np.abs(explanation.values).mean(axis=0)
print(f"{'column':12s} {'mean |value|':>12s}")
for j in np.argsort(-mean_abs):
    print(f"{explanation.feature_names[j]:12s} {mean_abs[j]:12.2f}")

# %%
# Every row at once: a beeswarm plot
# ----------------------------------
# One dot per row and column, at its Shapley value, coloured by the column's value: a large area
# raises the price, a long distance or an old building lowers it, and the balcony, which the price
# ignores, stays near zero.
shap.plots.beeswarm(explanation, show=False)
plt.show()

# %%
# One column against its values: a scatter plot
# ---------------------------------------------
# The floor's value rises faster with a lift (red) than without (blue): the price counts floors only
# with a lift. Without one it is not zero: Shapley values split the floor × lift interaction between
# the two columns, measured against background rows of which about half have a lift.
shap.plots.scatter(explanation[:, "floor"], color=explanation[:, "lift"], show=False)
plt.show()
