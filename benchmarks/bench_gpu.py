"""Benchmark: every class on ``device="cuda"`` against ``device="cpu"``, in one process on a GPU machine.

What is measured
----------------
Each section runs the same problem on the CUDA backend and on the CPU backend (numba, all cores of
the machine), after a warm-up on each (numba compilation, cupy kernel compilation and memory pool),
and records wall times (medians of ``--repeats`` on the GPU; the CPU's fewer rows are one run when
slow), the largest difference between the two backends' values, and the efficiency error.

1. ``pkex``: ``ProductKernelShapExplainer.from_dual`` on a random dual form (d = 200, 500 support
   vectors, rbf, gamma = 1/d), the paper's game: values on ``--pkex-rows`` rows and exact pair
   interactions on fewer.
2. ``hsic``: ``HSICAttribution()`` defaults on X ~ N(0, I), y = x0 x1 + sin(x2) + noise, d = 100, at
   n = 5000 on both backends and at n = 10^4 on the GPU (the CPU at 10^4 is the n = 5000 time times 4:
   the cost is O(n^2 d)).
3. ``permutation``: an ``XGBRegressor`` trained and predicting on the GPU (d = 16 AR(1) features, 200
   trees of depth 6, as in ``bench_permutation.py``), 100 background rows. Ours on ``device="cuda"``
   (the masked rows are built on the GPU and reach ``booster.inplace_predict`` as cupy arrays) for
   ``algorithm="antithetic"`` and ``"auto"`` at 500 evaluations; its time over the model alone
   predicting every row ours sent, in one call and in ours' batches; shap's ``PermutationExplainer``
   at the same budget on fewer rows; relative RMSE of each against ``shap.TreeExplainer``
   (interventional, the exact value of the same game); ours on ``device="cpu"`` on the same rows.
4. ``topk``: ``TopKShapley``'s local mode (``prefit=True``, greedy CMCS, k = 5) on the same model.

Run on a GPU machine (cupy, xgboost and shap installed)::

    python benchmarks/bench_gpu.py --out-dir benchmarks/results

It writes ``gpu_bench.json`` there (device, driver, CUDA and library versions, each section's
figures, or the error that stopped it).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

try:
    from sklearn_shapq import HSICAttribution, PermutationShapExplainer, ProductKernelShapExplainer, TopKShapley
except ImportError:  # a checkout that is not installed: python benchmarks/bench_gpu.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sklearn_shapq import HSICAttribution, PermutationShapExplainer, ProductKernelShapExplainer, TopKShapley

SPEEDUP_TARGET = 30.0  # GPU over our own CPU backend, PKeX and HSIC
OVERHEAD_TARGET = 1.1  # the permutation explainer's wall time over the model alone


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out-dir", type=Path, default=Path(__file__).parent / "results")
    p.add_argument("--sections", nargs="+", default=["pkex", "permutation", "topk", "hsic"])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--pkex-d", type=int, default=200)
    p.add_argument("--pkex-sv", type=int, default=500)
    p.add_argument("--pkex-rows", type=int, default=2000, help="rows explained on the GPU")
    p.add_argument("--pkex-cpu-rows", type=int, default=200, help="the first rows, explained on the CPU")
    p.add_argument("--pair-rows", type=int, default=100, help="rows of pair interactions on the GPU")
    p.add_argument("--pair-cpu-rows", type=int, default=10)
    p.add_argument("--hsic-d", type=int, default=100)
    p.add_argument("--hsic-n", type=int, nargs="+", default=[5000, 10000], help="the CPU runs the first only")
    p.add_argument("--perm-rows", type=int, default=200)
    p.add_argument("--perm-cpu-rows", type=int, default=20)
    p.add_argument("--shap-rows", type=int, default=20)
    p.add_argument("--max-evals", type=int, default=500)
    p.add_argument(
        "--device",
        default="cuda",
        help="the device under test; 'cpu' is a dry run without a GPU (results under 'dry_run': its comparisons "
        "are the CPU against itself, only a check that the script runs)",
    )
    return p.parse_args()


def synchronize() -> None:
    """Wait for the GPU's queued work, where cupy is there."""
    try:
        import cupy
    except ImportError:
        return
    cupy.cuda.Device().synchronize()


