"""Benchmark: "leverage_cv" with a surrogate per background part against ``algorithm="auto"``.

What is measured
----------------
Relative RMSE (RMSE against exact values / RMS of the exact values) of the Shapley values of 6
rows, 30 background rows, mean over 3 seeds, at 5d, 10d, 20d and 50d evaluations per row, and
the coverage of the 95% intervals (``1.96 · error_std``) and the explain time:

* **auto**: ``algorithm="auto"``: Leverage SHAP split by background parts, or shared
  ``"leverage_cv"`` where the budget covers 40% of the 2^d coalitions;
* **leverage_cv**: ``algorithm="leverage_cv"`` with ``background_parts="auto"``: a surrogate per
  background part, as many parts as keep a row's surrogates within 6,000 coalitions.

The truth is ``algorithm="exact"`` (all 2^d coalitions of the same interventional game, checked
against brute force in ``tests/``). Models, on data bundled with scikit-learn or generated: a
random forest and a k-NN regressor on ``load_diabetes`` (d = 10), an MLP on
``make_friedman1(800, 10)``, a histogram gradient-boosting classifier's probability on the first
12 and 16 columns of ``load_breast_cancer``, a random forest and an MLP on
``make_friedman1(800, 16)``.

Rerun
-----
::

    python benchmarks/bench_split_control_variate.py           # about 6 minutes on 2 cores
    python benchmarks/bench_split_control_variate.py --quick   # d = 10 only, 1 seed

Results: ``benchmarks/results/bench_split_control_variate.json`` (``_quick`` with --quick); the
table of the user guide's "A surrogate per background part" is printed last.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, make_friedman1
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor
from sklearn.neighbors import KNeighborsRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_shapq import PermutationShapExplainer

RESULTS = Path(__file__).resolve().parent / "results"
BUDGETS_PER_FEATURE = (5, 10, 20, 50)


def problems(quick: bool) -> Iterator[tuple[str, Callable, np.ndarray]]:
    """Yield (name, prediction function, data) of each problem."""
    X, y = load_diabetes(return_X_y=True)
    yield "random forest, diabetes", RandomForestRegressor(50, random_state=0, n_jobs=1).fit(X, y).predict, X
    yield "k-NN, diabetes", make_pipeline(StandardScaler(), KNeighborsRegressor(10)).fit(X, y).predict, X
    mlp = MLPRegressor(hidden_layer_sizes=(64, 64), max_iter=500, random_state=0)
    Xf, yf = make_friedman1(800, 10, noise=0.5, random_state=0)
    yield "MLP, friedman", make_pipeline(StandardScaler(), mlp).fit(Xf, yf).predict, Xf
    if quick:
        return
    Xb, yb = load_breast_cancer(return_X_y=True)
    for d in (12, 16):
        booster = HistGradientBoostingClassifier(max_iter=100, random_state=0).fit(Xb[:, :d], yb)
        yield "boosted trees' probability, breast cancer", _probability(booster), Xb[:, :d]
    Xf, yf = make_friedman1(800, 16, noise=0.5, random_state=0)
    yield "random forest, friedman", RandomForestRegressor(50, random_state=0, n_jobs=1).fit(Xf, yf).predict, Xf
    mlp = MLPRegressor(hidden_layer_sizes=(64, 64), max_iter=500, random_state=0)
    yield "MLP, friedman", make_pipeline(StandardScaler(), mlp).fit(Xf, yf).predict, Xf


def _probability(classifier: object) -> Callable:
    return lambda rows: classifier.predict_proba(rows)[:, 1]  # type: ignore[attr-defined]


def measure(
    f: Callable, background: np.ndarray, rows: np.ndarray, truth: np.ndarray, budget: int, params: dict, seeds: int
) -> dict:
    """Mean relative RMSE, coverage and median time of ``seeds`` explains, and the plan they took."""
    scale = np.sqrt(np.mean(truth**2))
    errors, coverage, seconds = [], [], []
    for seed in range(seeds):
        start = time.perf_counter()
        explainer = PermutationShapExplainer(
            f, max_evals=budget, background_size=None, random_state=seed, progress=False, **params
        ).fit(background)
        explanation = explainer.explain(rows)
        seconds.append(time.perf_counter() - start)
        errors.append(float(np.sqrt(np.mean((explanation.values - truth) ** 2)) / scale))
        coverage.append(float(np.mean(np.abs(explanation.values - truth) <= 1.96 * explanation.error_std + 1e-12)))
    return {
        "rel_rmse": float(np.mean(errors)),
        "coverage95": float(np.mean(coverage)),
        "seconds": float(np.median(seconds)),
        "algorithm": explainer.algorithm_,
        "background_parts": explainer.background_parts_,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="d = 10 only, 1 seed")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    seeds = 1 if args.quick else 3
    rng = np.random.default_rng(0)
    cells, table = [], []
    for name, f, X in problems(args.quick):
        d = X.shape[1]
        order = rng.permutation(len(X))
        background, rows = X[order[:30]], X[order[30:36]]
        exact = PermutationShapExplainer(f, algorithm="exact", background_size=None, progress=False)
        truth = exact.fit(background).explain(rows).values
        shown = []
        for per_feature in BUDGETS_PER_FEATURE:
            budget = per_feature * d
            result = {
                "problem": name,
                "d": d,
                "evals_per_row": budget,
                "auto": measure(f, background, rows, truth, budget, {"algorithm": "auto"}, seeds),
                "leverage_cv": measure(f, background, rows, truth, budget, {"algorithm": "leverage_cv"}, seeds),
            }
            result["leverage_cv_over_auto"] = result["leverage_cv"]["rel_rmse"] / result["auto"]["rel_rmse"]
            result["time_ratio"] = result["leverage_cv"]["seconds"] / result["auto"]["seconds"]
            cells.append(result)
            print(json.dumps(result), flush=True)
            shown.append(f"{result['auto']['rel_rmse']:.4f} → {result['leverage_cv']['rel_rmse']:.4f}")
        table.append(f"| {name} | {d} | " + " | ".join(shown) + " |")
    print("\n| model | d | " + " | ".join(f"{b}d" for b in BUDGETS_PER_FEATURE) + " |")
    print("|---|---|" + "---|" * len(BUDGETS_PER_FEATURE))
    print("\n".join(table))
    out = RESULTS / f"bench_split_control_variate{'_quick' if args.quick else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"description": __doc__.split("\n")[0], "seeds": seeds, "cells": cells}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
