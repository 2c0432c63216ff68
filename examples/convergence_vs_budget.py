"""Error against budget: our samplers vs shap.PermutationExplainer, on an xgboost model.

Run: ``python examples/convergence_vs_budget.py [--out DIR] [--seeds N]``. Draws a log-log plot of
relative RMSE (against exact interventional TreeSHAP on the same background) against evaluations
of the value function per row.
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import shap
import xgboost

from sklearn_shapq import PermutationShapExplainer

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="example_output")
parser.add_argument("--seeds", type=int, default=3)
args = parser.parse_args()

rng = np.random.default_rng(0)
d = 12
X = rng.normal(size=(2000, d))
y = X @ rng.normal(size=d) + 2 * X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) * X[:, 3] + X[:, 4] * X[:, 5] * X[:, 6]
model = xgboost.XGBRegressor(n_estimators=100, max_depth=5, random_state=0).fit(X, y)
background, rows = X[:50], X[-20:]
reference = shap.TreeExplainer(model, data=background, feature_perturbation="interventional")(rows).values
scale = np.sqrt(np.mean(reference**2))

budgets = [2 * d + 1, 4 * d + 2, 10 * d, 25 * d, 60 * d]
curves = {}
for sampler in ("mc", "antithetic", "orthogonal", "sobol", "herding", "sbq"):
    curves[sampler] = [
        np.mean(
            [
                np.sqrt(
                    np.mean(
                        (
                            PermutationShapExplainer(
                                model,
                                sampler=sampler,
                                max_evals=b,
                                random_state=s,
                                background_size=None,
                                progress=False,
                            )
                            .fit(background)
                            .shap_values(rows)
                            - reference
                        )
                        ** 2
                    )
                )
                / scale
                for s in range(args.seeds)
            ]
        )
        for b in budgets
    ]
masker = shap.maskers.Independent(background, max_samples=len(background))
curves["shap.PermutationExplainer"] = [
    np.mean(
        [
            np.sqrt(
                np.mean(
                    (
                        shap.PermutationExplainer(model.predict, masker, seed=s)(rows, max_evals=b, silent=True).values
                        - reference
                    )
                    ** 2
                )
            )
            / scale
            for s in range(args.seeds)
        ]
    )
    for b in budgets
]
for name, errors in curves.items():
    plt.loglog(budgets, errors, marker="o", label=name)
    print(name, " ".join(f"{e:.4f}" for e in errors))
plt.xlabel("evaluations of v per row")
plt.ylabel("relative RMSE vs exact TreeSHAP")
plt.legend()
out = Path(args.out)
out.mkdir(exist_ok=True)
plt.savefig(out / "convergence.png", dpi=100, bbox_inches="tight")
print("plot in", (out / "convergence.png").resolve())
