"""Benchmark: games split by parts of the background against shared coalitions, on many model families.

What is measured
----------------
Relative RMSE (against exact values from ``algorithm="exact"``, d <= 12; relative to the RMS of the
exact values, or to the spread of the model's output on the background where they are all 0) of the Shapley values of 8
explained rows, 50 background rows, mean over 6 seeds, at 5d and 10d evaluations per row (the
same model rows, 50 per evaluation, split or not) of:

* ``split``: Leverage SHAP with ``background_parts="auto"`` (one part per background row at d <= 10;
  25 parts at d = 12);
* ``shared``: Leverage SHAP with ``background_parts=1`` (every coalition against the whole
  background, as shap and shapiq evaluate it);
* ``shared cv``: ``"leverage_cv"`` (the cross-fitted control variate, shared), the default before
  the split;
* ``split alone``: ``split`` with every part drawing its coalitions from its own key alone, as before
  2026-11-27 (the parts of a row no longer share out each size class: ``spread_over_parts`` off);

on a random forest, an MLP, a logistic regression (probability), a histogram gradient boosting
model, k-nearest neighbours (all scikit-learn, on bundled or generated data), a smooth polynomial
model with sin and exp terms, and a constructed model on which the split loses: f = x0 x1 x2 x7
with background rows in pairs that differ only in x7 = ±1 and explained rows with x7 = 0, so that
each background row's game has a large fourth-order term that cancels in their mean (every exact
value is 0; the shared estimate is exact, the split one is not).

Rerun
-----
::

    python benchmarks/bench_background_parts.py      # about 25 minutes on 2 shared cores

Results: ``benchmarks/results/bench_background_parts.json``.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.algorithms import _leverage as leverage_module

RESULTS = Path(__file__).parent / "results"
SEEDS, BUDGETS_PER_FEATURE = 6, (5, 10)
ESTIMATORS = {
    "split": ("leverage", "auto"),
    "shared": ("leverage", 1),
    "shared cv": ("leverage_cv", 1),
    "split alone": ("leverage", "auto"),
}
SPREAD_CLASSES = leverage_module.class_coalitions


@contextlib.contextmanager
def parts_drawn_alone(label: str) -> Iterator[None]:
    """For "split alone", every part draws its classes from its own key (the row's parts not shared out)."""
    if label == "split alone":
        leverage_module.class_coalitions = lambda keys, d, pairs, parts=None: SPREAD_CLASSES(keys, d, pairs)
    try:
        yield
    finally:
        leverage_module.class_coalitions = SPREAD_CLASSES


def smooth_polynomial(Z: np.ndarray) -> np.ndarray:
    """Interactions of order 2 and 3 through sin, a product and exp (d = 8)."""
    return np.sin(Z[:, 0] * Z[:, 1]) + Z[:, 2] * Z[:, 3] * Z[:, 4] + Z[:, 5] ** 2 + np.exp(Z[:, 6] * Z[:, 7] / 2)


def cancelling_product(Z: np.ndarray) -> np.ndarray:
    """x0 x1 x2 x7: with x7 = 0 and background x7 = ±1 in pairs, its 4th-order term cancels in the mean game."""
    return Z[:, 0] * Z[:, 1] * Z[:, 2] * Z[:, 7]


def problems() -> Iterator[tuple[str, Callable | object, np.ndarray, np.ndarray, str]]:
    """(name, model, background (50 rows), explained rows (8), output) of each problem."""
    Xd, yd = load_diabetes(return_X_y=True)
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xf, yf = make_friedman1(1000, 10, noise=0.5, random_state=0)
    scaled = StandardScaler()
    yield "random forest, diabetes", RandomForestRegressor(100, max_depth=8, random_state=0).fit(Xd, yd), Xd, "auto"
    mlp = MLPRegressor(hidden_layer_sizes=(64, 64), max_iter=2000, random_state=0)
    yield "MLP, diabetes", make_pipeline(scaled, mlp).fit(Xd, yd), Xd, "auto"
    logistic = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(Xb[:, :12], yb)
    yield "logistic (probability), breast cancer 12", logistic, Xb[:, :12], "probability"
    yield "hist gradient boosting, friedman", HistGradientBoostingRegressor(random_state=0).fit(Xf, yf), Xf, "auto"
    knn = make_pipeline(StandardScaler(), KNeighborsRegressor(10)).fit(Xd, yd)
    yield "k-NN, diabetes", knn, Xd, "auto"
    yield "smooth polynomial, d=8", smooth_polynomial, np.random.default_rng(0).normal(size=(200, 8)), "auto"
    rng = np.random.default_rng(1)
    pairs = rng.normal(size=(25, 8)).repeat(2, axis=0)
    pairs[:, 7] = np.tile([1.0, -1.0], 25)
    rows = rng.normal(size=(8, 8))
    rows[:, 7] = 0.0
    yield "constructed: cancelling product", cancelling_product, np.vstack([pairs, rows]), "auto"


def relative_error(values: np.ndarray, truth: np.ndarray, scale: float) -> float:
    return float(np.sqrt(np.mean((values - truth) ** 2)) / scale)


def main() -> None:
    warnings.simplefilter("ignore")
    lines = []
    for name, model, X, output in problems():
        background, rows, d = X[:50], X[50:58], X.shape[1]
        common = {"background_size": None, "output": output, "progress": False}
        exact = PermutationShapExplainer(model, algorithm="exact", **common).fit(background).explain(rows).values
        scale = float(np.sqrt(np.mean(exact**2))) or float(np.std(model_output(model, background, output)))
        for per_feature in BUDGETS_PER_FEATURE:
            line = {"problem": name, "d": d, "budget": per_feature * d}
            for label, (sampler, parts) in ESTIMATORS.items():
                errors = []
                for seed in range(SEEDS):
                    explainer = PermutationShapExplainer(
                        model,
                        algorithm=sampler,
                        max_evals=per_feature * d,
                        background_parts=parts,
                        random_state=seed,
                        **common,
                    ).fit(background)
                    with parts_drawn_alone(label):
                        errors.append(relative_error(explainer.explain(rows).values, exact, scale))
                line[label] = float(np.mean(errors))
            for other in ("shared cv", "shared", "split alone"):  # None where the other is exact
                line[f"split_over_{other.replace(' ', '_')}"] = line["split"] / line[other] if line[other] else None
            lines.append(line)
            print(
                f"{name:42s} B={line['budget']:4d}  "
                + "  ".join(f"{label} {line[label]:.4f}" for label in ESTIMATORS)
                + f"  split/shared cv {line['split_over_shared_cv']}  split/shared {line['split_over_shared']}"
                + f"  split/split alone {line['split_over_split_alone']}",
                flush=True,
            )
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "bench_background_parts.json"
    path.write_text(json.dumps({"seeds": SEEDS, "results": lines}, indent=2))
    print(f"wrote {path}")


def model_output(model: Callable | object, rows: np.ndarray, output: str) -> np.ndarray:
    """The explained output on ``rows`` (its spread on the background scales the error where every exact value is 0)."""
    if callable(model) and not hasattr(model, "predict"):
        return model(rows)
    return model.predict_proba(rows)[:, 1] if output == "probability" else model.predict(rows)


if __name__ == "__main__":
    main()
