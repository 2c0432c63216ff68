"""Benchmark: error against exact interventional TreeSHAP versus budget, for every sampler.

What is measured
----------------
Three xgboost models (defaults: 100 trees of depth 6; ``n_jobs=2``) on data bundled with
scikit-learn or generated, following the paper's setup (spec: permutation_sampling.md §4):

* ``regression_d10``: ``make_regression(1000, 10, noise=0.1, random_state=47)`` (the paper's
  make_regression), ``XGBRegressor``;
* ``breast_cancer_d30``: ``load_breast_cancer`` (30 features), ``XGBClassifier``, margin output;
* ``classification_d60``: ``make_classification(2000, 60, n_informative=20, random_state=0)``,
  ``XGBClassifier``, margin output.

Background = the first 100 rows, explained rows = the next 10. The reference is
``shap.TreeExplainer(model, background, feature_perturbation="interventional")``, the exact value
of the game every sampler estimates. For each budget (evaluations of v per explained row) and each
of ``--seeds`` seeds, every sampler of ``PermutationShapExplainer`` runs at that budget (samplers
whose minimum budget is larger are skipped), and ``shap.PermutationExplainer`` runs at the same
``max_evals``. The error of one run is the RMSE over the 10 × d values (the paper's Eq. 15,
square-rooted); the table gives its mean and standard error over seeds, and a log-log plot is
written next to the JSON.

Targets (issue 3): at d = 10, SBQ < herding < {sobol, orthogonal} < antithetic < mc at budgets of
at least 180 orderings; orthogonal never worse than antithetic beyond noise (2 standard errors);
the best sampler reaches shap's RMSE at its default ``max_evals=500`` with at most a third of the
evaluations (budget <= 166). The script prints each check.

Rerun
-----
::

    python benchmarks/bench_convergence.py            # full run, 25 seeds (about 45 min on 2 cores)
    python benchmarks/bench_convergence.py --quick    # smoke run: 2 seeds, d = 10 only, 2 budgets (_quick.json)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings

import numpy as np
import shap
import sklearn
import xgboost
from sklearn.datasets import load_breast_cancer, make_classification, make_regression

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.algorithms import SHAPLEY_ALGORITHMS

import plot_results

SAMPLERS = ("mc", "antithetic", "orthogonal", "sobol", "herding", "sbq", "owen", "owen_halved", "stratified")
SHAP_DEFAULT_EVALS = 500


def problems() -> dict:
    """Name → function building (X, model, budgets in evaluations per row); only chosen problems are built."""
    params = {"n_jobs": 2, "random_state": 0}

    def fitted(model, data):
        X, y = data
        return X, model.fit(X, y)

    return {
        # budgets 2 + n (d − 1) for n orderings: d=10: 18, 50, 180; d=30: 5, 20, 50; d=60: 2, 20
        "regression_d10": lambda: (
            *fitted(xgboost.XGBRegressor(**params), make_regression(1000, 10, noise=0.1, random_state=47)),
            [164, 452, 1622],
        ),
        "breast_cancer_d30": lambda: (
            *fitted(xgboost.XGBClassifier(**params), load_breast_cancer(return_X_y=True)),
            [147, 582, 1452],
        ),
        "classification_d60": lambda: (
            *fitted(xgboost.XGBClassifier(**params), make_classification(2000, 60, n_informative=20, random_state=0)),
            [120, 1182],
        ),
    }


def run_problem(name: str, X: np.ndarray, model, budgets: list[int], seeds: int) -> dict:
    background, explained = X[:100], X[100:110]
    d = X.shape[1]
    truth = shap.TreeExplainer(model, background, feature_perturbation="interventional").shap_values(explained)
    truth = np.asarray(truth).reshape(len(explained), d)
    predict = model.predict if isinstance(model, xgboost.XGBRegressor) else _margin(model)
    rows = []
    for budget in sorted(set(budgets) | {SHAP_DEFAULT_EVALS}):
        methods = [*SAMPLERS, "shap"] if budget != SHAP_DEFAULT_EVALS or budget in budgets else ["shap"]
        for method in methods:
            # shap refuses < 2d + 1
            minimum = 2 * d + 1 if method == "shap" else SHAPLEY_ALGORITHMS[method].minimum_evals(d)
            if budget < minimum:
                continue
            errors, evals, seconds = [], 0, []
            for seed in range(seeds):
                start = time.perf_counter()
                if method == "shap":
                    masker = shap.maskers.Independent(background, max_samples=len(background))
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        values = shap.PermutationExplainer(predict, masker, seed=seed)(
                            explained, max_evals=budget
                        ).values
                    evals = budget
                else:
                    explainer = PermutationShapExplainer(
                        model,
                        algorithm=method,
                        max_evals=budget,
                        background_size=None,
                        random_state=seed,
                        progress=False,
                    ).fit(background)
                    explanation = explainer.explain(explained)
                    values = explanation.values
                    evals = int(np.max(explanation.diagnostics["n_evals"]))
                seconds.append(time.perf_counter() - start)
                errors.append(float(np.sqrt(np.mean((np.asarray(values).reshape(truth.shape) - truth) ** 2))))
            row = {
                "problem": name,
                "d": d,
                "budget": budget,
                "method": method,
                "evals_used": int(evals),
                "rmse_mean": float(np.mean(errors)),
                "rmse_se": float(np.std(errors, ddof=1) / np.sqrt(len(errors))) if len(errors) > 1 else float("nan"),
                "seconds_median": float(np.median(seconds)),
            }
            rows.append(row)
            print(f"{name:20s} {budget:5d} {method:12s} rmse {row['rmse_mean']:.5f} ± {row['rmse_se']:.5f}", flush=True)
    return {"rows": rows, "truth_rms": float(np.sqrt(np.mean(truth**2)))}


def _margin(model):
    booster = model.get_booster()
    return lambda Z: booster.inplace_predict(Z, predict_type="margin")


def checks(results: dict) -> list[str]:
    """The issue's targets, as printed verdicts."""
    lines = []
    for name, result in results.items():
        table = {(r["budget"], r["method"]): r for r in result["rows"]}
        d = result["rows"][0]["d"]
        budgets = sorted({b for b, m in table if m != "shap" and (b, "mc") in table})
        for budget in budgets:
            anti, orth = table.get((budget, "antithetic")), table.get((budget, "orthogonal"))
            if anti and orth:
                noise = 2 * np.hypot(anti["rmse_se"], orth["rmse_se"])
                ok = orth["rmse_mean"] <= anti["rmse_mean"] + noise
                lines.append(
                    f"{name} budget {budget}: orthogonal {orth['rmse_mean']:.5f} vs antithetic "
                    f"{anti['rmse_mean']:.5f} -> {'ok' if ok else 'WORSE'}"
                )
            n_orderings = (budget - 2) // (d - 1)
            if d <= 10 and n_orderings >= 180:
                order = ["sbq", "herding", "sobol", "orthogonal", "antithetic", "mc"]
                means = {m: table[(budget, m)]["rmse_mean"] for m in order if (budget, m) in table}
                ranked = sorted(means, key=means.get)
                lines.append(f"{name} budget {budget} ({n_orderings} orderings) ranking: {' < '.join(ranked)}")
        shap_default = table.get((SHAP_DEFAULT_EVALS, "shap"))
        if shap_default:
            cheap = [r for r in result["rows"] if r["method"] != "shap" and r["budget"] <= SHAP_DEFAULT_EVALS / 3]
            if cheap:
                best = min(cheap, key=lambda r: r["rmse_mean"])
                ok = best["rmse_mean"] <= shap_default["rmse_mean"]
                lines.append(
                    f"{name}: shap at {SHAP_DEFAULT_EVALS} evals rmse {shap_default['rmse_mean']:.5f}; best at "
                    f"<= {SHAP_DEFAULT_EVALS // 3} evals: {best['method']} ({best['budget']}) "
                    f"{best['rmse_mean']:.5f} -> {'ok' if ok else 'not reached'}"
                )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=25)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--problems", nargs="*", default=None)
    parser.add_argument("--output", default=None, help="default benchmarks/results/bench_convergence[_quick].json")
    args = parser.parse_args()
    suffix = "_quick" if args.quick else ""
    args.output = args.output or f"benchmarks/results/bench_convergence{suffix}.json"
    chosen = problems()
    if args.quick:
        build_d10 = chosen["regression_d10"]

        def quick() -> tuple:
            X, model, budgets = build_d10()
            return X, model, budgets[:2]

        chosen, args.seeds = {"regression_d10": quick}, 2
    elif args.problems:
        chosen = {name: chosen[name] for name in args.problems}
    start = time.perf_counter()
    results = {}
    for name, build in chosen.items():
        results[name] = run_problem(name, *build(), seeds=args.seeds)
        write(results, args, start)
    print("\n".join(write(results, args, start)))
    plot_results.convergence(results).savefig(os.path.splitext(args.output)[0] + ".png", dpi=110)


def write(results: dict, args: argparse.Namespace, start: float) -> list[str]:
    """Write the results so far (and their checks) as JSON; return the checks."""
    verdicts = checks(results)
    out = {
        "seeds": args.seeds,
        "seconds": time.perf_counter() - start,
        "versions": {
            "python": sys.version.split()[0],
            "numpy": np.__version__,
            "shap": shap.__version__,
            "xgboost": xgboost.__version__,
            "sklearn": sklearn.__version__,
            "machine": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
        },
        "results": results,
        "checks": verdicts,
    }
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as fh:
        json.dump(out, fh, indent=1)
    print(f"wrote {args.output} after {out['seconds']:.0f} s", flush=True)
    return verdicts


if __name__ == "__main__":
    main()
