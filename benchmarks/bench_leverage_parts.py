"""Benchmark: an explicit ``algorithm="leverage"`` at large d, its automatic parts against one part.

What is measured
----------------
Above d = 24 ``algorithm="auto"`` walks, but a user may ask for Leverage SHAP. Its games are then
split into ``background_parts="auto"`` parts (N · 10 / d of the N background rows), and every part
solves its own regression: a Cholesky factor per part and jackknife group. For each d, on an
xgboost model of 200 trees of depth 6 (``n_jobs=1``) fitted to correlated Gaussian features
(AR(1), ρ = 0.5; 20 linear terms and two interactions), 100 background rows, 4 explained rows and
5d evaluations per row, with the automatic parts, a few fewer, and one part:

* ``time_in_run``: the explain call's wall time over the time its own model calls took in the same
  run (median of the repeats; the ratio that holds still on a shared machine);
* ``rel_rmse``: RMSE against interventional TreeSHAP (exact for the model) over the RMS of the
  exact values, mean over the seeds.

Rerun
-----
::

    python benchmarks/bench_leverage_parts.py     # about 3 minutes on 2 shared cores

Results: ``benchmarks/results/bench_leverage_parts.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import shap
import xgboost

from sklearn_shapq import PermutationShapExplainer
from sklearn_shapq.explainers._auto_algorithm import resolve_parts

RESULTS = Path(__file__).parent / "results"
N_BACKGROUND, N_EXPLAIN, EVALS_PER_FEATURE = 100, 4, 5


class TimedBooster:
    """An xgboost booster's ``inplace_predict`` that adds up the time spent in it."""

    def __init__(self, booster: xgboost.Booster) -> None:
        self.booster = booster
        self.seconds = 0.0

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        start = time.perf_counter()
        out = self.booster.inplace_predict(rows)
        self.seconds += time.perf_counter() - start
        return out


def correlated_problem(d: int) -> tuple[xgboost.XGBRegressor, np.ndarray, np.ndarray]:
    """The model, its background rows and the explained rows at d features."""
    rng = np.random.default_rng(1)
    covariance = 0.5 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    X = rng.multivariate_normal(np.zeros(d), covariance, size=3000)
    y = X[:, :20] @ rng.normal(size=20) + 2 * X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) * X[:, 3]
    y = y + rng.normal(scale=0.3, size=3000)
    model = xgboost.XGBRegressor(n_estimators=200, max_depth=6, learning_rate=0.05, n_jobs=1, random_state=0)
    model.fit(X, y)
    return model, X[:N_BACKGROUND], X[2000 : 2000 + N_EXPLAIN]


def measure(d: int, parts: int, repeats: int, seeds: int) -> dict:
    """In-run time ratio and relative RMSE of Leverage SHAP with ``parts`` parts at d features."""
    model, background, rows = correlated_problem(d)
    exact = shap.TreeExplainer(model, data=background, feature_perturbation="interventional")(rows).values
    scale = float(np.sqrt(np.mean(exact**2)))
    timed = TimedBooster(model.get_booster())

    def explainer(seed: int) -> PermutationShapExplainer:
        return PermutationShapExplainer(
            timed,
            algorithm="leverage",
            background_parts=parts,
            max_evals=EVALS_PER_FEATURE * d,
            background_size=None,
            random_state=seed,
            progress=False,
        ).fit(background)

    timing = explainer(0)
    timing.explain(rows[:1])  # warm-up: numba's cache, first-touch memory
    ratios = []
    for _ in range(repeats):
        timed.seconds = 0.0
        start = time.perf_counter()
        timing.explain(rows)
        ratios.append((time.perf_counter() - start) / timed.seconds)
    errors = [np.sqrt(np.mean((explainer(seed).explain(rows).values - exact) ** 2)) / scale for seed in range(seeds)]
    return {
        "d": d,
        "parts": parts,
        "time_in_run": float(np.median(ratios)),
        "time_in_run_per_repeat": [float(r) for r in ratios],
        "rel_rmse": float(np.mean(errors)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[60, 100, 200])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--output", default="bench_leverage_parts.json")
    args = parser.parse_args()
    results = []
    for d in args.dims:
        automatic = resolve_parts("auto", "leverage", d, None, N_BACKGROUND)
        for parts in sorted({automatic, max(1, automatic // 2), 1}, reverse=True):
            row = measure(d, parts, args.repeats, args.seeds)
            results.append(row)
            time_in_run, error = row["time_in_run"], row["rel_rmse"]
            print(f"d = {d:4d}  parts {parts:3d}  time in the run {time_in_run:.3f}  rel RMSE {error:.4f}", flush=True)
    settings = {
        "n_background": N_BACKGROUND,
        "n_explain": N_EXPLAIN,
        "evals_per_feature": EVALS_PER_FEATURE,
        "repeats": args.repeats,
        "seeds": args.seeds,
    }
    (RESULTS / args.output).write_text(json.dumps({"settings": settings, "results": results}, indent=2) + "\n")
    print(f"wrote {RESULTS / args.output}")


if __name__ == "__main__":
    main()
