"""Benchmark: the exact tree path of PermutationShapExplainer against shap's TreeExplainer and against sampling.

What is measured
----------------
``make_friedman1`` with ``--d`` (16) features, 2,000 rows; ``--n-bg`` (100) background rows and
``--n-explain`` (100) explained rows. Models: xgboost (100 trees of depth 6), a random forest (100
trees of depth 8), a histogram gradient boosting (100 iterations), a gradient boosting (100 trees
of depth 3), and LightGBM (100 trees of 31 leaves) where it is installed. For each:

* ours, exact: ``PermutationShapExplainer(model, background_size=None)`` (``algorithm="auto"``
  takes the tree path): median wall seconds over ``--repeats`` (numba warmed up first);
* ours, sampled: ``algorithm="leverage_cv"`` at its default budget (what ``"auto"`` samples where it
  reads no trees), one run;
* shap: ``shap.TreeExplainer(model, data=background, feature_perturbation="interventional")``,
  ``shap_values(rows, check_additivity=False)``, median over ``--repeats``;
* truth: brute force over the 2^d coalitions on the first ``--n-truth`` (3) rows, from the model's
  own predictions (d <= 16; ``bench_accuracy.brute_force_shapley``): the max |difference| of ours
  and shap's values from it;
* the efficiency error max |Σφ + base − f(x)| of ours and shap's.

Ours runs on all numba threads (2 here); shap's TreeExplainer on one.

Rerun
-----
::

    python benchmarks/bench_tree_path.py            # about 2 minutes on 2 cores
    python benchmarks/bench_tree_path.py --quick    # 20 rows, 1 repeat

Results go to ``benchmarks/results/bench_tree_path.json`` (``_quick`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import shap
import sklearn
import xgboost
from sklearn.datasets import make_friedman1
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor, RandomForestRegressor

try:
    from sklearn_shapq import PermutationShapExplainer
except ImportError:  # a checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sklearn_shapq import PermutationShapExplainer
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_accuracy import brute_force_shapley  # noqa: E402  (the benchmarks' brute force, written once)

RESULTS = Path(__file__).resolve().parent / "results"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--d", type=int, default=16)
    parser.add_argument("--n-bg", type=int, default=100)
    parser.add_argument("--n-explain", type=int, default=100)
    parser.add_argument("--n-truth", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20 rows, 1 repeat")
    return parser.parse_args()


def median_seconds(call, repeats: int) -> tuple[float, object]:
    """Median wall seconds of ``call()`` over ``repeats`` runs, and its last result."""
    seconds, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        seconds.append(time.perf_counter() - start)
    return float(np.median(seconds)), result


def main() -> None:
    args = parse_args()
    n_explain, repeats = (20, 1) if args.quick else (args.n_explain, args.repeats)
    X, y = make_friedman1(2000, args.d, noise=0.5, random_state=0)
    background, rows = X[: args.n_bg], X[args.n_bg : args.n_bg + n_explain]
    models = {
        "xgboost 100 trees depth 6": xgboost.XGBRegressor(n_estimators=100, max_depth=6, n_jobs=1, random_state=0),
        "random forest 100 trees depth 8": RandomForestRegressor(100, max_depth=8, random_state=0),
        "hist gradient boosting 100 iterations": HistGradientBoostingRegressor(max_iter=100, random_state=0),
        "gradient boosting 100 trees depth 3": GradientBoostingRegressor(n_estimators=100, random_state=0),
    }
    try:
        import lightgbm

        models["lightgbm 100 trees of 31 leaves"] = lightgbm.LGBMRegressor(n_estimators=100, verbose=-1, n_jobs=1)
    except ImportError:  # not in the bench extra's minimum
        pass
    results = []
    for name, model in models.items():
        model.fit(X, y)
        exact = PermutationShapExplainer(model, background_size=None, progress=False).fit(background)
        exact.explain(rows[:2])  # numba compiled (or loaded) before the timing
        ours_seconds, ours = median_seconds(lambda exact=exact: exact.explain(rows), repeats)
        sampled = PermutationShapExplainer(
            model, algorithm="leverage_cv", background_size=None, random_state=0, progress=False
        ).fit(background)
        sampled_seconds, _ = median_seconds(lambda sampled=sampled: sampled.explain(rows), 1)
        tree = shap.TreeExplainer(model, data=background, feature_perturbation="interventional")
        shap_seconds, shap_values = median_seconds(
            lambda tree=tree: tree.shap_values(rows, check_additivity=False), repeats
        )
        truth = brute_force_shapley(model.predict, background, rows[: args.n_truth])
        outputs = model.predict(rows).astype(np.float64)
        shap_base = float(np.ravel(tree.expected_value)[0])
        result = {
            "model": name,
            "algorithm": exact.algorithm_,
            "ours_seconds": ours_seconds,
            "sampled_leverage_cv_seconds": sampled_seconds,
            "sampled_max_evals": sampled.max_evals_,
            "shap_tree_seconds": shap_seconds,
            "shap_over_ours_seconds": shap_seconds / ours_seconds,
            "sampled_over_ours_seconds": sampled_seconds / ours_seconds,
            "ours_max_error_vs_brute_force": float(np.abs(ours.values[: args.n_truth] - truth).max()),
            "shap_max_error_vs_brute_force": float(np.abs(shap_values[: args.n_truth] - truth).max()),
            "ours_efficiency_error": float(np.abs(ours.values.sum(1) + ours.base_values - outputs).max()),
            "shap_efficiency_error": float(np.abs(shap_values.sum(1) + shap_base - outputs).max()),
        }
        results.append(result)
        print(
            f"{name:40s} ours {ours_seconds:6.2f} s ({exact.algorithm_}), shap TreeExplainer {shap_seconds:6.2f} s "
            f"({result['shap_over_ours_seconds']:.1f}x ours), leverage_cv {sampled_seconds:6.2f} s "
            f"({result['sampled_over_ours_seconds']:.0f}x); max error vs brute force: ours "
            f"{result['ours_max_error_vs_brute_force']:.1e}, shap {result['shap_max_error_vs_brute_force']:.1e}; "
            f"efficiency: ours {result['ours_efficiency_error']:.1e}, shap {result['shap_efficiency_error']:.1e}",
            flush=True,
        )
    output = RESULTS / f"bench_tree_path{'_quick' if args.quick else ''}.json"
    settings = {**vars(args), "n_explain": n_explain, "repeats": repeats}
    versions = {
        "python": platform.python_version(),
        "shap": shap.__version__,
        "xgboost": xgboost.__version__,
        "scikit-learn": sklearn.__version__,
    }
    output.write_text(json.dumps({"settings": settings, "versions": versions, "results": results}, indent=1))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
