"""Benchmark: error per model evaluation, our estimators side by side with shap's and shapiq's.

What is measured
----------------
Relative RMSE (RMSE against exact interventional TreeSHAP / RMS of the exact values) of the
Shapley values of 8 explained rows at equal budgets of value-function evaluations per row, mean
over ``--seeds`` (3) seeds, on xgboost regressors (100 trees, depth 4) with 50 background rows:

* ``synthetic8`` (d = 8): ``make_friedman1(1000, 8, noise=0.5, random_state=0)``;
* ``breast_cancer30`` (d = 30): ``load_breast_cancer``, regression on the 0/1 label;
* ``correlated60`` and ``correlated100`` (d = 60, 100): Gaussian features with correlation 0.5
  between neighbours, y = Σ_j w_j x_j + Σ_j x_j x_{j+1} / 2 + noise (generated, seed 0);

and a kernel model whose exact values come from ``ProductKernelShapExplainer`` (interventional,
on the same 50 background rows) instead of TreeSHAP:

* ``svr_diabetes10`` (d = 10): StandardScaler + SVR(C=100) on ``load_diabetes``.

Budgets: 5d, 10d, 20d, 50d evaluations per row (``--budgets-per-feature``). Estimators:

* ours, through ``PermutationShapExplainer(model, algorithm=..., max_evals=B, background_size=None)``:
  "auto" (what a user gets: the column the targets are about; Leverage SHAP on games split by
  parts of the background, or "leverage_cv" where the budget covers 40% of the 2^d coalitions),
  "leverage" (Leverage SHAP, split: ``background_parts="auto"``), "leverage shared"
  (``background_parts=1``: every coalition against the whole background, as the peers do),
  "leverage_cv" (Leverage SHAP with the cross-fitted tree control variate, shared), "kernel"
  (paired KernelSHAP: the same regression, sizes drawn by the Shapley kernel; split),
  "antithetic" (split), and "sbq" (d <= 16; a shared design) or "orthogonal" (split), the best
  permutation samplers. Split or not, every estimator gets B · 50 model rows per explained row;
* ``shap.PermutationExplainer(model.predict, Independent(background, 50))(rows, max_evals=B)``;
* ``shap.KernelExplainer(model.predict, background).shap_values(rows, nsamples=B)``;
* shapiq's ``KernelSHAP(d, pairing_trick=True)`` (paired; Shapley-kernel sizes) and
  ``KernelSHAP(d, pairing_trick=True, sampling_weights=ones)`` (paired, uniform sizes), each
  ``.approximate(B, game)`` on the same interventional game, one row at a time; likewise shapiq's
  ``SVARM(d)`` and ``PermutationSamplingSV(d)``.

Printed per cell and stored in the JSON: ``auto_over_best_peer`` (the target: <= 0.8) and
``auto_seconds_over_shared_leverage`` (the time of the parts' regressions or the control variate's
fits, next to these cheap models).
A plot of
error against budget for each problem: ``benchmarks/results/bench_accuracy.png``
(``benchmarks/plot_results.py``).

Rerun
-----
::

    python benchmarks/bench_accuracy.py            # about 25 minutes on 2 shared cores
    python benchmarks/bench_accuracy.py --quick    # d = 8 and 30, 2 seeds

Then (not with ``--quick``) the check "shap's error at its default 500 evaluations with a third of
them": ``shap.PermutationExplainer`` at 500 against ours (``algorithm="auto"``) at 166 evaluations per
row, on ``synthetic8``, ``diabetes10`` (``load_diabetes``, d = 10) and ``synthetic16``
(``make_friedman1(1000, 16, noise=0.5)``).

Results: ``benchmarks/results/bench_accuracy.json`` (``bench_accuracy_quick.json`` with --quick).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import shap
import xgboost
from shapiq.approximator import SVARM, KernelSHAP, PermutationSamplingSV
from sklearn.datasets import load_breast_cancer, load_diabetes, make_friedman1
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

from sklearn_shapq import PermutationShapExplainer, ProductKernelShapExplainer
from sklearn_shapq.backends import CpuBackend
from sklearn_shapq.games import InterventionalGame, make_model_function

import plot_results

RESULTS = Path(__file__).parent / "results"
N_BACKGROUND, N_ROWS = 50, 8


def problems() -> dict[str, Callable[[], tuple[np.ndarray, np.ndarray]]]:
    """Each problem's data, by name."""

    def synthetic8() -> tuple[np.ndarray, np.ndarray]:
        return make_friedman1(1000, 8, noise=0.5, random_state=0)

    def breast_cancer30() -> tuple[np.ndarray, np.ndarray]:
        X, y = load_breast_cancer(return_X_y=True)
        return X, y.astype(float)

    def correlated(d: int) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
        def generate() -> tuple[np.ndarray, np.ndarray]:
            rng = np.random.default_rng(0)
            covariance = 0.5 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
            X = rng.multivariate_normal(np.zeros(d), covariance, size=1500)
            y = X @ rng.normal(size=d) + (X[:, :-1] * X[:, 1:]).sum(axis=1) / 2 + 0.1 * rng.normal(size=1500)
            return X, y

        return generate

    def diabetes10() -> tuple[np.ndarray, np.ndarray]:
        return load_diabetes(return_X_y=True)

    def friedman(d: int) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
        return lambda: make_friedman1(1000, d, noise=0.5, random_state=0)

    return {
        "synthetic8": synthetic8,
        "breast_cancer30": breast_cancer30,
        "correlated60": correlated(60),
        "correlated100": correlated(100),
        "svr_diabetes10": diabetes10,
        "diabetes10": diabetes10,
        "synthetic16": friedman(16),
        "synthetic6": friedman(6),  # these three: the small budgets of bench_leverage_variants.py
        "synthetic12": friedman(12),
        "synthetic20": friedman(20),
    }