def tested(args: argparse.Namespace) -> str:
    """The key of the device under test in the results: its name, "dry_run" where it is the CPU too."""
    return "dry_run" if args.device == "cpu" else args.device


def array_module(device: str) -> Any:
    """cupy for a CUDA device, numpy for the CPU."""
    if device.startswith("cuda"):
        import cupy

        return cupy
    return np


def timed(fn: Callable[[], Any], repeats: int = 1) -> tuple[Any, float, list[float]]:
    """Run ``fn`` ``repeats`` times; return its last result, the median wall time and all wall times."""
    walls = []
    for _ in range(repeats):
        synchronize()
        start = time.perf_counter()
        result = fn()
        synchronize()
        walls.append(time.perf_counter() - start)
    return result, float(np.median(walls)), walls


def env_info() -> dict:
    """The device, driver, CUDA and library versions."""
    import numba
    import scipy
    import sklearn

    import sklearn_shapq

    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except FileNotFoundError:
        smi = None
    info: dict = {
        "nvidia_smi": smi,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "sklearn_shapq": sklearn_shapq.__version__,
        "numba": numba.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
    }
    try:
        import cupy

        info["gpu"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        info["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        info["cuda_driver"] = cupy.cuda.runtime.driverGetVersion()
    except Exception as exc:  # no cupy or no device: a dry run
        info["gpu"] = repr(exc)
    for name in ("cupy", "xgboost", "shap"):
        try:
            info[name] = __import__(name).__version__
        except ImportError:
            info[name] = None
    return info


def efficiency_error(explanation: Any, outputs: np.ndarray) -> float:
    """Largest |sum of values + base value - model output| over rows."""
    values = np.asarray(explanation.values)
    total = values.reshape(values.shape[0], values.shape[1], -1).sum(axis=1).squeeze()
    return float(np.abs(total + np.asarray(explanation.base_values) - np.asarray(outputs).squeeze()).max())


def pkex_section(args: argparse.Namespace) -> dict:
    """Product-kernel values and pair interactions, cuda against cpu."""
    d, n_sv = args.pkex_d, args.pkex_sv
    rng = np.random.default_rng(0)
    X_fit = rng.normal(size=(n_sv, d))
    dual_coef = rng.normal(size=n_sv) / np.sqrt(n_sv)
    X = rng.normal(size=(args.pkex_rows, d))
    out: dict = {"d": d, "support_vectors": n_sv, "gamma": 1.0 / d, "value_function": "pkex"}
    values, pairs = {}, {}
    gpu = tested(args)
    for key, device, n_rows, n_pair_rows in (
        (gpu, args.device, args.pkex_rows, args.pair_rows),
        ("cpu", "cpu", args.pkex_cpu_rows, args.pair_cpu_rows),
    ):
        explainer = ProductKernelShapExplainer.from_dual(
            dual_coef, X_fit, gamma=1.0 / d, device=device, progress=False
        ).fit()
        _, warm, _ = timed(
            lambda explainer=explainer: (explainer.explain(X[:4]), explainer.explain_interactions(X[:2]))
        )
        repeats = args.repeats if key == gpu else 1
        explanation, wall, walls = timed(lambda e=explainer, r=X[:n_rows]: e.explain(r), repeats)
        interactions, pair_wall, pair_walls = timed(
            lambda e=explainer, r=X[:n_pair_rows]: e.explain_interactions(r), repeats
        )
        values[key], pairs[key] = explanation.values, interactions.values
        outputs = explainer.model_output(X[:n_rows])
        row_sums = interactions.values.sum(axis=2)
        out[key] = {
            "algorithm_": explainer.algorithm_,
            "warmup_s": warm,
            "rows": n_rows,
            "ms_per_row": 1e3 * wall / n_rows,
            "walls_s": walls,
            "efficiency_error": efficiency_error(explanation, outputs),
            "pair_rows": n_pair_rows,
            "pair_ms_per_row": 1e3 * pair_wall / n_pair_rows,
            "pair_walls_s": pair_walls,
            "pair_rows_sum_to_values": float(np.abs(row_sums - explanation.values[:n_pair_rows]).max()),
        }
        print(f"  pkex {key}: {out[key]['ms_per_row']:.3f} ms/row, pairs {out[key]['pair_ms_per_row']:.2f}")
    n_cpu, n_pair_cpu = args.pkex_cpu_rows, args.pair_cpu_rows
    out["speedup_values"] = out["cpu"]["ms_per_row"] / out[gpu]["ms_per_row"]
    out["speedup_pairs"] = out["cpu"]["pair_ms_per_row"] / out[gpu]["pair_ms_per_row"]
    out["max_abs_diff_values"] = float(np.abs(values[gpu][:n_cpu] - values["cpu"]).max())
    out["max_abs_diff_pairs"] = float(np.abs(pairs[gpu][:n_pair_cpu] - pairs["cpu"]).max())
    out["value_scale"] = float(np.abs(values["cpu"]).max())
    out["target_speedup_met"] = out["speedup_values"] >= SPEEDUP_TARGET
    return out


def hsic_section(args: argparse.Namespace) -> dict:
    """HSIC attribution at d = 100, cuda against cpu."""
    d = args.hsic_d
    out: dict = {"d": d, "data": "X ~ N(0, I), y = x0 x1 + sin(x2) + 0.1 eps (seed 0)"}

    def data(n: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n, d))
        return X, X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.1 * rng.normal(size=n)

    gpu = tested(args)
    for key, device in ((gpu, args.device), ("cpu", "cpu")):
        timed(lambda device=device: HSICAttribution(device=device, progress=False).fit(*data(256)))
        for n in args.hsic_n if key == gpu else args.hsic_n[:1]:
            X, y = data(n)
            repeats = args.repeats if key == gpu else 1
            fitted, wall, walls = timed(
                lambda X=X, y=y, dev=device: HSICAttribution(device=dev, progress=False).fit(X, y), repeats
            )
            out[f"{key}_n{n}"] = {
                "wall_s": wall,
                "walls_s": walls,
                "attributions": fitted.attributions_.tolist(),
                "efficiency_error": float(abs(fitted.attributions_.sum() - fitted.hsic_)),
            }
            print(f"  hsic {key} n={n}: {wall:.2f} s")
    n0 = args.hsic_n[0]
    cpu, under_test = out[f"cpu_n{n0}"], out[f"{gpu}_n{n0}"]
    out[f"speedup_n{n0}"] = cpu["wall_s"] / under_test["wall_s"]
    scale = np.abs(cpu["attributions"]).max()
    difference = np.abs(np.subtract(under_test["attributions"], cpu["attributions"])).max()
    out[f"max_rel_diff_n{n0}"] = float(difference / scale)
    for n in args.hsic_n[1:]:
        estimated_cpu = cpu["wall_s"] * (n / n0) ** 2
        out[f"speedup_n{n}_vs_cpu_extrapolated"] = estimated_cpu / out[f"{gpu}_n{n}"]["wall_s"]
    out["target_speedup_met"] = out[f"speedup_n{n0}"] >= SPEEDUP_TARGET
    return out


class Recorder:
    """A model callable that predicts with ``booster`` and keeps each batch it was given (on the GPU)."""

    def __init__(self, booster: Any) -> None:
        self.booster, self.batches = booster, []

    def __call__(self, rows: Any) -> Any:
        self.batches.append(rows.copy())
        return self.booster.inplace_predict(rows)


def xgboost_problem(device: str) -> tuple[Any, np.ndarray, np.ndarray]:
    """``bench_permutation.py``'s setup, trained on the GPU: the model, 100 background rows, 1000 rows."""
    import xgboost

    d, rho = 16, 0.5
    rng = np.random.default_rng(0)
    X = np.empty((6100, d))
    X[:, 0] = rng.normal(size=len(X))
    for j in range(1, d):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho**2) * rng.normal(size=len(X))
    y = (
        X[:, 0] * X[:, 1]
        + np.sin(2 * X[:, 2])
        + X[:, 3] ** 2 * (X[:, 4] > 0)
        + 0.5 * X[:, 5]
        + 0.1 * rng.normal(size=len(X))
    )
    model = xgboost.XGBRegressor(
        n_estimators=200, max_depth=6, learning_rate=0.05, random_state=0, device=device, tree_method="hist"
    ).fit(X[:5000], y[:5000])
    return model, X[5000:5100], X[5100:]


