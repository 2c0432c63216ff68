"""Benchmark: the exact paths through a link (probabilities, log-odds) against shap's TreeExplainer and sampling.

What is measured
----------------
``make_classification`` with ``--d`` (12) features, 2,000 rows; ``--n-bg`` (100) background rows and
``--n-explain`` (100) explained rows. Models and outputs, each the sigmoid or log-odds of a sum:
a histogram gradient boosting classifier's probability (100 iterations), xgboost's (100 trees of
depth 6), LightGBM's (100 trees of 31 leaves) where installed, a random forest classifier's default
log-odds (100 trees of depth 8), a logistic regression's probability (after a StandardScaler), a
k-NN classifier's probability (k = 10, scaled; the neighbours path, no link but enumerated too), and an
isolation forest's score (100 trees; its ``decision_function``, −2^(−mean path length / c(ψ)) − offset), a
LightGBM classifier that reads the first three columns, codes 0-19, as categories (``categorical_feature=``),
and three MLP classifiers' probabilities (after a StandardScaler; the network path): scikit-learn's default
(100,) units, (64, 32) and (64, 64) (near the path's work bound at d = 12). For each:

* ours, exact: ``PermutationShapExplainer(model, output=..., background_size=None)``
  (``algorithm="auto"`` takes the tree, linear, neighbours or network path and enumerates the 2^d
  coalitions of each pair of rows): median wall seconds over ``--repeats`` (numba warmed up first);
* ours, sampled: ``algorithm="leverage_cv"`` at its default budget (what ``"auto"`` took before),
  one run;
* shap: ``shap.TreeExplainer(model, data=background, feature_perturbation="interventional",
  model_output="probability")`` where it takes the model (its error message where not), median over
  ``--repeats`` (not on the isolation forest, whose values shap gives in path lengths, not its score);
* truth: brute force over the 2^d coalitions on the first ``--n-truth`` (3) rows from the model's own
  outputs (``bench_accuracy.brute_force_shapley``): the max |difference| of each from it.

Ours runs on all numba threads (2 here); shap's TreeExplainer on one.

Rerun
-----
::

    python benchmarks/bench_linked_paths.py            # about 3 minutes on 2 cores
    python benchmarks/bench_linked_paths.py --quick    # 20 rows, 1 repeat
    python benchmarks/bench_linked_paths.py --models MLP --output bench_linked_paths_networks.json

Results go to ``benchmarks/results/bench_linked_paths.json`` (``_quick`` with ``--quick``; ``--output`` names
another file; ``--models`` keeps the models whose name contains one of its words).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

import numpy as np
import shap
import sklearn
import xgboost
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier, IsolationForest, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

try:
    from sklearn_shapq import PermutationShapExplainer
except ImportError:  # a checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sklearn_shapq import PermutationShapExplainer
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_tree_path import median_seconds  # noqa: E402

from bench_accuracy import brute_force_shapley  # noqa: E402  (the benchmarks' brute force, written once)

RESULTS = Path(__file__).resolve().parent / "results"
CLIP = 1e-12


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--d", type=int, default=12)
    parser.add_argument("--n-bg", type=int, default=100)
    parser.add_argument("--n-explain", type=int, default=100)
    parser.add_argument("--n-truth", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20 rows, 1 repeat")
    parser.add_argument("--models", nargs="*", help="keep the models whose name contains one of these")
    parser.add_argument("--output", help="the JSON's name under benchmarks/results/")
    return parser.parse_args()


def probability(model):
    return lambda rows: model.predict_proba(rows)[:, 1]


def log_odds(model):
    def predict(rows):
        p = np.clip(model.predict_proba(rows)[:, 1], CLIP, 1 - CLIP)
        return np.log(p / (1 - p))

    return predict


def main() -> None:
    args = parse_args()
    n_explain, repeats = (20, 1) if args.quick else (args.n_explain, args.repeats)
    X, y = make_classification(2000, args.d, n_informative=args.d * 2 // 3, random_state=0)
    X[:, :3] = np.floor(np.clip(X[:, :3] * 4 + 10, 0, 19))  # three columns of category codes 0-19 (categorical
    # for the LightGBM model that declares them, numbers for the others)
    background, rows = X[: args.n_bg], X[args.n_bg : args.n_bg + n_explain]
    models = {
        "hist gradient boosting probability": (
            HistGradientBoostingClassifier(max_iter=100, random_state=0),
            "probability",
        ),
        "xgboost probability": (
            xgboost.XGBClassifier(n_estimators=100, max_depth=6, n_jobs=1, random_state=0),
            "probability",
        ),
        "random forest log-odds": (RandomForestClassifier(100, max_depth=8, random_state=0), "log_odds"),
        "logistic regression probability": (make_pipeline(StandardScaler(), LogisticRegression()), "probability"),
        "k-NN (k = 10) probability": (make_pipeline(StandardScaler(), KNeighborsClassifier(10)), "probability"),
        "isolation forest score": (IsolationForest(random_state=0), "margin"),
    }
    for units in [(100,), (64, 32), (64, 64)]:
        network = MLPClassifier(hidden_layer_sizes=units, max_iter=500, random_state=0)
        models[f"MLP {units} probability"] = (make_pipeline(StandardScaler(), network), "probability")
    try:
        import lightgbm

        classifier = lightgbm.LGBMClassifier(n_estimators=100, verbose=-1, n_jobs=1)
        models["lightgbm probability"] = (classifier, "probability")
        categorical = lightgbm.LGBMClassifier(n_estimators=100, verbose=-1, n_jobs=1, categorical_feature=[0, 1, 2])
        models["lightgbm probability, 3 categorical columns"] = (categorical, "probability")
    except ImportError:  # not in the bench extra's minimum
        pass
    if args.models:
        models = {name: entry for name, entry in models.items() if any(word in name for word in args.models)}
    results = []
    for name, (model, output) in models.items():
        model.fit(X, y)
        predict = {"probability": probability, "log_odds": log_odds}.get(output, lambda model: model.decision_function)(
            model
        )
        exact = PermutationShapExplainer(model, output=output, background_size=None, progress=False).fit(background)
        exact.explain(rows[:2])  # numba compiled (or loaded) before the timing
        ours_seconds, ours = median_seconds(lambda exact=exact: exact.explain(rows), repeats)
        sampled = PermutationShapExplainer(
            model, output=output, algorithm="leverage_cv", background_size=None, random_state=0, progress=False
        ).fit(background)
        sampled_seconds, sampled_values = median_seconds(lambda sampled=sampled: sampled.explain(rows), 1)
        truth = brute_force_shapley(predict, background, rows[: args.n_truth])
        result = {
            "model": name,
            "output": output,
            "algorithm": exact.algorithm_,
            "ours_seconds": ours_seconds,
            "sampled_leverage_cv_seconds": sampled_seconds,
            "sampled_max_evals": sampled.max_evals_,
            "sampled_over_ours_seconds": sampled_seconds / ours_seconds,
            "ours_max_error_vs_brute_force": float(np.abs(ours.values[: args.n_truth] - truth).max()),
            "sampled_max_error_vs_brute_force": float(np.abs(sampled_values.values[: args.n_truth] - truth).max()),
            "ours_efficiency_error": float(np.abs(ours.values.sum(1) + ours.base_values - predict(rows)).max()),
        }
        not_trees = ("logistic", "k-NN", "MLP")
        shap_text = "shap TreeExplainer: not run (not a tree model)" if name.startswith(not_trees) else ""
        if output == "margin":
            shap_text = "shap TreeExplainer: not run (it explains the mean path length, not the score)"
        shap_text = shap_text or "shap TreeExplainer: not run (its model_output has no log-odds of a forest)"
        if output == "probability" and not name.startswith(not_trees):
            try:
                tree = shap.TreeExplainer(
                    model, data=background, feature_perturbation="interventional", model_output="probability"
                )
                shap_seconds, shap_values = median_seconds(
                    lambda tree=tree: tree.shap_values(rows, check_additivity=False), repeats
                )
                shap_values = np.asarray(shap_values)
                shap_values = shap_values[..., 1] if shap_values.ndim == 3 else shap_values
                result["shap_tree_seconds"] = shap_seconds
                result["shap_over_ours_seconds"] = shap_seconds / ours_seconds
                result["shap_max_error_vs_brute_force"] = float(np.abs(shap_values[: args.n_truth] - truth).max())
                shap_text = (
                    f"shap TreeExplainer {shap_seconds:6.2f} s ({result['shap_over_ours_seconds']:.1f}x ours), "
                    f"error {result['shap_max_error_vs_brute_force']:.1e}"
                )
            except Exception as exc:  # noqa: BLE001 - shap's refusals vary by model; recorded, not raised
                result["shap_refused"] = f"{type(exc).__name__}: {exc}"[:300]
                shap_text = f"shap TreeExplainer refused ({type(exc).__name__})"
        results.append(result)
        print(
            f"{name:36s} ours {ours_seconds:6.2f} s ({exact.algorithm_}), error "
            f"{result['ours_max_error_vs_brute_force']:.1e}, efficiency {result['ours_efficiency_error']:.1e}; "
            f"leverage_cv {sampled_seconds:6.2f} s ({result['sampled_over_ours_seconds']:.1f}x ours), error "
            f"{result['sampled_max_error_vs_brute_force']:.1e}; {shap_text}",
            flush=True,
        )
    output_path = RESULTS / (args.output or f"bench_linked_paths{'_quick' if args.quick else ''}.json")
    settings = {**vars(args), "n_explain": n_explain, "repeats": repeats}
    versions = {
        "python": platform.python_version(),
        "shap": shap.__version__,
        "xgboost": xgboost.__version__,
        "scikit-learn": sklearn.__version__,
    }
    output_path.write_text(json.dumps({"settings": settings, "versions": versions, "results": results}, indent=1))
    print(f"wrote {output_path}")


if __name__ == "__main__":
    main()