TABLE_PROBLEMS = ["synthetic8", "svr_diabetes10", "breast_cancer30", "correlated60", "correlated100"]
"""The problems of the main table (every estimator at 5d-50d evaluations)."""

KERNEL_PROBLEMS = {"svr_diabetes10"}
"""Problems whose model is an SVR, with exact values from ProductKernelShapExplainer."""

THIRD_PROBLEMS = ["synthetic8", "diabetes10", "synthetic16"]
"""The problems of the check "shap's error at its default 500 evaluations with a third of them" (d = 8 to 16)."""

SHAP_DEFAULT_EVALS = 500

EXACT = 1e-10
"""Relative errors below this are rounding: the estimator was exact at that budget."""


def ours(sampler: str, background_parts: int | str = "auto") -> Callable:
    def run(model: object, background: np.ndarray, rows: np.ndarray, budget: int, seed: int) -> np.ndarray:
        explainer = PermutationShapExplainer(
            model,
            algorithm=sampler,
            max_evals=budget,
            background_size=None,
            background_parts=background_parts,
            random_state=seed,
            progress=False,
        )
        return explainer.fit(background).explain(rows).values

    return run


def shap_permutation(model: object, background: np.ndarray, rows: np.ndarray, budget: int, seed: int) -> np.ndarray:
    masker = shap.maskers.Independent(background, max_samples=len(background))
    explainer = shap.PermutationExplainer(model.predict, masker, seed=seed)
    return explainer(rows, max_evals=max(budget, 2 * rows.shape[1] + 1), silent=True).values


def shap_kernel(model: object, background: np.ndarray, rows: np.ndarray, budget: int, seed: int) -> np.ndarray:
    np.random.seed(seed)  # noqa: NPY002  (shap's KernelExplainer draws from numpy's global state: the peer only)
    explainer = shap.KernelExplainer(model.predict, background)
    return np.asarray(explainer.shap_values(rows, nsamples=budget, silent=True))


def shapiq_approximator(make: Callable[[int, int], object]) -> Callable:
    """Run a shapiq approximator, ``make(d, seed)``, on each row's interventional game in turn."""

    def run(model: object, background: np.ndarray, rows: np.ndarray, budget: int, seed: int) -> np.ndarray:
        d = rows.shape[1]
        out = np.empty(rows.shape)
        backend = CpuBackend()
        model_fn = make_model_function(model, "predict", backend)
        for r in range(rows.shape[0]):  # shapiq explains one game at a time
            game = InterventionalGame(model_fn, background, rows[r : r + 1])

            def value(masks: np.ndarray, game: InterventionalGame = game) -> np.ndarray:
                masks = np.atleast_2d(masks)  # SVARM and PermutationSamplingSV may ask for one coalition
                return game(masks, np.zeros(len(masks), np.intp))[:, 0]

            result = make(d, seed).approximate(budget, value)
            out[r] = [result[(i,)] for i in range(d)]
        return out

    return run


def methods(d: int) -> dict[str, Callable]:
    return {
        "ours auto": ours("auto"),
        "ours leverage": ours("leverage"),
        "ours leverage shared": ours("leverage", background_parts=1),
        "ours leverage_cv": ours("leverage_cv"),
        "ours kernel": ours("kernel"),
        "ours antithetic": ours("antithetic"),
        f"ours {'sbq' if d <= 16 else 'orthogonal'}": ours("sbq" if d <= 16 else "orthogonal"),
        "shap Permutation": shap_permutation,
        "shap Kernel": shap_kernel,
        "shapiq KernelSHAP paired": shapiq_approximator(
            lambda d, seed: KernelSHAP(d, pairing_trick=True, random_state=seed)
        ),
        "shapiq KernelSHAP paired uniform": shapiq_approximator(
            lambda d, seed: KernelSHAP(d, pairing_trick=True, sampling_weights=np.ones(d + 1), random_state=seed)
        ),
        "shapiq SVARM": shapiq_approximator(lambda d, seed: SVARM(d, random_state=seed)),
        "shapiq PermutationSamplingSV": shapiq_approximator(
            lambda d, seed: PermutationSamplingSV(d, random_state=seed)
        ),
    }


