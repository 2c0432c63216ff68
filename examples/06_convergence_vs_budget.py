"""
Error against budget: our samplers and shap's
=============================================

How fast does each permutation algorithm of :class:`~sklearn_shapq.PermutationShapExplainer`
approach the exact Shapley values of an xgboost model, against ``shap.PermutationExplainer`` at
the same number of evaluations of the value function per row? The truth is exact interventional
TreeSHAP on the same background (50 rows); the error is measured on 10 explained rows, averaged
over random seeds; the plot is relative RMSE against evaluations, log-log.

Run: ``python examples/06_convergence_vs_budget.py [--seeds N]`` (2 seeds: about 15 s on 2 cores).
"""

# %%
# A model with interactions, and its exact values
# -----------------------------------------------
import argparse

import matplotlib.pyplot as plt
import numpy as np
import shap
import xgboost
from matplotlib.ticker import NullLocator

from sklearn_shapq import PermutationShapExplainer

parser = argparse.ArgumentParser()
parser.add_argument("--seeds", type=int, default=2, help="random seeds averaged per point")
args = parser.parse_args()

rng = np.random.default_rng(0)
d = 12
X = rng.normal(size=(2000, d))
y = X @ rng.normal(size=d) + 2 * X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) * X[:, 3] + X[:, 4] * X[:, 5] * X[:, 6]
model = xgboost.XGBRegressor(n_estimators=100, max_depth=5, random_state=0).fit(X, y)
background, rows = X[:50], X[-10:]
reference = shap.TreeExplainer(model, data=background, feature_perturbation="interventional")(rows).values
scale = np.sqrt(np.mean(reference**2))
budgets = [2 * d + 1, 4 * d + 2, 10 * d, 25 * d, 60 * d]


def relative_rmse(values: np.ndarray) -> float:
    """RMSE against the exact values, relative to their root mean square."""
    return float(np.sqrt(np.mean((values - reference) ** 2)) / scale)


# %%
# Every algorithm at every budget
# ---------------------------------
curves = {}
for algorithm in ("mc", "antithetic", "orthogonal", "sobol", "herding", "sbq"):
    curves[algorithm] = [
        np.mean(
            [
                relative_rmse(
                    PermutationShapExplainer(
                        model,
                        algorithm=algorithm,
                        max_evals=budget,
                        random_state=seed,
                        background_size=None,
                        progress=False,
                    )
                    .fit(background)
                    .shap_values(rows)
                )
                for seed in range(args.seeds)
            ]
        )
        for budget in budgets
    ]
masker = shap.maskers.Independent(background, max_samples=len(background))
curves["shap.PermutationExplainer"] = [
    np.mean(
        [
            relative_rmse(
                shap.PermutationExplainer(model.predict, masker, seed=seed)(rows, max_evals=budget, silent=True).values
            )
            for seed in range(args.seeds)
        ]
    )
    for budget in budgets
]
print("relative RMSE against exact TreeSHAP, by evaluations of v per row:")
print(f"{'algorithm':26s}", " ".join(f"{budget:>7d}" for budget in budgets))
for name, errors in curves.items():
    print(f"{name:26s}", " ".join(f"{error:>7.4f}" for error in errors))

# %%
# Relative RMSE against evaluations per row
# -----------------------------------------
fig, ax = plt.subplots(figsize=(6.5, 4.5))
for name, errors in curves.items():
    ax.loglog(budgets, errors, marker="o", linestyle="--" if name.startswith("shap") else "-", label=name)
ax.set_xticks(budgets, labels=[str(budget) for budget in budgets])
ax.xaxis.set_minor_locator(NullLocator())
ax.set_xlabel("evaluations of v per row")
ax.set_ylabel("relative RMSE vs exact TreeSHAP")
ax.legend()
plt.show()