def relative_rmse(values: np.ndarray, truth: np.ndarray) -> float:
    """RMSE over rows and features over the RMS of the truth."""
    return float(np.sqrt(np.mean((values - truth) ** 2)) / np.sqrt(np.mean(truth**2)))


def permutation_section(args: argparse.Namespace) -> dict:
    """The permutation explainer on the GPU: its time over the model alone, against shap and the CPU."""
    import shap

    xp = array_module(args.device)
    model, background, X = xgboost_problem(args.device)
    booster = model.get_booster()
    rows, budget = X[: args.perm_rows], args.max_evals
    truth = shap.TreeExplainer(model, data=background, feature_perturbation="interventional").shap_values(rows)
    out: dict = {"d": X.shape[1], "background": len(background), "rows": len(rows), "max_evals": budget}
    for algorithm in ("antithetic", "auto"):
        params = {"algorithm": algorithm, "max_evals": budget, "background_size": None, "random_state": 0}
        ours = PermutationShapExplainer(model, device=args.device, progress=False, **params).fit(background)
        ours.explain(rows[:2])
        explanation, wall, walls = timed(lambda ours=ours: ours.explain(rows), args.repeats)
        profile = cProfile.Profile()
        profile.runcall(lambda ours=ours: (ours.explain(rows), synchronize()))
        listing = io.StringIO()
        pstats.Stats(profile, stream=listing).sort_stats("cumulative").print_stats(30)
        recorder = Recorder(booster)
        PermutationShapExplainer(recorder, device=args.device, progress=False, **params).fit(background).explain(rows)
        everything = xp.concatenate(recorder.batches)
        booster.inplace_predict(everything[:1000])
        _, one_call, _ = timed(lambda everything=everything: booster.inplace_predict(everything), args.repeats)
        _, batched, _ = timed(lambda b=recorder.batches: [booster.inplace_predict(x) for x in b], args.repeats)
        cpu = PermutationShapExplainer(model, device="cpu", progress=False, **params).fit(background)
        cpu.explain(rows[:2])
        n_cpu = args.perm_cpu_rows
        cpu_explanation, cpu_wall, _ = timed(lambda cpu=cpu, r=rows[:n_cpu]: cpu.explain(r))
        out[algorithm] = {
            "algorithm_": getattr(ours, "algorithm_", algorithm),
            "wall_s": wall,
            "walls_s": walls,
            "model_rows": int(everything.shape[0]),
            "model_calls": len(recorder.batches),
            "model_alone_one_call_s": one_call,
            "model_alone_batched_s": batched,
            "overhead_over_one_call": wall / one_call,
            "overhead_over_batched": wall / batched,
            "relative_rmse": relative_rmse(explanation.values, truth),
            "efficiency_error": efficiency_error(explanation, booster.inplace_predict(rows)),
            "cpu_ms_per_row": 1e3 * cpu_wall / n_cpu,
            f"{tested(args)}_ms_per_row": 1e3 * wall / len(rows),
            "max_abs_diff_cpu": float(np.abs(explanation.values[:n_cpu] - cpu_explanation.values).max()),
            "value_scale": float(np.abs(truth).max()),
            "profile_cumulative": listing.getvalue(),
        }
        del everything, recorder
        if xp is not np:
            xp.get_default_memory_pool().free_all_blocks()
        print(
            f"  permutation {algorithm}: {wall:.2f} s, over the model {out[algorithm]['overhead_over_one_call']:.2f}x"
        )
    n_shap = args.shap_rows
    explainer = shap.PermutationExplainer(model.predict, shap.maskers.Independent(background, max_samples=100), seed=0)
    explainer(rows[:2], max_evals=budget, silent=True)
    shap_values, shap_wall, _ = timed(lambda: explainer(rows[:n_shap], max_evals=budget, silent=True))
    out["shap_permutation"] = {
        "rows": n_shap,
        "ms_per_row": 1e3 * shap_wall / n_shap,
        "relative_rmse": relative_rmse(shap_values.values, truth[:n_shap]),
    }
    out["ours_antithetic_over_shap_time_per_row"] = (
        out["antithetic"][f"{tested(args)}_ms_per_row"] / out["shap_permutation"]["ms_per_row"]
    )
    out["target_overhead_met"] = out["antithetic"]["overhead_over_one_call"] <= OVERHEAD_TARGET
    return out