def problem_model(name: str) -> tuple[object, np.ndarray, np.ndarray, np.ndarray]:
    """Fit the problem's model; return it, the background, the explained rows and their exact values."""
    X, y = problems()[name]()
    background, rows = X[:N_BACKGROUND], X[N_BACKGROUND : N_BACKGROUND + N_ROWS]
    if name in KERNEL_PROBLEMS:
        model = make_pipeline(StandardScaler(), SVR(C=100.0)).fit(X, y)
        exact = ProductKernelShapExplainer(model, value_function="interventional", background_size=None, progress=False)
        return model, background, rows, exact.fit(background).explain(rows).values
    model = xgboost.XGBRegressor(n_estimators=100, max_depth=4, n_jobs=1, random_state=0).fit(X, y)
    truth = shap.TreeExplainer(model, background, feature_perturbation="interventional").shap_values(rows)
    return model, background, rows, truth


def problem_error(name: str, seeds: int) -> tuple[Callable, int]:
    """Fit the problem's model; return ``error_of(run, budget)`` (rel. RMSE mean, sd, seconds over seeds) and d."""
    model, background, rows, truth = problem_model(name)
    scale = float(np.sqrt(np.mean(truth**2)))

    def error_of(run: Callable, budget: int) -> dict:
        errors, start = [], time.perf_counter()
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                values = run(model, background, rows, budget, seed)
            errors.append(float(np.sqrt(np.mean((values - truth) ** 2)) / scale))
        return {"rel_rmse": float(np.mean(errors)), "sd": float(np.std(errors)), "seconds": time.perf_counter() - start}

    return error_of, rows.shape[1]


def error_ratio(ours: float, peer: float) -> float:
    """Our error over the peer's; 1 when both are exact (rounding only), 0 when only ours is."""
    if ours < EXACT:
        return 1.0 if peer < EXACT else 0.0
    return ours / peer


def third_of_shap_budget(name: str, seeds: int) -> dict:
    """shap.PermutationExplainer at its default 500 evaluations against ours ("auto") at a third of them."""
    error_of, d = problem_error(name, seeds)
    budget = SHAP_DEFAULT_EVALS // 3
    line = {
        "problem": name,
        "d": d,
        f"shap Permutation {SHAP_DEFAULT_EVALS}": error_of(shap_permutation, SHAP_DEFAULT_EVALS),
        f"ours auto {budget}": error_of(ours("auto"), budget),
    }
    line["ratio"] = line[f"ours auto {budget}"]["rel_rmse"] / line[f"shap Permutation {SHAP_DEFAULT_EVALS}"]["rel_rmse"]
    line["target_met"] = line["ratio"] <= 1.0
    shap_error, ours_error = line[f"shap Permutation {SHAP_DEFAULT_EVALS}"], line[f"ours auto {budget}"]
    print(
        f"{name:16s} shap Permutation at {SHAP_DEFAULT_EVALS}: {shap_error['rel_rmse']:.4f}  ours auto at "
        f"{budget}: {ours_error['rel_rmse']:.4f}  ratio {line['ratio']:.2f} (target <= 1)",
        flush=True,
    )
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="d = 8 and 30, 2 seeds")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budgets-per-feature", nargs="*", type=int, default=[5, 10, 20, 50])
    parser.add_argument("--problems", nargs="*", default=None, help=f"a subset of {TABLE_PROBLEMS}")
    parser.add_argument("--output", default=None, help="JSON name under benchmarks/results (default by mode)")
    args = parser.parse_args()
    names = ["synthetic8", "breast_cancer30"] if args.quick else (args.problems or TABLE_PROBLEMS)
    seeds = 2 if args.quick else args.seeds
    rows_out = []
    for name in names:
        error_of, d = problem_error(name, seeds)
        for per_feature in args.budgets_per_feature:
            budget = per_feature * d
            line = {"problem": name, "d": d, "budget": budget}
            for method, run in methods(d).items():
                line[method] = error_of(run, budget)
            peers = [v["rel_rmse"] for k, v in line.items() if isinstance(v, dict) and not k.startswith("ours")]
            line["auto_over_best_peer"] = error_ratio(line["ours auto"]["rel_rmse"], min(peers))
            line["leverage_over_best_peer"] = error_ratio(line["ours leverage"]["rel_rmse"], min(peers))
            line["auto_seconds_over_shared_leverage"] = (
                line["ours auto"]["seconds"] / line["ours leverage shared"]["seconds"]
            )
            rows_out.append(line)
            cells = "  ".join(f"{k} {v['rel_rmse']:.4f}" for k, v in line.items() if isinstance(v, dict))
            print(
                f"{name:16s} B={budget:5d}  {cells}  auto/best peer {line['auto_over_best_peer']:.2f}  "
                f"auto/shared leverage time {line['auto_seconds_over_shared_leverage']:.2f}",
                flush=True,
            )
    third = [] if args.quick else [third_of_shap_budget(name, seeds) for name in THIRD_PROBLEMS]
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / (args.output or ("bench_accuracy_quick.json" if args.quick else "bench_accuracy.json"))
    path.write_text(json.dumps({"settings": vars(args), "results": rows_out, "third_of_shap_budget": third}, indent=2))
    plot_results.accuracy(rows_out).savefig(path.with_suffix(".png"), dpi=110)
    print(f"wrote {path} and {path.with_suffix('.png')}")


if __name__ == "__main__":
    main()