def topk_section(args: argparse.Namespace) -> dict:
    """TopKShapley's local mode on the GPU against the CPU."""
    model, background, X = xgboost_problem(args.device)
    rows = X[: args.perm_rows]
    out: dict = {"d": X.shape[1], "k": 5, "algorithm": "greedy_cmcs"}
    results = {}
    gpu = tested(args)
    for key, device in ((gpu, args.device), ("cpu", "cpu")):
        selector = TopKShapley(
            model, n_features_to_select=5, prefit=True, device=device, random_state=0, progress=False
        )
        selector.fit(background)
        selector.explain(rows[:2])
        n_rows = len(rows) if key == gpu else args.perm_cpu_rows
        explanation, wall, _ = timed(lambda s=selector, r=rows[:n_rows]: s.explain(r))
        results[key] = explanation
        out[key] = {"rows": n_rows, "ms_per_row": 1e3 * wall / n_rows}
        print(f"  topk {key}: {out[key]['ms_per_row']:.2f} ms/row")
    n_cpu = args.perm_cpu_rows
    out["speedup"] = out["cpu"]["ms_per_row"] / out[gpu]["ms_per_row"]
    out["same_top_k"] = bool(
        np.array_equal(results[gpu].diagnostics["top_k"][:n_cpu], results["cpu"].diagnostics["top_k"])
    )
    out["max_abs_diff"] = float(np.abs(results[gpu].values[:n_cpu] - results["cpu"].values).max())
    return out


SECTIONS = {"pkex": pkex_section, "permutation": permutation_section, "topk": topk_section, "hsic": hsic_section}


def main() -> int:
    args = parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    output = args.out_dir / "gpu_bench.json"
    res: dict = {"benchmark": "bench_gpu", "env": env_info(), "args": {k: str(v) for k, v in vars(args).items()}}
    print(json.dumps(res["env"]), flush=True)
    for name in args.sections:
        start = time.perf_counter()
        try:
            res[name] = SECTIONS[name](args)
        except Exception as exc:  # record it, go on with the next section
            res[name] = {"error": repr(exc), "traceback": traceback.format_exc()}
            print(f"{name} failed: {exc!r}", flush=True)
        res[name]["section_wall_s"] = time.perf_counter() - start
        output.write_text(json.dumps(res, indent=1, default=float))
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
